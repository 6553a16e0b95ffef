//! How ACP traffic changes a session record (the seed's "ACP Mapping
//! Summary").
//!
//! - a prompt adds a `User` message with a UUID id;
//! - `agent_message_chunk` appends text to the current `Agent` message
//!   (consecutive chunks join into one `Text`), `agent_thought_chunk` the
//!   same into `Thinking`;
//! - `tool_call` / `tool_call_update` insert or update the `ToolUse` with
//!   that id and its entry in `tool_results`;
//! - `usage_update` adds token counts to the request's and the thread's
//!   usage when the update carries them;
//! - `session_info_update` sets the title and the update time;
//! - `available_commands_update`, `current_mode_update` and
//!   `config_option_update` set the `acpx` fields.

use super::record::{
    tool_use_holder, AgentMessage, Content, Opt, SessionRecord, ThreadMessage, ToolResult,
    ToolResults, ToolUse, UserMessage,
};
use serde_json::{json, Map, Value};

/// Adds a user prompt (text and other ACP content blocks) and returns the
/// new message's id.
pub fn add_prompt(record: &mut SessionRecord, id: Option<String>, prompt: &[Value]) -> String {
    let id = id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let content = prompt.iter().map(prompt_block).collect();
    record
        .thread_mut()
        .messages_mut()
        .push(ThreadMessage::User(UserMessage {
            id: id.clone(),
            content,
            extra: Default::default(),
        }));
    id
}

/// Adds a text prompt and returns the new message's id.
pub fn add_text_prompt(record: &mut SessionRecord, id: Option<String>, text: &str) -> String {
    add_prompt(record, id, &[json!({"type": "text", "text": text})])
}

fn prompt_block(b: &Value) -> Content {
    match b.get("type").and_then(Value::as_str) {
        Some("text") => Content::Text(b.get("text").and_then(Value::as_str).unwrap_or("").into()),
        Some("resource_link") | Some("resource") => {
            let uri = b
                .get("uri")
                .or_else(|| b.get("resource").and_then(|r| r.get("uri")))
                .cloned()
                .unwrap_or(Value::Null);
            Content::Other(json!({"Mention": {"uri": uri, "content": b}}))
        }
        Some("image") => Content::Other(json!({"Image": b})),
        _ => Content::Other(b.clone()),
    }
}

/// What applying an update did, in a few words (for the audit ring).
pub type Summary = String;

/// Applies one ACP `session/update` notification (its `params`, or the
/// `update` object itself) to the record. `now` is the time of the update.
pub fn apply_update(record: &mut SessionRecord, params: &Value, now: &str) -> Summary {
    let update = params.get("update").unwrap_or(params);
    let kind = update
        .get("sessionUpdate")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    match kind.as_str() {
        "agent_message_chunk" => {
            let text = chunk_text(update);
            append_text(agent(record), &text, false);
            format!("agent_message_chunk ({} chars)", text.chars().count())
        }
        "agent_thought_chunk" => {
            let text = chunk_text(update);
            append_text(agent(record), &text, true);
            format!("agent_thought_chunk ({} chars)", text.chars().count())
        }
        "user_message_chunk" => {
            let text = chunk_text(update);
            let msgs = record.thread_mut().messages_mut();
            match msgs.last_mut() {
                Some(ThreadMessage::User(u)) => match u.content.last_mut() {
                    Some(Content::Text(t)) => t.push_str(&text),
                    _ => u.content.push(Content::Text(text)),
                },
                _ => {
                    add_text_prompt(record, None, &text);
                }
            }
            "user_message_chunk".into()
        }
        "tool_call" | "tool_call_update" => {
            let id = update
                .get("toolCallId")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            upsert_tool(record, &id, update, kind == "tool_call");
            let status = update.get("status").and_then(Value::as_str).unwrap_or("");
            format!("{kind} {id} {status}").trim_end().to_string()
        }
        "usage_update" => {
            apply_usage(record, update);
            "usage_update".into()
        }
        "session_info_update" => {
            let thread = record.thread_mut();
            if let Some(title) = update.get("title") {
                thread.title = match title {
                    Value::String(s) => Opt::Set(s.clone()),
                    _ => Opt::Null,
                };
            }
            let updated = update
                .get("updatedAt")
                .and_then(Value::as_str)
                .unwrap_or(now);
            thread.updated_at = Opt::Set(updated.to_string());
            "session_info_update".into()
        }
        "available_commands_update" => {
            let names: Vec<Value> = update
                .get("availableCommands")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|c| c.get("name").cloned().unwrap_or_else(|| c.clone()))
                        .collect()
                })
                .unwrap_or_default();
            record.acpx_mut().available_commands = Opt::Set(Value::Array(names));
            "available_commands_update".into()
        }
        "current_mode_update" => {
            let mode = update
                .get("currentModeId")
                .or_else(|| update.get("modeId"))
                .cloned()
                .unwrap_or(Value::Null);
            record.acpx_mut().current_mode_id = Opt::Set(mode);
            "current_mode_update".into()
        }
        "config_option_update" => {
            let opts = update
                .get("configOptions")
                .cloned()
                .unwrap_or(Value::Array(Vec::new()));
            record.acpx_mut().config_options = Opt::Set(opts);
            "config_option_update".into()
        }
        other => format!("{other} (not mapped)"),
    }
}

