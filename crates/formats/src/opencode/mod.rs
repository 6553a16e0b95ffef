//! OpenCode sessions (and those of its fork Kilo Code), read from the SQLite
//! database `opencode.db` (`kilo.db`) in the agent's data directory
//! (`$XDG_DATA_HOME/opencode`, default `~/.local/share/opencode`). The
//! database holds every session, so one session's path is
//! `<database>#<session id>` (see [`crate::member`]); a database holding one
//! session may also be named alone.
//!
//! # Reading
//!
//! The database is opened read-only while the agent may be writing it: most
//! of a recent session lives in the write-ahead log `opencode.db-wal`, which
//! SQLite reads with the database. Tables `session`, `message` and `part`:
//!
//! - the `session` row gives id, title, directory (cwd), version, model,
//!   times and `parent_id` (a subagent's parent session); its other columns
//!   are kept in `meta.extra`;
//! - each `message` row (JSON `data`: `role`, `time`, `modelID`,
//!   `providerID`, `tokens`, `cost`, `finish`, …) is one message entry, in
//!   order of creation, each the child of the one before;
//! - its `part` rows are the content: `text` -> text, `reasoning` ->
//!   thinking, `tool` -> a tool call (`callID`, `tool`, `state.input`)
//!   followed by its result (`state.output`, or `state.error` as an error),
//!   `file` -> an image or a kept block. `step-start`, `step-finish`,
//!   `snapshot`, `patch` and other bookkeeping parts are kept verbatim in the
//!   message's extras (`parts`); part types not known are kept as blocks.
//!
//! Tokens: OpenCode's `input` excludes cached tokens and its `output`
//! excludes reasoning, so `Usage::output = output + reasoning`,
//! `cache_read`/`cache_write` from `tokens.cache`, cost from `cost`.
//!
//! A `task` tool call starts a subagent: a session of its own whose
//! `parent_id` names the caller (`meta.parent_session`); the call's
//! `state.metadata.sessionId` names the child.
//!
//! Writing is not supported: the database belongs to the running agent.

mod read;
mod validate;
mod wire;

use crate::env::DiscoverEnv;
use crate::member::{member_path, split_member};
use crate::sqlite::SQLITE_MAGIC;
use crate::{Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::{Path, PathBuf};

/// OpenCode or one of its forks.
pub struct OpenCodeFormat {
    name: &'static str,
    description: &'static str,
    /// The directory name under the XDG data home.
    app: &'static str,
    /// The variable that names the data directory itself, when the agent
    /// has one.
    dir_var: Option<&'static str>,
}

/// The registry entry for OpenCode.
pub static FORMAT: OpenCodeFormat = OpenCodeFormat {
    name: "opencode",
    description: "OpenCode sessions (opencode.db#<session id>, SQLite with WAL)",
    app: "opencode",
    dir_var: Some("OPENCODE_DATA_DIR"),
};

/// The registry entry for Kilo Code CLI (an OpenCode fork).
pub static KILO: OpenCodeFormat = OpenCodeFormat {
    name: "kilo",
    description: "Kilo Code CLI sessions (kilo.db#<session id>, SQLite with WAL)",
    app: "kilo",
    dir_var: Some("KILO_DATA_DIR"),
};

impl OpenCodeFormat {
    /// Returns the agent's data directory under `env`.
    pub fn data_dir(&self, env: &DiscoverEnv) -> PathBuf {
        self.dir_var
            .and_then(|v| env.var_path(v))
            .unwrap_or_else(|| env.xdg_data_home().join(self.app))
    }

    /// True when `name` is one of this agent's database file names
    /// (`opencode.db`, `opencode-<channel>.db`).
    fn is_db_name(&self, name: &str) -> bool {
        name.strip_suffix(".db").is_some_and(|stem| {
            stem == self.app
                || stem
                    .strip_prefix(self.app)
                    .is_some_and(|rest| rest.starts_with('-'))
        })
    }
}

impl Format for OpenCodeFormat {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        self.description
    }

    fn agent(&self) -> Agent {
        if self.name == "opencode" {
            Agent::OpenCode
        } else {
            Agent::Other(self.name.to_string())
        }
    }

    fn extension(&self) -> &'static str {
        "db"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if !head.starts_with(SQLITE_MAGIC) {
            return 0;
        }
        let file = split_member(path).map_or_else(|| path.to_path_buf(), |(f, _)| f);
        let named = file
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| self.is_db_name(n));
        if named {
            return 95;
        }
        // Another name: look for the tables.
        if read::has_tables(&file) {
            60
        } else {
            0
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(self.name) {
            Some(r) => r.to_vec(),
            None => vec![self.data_dir(env)],
        };
        let mut out = Vec::new();
        for root in roots {
            let dbs: Vec<PathBuf> = if root.is_file() {
                vec![root]
            } else {
                crate::env::walk_files(&root, 0, &|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| self.is_db_name(n))
                })
            };
            for db in dbs {
                out.extend(self.sessions_in(&db));
            }
        }
        out
    }

    fn sessions_in(&self, file: &Path) -> Vec<PathBuf> {
        match read::session_ids(file) {
            Ok(ids) => ids.iter().map(|id| member_path(file, id)).collect(),
            Err(e) => {
                crate::env::note_problem(e.to_diagnostic(file));
                Vec::new()
            }
        }
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        let what = format!("an {} database", self.name);
        crate::sqlite::read_bytes_from_disk(path, bytes, &what, |p| self.read_path(p))
    }

    fn drift(&self, read: &Read) -> Vec<crate::drift::Drift> {
        read::drift(read)
    }

    fn read_path(&self, path: &Path) -> Result<Read, FormatError> {
        let (db, id) = match split_member(path) {
            Some((db, id)) => (db, Some(id)),
            None => (path.to_path_buf(), None),
        };
        read::read(self, &db, id.as_deref(), path)
    }

    fn validate(&self, path: &Path) -> Result<Vec<crate::Diagnostic>, FormatError> {
        validate::validate(self, path)
    }
}
