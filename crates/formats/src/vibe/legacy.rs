//! Reads a Vibe 2.x session: `messages.jsonl` (a chat message a line) and
//! the `meta.json` beside it.

use super::wire::{apply_meta, num, put_total_usage, read_meta, take_string, META};
use super::FORMAT_NAME;
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{
    Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta, Usage,
};
use serde_json::{Map, Value};
use std::path::Path;

/// Reads the `messages.jsonl` at `path`, whose bytes are `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let mut diags: Vec<Diagnostic> = Vec::new();
    // The directory is `session_<date>_<time>_<first 8 of the id>`.
    let dir_id = path
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|n| n.to_str())
        .map(|n| n.rsplit('_').next().unwrap_or(n).to_string())
        .unwrap_or_default();
    let mut meta = SessionMeta::new(dir_id, crate::Format::agent(&super::FORMAT));
    meta.format = Some(FORMAT_NAME.into());
    meta.format_version = Some(Value::from("2.x"));
    let mut usage = Usage::default();
    match read_meta(&path.with_file_name(META)) {
        Some(doc) => {
            if let Some(stats) = doc.get("stats") {
                usage.input = num(stats.get("session_prompt_tokens"));
                usage.output = num(stats.get("session_completion_tokens"));
                usage.cost_usd = stats
                    .get("session_cost")
                    .and_then(Value::as_f64)
                    .filter(|c| *c > 0.0);
            }
            apply_meta(doc, &mut meta);
        }
        None => diags.push(Diagnostic::warning(
            path,
            None,
            "no-meta",
            "no readable meta.json beside it: the session's id, times and usage are unknown",
        )),
    }
    let mut session = Session::new(meta);
    for (n, v) in crate::jsonl::parse_values(path, bytes, &mut diags) {
        let mut e = match v {
            Value::Object(m) if m.get("role").is_some_and(Value::is_string) => message_entry(m, n),
            other => {
                diags.push(Diagnostic::warning(
                    path,
                    Some(n),
                    "unknown-record",
                    format!("line {n} is not a chat message; kept verbatim"),
                ));
                Entry::new(
                    format!("l{n}"),
                    None,
                    EntryKind::Unknown {
                        record_type: None,
                        raw: other,
                    },
                )
            }
        };
        e.parent_id = session.leaf_id.clone();
        e.line = Some(n);
        session.push(e);
    }
    put_total_usage(&mut session, usage);
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// One chat message (`role`, `content`, `reasoning_content`, `tool_calls`,
/// `tool_call_id`, `name`, `message_id`, `injected`) as an entry; other
/// fields are kept.
pub(super) fn message_entry(mut m: Map<String, Value>, n: u64) -> Entry {
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
        msg.injected = Some("vibe".into());
    }
    msg.extra = m;
    Entry::new(id, None, EntryKind::Message(msg))
}

/// A content part of a multimodal message.
fn part(v: Value) -> Block {
    match v {
        Value::Object(mut b)
            if b.get("type").and_then(Value::as_str) == Some("text")
                && b.get("text").is_some_and(Value::is_string) =>
        {
            let text = take_string(&mut b, "text").unwrap_or_default();
            b.remove("type");
            Block {
                kind: BlockKind::Text { text },
                extra: b,
            }
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
