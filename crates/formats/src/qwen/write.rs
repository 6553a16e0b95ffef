//! Writing Qwen Code chats.

use super::read::{NO_ARGS, NO_PARENT, RESPONSE_JSON, RESPONSE_NAME, SYNTHETIC_ID};
use super::{qwen_session_id, FORMAT_NAME};
use crate::{Fidelity, FormatError};
use agentlog_model::{Block, BlockKind, Entry, EntryKind, Message, Role, Session, Timestamp};
use serde_json::{json, Map, Value};
use std::io::Write;

/// The Qwen Code version written into new chats: the one whose files were
/// verified.
const WRITTEN_VERSION: &str = "0.24.4";

pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let mut fidelity = Fidelity::new(FORMAT_NAME);
    let lines: Vec<Value> = if session.meta.format.as_deref() == Some(FORMAT_NAME) {
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
            .map_err(|e| FormatError::write("qwen chat", std::io::Error::other(e)))?;
        out.write_all(b"\n")
            .map_err(|e| FormatError::write("qwen chat", e))?;
    }
    Ok(fidelity)
}

fn timestamp_value(t: &Timestamp) -> Value {
    match t {
        Timestamp::Text(s) => Value::String(s.clone()),
        Timestamp::Millis(ms) => Value::from(*ms),
    }
}

/// Writes one entry read from Qwen Code back as its record.
fn native_line(e: &Entry, fidelity: &mut Fidelity) -> Value {
    if let EntryKind::Unknown { raw, .. } = &e.kind {
        if !raw.is_object() {
            return raw.clone();
        }
    }
    let mut obj = Map::new();
    for (k, v) in &e.extra {
        if !k.starts_with('$') {
            obj.insert(k.clone(), v.clone());
        }
    }
    if !e.extra.contains_key(SYNTHETIC_ID) && !obj.contains_key("uuid") {
        obj.insert("uuid".into(), e.id.clone().into());
    }
    if !e.extra.contains_key(NO_PARENT) && !obj.contains_key("parentUuid") {
        obj.insert(
            "parentUuid".into(),
            e.parent_id.clone().map_or(Value::Null, Value::String),
        );
    }
    if let Some(t) = &e.timestamp {
        obj.insert("timestamp".into(), timestamp_value(t));
    }
    match &e.kind {
        EntryKind::Message(m) => {
            let t = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
                _ => "tool_result",
            };
            obj.insert("type".into(), t.into());
            obj.insert("message".into(), Value::Object(message_value(m)));
        }
        EntryKind::Event {
            event_type,
            payload,
            ..
        } => {
            obj.insert("type".into(), "system".into());
            obj.insert("subtype".into(), event_type.clone().into());
            if !e.extra.contains_key("$no_payload") {
                obj.insert("systemPayload".into(), payload.clone());
            }
        }
        EntryKind::Unknown { raw, .. } => {
            if let Value::Object(raw) = raw {
                for (k, v) in raw {
                    obj.insert(k.clone(), v.clone());
                }
            }
        }
        other => fidelity.lost(format!("{} entry", other.name()), Some(&e.id)),
    }
    Value::Object(obj)
}

/// The `message` object of a message: its extras and its parts.
fn message_value(m: &Message) -> Map<String, Value> {
    let mut msg = m.extra.clone();
    let parts: Vec<Value> = m.content.iter().map(part_value).collect();
    msg.insert("parts".into(), Value::Array(parts));
    msg
}

fn part_value(b: &Block) -> Value {
    let mut p = Map::new();
    for (k, v) in &b.extra {
        if !k.starts_with('$') {
            p.insert(k.clone(), v.clone());
        }
    }
    match &b.kind {
        BlockKind::Text { text } => {
            p.insert("text".into(), text.clone().into());
        }
        BlockKind::Thinking { text, .. } => {
            p.insert("text".into(), text.clone().into());
            p.insert("thought".into(), true.into());
        }
        BlockKind::ToolCall { id, name, input } => {
            let mut c = Map::new();
            if let Some(id) = id {
                c.insert("id".into(), id.clone().into());
            }
            c.insert("name".into(), name.clone().into());
            if !b.extra.contains_key(NO_ARGS) {
                c.insert("args".into(), input.clone());
            }
            p.insert("functionCall".into(), Value::Object(c));
        }
        BlockKind::ToolResult {
            tool_call_id,
            content,
            ..
        } => {
            let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
            let text = text.join("\n");
            let mut r = Map::new();
            if let Some(id) = tool_call_id {
                r.insert("id".into(), id.clone().into());
            }
            if let Some(n) = b.extra.get(RESPONSE_NAME) {
                r.insert("name".into(), n.clone());
            }
            let response = if b.extra.contains_key(RESPONSE_JSON) {
                serde_json::from_str(&text).unwrap_or(Value::String(text))
            } else {
                json!({ "output": text })
            };
            r.insert("response".into(), response);
            p.insert("functionResponse".into(), Value::Object(r));
        }
        BlockKind::Image {
            media_type, data, ..
        } => {
            p.insert(
                "inlineData".into(),
                json!({"mimeType": media_type, "data": data}),
            );
        }
        BlockKind::Other { value } => return value.clone(),
    }
    Value::Object(p)
}

