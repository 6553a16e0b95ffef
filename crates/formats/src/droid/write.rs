//! Writes a session as a Droid session-store file: a `session_start`
//! record, then `message` records chained by `parentId` whose content is
//! Anthropic-style blocks (`text`, `thinking`, `tool_use`, and the
//! `tool_result` blocks of a user message). A session read from Droid keeps
//! its records (those kept verbatim are written as they were); one of
//! another agent becomes a new session of its active branch, which
//! `droid exec -s <id>` continues.

use super::FORMAT_NAME;
use crate::{Fidelity, FormatError};
use agentlog_model::{Block, BlockKind, Entry, EntryKind, Message, Role, Session, Timestamp};
use serde_json::{json, Map, Value};
use std::io::Write;

/// Writes `session` to `out`.
pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let mut fidelity = Fidelity::new(FORMAT_NAME);
    let native = session.meta.format.as_deref() == Some(FORMAT_NAME);
    let mut lines: Vec<Value> = Vec::new();
    let started = session.entries.iter().any(|e| {
        matches!(&e.kind, EntryKind::Unknown { record_type: Some(t), .. } if t == "session_start")
    });
    if !(native && started) {
        lines.push(session_start(session));
    }
    let entries: Vec<&Entry> = if native {
        session.entries.iter().collect()
    } else {
        session.active_branch()
    };
    let mut last: Option<String> = None;
    for e in entries {
        match &e.kind {
            EntryKind::Unknown { raw, .. } if native => lines.push(raw.clone()),
            EntryKind::Message(m) => {
                let parent = if native {
                    e.parent_id.clone()
                } else {
                    last.clone()
                };
                if let Some(v) = message_record(e, m, parent, native, &mut fidelity) {
                    last = v.get("id").and_then(Value::as_str).map(str::to_string);
                    lines.push(v);
                }
            }
            _ => fidelity.lost(format!("{} entry", e.kind_name()), Some(&e.id)),
        }
    }
    for line in lines {
        serde_json::to_writer(&mut *out, &line)
            .map_err(|e| FormatError::write("droid session", std::io::Error::other(e)))?;
        out.write_all(b"\n")
            .map_err(|e| FormatError::write("droid session", e))?;
    }
    Ok(fidelity)
}

/// The `session_start` record of a session that has none.
fn session_start(session: &Session) -> Value {
    let mut o = Map::new();
    o.insert("type".into(), "session_start".into());
    o.insert("id".into(), super::droid_session_id(session).into());
    let title = session
        .meta
        .title
        .clone()
        .or_else(|| session.first_prompt())
        .map(|t| {
            t.lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(80)
                .collect::<String>()
        })
        .unwrap_or_default();
    o.insert("title".into(), title.into());
    o.insert("owner".into(), "unknown".into());
    o.insert("version".into(), 2.into());
    if let Some(cwd) = &session.meta.cwd {
        o.insert("cwd".into(), cwd.clone().into());
    }
    o.insert("isSessionTitleManuallySet".into(), false.into());
    Value::Object(o)
}

