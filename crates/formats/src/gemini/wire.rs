//! Conversions between Gemini `MessageRecord`s and model messages.
//!
//! Reading keeps every record field the model has no place for in
//! `Message::extra` (the record `type` and the raw `tokens` included) and
//! each tool call's fields beside `id`, `name` and `args` in its block's
//! extras, so [`message_record`] in native mode gives the record back.

use agentlog_model::{Block, BlockKind, Extra, Message, Role, Timestamp, Usage};
use serde_json::{json, Map, Value};

/// Key in `Message::extra` marking a message that came from a `$set.messages`
/// checkpoint (the checkpoint line itself is written back, not the message).
pub(super) const CHECKPOINT: &str = "$checkpoint";
/// Event type of an earlier version of a record that a `$set` checkpoint
/// holds twice: read, never written as a line of its own.
pub(super) const SUPERSEDED_IN_CHECKPOINT: &str = "superseded-in-checkpoint";
/// Key in `Block::extra` marking a tool-result block derived from the
/// `result` of the tool call before it.
const DERIVED: &str = "derived";
/// Key in `Block::extra` holding a raw Gemini API part (`text` with
/// `thought`, `functionCall`, `functionResponse`) as the CLI stored it in a
/// message's `content` (it does so in the `$set` history of a resumed
/// session); native writing gives the part back verbatim.
const RAW_PART: &str = "$raw_part";

/// Which kind of message a user text is, when the CLI injected it.
fn injected_kind(text: &str) -> Option<&'static str> {
    let t = text.trim_start();
    if t.starts_with("<session_context>") {
        Some("session_context")
    } else if t.starts_with("System: Please continue.") {
        Some("continuation")
    } else {
        None
    }
}

/// Returns the model usage of a `tokens` object.
///
/// Gemini's `input` (promptTokenCount) includes the `cached` tokens and
/// `output` (candidatesTokenCount) excludes the `thoughts` tokens, so:
/// `input = input - cached + tool`, `cache_read = cached`,
/// `output = output + thoughts`, `reasoning = thoughts`, `total = total`.
pub(super) fn tokens_usage(t: &Value) -> Option<Usage> {
    let o = t.as_object()?;
    let n = |k: &str| o.get(k).and_then(Value::as_u64).unwrap_or(0);
    Some(Usage {
        input: n("input").saturating_sub(n("cached")) + n("tool"),
        output: n("output") + n("thoughts"),
        cache_read: n("cached"),
        reasoning: n("thoughts"),
        total: o.get("total").and_then(Value::as_u64),
        ..Usage::default()
    })
}

/// Returns the `tokens` object for a usage (the inverse of [`tokens_usage`]
/// with `tool` folded into `input`).
pub(super) fn usage_tokens(u: &Usage) -> Value {
    let input = u.input + u.cache_read;
    let output = u.output.saturating_sub(u.reasoning);
    json!({
        "input": input,
        "output": output,
        "cached": u.cache_read,
        "thoughts": u.reasoning,
        "tool": 0,
        "total": u.total.unwrap_or(input + u.output),
    })
}

fn role_of(kind: &str) -> Role {
    match kind {
        "user" => Role::User,
        "gemini" => Role::Assistant,
        "info" | "error" | "warning" => Role::System,
        other => Role::Custom(other.to_string()),
    }
}

/// Returns the record id of a message read from Gemini.
pub(super) fn record_id(m: &Message) -> Option<&str> {
    m.extra.get("id").and_then(Value::as_str)
}

