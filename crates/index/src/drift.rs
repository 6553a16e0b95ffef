//! The drift alarm's store: what the readers did not know in each indexed
//! file (`drift`, written by the update that reads the file, see
//! [`crate::writer`]), summed by format and agent version, and which of it
//! the user was told about (`drift_said`), so that each is said once.

use crate::error::SqlContext;
use crate::{Index, IndexError};
use agentlog_formats::drift::DriftKind;
use rusqlite::params;
use serde::Serialize;

/// One thing the readers did not know, over the files of one format and
/// agent version; or one file that could not be read at all.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriftRow {
    /// The format (registry name).
    pub format: String,
    /// The agent version the files say wrote them (`None`: they do not say).
    pub version: Option<String>,
    /// What is new: a record type, a field, the file's layout; `None` for a
    /// file that could not be read at all.
    pub kind: Option<DriftKind>,
    /// Its name (`type`, `type.field`); for an unreadable file, why.
    pub name: String,
    /// How many files (sessions) hold it.
    pub sessions: u64,
    /// How many times it occurs in them, about (appended lines read again
    /// count again).
    pub count: u64,
    /// The first of those files, by path.
    pub path: String,
    /// How many files of this format and version hold anything unknown
    /// (for an unreadable file: 1).
    pub version_sessions: u64,
    /// True when the user was told about it before.
    pub said: bool,
}

/// The `drift_said` kind of an unreadable file (its name is its path).
const UNREADABLE: &str = "unreadable";

impl Index {
    /// Everything the indexed files hold that their readers do not know,
    /// by format, version, kind and name, and every file that could not be
    /// read at all.
    pub fn drift(&self) -> Result<Vec<DriftRow>, IndexError> {
        let mut out = Vec::new();
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT f.format, d.version, d.kind, d.name, count(*), sum(d.count), min(f.path),
                        EXISTS (SELECT 1 FROM drift_said s WHERE s.format = f.format
                                AND s.version = d.version AND s.kind = d.kind AND s.name = d.name),
                        (SELECT count(DISTINCT d2.file) FROM drift d2 JOIN files f2 ON f2.id = d2.file
                          WHERE f2.format = f.format AND d2.version = d.version)
                 FROM drift d JOIN files f ON f.id = d.file
                 GROUP BY f.format, d.version, d.kind, d.name
                 ORDER BY f.format, d.version, d.kind, d.name",
            )
            .at(&self.path)?;
        let rows = st
            .query_map([], |r| {
                let version: String = r.get(1)?;
                let kind: String = r.get(2)?;
                Ok(DriftRow {
                    format: r.get(0)?,
                    version: (!version.is_empty()).then_some(version),
                    kind: Some(DriftKind::parse(&kind).unwrap_or(DriftKind::RecordType)),
                    name: r.get(3)?,
                    sessions: r.get::<_, i64>(4)?.max(0) as u64,
                    count: r.get::<_, i64>(5)?.max(0) as u64,
                    path: r.get(6)?,
                    said: r.get(7)?,
                    version_sessions: r.get::<_, i64>(8)?.max(0) as u64,
                })
            })
            .at(&self.path)?;
        for r in rows {
            out.push(r.at(&self.path)?);
        }
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT f.format, f.error, f.path,
                        EXISTS (SELECT 1 FROM drift_said s WHERE s.format = f.format
                                AND s.version = '' AND s.kind = ?1 AND s.name = f.path)
                 FROM files f WHERE f.error IS NOT NULL ORDER BY f.format, f.path",
            )
            .at(&self.path)?;
        let rows = st
            .query_map([UNREADABLE], |r| {
                Ok(DriftRow {
                    format: r.get(0)?,
                    version: None,
                    kind: None,
                    name: r.get(1)?,
                    sessions: 1,
                    count: 1,
                    path: r.get(2)?,
                    said: r.get(3)?,
                    version_sessions: 1,
                })
            })
            .at(&self.path)?;
        for r in rows {
            out.push(r.at(&self.path)?);
        }
        Ok(out)
    }

    /// What [`Index::drift`] gives that the user has not been told about
    /// yet, now marked as told: each (format, version, kind, name), and each
    /// unreadable file, is given once.
    pub fn drift_to_tell(&mut self) -> Result<Vec<DriftRow>, IndexError> {
        // Looked at without the update lock first: nearly always there is
        // nothing to tell, and a command (a search) does not wait for a
        // full check another process runs.
        if self.drift()?.iter().all(|d| d.said) {
            return Ok(Vec::new());
        }
        let _lock = if self.lock_updates {
            Some(crate::lockfile::IndexLock::acquire(&self.path)?)
        } else {
            None
        };
        let tx = self.conn.unchecked_transaction().at(&self.path)?;
        let new: Vec<DriftRow> = self.drift()?.into_iter().filter(|d| !d.said).collect();
        if new.is_empty() {
            return Ok(new);
        }
        {
            let mut st = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO drift_said(format, version, kind, name)
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .at(&self.path)?;
            for d in &new {
                let (kind, name) = match d.kind {
                    Some(k) => (k.as_str(), d.name.as_str()),
                    None => (UNREADABLE, d.path.as_str()),
                };
                st.execute(params![
                    d.format,
                    d.version.as_deref().unwrap_or(""),
                    kind,
                    name
                ])
                .at(&self.path)?;
            }
        }
        tx.commit().at(&self.path)?;
        Ok(new)
    }
}