/// The `message` record of `m`, or `None` when Droid has no place for it.
fn message_record(
    e: &Entry,
    m: &Message,
    parent: Option<String>,
    native: bool,
    fidelity: &mut Fidelity,
) -> Option<Value> {
    let role = match (&m.role, native) {
        (Role::User | Role::Assistant, _) => m.role.as_str().to_string(),
        (Role::Custom(r), true) => r.clone(),
        (Role::System, true) => "system".into(),
        // A tool's output (pi's `toolResult`, Codex's outputs): Droid's
        // results are `tool_result` blocks of a user message.
        (Role::Tool, false) | (Role::Custom(_), false) if m.tool_call_id.is_some() => "user".into(),
        _ => {
            fidelity.lost(format!("{} message", m.role), Some(&e.id));
            return None;
        }
    };
    if !native && m.injected.is_some() {
        fidelity.lost("injected context message", Some(&e.id));
        return None;
    }
    let mut content: Vec<Value> = Vec::new();
    let tool_output = role == "user" && !matches!(m.role, Role::User);
    if tool_output {
        let blocks: Vec<Value> = m
            .content
            .iter()
            .filter_map(|b| block_value(b, native, fidelity, &e.id))
            .collect();
        content.push(json!({
            "type": "tool_result",
            "tool_use_id": m.tool_call_id,
            "content": blocks,
        }));
    } else {
        for b in &m.content {
            if let Some(v) = block_value(b, native, fidelity, &e.id) {
                content.push(v);
            }
        }
    }
    if content.is_empty() && !native {
        return None;
    }
    let mut msg = Map::new();
    msg.insert("role".into(), role.into());
    msg.insert("content".into(), Value::Array(content));
    if native {
        for (k, v) in &m.extra {
            msg.insert(k.clone(), v.clone());
        }
    } else if let Some(model) = &m.model {
        msg.insert("modelId".into(), model.clone().into());
    }
    let mut o = Map::new();
    o.insert("type".into(), "message".into());
    o.insert("id".into(), e.id.clone().into());
    // A record read without `parentId`, with a null one, or with one that
    // names no entry (the session's id), is written so.
    match e.extra.get(super::PARENT_MARK) {
        Some(Value::String(m)) if native && m == "absent" => {}
        Some(Value::String(m)) if native && m == "null" => {
            o.insert("parentId".into(), Value::Null);
        }
        Some(Value::Object(m)) if native => {
            if let Some(p) = m.get("id") {
                o.insert("parentId".into(), p.clone());
            }
        }
        _ => {
            if let Some(p) = parent {
                o.insert("parentId".into(), p.into());
            }
        }
    }
    let ts = e.timestamp.clone().unwrap_or_else(Timestamp::now);
    o.insert("timestamp".into(), ts.to_rfc3339().into());
    o.insert("message".into(), Value::Object(msg));
    if native {
        for (k, v) in &e.extra {
            if k != super::PARENT_MARK {
                o.insert(k.clone(), v.clone());
            }
        }
    }
    Some(Value::Object(o))
}

/// One content block as Droid writes it, or `None` (reported) when Droid
/// has no such block.
fn block_value(b: &Block, native: bool, fidelity: &mut Fidelity, entry: &str) -> Option<Value> {
    let v = match &b.kind {
        BlockKind::Text { text } => json!({"type": "text", "text": text}),
        BlockKind::Thinking {
            text, signature, ..
        } => {
            let mut o = json!({"type": "thinking", "thinking": text});
            if let Some(s) = signature {
                o["signature"] = s.clone().into();
            }
            o
        }
        BlockKind::ToolCall { id, name, input } => {
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        BlockKind::ToolResult {
            tool_call_id,
            content,
            is_error,
        } => {
            // Content that was a string is written as one again.
            let as_string = native
                && b.extra.contains_key(super::wire::CONTENT_STRING)
                && content
                    .iter()
                    .all(|c| matches!(c.kind, BlockKind::Text { .. }));
            let inner = if as_string {
                Value::String(content.iter().filter_map(Block::plain_text).collect())
            } else {
                Value::Array(
                    content
                        .iter()
                        .filter_map(|c| block_value(c, native, fidelity, entry))
                        .collect(),
                )
            };
            let mut o =
                json!({"type": "tool_result", "tool_use_id": tool_call_id, "content": inner});
            if *is_error {
                o["is_error"] = true.into();
            }
            o
        }
        BlockKind::Other { value } => value.clone(),
        BlockKind::Image {
            media_type,
            data: Some(data),
            ..
        } => {
            json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
        }
        BlockKind::Image { url: Some(url), .. } => {
            json!({"type": "image", "source": {"type": "url", "url": url}})
        }
        BlockKind::Image { .. } => {
            fidelity.lost("image without data", Some(entry));
            return None;
        }
    };
    // Fields Droid's own blocks had (another format's block extras are not
    // Droid's to carry).
    let mut v = v;
    if let (Value::Object(o), true) = (&mut v, native && !matches!(b.kind, BlockKind::Other { .. }))
    {
        for (k, val) in &b.extra {
            if !k.starts_with('$') {
                o.insert(k.clone(), val.clone());
            }
        }
    }
    Some(v)
}