/// Returns the message and timestamp of a record (an object with a string
/// `id`), or `None` when it is not one.
pub(super) fn record_message(rec: &Map<String, Value>) -> Option<(Message, Option<Timestamp>)> {
    // The record `id` stays in the extras (read it with [`record_id`]):
    // `Message::id` would collide with the entry id when the model is
    // serialized.
    let mut rest = rec.clone();
    if !rest.get("id").is_some_and(Value::is_string) {
        return None;
    }
    let role = match rest.get("type") {
        Some(Value::String(k)) => role_of(k),
        _ => Role::Custom("unknown".into()),
    };
    let ts = rest.get("timestamp").and_then(Timestamp::from_json);
    if ts.is_some() {
        rest.remove("timestamp");
    }
    // A history Gemini CLI rewrote (`$set` of raw API parts) repeats the
    // thoughts and tool calls of a model turn in `content`: those parts stay
    // in the record's extras, written back as they were, and are read once.
    let repeated = matches!(rest.get("content"), Some(Value::Array(parts))
        if raw_parts_repeated(parts, &rest));
    let mut m = Message::new(role.clone());
    // Each part is moved out of `rest` (not copied: a long chat's read
    // copied every message's content and tool calls twice), in the order
    // and on the conditions the fields were always removed in.
    if matches!(rest.get("thoughts"), Some(Value::Array(t)) if !t.is_empty()) {
        if let Some(Value::Array(thoughts)) = rest.remove("thoughts") {
            for t in thoughts {
                m.content.push(thought_block(t)?);
            }
        }
    }
    let content = match rest.get("content") {
        _ if repeated => false,
        Some(Value::String(_)) => true,
        Some(Value::Array(parts)) => !parts.is_empty(),
        _ => false,
    };
    if content {
        match rest.remove("content") {
            Some(Value::String(s)) => {
                m.content_is_text = true;
                if !s.is_empty() {
                    m.content.push(Block::text(s));
                }
            }
            Some(Value::Array(parts)) => m.content.extend(parts.into_iter().map(part_block)),
            _ => {}
        }
    }
    if matches!(rest.get("toolCalls"), Some(Value::Array(c)) if !c.is_empty()) {
        if let Some(Value::Array(calls)) = rest.remove("toolCalls") {
            for c in calls {
                let (call, result) = tool_call_blocks(c)?;
                m.content.push(call);
                m.content.extend(result);
            }
        }
    }
    if rest.get("model").is_some_and(Value::is_string) {
        if let Some(Value::String(model)) = rest.remove("model") {
            m.model = Some(model);
        }
    }
    m.usage = rest.get("tokens").and_then(tokens_usage);
    if role == Role::User {
        m.injected = injected_kind(&m.text_content()).map(str::to_string);
    }
    m.extra = rest;
    Some((m, ts))
}

