//! codelia's `BaseMessage` (an OpenAI-style chat message) and the model's
//! [`Message`].
//!
//! `content` is a string, `null`, or a list of parts; assistant tool calls
//! sit in `tool_calls` beside it. A message is only mapped when mapping it
//! back gives the same JSON value; otherwise the caller keeps it verbatim.

use crate::Fidelity;
use agentlog_model::{Block, BlockKind, Extra, Message, Role};
use serde_json::{Map, Value};

/// Maps a native message to the model, or `None` when it does not fit.
pub(crate) fn decode(value: &Value) -> Option<Message> {
    let obj = value.as_object()?;
    let mut rest = obj.clone();
    let role = match rest.shift_remove("role") {
        Some(Value::String(r)) => r,
        _ => return None,
    };
    let mut msg = Message::new(Role::parse(&role));
    match rest.shift_remove("content") {
        Some(Value::String(s)) => {
            msg.content_is_text = true;
            msg.content.push(Block::text(s));
        }
        Some(Value::Null) => msg.content_is_text = true,
        Some(Value::Array(parts)) => msg.content.extend(parts.into_iter().map(decode_part)),
        _ => return None,
    }
    if let Some(calls) = rest.shift_remove("tool_calls") {
        let Value::Array(calls) = calls else {
            return None;
        };
        for call in calls {
            msg.content.push(decode_call(call)?);
        }
    }
    if let Some(Value::String(id)) = rest.get("tool_call_id") {
        msg.tool_call_id = Some(id.clone());
        rest.shift_remove("tool_call_id");
    }
    msg.extra = rest;
    let back = encode(&msg, &mut Fidelity::default(), None);
    (back == *value).then_some(msg)
}

fn decode_part(part: Value) -> Block {
    if let Value::Object(mut m) = part.clone() {
        if m.get("type").and_then(Value::as_str) == Some("text") {
            if let Some(Value::String(text)) = m.shift_remove("text") {
                m.shift_remove("type");
                let mut b = Block::text(text);
                b.extra = m;
                return b;
            }
        }
    }
    Block {
        kind: BlockKind::Other { value: part },
        extra: Extra::new(),
    }
}

fn decode_call(call: Value) -> Option<Block> {
    let Value::Object(mut m) = call else {
        return None;
    };
    let id = match m.shift_remove("id") {
        Some(Value::String(s)) => Some(s),
        None => None,
        Some(_) => return None,
    };
    let Some(Value::Object(mut f)) = m.shift_remove("function") else {
        return None;
    };
    let Some(Value::String(name)) = f.shift_remove("name") else {
        return None;
    };
    let input = f.shift_remove("arguments").unwrap_or(Value::Null);
    if !f.is_empty() {
        return None;
    }
    let mut b = Block::tool_call(id, name, input);
    b.extra = m;
    Some(b)
}

/// Maps a model message to codelia's shape, recording in `fidelity` what it
/// cannot hold (`entry` names the entry for the report).
pub(crate) fn encode(msg: &Message, fidelity: &mut Fidelity, entry: Option<&str>) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), Value::String(msg.role.as_str().to_string()));
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    for b in &msg.content {
        match &b.kind {
            BlockKind::Text { text } => {
                let mut m = Map::new();
                m.insert("type".into(), Value::String("text".into()));
                m.insert("text".into(), Value::String(text.clone()));
                extend_missing(&mut m, &b.extra);
                parts.push(Value::Object(m));
            }
            BlockKind::ToolCall { id, name, input } => {
                let mut m = Map::new();
                if let Some(id) = id {
                    m.insert("id".into(), Value::String(id.clone()));
                }
                if b.extra.is_empty() {
                    m.insert("type".into(), Value::String("function".into()));
                }
                extend_missing(&mut m, &b.extra);
                let mut f = Map::new();
                f.insert("name".into(), Value::String(name.clone()));
                let args = match input {
                    Value::String(_) | Value::Null => input.clone(),
                    other => Value::String(other.to_string()),
                };
                f.insert("arguments".into(), args);
                m.insert("function".into(), Value::Object(f));
                calls.push(Value::Object(m));
            }
            BlockKind::Other { value } => parts.push(value.clone()),
            BlockKind::Thinking { .. } => fidelity.lost("thinking blocks", entry),
            BlockKind::ToolResult { .. } => fidelity.lost("tool results inside messages", entry),
            BlockKind::Image { .. } => fidelity.lost("images", entry),
        }
    }
    let content = if msg.content_is_text {
        match parts.as_slice() {
            [] => Value::Null,
            [Value::Object(p)] if p.len() == 2 && p.contains_key("text") => {
                p.get("text").cloned().unwrap_or(Value::Null)
            }
            _ => Value::Array(parts),
        }
    } else {
        Value::Array(parts)
    };
    out.insert("content".into(), content);
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(id) = &msg.tool_call_id {
        out.insert("tool_call_id".into(), Value::String(id.clone()));
    }
    extend_missing(&mut out, &msg.extra);
    out.into()
}

/// Adds the fields of `extra` that `out` does not have yet, in order.
pub(crate) fn extend_missing(out: &mut Map<String, Value>, extra: &Extra) {
    for (k, v) in extra {
        if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_the_shapes_codelia_writes() {
        for v in [
            json!({"role":"user","content":"list files","message_ts":"2026-02-03T12:00:00.456Z"}),
            json!({"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}}]}),
            json!({"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]}),
            json!({"role":"tool","tool_call_id":"call_1","content":"ok"}),
        ] {
            let m = decode(&v);
            assert!(m.is_some(), "{v}");
            let back = encode(
                &m.unwrap_or_else(|| Message::new(Role::User)),
                &mut Fidelity::default(),
                None,
            );
            assert_eq!(back, v);
        }
        assert!(decode(&json!({"role":"user"})).is_none());
        assert!(decode(&json!({"content":"x"})).is_none());
    }
}
