//! Reads a Cline session (`<id>.messages.json` and the `<id>.json` beside
//! it) into a session.

use super::wire::{other, take_str, usage_of, CONTENT_STRING, CONTENT_VALUE, ITEM_JSON, MESSAGES};
use super::FORMAT_NAME;
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{
    Block, BlockKind, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp,
};
use serde_json::{Map, Value};
use std::path::Path;

/// Reads the messages file at `path`, whose bytes are `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let doc: Value = serde_json::from_slice(bytes)
        .map_err(|e| FormatError::invalid(path, Some(e.line() as u64), format!("not JSON: {e}")))?;
    let Value::Object(mut doc) = doc else {
        return Err(FormatError::invalid(path, None, "not a JSON object"));
    };
    let mut diags = Vec::new();
    let id = match doc.get("sessionId").and_then(Value::as_str) {
        Some(s) => s.to_string(),
        None => path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(MESSAGES))
            .unwrap_or_default()
            .to_string(),
    };
    let mut meta = SessionMeta::new(id, crate::Format::agent(&super::FORMAT));
    meta.format = Some(FORMAT_NAME.into());
    meta.format_version = doc.get("version").cloned();
    side_meta(path, &mut meta);
    let messages = match doc.remove("messages") {
        Some(Value::Array(m)) => m,
        _ => {
            diags.push(Diagnostic::warning(
                path,
                None,
                "no-messages",
                "no `messages` array",
            ));
            Vec::new()
        }
    };
    meta.extra
        .insert("messages_file".into(), Value::Object(doc));
    let mut session = Session::new(meta);
    for (i, m) in messages.into_iter().enumerate() {
        let n = i as u64 + 1;
        let Value::Object(m) = m else {
            diags.push(Diagnostic::warning(
                path,
                None,
                "unknown-record",
                format!("message {n} is not an object; kept verbatim"),
            ));
            let mut e = Entry::new(
                format!("m{n}"),
                session.leaf_id.clone(),
                EntryKind::Unknown {
                    record_type: None,
                    raw: m,
                },
            );
            e.line = Some(n);
            session.push(e);
            continue;
        };
        let mut e = message_entry(m, n, session.leaf_id.clone());
        e.line = Some(n);
        session.push(e);
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// Fills `meta` from the `<id>.json` beside the messages file.
fn side_meta(path: &Path, meta: &mut SessionMeta) {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let Some(stem) = name.strip_suffix(MESSAGES) else {
        return;
    };
    let side = path.with_file_name(format!("{stem}.json"));
    let Ok(bytes) = std::fs::read(&side) else {
        return;
    };
    let Ok(Value::Object(mut s)) = serde_json::from_slice::<Value>(&bytes) else {
        return;
    };
    let mut take = |k: &str| match s.remove(k) {
        Some(Value::String(v)) => Some(v),
        Some(other) => {
            s.insert(k.to_string(), other);
            None
        }
        None => None,
    };
    if let Some(id) = take("session_id") {
        meta.id = id;
    }
    meta.created_at = take("started_at").map(Timestamp::Text);
    meta.closed_at = take("ended_at").map(Timestamp::Text);
    meta.cwd = take("cwd");
    meta.model.model = take("model");
    meta.model.provider = take("provider");
    if let Some(md) = s.get("metadata") {
        meta.title = md.get("title").and_then(Value::as_str).map(str::to_string);
        meta.agent_version = md
            .get("sessionHistoryOrigin")
            .and_then(|o| o.get("version"))
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    s.remove("messages_path");
    meta.extra.insert("session_file".into(), Value::Object(s));
}

fn message_entry(mut m: Map<String, Value>, n: u64, parent: Option<String>) -> Entry {
    let role = m
        .get("role")
        .and_then(Value::as_str)
        .map_or(Role::Custom("unknown".into()), Role::parse);
    let id = match m.remove("id") {
        Some(Value::String(s)) => s,
        Some(other) => {
            m.insert("id".into(), other);
            format!("m{n}")
        }
        None => format!("m{n}"),
    };
    let ts = m.get("ts").and_then(Value::as_i64).map(Timestamp::Millis);
    let mut msg = Message::new(role);
    match m.remove("content") {
        Some(Value::Array(blocks)) => msg.content = blocks.into_iter().map(block).collect(),
        Some(Value::String(s)) => {
            msg.content.push(Block::text(s));
            msg.content_is_text = true;
        }
        Some(other) => {
            m.insert("content".into(), other);
        }
        None => {}
    }
    if let Some(info) = m.get("modelInfo") {
        msg.model = info.get("id").and_then(Value::as_str).map(str::to_string);
        msg.provider = info
            .get("provider")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    if let Some(metrics) = m.get("metrics") {
        msg.usage = Some(usage_of(metrics));
    }
    if msg.role == Role::User
        && !msg.content.is_empty()
        && msg
            .content
            .iter()
            .all(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
    {
        msg.tool_call_id = msg.content.iter().find_map(|b| match &b.kind {
            BlockKind::ToolResult { tool_call_id, .. } => tool_call_id.clone(),
            _ => None,
        });
    }
    msg.extra = m;
    let mut e = Entry::new(id, parent, EntryKind::Message(msg));
    e.timestamp = ts;
    e
}

fn block(v: Value) -> Block {
    let Value::Object(mut b) = v else {
        return other(v);
    };
    let t = b
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = match t.as_str() {
        "text" if b.get("text").is_some_and(Value::is_string) => BlockKind::Text {
            text: take_str(&mut b, "text").unwrap_or_default(),
        },
        "thinking" if b.get("thinking").is_some_and(Value::is_string) => BlockKind::Thinking {
            text: take_str(&mut b, "thinking").unwrap_or_default(),
            signature: take_str(&mut b, "signature"),
            redacted: false,
        },
        "tool_use" if b.get("name").is_some_and(Value::is_string) => BlockKind::ToolCall {
            id: take_str(&mut b, "id"),
            name: take_str(&mut b, "name").unwrap_or_default(),
            input: b.remove("input").unwrap_or(Value::Null),
        },
        "tool_result" => {
            // How the content was written is marked, so that it is written
            // back the same way: a string, or items, each a text block or
            // (as its JSON) anything else.
            let content = match b.remove("content") {
                Some(Value::String(s)) => {
                    b.insert(CONTENT_STRING.into(), Value::Bool(true));
                    vec![Block::text(s)]
                }
                Some(Value::Array(items)) => items.into_iter().map(result_item).collect(),
                Some(other) => {
                    b.insert(CONTENT_VALUE.into(), other.clone());
                    vec![Block::text(other.to_string())]
                }
                None => Vec::new(),
            };
            let is_error = b.get("is_error").and_then(Value::as_bool) == Some(true);
            BlockKind::ToolResult {
                tool_call_id: take_str(&mut b, "tool_use_id"),
                content,
                is_error,
            }
        }
        _ => return other(Value::Object(b)),
    };
    b.remove("type");
    Block { kind, extra: b }
}

/// An item of a result's content: a text block (`{type: text, text}` and
/// nothing else) as its text, anything else as its JSON, marked so.
fn result_item(i: Value) -> Block {
    let plain_text = i
        .as_object()
        .is_some_and(|o| o.len() == 2 && o.get("type").and_then(Value::as_str) == Some("text"))
        && i.get("text").is_some_and(Value::is_string);
    if plain_text {
        return Block::text(i.get("text").and_then(Value::as_str).unwrap_or(""));
    }
    let mut b = Block::text(i.to_string());
    b.extra.insert(ITEM_JSON.into(), Value::Bool(true));
    b
}
