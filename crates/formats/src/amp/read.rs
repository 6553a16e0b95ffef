//! Reads an Amp thread document into a session.

use super::wire::FAILED_RUNS;
use crate::chat::take_string;
use crate::jsonl::pointer_in as at;
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{
    Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta, Timestamp,
    Usage,
};
use serde_json::{Map, Value};
use std::path::Path;

/// Reads the thread whose file `path` holds `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let doc: Value = serde_json::from_slice(bytes)
        .map_err(|e| FormatError::invalid(path, Some(e.line() as u64), format!("not JSON: {e}")))?;
    let Value::Object(mut doc) = doc else {
        return Err(FormatError::invalid(path, Some(1), "not a JSON object"));
    };
    let Some(Value::Array(messages)) = doc.remove("messages") else {
        return Err(FormatError::invalid(
            path,
            None,
            "no `messages` array: not an Amp thread",
        ));
    };
    let id = doc
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    let mut meta = SessionMeta::new(id, crate::Format::agent(&super::FORMAT));
    meta.format = Some(super::FORMAT_NAME.into());
    meta.title = doc
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .map(str::to_string);
    meta.created_at = doc
        .get("created")
        .and_then(Value::as_i64)
        .map(Timestamp::Millis);
    meta.cwd = at(&doc, "/env/initial/trees/0/uri")
        .and_then(Value::as_str)
        .and_then(path_of_uri);
    meta.agent_version = at(&doc, "/env/initial/platform/clientVersion")
        .and_then(Value::as_str)
        .map(str::to_string);
    meta.parent_session = doc
        .get("mainThreadID")
        .and_then(Value::as_str)
        .filter(|m| Some(*m) != doc.get("id").and_then(Value::as_str))
        .map(str::to_string);
    meta.format_version = doc.get("v").cloned();
    meta.extra.insert("thread".into(), Value::Object(doc));
    let mut session = Session::new(meta);
    let mut diags = Vec::new();
    for (i, m) in messages.into_iter().enumerate() {
        let n = i as u64 + 1;
        let Value::Object(m) = m else {
            diags.push(Diagnostic::warning(
                path,
                None,
                "not-an-object",
                format!("message {n} is not a JSON object; kept verbatim"),
            ));
            let e = Entry::new(
                format!("m{n}"),
                session.leaf_id.clone(),
                EntryKind::Unknown {
                    record_type: None,
                    raw: m,
                },
            );
            session.push(e);
            continue;
        };
        let mut e = entry(m, n);
        e.parent_id = session.leaf_id.clone();
        e.line = Some(n);
        session.push(e);
    }
    if let Some(model) = session
        .entries
        .iter()
        .rev()
        .filter_map(Entry::message)
        .find_map(|m| m.model.clone())
    {
        session.meta.model.model = Some(model);
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// The local path of a `file://` URI, percent-decoded.
fn path_of_uri(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let decoded = percent_encoding::percent_decode_str(rest)
        .decode_utf8()
        .ok()?;
    Some(decoded.into_owned())
}

/// One message of the thread: a message entry, or a compaction for an
/// `info` message that summarises what came before.
fn entry(mut m: Map<String, Value>, n: u64) -> Entry {
    let id = match (m.get("protocolMessageID"), m.get("messageId")) {
        (Some(Value::String(p)), _) => p.clone(),
        (_, Some(Value::Number(k))) => format!("m{k}"),
        _ => format!("m#{n}"),
    };
    let role = take_string(&mut m, "role").unwrap_or_default();
    if role == "info" {
        if let Some(summary) = summary_of(&m) {
            let kind = EntryKind::Compaction {
                summary,
                short_summary: None,
                first_kept_entry_id: None,
                tokens_before: None,
                details: Some(Value::Object(m)),
                from_extension: None,
                preserve_data: None,
            };
            return Entry::new(id, None, kind);
        }
    }
    let mut msg = Message::new(match role.as_str() {
        "info" => Role::Custom("info".into()),
        r => Role::parse(r),
    });
    if let Some(Value::Array(blocks)) = m.remove("content") {
        msg.content.extend(blocks.into_iter().map(block));
    }
    let mut timestamp = at(&m, "/meta/sentAt")
        .and_then(Value::as_i64)
        .map(Timestamp::Millis);
    if let Some(Value::Object(u)) = m.remove("usage") {
        let (usage, model, at) = usage_of(u);
        msg.usage = Some(usage);
        msg.model = model;
        timestamp = timestamp.or(at);
    }
    msg.stop_reason = at(&m, "/state/stopReason")
        .and_then(Value::as_str)
        .map(str::to_string);
    if at(&m, "/state/type").and_then(Value::as_str) == Some("error") {
        msg.is_error = Some(true);
    }
    msg.extra = m;
    let mut e = Entry::new(id, None, EntryKind::Message(msg));
    e.timestamp = timestamp;
    e
}

/// The text of a summary an `info` message holds (compaction), if any.
fn summary_of(m: &Map<String, Value>) -> Option<String> {
    let blocks = m.get("content")?.as_array()?;
    blocks.iter().find_map(|b| {
        if b.get("type")?.as_str()? != "summary" {
            return None;
        }
        let s = b.get("summary")?;
        match s.get("type")?.as_str()? {
            "message" => s.get("summary")?.as_str().map(str::to_string),
            "thread" => Some(format!(
                "continued from thread {}",
                s.get("thread")?.as_str()?
            )),
            _ => None,
        }
    })
}

/// The usage of an assistant message, its model and time; the fields not
/// mapped (the context window, the derived input total, credits) kept.
fn usage_of(mut u: Map<String, Value>) -> (Usage, Option<String>, Option<Timestamp>) {
    let mut n = |k: &str| u.remove(k).and_then(|v| v.as_u64()).unwrap_or(0);
    let usage_input = n("inputTokens");
    let output = n("outputTokens");
    let cache_read = n("cacheReadInputTokens");
    let cache_write = n("cacheCreationInputTokens");
    let model = take_string(&mut u, "model");
    let at = take_string(&mut u, "timestamp").map(Timestamp::Text);
    let usage = Usage {
        input: usage_input,
        output,
        cache_read,
        cache_write,
        extra: u,
        ..Usage::default()
    };
    (usage, model, at)
}

/// One content block.
fn block(b: Value) -> Block {
    let Value::Object(mut b) = b else {
        return Block {
            kind: BlockKind::Other { value: b },
            extra: Extra::new(),
        };
    };
    let ty = b
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut out = match ty.as_str() {
        "text" => match take_string(&mut b, "text") {
            Some(t) => Block::text(t),
            None => return other(b),
        },
        "thinking" => {
            let text = take_string(&mut b, "thinking").unwrap_or_default();
            Block::thinking(text, take_string(&mut b, "signature"))
        }
        "redacted_thinking" => Block {
            kind: BlockKind::Thinking {
                text: String::new(),
                signature: take_string(&mut b, "data"),
                redacted: true,
            },
            extra: Extra::new(),
        },
        "tool_use" | "server_tool_use" => {
            let (Some(id), Some(name)) = (take_string(&mut b, "id"), take_string(&mut b, "name"))
            else {
                return other(b);
            };
            let input = b.remove("input").unwrap_or(Value::Null);
            Block::tool_call(Some(id), name, input)
        }
        "tool_result" => {
            let call = take_string(&mut b, "toolUseID");
            let run = b.get("run").cloned().unwrap_or(Value::Null);
            let (content, is_error) = result_of(&run);
            Block::tool_result(call, content, is_error)
        }
        "image" => {
            let src = b.remove("source").unwrap_or(Value::Null);
            let kind = match src.get("type").and_then(Value::as_str) {
                Some("base64") => BlockKind::Image {
                    media_type: src
                        .get("mediaType")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    data: src.get("data").and_then(Value::as_str).map(str::to_string),
                    url: None,
                },
                Some("url") => BlockKind::Image {
                    media_type: None,
                    data: None,
                    url: src.get("url").and_then(Value::as_str).map(str::to_string),
                },
                _ => {
                    b.insert("source".into(), src);
                    return other(b);
                }
            };
            Block {
                kind,
                extra: Extra::new(),
            }
        }
        _ => return other(b),
    };
    // `type` is the block's kind (kept for `server_tool_use`, which reads
    // as a call); the rest (times, states, provider ids, the tool run) is
    // kept as written.
    if ty != "server_tool_use" {
        b.remove("type");
    }
    out.extra = b;
    out
}

fn other(b: Map<String, Value>) -> Block {
    Block {
        kind: BlockKind::Other {
            value: Value::Object(b),
        },
        extra: Extra::new(),
    }
}

/// The content of a tool run and whether it failed: the result's text (a
/// string, a shell command's `output`, text parts, an edit's summary and
/// diffs, or the result as JSON),
/// or the error's message. A shell command that exited non-zero failed
/// although Amp marks the run done.
fn result_of(run: &Value) -> (Vec<Block>, bool) {
    let status = run.get("status").and_then(Value::as_str).unwrap_or("");
    let mut failed = FAILED_RUNS.contains(&status);
    let mut content = Vec::new();
    match run.get("result") {
        Some(Value::String(s)) => content.push(Block::text(s.clone())),
        Some(Value::Object(r)) => {
            if let Some(code) = r.get("exitCode").and_then(Value::as_i64) {
                failed |= code != 0;
            }
            if let Some(out) = r.get("output").and_then(Value::as_str) {
                content.push(Block::text(out));
            } else if let Some(parts) = r.get("content").and_then(Value::as_array) {
                content.extend(
                    parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .map(Block::text),
                );
            } else if let Some(files) = r.get("files").and_then(Value::as_array) {
                // An edit: its summary, then each file's diff.
                let summary = r.get("summary").and_then(Value::as_str);
                content.extend(summary.map(Block::text));
                content.extend(
                    files
                        .iter()
                        .filter_map(|f| f.get("diff").and_then(Value::as_str))
                        .map(Block::text),
                );
            } else {
                content.push(Block::text(Value::Object(r.clone()).to_string()));
            }
        }
        Some(Value::Null) | None => {}
        Some(other) => content.push(Block::text(other.to_string())),
    }
    if let Some(msg) = run.pointer("/error/message").and_then(Value::as_str) {
        content.push(Block::text(msg));
        failed = true;
    }
    (content, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_decoded() {
        assert_eq!(
            path_of_uri("file:///home/me/my%20proj").as_deref(),
            Some("/home/me/my proj")
        );
        assert_eq!(path_of_uri("https://x"), None);
    }

    #[test]
    fn a_failed_shell_command_is_an_error_though_done() {
        let (c, failed) = result_of(&serde_json::json!({
            "status": "done", "result": {"output": "no such file", "exitCode": 1}
        }));
        assert!(failed);
        assert_eq!(c[0].plain_text().as_deref(), Some("no such file"));
        let (_, failed) = result_of(&serde_json::json!({"status": "rejected-by-user"}));
        assert!(failed);
    }
}
