//! Conversions between Codex Responses-API items (`response_item` payloads
//! and the two conversational `event_msg` payloads) and model messages.
//!
//! Reading keeps every payload field the model has no place for in
//! `Message::extra` (the payload `type` included) and in `Block::extra`, so
//! [`message_items`] in native mode rebuilds the payload exactly. The reader
//! checks that on every line and keeps the line verbatim when it does not
//! hold.

use agentlog_model::{Block, BlockKind, Extra, Message, Role};
use serde_json::{Map, Value};

/// Key in `Message::extra` holding the line's envelope fields other than
/// `timestamp`, `type` and `payload` (e.g. `ordinal`). Message entries keep
/// them here rather than in `Entry::extra`, which would collide with the
/// message's own `extra` when the entry is serialized.
pub(super) const ENVELOPE: &str = "$envelope";
/// Key in `Block::extra` naming how a tool output was written.
const OUTPUT_SHAPE: &str = "output_shape";
/// Key in `Block::extra` with the fields beside `output` of a JSON-encoded
/// tool output string (`metadata` with the exit code and duration).
const JSON_FIELDS: &str = "json_fields";
/// Key in `Block::extra` marking a thinking block that stands for a
/// reasoning item with no readable summary.
const PLACEHOLDER: &str = "placeholder";
/// Key in `Block::extra` marking a tool call written without arguments.
const NO_INPUT: &str = "no_input";

/// Which kind of message a user-role text is, when the harness injected it.
pub(super) fn injected_kind(role: &Role, text: &str) -> Option<&'static str> {
    match role {
        Role::Developer => return Some("developer"),
        Role::System => return Some("system"),
        Role::User => {}
        _ => return None,
    }
    let t = text.trim_start();
    const MARKERS: [(&str, &str); 7] = [
        ("<environment_context>", "environment_context"),
        ("<user_instructions>", "user_instructions"),
        ("# AGENTS.md instructions", "agents_md"),
        ("<INSTRUCTIONS>", "user_instructions"),
        ("<turn_aborted>", "turn_aborted"),
        ("<subagent_notification>", "subagent_notification"),
        ("<user_shell_command>", "user_shell_command"),
    ];
    MARKERS
        .iter()
        .find(|(m, _)| t.starts_with(m))
        .map(|(_, kind)| *kind)
}

fn default_text_type(role: &Role) -> &'static str {
    if *role == Role::Assistant {
        "output_text"
    } else {
        "input_text"
    }
}

