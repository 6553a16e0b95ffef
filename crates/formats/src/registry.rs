//! The list of every format. The CLI's format names and auto-detection come
//! from here alone.

use crate::{Format, FormatError};
use std::io::Read as _;
use std::path::Path;

/// Every format, in the order detection prefers them on a tie.
pub fn all() -> &'static [&'static dyn Format] {
    static ALL: [&dyn Format; 24] = [
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
        &crate::droid::FORMAT,
        &crate::vibe::FORMAT,
        &crate::kimi::FORMAT,
        &crate::continue_cli::FORMAT,
        &crate::openhands::FORMAT,
        &crate::crush::FORMAT,
        &crate::amp::FORMAT,
        &crate::codelia::FORMAT,
        &crate::jido::FORMAT,
        &crate::specstory::FORMAT,
        &crate::acpx::FORMAT,
        &crate::atif::FORMAT,
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

/// Returns the comma-separated names of the formats that are an agent's
/// (every format but agentlog's own `json`).
pub fn agent_names() -> String {
    all()
        .iter()
        .filter(|f| f.agent() != agentlog_model::Agent::Agentlog)
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

pub use crate::input::HEAD_BYTES;

/// Returns the format that is surest `path` is its own.
pub fn detect(path: &Path) -> Result<&'static dyn Format, FormatError> {
    let mut head = Vec::new();
    let member = crate::member::split_member(path);
    if let Some((file, _)) = &member {
        head = read_head(file)?;
    } else if path.is_file()
        || (path.exists() && !path.is_dir())
        || crate::archived::is_kept_only(path)
    {
        // A FIFO or a device is refused here, never read; a file that is
        // gone but kept in the archive is read from there.
        head = read_head(path)?;
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

/// Returns the first [`HEAD_BYTES`] of the regular file at `path`, read on
/// (doubling, up to the input size cap) until they hold the first complete
/// line: a first record longer than that (a pasted screenshot) is looked
/// at whole.
pub fn read_head(path: &Path) -> Result<Vec<u8>, FormatError> {
    let mut head = Vec::new();
    let (file, _) = crate::input::open_file(path)?;
    let mut file = file.take(crate::input::max_bytes());
    let mut chunk = HEAD_BYTES as u64;
    loop {
        let before = head.len();
        (&mut file)
            .take(chunk)
            .read_to_end(&mut head)
            .map_err(|e| FormatError::io(path, e))?;
        let got = (head.len() - before) as u64;
        let complete = head
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .is_some_and(|start| head[start..].contains(&b'\n'));
        if complete || got < chunk {
            return Ok(head);
        }
        chunk = chunk.saturating_mul(2);
    }
}

/// Returns the format that is surest the file with these first bytes is its
/// own, if any is at all.
pub fn detect_bytes(path: &Path, head: &[u8]) -> Option<&'static dyn Format> {
    if is_json_schema(head) {
        return None;
    }
    let mut best: Option<(&'static dyn Format, u8)> = None;
    for f in all() {
        let score = f.detect(path, head);
        if score > 0 && best.is_none_or(|(_, s)| score > s) {
            best = Some((*f, score));
        }
    }
    best.map(|(f, _)| f)
}

/// True when `head` starts a JSON Schema document (`{"$schema":
/// "https://json-schema.org/…"`): it names the fields of a session format
/// without being a session.
fn is_json_schema(head: &[u8]) -> bool {
    let text = crate::jsonl::head_text(head, 512);
    let Some(rest) = text.trim_start().strip_prefix('{') else {
        return false;
    };
    let Some(rest) = rest.trim_start().strip_prefix("\"$schema\"") else {
        return false;
    };
    let rest = rest.trim_start().trim_start_matches(':').trim_start();
    rest.starts_with("\"http://json-schema.org/") || rest.starts_with("\"https://json-schema.org/")
}
