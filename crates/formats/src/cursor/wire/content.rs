//! Content blocks of both Cursor stores, and the prompt wrappers Cursor puts
//! around what the user typed.

use agentlog_model::{Block, BlockKind, Extra, Message, Role};
use serde_json::Value;

/// Takes the string at `key` out of `obj`.
pub(in crate::cursor) fn take_str(obj: &mut Extra, key: &str) -> Option<String> {
    match obj.remove(key) {
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            obj.insert(key.to_string(), other);
            None
        }
        None => None,
    }
}

/// Returns the content of a tool result (a string, a list of parts, or any
/// other JSON value, kept as its JSON text).
fn result_content(v: Value) -> Vec<Block> {
    match v {
        Value::String(s) => vec![Block::text(s)],
        Value::Array(parts) => parts.into_iter().map(block).collect(),
        Value::Null => Vec::new(),
        other => {
            let mut b = Block::text(other.to_string());
            b.extra.insert("json".into(), Value::Bool(true));
            vec![b]
        }
    }
}

/// Converts one content part of either store (Anthropic-style transcript
/// blocks, or Vercel-AI-SDK-style store.db parts) into a block. Fields the
/// model has no place for stay in the block's `extra`; unknown part types
/// are kept verbatim.
pub(in crate::cursor) fn block(v: Value) -> Block {
    let Value::Object(mut obj) = v else {
        return match v {
            Value::String(s) => Block::text(s),
            other => Block {
                kind: BlockKind::Other { value: other },
                extra: Extra::new(),
            },
        };
    };
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    let kind = match ty {
        "text" if obj.get("text").is_some_and(Value::is_string) => {
            obj.remove("type");
            BlockKind::Text {
                text: take_str(&mut obj, "text").unwrap_or_default(),
            }
        }
        "thinking" | "reasoning" => {
            obj.remove("type");
            let text = take_str(&mut obj, "thinking")
                .or_else(|| take_str(&mut obj, "text"))
                .unwrap_or_default();
            BlockKind::Thinking {
                text,
                signature: take_str(&mut obj, "signature"),
                redacted: false,
            }
        }
        "redacted" | "redacted_thinking" | "redacted-reasoning" => {
            obj.remove("type");
            BlockKind::Thinking {
                text: String::new(),
                signature: None,
                redacted: true,
            }
        }
        "tool_use" | "tool_call" | "tool-call" => {
            obj.remove("type");
            let id = take_str(&mut obj, "id").or_else(|| take_str(&mut obj, "toolCallId"));
            let name = take_str(&mut obj, "name")
                .or_else(|| take_str(&mut obj, "toolName"))
                .unwrap_or_default();
            let input = obj
                .remove("input")
                .or_else(|| obj.remove("args"))
                .unwrap_or(Value::Null);
            BlockKind::ToolCall { id, name, input }
        }
        "tool_result" | "tool-result" => {
            obj.remove("type");
            let tool_call_id =
                take_str(&mut obj, "tool_use_id").or_else(|| take_str(&mut obj, "toolCallId"));
            let content = obj
                .remove("content")
                .or_else(|| obj.remove("result"))
                .or_else(|| obj.remove("output"))
                .map(result_content)
                .unwrap_or_default();
            let is_error = match obj.remove("is_error").or_else(|| obj.remove("isError")) {
                Some(Value::Bool(b)) => b,
                Some(other) => {
                    obj.insert("is_error".into(), other);
                    false
                }
                None => false,
            };
            BlockKind::ToolResult {
                tool_call_id,
                content,
                is_error,
            }
        }
        "image" => {
            obj.remove("type");
            let media_type =
                take_str(&mut obj, "mimeType").or_else(|| take_str(&mut obj, "media_type"));
            let (data, url) = match take_str(&mut obj, "image") {
                Some(s) if s.starts_with("data:") || s.contains("://") => (None, Some(s)),
                Some(s) => (Some(s), None),
                None => (take_str(&mut obj, "data"), take_str(&mut obj, "url")),
            };
            BlockKind::Image {
                media_type,
                data,
                url,
            }
        }
        _ => {
            return Block {
                kind: BlockKind::Other {
                    value: Value::Object(obj),
                },
                extra: Extra::new(),
            }
        }
    };
    Block { kind, extra: obj }
}

/// Returns the message content of a native `content` value: a bare string
/// (then `content_is_text` is set) or a list of parts.
pub(in crate::cursor) fn fill_content(msg: &mut Message, content: Option<Value>) {
    match content {
        Some(Value::String(s)) => {
            msg.content = vec![Block::text(s)];
            msg.content_is_text = true;
        }
        Some(Value::Array(parts)) => msg.content = parts.into_iter().map(block).collect(),
        Some(Value::Null) | None => {}
        Some(other) => msg.content = vec![block(other)],
    }
}