fn chunk_text(update: &Value) -> String {
    let content = update.get("content");
    match content {
        Some(Value::Array(items)) => items.iter().filter_map(block_text).collect(),
        Some(c) => block_text(c).unwrap_or_default(),
        None => String::new(),
    }
}

fn block_text(c: &Value) -> Option<String> {
    match c.get("type").and_then(Value::as_str) {
        Some("text") | None => c.get("text").and_then(Value::as_str).map(str::to_string),
        Some(_) => None,
    }
}

/// Returns the current agent message, starting one when the thread does
/// not end with one.
fn agent(record: &mut SessionRecord) -> &mut AgentMessage {
    let msgs = record.thread_mut().messages_mut();
    if !matches!(msgs.last(), Some(ThreadMessage::Agent(_))) {
        msgs.push(ThreadMessage::Agent(AgentMessage {
            tool_results: Opt::Set(ToolResults::default()),
            ..AgentMessage::default()
        }));
    }
    match msgs.last_mut() {
        Some(ThreadMessage::Agent(a)) => a,
        // Pushed just above when the last message was not an agent's.
        _ => unreachable!(),
    }
}

fn append_text(a: &mut AgentMessage, text: &str, thinking: bool) {
    match (a.content.last_mut(), thinking) {
        (Some(Content::Text(t)), false) => t.push_str(text),
        (Some(Content::Thinking { text: t, .. }), true) => t.push_str(text),
        (_, false) => a.content.push(Content::Text(text.to_string())),
        (_, true) => a.content.push(Content::Thinking {
            text: text.to_string(),
            signature: Opt::Null,
            extra: Default::default(),
        }),
    }
}

/// True when an ACP tool status means the call is over.
pub fn status_is_final(status: &str) -> bool {
    let s = status.to_ascii_lowercase();
    ["complete", "done", "success", "fail", "error", "cancel"]
        .iter()
        .any(|w| s.contains(w))
}

/// True when an ACP tool status means the call failed.
pub fn status_is_error(status: &str) -> bool {
    let s = status.to_ascii_lowercase();
    s.contains("fail") || s.contains("error")
}

