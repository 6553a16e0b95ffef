//! acpx session records (`~/.acpx/sessions/<acpxRecordId>.json`) and their
//! NDJSON audit logs.
//!
//! The seed document ("ACPX Session Model") specifies a camelCase record
//! with the conversation in a Zed-style `thread` (`User` / `Agent` /
//! `"Resume"` messages) and runtime bookkeeping in an `acpx` namespace, and
//! an audit log `<id>.events.ndjson` of enveloped events with rotated
//! segments `<id>.events.<n>.ndjson`. That is what agentlog writes.
//!
//! The real acpx differs, and both of its shapes are read too (and written
//! back in the shape they were read in):
//! - on disk it writes a flat snake_case record (`acpx_record_id`,
//!   top-level `messages`, `updated_at`, `cumulative_token_usage`, …,
//!   `event_log`, `last_seq`) — [`Layout::Disk`];
//! - in memory and in its replay bundles the record is camelCase with the
//!   thread fields flat (`acpxRecordId`, `messages`, `eventLog`) —
//!   [`Layout::Flat`];
//! - its event log is `<id>.stream.ndjson` with bare ACP JSON-RPC lines and
//!   no envelope; replay bundles wrap them as `{seq, at, direction,
//!   message}`. [`events::parse_line`] reads all three line shapes.
//!
//! [`validate::problems`] applies the seed's strictness rules;
//! [`acp::apply_update`] is the seed's ACP mapping (the store in
//! `agentlog-store` uses it for every `session_update` event).

pub mod acp;
mod convert;
pub mod events;
pub mod record;
pub mod validate;

pub use convert::{record_from_session, session_from_record, RecordOut};
pub use record::{
    parse_record, record_to_string, record_to_value, AcpxState, AgentMessage, Content,
    EventLogState, Layout, Opt, ParsedRecord, SessionRecord, Thread, ThreadMessage, ToolResult,
    ToolResults, ToolUse, UserMessage, SCHEMA,
};

use crate::{Diagnostic, Fidelity, Format, FormatError, Read};
use agentlog_model::{Agent, Entry, EntryKind, Session, SessionMeta};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The acpx format.
pub struct AcpxFormat;

/// The registry entry.
pub static FORMAT: AcpxFormat = AcpxFormat;

/// Returns acpx's sessions directory under `home`.
pub fn sessions_dir(home: &Path) -> PathBuf {
    home.join(".acpx").join("sessions")
}

/// Parses the text of a record file, naming the file and line on failure.
pub fn read_record(path: &Path, bytes: &[u8]) -> Result<ParsedRecord, FormatError> {
    let doc: Value = serde_json::from_slice(bytes)
        .map_err(|e| FormatError::invalid(path, Some(e.line() as u64), format!("not JSON: {e}")))?;
    parse_record(doc)
        .map_err(|e| FormatError::invalid(path, None, format!("not an acpx session record: {e}")))
}

/// Checks the text of a record file; one diagnostic per problem, at its
/// line.
pub fn validate_text(path: &Path, text: &str) -> Vec<Diagnostic> {
    match serde_json::from_str::<Value>(text) {
        Ok(doc) => validate::problems(&doc)
            .into_iter()
            .map(|p| Diagnostic::error(path, p.line_in(text), "strict", p.to_string()))
            .collect(),
        Err(e) => vec![Diagnostic::error(
            path,
            Some(e.line() as u64),
            "invalid-json",
            format!("not JSON: {e}"),
        )],
    }
}

fn is_event_log(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.ends_with(".ndjson")
            && (n.contains(".events") || n.contains(".stream") || n == "events.ndjson")
    })
}

/// Reads an event log file as a session of event entries.
fn read_event_file(path: &Path, bytes: &[u8]) -> Read {
    let mut events = Vec::new();
    let mut diagnostics = Vec::new();
    let mut last = None;
    events::read_segment(path, bytes, &mut last, &mut events, &mut diagnostics);
    let id = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('.').next())
        .unwrap_or("events")
        .to_string();
    let mut session = Session::new(SessionMeta::new(id, Agent::Acpx));
    session.meta.format = Some("acpx".into());
    session
        .meta
        .extra
        .insert("acpx_event_log".into(), Value::Bool(true));
    for ev in events {
        let (source, kind, seq, payload, ts) = match &ev.event {
            events::AuditLine::Envelope(e) => (
                e.source.clone(),
                e.kind.clone(),
                Some(e.seq),
                serde_json::to_value(e).unwrap_or(Value::Null),
                Some(e.timestamp.clone()),
            ),
            events::AuditLine::FlowTrace {
                seq,
                at,
                direction,
                message,
            } => (
                format!("acp:{direction}"),
                message
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("response")
                    .to_string(),
                Some(*seq),
                message.clone(),
                Some(at.clone()),
            ),
            events::AuditLine::JsonRpc(v) => (
                "acp".to_string(),
                v.get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("response")
                    .to_string(),
                None,
                v.clone(),
                None,
            ),
        };
        let parent = session.leaf_id.clone();
        let mut entry = Entry::new(
            format!("l{}", ev.line),
            parent,
            EntryKind::Event {
                source,
                event_type: kind,
                seq,
                payload,
            },
        );
        entry.line = Some(ev.line);
        entry.timestamp = ts.map(agentlog_model::Timestamp::Text);
        session.push(entry);
    }
    Read {
        session,
        diagnostics,
    }
}

impl Format for AcpxFormat {
    fn name(&self) -> &'static str {
        "acpx"
    }

    fn description(&self) -> &'static str {
        "acpx session record (JSON, seed or on-disk shape) and its NDJSON event log"
    }

    fn agent(&self) -> Agent {
        Agent::Acpx
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let text = crate::jsonl::head_text(head, 4096);
        let t = text.trim_start();
        if t.starts_with('{') && t.contains("\"acpx.session.v1\"") {
            return 95;
        }
        if t.starts_with('{')
            && (t.contains("\"acpxRecordId\"") || t.contains("\"acpx_record_id\""))
        {
            return 80;
        }
        if is_event_log(path)
            && (t.starts_with("{\"eventVersion\"") || t.contains("\"acpxRecordId\""))
        {
            return 70;
        }
        if is_event_log(path) && t.starts_with("{\"seq\"") && t.contains("\"direction\"") {
            return 60;
        }
        0
    }

    fn discover(&self, env: &crate::env::DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for("acpx") {
            Some(r) => r.to_vec(),
            None => vec![sessions_dir(&env.home)],
        };
        let mut out = Vec::new();
        for root in roots {
            out.extend(crate::env::walk_files(&root, 0, &|p: &Path| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.ends_with(".json") && !name.starts_with('.') && name != "index.json"
            }));
        }
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        if is_event_log(path) {
            return Ok(read_event_file(path, bytes));
        }
        let parsed = read_record(path, bytes)?;
        let text = String::from_utf8_lossy(bytes);
        let diagnostics = validate_text(path, &text)
            .into_iter()
            .map(|mut d| {
                d.severity = crate::Severity::Warning;
                d
            })
            .collect();
        Ok(Read {
            session: session_from_record(&parsed),
            diagnostics,
        })
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        let bytes = crate::input::read_file(path)?;
        if is_event_log(path) {
            return Ok(read_event_file(path, &bytes).diagnostics);
        }
        Ok(validate_text(path, &String::from_utf8_lossy(&bytes)))
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        let (record, fidelity) = record_from_session(session);
        out.write_all(record.to_text().as_bytes())
            .map_err(|e| FormatError::write("acpx session record", e))?;
        Ok(fidelity)
    }
}
