//! The list of every format. The CLI's format names and auto-detection come
//! from here alone.

use crate::{Format, FormatError};
use std::io::Read as _;
use std::path::Path;

/// Every format, in the order detection prefers them on a tie.
pub fn all() -> &'static [&'static dyn Format] {
    static ALL: [&dyn Format; 16] = [
        &crate::pi::FORMAT,
        &crate::claude::FORMAT,
        &crate::codex::FORMAT,
        &crate::gemini::FORMAT,
        &crate::cursor::FORMAT,
        &crate::copilot::FORMAT,
        &crate::opencode::FORMAT,
        &crate::opencode::KILO,
        &crate::qwen::FORMAT,
        &crate::cline::FORMAT,
        &crate::aider::FORMAT,
        &crate::codelia::FORMAT,
        &crate::jido::FORMAT,
        &crate::specstory::FORMAT,
        &crate::acpx::FORMAT,
        &crate::json::FORMAT,
    ];
    &ALL
}

/// Returns the format called `name`.
pub fn by_name(name: &str) -> Option<&'static dyn Format> {
    all().iter().copied().find(|f| f.name() == name)
}

/// Returns the comma-separated names of every format.
pub fn names() -> String {
    all()
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many bytes of a file detection looks at.
pub const HEAD_BYTES: usize = 64 * 1024;

/// Returns the format that is surest `path` is its own.
pub fn detect(path: &Path) -> Result<&'static dyn Format, FormatError> {
    let mut head = Vec::new();
    let member = crate::member::split_member(path);
    if let Some((file, _)) = &member {
        let f = std::fs::File::open(file).map_err(|e| FormatError::io(file, e))?;
        f.take(HEAD_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| FormatError::io(file, e))?;
    } else if path.is_file() {
        let file = std::fs::File::open(path).map_err(|e| FormatError::io(path, e))?;
        file.take(HEAD_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(|e| FormatError::io(path, e))?;
    } else if !path.exists() {
        return Err(FormatError::io(
            path,
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    detect_bytes(path, &head).ok_or_else(|| FormatError::UnknownFormat {
        path: path.to_path_buf(),
        known: names(),
    })
}

/// Returns the format that is surest the file with these first bytes is its
/// own, if any is at all.
pub fn detect_bytes(path: &Path, head: &[u8]) -> Option<&'static dyn Format> {
    let mut best: Option<(&'static dyn Format, u8)> = None;
    for f in all() {
        let score = f.detect(path, head);
        if score > 0 && best.is_none_or(|(_, s)| score > s) {
            best = Some((*f, score));
        }
    }
    best.map(|(f, _)| f)
}
