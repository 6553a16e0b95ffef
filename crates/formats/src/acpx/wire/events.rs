//! The NDJSON audit log: `<id>.events.ndjson` (active) and
//! `<id>.events.<n>.ndjson` (rotated, 1 = newest).
//!
//! Three line shapes are read: the seed's envelope (`eventVersion`, `seq`,
//! `timestamp`, ids, `stream`, `source`, `type`, `payload`), the flow-trace
//! lines of acpx replay bundles (`seq`, `at`, `direction`, `message`), and
//! the bare ACP JSON-RPC lines acpx itself writes to `<id>.stream.ndjson`.

use crate::{Diagnostic, FormatError};
use agentlog_model::Extra;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The envelope version the seed fixes.
pub const EVENT_VERSION: u64 = 1;

/// The streams an event can belong to.
pub const STREAMS: [&str; 4] = ["prompt", "control", "lifecycle", "queue"];

/// The sources an event can come from.
pub const SOURCES: [&str; 4] = ["acp", "runtime", "queue", "client"];

/// One audit event as the seed's envelope.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventEnvelope {
    /// Always 1.
    pub event_version: u64,
    /// Strictly increasing per session.
    pub seq: u64,
    /// ISO 8601 UTC.
    pub timestamp: String,
    /// The record id.
    pub acpx_record_id: String,
    /// The ACP session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acp_session_id: Option<String>,
    /// The prompt or control request the event belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// `prompt`, `control`, `lifecycle` or `queue`.
    pub stream: String,
    /// `acp`, `runtime`, `queue` or `client`.
    pub source: String,
    /// The event type (`session_update`, `prompt_started`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// The event body.
    #[serde(default)]
    pub payload: Value,
    /// Fields the envelope does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One line of an event log.
#[derive(Clone, Debug, PartialEq)]
pub enum AuditLine {
    /// The seed's envelope.
    Envelope(EventEnvelope),
    /// A flow-trace line of a replay bundle.
    FlowTrace {
        /// The line's sequence number.
        seq: u64,
        /// When it was recorded.
        at: String,
        /// `inbound` (agent to client) or `outbound`.
        direction: String,
        /// The JSON-RPC message.
        message: Value,
    },
    /// A bare ACP JSON-RPC message.
    JsonRpc(Value),
}

impl AuditLine {
    /// Returns the line's sequence number, when it has one.
    pub fn seq(&self) -> Option<u64> {
        match self {
            AuditLine::Envelope(e) => Some(e.seq),
            AuditLine::FlowTrace { seq, .. } => Some(*seq),
            AuditLine::JsonRpc(_) => None,
        }
    }

    /// Returns the JSON-RPC message the line carries: the flow trace's
    /// message, the bare message, or an envelope's `session_update` payload
    /// wrapped as a `session/update` notification.
    pub fn acp_message(&self) -> Option<Value> {
        match self {
            AuditLine::FlowTrace { message, .. } => Some(message.clone()),
            AuditLine::JsonRpc(v) => Some(v.clone()),
            AuditLine::Envelope(e) if e.kind == "session_update" => Some(serde_json::json!({
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": e.payload,
            })),
            AuditLine::Envelope(_) => None,
        }
    }
}

/// Parses one line.
pub fn parse_line(bytes: &[u8]) -> Result<AuditLine, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    if v.get("eventVersion").is_some() {
        return serde_json::from_value::<EventEnvelope>(v)
            .map(AuditLine::Envelope)
            .map_err(|e| format!("not an event envelope: {e}"));
    }
    if let (Some(seq), Some(message)) = (v.get("seq").and_then(Value::as_u64), v.get("message")) {
        return Ok(AuditLine::FlowTrace {
            seq,
            at: v
                .get("at")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            direction: v
                .get("direction")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            message: message.clone(),
        });
    }
    if v.get("jsonrpc").is_some() {
        return Ok(AuditLine::JsonRpc(v));
    }
    Err("neither an event envelope, a flow-trace line nor a JSON-RPC message".into())
}

/// Returns the path of segment `n` of record `id` in `dir`: the active
/// segment for 0, `<id>.events.<n>.ndjson` otherwise.
pub fn segment_path(dir: &Path, id: &str, n: u64) -> PathBuf {
    if n == 0 {
        dir.join(format!("{id}.events.ndjson"))
    } else {
        dir.join(format!("{id}.events.{n}.ndjson"))
    }
}

