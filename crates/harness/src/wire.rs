//! Scripted replies rendered in each API's wire shape, streamed (SSE) or
//! whole.

use serde_json::{json, Value};

use crate::history::Api;
use crate::script::{Part, Reply};

/// A rendered HTTP answer.
pub(crate) struct Rendered {
    pub content_type: &'static str,
    pub body: String,
}

/// Token counts the mock reports: derived from sizes, so they are
/// deterministic for a given request and reply.
#[derive(Clone, Copy)]
struct Usage {
    input: u64,
    output: u64,
    thinking: u64,
}

fn usage(request: &Value, reply: &Reply) -> Usage {
    let input = (request.to_string().len() / 4) as u64 + 1;
    let mut output = 1;
    let mut thinking = 0;
    for p in reply {
        match p {
            Part::Text(t) => output += (t.len() / 4) as u64 + 1,
            Part::Thinking(t) => thinking += (t.len() / 4) as u64 + 1,
            Part::ToolCall(c) => output += (c.arguments.to_string().len() / 4) as u64 + 1,
        }
    }
    Usage {
        input,
        output,
        thinking,
    }
}

fn sse(events: &[(Option<&str>, Value)]) -> Rendered {
    let mut body = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            body.push_str("event: ");
            body.push_str(name);
            body.push('\n');
        }
        body.push_str("data: ");
        body.push_str(&data.to_string());
        body.push_str("\n\n");
    }
    Rendered {
        content_type: "text/event-stream",
        body,
    }
}

fn whole(v: Value) -> Rendered {
    Rendered {
        content_type: "application/json",
        body: v.to_string(),
    }
}

/// Renders `reply` for a request of `api`. `n` numbers ids uniquely.
pub(crate) fn render(api: Api, path: &str, request: &Value, reply: &Reply, n: u64) -> Rendered {
    let stream = request.get("stream").and_then(Value::as_bool) == Some(true)
        || path.contains(":streamGenerateContent");
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock-model")
        .to_owned();
    let u = usage(request, reply);
    match api {
        Api::Anthropic => anthropic(&model, reply, u, n, stream),
        Api::Responses => responses(&model, reply, u, n, stream),
        Api::Chat => chat(&model, reply, u, n, stream),
        Api::Gemini => gemini(reply, u, n, stream),
    }
}

fn has_call(reply: &Reply) -> bool {
    reply.iter().any(|p| matches!(p, Part::ToolCall(_)))
}

