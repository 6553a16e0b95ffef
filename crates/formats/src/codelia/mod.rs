//! codelia's run log (`sessions/YYYY/MM/DD/<run_id>.jsonl`) and resume
//! state snapshot (`sessions/state/<session_id>.json`).
//!
//! A run log is one JSON object per line: a `header` (schema version, run
//! and session ids, start time, client/server, model, prompts, tools,
//! runtime), then `run.start`, `run.context`, `agent.event`, `tool.output`,
//! `llm.request`, `llm.response`, `run.status`, `run.error` and `run.end`
//! records, each with a `ts`. One file holds one run, so one file is one
//! model [`Session`] whose id is the `run_id` (the codelia `session_id`,
//! shared by the runs of a conversation, stays in the metadata's `extra`).
//!
//! Records map to the model's run kinds: `run.start` -> `RunStart`,
//! `run.status` -> `RunStatus`, `run.context` -> `RunContext`, `run.error`
//! -> `RunError`, `run.end` -> `RunEnd`, `llm.request` -> `LlmRequest`,
//! `llm.response` -> `LlmResponse`, `tool.output` -> `ToolOutput`, and
//! `agent.event` -> `Event` (source `agent`). Entry ids are `l<line>`, each
//! the child of the one before. Fields the model has no slot for stay in
//! `extra`, and a record that would not map back to the same JSON value, a
//! record of an unknown type and a namespaced `x.<org>.*` record are kept
//! verbatim as `Unknown` entries, so reading then writing a file gives the
//! same JSON values line by line. Unknown `run.status` and `run.end`
//! values are kept as they are; an unknown `schema_version` is read in
//! best-effort mode with a warning; a log without `run.end` (a crash, or a
//! run still going) is read with an info diagnostic.
//!
//! Writing another format's session as a run log: entries codelia has no
//! record for (messages, compactions, labels, …) are written as
//! `x.agentlog.entry` records holding the model's entry, which agentlog
//! reads back and codelia itself skips (the spec tells readers to ignore
//! unknown types); the fidelity report names them.
//!
//! Differences from the real system (kousw/codelia): the seed describes the
//! resume state as `sessions/state/<session_id>.json`, which is what this
//! module reads and writes; codelia since moved it to a SQLite index
//! (`sessions/state.db`) plus `sessions/messages/<session_id>.jsonl` and
//! only reads the JSON files as a legacy layout. The real writer also adds
//! header fields the seed does not list (`model.source`, `tools.source`,
//! `meta.runtime_environment`); they are kept like any unknown field.

mod read;
mod validate;
mod wire;
mod write;

pub use wire::header::SCHEMA_VERSION;
pub use wire::record::{outcome_str, ENTRY_RECORD, RECORD_TYPES, STATUSES};
pub use wire::state::{is_state, LAYOUT_KEY, LAYOUT_STATE};

use crate::env::{walk_files, DiscoverEnv};
use crate::jsonl;
use crate::{Diagnostic, Fidelity, Format, FormatError, Read};
use agentlog_model::{Agent, Session};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The codelia format.
pub struct CodeliaFormat;

/// The registry entry.
pub static FORMAT: CodeliaFormat = CodeliaFormat;

impl Format for CodeliaFormat {
    fn name(&self) -> &'static str {
        "codelia"
    }

    fn description(&self) -> &'static str {
        "codelia run log (JSONL) and resume state"
    }

    fn agent(&self) -> Agent {
        Agent::Codelia
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext == "json" {
            let text = jsonl::head_text(head, 4096);
            let looks = text.contains("\"session_id\"")
                && text.contains("\"messages\"")
                && text.contains("\"schema_version\"");
            if looks && serde_json::from_slice::<Value>(head).map_or(true, |v| is_state(&v)) {
                return 85;
            }
            return 0;
        }
        let Some(first) = jsonl::first_value(head) else {
            return 0;
        };
        let ty = jsonl::str_field(&first, "type").unwrap_or("");
        let has = |k: &str| first.get(k).is_some();
        if ty == "header" && has("run_id") && has("schema_version") && has("started_at") {
            95
        } else if RECORD_TYPES.contains(&ty) && ty != "header" && has("run_id") && has("ts") {
            60
        } else {
            0
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(self.name()) {
            Some(r) => r.to_vec(),
            None => vec![sessions_dir(env)],
        };
        roots.iter().flat_map(|r| run_files(r)).collect()
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read(path, bytes)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }
}

/// Returns codelia's sessions directory under `env`: `~/.codelia/sessions`,
/// or `$XDG_STATE_HOME/codelia/sessions` (default `~/.local/state`) when
/// `CODELIA_LAYOUT=xdg`.
pub fn sessions_dir(env: &DiscoverEnv) -> PathBuf {
    if env.var("CODELIA_LAYOUT") == Some("xdg") {
        let state = env
            .var_path("XDG_STATE_HOME")
            .unwrap_or_else(|| env.home_join(".local/state"));
        state.join("codelia").join("sessions")
    } else {
        env.home_join(".codelia").join("sessions")
    }
}

/// Returns the run logs under a sessions directory: `YYYY/MM/DD/*.jsonl`
/// with numeric date directories.
pub fn run_files(sessions: &Path) -> Vec<PathBuf> {
    let digits = |s: &std::ffi::OsStr, n: usize| {
        let s = s.to_string_lossy();
        s.len() == n && s.bytes().all(|b| b.is_ascii_digit())
    };
    walk_files(sessions, 3, &|p: &Path| {
        let comps: Vec<&std::ffi::OsStr> = p
            .strip_prefix(sessions)
            .map(|r| r.iter().collect())
            .unwrap_or_default();
        comps.len() == 4
            && digits(comps[0], 4)
            && digits(comps[1], 2)
            && digits(comps[2], 2)
            && p.extension().is_some_and(|e| e == "jsonl")
    })
}

/// Key in `Entry::extra` of a message read out of a run-log record (the
/// prompt of `run.start`, the model's messages of `llm.response`, the result
/// of `tool.output`); its value is the record's entry id. Writing a run log
/// skips these entries: the records themselves are written.
pub const DERIVED_FROM: &str = agentlog_model::DERIVED_FROM;