/// True when every part of `parts` is a raw thought or function call that
/// the record's `thoughts` or `toolCalls` also hold (and there is one).
fn raw_parts_repeated(parts: &[Value], rec: &Map<String, Value>) -> bool {
    let thoughts: Vec<&str> = match rec.get("thoughts") {
        Some(Value::Array(t)) => t
            .iter()
            .filter_map(|t| t.get("description").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    };
    let calls: Vec<&Value> = match rec.get("toolCalls") {
        Some(Value::Array(c)) => c.iter().collect(),
        _ => Vec::new(),
    };
    if parts.is_empty() || (thoughts.is_empty() && calls.is_empty()) {
        return false;
    }
    parts.iter().all(|p| {
        if p.get("thought") == Some(&Value::Bool(true)) {
            let text = p.get("text").and_then(Value::as_str).unwrap_or_default();
            thoughts
                .iter()
                .any(|d| text == *d || text.ends_with(&format!("\n\n{d}")))
        } else if let Some(fc) = p.get("functionCall") {
            calls.iter().any(|c| match fc.get("id") {
                Some(id) => c.get("id") == Some(id),
                None => c.get("name") == fc.get("name") && c.get("args") == fc.get("args"),
            })
        } else {
            false
        }
    })
}

fn thought_block(t: Value) -> Option<Block> {
    let Value::Object(mut o) = t else {
        return None;
    };
    let description = match o.remove("description") {
        Some(Value::String(d)) => d,
        Some(other) => {
            o.insert("description".into(), other);
            String::new()
        }
        None => {
            o.insert("$no_description".into(), Value::Bool(true));
            String::new()
        }
    };
    let text = match o.get("subject").and_then(Value::as_str) {
        Some(s) if !s.is_empty() => format!("**{s}**\n\n{description}"),
        _ => description,
    };
    let mut b = Block::thinking(text, None);
    b.extra = o;
    Some(b)
}

fn part_block(p: Value) -> Block {
    if let Some(b) = api_part_block(&p) {
        return b;
    }
    let Value::Object(mut o) = p else {
        return other(p);
    };
    if let Some(Value::String(_)) = o.get("text") {
        if o.get("thought") != Some(&Value::Bool(true)) {
            let text = match o.remove("text") {
                Some(Value::String(t)) => t,
                _ => String::new(),
            };
            return Block {
                kind: BlockKind::Text { text },
                extra: o,
            };
        }
    }
    if let Some(Value::Object(inline)) = o.get("inlineData") {
        let mt = inline.get("mimeType").and_then(Value::as_str);
        let data = inline.get("data").and_then(Value::as_str);
        if let (Some(mt), Some(data), 2) = (mt, data, inline.len()) {
            let kind = BlockKind::Image {
                media_type: Some(mt.to_string()),
                data: Some(data.to_string()),
                url: None,
            };
            o.remove("inlineData");
            return Block { kind, extra: o };
        }
    }
    other(Value::Object(o))
}

/// Reads a raw API part: a thought, a function call or a function response.
fn api_part_block(p: &Value) -> Option<Block> {
    let o = p.as_object()?;
    let mut b = if o.get("thought") == Some(&Value::Bool(true)) {
        Block::thinking(o.get("text")?.as_str()?.to_owned(), None)
    } else if let Some(Value::Object(fc)) = o.get("functionCall") {
        let name = fc.get("name")?.as_str()?.to_owned();
        let id = fc.get("id").and_then(Value::as_str).map(str::to_owned);
        Block::tool_call(id, name, fc.get("args").cloned().unwrap_or(Value::Null))
    } else if let Some(Value::Object(fr)) = o.get("functionResponse") {
        let id = fr.get("id").and_then(Value::as_str).map(str::to_owned);
        let resp = fr.get("response");
        let (text, failed) = match resp {
            Some(r) => match (r.get("error"), r.get("output")) {
                (Some(e), _) => (value_text(e), true),
                (None, Some(out)) => (value_text(out), false),
                (None, None) => (value_text(r), false),
            },
            None => (String::new(), false),
        };
        Block::tool_result(id, vec![Block::text(text)], failed)
    } else {
        return None;
    };
    b.extra.insert(RAW_PART.into(), p.clone());
    Some(b)
}

fn other(value: Value) -> Block {
    Block {
        kind: BlockKind::Other { value },
        extra: Extra::new(),
    }
}

/// Returns the tool-call block of a tool-call record and, when it has a
/// result, the tool-result block derived from it.
fn tool_call_blocks(c: Value) -> Option<(Block, Option<Block>)> {
    let Value::Object(mut o) = c else {
        return None;
    };
    let id = match o.remove("id") {
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            o.insert("id".into(), other);
            None
        }
        None => None,
    };
    let Some(Value::String(name)) = o.remove("name") else {
        return None;
    };
    let input = match o.remove("args") {
        Some(v) => v,
        None => {
            o.insert("$no_args".into(), Value::Bool(true));
            Value::Null
        }
    };
    let result = match o.get("result") {
        Some(Value::Array(parts)) if !parts.is_empty() => {
            let mut texts = Vec::new();
            let mut failed = o.get("status").and_then(Value::as_str) == Some("error");
            for p in parts {
                let resp = p.get("functionResponse").and_then(|f| f.get("response"));
                match resp {
                    Some(r) => {
                        if let Some(e) = r.get("error") {
                            failed = true;
                            texts.push(value_text(e));
                        } else if let Some(out) = r.get("output") {
                            texts.push(value_text(out));
                        } else {
                            texts.push(value_text(r));
                        }
                    }
                    None => texts.push(value_text(p)),
                }
            }
            let mut b = Block::tool_result(
                id.clone(),
                texts.into_iter().map(Block::text).collect(),
                failed,
            );
            b.extra.insert(DERIVED.into(), Value::Bool(true));
            Some(b)
        }
        _ => None,
    };
    let mut call = Block::tool_call(id, name, input);
    call.extra = o;
    Some((call, result))
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// Returns the record of a message read from Gemini (`native`) or of a
/// message of another format (a new record; the caller sets `id`, `type`,
/// `tokens` and tool results).
pub(super) fn message_record(m: &Message, ts: Option<&Timestamp>, native: bool) -> Value {
    let mut o = Map::new();
    if let Some(id) = m.extra.get("id").filter(|_| native) {
        o.insert("id".into(), id.clone());
    }
    if let Some(t) = ts {
        o.insert(
            "timestamp".into(),
            serde_json::to_value(t).unwrap_or(Value::Null),
        );
    }
    let kind = match &m.role {
        Role::User => "user",
        Role::Assistant => "gemini",
        Role::System | Role::Developer => "info",
        Role::Custom(r) => r.as_str(),
        Role::Tool => "user",
    };
    o.insert("type".into(), kind.into());
    let mut parts = Vec::new();
    let mut thoughts = Vec::new();
    let mut calls = Vec::new();
    for b in &m.content {
        if let Some(raw) = b.extra.get(RAW_PART).filter(|_| native) {
            parts.push(raw.clone());
            continue;
        }
        match &b.kind {
            BlockKind::Thinking { text, .. } => thoughts.push(thought_value(b, text, native)),
            BlockKind::ToolCall { id, name, input } => {
                let mut c = Map::new();
                if let Some(id) = id {
                    c.insert("id".into(), id.clone().into());
                }
                c.insert("name".into(), name.clone().into());
                let no_args = native && b.extra.get("$no_args") == Some(&Value::Bool(true));
                if !no_args {
                    c.insert("args".into(), input.clone());
                }
                if native {
                    for (k, v) in &b.extra {
                        if k != "$no_args" {
                            c.insert(k.clone(), v.clone());
                        }
                    }
                }
                calls.push(Value::Object(c));
            }
            BlockKind::ToolResult { .. } if native && b.extra.contains_key(DERIVED) => {}
            _ => {
                if let Some(p) = part_value(b, native) {
                    parts.push(p);
                }
            }
        }
    }
    if m.content_is_text {
        o.insert("content".into(), m.text_content().into());
    } else if !parts.is_empty() || !native {
        o.insert("content".into(), Value::Array(parts));
    }
    if !thoughts.is_empty() {
        o.insert("thoughts".into(), Value::Array(thoughts));
    }
    if let Some(model) = &m.model {
        o.insert("model".into(), model.clone().into());
    }
    if !calls.is_empty() {
        o.insert("toolCalls".into(), Value::Array(calls));
    }
    if native {
        for (k, v) in &m.extra {
            if k != CHECKPOINT {
                o.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(o)
}

fn thought_value(b: &Block, text: &str, native: bool) -> Value {
    let mut o = Map::new();
    let subject = b.extra.get("subject").and_then(Value::as_str).unwrap_or("");
    let prefix = format!("**{subject}**\n\n");
    let description = if !subject.is_empty() && native {
        text.strip_prefix(&prefix).unwrap_or(text)
    } else {
        text
    };
    if native {
        o.extend(b.extra.clone());
        if o.remove("$no_description").is_none() && !o.contains_key("description") {
            o.insert("description".into(), description.into());
        }
    } else {
        o.insert("subject".into(), "".into());
        o.insert("description".into(), description.into());
    }
    Value::Object(o)
}

fn part_value(b: &Block, native: bool) -> Option<Value> {
    let mut o = Map::new();
    match &b.kind {
        BlockKind::Text { text } => {
            o.insert("text".into(), text.clone().into());
        }
        BlockKind::Image {
            media_type,
            data: Some(data),
            ..
        } => {
            o.insert(
                "inlineData".into(),
                json!({"mimeType": media_type.clone().unwrap_or_else(|| "image/png".into()), "data": data}),
            );
        }
        BlockKind::Other { value } if native => return Some(value.clone()),
        BlockKind::ToolResult { content, .. } => {
            let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
            o.insert("text".into(), text.join("\n").into());
        }
        _ => return None,
    }
    if native {
        o.extend(b.extra.clone());
    }
    Some(Value::Object(o))
}

/// Drops the tool results read from a model turn's `toolCalls[].result`
/// when Gemini also recorded them as `functionResponse` parts of a user
/// record (it does both): each result is then read once, from the record
/// the API history holds. The call keeps its `result`, so the file is
/// written back as it was.
pub(super) fn drop_repeated_results(session: &mut agentlog_model::Session) {
    use agentlog_model::EntryKind;
    let answered: std::collections::HashSet<String> = session
        .entries
        .iter()
        .filter_map(|e| e.message())
        .flat_map(|m| m.content.iter())
        .filter(|b| b.extra.contains_key(RAW_PART))
        .filter_map(|b| match &b.kind {
            BlockKind::ToolResult {
                tool_call_id: Some(id),
                ..
            } => Some(id.clone()),
            _ => None,
        })
        .collect();
    if answered.is_empty() {
        return;
    }
    for e in &mut session.entries {
        if let EntryKind::Message(m) = &mut e.kind {
            m.content.retain(|b| {
                !(b.extra.contains_key(DERIVED)
                    && matches!(&b.kind, BlockKind::ToolResult { tool_call_id: Some(id), .. }
                        if answered.contains(id)))
            });
        }
    }
}

/// The fields of a Gemini CLI chat's header (the legacy JSON document's
/// top level, or the first line of a JSONL chat), as real chats of
/// 2025-10 to 0.61 hold them: another is what the drift report names.
pub(super) const KNOWN_HEADER: &[&str] = &[
    "sessionId",
    "projectHash",
    "startTime",
    "lastUpdated",
    "messages",
    "summary",
    "directories",
    "kind",
    "memoryScratchpad",
];