fn anthropic(model: &str, reply: &Reply, u: Usage, n: u64, stream: bool) -> Rendered {
    let stop = if has_call(reply) {
        "tool_use"
    } else {
        "end_turn"
    };
    let blocks: Vec<Value> = reply
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            Part::Text(t) => json!({"type": "text", "text": t}),
            Part::Thinking(t) => {
                json!({"type": "thinking", "thinking": t, "signature": format!("mock-signature-{n}-{i}")})
            }
            Part::ToolCall(c) => json!({
                "type": "tool_use", "id": format!("toolu_mock_{n}_{i}"),
                "name": c.name, "input": c.arguments,
            }),
        })
        .collect();
    let usage = json!({
        "input_tokens": u.input, "output_tokens": u.output + u.thinking,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
    });
    let id = format!("msg_mock_{n}");
    if !stream {
        return whole(json!({
            "id": id, "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop, "stop_sequence": null, "usage": usage,
        }));
    }
    let mut ev: Vec<(Option<&str>, Value)> = vec![(
        Some("message_start"),
        json!({"type": "message_start", "message": {
            "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": u.input, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }}),
    )];
    for (i, b) in blocks.iter().enumerate() {
        let (start, deltas) = match b.get("type").and_then(Value::as_str) {
            Some("thinking") => (
                json!({"type": "thinking", "thinking": "", "signature": ""}),
                vec![
                    json!({"type": "thinking_delta", "thinking": b["thinking"]}),
                    json!({"type": "signature_delta", "signature": b["signature"]}),
                ],
            ),
            Some("tool_use") => (
                json!({"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}),
                vec![json!({"type": "input_json_delta", "partial_json": b["input"].to_string()})],
            ),
            _ => (
                json!({"type": "text", "text": ""}),
                vec![json!({"type": "text_delta", "text": b["text"]})],
            ),
        };
        ev.push((
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": i, "content_block": start}),
        ));
        for d in deltas {
            ev.push((
                Some("content_block_delta"),
                json!({"type": "content_block_delta", "index": i, "delta": d}),
            ));
        }
        ev.push((
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": i}),
        ));
    }
    ev.push((
        Some("message_delta"),
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": u.output + u.thinking}}),
    ));
    ev.push((Some("message_stop"), json!({"type": "message_stop"})));
    sse(&ev)
}

fn responses(model: &str, reply: &Reply, u: Usage, n: u64, stream: bool) -> Rendered {
    let items: Vec<Value> = reply
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            Part::Text(t) => json!({
                "type": "message", "id": format!("msg_mock_{n}_{i}"), "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": t, "annotations": []}],
            }),
            Part::Thinking(t) => json!({
                "type": "reasoning", "id": format!("rs_mock_{n}_{i}"),
                "summary": [{"type": "summary_text", "text": t}],
                "encrypted_content": format!("mock-encrypted-{n}-{i}"),
            }),
            Part::ToolCall(c) => {
                let arguments = match &c.arguments {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let mut call = json!({
                    "type": "function_call", "id": format!("fc_mock_{n}_{i}"),
                    "call_id": format!("call_mock_{n}_{i}"), "name": c.name,
                    "arguments": arguments, "status": "completed",
                });
                if let Some(ns) = &c.namespace {
                    call["namespace"] = json!(ns);
                }
                call
            }
        })
        .collect();
    let id = format!("resp_mock_{n}");
    let response = |status: &str, output: &[Value]| {
        json!({
            "id": id, "object": "response", "created_at": 1_700_000_000u64 + n, "status": status,
            "model": model, "output": output,
            "usage": {
                "input_tokens": u.input, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": u.output + u.thinking,
                "output_tokens_details": {"reasoning_tokens": u.thinking},
                "total_tokens": u.input + u.output + u.thinking,
            },
        })
    };
    if !stream {
        return whole(response("completed", &items));
    }
    let mut seq = 0u64;
    let mut ev: Vec<(Option<&str>, Value)> = Vec::new();
    let mut push = |name: &'static str, mut v: Value| {
        v["type"] = json!(name);
        v["sequence_number"] = json!(seq);
        seq += 1;
        ev.push((Some(name), v));
    };
    push(
        "response.created",
        json!({"response": response("in_progress", &[])}),
    );
    for (i, item) in items.iter().enumerate() {
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        push(
            "response.output_item.added",
            json!({"output_index": i, "item": added}),
        );
        match item.get("type").and_then(Value::as_str) {
            Some("message") => push(
                "response.output_text.delta",
                json!({"item_id": item["id"], "output_index": i, "content_index": 0,
                       "delta": item["content"][0]["text"]}),
            ),
            Some("reasoning") => push(
                "response.reasoning_summary_text.delta",
                json!({"item_id": item["id"], "output_index": i, "summary_index": 0,
                       "delta": item["summary"][0]["text"]}),
            ),
            _ => push(
                "response.function_call_arguments.delta",
                json!({"item_id": item["id"], "output_index": i, "delta": item["arguments"]}),
            ),
        }
        push(
            "response.output_item.done",
            json!({"output_index": i, "item": item}),
        );
    }
    push(
        "response.completed",
        json!({"response": response("completed", &items)}),
    );
    sse(&ev)
}

