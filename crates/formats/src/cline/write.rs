//! Writes Cline CLI message files (`<id>.messages.json`): a Cline session
//! message for message, and any other as Cline's Anthropic-style messages
//! (text, thinking, `tool_use`, and `tool_result` in the user message
//! after).

use super::wire::{CONTENT_STRING, CONTENT_VALUE, ITEM_JSON};
use super::FORMAT_NAME;
use crate::chat::own_fields;
use crate::{Fidelity, FormatError};
use agentlog_model::{Block, BlockKind, EntryKind, Message, Role, Session};
use serde_json::{json, Map, Value};
use std::io::Write;

pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let mut fidelity = Fidelity::new(FORMAT_NAME);
    let own = session.meta.format.as_deref() == Some(FORMAT_NAME);
    let (mut doc, messages) = match session.meta.extra.get("messages_file") {
        Some(Value::Object(d)) if own => (d.clone(), own_messages(session, &mut fidelity)),
        _ => {
            let id = crate::safe_path::component(&session.meta.id);
            let doc = json!({
                "version": 1,
                "updated_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                "agent": "lead",
                "sessionId": id,
                "origin": {"source": "cli", "mode": "user", "sessionId": id},
            });
            let Value::Object(doc) = doc else {
                unreachable!("a JSON object")
            };
            (doc, foreign_messages(session, &mut fidelity))
        }
    };
    doc.insert("messages".into(), Value::Array(messages));
    serde_json::to_writer(&mut *out, &Value::Object(doc))
        .map_err(|e| FormatError::write("cline messages", std::io::Error::other(e)))?;
    Ok(fidelity)
}

/// A Cline session's messages as they were read.
fn own_messages(session: &Session, fidelity: &mut Fidelity) -> Vec<Value> {
    let mut out = Vec::new();
    for e in &session.entries {
        match &e.kind {
            EntryKind::Message(m) => {
                let mut obj = own_fields(&m.extra);
                // The reader names a message without a string id by its
                // place.
                let synthetic = e.line.is_some_and(|n| e.id == format!("m{n}"));
                if !synthetic {
                    obj.insert("id".into(), e.id.clone().into());
                }
                if m.content_is_text {
                    let text: String = m.content.iter().filter_map(Block::plain_text).collect();
                    obj.insert("content".into(), text.into());
                } else if !m.content.is_empty() || !obj.contains_key("content") {
                    obj.insert(
                        "content".into(),
                        Value::Array(m.content.iter().map(block_value).collect()),
                    );
                }
                out.push(Value::Object(obj));
            }
            EntryKind::Unknown { raw, .. } => out.push(raw.clone()),
            other => fidelity.lost(format!("{} entry", other.name()), Some(&e.id)),
        }
    }
    out
}

/// A content block as Cline writes it.
fn block_value(b: &Block) -> Value {
    let mut o = own_fields(&b.extra);
    match &b.kind {
        // (Cline's reader never marks thinking redacted)
        _ if crate::claude::put_message_block(&mut o, &b.kind) => {}
        BlockKind::ToolResult {
            tool_call_id,
            content,
            ..
        } => {
            o.insert("type".into(), "tool_result".into());
            if let Some(id) = tool_call_id {
                o.insert("tool_use_id".into(), id.clone().into());
            }
            let value = if let Some(v) = b.extra.get(CONTENT_VALUE) {
                v.clone()
            } else if b.extra.contains_key(CONTENT_STRING) {
                let text: String = content.iter().filter_map(Block::plain_text).collect();
                text.into()
            } else {
                Value::Array(content.iter().map(result_item).collect())
            };
            o.insert("content".into(), value);
        }
        BlockKind::Other { value } => return value.clone(),
        BlockKind::Image { .. } => return Value::Null,
        // (put above)
        BlockKind::Text { .. } | BlockKind::Thinking { .. } | BlockKind::ToolCall { .. } => {}
    }
    Value::Object(o)
}

/// An item of a result's content, as it was read.
fn result_item(b: &Block) -> Value {
    let text = b.plain_text().unwrap_or_default();
    if b.extra.contains_key(ITEM_JSON) {
        if let Ok(v) = serde_json::from_str(&text) {
            return v;
        }
    }
    json!({"type": "text", "text": text})
}

/// Another agent's session as Cline's messages.
fn foreign_messages(session: &Session, fidelity: &mut Fidelity) -> Vec<Value> {
    let mut out = Vec::new();
    for e in session.active_branch() {
        let EntryKind::Message(m) = &e.kind else {
            fidelity.lost(format!("{} entry", e.kind.name()), Some(&e.id));
            continue;
        };
        if m.injected.is_some() {
            fidelity.lost("injected context message", Some(&e.id));
            continue;
        }
        let role = match m.role {
            Role::User | Role::Tool => "user",
            Role::Assistant => "assistant",
            _ => {
                fidelity.lost(format!("{} message", m.role.as_str()), Some(&e.id));
                continue;
            }
        };
        let content = foreign_content(m, &e.id, fidelity);
        if content.is_empty() {
            continue;
        }
        let mut obj = Map::new();
        obj.insert("id".into(), e.id.clone().into());
        obj.insert("role".into(), role.into());
        obj.insert("content".into(), Value::Array(content));
        if let Some(ms) = e.timestamp.as_ref().and_then(|t| t.millis()) {
            obj.insert("ts".into(), ms.into());
        }
        if m.role == Role::Assistant {
            if let Some(model) = &m.model {
                obj.insert(
                    "modelInfo".into(),
                    json!({"id": model, "provider": m.provider.clone().unwrap_or_default()}),
                );
            }
            if let Some(u) = &m.usage {
                obj.insert(
                    "metrics".into(),
                    json!({
                        "inputTokens": u.input + u.cache_read,
                        "outputTokens": u.output,
                        "cacheReadTokens": u.cache_read,
                        "cacheWriteTokens": u.cache_write,
                    }),
                );
            }
        }
        out.push(Value::Object(obj));
    }
    out
}

fn foreign_content(m: &Message, id: &str, fidelity: &mut Fidelity) -> Vec<Value> {
    let mut out = Vec::new();
    for b in &m.content {
        match &b.kind {
            BlockKind::Text { text } if m.role == Role::Tool => out.push(json!({
                "type": "tool_result",
                "tool_use_id": m.tool_call_id,
                "content": text,
            })),
            BlockKind::Text { text } => out.push(json!({"type": "text", "text": text})),
            BlockKind::Thinking { text, .. } => {
                out.push(json!({"type": "thinking", "thinking": text}));
            }
            BlockKind::ToolCall { id, name, input } => out.push(json!({
                "type": "tool_use", "id": id, "name": name, "input": input,
            })),
            BlockKind::ToolResult {
                tool_call_id,
                content,
                is_error,
            } => {
                let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
                let mut r = json!({
                    "type": "tool_result",
                    "tool_use_id": tool_call_id.clone().or_else(|| m.tool_call_id.clone()),
                    "content": text.join("\n"),
                });
                if *is_error {
                    r["is_error"] = true.into();
                }
                out.push(r);
            }
            other => fidelity.lost(format!("{} block", other.name()), Some(id)),
        }
    }
    out
}
