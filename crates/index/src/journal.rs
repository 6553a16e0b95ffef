//! The freshness journal: where discovery last looked, and when, so a
//! command can tell in a few hundred `stat` calls (one per directory,
//! not one per file) whether session files were added, removed or renamed
//! since, and read only the files recently written.
//!
//! A directory's modification time changes when an entry in it is added,
//! removed or renamed, not when a file in it is appended to. Appends are
//! seen by a `stat` of the files written recently ([`Index::plan_recent`]);
//! an append to a file untouched for longer is seen by the next full check
//! (every file's `stat`), which the caller runs when the journal is older
//! than it allows.

use crate::error::SqlContext;
use crate::{Index, IndexError};
use rusqlite::OptionalExtension;
use std::path::PathBuf;

/// Variables the environment of discovery holds that do not change where
/// it looks: the full check a command starts in the background runs with
/// `AGENTLOG_NO_BACKGROUND` set, and its journal must count for the next
/// command (with its own key, every command after it checked every file
/// again itself: about 1 s at 10 GB).
const NOT_WHERE_TO_LOOK: [&str; 1] = ["AGENTLOG_NO_BACKGROUND"];

/// Where discovery looked at its last full check, and when.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Journal {
    /// When the full check ran (ms since the epoch).
    pub checked_ms: i64,
    /// What the check looked for (a hash of the formats and the discovery
    /// settings): a journal kept for other settings does not count.
    pub key: u64,
    /// Every directory discovery looked in, with its modification time
    /// (ns) taken before it looked.
    pub dirs: Vec<(PathBuf, i64)>,
}

impl Journal {
    /// The key of a discovery over `formats` in `env`: what it looks for
    /// and where. A journal of another key does not count.
    pub fn key(env: &agentlog_formats::discover::DiscoverEnv, formats: &[String]) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        formats.hash(&mut h);
        env.home.hash(&mut h);
        for (name, value) in &env.vars {
            if !NOT_WHERE_TO_LOOK.contains(&name.as_str()) {
                (name, value).hash(&mut h);
            }
        }
        env.roots.hash(&mut h);
        h.finish()
    }

    /// True when every directory still has the time recorded: no session
    /// file was added, removed or renamed where discovery looks.
    pub fn dirs_unchanged(&self) -> bool {
        self.dirs
            .iter()
            .all(|(d, t)| agentlog_formats::env::mtime_ns(d) == Some(*t))
    }
}

impl Index {
    /// Returns the journal of the last full check, if one was kept.
    pub fn journal(&self) -> Result<Option<Journal>, IndexError> {
        let v: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM agentlog_index WHERE key = 'journal'",
                [],
                |r| r.get(0),
            )
            .optional()
            .at(&self.path)?;
        // A journal that cannot be read is as good as none: the caller
        // does a full check and writes a new one.
        Ok(v.and_then(|v| serde_json::from_str(&v).ok()))
    }

    /// Keeps `journal` as the record of the last full check.
    pub fn save_journal(&self, journal: &Journal) -> Result<(), IndexError> {
        let v = serde_json::to_string(journal).map_err(|e| IndexError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO agentlog_index(key, value) VALUES('journal', ?1)",
                [v],
            )
            .at(&self.path)
            .map(|_| ())
    }

    /// Claims the next full check for this process: true (and `now_ms`
    /// kept) unless another process claimed one less than `every_ms` ago.
    pub fn claim_check(&self, now_ms: i64, every_ms: i64) -> Result<bool, IndexError> {
        let n = self
            .conn
            .execute(
                "INSERT INTO agentlog_index(key, value) VALUES('check_claimed', ?1)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value
                 WHERE CAST(value AS INTEGER) <= ?2",
                rusqlite::params![now_ms.to_string(), now_ms.saturating_sub(every_ms)],
            )
            .at(&self.path)?;
        Ok(n == 1)
    }

    /// Forgets the journal: the next command does a full check.
    pub fn clear_journal(&self) -> Result<(), IndexError> {
        self.conn
            .execute("DELETE FROM agentlog_index WHERE key = 'journal'", [])
            .at(&self.path)
            .map(|_| ())
    }
}
