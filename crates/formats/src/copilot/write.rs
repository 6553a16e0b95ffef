//! Writing Copilot CLI event streams.

use super::read::{joined_text, NO_PARENT, SYNTHETIC_ID};
use super::{copilot_session_id, FORMAT_NAME};
use crate::chat::thinking_text;
use crate::{Fidelity, FormatError};
use agentlog_model::{BlockKind, Entry, EntryKind, Message, Role, Session, Timestamp};
use serde_json::{json, Map, Value};
use std::io::Write;

/// Entry-extra key naming the native type where the message alone does not.
pub(super) const TYPE_KEY: &str = "$type";

pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let mut fidelity = Fidelity::new(FORMAT_NAME);
    let lines = if session.meta.format.as_deref() == Some(FORMAT_NAME) {
        session
            .entries
            .iter()
            .map(|e| native_line(e, &mut fidelity))
            .collect()
    } else {
        foreign_lines(session, &mut fidelity)
    };
    for line in lines {
        serde_json::to_writer(&mut *out, &line)
            .map_err(|e| FormatError::write("copilot events", std::io::Error::other(e)))?;
        out.write_all(b"\n")
            .map_err(|e| FormatError::write("copilot events", e))?;
    }
    Ok(fidelity)
}

/// Writes one entry read from Copilot back as its event.
fn native_line(e: &Entry, fidelity: &mut Fidelity) -> Value {
    if let EntryKind::Unknown { raw, .. } = &e.kind {
        if !raw.is_object() {
            return raw.clone();
        }
    }
    let mut obj = Map::new();
    let mut native_type = None;
    for (k, v) in &e.extra {
        match k.as_str() {
            SYNTHETIC_ID | NO_PARENT => {}
            TYPE_KEY => native_type = v.as_str().map(str::to_string),
            _ => {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    if !e.extra.contains_key(SYNTHETIC_ID) && !obj.contains_key("id") {
        obj.insert("id".into(), e.id.clone().into());
    }
    if !e.extra.contains_key(NO_PARENT) && !obj.contains_key("parentId") {
        obj.insert(
            "parentId".into(),
            e.parent_id.clone().map_or(Value::Null, Value::String),
        );
    }
    if let Some(t) = &e.timestamp {
        obj.insert("timestamp".into(), timestamp_value(t));
    }
    match &e.kind {
        EntryKind::Event {
            event_type,
            payload,
            ..
        } => {
            obj.insert("type".into(), event_type.clone().into());
            obj.insert("data".into(), payload.clone());
        }
        EntryKind::Unknown { raw, .. } => {
            if let Value::Object(raw) = raw {
                for (k, v) in raw {
                    obj.insert(k.clone(), v.clone());
                }
            }
        }
        EntryKind::Message(m) => {
            let (t, data) = message_data(m, native_type.as_deref());
            obj.insert("type".into(), t.into());
            obj.insert("data".into(), Value::Object(data));
        }
        other => {
            fidelity.lost(format!("{} entry", other.name()), Some(&e.id));
        }
    }
    Value::Object(obj)
}

/// The Copilot CLI version written into new `session.start` events: the
/// newest one whose files were verified.
const WRITTEN_VERSION: &str = "1.0.102";

/// Returns `t` as Copilot writes times: RFC 3339 text.
fn iso(t: &Timestamp) -> Timestamp {
    match t {
        Timestamp::Millis(_) => Timestamp::Text(t.to_rfc3339()),
        Timestamp::Text(_) => t.clone(),
    }
}

fn timestamp_value(t: &Timestamp) -> Value {
    match t {
        Timestamp::Text(s) => Value::String(s.clone()),
        Timestamp::Millis(ms) => Value::from(*ms),
    }
}

/// Returns the event type and `data` of a message (read from Copilot, so
/// its extras hold the native fields not mapped).
fn message_data(m: &Message, native_type: Option<&str>) -> (&'static str, Map<String, Value>) {
    let mut data = m.extra.clone();
    match m.role {
        Role::User | Role::System => {
            if let Some(text) = joined_text(m) {
                data.insert("content".into(), text.into());
            }
            let t = if m.role == Role::User {
                "user.message"
            } else {
                "system.message"
            };
            (t, data)
        }
        Role::Tool => {
            for b in &m.content {
                if let BlockKind::ToolResult { content, .. } = &b.kind {
                    let text: Vec<String> = content.iter().filter_map(|c| c.plain_text()).collect();
                    if !content.is_empty() {
                        if let Some(Value::Object(result)) = data.get_mut("result") {
                            result.insert("content".into(), text.join("\n").into());
                        }
                    }
                }
            }
            ("tool.execution_complete", data)
        }
        _ if native_type == Some("assistant.reasoning") => {
            if let Some(text) = thinking_text(m) {
                data.insert("content".into(), text.into());
            }
            ("assistant.reasoning", data)
        }
        _ => {
            assistant_fields(m, &mut data);
            ("assistant.message", data)
        }
    }
}

/// Puts the thinking, text and tool calls of `m` into assistant `data`.
fn assistant_fields(m: &Message, data: &mut Map<String, Value>) {
    if let Some(text) = thinking_text(m) {
        data.insert("reasoningText".into(), text.into());
    }
    if let Some(text) = joined_text(m) {
        data.insert("content".into(), text.into());
    }
    let calls: Vec<Value> = m
        .content
        .iter()
        .filter_map(|b| match &b.kind {
            BlockKind::ToolCall { id, name, input } => {
                let mut r = b.extra.clone();
                if let Some(id) = id {
                    r.insert("toolCallId".into(), id.clone().into());
                }
                r.insert("name".into(), name.clone().into());
                r.insert("arguments".into(), input.clone());
                Some(Value::Object(r))
            }
            _ => None,
        })
        .collect();
    if !calls.is_empty() {
        data.insert("toolRequests".into(), Value::Array(calls));
    }
}

/// Builds a new event stream for a session read from another format.
fn foreign_lines(session: &Session, fidelity: &mut Fidelity) -> Vec<Value> {
    let sid = copilot_session_id(session);
    let start = session
        .meta
        .created_at
        .as_ref()
        .map_or_else(Timestamp::now, iso);
    let mut w = Foreign {
        sid: sid.clone(),
        n: 0,
        last: None,
        lines: Vec::new(),
    };
    let mut context = Map::new();
    if let Some(cwd) = &session.meta.cwd {
        context.insert("cwd".into(), cwd.clone().into());
    }
    w.push(
        "session.start",
        Some(&start),
        json!({
            "sessionId": sid,
            "version": 1,
            "producer": "copilot-agent",
            "copilotVersion": WRITTEN_VERSION,
            "startTime": timestamp_value(&start),
            "selectedModel": session.meta.model.model,
            "context": context,
        }),
    );
    for e in session.active_branch() {
        let ts = e.timestamp.as_ref();
        let EntryKind::Message(m) = &e.kind else {
            if !matches!(e.kind, EntryKind::Event { .. } | EntryKind::Unknown { .. }) {
                fidelity.lost(format!("{} entry", e.kind_name()), Some(&e.id));
            } else {
                fidelity.lost("event or unknown record", Some(&e.id));
            }
            continue;
        };
        w.message(m, ts, &e.id, fidelity);
    }
    w.lines
}

struct Foreign {
    sid: String,
    n: u64,
    last: Option<String>,
    lines: Vec<Value>,
}

impl Foreign {
    fn push(&mut self, t: &str, ts: Option<&Timestamp>, data: Value) {
        self.n += 1;
        let id = crate::ids::stable_uuid(&format!("{}:{}", self.sid, self.n)).to_string();
        let ts = ts.map_or_else(Timestamp::now, iso);
        self.lines.push(json!({
            "type": t,
            "data": data,
            "id": id,
            "timestamp": timestamp_value(&ts),
            "parentId": self.last,
        }));
        self.last = Some(id);
    }

    fn message(&mut self, m: &Message, ts: Option<&Timestamp>, entry: &str, f: &mut Fidelity) {
        // Tool results, wherever the source keeps them, become completions.
        for b in &m.content {
            if let BlockKind::ToolResult {
                tool_call_id,
                content,
                is_error,
            } = &b.kind
            {
                let text: Vec<String> = content.iter().filter_map(|c| c.plain_text()).collect();
                self.push(
                    "tool.execution_complete",
                    ts,
                    json!({
                        "toolCallId": tool_call_id.clone().or_else(|| m.tool_call_id.clone()),
                        "success": !is_error,
                        "result": {"content": text.join("\n")},
                    }),
                );
            }
            if matches!(b.kind, BlockKind::Image { .. } | BlockKind::Other { .. }) {
                f.lost("image or unknown content block", Some(entry));
            }
        }
        let text = joined_text(m);
        match m.role {
            Role::User => {
                if let Some(text) = text {
                    let mid = crate::ids::stable_uuid(&format!("{}:m{}", self.sid, self.n));
                    self.push(
                        "user.message",
                        ts,
                        json!({"content": text, "transformedContent": text, "messageId": mid.to_string()}),
                    );
                }
            }
            Role::Assistant => {
                let mut data = Map::new();
                let mid = crate::ids::stable_uuid(&format!("{}:m{}", self.sid, self.n));
                data.insert("messageId".into(), mid.to_string().into());
                data.insert("content".into(), "".into());
                data.insert("toolRequests".into(), Value::Array(Vec::new()));
                assistant_fields(m, &mut data);
                if let Some(model) = &m.model {
                    data.insert("model".into(), model.clone().into());
                }
                if let Some(u) = &m.usage {
                    self.push(
                        "session.usage_record",
                        ts,
                        json!({"usage": {
                            "model": m.model,
                            "inputTokens": u.input + u.cache_read,
                            "outputTokens": u.output,
                            "cacheReadTokens": u.cache_read,
                            "cacheWriteTokens": u.cache_write,
                            "reasoningTokens": u.reasoning,
                        }}),
                    );
                }
                self.push("assistant.message", ts, Value::Object(data));
            }
            Role::System | Role::Developer => {
                if m.injected.is_none() {
                    if let Some(text) = text {
                        self.push(
                            "system.message",
                            ts,
                            json!({"role": "system", "content": text}),
                        );
                    }
                } else {
                    f.lost("injected context message", Some(entry));
                }
            }
            Role::Tool => {}
            Role::Custom(_) => f.lost("custom-role message", Some(entry)),
        }
    }
}
