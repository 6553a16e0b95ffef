//! What an agent sent: a request body of any of the four APIs, read into one
//! list of structured items, so tests can assert that a resumed session's
//! whole history reached the model as prompts, answers, thinking, tool calls
//! and tool results (not as one pasted blob of text).

use serde::Serialize;
use serde_json::Value;

/// The wire API of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// OpenAI Responses (`/v1/responses`).
    Responses,
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    Chat,
    /// Gemini `generateContent` / `streamGenerateContent`.
    Gemini,
}

impl Api {
    /// The API a request path belongs to, if it is a model call.
    pub fn from_path(path: &str) -> Option<Api> {
        let path = path.split('?').next().unwrap_or(path);
        if path.ends_with("/messages") {
            Some(Api::Anthropic)
        } else if path.ends_with("/responses") {
            Some(Api::Responses)
        } else if path.ends_with("/chat/completions") {
            Some(Api::Chat)
        } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
            Some(Api::Gemini)
        } else {
            None
        }
    }
}

/// One structured item of a conversation as the model received it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    /// System or developer instructions.
    System {
        /// The text.
        text: String,
    },
    /// A user message (a prompt, or context the agent injects as user text).
    User {
        /// The text.
        text: String,
    },
    /// Text of the model.
    Assistant {
        /// The text.
        text: String,
    },
    /// A thinking / reasoning block of the model.
    Thinking {
        /// Its visible text (summary for the Responses API; may be empty).
        text: String,
    },
    /// A tool call of the model.
    ToolCall {
        /// The tool name.
        name: String,
        /// The arguments (a JSON object, or a string for free-form tools).
        arguments: Value,
    },
    /// The result of a tool call.
    ToolResult {
        /// The output as text.
        output: String,
    },
}

impl Item {
    /// The item's text, whatever its kind (arguments as JSON text).
    pub fn text(&self) -> String {
        match self {
            Item::System { text }
            | Item::User { text }
            | Item::Assistant { text }
            | Item::Thinking { text } => text.clone(),
            Item::ToolCall { name, arguments } => format!("{name} {arguments}"),
            Item::ToolResult { output } => output.clone(),
        }
    }
}

/// The conversation in a request body of `api`.
pub fn items(api: Api, body: &Value) -> Vec<Item> {
    let mut out = Vec::new();
    match api {
        Api::Anthropic => anthropic(body, &mut out),
        Api::Responses => responses(body, &mut out),
        Api::Chat => chat(body, &mut out),
        Api::Gemini => gemini(body, &mut out),
    }
    out
}

/// Whether the request declares tools the model may call.
pub fn has_tools(body: &Value) -> bool {
    match body.get("tools") {
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        _ => false,
    }
}

/// The latest prompt (text of the last user item) and how many rounds of tool
/// results follow it.
pub fn prompt_and_step(items: &[Item]) -> (String, usize) {
    let last_user = items.iter().rposition(|i| matches!(i, Item::User { .. }));
    let (prompt, rest) = match last_user {
        Some(i) => (items[i].text(), &items[i + 1..]),
        None => (String::new(), items),
    };
    let mut rounds = 0;
    let mut in_results = false;
    for item in rest {
        let is_result = matches!(item, Item::ToolResult { .. });
        if is_result && !in_results {
            rounds += 1;
        }
        in_results = is_result;
    }
    (prompt, rounds)
}

fn str_of(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// Text of a content value that is a string or an array of text blocks.
fn flat_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => o
                    .get("text")
                    .or_else(|| o.get("output"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn system_text(v: Option<&Value>, out: &mut Vec<Item>) {
    let text = flat_text(v);
    if !text.is_empty() {
        out.push(Item::System { text });
    }
}

fn anthropic(body: &Value, out: &mut Vec<Item>) {
    system_text(body.get("system"), out);
    for msg in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let user = msg.get("role").and_then(Value::as_str) == Some("user");
        let content = msg.get("content");
        if let Some(Value::String(s)) = content {
            out.push(if user {
                Item::User { text: s.clone() }
            } else {
                Item::Assistant { text: s.clone() }
            });
            continue;
        }
        let blocks = content
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        // Text beside tool results (reminders the agent adds) is not a prompt.
        let carries_results = blocks
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
        for b in &blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = str_of(b.get("text"));
                    if carries_results {
                        out.push(Item::System { text });
                    } else if user {
                        out.push(Item::User { text });
                    } else {
                        out.push(Item::Assistant { text });
                    }
                }
                Some("thinking") => out.push(Item::Thinking {
                    text: str_of(b.get("thinking")),
                }),
                Some("redacted_thinking") => out.push(Item::Thinking {
                    text: String::new(),
                }),
                Some("tool_use") | Some("server_tool_use") => out.push(Item::ToolCall {
                    name: str_of(b.get("name")),
                    arguments: b.get("input").cloned().unwrap_or(Value::Null),
                }),
                Some("tool_result") => out.push(Item::ToolResult {
                    output: flat_text(b.get("content")),
                }),
                _ => {}
            }
        }
    }
}

