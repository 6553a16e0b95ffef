//! Which session files are copies `resume` wrote: a resumed session keeps
//! its id in the other agent, so one id names several files, and naming
//! it must pick one (the original, unless asked otherwise).
//!
//! `resume` appends one line per copy it writes to
//! `$XDG_DATA_HOME/agentlog/resumed.jsonl` (the copy's path, its agent,
//! the session id, the file it was made from). A copy not listed there
//! (written by an older agentlog, or on another machine) is told from its
//! original by the files' creation times: the copy was made after it.

use crate::{ApiError, Settings};
use agentlog_store::{AppendOptions, AppendWriter, LockMode};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One copy `resume` wrote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyRecord {
    /// The session id (the same in the copy and its original).
    pub id: String,
    /// The agent (format) of the copy.
    pub agent: String,
    /// The copy's file (or folder).
    pub path: PathBuf,
    /// The file it was made from, when known.
    pub from: Option<PathBuf>,
}

/// The ledger's path under `settings`.
pub fn ledger_path(settings: &Settings) -> PathBuf {
    settings
        .env
        .xdg_data_home()
        .join("agentlog")
        .join("resumed.jsonl")
}

/// Records that `rec.path` is a copy of `rec.from`.
pub fn record(settings: &Settings, rec: &CopyRecord) -> Result<(), ApiError> {
    let path = ledger_path(settings);
    let (mut w, _) = AppendWriter::open(
        &path,
        AppendOptions {
            lock: LockMode::Wait,
            ..AppendOptions::default()
        },
    )?;
    w.append_json(rec)?;
    w.close()?;
    Ok(())
}

/// The copies recorded under `settings` (none when there is no ledger; a
/// line that cannot be read is passed over).
pub fn recorded(settings: &Settings) -> Vec<CopyRecord> {
    let Ok(text) = std::fs::read_to_string(ledger_path(settings)) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// When `path` was made: its creation time where the file system keeps
/// one, else its last change.
pub fn made(path: &Path) -> Option<SystemTime> {
    let m = std::fs::metadata(path).ok()?;
    m.created().or_else(|_| m.modified()).ok()
}

/// When `path` last changed.
pub fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).ok()?.modified().ok()
}

/// True when `path` is one of `copies`.
pub fn is_copy(copies: &[CopyRecord], path: &Path) -> bool {
    copies.iter().any(|c| same_path(&c.path, path))
}

fn same_path(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn recorded_copies_are_read_back_and_a_bad_line_is_passed_over() {
        let home = tempfile::tempdir().unwrap();
        let settings = Settings::with_home(home.path());
        assert!(recorded(&settings).is_empty());
        let rec = CopyRecord {
            id: "s1".into(),
            agent: "codex".into(),
            path: home.path().join("copy.jsonl"),
            from: Some(home.path().join("orig.jsonl")),
        };
        record(&settings, &rec).unwrap();
        let path = ledger_path(&settings);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("not json\n");
        std::fs::write(&path, text).unwrap();
        assert_eq!(recorded(&settings), vec![rec.clone()]);
        assert!(is_copy(&[rec], &home.path().join("copy.jsonl")));
    }
}
