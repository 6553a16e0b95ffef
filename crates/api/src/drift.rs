//! The drift alarm: when the index meets files an agent wrote with record
//! types, fields or a layout agentlog does not know, or a file it cannot
//! read at all, the user is told once, in plain words, per agent version
//! ([`tell`], after a refresh or an update), and `agentlog doctor` lists
//! all of it ([`report`]). The index finds it while it reads each file
//! (`agentlog_formats::drift::report`, the same report as `agentlog
//! validate --drift`) and remembers what was said.
//!
//! ```
//! use agentlog_api::{drift, Settings};
//! # let home = tempfile::tempdir()?;
//! # agentlog_api::example::write_claude_session(home.path())?;
//! let mut settings = Settings::with_home(home.path());
//! # settings.index_path = home.path().join("index.sqlite");
//! let (mut index, _) = agentlog_api::refresh::refreshed(&settings, &mut |_| {})?;
//! // A session of a known shape: nothing to say.
//! assert!(drift::tell(&mut index)?.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::{ApiError, Settings};
use agentlog_formats::drift::DriftKind;
use agentlog_index::{DriftRow, Index};
use serde::Serialize;

/// What is new in the files of one agent version, or the files of one
/// agent that could not be read at all.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Alarm {
    /// The format (registry name: `claude`, `codex`, …).
    pub format: String,
    /// The agent's name in words (`Claude Code`).
    pub agent: String,
    /// The agent version as its files write it (`None`: they do not say,
    /// or the files could not be read).
    pub version: Option<String>,
    /// What is new: record types, fields, a layout, each with how many
    /// sessions hold it; empty for unreadable files.
    pub new: Vec<New>,
    /// Files that could not be read at all, with why.
    pub unreadable: Vec<Unreadable>,
    /// How many sessions (files) hold something new, or could not be read.
    pub sessions: u64,
    /// One of them.
    pub example: String,
}

/// One new record type, field or layout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct New {
    /// What it is.
    pub kind: DriftKind,
    /// Its name (`type`, `type.field`).
    pub name: String,
    /// How many sessions hold it.
    pub sessions: u64,
}

/// A file the index could not read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    /// The file.
    pub path: String,
    /// Why.
    pub why: String,
}

impl Alarm {
    /// The alarm in plain words, one line.
    pub fn message(&self) -> String {
        let sessions = |n: u64| {
            if n == 1 {
                "1 session".to_string()
            } else {
                format!("{n} sessions")
            }
        };
        if !self.unreadable.is_empty() {
            let first = &self.unreadable[0];
            let more = match self.unreadable.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            return format!(
                "{} could not be read at all: {}: {}{more}; left as it is on disk",
                self.agent, first.path, first.why,
            );
        }
        let layout = self.new.iter().any(|n| n.kind == DriftKind::Layout);
        // Beside a layout it cannot read, the one unknown record (the whole
        // file) says nothing more; its fields do.
        let what: Vec<String> = self
            .new
            .iter()
            .filter(|n| !(layout && n.kind == DriftKind::RecordType))
            .map(|n| {
                let of = if n.sessions == self.sessions {
                    String::new()
                } else {
                    format!(" ({})", sessions(n.sessions))
                };
                match n.kind {
                    DriftKind::Layout => format!("a file layout it cannot read{of}"),
                    k => format!("{} `{}`{of}", k.words(), n.name),
                }
            })
            .collect();
        let version = match &self.version {
            Some(v) => format!(" {v}"),
            None => String::new(),
        };
        let kept = if layout {
            "listed (empty) and kept as written"
        } else {
            "listed and kept as written, but what is new is not shown"
        };
        format!(
            "{}{version} writes what agentlog does not know, in {} (first {}): {}; the sessions are {kept}",
            self.agent,
            sessions(self.sessions),
            self.example,
            what.join(", "),
        )
    }
}

/// The agent's name in words, for a format.
fn agent_name(format: &str) -> String {
    match format {
        "claude" => "Claude Code".into(),
        "codex" => "Codex".into(),
        "gemini" => "Gemini CLI".into(),
        other => other.to_string(),
    }
}

/// Groups rows of the index by format and version.
fn alarms(rows: Vec<DriftRow>) -> Vec<Alarm> {
    let mut out: Vec<Alarm> = Vec::new();
    for r in rows {
        let unreadable = r.kind.is_none();
        let at = out.iter().position(|a| {
            a.format == r.format && a.version == r.version && a.unreadable.is_empty() != unreadable
        });
        let a = match at {
            Some(i) => &mut out[i],
            None => {
                out.push(Alarm {
                    agent: agent_name(&r.format),
                    format: r.format.clone(),
                    version: r.version.clone(),
                    new: Vec::new(),
                    unreadable: Vec::new(),
                    sessions: 0,
                    example: r.path.clone(),
                });
                let last = out.len() - 1;
                &mut out[last]
            }
        };
        match r.kind {
            Some(kind) => {
                a.sessions = a.sessions.max(r.version_sessions);
                a.new.push(New {
                    kind,
                    name: r.name,
                    sessions: r.sessions,
                });
            }
            None => {
                a.sessions += 1;
                a.unreadable.push(Unreadable {
                    path: r.path,
                    why: r.name,
                });
            }
        }
    }
    out
}

/// What the index found new that the user has not been told about, now
/// marked as told: call it after a refresh or an update and show each
/// alarm's [`Alarm::message`] (each is given once, ever, per index).
pub fn tell(index: &mut Index) -> Result<Vec<Alarm>, ApiError> {
    Ok(alarms(index.drift_to_tell()?))
}

/// Everything new the index of `settings` holds, told before or not (what
/// `agentlog doctor` lists); empty when there is no index yet.
pub fn report(settings: &Settings) -> Result<Vec<Alarm>, ApiError> {
    if !settings.index_path.is_file() {
        return Ok(Vec::new());
    }
    let (index, _) = Index::open(&settings.index_path)?;
    Ok(alarms(index.drift()?))
}