fn arguments_value(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

fn responses(body: &Value, out: &mut Vec<Item>) {
    system_text(body.get("instructions"), out);
    let input = match body.get("input") {
        Some(Value::String(s)) => {
            out.push(Item::User { text: s.clone() });
            return;
        }
        Some(Value::Array(a)) => a,
        _ => return,
    };
    for it in input {
        let ty = it.get("type").and_then(Value::as_str).unwrap_or("message");
        match ty {
            "message" => {
                let text = flat_text(it.get("content"));
                match it.get("role").and_then(Value::as_str) {
                    Some("user") => out.push(Item::User { text }),
                    Some("assistant") => out.push(Item::Assistant { text }),
                    _ => out.push(Item::System { text }),
                }
            }
            "reasoning" => {
                let mut text = flat_text(it.get("summary"));
                if text.is_empty() {
                    text = flat_text(it.get("content"));
                }
                out.push(Item::Thinking { text });
            }
            "function_call" => out.push(Item::ToolCall {
                name: str_of(it.get("name")),
                arguments: arguments_value(it.get("arguments")),
            }),
            "custom_tool_call" => out.push(Item::ToolCall {
                name: str_of(it.get("name")),
                arguments: Value::String(str_of(it.get("input"))),
            }),
            "local_shell_call" => out.push(Item::ToolCall {
                name: "local_shell".to_owned(),
                arguments: it.get("action").cloned().unwrap_or(Value::Null),
            }),
            "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => out
                .push(Item::ToolResult {
                    output: flat_text(it.get("output")),
                }),
            _ => {}
        }
    }
}

fn chat(body: &Value, out: &mut Vec<Item>) {
    for msg in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let text = flat_text(msg.get("content"));
        match msg.get("role").and_then(Value::as_str) {
            Some("user") => out.push(Item::User { text }),
            Some("assistant") => {
                for key in ["reasoning_content", "reasoning", "thinking"] {
                    if let Some(Value::String(t)) = msg.get(key) {
                        out.push(Item::Thinking { text: t.clone() });
                    }
                }
                if !text.is_empty() {
                    out.push(Item::Assistant { text });
                }
                for call in msg
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let f = call.get("function");
                    out.push(Item::ToolCall {
                        name: str_of(f.and_then(|f| f.get("name"))),
                        arguments: arguments_value(f.and_then(|f| f.get("arguments"))),
                    });
                }
            }
            Some("tool") | Some("function") => out.push(Item::ToolResult { output: text }),
            _ => out.push(Item::System { text }),
        }
    }
}

fn gemini(body: &Value, out: &mut Vec<Item>) {
    if let Some(si) = body.get("systemInstruction") {
        system_text(si.get("parts"), out);
    }
    for content in body
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let model = content.get("role").and_then(Value::as_str) == Some("model");
        for p in content
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(fc) = p.get("functionCall") {
                out.push(Item::ToolCall {
                    name: str_of(fc.get("name")),
                    arguments: fc.get("args").cloned().unwrap_or(Value::Null),
                });
            } else if let Some(fr) = p.get("functionResponse") {
                let resp = fr.get("response");
                let output = match resp.and_then(|r| r.get("output")) {
                    Some(Value::String(s)) => s.clone(),
                    _ => resp.map(Value::to_string).unwrap_or_default(),
                };
                out.push(Item::ToolResult { output });
            } else if let Some(t) = p.get("text").and_then(Value::as_str) {
                let text = t.to_owned();
                if p.get("thought").and_then(Value::as_bool) == Some(true) {
                    out.push(Item::Thinking { text });
                } else if model {
                    out.push(Item::Assistant { text });
                } else {
                    out.push(Item::User { text });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_api_reads_the_same_conversation() {
        let anthropic_body = json!({"system": "sys", "messages": [
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"},
                {"type": "text", "text": "<system-reminder>x</system-reminder>"}]},
        ]});
        let chat_body = json!({"messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "list files"},
            {"role": "assistant", "content": null, "reasoning_content": "hm",
             "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}}]},
            {"role": "tool", "tool_call_id": "t1", "content": "a.txt"},
        ]});
        let responses_body = json!({"instructions": "sys", "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]},
            {"type": "function_call", "name": "Bash", "arguments": "{\"command\":\"ls\"}", "call_id": "t1"},
            {"type": "function_call_output", "call_id": "t1", "output": "a.txt"},
        ]});
        let gemini_body = json!({"systemInstruction": {"parts": [{"text": "sys"}]}, "contents": [
            {"role": "user", "parts": [{"text": "list files"}]},
            {"role": "model", "parts": [{"text": "hm", "thought": true}, {"functionCall": {"name": "Bash", "args": {"command": "ls"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "Bash", "response": {"output": "a.txt"}}}]},
        ]});
        for (api, body) in [
            (Api::Anthropic, anthropic_body),
            (Api::Chat, chat_body),
            (Api::Responses, responses_body),
            (Api::Gemini, gemini_body),
        ] {
            let items = items(api, &body);
            assert_eq!(items[0], Item::System { text: "sys".into() }, "{api:?}");
            assert_eq!(
                items[1],
                Item::User {
                    text: "list files".into()
                },
                "{api:?}"
            );
            assert_eq!(items[2], Item::Thinking { text: "hm".into() }, "{api:?}");
            assert_eq!(
                items[3],
                Item::ToolCall {
                    name: "Bash".into(),
                    arguments: json!({"command": "ls"})
                },
                "{api:?}"
            );
            assert_eq!(
                items[4],
                Item::ToolResult {
                    output: "a.txt".into()
                },
                "{api:?}"
            );
            assert_eq!(
                prompt_and_step(&items),
                ("list files".to_owned(), 1),
                "{api:?}"
            );
        }
    }
}