/// Returns the model message for a `response_item` payload, or `None` when
/// the item is not conversation (ghost snapshots, tool search, …).
pub(super) fn item_to_message(payload: &Map<String, Value>) -> Option<Message> {
    // The payload `id` stays in the extras: `Message::id` would collide with
    // the entry id when the model is serialized.
    let mut rest = payload.clone();
    let kind = match payload.get("type") {
        Some(Value::String(k)) => k.as_str(),
        // Some writers leave out the type of plain messages; `null` in the
        // extras records that.
        None if payload.get("role").is_some_and(Value::is_string) => {
            rest.insert("type".into(), Value::Null);
            "message"
        }
        _ => return None,
    };
    let mut msg = match kind {
        "message" => {
            let role = Role::parse(payload.get("role")?.as_str()?);
            rest.remove("role");
            let mut m = Message::new(role.clone());
            match rest.remove("content") {
                Some(Value::String(s)) => {
                    m.content.push(Block::text(s));
                    m.content_is_text = true;
                }
                Some(Value::Array(items)) => {
                    let def = default_text_type(&role);
                    m.content = items.into_iter().map(|i| content_block(i, def)).collect();
                }
                Some(other) => {
                    rest.insert("content".into(), other);
                }
                None => {}
            }
            let text = m.text_content();
            m.injected = injected_kind(&role, &text).map(str::to_string);
            m
        }
        "reasoning" => {
            let mut m = Message::new(Role::Assistant);
            let redacted = rest
                .get("encrypted_content")
                .is_some_and(|e| e.as_str().is_some_and(|s| !s.is_empty()));
            if let Some(Value::Array(items)) = rest.get("summary") {
                for item in items {
                    m.content
                        .push(thinking_item(item, "summary_text", redacted)?);
                }
                rest.remove("summary");
            } else {
                return None;
            }
            if let Some(Value::Array(items)) = rest.get("content") {
                for item in items {
                    m.content
                        .push(thinking_item(item, "reasoning_text", redacted)?);
                }
                rest.remove("content");
            }
            if m.content.is_empty() {
                let mut b = Block::thinking("", None);
                if let BlockKind::Thinking { redacted: r, .. } = &mut b.kind {
                    *r = redacted;
                }
                b.extra.insert(PLACEHOLDER.into(), Value::Bool(true));
                m.content.push(b);
            }
            m
        }
        "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call" => {
            let (name, input_key) = match kind {
                "function_call" => (take_string(&mut rest, "name")?, "arguments"),
                "custom_tool_call" => (take_string(&mut rest, "name")?, "input"),
                "local_shell_call" => ("local_shell".to_string(), "action"),
                _ => ("web_search".to_string(), "action"),
            };
            let absent = !rest.contains_key(input_key);
            let input = rest.remove(input_key).unwrap_or(Value::Null);
            let call_id = if kind == "web_search_call" {
                None
            } else {
                take_string(&mut rest, "call_id")
            };
            let mut m = Message::new(Role::Assistant);
            let mut b = Block::tool_call(call_id, name, input);
            if absent {
                b.extra.insert(NO_INPUT.into(), Value::Bool(true));
            }
            m.content.push(b);
            m
        }
        "function_call_output" | "custom_tool_call_output" => {
            let call_id = take_string(&mut rest, "call_id");
            let output = rest.remove("output")?;
            let mut m = Message::new(Role::Tool);
            let block = output_block(call_id.clone(), output);
            if let BlockKind::ToolResult { is_error, .. } = &block.kind {
                m.is_error = is_error.then_some(true);
            }
            m.tool_call_id = call_id;
            m.content.push(block);
            m
        }
        _ => return None,
    };
    msg.extra = rest;
    Some(msg)
}

/// Returns the model message for an `event_msg` `user_message` or
/// `agent_message` payload.
pub(super) fn event_to_message(payload: &Map<String, Value>) -> Option<Message> {
    let kind = payload.get("type")?.as_str()?;
    let role = match kind {
        "user_message" => Role::User,
        "agent_message" => Role::Assistant,
        _ => return None,
    };
    let mut rest = payload.clone();
    let text = take_string(&mut rest, "message")?;
    let mut m = Message::text(role.clone(), text);
    m.injected = injected_kind(&role, &m.text_content()).map(str::to_string);
    m.extra = rest;
    Some(m)
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key) {
        Some(Value::String(_)) => match map.remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

fn thinking_item(item: &Value, default_type: &str, redacted: bool) -> Option<Block> {
    let mut rest = item.as_object()?.clone();
    let text = take_string(&mut rest, "text")?;
    if rest.get("type").and_then(Value::as_str) == Some(default_type)
        && default_type == "summary_text"
    {
        rest.remove("type");
    }
    let mut b = Block::thinking(text, None);
    if let BlockKind::Thinking { redacted: r, .. } = &mut b.kind {
        *r = redacted;
    }
    b.extra = rest;
    Some(b)
}

/// Returns the block for one content item of a message or tool output.
fn content_block(item: Value, default_type: &str) -> Block {
    let Value::Object(mut rest) = item else {
        return other(item);
    };
    let kind = rest.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "input_text" | "output_text" if rest.get("text").is_some_and(Value::is_string) => {
            if kind == default_type {
                rest.remove("type");
            }
            let text = take_string(&mut rest, "text").unwrap_or_default();
            Block {
                kind: BlockKind::Text { text },
                extra: rest,
            }
        }
        "input_image" => {
            rest.remove("type");
            let url = take_string(&mut rest, "image_url");
            Block {
                kind: BlockKind::Image {
                    media_type: None,
                    data: None,
                    url,
                },
                extra: rest,
            }
        }
        _ => other(Value::Object(rest)),
    }
}

fn other(value: Value) -> Block {
    Block {
        kind: BlockKind::Other { value },
        extra: Extra::new(),
    }
}