/// Returns the rotated segment numbers of `id` present in `dir`, ascending.
pub fn rotated_segments(dir: &Path, id: &str) -> Vec<u64> {
    let prefix = format!("{id}.events.");
    let mut out: Vec<u64> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    let name = e.file_name().into_string().ok()?;
                    let n = name.strip_prefix(&prefix)?.strip_suffix(".ndjson")?;
                    n.parse::<u64>().ok().filter(|n| *n > 0)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_unstable();
    out
}

/// Returns the existing segments of `id`, oldest first: the rotated ones
/// from the highest number down, then the active one.
pub fn segments_oldest_first(dir: &Path, id: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = rotated_segments(dir, id)
        .into_iter()
        .rev()
        .map(|n| segment_path(dir, id, n))
        .collect();
    let active = segment_path(dir, id, 0);
    if active.is_file() {
        out.push(active);
    }
    out
}

/// One event read back, with where it was.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadEvent {
    /// The segment file.
    pub path: PathBuf,
    /// The 1-based line.
    pub line: u64,
    /// The event.
    pub event: AuditLine,
}

/// Reads every segment of `id` in `dir`, oldest to newest. Bad lines are
/// diagnostics (a torn last line of the active segment a warning) and are
/// skipped; envelopes whose `seq` does not increase, whose `eventVersion`
/// is not 1, or whose `stream`/`source` is not one of the seed's are
/// reported too, and kept.
pub fn read_all(dir: &Path, id: &str) -> Result<(Vec<ReadEvent>, Vec<Diagnostic>), FormatError> {
    let mut events = Vec::new();
    let mut diags = Vec::new();
    let mut last_seq: Option<u64> = None;
    for path in segments_oldest_first(dir, id) {
        let bytes = crate::input::read_file(&path)?;
        read_segment(&path, &bytes, &mut last_seq, &mut events, &mut diags);
    }
    Ok((events, diags))
}

/// Reads one segment's bytes (see [`read_all`]); `last_seq` carries the
/// sequence check across segments.
pub fn read_segment(
    path: &Path,
    bytes: &[u8],
    last_seq: &mut Option<u64>,
    events: &mut Vec<ReadEvent>,
    diags: &mut Vec<Diagnostic>,
) {
    for line in crate::jsonl::lines(bytes) {
        if crate::jsonl::is_blank(line.bytes) {
            continue;
        }
        match parse_line(line.bytes) {
            Ok(event) => {
                if let AuditLine::Envelope(e) = &event {
                    check_envelope(path, line.number, e, *last_seq, diags);
                    *last_seq = Some(e.seq);
                }
                events.push(ReadEvent {
                    path: path.to_path_buf(),
                    line: line.number,
                    event,
                });
            }
            Err(msg) if !line.terminated => diags.push(Diagnostic::warning(
                path,
                Some(line.number),
                "torn-tail",
                format!("incomplete last line (a write cut short), skipped: {msg}"),
            )),
            Err(msg) => diags.push(Diagnostic::error(
                path,
                Some(line.number),
                "invalid-event",
                format!("{msg}; line skipped"),
            )),
        }
    }
}

fn check_envelope(
    path: &Path,
    line: u64,
    e: &EventEnvelope,
    last: Option<u64>,
    diags: &mut Vec<Diagnostic>,
) {
    if e.event_version != EVENT_VERSION {
        diags.push(Diagnostic::error(
            path,
            Some(line),
            "event-version",
            format!("eventVersion must be 1, got {}", e.event_version),
        ));
    }
    if let Some(prev) = last {
        if e.seq <= prev {
            diags.push(Diagnostic::error(
                path,
                Some(line),
                "seq-order",
                format!(
                    "seq {} does not follow {prev}; seq must increase strictly",
                    e.seq
                ),
            ));
        }
    }
    if !STREAMS.contains(&e.stream.as_str()) {
        diags.push(Diagnostic::warning(
            path,
            Some(line),
            "event-stream",
            format!(
                "stream must be one of {}, got {:?}",
                STREAMS.join(", "),
                e.stream
            ),
        ));
    }
    if !SOURCES.contains(&e.source.as_str()) {
        diags.push(Diagnostic::warning(
            path,
            Some(line),
            "event-source",
            format!(
                "source must be one of {}, got {:?}",
                SOURCES.join(", "),
                e.source
            ),
        ));
    }
}