fn chat(model: &str, reply: &Reply, u: Usage, n: u64, stream: bool) -> Rendered {
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for (i, p) in reply.iter().enumerate() {
        match p {
            Part::Text(t) => content.push_str(t),
            Part::Thinking(t) => reasoning.push_str(t),
            Part::ToolCall(c) => {
                let arguments = match &c.arguments {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                calls.push(json!({
                    "index": calls.len(), "id": format!("call_mock_{n}_{i}"), "type": "function",
                    "function": {"name": c.name, "arguments": arguments},
                }));
            }
        }
    }
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let usage = json!({
        "prompt_tokens": u.input, "completion_tokens": u.output + u.thinking,
        "total_tokens": u.input + u.output + u.thinking,
        "completion_tokens_details": {"reasoning_tokens": u.thinking},
    });
    let id = format!("chatcmpl-mock-{n}");
    let created = 1_700_000_000u64 + n;
    if !stream {
        let mut message = json!({"role": "assistant", "content": if content.is_empty() { Value::Null } else { json!(content) }});
        if !reasoning.is_empty() {
            message["reasoning_content"] = json!(reasoning);
        }
        if !calls.is_empty() {
            message["tool_calls"] = json!(calls);
        }
        return whole(json!({
            "id": id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }));
    }
    let chunk = |delta: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut ev = vec![(
        None,
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
    )];
    if !reasoning.is_empty() {
        ev.push((
            None,
            chunk(json!({"reasoning_content": reasoning}), Value::Null),
        ));
    }
    if !content.is_empty() {
        ev.push((None, chunk(json!({"content": content}), Value::Null)));
    }
    for c in &calls {
        ev.push((None, chunk(json!({"tool_calls": [c]}), Value::Null)));
    }
    ev.push((None, chunk(json!({}), json!(finish))));
    ev.push((
        None,
        json!({"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
               "choices": [], "usage": usage}),
    ));
    let mut r = sse(&ev);
    r.body.push_str("data: [DONE]\n\n");
    r
}

fn gemini(reply: &Reply, u: Usage, n: u64, stream: bool) -> Rendered {
    let parts: Vec<Value> = reply
        .iter()
        .map(|p| match p {
            Part::Text(t) => json!({"text": t}),
            Part::Thinking(t) => json!({"text": t, "thought": true}),
            Part::ToolCall(c) => json!({"functionCall": {"name": c.name, "args": c.arguments}}),
        })
        .collect();
    let usage = json!({
        "promptTokenCount": u.input, "candidatesTokenCount": u.output,
        "thoughtsTokenCount": u.thinking, "totalTokenCount": u.input + u.output + u.thinking,
    });
    let candidate = |parts: &[Value], last: bool| {
        let mut c = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if last {
            c["finishReason"] = json!("STOP");
        }
        c
    };
    let id = format!("mock-response-{n}");
    if !stream {
        return whole(json!({
            "candidates": [candidate(&parts, true)], "usageMetadata": usage,
            "modelVersion": "mock-model", "responseId": id,
        }));
    }
    let mut ev = Vec::new();
    let count = parts.len().max(1);
    for i in 0..count {
        let last = i + 1 == count;
        let these: Vec<Value> = parts.get(i).cloned().into_iter().collect();
        let mut chunk = json!({"candidates": [candidate(&these, last)],
                               "modelVersion": "mock-model", "responseId": id});
        if last {
            chunk["usageMetadata"] = usage.clone();
        }
        ev.push((None, chunk));
    }
    sse(&ev)
}

/// The JSON schema a request asks its answer to follow, if any (Gemini
/// `generationConfig.responseJsonSchema`/`responseSchema`, OpenAI
/// `response_format`/`text.format`, Anthropic `output_format`).
pub(crate) fn requested_schema(request: &Value) -> Option<&Value> {
    let g = request.get("generationConfig");
    g.and_then(|g| {
        g.get("responseJsonSchema")
            .or_else(|| g.get("responseSchema"))
    })
    .or_else(|| request.pointer("/response_format/json_schema/schema"))
    .or_else(|| request.pointer("/text/format/schema"))
    .or_else(|| request.pointer("/output_format/schema"))
}

/// A small instance of a JSON schema: required properties filled with the
/// first enum value, the minimum, `false`, `""`-like placeholders.
pub(crate) fn instance_of(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let ty = schema
        .get("type")
        .and_then(|t| match t {
            Value::Array(a) => a.first().and_then(Value::as_str),
            other => other.as_str(),
        })
        .unwrap_or("object")
        .to_ascii_lowercase();
    match ty.as_str() {
        "object" => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, v) in props {
                    out.insert(k.clone(), instance_of(v));
                }
            }
            Value::Object(out)
        }
        "array" => Value::Array(Vec::new()),
        "string" => json!("mock"),
        "integer" | "number" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "boolean" => json!(false),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::script::{text, thinking, tool_call};

    fn reply() -> Reply {
        vec![
            thinking("hm"),
            text("calling"),
            tool_call("Bash", json!({"command": "ls"})),
        ]
    }

    fn events(body: &str) -> Vec<Value> {
        body.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| *d != "[DONE]")
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[test]
    fn anthropic_stream_carries_every_block() {
        let r = render(
            Api::Anthropic,
            "/v1/messages",
            &json!({"stream": true}),
            &reply(),
            3,
        );
        let ev = events(&r.body);
        assert_eq!(ev[0]["type"], "message_start");
        let starts: Vec<&str> = ev
            .iter()
            .filter(|e| e["type"] == "content_block_start")
            .map(|e| e["content_block"]["type"].as_str().unwrap())
            .collect();
        assert_eq!(starts, ["thinking", "text", "tool_use"]);
        assert!(r
            .body
            .contains("\"partial_json\":\"{\\\"command\\\":\\\"ls\\\"}\""));
        assert_eq!(ev[ev.len() - 2]["delta"]["stop_reason"], "tool_use");
    }

    #[test]
    fn responses_stream_ends_with_completed_and_full_output() {
        let r = render(
            Api::Responses,
            "/v1/responses",
            &json!({"stream": true}),
            &reply(),
            1,
        );
        let ev = events(&r.body);
        let last = ev.last().unwrap();
        assert_eq!(last["type"], "response.completed");
        let kinds: Vec<&str> = last["response"]["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["reasoning", "message", "function_call"]);
        assert_eq!(
            last["response"]["output"][2]["arguments"],
            "{\"command\":\"ls\"}"
        );
    }

    #[test]
    fn a_namespaced_call_names_its_namespace() {
        let reply = vec![crate::script::namespaced_tool_call(
            "multi_agent_v1",
            "spawn_agent",
            json!({"message": "go"}),
        )];
        let r = render(Api::Responses, "/v1/responses", &json!({}), &reply, 1);
        let v: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(v["output"][0]["name"], "spawn_agent");
        assert_eq!(v["output"][0]["namespace"], "multi_agent_v1");
        let plain = render(
            Api::Responses,
            "/v1/responses",
            &json!({}),
            &reply_plain(),
            1,
        );
        let v: Value = serde_json::from_str(&plain.body).unwrap();
        assert!(v["output"][0].get("namespace").is_none());
    }

    fn reply_plain() -> Reply {
        vec![crate::script::tool_call("ls", json!({}))]
    }

    #[test]
    fn chat_and_gemini_shapes() {
        let r = render(Api::Chat, "/v1/chat/completions", &json!({}), &reply(), 1);
        let v: Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(v["choices"][0]["message"]["reasoning_content"], "hm");
        let r = render(
            Api::Chat,
            "/v1/chat/completions",
            &json!({"stream": true}),
            &reply(),
            1,
        );
        assert!(r.body.ends_with("data: [DONE]\n\n"));
        let r = render(
            Api::Gemini,
            "/v1beta/models/m:streamGenerateContent",
            &json!({}),
            &reply(),
            1,
        );
        let ev = events(&r.body);
        assert_eq!(ev.len(), 3);
        assert_eq!(
            ev[0]["candidates"][0]["content"]["parts"][0]["thought"],
            true
        );
        assert_eq!(
            ev[2]["candidates"][0]["content"]["parts"][0]["functionCall"]["name"],
            "Bash"
        );
        assert_eq!(ev[2]["candidates"][0]["finishReason"], "STOP");
    }

    #[test]
    fn structured_side_requests_get_a_schema_instance() {
        let req = json!({"generationConfig": {"responseJsonSchema": {"type": "object",
            "properties": {"score": {"type": "integer", "minimum": 1}, "pick": {"type": "string", "enum": ["flash", "pro"]}}}}});
        let schema = requested_schema(&req).unwrap();
        assert_eq!(instance_of(schema), json!({"score": 1, "pick": "flash"}));
        assert!(requested_schema(&json!({"model": "m"})).is_none());
    }
}