/// Returns the tool-result block for a `function_call_output` `output`:
/// plain text, a JSON-encoded `{"output": …, "metadata": …}` string, or
/// content items (one object or an array).
fn output_block(call_id: Option<String>, output: Value) -> Block {
    let mut extra = Extra::new();
    let (content, is_error) = match output {
        Value::String(s) => match json_encoded_output(&s) {
            Some((text, fields, is_error)) => {
                extra.insert(OUTPUT_SHAPE.into(), "json".into());
                extra.insert(JSON_FIELDS.into(), Value::Object(fields));
                (vec![Block::text(text)], is_error)
            }
            None => (vec![Block::text(s)], false),
        },
        Value::Array(items) => {
            extra.insert(OUTPUT_SHAPE.into(), "array".into());
            let blocks = items
                .into_iter()
                .map(|i| content_block(i, "input_text"))
                .collect();
            (blocks, false)
        }
        other => {
            extra.insert(OUTPUT_SHAPE.into(), "object".into());
            (vec![content_block(other, "input_text")], false)
        }
    };
    let mut b = Block::tool_result(call_id, content, is_error);
    b.extra = extra;
    b
}

/// Splits a JSON-encoded tool output into its text, its other fields and
/// whether the exit code says it failed, when writing it back gives the
/// same string.
fn json_encoded_output(s: &str) -> Option<(String, Map<String, Value>, bool)> {
    if !s.starts_with('{') {
        return None;
    }
    let Ok(Value::Object(mut obj)) = serde_json::from_str::<Value>(s) else {
        return None;
    };
    let text = take_string(&mut obj, "output")?;
    let exit = obj
        .get("metadata")
        .and_then(|m| m.get("exit_code"))
        .and_then(Value::as_i64);
    let mut check = Map::new();
    check.insert("output".into(), Value::String(text.clone()));
    check.extend(obj.clone());
    if serde_json::to_string(&Value::Object(check)).ok()? != s {
        return None;
    }
    Some((text, obj, exit.is_some_and(|c| c != 0)))
}

