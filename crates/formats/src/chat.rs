//! OpenAI-style chat messages as agents keep them in their own files (Vibe
//! 2.x's `messages.jsonl`, Kimi Code's `context.jsonl`): `role`, `content`
//! (a string or parts), `reasoning_content`, `tool_calls`, `tool_call_id`,
//! `name`, `message_id`, `injected`.

use crate::Fidelity;
use agentlog_model::{Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session};
use serde_json::{json, Map, Value};

/// Reads an OpenAI-shaped `usage` (Chat Completions, also as LiteLLM
/// passes it on): `prompt_tokens` includes the cached ones
/// (`prompt_tokens_details.cached_tokens`), `completion_tokens` the
/// reasoning (`completion_tokens_details.reasoning_tokens`).
pub(crate) fn openai_usage(u: &Value) -> agentlog_model::Usage {
    let num = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let cache_read = num("/prompt_tokens_details/cached_tokens");
    agentlog_model::Usage {
        input: num("/prompt_tokens").saturating_sub(cache_read),
        output: num("/completion_tokens"),
        cache_read,
        reasoning: num("/completion_tokens_details/reasoning_tokens"),
        total: u.get("total_tokens").and_then(Value::as_u64),
        ..agentlog_model::Usage::default()
    }
}

/// Entry extra: the message had no `message_id` (its id was made up).
pub(crate) const SYNTHETIC_ID: &str = "$synthetic_id";
/// Block extra: thinking read from `reasoning_content`, not from a part.
const REASONING_CONTENT: &str = "$reasoning_content";
/// Block extra: a `tool_calls` item that is not a call, kept as it was.
const IN_TOOL_CALLS: &str = "$in_tool_calls";
/// Block extra: a call's `arguments` string as written, when writing the
/// parsed value back would not give it.
const RAW_ARGUMENTS: &str = "$raw_arguments";
/// Block extra: a call's `arguments` was a JSON value, not a string.
const ARGS_NOT_STRING: &str = "$arguments_not_string";

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
    let native_id = take_string(&mut m, "message_id");
    let synthetic = native_id.is_none();
    let id = native_id.unwrap_or_else(|| format!("l{n}"));
    if m.get("reasoning_content").is_some_and(Value::is_string) {
        let text = take_string(&mut m, "reasoning_content").unwrap_or_default();
        let signature = take_string(&mut m, "reasoning_signature");
        let mut b = Block::thinking(text, signature);
        b.extra.insert(REASONING_CONTENT.into(), Value::Bool(true));
        msg.content.push(b);
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
            }
            msg.content_is_text = true;
        }
        Some(Value::Array(parts)) if parts.is_empty() => {
            m.insert("content".into(), Value::Array(parts));
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
    match m.remove("tool_calls") {
        Some(Value::Array(calls)) if !calls.is_empty() => {
            msg.content.extend(calls.into_iter().map(tool_call));
        }
        Some(other) => {
            m.insert("tool_calls".into(), other);
        }
        None => {}
    }
    if msg.role == Role::Tool {
        msg.tool_call_id = take_string(&mut m, "tool_call_id");
        msg.tool_name = take_string(&mut m, "name");
    }
    if m.get("injected") == Some(&Value::Bool(true)) {
        msg.injected = Some(agent.into());
    }
    msg.extra = m;
    let mut e = Entry::new(id, None, EntryKind::Message(msg));
    if synthetic {
        e.extra.insert(SYNTHETIC_ID.into(), Value::Bool(true));
    }
    e
}

/// A content part of a multimodal message.
pub(crate) fn part(v: Value) -> Block {
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
pub(crate) fn tool_call(v: Value) -> Block {
    let odd = |value: Value| Block {
        kind: BlockKind::Other { value },
        extra: [(IN_TOOL_CALLS.to_string(), Value::Bool(true))]
            .into_iter()
            .collect(),
    };
    let Value::Object(mut c) = v else {
        return odd(v);
    };
    if !c.get("function").is_some_and(Value::is_object) {
        return odd(Value::Object(c));
    }
    let Some(Value::Object(mut f)) = c.remove("function") else {
        return odd(Value::Object(c));
    };
    let name = take_string(&mut f, "name").unwrap_or_default();
    // The arguments string, parsed; kept as written when writing the parsed
    // value would not give it back.
    let mut raw = None;
    let input = match f.remove("arguments") {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
            Ok(v) => {
                let written = serde_json::to_string(&v).unwrap_or_default();
                if written != s {
                    raw = Some(s);
                }
                v
            }
            Err(_) => Value::String(s),
        },
        Some(other) => {
            raw = Some(String::new());
            other
        }
        None => Value::Null,
    };
    let id = take_string(&mut c, "id");
    if !f.is_empty() {
        c.insert("function".into(), Value::Object(f));
    }
    let mut b = Block::tool_call(id, name, input);
    b.extra = c;
    match raw {
        // Arguments that were not a string: written back as the value.
        Some(r) if r.is_empty() => {
            b.extra.insert(ARGS_NOT_STRING.into(), Value::Bool(true));
        }
        Some(r) => {
            b.extra.insert(RAW_ARGUMENTS.into(), Value::String(r));
        }
        None => {}
    }
    b
}