fn upsert_tool(record: &mut SessionRecord, id: &str, update: &Value, is_new: bool) {
    let msgs = record.thread_mut().messages_mut();
    // The agent message that already holds this tool use, else the current one.
    let holder = tool_use_holder(msgs, id).map(|(i, _)| i);
    let a = match holder {
        Some(i) => match &mut msgs[i] {
            ThreadMessage::Agent(a) => a,
            _ => return,
        },
        None => agent(record),
    };
    let name = update
        .get("title")
        .or_else(|| update.get("kind"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let raw = update.get("rawInput").cloned();
    let pos = a
        .content
        .iter()
        .position(|c| matches!(c, Content::ToolUse(t) if t.id == id));
    let tool = match pos {
        Some(p) => match &mut a.content[p] {
            Content::ToolUse(t) => t.as_mut(),
            _ => return,
        },
        None => {
            a.content.push(Content::ToolUse(Box::new(ToolUse {
                id: id.to_string(),
                name: "tool_call".into(),
                raw_input: Opt::Set(Value::String("{}".into())),
                input: Opt::Set(json!({})),
                is_input_complete: Opt::Set(Value::Bool(false)),
                thought_signature: Opt::Null,
                extra: Default::default(),
            })));
            match a.content.last_mut() {
                Some(Content::ToolUse(t)) => t.as_mut(),
                _ => return,
            }
        }
    };
    if let Some(n) = name {
        tool.name = n;
    }
    if let Some(raw) = raw {
        tool.raw_input = Opt::Set(Value::String(raw.to_string()));
        tool.input = Opt::Set(raw);
        tool.is_input_complete = Opt::Set(Value::Bool(true));
    } else if is_new {
        tool.is_input_complete = Opt::Set(Value::Bool(false));
    }
    let tool_name = tool.name.clone();
    let status = update.get("status").and_then(Value::as_str).unwrap_or("");
    let text: String = update
        .get("content")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|c| {
                    c.get("content")
                        .and_then(block_text)
                        .or_else(|| block_text(c))
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let output = update.get("rawOutput").cloned();
    if !(status_is_final(status) || output.is_some() || !text.is_empty()) {
        return;
    }
    let results = a.tool_results.get_or_insert_with(ToolResults::default);
    if results.get_mut(id).is_none() {
        results.0.push((
            id.to_string(),
            ToolResult {
                tool_use_id: id.to_string(),
                ..ToolResult::default()
            },
        ));
    }
    if let Some(r) = results.get_mut(id) {
        r.tool_name = Opt::Set(tool_name);
        r.is_error = Opt::Set(status_is_error(status));
        if !text.is_empty() || r.content.is_absent() {
            r.content = Opt::Set(json!({ "Text": text }));
        }
        if let Some(o) = output {
            r.output = Opt::Set(o);
        } else if r.output.is_absent() {
            r.output = Opt::Null;
        }
    }
}

fn apply_usage(record: &mut SessionRecord, update: &Value) {
    let pick = |keys: &[&str]| -> Option<u64> {
        keys.iter()
            .find_map(|k| update.get(*k).and_then(Value::as_u64))
    };
    let counts = [
        ("input_tokens", pick(&["inputTokens", "input_tokens"])),
        ("output_tokens", pick(&["outputTokens", "output_tokens"])),
        (
            "cache_creation_input_tokens",
            pick(&[
                "cachedWriteTokens",
                "cacheCreationInputTokens",
                "cache_creation_input_tokens",
            ]),
        ),
        (
            "cache_read_input_tokens",
            pick(&[
                "cachedReadTokens",
                "cacheReadInputTokens",
                "cache_read_input_tokens",
            ]),
        ),
    ];
    let last_user = record.messages().iter().rev().find_map(|m| match m {
        ThreadMessage::User(u) => Some(u.id.clone()),
        _ => None,
    });
    if counts.iter().all(|(_, v)| v.is_none()) {
        // Only the context window (`used`/`size`): kept as runtime state.
        let mut ctx = Map::new();
        for k in ["used", "size", "cost"] {
            if let Some(v) = update.get(k) {
                ctx.insert(k.into(), v.clone());
            }
        }
        record
            .acpx_mut()
            .extra
            .insert("context_usage".into(), Value::Object(ctx));
        return;
    }
    let thread = record.thread_mut();
    let add = |target: &mut Value| {
        if !target.is_object() {
            *target = json!({});
        }
        for (k, v) in &counts {
            let old = target.get(*k).and_then(Value::as_u64).unwrap_or(0);
            target[*k] = json!(old + v.unwrap_or(0));
        }
    };
    add(thread
        .cumulative_token_usage
        .get_or_insert_with(|| json!({})));
    if let Some(id) = last_user {
        let per = thread.request_token_usage.get_or_insert_with(Map::new);
        add(per.entry(id).or_insert_with(|| json!({})));
    }
}