const QUERY_OPEN: &str = "<user_query>";
const QUERY_CLOSE: &str = "</user_query>";

/// Strips Cursor's prompt wrappers from a user message and marks harness
/// context as injected.
///
/// The prompt the user typed arrives as `<user_query>…</user_query>`: the
/// block keeps only what is inside; the exact text around it (the tags,
/// `<context>`, attachments) is kept in the block's `extra.wrapper`
/// (`kind`, `before`, `after`) so the line can be written back as it was. A user message made only of `<user_info>` (OS, shell,
/// workspace) or other tag-wrapped context is injected context, not a turn.
pub(in crate::cursor) fn classify_user(msg: &mut Message) {
    if msg.role != Role::User {
        return;
    }
    let mut had_query = false;
    for b in &mut msg.content {
        let BlockKind::Text { text } = &mut b.kind else {
            continue;
        };
        let Some(start) = text.find(QUERY_OPEN) else {
            continue;
        };
        let inner_start = start + QUERY_OPEN.len();
        let Some(len) = text[inner_start..].find(QUERY_CLOSE) else {
            continue;
        };
        let raw = &text[inner_start..inner_start + len];
        let lead = raw.len() - raw.trim_start().len();
        let inner = raw.trim().to_string();
        let before = text[..inner_start + lead].to_string();
        let after = text[inner_start + lead + inner.len()..].to_string();
        let mut w = Extra::new();
        w.insert("kind".into(), Value::String("user_query".into()));
        w.insert("before".into(), Value::String(before));
        w.insert("after".into(), Value::String(after));
        b.extra.insert("wrapper".into(), Value::Object(w));
        *text = inner;
        had_query = true;
    }
    if had_query || msg.injected.is_some() {
        return;
    }
    let text = msg.text_content();
    let t = text.trim_start();
    let only_text = msg
        .content
        .iter()
        .all(|b| matches!(b.kind, BlockKind::Text { .. }));
    if t.starts_with("<user_info>") {
        msg.injected = Some("user_info".into());
    } else if only_text && t.starts_with('<') && t.trim_end().ends_with('>') {
        if let Some(tag) = t[1..].split(['>', ' ']).next().filter(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }) {
            msg.injected = Some(tag.to_string());
        }
    }
}

/// Removes every key naming an encryption key (Cursor's
/// `blobEncryptionKey`, at any depth) so it is never stored, logged or
/// exported.
pub(in crate::cursor) fn scrub_secrets(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|k, _| !is_secret_key(k));
            for child in map.values_mut() {
                scrub_secrets(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub_secrets),
        _ => {}
    }
}

fn is_secret_key(k: &str) -> bool {
    let k = k.to_ascii_lowercase();
    k.contains("encryptionkey") || k.contains("secretkey") || k == "apikey"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strips_the_query_wrapper_and_keeps_the_context() {
        let mut m = Message::text(
            Role::User,
            "<user_query>\nfix it\n</user_query>\n<context>a.rs</context>",
        );
        classify_user(&mut m);
        assert_eq!(m.text_content(), "fix it");
        let w = &m.content[0].extra["wrapper"];
        assert_eq!(w["before"], json!("<user_query>\n"));
        assert_eq!(
            w["after"],
            json!("\n</user_query>\n<context>a.rs</context>")
        );
        assert!(m.injected.is_none());
        let mut info = Message::text(Role::User, "<user_info>\nOS: linux\n</user_info>");
        classify_user(&mut info);
        assert_eq!(info.injected.as_deref(), Some("user_info"));
    }

    #[test]
    fn removes_encryption_keys_everywhere() {
        let mut v = json!({"a":1,"blobEncryptionKey":"k","n":{"BlobEncryptionKey":"k2"}});
        scrub_secrets(&mut v);
        assert_eq!(v, json!({"a":1,"n":{}}));
    }

    #[test]
    fn converts_both_part_styles() {
        let b = block(
            json!({"type":"tool-call","toolCallId":"c1","toolName":"Shell","args":{"command":"ls"}}),
        );
        assert_eq!(
            b.kind,
            BlockKind::ToolCall {
                id: Some("c1".into()),
                name: "Shell".into(),
                input: json!({"command":"ls"})
            }
        );
        let r =
            block(json!({"type":"tool_result","tool_use_id":"t1","content":"ok","is_error":true}));
        assert!(matches!(
            r.kind,
            BlockKind::ToolResult { is_error: true, .. }
        ));
        let o = block(json!({"type":"custom_block","text":"x"}));
        assert!(matches!(o.kind, BlockKind::Other { .. }));
    }
}
