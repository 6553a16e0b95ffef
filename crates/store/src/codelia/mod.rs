//! codelia's run persistence: the run recorder, resume state snapshots,
//! prompt replay and run listings.
//!
//! A codelia sessions directory (`~/.codelia/sessions`, or
//! `$XDG_STATE_HOME/codelia/sessions` with `CODELIA_LAYOUT=xdg`) holds one
//! append-only JSONL log per run under `YYYY/MM/DD/<run_id>.jsonl` (the
//! date of the header's `started_at`, in UTC) and the resume snapshots
//! under `state/<session_id>.json`.
//!
//! - [`RunRecorder`] writes a run's log through [`crate::AppendWriter`]
//!   (fsync policy, one writer, torn-tail recovery) and refuses records
//!   that break the ordering rules, writing nothing for them.
//! - [`SessionStateStore`] saves, loads and lists snapshots, each replaced
//!   atomically.
//! - [`replay()`] rebuilds the prompt of one invocation from its
//!   `llm.request` snapshot.
//!
//! Differences from the real system: codelia appends without fsync or a
//! lock and logs (rather than returns) write failures; an unparsable
//! `started_at` makes it file the run under today's date, where
//! [`RunRecorder::create`] refuses it. codelia checks none of the ordering
//! rules when writing. Its current resume state lives in SQLite
//! (`sessions/state.db`) plus `sessions/messages/*.jsonl`; the seed's JSON
//! snapshots are what this module keeps.
//!
//! ```no_run
//! use agentlog_store::codelia::RunRecorder;
//! use agentlog_store::AppendOptions;
//! let header = serde_json::json!({"type": "header", "schema_version": 1,
//!     "run_id": "8f1d7b7a-7e8f-4e0f-9a7c-1c5d0e6b2b7a", "started_at": "2026-02-03T12:00:00.123Z"});
//! let (mut run, _) = RunRecorder::create("sessions".as_ref(), &header, AppendOptions::default())?;
//! run.run_start("list files")?;
//! run.llm_request(1, serde_json::json!({"messages": [], "tools": null, "tool_choice": null}))?;
//! run.llm_response(1, serde_json::json!({"messages": []}))?;
//! run.run_end("completed", Some("done"))?;
//! # Ok::<(), agentlog_store::StoreError>(())
//! ```

mod recorder;
pub mod replay;
mod state;

pub use recorder::{now_ts, run_path, RunRecorder};
pub use replay::{replay, Prompt};
pub use state::{SessionState, SessionStateStore, StateListing, StateSummary};

use agentlog_formats::codelia::{self as format, FORMAT};
use agentlog_formats::Format;
use agentlog_model::EntryKind;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One run in a listing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    /// The run's id.
    pub run_id: String,
    /// The session it belongs to, when the header names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// When it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// The user input that started it (first line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// `completed`, `cancelled`, `error` (or another outcome) from
    /// `run.end`; `incomplete` when the log has none.
    pub outcome: String,
    /// How many LLM invocations it made.
    pub invocations: usize,
    /// The log.
    pub path: PathBuf,
    /// How many problems the reader found.
    pub problems: usize,
}

/// Lists the runs of a sessions directory, oldest first, and the logs that
/// could not be read at all.
pub fn list_runs(sessions: &Path) -> (Vec<RunSummary>, Vec<(PathBuf, String)>) {
    let mut runs = Vec::new();
    let mut skipped = Vec::new();
    for path in format::run_files(sessions) {
        let read = match FORMAT.read_path(&path) {
            Ok(r) => r,
            Err(e) => {
                skipped.push((path, e.to_string()));
                continue;
            }
        };
        let s = &read.session;
        let outcome = s
            .entries
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                EntryKind::RunEnd { outcome, .. } => Some(format::outcome_str(outcome).to_string()),
                _ => None,
            })
            .unwrap_or_else(|| "incomplete".into());
        runs.push(RunSummary {
            run_id: s.meta.id.clone(),
            session_id: s
                .meta
                .extra
                .get("session_id")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            started_at: s.meta.created_at.as_ref().map(ToString::to_string),
            input: s.meta.title.clone(),
            outcome,
            invocations: replay::invocations(s).len(),
            path,
            problems: read
                .diagnostics
                .iter()
                .filter(|d| d.severity >= agentlog_formats::Severity::Warning)
                .count(),
        });
    }
    let key = |r: &RunSummary| {
        r.started_at
            .as_deref()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.timestamp_millis())
    };
    runs.sort_by(|a, b| key(a).cmp(&key(b)).then(a.run_id.cmp(&b.run_id)));
    (runs, skipped)
}
