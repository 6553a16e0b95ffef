//! Resume state snapshots: `sessions/state/<session_id>.json`, replaced
//! whole and atomically on every save.

use crate::snapshot::{is_temp_name, write_atomic};
use crate::StoreError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The resume state of one codelia session: the conversation as the model
/// last saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    /// The snapshot schema version (1).
    pub schema_version: Value,
    /// The session's id (the file's name).
    pub session_id: String,
    /// When the snapshot was taken (RFC 3339 UTC).
    pub updated_at: String,
    /// The last run of the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The last LLM invocation number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoke_seq: Option<u64>,
    /// The conversation, as codelia's `BaseMessage` JSON.
    pub messages: Vec<Value>,
    /// Extension data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    /// Fields of newer writers, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SessionState {
    /// Returns a version-1 snapshot of `messages` taken now.
    pub fn new(session_id: impl Into<String>, messages: Vec<Value>) -> SessionState {
        SessionState {
            schema_version: Value::from(1),
            session_id: session_id.into(),
            updated_at: super::recorder::now_ts(),
            run_id: None,
            invoke_seq: None,
            messages,
            meta: None,
            extra: Map::new(),
        }
    }
}

/// A snapshot in a listing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StateSummary {
    /// The session's id.
    pub session_id: String,
    /// When the snapshot was taken.
    pub updated_at: String,
    /// The last run.
    pub run_id: Option<String>,
    /// How many messages it holds.
    pub message_count: usize,
    /// The file.
    pub path: PathBuf,
}

/// The snapshots of a sessions directory and the files that could not be
/// read.
#[derive(Debug, Default)]
pub struct StateListing {
    /// The snapshots, most recently updated first.
    pub states: Vec<StateSummary>,
    /// Files skipped, with the reason.
    pub skipped: Vec<(PathBuf, String)>,
}

/// Saves, loads and lists the resume snapshots of `sessions/state/`.
#[derive(Clone, Debug)]
pub struct SessionStateStore {
    dir: PathBuf,
}

impl SessionStateStore {
    /// Returns the store of the sessions directory `sessions` (its `state/`).
    pub fn new(sessions: &Path) -> SessionStateStore {
        SessionStateStore {
            dir: sessions.join("state"),
        }
    }

    /// Returns the snapshot directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Returns the file of session `id`, after checking the id is a plain
    /// file name.
    pub fn path_of(&self, id: &str) -> Result<PathBuf, StoreError> {
        crate::names::session_file(&self.dir, id, "json")
    }

    /// Replaces the snapshot of `state.session_id` atomically (0600).
    pub fn save(&self, state: &SessionState) -> Result<PathBuf, StoreError> {
        let path = self.path_of(&state.session_id)?;
        let mut bytes = serde_json::to_vec_pretty(state)
            .map_err(|e| StoreError::Invalid(format!("cannot serialize state: {e}")))?;
        bytes.push(b'\n');
        write_atomic(&path, &bytes)?;
        Ok(path)
    }

    /// Loads the snapshot of session `id`; `None` when there is none.
    pub fn load(&self, id: &str) -> Result<Option<SessionState>, StoreError> {
        let path = self.path_of(id)?;
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(&path, "read", e)),
        };
        parse(&path, &bytes).map(Some)
    }

    /// Deletes the snapshot of session `id`; true when there was one.
    pub fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let path = self.path_of(id)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(StoreError::io(&path, "remove", e)),
        }
    }

    /// Lists the snapshots, most recently updated first.
    pub fn list(&self) -> Result<StateListing, StoreError> {
        let mut out = StateListing::default();
        let rd = match std::fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(StoreError::io(&self.dir, "list", e)),
        };
        for entry in rd.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".json") || is_temp_name(&name) || name.starts_with('.') {
                continue;
            }
            let read = std::fs::read(&path)
                .map_err(|e| StoreError::io(&path, "read", e))
                .and_then(|b| parse(&path, &b));
            match read {
                Ok(s) => out.states.push(StateSummary {
                    session_id: s.session_id,
                    updated_at: s.updated_at,
                    run_id: s.run_id,
                    message_count: s.messages.len(),
                    path,
                }),
                Err(e) => out.skipped.push((path, e.to_string())),
            }
        }
        out.states.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then(a.session_id.cmp(&b.session_id))
        });
        Ok(out)
    }
}

fn parse(path: &Path, bytes: &[u8]) -> Result<SessionState, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| {
        StoreError::Invalid(format!(
            "{}:{}: not a codelia session state: {e}",
            path.display(),
            e.line()
        ))
    })
}