/// One line a message becomes: the envelope `type` and the payload.
pub(super) type Item = (&'static str, Value);

/// Returns the Codex items `msg` becomes. In native mode (`native`, for
/// sessions read from Codex) the payload `type` and every field kept in the
/// extras are written back; otherwise the extras of the foreign format are
/// ignored and mixed messages are split into one item per kind.
pub(super) fn message_items(msg: &Message, native: bool) -> Vec<Item> {
    if native {
        let item = match msg.extra.get("type") {
            Some(Value::String(kind)) => native_item(msg, kind),
            Some(Value::Null) => native_item(msg, "message").map(|(env, mut v)| {
                if let Some(o) = v.as_object_mut() {
                    o.remove("type");
                }
                (env, v)
            }),
            _ => None,
        };
        if let Some(item) = item {
            return vec![item];
        }
    }
    split_items(msg, native)
}

fn merged(mut obj: Map<String, Value>, extra: &Extra, native: bool) -> Value {
    if native {
        for (k, v) in extra {
            if k != "type" && k != ENVELOPE {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(obj)
}

fn start(kind: &str, msg: &Message, native: bool) -> Map<String, Value> {
    let mut obj = Map::new();
    obj.insert("type".into(), kind.into());
    if native {
        if let Some(id) = msg.extra.get("id") {
            obj.insert("id".into(), id.clone());
        }
    }
    obj
}

fn native_item(msg: &Message, kind: &str) -> Option<Item> {
    let native = true;
    let mut obj = start(kind, msg, native);
    match kind {
        "user_message" | "agent_message" => {
            obj.remove("id");
            obj.insert("message".into(), msg.text_content().into());
            return Some(("event_msg", merged(obj, &msg.extra, native)));
        }
        "message" => {
            obj.insert("role".into(), msg.role.as_str().into());
            if msg.content_is_text {
                obj.insert("content".into(), msg.text_content().into());
            } else if !msg.content.is_empty() {
                obj.insert("content".into(), content_items(msg, native)?);
            }
        }
        "reasoning" => reasoning_fields(&mut obj, &msg.content, native),
        "function_call" | "custom_tool_call" | "local_shell_call" | "web_search_call" => {
            let [b] = msg.content.as_slice() else {
                return None;
            };
            tool_call_fields(&mut obj, kind, b)?;
        }
        "function_call_output" | "custom_tool_call_output" => {
            let [b] = msg.content.as_slice() else {
                return None;
            };
            let BlockKind::ToolResult { tool_call_id, .. } = &b.kind else {
                return None;
            };
            if let Some(id) = tool_call_id {
                obj.insert("call_id".into(), id.clone().into());
            }
            obj.insert("output".into(), output_value(b, native));
        }
        _ => return None,
    }
    Some(("response_item", merged(obj, &msg.extra, native)))
}

fn content_items(msg: &Message, native: bool) -> Option<Value> {
    let def = default_text_type(&msg.role);
    let mut items = Vec::with_capacity(msg.content.len());
    for b in &msg.content {
        items.push(block_item(b, def, native)?);
    }
    Some(Value::Array(items))
}

/// Returns the content item for a text, image or opaque block.
fn block_item(b: &Block, default_type: &str, native: bool) -> Option<Value> {
    let mut obj = Map::new();
    match &b.kind {
        BlockKind::Text { text } => {
            obj.insert("type".into(), default_type.into());
            obj.insert("text".into(), text.clone().into());
        }
        BlockKind::Image {
            media_type,
            data,
            url,
        } => {
            obj.insert("type".into(), "input_image".into());
            let url = match (url, data) {
                (Some(u), _) => Some(u.clone()),
                (None, Some(d)) => Some(format!(
                    "data:{};base64,{d}",
                    media_type.as_deref().unwrap_or("image/png")
                )),
                _ => None,
            };
            if let Some(u) = url {
                obj.insert("image_url".into(), u.into());
            }
        }
        BlockKind::Other { value } if native => return Some(value.clone()),
        _ => return None,
    }
    if native {
        for (k, v) in &b.extra {
            obj.insert(k.clone(), v.clone());
        }
    }
    Some(Value::Object(obj))
}

fn reasoning_fields(obj: &mut Map<String, Value>, blocks: &[Block], native: bool) {
    let mut summary = Vec::new();
    let mut content = Vec::new();
    for b in blocks {
        let BlockKind::Thinking { text, .. } = &b.kind else {
            continue;
        };
        if native && b.extra.get(PLACEHOLDER) == Some(&Value::Bool(true)) {
            continue;
        }
        let is_content =
            native && b.extra.get("type").and_then(Value::as_str) == Some("reasoning_text");
        let mut item = Map::new();
        item.insert(
            "type".into(),
            if is_content {
                "reasoning_text"
            } else {
                "summary_text"
            }
            .into(),
        );
        item.insert("text".into(), text.clone().into());
        if native {
            for (k, v) in &b.extra {
                item.insert(k.clone(), v.clone());
            }
        }
        if is_content {
            content.push(Value::Object(item));
        } else if !text.is_empty() || native {
            summary.push(Value::Object(item));
        }
    }
    obj.insert("summary".into(), Value::Array(summary));
    if !content.is_empty() {
        obj.insert("content".into(), Value::Array(content));
    } else if !native {
        obj.insert("content".into(), Value::Null);
        obj.insert("encrypted_content".into(), Value::Null);
    }
}

fn tool_call_fields(obj: &mut Map<String, Value>, kind: &str, b: &Block) -> Option<()> {
    let BlockKind::ToolCall { id, name, input } = &b.kind else {
        return None;
    };
    match kind {
        "function_call" | "custom_tool_call" => {
            obj.insert("name".into(), name.clone().into());
            let key = if kind == "function_call" {
                "arguments"
            } else {
                "input"
            };
            if b.extra.get(NO_INPUT) != Some(&Value::Bool(true)) {
                obj.insert(key.into(), input.clone());
            }
        }
        _ => {
            obj.insert("action".into(), input.clone());
        }
    }
    if kind != "web_search_call" {
        if let Some(id) = id {
            obj.insert("call_id".into(), id.clone().into());
        }
    }
    Some(())
}

/// Returns the `output` value of a tool-result block.
fn output_value(b: &Block, native: bool) -> Value {
    let BlockKind::ToolResult { content, .. } = &b.kind else {
        return Value::Null;
    };
    let shape = if native {
        b.extra.get(OUTPUT_SHAPE).and_then(Value::as_str)
    } else {
        None
    };
    match shape {
        Some("json") => {
            let mut obj = Map::new();
            let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
            obj.insert("output".into(), text.join("\n").into());
            if let Some(Value::Object(fields)) = b.extra.get(JSON_FIELDS) {
                obj.extend(fields.clone());
            }
            Value::String(serde_json::to_string(&Value::Object(obj)).unwrap_or_default())
        }
        Some("array") => Value::Array(
            content
                .iter()
                .filter_map(|c| block_item(c, "input_text", native))
                .collect(),
        ),
        Some("object") => content
            .first()
            .and_then(|c| block_item(c, "input_text", native))
            .unwrap_or(Value::Null),
        _ => {
            let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
            Value::String(text.join("\n"))
        }
    }
}

/// Splits a message into items, one per run of blocks of one kind.
fn split_items(msg: &Message, native: bool) -> Vec<Item> {
    if msg.role == Role::Tool
        && !msg
            .content
            .iter()
            .any(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
    {
        // A tool message carrying its output as plain content (pi, acpx).
        let mut obj = start("function_call_output", msg, false);
        obj.insert(
            "call_id".into(),
            msg.tool_call_id.clone().unwrap_or_default().into(),
        );
        obj.insert("output".into(), msg.text_content().into());
        return vec![("response_item", Value::Object(obj))];
    }
    let mut out: Vec<Item> = Vec::new();
    let mut run: Vec<&Block> = Vec::new();
    let mut run_kind = "";
    let flush = |run: &mut Vec<&Block>, kind: &str, out: &mut Vec<Item>| {
        if run.is_empty() {
            return;
        }
        let blocks: Vec<Block> = run.drain(..).cloned().collect();
        let mut part = Message::new(msg.role.clone());
        part.content = blocks;
        let mut obj = start(kind, msg, false);
        if kind == "reasoning" {
            reasoning_fields(&mut obj, &part.content, false);
        } else {
            let role = match &msg.role {
                Role::System => Role::Developer,
                r => r.clone(),
            };
            obj.insert("role".into(), role.as_str().into());
            part.role = role;
            if let Some(items) = content_items(&part, false) {
                obj.insert("content".into(), items);
            }
        }
        out.push(("response_item", Value::Object(obj)));
    };
    for b in &msg.content {
        let kind = match &b.kind {
            BlockKind::Thinking { .. } => "reasoning",
            BlockKind::Text { .. } | BlockKind::Image { .. } => "message",
            BlockKind::ToolCall { .. } => {
                flush(&mut run, run_kind, &mut out);
                let mut obj = start("function_call", msg, false);
                if let BlockKind::ToolCall { id, name, input } = &b.kind {
                    obj.insert("name".into(), name.clone().into());
                    let args = match input {
                        Value::String(s) => s.clone(),
                        v => serde_json::to_string(v).unwrap_or_default(),
                    };
                    obj.insert("arguments".into(), args.into());
                    obj.insert(
                        "call_id".into(),
                        id.clone()
                            .unwrap_or_else(|| format!("call_{}", out.len()))
                            .into(),
                    );
                }
                out.push(("response_item", Value::Object(obj)));
                continue;
            }
            BlockKind::ToolResult { tool_call_id, .. } => {
                flush(&mut run, run_kind, &mut out);
                let mut obj = start("function_call_output", msg, false);
                let id = tool_call_id.clone().or_else(|| msg.tool_call_id.clone());
                obj.insert("call_id".into(), id.unwrap_or_default().into());
                obj.insert("output".into(), output_value(b, native));
                out.push(("response_item", Value::Object(obj)));
                continue;
            }
            BlockKind::Other { .. } => continue,
        };
        if kind != run_kind {
            flush(&mut run, run_kind, &mut out);
            run_kind = kind;
        }
        run.push(b);
    }
    flush(&mut run, run_kind, &mut out);
    out
}

/// The line types (`type` of the `{timestamp, type, payload}` envelope)
/// real Codex rollouts hold, 0.1 to 0.169: another is what the drift
/// report names.
pub(super) const KNOWN_ENVELOPES: &[&str] = &[
    "session_meta",
    "turn_context",
    "response_item",
    "event_msg",
    "compacted",
    "world_state",
    "inter_agent_communication_metadata",
    "token_usage_record",
];

/// The `response_item` payload types of real rollouts (the conversation
/// itself: a new one may hold what a reader should show).
pub(super) const KNOWN_RESPONSE_ITEMS: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
    "ghost_snapshot",
    "image_generation_call",
    "tool_search_call",
    "tool_search_output",
    "agent_message",
    "compaction",
];