/// The extra fields of `extra` that came from the file (not `$` marks).
pub(crate) fn own_fields(extra: &Extra) -> Map<String, Value> {
    extra
        .iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A content part: text, thinking (Kimi's `think`), or kept as it was.
pub(crate) fn part_value(b: &Block) -> Value {
    let mut p = own_fields(&b.extra);
    match &b.kind {
        BlockKind::Text { text } => {
            p.insert("type".into(), "text".into());
            p.insert("text".into(), text.clone().into());
        }
        BlockKind::Thinking {
            text, signature, ..
        } => {
            p.insert("type".into(), "think".into());
            p.insert("think".into(), text.clone().into());
            if let Some(s) = signature {
                p.insert("encrypted".into(), s.clone().into());
            }
        }
        BlockKind::Other { value } => return value.clone(),
        _ => return Value::Null,
    }
    Value::Object(p)
}

/// A `tool_calls` item.
pub(crate) fn call_value(b: &Block) -> Value {
    let BlockKind::ToolCall { id, name, input } = &b.kind else {
        return match &b.kind {
            BlockKind::Other { value } => value.clone(),
            _ => Value::Null,
        };
    };
    let mut c = own_fields(&b.extra);
    if let Some(id) = id {
        c.insert("id".into(), id.clone().into());
    }
    let arguments = match b.extra.get(RAW_ARGUMENTS) {
        Some(raw) => raw.clone(),
        None if b.extra.contains_key(ARGS_NOT_STRING) => input.clone(),
        None => match input {
            Value::String(s) => Value::String(s.clone()),
            other => Value::String(other.to_string()),
        },
    };
    let mut f = match c.remove("function") {
        Some(Value::Object(f)) => f,
        _ => Map::new(),
    };
    f.insert("name".into(), name.clone().into());
    f.insert("arguments".into(), arguments);
    c.insert("function".into(), Value::Object(f));
    Value::Object(c)
}

/// Writes a message read by [`message_entry`] back as its line.
pub(crate) fn message_line(e: &Entry, m: &Message) -> Value {
    let mut obj = own_fields(&m.extra);
    obj.insert("role".into(), m.role.as_str().into());
    if !e.extra.contains_key(SYNTHETIC_ID) {
        obj.insert("message_id".into(), e.id.clone().into());
    }
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    for b in &m.content {
        match &b.kind {
            BlockKind::ToolCall { .. } => calls.push(call_value(b)),
            BlockKind::Other { .. } if b.extra.contains_key(IN_TOOL_CALLS) => {
                calls.push(call_value(b))
            }
            BlockKind::Thinking {
                text, signature, ..
            } if b.extra.contains_key(REASONING_CONTENT) => {
                obj.insert("reasoning_content".into(), text.clone().into());
                if let Some(s) = signature {
                    obj.insert("reasoning_signature".into(), s.clone().into());
                }
            }
            BlockKind::ToolResult { content, .. } => parts.extend(content.iter().map(part_value)),
            _ => parts.push(part_value(b)),
        }
    }
    put_content(&mut obj, m.content_is_text, parts, calls, "tool_calls");
    if let Some(id) = &m.tool_call_id {
        obj.insert("tool_call_id".into(), id.clone().into());
    }
    if let Some(name) = &m.tool_name {
        obj.insert("name".into(), name.clone().into());
    }
    Value::Object(obj)
}

/// Puts a message's `content` (one string when it was written as one,
/// else its parts) and its calls (under `calls_key`) into `obj`.
pub(crate) fn put_content(
    obj: &mut Map<String, Value>,
    content_is_text: bool,
    parts: Vec<Value>,
    calls: Vec<Value>,
    calls_key: &str,
) {
    if content_is_text {
        let text: String = parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect();
        obj.insert("content".into(), text.into());
    } else if !parts.is_empty() {
        obj.insert("content".into(), Value::Array(parts));
    }
    if !calls.is_empty() {
        obj.insert(calls_key.into(), Value::Array(calls));
    }
}

/// A tool result as a `tool` message.
fn tool_line(id: &Option<String>, content: &[Block]) -> Value {
    let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
    json!({"role": "tool", "content": text.join("\n"), "tool_call_id": id})
}

/// The text of the thinking blocks of `m`, one line apart; `None` when it
/// has none.
pub(crate) fn thinking_text(m: &Message) -> Option<String> {
    let parts: Vec<&str> = m
        .content
        .iter()
        .filter_map(|b| match &b.kind {
            BlockKind::Thinking { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// How an agent's chat messages carry the model's reasoning.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reasoning {
    /// As `{type: think, think, encrypted}` content parts (Kimi).
    ThinkParts,
    /// As the message's `reasoning_content` string, with the text as a
    /// string `content` (Vibe 2.x).
    ReasoningContent,
}

/// The active branch of a session from another agent as chat messages:
/// user text, `tool` results, answers with their reasoning and
/// `tool_calls`; what such messages cannot hold is reported in `fidelity`.
pub(crate) fn foreign_lines(
    session: &Session,
    fidelity: &mut Fidelity,
    style: Reasoning,
) -> Vec<Value> {
    let mut lines = Vec::new();
    for e in session.active_branch() {
        let EntryKind::Message(m) = &e.kind else {
            fidelity.lost(format!("{} entry", e.kind.name()), Some(&e.id));
            continue;
        };
        match m.role {
            Role::User | Role::Tool => user_lines(m, &e.id, fidelity, &mut lines),
            Role::Assistant => {
                if let Some(line) = assistant_line(m, &e.id, fidelity, style) {
                    lines.push(line);
                }
            }
            _ => fidelity.lost(format!("{} message", m.role.as_str()), Some(&e.id)),
        }
    }
    lines
}

/// A user message: its tool results as `tool` messages, its text as one
/// `user` message.
fn user_lines(m: &Message, id: &str, fidelity: &mut Fidelity, lines: &mut Vec<Value>) {
    let mut text = Vec::new();
    for b in &m.content {
        match &b.kind {
            BlockKind::ToolResult {
                tool_call_id,
                content,
                ..
            } => lines.push(tool_line(
                &tool_call_id.clone().or_else(|| m.tool_call_id.clone()),
                content,
            )),
            BlockKind::Text { text: t } => text.push(t.clone()),
            other => fidelity.lost(format!("{} block", other.name()), Some(id)),
        }
    }
    if text.is_empty() {
        return;
    }
    if m.role == Role::Tool {
        lines.push(tool_line(&m.tool_call_id, &[Block::text(text.join("\n"))]));
    } else {
        lines.push(json!({"role": "user", "content": text.join("\n")}));
    }
}

/// An answer: thinking and text (as `style` says), calls as `tool_calls`.
fn assistant_line(
    m: &Message,
    id: &str,
    fidelity: &mut Fidelity,
    style: Reasoning,
) -> Option<Value> {
    let mut parts = Vec::new();
    let mut texts = Vec::new();
    let mut reasoning = Vec::new();
    let mut calls = Vec::new();
    for b in &m.content {
        match &b.kind {
            BlockKind::Text { text } => {
                texts.push(text.clone());
                parts.push(json!({"type": "text", "text": text}));
            }
            BlockKind::Thinking {
                text, signature, ..
            } => {
                if signature.is_some() {
                    fidelity.lost("thinking signature", Some(id));
                }
                reasoning.push(text.clone());
                parts.push(json!({"type": "think", "think": text, "encrypted": null}));
            }
            BlockKind::ToolCall { id, name, input } => calls.push(call_value(&Block::tool_call(
                id.clone(),
                name.clone(),
                input.clone(),
            ))),
            other => fidelity.lost(format!("{} block", other.name()), Some(id)),
        }
    }
    if parts.is_empty() && calls.is_empty() {
        return None;
    }
    let mut line = match style {
        Reasoning::ThinkParts => json!({"role": "assistant", "content": parts}),
        Reasoning::ReasoningContent => {
            let mut l = json!({"role": "assistant", "content": texts.join("\n")});
            if !reasoning.is_empty() {
                l["reasoning_content"] = reasoning.join("\n").into();
            }
            l
        }
    };
    if !calls.is_empty() {
        for c in &mut calls {
            c["type"] = "function".into();
        }
        line["tool_calls"] = Value::Array(calls);
    }
    Some(line)
}
