//! The one walk of a folder for session files, shared by every command
//! that takes folders (`validate`, `doctor`): one depth, the same files
//! left out (the store's leftovers, agentlog's own index), detection by
//! the registry.

use crate::Settings;
use agentlog_formats::{registry, Format};
use std::path::{Path, PathBuf};

/// How deep below the folder given sessions are looked for.
pub const MAX_DEPTH: usize = 16;

/// The files found below a folder.
#[derive(Default)]
pub struct Walked {
    /// Files a format recognises, with that format.
    pub sessions: Vec<(PathBuf, &'static dyn Format)>,
    /// JSON Lines files no format recognises (still worth a check of their
    /// lines).
    pub other_jsonl: Vec<PathBuf>,
}

impl std::fmt::Debug for Walked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Walked")
            .field("sessions", &self.sessions.len())
            .field("other_jsonl", &self.other_jsonl)
            .finish()
    }
}

/// Returns the session files below `dir` (at most [`MAX_DEPTH`] folders
/// down), sorted, leaving out the store's leftovers and agentlog's own
/// files.
pub fn session_files(settings: &Settings, dir: &Path) -> Walked {
    let files = agentlog_formats::discover::walk_files(dir, MAX_DEPTH, &|f: &Path| {
        !is_store_leftover(f) && !is_own_file(settings, f)
    });
    let mut w = Walked::default();
    for f in files {
        if let Ok(format) = registry::detect(&f) {
            w.sessions.push((f, format));
        } else if is_jsonl_name(&f) {
            w.other_jsonl.push(f);
        }
    }
    w
}

/// True for files the store leaves beside sessions: torn-tail sidecars,
/// lock files, temporary files of atomic writes.
pub fn is_store_leftover(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.contains(".torn-")
        || name.ends_with(".lock")
        || agentlog_store::snapshot::is_temp_name(&name)
}

/// True for agentlog's own files: the index (and its journal and build
/// files) at the configured path, or any `index.sqlite*` in a folder
/// named `agentlog`, and the configuration file.
pub fn is_own_file(settings: &Settings, p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let index_name = settings
        .index_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let same_dir = p.parent() == settings.index_path.parent();
    let in_agentlog_dir = p
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d == "agentlog");
    (same_dir && !index_name.is_empty() && name.starts_with(&index_name))
        || (in_agentlog_dir && name.starts_with("index.sqlite"))
        || settings.config_path.as_deref() == Some(p)
}

/// True for a `.jsonl` or `.ndjson` file name.
pub fn is_jsonl_name(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("jsonl" | "ndjson")
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_index_and_store_leftovers_are_never_taken_for_sessions() {
        let home = tempfile::tempdir().unwrap();
        let session = crate::example::write_claude_session(home.path()).unwrap();
        let settings = Settings::with_home(home.path());
        let data = home.path().join(".local/share/agentlog");
        std::fs::create_dir_all(&data).unwrap();
        for n in [
            "index.sqlite",
            "index.sqlite-wal",
            "index.sqlite.building-12",
        ] {
            std::fs::write(data.join(n), b"SQLite format 3\0").unwrap();
        }
        let dir = session.parent().unwrap();
        std::fs::write(dir.join("x.jsonl.torn-1"), b"{").unwrap();
        std::fs::write(home.path().join("notes.jsonl"), b"plain text\n").unwrap();
        let w = session_files(&settings, home.path());
        let found: Vec<&Path> = w.sessions.iter().map(|(p, _)| p.as_path()).collect();
        assert_eq!(found, vec![session.as_path()]);
        assert_eq!(w.other_jsonl, vec![home.path().join("notes.jsonl")]);
    }
}
