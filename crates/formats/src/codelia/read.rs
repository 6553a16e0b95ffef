//! Reads a codelia run log, or a resume state snapshot, into a session.

use super::wire::record::{self, Decoded};
use super::wire::{header, message, state};
use super::{DERIVED_FROM, RECORD_TYPES, SCHEMA_VERSION, STATUSES};
use crate::{jsonl, Diagnostic, FormatError, Read};
use agentlog_model::{Agent, Entry, EntryKind, Session, SessionMeta, Timestamp};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// Reads the file at `path`, whose bytes are `bytes`: a state snapshot
/// (a JSON object without `type`) or a run log.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let json_ext = path.extension().is_some_and(|e| e == "json");
    if json_ext || jsonl::first_value(bytes).is_none() {
        if let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(bytes) {
            if !obj.contains_key("type") {
                let mut diagnostics = Vec::new();
                let session = state::decode(path, &obj, &mut diagnostics);
                return Ok(Read {
                    session,
                    diagnostics,
                });
            }
        }
    }
    read_log(path, bytes)
}

pub(super) fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub(super) fn read_log(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let mut diags = Vec::new();
    // Made from the first record (the header, when it is one).
    let mut session: Option<Session> = None;
    let mut check = OrderCheck::default();
    let mut prev: Option<String> = None;
    // Parsed on a second thread a few batches ahead of this (for a large
    // file), never all of it at once.
    jsonl::each_value(path, bytes, |line, value| {
        let value = match value {
            Ok(v) => v,
            Err(d) => return diags.push(d),
        };
        let session = match &mut session {
            Some(s) => s,
            None => {
                let meta = first_meta(path, line, &value, &mut diags);
                let s = session.insert(Session::new(meta));
                if is_header(&value) {
                    return;
                }
                s
            }
        };
        add_record(
            path, line, value, session, &mut prev, &mut check, &mut diags,
        );
    });
    let Some(mut session) = session else {
        return Err(FormatError::invalid(
            path,
            None,
            "no codelia record in the file",
        ));
    };
    if !check.ended {
        diags.push(Diagnostic::info(
            path,
            None,
            "no-run-end",
            "the run has no run.end record (it crashed or is still running)",
        ));
    }
    if session.meta.title.is_none() {
        session.meta.title = session.entries.iter().find_map(|e| match &e.kind {
            EntryKind::RunStart { input, .. } => {
                input.get("text").and_then(Value::as_str).map(title_of)
            }
            _ => None,
        });
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

fn is_header(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("header")
}

/// The session's metadata from the first record `first`, read from line
/// `line`: the header's, or what a run without one gives.
fn first_meta(path: &Path, line: u64, first: &Value, diags: &mut Vec<Diagnostic>) -> SessionMeta {
    if let Some(h) = first.as_object().filter(|_| is_header(first)) {
        let meta = header::decode(h, &file_stem(path));
        check_version(path, line, &meta, diags);
        return meta;
    }
    diags.push(Diagnostic::warning(
        path,
        Some(line),
        "missing-header",
        "the first record is not a header; session metadata is incomplete",
    ));
    let id = jsonl::str_field(first, "run_id").map_or_else(|| file_stem(path), str::to_string);
    let mut meta = SessionMeta::new(id, Agent::Codelia);
    meta.format = Some("codelia".into());
    meta
}

/// Adds the record `value`, read from line `line`, to `session`, with the
/// messages it holds after it.
fn add_record(
    path: &Path,
    line: u64,
    value: Value,
    session: &mut Session,
    prev: &mut Option<String>,
    check: &mut OrderCheck,
    diags: &mut Vec<Diagnostic>,
) {
    let entry = read_record(path, line, value, prev, diags);
    check.see(path, &entry, diags);
    let derived = conversation_of(&entry);
    session.push(entry);
    for (i, m) in derived.into_iter().enumerate() {
        let Some(from) = prev.clone() else { break };
        let mut e = Entry::new(
            format!("{from}.m{i}"),
            Some(from.clone()),
            EntryKind::Message(m),
        );
        e.extra.insert(DERIVED_FROM.into(), Value::String(from));
        *prev = Some(e.id.clone());
        session.push(e);
    }
}

/// The conversation a record holds, as model messages: the user prompt of
/// `run.start`, the assistant messages (text and tool calls) of
/// `llm.response`, the tool result of `tool.output`.
pub(super) fn conversation_of(e: &Entry) -> Vec<agentlog_model::Message> {
    use agentlog_model::{Block, Message, Role};
    match &e.kind {
        EntryKind::RunStart { input, .. } => input
            .get("text")
            .and_then(Value::as_str)
            .map(|t| {
                let mut m = Message::text(Role::User, t);
                m.content_is_text = true;
                vec![m]
            })
            .unwrap_or_default(),
        EntryKind::LlmResponse { output, usage, .. } => {
            let mut out: Vec<Message> = output
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|v| v.get("role").and_then(Value::as_str) == Some("assistant"))
                .filter_map(message::decode)
                .filter(|m| !m.content.is_empty())
                .collect();
            if let Some(last) = out.last_mut() {
                last.usage = usage.clone();
            }
            out
        }
        EntryKind::ToolOutput {
            tool,
            tool_call_id,
            output,
            is_error,
        } => {
            let mut m = Message::new(Role::Tool);
            m.content.push(Block::tool_result(
                Some(tool_call_id.clone()),
                vec![Block::text(output.clone())],
                is_error.unwrap_or(false),
            ));
            m.tool_call_id = Some(tool_call_id.clone());
            m.tool_name = Some(tool.clone());
            m.is_error = *is_error;
            vec![m]
        }
        _ => Vec::new(),
    }
}

pub(super) fn title_of(text: &str) -> String {
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    first.chars().take(120).collect()
}

pub(super) fn check_version(
    path: &Path,
    line: u64,
    meta: &SessionMeta,
    diags: &mut Vec<Diagnostic>,
) {
    if meta.format_version.as_ref().and_then(Value::as_u64) != Some(SCHEMA_VERSION) {
        let v = meta.format_version.clone().unwrap_or(Value::Null);
        diags.push(Diagnostic::warning(
            path,
            Some(line),
            "unsupported-schema-version",
            format!("schema_version {v} is not {SCHEMA_VERSION}; read in best-effort mode (fields not understood are kept verbatim)"),
        ));
    }
}

pub(super) fn read_record(
    path: &Path,
    line: u64,
    value: Value,
    prev: &mut Option<String>,
    diags: &mut Vec<Diagnostic>,
) -> Entry {
    let parent = prev.clone();
    let ty = jsonl::str_field(&value, "type").map(str::to_string);
    let decoded = match &value {
        Value::Object(m) => record::decode(m),
        _ => None,
    };
    let mut entry = match decoded {
        Some(Decoded::Entry(e)) => e,
        Some(Decoded::Record {
            kind,
            timestamp,
            extra,
        }) => {
            let mut e = Entry::new(format!("l{line}"), parent, kind);
            e.timestamp = timestamp;
            e.extra = extra;
            e
        }
        None => {
            let (code, msg) = match ty.as_deref() {
                None => (
                    "no-type",
                    "record has no string \"type\"; kept verbatim".to_string(),
                ),
                Some("header") => (
                    "misplaced-header",
                    "a header after the first record; kept verbatim".to_string(),
                ),
                Some(t) if t.starts_with("x.") => (
                    "extension-record",
                    format!("namespaced record {t:?} kept verbatim"),
                ),
                Some(t) if RECORD_TYPES.contains(&t) => (
                    "unmapped-record",
                    format!("{t} record has fields of unexpected types; kept verbatim"),
                ),
                Some(t) => (
                    "unknown-type",
                    format!("unknown record type {t:?}; kept verbatim"),
                ),
            };
            let d = if code == "extension-record" || code == "unknown-type" {
                Diagnostic::info(path, Some(line), code, msg)
            } else {
                Diagnostic::warning(path, Some(line), code, msg)
            };
            diags.push(d);
            let mut e = Entry::new(
                format!("l{line}"),
                parent,
                EntryKind::Unknown {
                    record_type: ty,
                    raw: value.clone(),
                },
            );
            e.timestamp = value
                .get("ts")
                .and_then(Value::as_str)
                .map(|s| Timestamp::Text(s.to_string()));
            e
        }
    };
    entry.line = Some(line);
    *prev = Some(entry.id.clone());
    entry
}

/// Notes the ordering rules a reader can check: `agent.event` seq strictly
/// increasing, responses answering earlier requests, nothing after `run.end`.
#[derive(Default)]
pub(super) struct OrderCheck {
    last_event_seq: Option<u64>,
    requests: HashSet<u64>,
    ended: bool,
}

impl OrderCheck {
    fn see(&mut self, path: &Path, e: &Entry, diags: &mut Vec<Diagnostic>) {
        let line = e.line;
        let mut warn =
            |msg: String| diags.push(Diagnostic::warning(path, line, "out-of-order", msg));
        if self.ended {
            warn(format!("{} record after run.end", e.kind_name()));
        }
        match &e.kind {
            EntryKind::Event {
                seq: Some(seq),
                source,
                ..
            } if source == "agent" => {
                if let Some(last) = self.last_event_seq.filter(|l| seq <= l) {
                    warn(format!("agent.event seq {seq} does not follow seq {last}"));
                }
                self.last_event_seq = Some(*seq);
            }
            EntryKind::LlmRequest { seq, .. } if !self.requests.insert(*seq) => {
                warn(format!("llm.request seq {seq} repeats an earlier request"));
            }
            EntryKind::LlmResponse { seq, .. } if !self.requests.contains(seq) => {
                warn(format!("llm.response seq {seq} has no earlier llm.request"));
            }
            EntryKind::RunStatus { status, .. } if !STATUSES.contains(&status.as_str()) => {
                diags.push(Diagnostic::info(
                    path,
                    line,
                    "unknown-value",
                    format!("run.status {status:?} is not a known status; kept"),
                ));
            }
            EntryKind::RunEnd { outcome, .. } => {
                if let agentlog_model::RunOutcome::Other(o) = outcome {
                    diags.push(Diagnostic::info(
                        path,
                        line,
                        "unknown-value",
                        format!("run.end outcome {o:?} is not a known outcome; kept"),
                    ));
                }
                self.ended = true;
            }
            _ => {}
        }
    }
}
