//! Reads an acpx session record, or one of its audit logs, into a session.
//!
//! Reading keeps the whole record: the thread's messages become entries
//! (tool results become tool-result entries after their agent message), and
//! everything else (runtime fields, the `acpx` namespace, token usage, the
//! file's layout and key order) is kept in `meta.extra["acpx_record"]`, so
//! writing the session back gives the same JSON values.

use super::validate::validate_text;
use super::wire::record::{
    parse_record, AgentMessage, Content, Opt, ParsedRecord, ThreadMessage, ToolResult, UserMessage,
};
use super::wire::{events, LAYOUT_KEY, ORDER_KEY, RECORD_KEY};
use crate::{FormatError, Read};
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta,
    Timestamp, Usage,
};
use serde_json::{json, Value};
use std::path::Path;

/// Reads the record or audit log at `path`, whose bytes are `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
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
    let mut session = session_from_record(&parsed);
    if parsed.layout == super::wire::record::Layout::Disk {
        usage_from_stream(path, &parsed.record.acpx_record_id, &mut session);
    }
    Ok(Read {
        session,
        diagnostics,
    })
}

/// acpx's on-disk records often hold no token usage (when the agent sends
/// no usage updates); the turn results in the record's event log
/// (`<id>.stream.ndjson` beside it) do. Each turn's counts go on the last
/// answer of the prompt the turn sent, when no answer has usage yet.
fn usage_from_stream(path: &Path, record_id: &str, session: &mut Session) {
    let has_usage = session
        .entries
        .iter()
        .any(|e| e.message().is_some_and(|m| m.usage.is_some()));
    if has_usage || record_id.is_empty() || record_id.contains(['/', '\\']) {
        return;
    }
    let log = path.with_file_name(format!("{record_id}.stream.ndjson"));
    let Ok(bytes) = std::fs::read(&log) else {
        return;
    };
    let mut turns: Vec<(String, Usage)> = Vec::new();
    let mut prompt = String::new();
    for line in crate::jsonl::lines(&bytes) {
        let Ok(v) = serde_json::from_slice::<Value>(line.bytes) else {
            continue;
        };
        if v.get("method").and_then(Value::as_str) == Some("session/prompt") {
            prompt = v["params"]["prompt"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n");
        } else if v.get("type").and_then(Value::as_str) == Some("turn_result") {
            let counts = &v["result"]["_meta"]["quota"]["token_count"];
            if counts.is_object() {
                turns.push((std::mem::take(&mut prompt), usage_from(counts)));
            }
        }
    }
    let mut at = 0;
    for (prompt, usage) in turns {
        let entries = &session.entries;
        let Some(user) = (at..entries.len()).find(|&i| {
            entries[i]
                .message()
                .is_some_and(|m| m.role == Role::User && m.text_content() == prompt)
        }) else {
            continue;
        };
        let end = (user + 1..entries.len())
            .find(|&i| {
                entries[i].message().is_some_and(|m| {
                    m.role == Role::User
                        && !m.content.is_empty()
                        && !agentlog_model::only_tool_results(m)
                })
            })
            .unwrap_or(entries.len());
        if let Some(answer) = (user + 1..end).rev().find(|&i| {
            entries[i]
                .message()
                .is_some_and(|m| m.role == Role::Assistant)
        }) {
            if let EntryKind::Message(m) = &mut session.entries[answer].kind {
                m.usage = Some(usage);
            }
        }
        at = end;
    }
}

/// Converts a parsed record to a unified session.
pub fn session_from_record(parsed: &ParsedRecord) -> Session {
    let r = &parsed.record;
    let mut meta = SessionMeta::new(r.acpx_record_id.clone(), Agent::Acpx);
    meta.format = Some("acpx".into());
    meta.format_version = Some(Value::String(r.schema.clone()));
    meta.cwd = r.cwd.get().cloned();
    let thread = r.thread.get();
    meta.title = thread
        .and_then(|t| t.title.get().cloned())
        .or_else(|| r.name.get().cloned());
    meta.created_at = r.created_at.get().cloned().map(Timestamp::Text);
    meta.updated_at = thread
        .and_then(|t| t.updated_at.get().cloned())
        .or_else(|| r.last_used_at.get().cloned())
        .map(Timestamp::Text);
    meta.closed_at = r.closed_at.get().cloned().map(Timestamp::Text);
    if let Some(Value::String(m)) = thread.and_then(|t| t.model.get()) {
        meta.model.model = Some(m.clone());
    }
    let mut rest = r.clone();
    if let Some(t) = rest.thread.get_mut() {
        if let Opt::Set(msgs) = &mut t.messages {
            msgs.clear();
        }
    }
    if let Ok(v) = serde_json::to_value(&rest) {
        meta.extra.insert(RECORD_KEY.into(), v);
    }
    meta.extra.insert(
        LAYOUT_KEY.into(),
        Value::String(parsed.layout.as_str().into()),
    );
    meta.extra.insert(ORDER_KEY.into(), json!(parsed.key_order));

    let request_usage = thread.and_then(|t| t.request_token_usage.get());
    let mut session = Session::new(meta);
    let mut used = std::collections::HashSet::new();
    let mut last_user: Option<String> = None;
    for (i, m) in r.messages().iter().enumerate() {
        let fallback = format!("m{i}");
        let (kind, preferred) = match m {
            ThreadMessage::User(u) => {
                last_user = Some(u.id.clone());
                (EntryKind::Message(user_message(u)), Some(u.id.clone()))
            }
            ThreadMessage::Agent(a) => {
                let mut msg = agent_message(a);
                msg.usage = last_user
                    .as_ref()
                    .and_then(|id| request_usage.and_then(|u| u.get(id)))
                    .map(usage_from);
                (EntryKind::Message(msg), None)
            }
            ThreadMessage::Resume => (EntryKind::Resume, None),
            ThreadMessage::Invalid(v) => (
                EntryKind::Unknown {
                    record_type: None,
                    raw: v.clone(),
                },
                None,
            ),
        };
        let id = unique(
            &mut used,
            preferred.filter(|s| !s.is_empty()).unwrap_or(fallback),
        );
        let parent = session.leaf_id.clone();
        session.push(Entry::new(id.clone(), parent, kind));
        if let ThreadMessage::Agent(a) = m {
            if let Opt::Set(results) = &a.tool_results {
                for (key, res) in &results.0 {
                    let rid = unique(&mut used, format!("{id}:{key}"));
                    let parent = session.leaf_id.clone();
                    session.push(Entry::new(
                        rid,
                        parent,
                        EntryKind::Message(result_message(key, res)),
                    ));
                }
            }
        }
    }
    session
}

pub(super) fn unique(used: &mut std::collections::HashSet<String>, id: String) -> String {
    let mut candidate = id.clone();
    let mut n = 1;
    while used.contains(&candidate) {
        n += 1;
        candidate = format!("{id}~{n}");
    }
    used.insert(candidate.clone());
    candidate
}

pub(super) fn user_message(u: &UserMessage) -> Message {
    let mut m = Message::new(Role::User);
    m.id = Some(u.id.clone());
    m.content = u.content.iter().map(block_from).collect();
    m.extra = u.extra.clone();
    m
}

pub(super) fn agent_message(a: &AgentMessage) -> Message {
    let mut m = Message::new(Role::Assistant);
    m.content = a.content.iter().map(block_from).collect();
    m.extra = a.extra.clone();
    if let Opt::Set(v) = &a.reasoning_details {
        m.extra.insert("reasoning_details".into(), v.clone());
    } else if a.reasoning_details == Opt::Null {
        m.extra.insert("reasoning_details".into(), Value::Null);
    }
    if a.tool_results.is_absent() {
        m.extra
            .insert("tool_results_absent".into(), Value::Bool(true));
    }
    m
}

pub(super) fn block_from(c: &Content) -> Block {
    match c {
        Content::Text(t) => Block::text(t.clone()),
        Content::Thinking {
            text,
            signature,
            extra,
        } => {
            let mut b = Block::thinking(text.clone(), signature.get().cloned());
            b.extra = extra.clone();
            if *signature == Opt::Null {
                b.extra.insert("signature_null".into(), Value::Bool(true));
            }
            b
        }
        Content::ToolUse(t) => {
            let mut b = Block::tool_call(
                Some(t.id.clone()),
                t.name.clone(),
                t.input.get().cloned().unwrap_or(Value::Null),
            );
            let mut rest = t.clone();
            rest.input = if t.input.is_absent() {
                Opt::Absent
            } else {
                Opt::Null
            };
            if let Ok(Value::Object(o)) = serde_json::to_value(&rest) {
                b.extra.insert("acpx_tool_use".into(), Value::Object(o));
            }
            b
        }
        Content::Other(v) => {
            if v.get("RedactedThinking").is_some() {
                let mut b = Block::thinking("", None);
                if let BlockKind::Thinking { redacted, .. } = &mut b.kind {
                    *redacted = true;
                }
                b.extra.insert("acpx_raw".into(), v.clone());
                return b;
            }
            Block {
                kind: BlockKind::Other { value: v.clone() },
                extra: Extra::new(),
            }
        }
    }
}

pub(super) fn result_message(key: &str, r: &ToolResult) -> Message {
    let mut m = Message::new(Role::Tool);
    m.tool_call_id = Some(r.tool_use_id.clone());
    m.tool_name = r.tool_name.get().cloned();
    m.is_error = r.is_error.get().copied();
    let content = match r.content.get() {
        Some(v) => match v.get("Text").and_then(Value::as_str) {
            Some(t) => vec![Block::text(t)],
            None => vec![Block {
                kind: BlockKind::Other { value: v.clone() },
                extra: Extra::new(),
            }],
        },
        None => Vec::new(),
    };
    let mut b = Block::tool_result(
        Some(r.tool_use_id.clone()),
        content,
        r.is_error.get() == Some(&true),
    );
    if let Ok(Value::Object(o)) = serde_json::to_value(r) {
        b.extra.insert("acpx_result".into(), Value::Object(o));
    }
    b.extra.insert("acpx_key".into(), Value::String(key.into()));
    m.content.push(b);
    m
}

pub(super) fn usage_from(v: &Value) -> Usage {
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input: n("input_tokens"),
        output: n("output_tokens"),
        cache_read: n("cache_read_input_tokens"),
        cache_write: n("cache_creation_input_tokens"),
        ..Usage::default()
    }
}

/// Parses the text of a record file, naming the file and line on failure.
pub fn read_record(path: &Path, bytes: &[u8]) -> Result<ParsedRecord, FormatError> {
    let doc: Value = serde_json::from_slice(bytes)
        .map_err(|e| FormatError::invalid(path, Some(e.line() as u64), format!("not JSON: {e}")))?;
    parse_record(doc)
        .map_err(|e| FormatError::invalid(path, None, format!("not an acpx session record: {e}")))
}

pub(super) fn is_event_log(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.ends_with(".ndjson")
            && (n.contains(".events") || n.contains(".stream") || n == "events.ndjson")
    })
}

/// Reads an event log file as a session of event entries.
pub(super) fn read_event_file(path: &Path, bytes: &[u8]) -> Read {
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
