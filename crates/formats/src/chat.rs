//! OpenAI-style chat messages as agents keep them in their own files (Vibe
//! 2.x's `messages.jsonl`, Kimi Code's `context.jsonl`): `role`, `content`
//! (a string or parts), `reasoning_content`, `tool_calls`, `tool_call_id`,
//! `name`, `message_id`, `injected`.

use agentlog_model::{Block, BlockKind, Entry, EntryKind, Extra, Message, Role};
use serde_json::{Map, Value};

pub(crate) fn take_string(m: &mut Map<String, Value>, k: &str) -> Option<String> {
    match m.remove(k) {
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            m.insert(k.to_string(), other);
            None
        }
        None => None,
    }
}

/// One chat message (`role`, `content`, `reasoning_content`, `tool_calls`,
/// `tool_call_id`, `name`, `message_id`, `injected`) as an entry; other
/// fields are kept.
pub(crate) fn message_entry(mut m: Map<String, Value>, n: u64, agent: &str) -> Entry {
    let role = Role::parse(m.get("role").and_then(Value::as_str).unwrap_or(""));
    m.remove("role");
    let mut msg = Message::new(role);
    let id = take_string(&mut m, "message_id").unwrap_or_else(|| format!("l{n}"));
    if m.get("reasoning_content").is_some_and(Value::is_string) {
        let text = take_string(&mut m, "reasoning_content").unwrap_or_default();
        let signature = take_string(&mut m, "reasoning_signature");
        msg.content.push(Block::thinking(text, signature));
    }
    match m.remove("content") {
        Some(Value::String(s)) if !s.is_empty() || msg.role != Role::Assistant => {
            if msg.role == Role::Tool {
                msg.content.push(Block::tool_result(
                    m.get("tool_call_id")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    vec![Block::text(s)],
                    false,
                ));
            } else {
                msg.content.push(Block::text(s));
                msg.content_is_text = msg.content.len() == 1;
            }
        }
        Some(Value::Array(parts)) if msg.role == Role::Tool => {
            msg.content.push(Block::tool_result(
                m.get("tool_call_id")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                parts.into_iter().map(part).collect(),
                false,
            ));
        }
        Some(Value::Array(parts)) => msg.content.extend(parts.into_iter().map(part)),
        Some(other) => {
            m.insert("content".into(), other);
        }
        None => {}
    }
    if let Some(Value::Array(calls)) = m.remove("tool_calls") {
        msg.content.extend(calls.into_iter().map(tool_call));
    }
    if msg.role == Role::Tool {
        msg.tool_call_id = take_string(&mut m, "tool_call_id");
        msg.tool_name = take_string(&mut m, "name");
    }
    if m.get("injected") == Some(&Value::Bool(true)) {
        msg.injected = Some(agent.into());
    }
    msg.extra = m;
    Entry::new(id, None, EntryKind::Message(msg))
}

/// A content part of a multimodal message.
fn part(v: Value) -> Block {
    let kind = v.get("type").and_then(Value::as_str);
    match v {
        Value::Object(mut b)
            if kind == Some("text") && b.get("text").is_some_and(Value::is_string) =>
        {
            let text = take_string(&mut b, "text").unwrap_or_default();
            b.remove("type");
            Block {
                kind: BlockKind::Text { text },
                extra: b,
            }
        }
        // Kimi's reasoning: `{type: think, think, encrypted}`.
        Value::Object(mut b)
            if kind == Some("think") && b.get("think").is_some_and(Value::is_string) =>
        {
            let text = take_string(&mut b, "think").unwrap_or_default();
            let signature = take_string(&mut b, "encrypted");
            b.remove("type");
            let mut block = Block::thinking(text, signature);
            block.extra = b;
            block
        }
        other => Block {
            kind: BlockKind::Other { value: other },
            extra: Extra::new(),
        },
    }
}

/// An OpenAI-style tool call: `{id, function: {name, arguments}, …}`; the
/// arguments string is parsed when it is JSON and kept as a string if not.
fn tool_call(v: Value) -> Block {
    let Value::Object(mut c) = v else {
        return Block {
            kind: BlockKind::Other { value: v },
            extra: Extra::new(),
        };
    };
    let Some(Value::Object(mut f)) = c.remove("function") else {
        return Block {
            kind: BlockKind::Other {
                value: Value::Object(c),
            },
            extra: Extra::new(),
        };
    };
    let name = take_string(&mut f, "name").unwrap_or_default();
    let input = match f.remove("arguments") {
        Some(Value::String(s)) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        Some(other) => other,
        None => Value::Null,
    };
    let id = take_string(&mut c, "id");
    if !f.is_empty() {
        c.insert("function".into(), Value::Object(f));
    }
    let mut b = Block::tool_call(id, name, input);
    b.extra = c;
    b
}