/// Builds a new chat for a session read from another format.
fn foreign_lines(session: &Session, fidelity: &mut Fidelity) -> Vec<Value> {
    let sid = qwen_session_id(session);
    let cwd = session.meta.cwd.clone().unwrap_or_default();
    let mut lines = Vec::new();
    let mut last: Option<String> = None;
    let mut n = 0u64;
    let mut push =
        |lines: &mut Vec<Value>, t: &str, ts: Option<&Timestamp>, body: Map<String, Value>| {
            n += 1;
            let id = crate::ids::stable_uuid(&format!("{sid}:{n}")).to_string();
            let ts = ts.map_or_else(Timestamp::now, |t| Timestamp::Text(t.to_rfc3339()));
            let mut obj = Map::new();
            obj.insert("uuid".into(), id.clone().into());
            obj.insert(
                "parentUuid".into(),
                last.clone().map_or(Value::Null, Value::String),
            );
            obj.insert("sessionId".into(), sid.clone().into());
            obj.insert("timestamp".into(), timestamp_value(&ts));
            obj.insert("type".into(), t.into());
            obj.insert("cwd".into(), cwd.clone().into());
            obj.insert("version".into(), WRITTEN_VERSION.into());
            obj.extend(body);
            lines.push(Value::Object(obj));
            last = Some(id);
        };
    for e in session.active_branch() {
        let ts = e.timestamp.as_ref();
        let EntryKind::Message(m) = &e.kind else {
            fidelity.lost(format!("{} entry", e.kind_name()), Some(&e.id));
            continue;
        };
        // Tool results become `tool_result` records, one per result: after
        // the answer that called them, or before a user turn carrying them.
        let (results, rest): (Vec<&Block>, Vec<&Block>) = m
            .content
            .iter()
            .partition(|b| matches!(b.kind, BlockKind::ToolResult { .. }));
        for b in &rest {
            if matches!(b.kind, BlockKind::Other { .. }) {
                fidelity.lost("unknown content block", Some(&e.id));
            }
        }
        let parts: Vec<Value> = rest
            .iter()
            .filter(|b| !matches!(b.kind, BlockKind::Other { .. }))
            .map(|b| part_value(b))
            .collect();
        let mut records: Vec<(&str, Map<String, Value>)> = Vec::new();
        for r in results {
            let BlockKind::ToolResult {
                tool_call_id,
                is_error,
                ..
            } = &r.kind
            else {
                continue;
            };
            let mut b = r.clone();
            if let Some(name) = &m.tool_name {
                b.extra.insert(RESPONSE_NAME.into(), name.clone().into());
            }
            let mut body = Map::new();
            body.insert(
                "message".into(),
                json!({"role": "user", "parts": [part_value(&b)]}),
            );
            body.insert(
                "toolCallResult".into(),
                json!({
                    "callId": tool_call_id.clone().or_else(|| m.tool_call_id.clone()),
                    "status": if *is_error { "error" } else { "success" },
                }),
            );
            records.push(("tool_result", body));
        }
        match m.role {
            _ if parts.is_empty() => {}
            Role::User if m.injected.is_some() => {
                fidelity.lost("injected context message", Some(&e.id));
            }
            Role::User => {
                let mut body = Map::new();
                body.insert("message".into(), json!({"role": "user", "parts": parts}));
                records.push(("user", body));
            }
            Role::Assistant => {
                let mut body = Map::new();
                if let Some(model) = m.model.as_ref().or(session.meta.model.model.as_ref()) {
                    body.insert("model".into(), model.clone().into());
                }
                body.insert("message".into(), json!({"role": "model", "parts": parts}));
                if let Some(u) = &m.usage {
                    let prompt = u.input + u.cache_read;
                    body.insert(
                        "usageMetadata".into(),
                        json!({
                            "promptTokenCount": prompt,
                            "candidatesTokenCount": u.output,
                            "thoughtsTokenCount": u.reasoning,
                            "totalTokenCount": prompt + u.output,
                            "cachedContentTokenCount": u.cache_read,
                        }),
                    );
                }
                records.insert(0, ("assistant", body));
            }
            _ => fidelity.lost(format!("{} message", m.role), Some(&e.id)),
        }
        for (t, body) in records {
            push(&mut lines, t, ts, body);
        }
    }
    lines
}
