//! Reads a Continue CLI session file into a session.

use super::wire::{usage_of, UNTITLED};
use super::FORMAT_NAME;
use crate::chat::{part, take_string, tool_call};
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{Block, Entry, EntryKind, Message, Role, Session, SessionMeta};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Reads the session file at `path`, whose bytes are `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let doc: Value = serde_json::from_slice(bytes)
        .map_err(|e| FormatError::invalid(path, Some(e.line() as u64), format!("not JSON: {e}")))?;
    let Value::Object(mut doc) = doc else {
        return Err(FormatError::invalid(path, None, "not a JSON object"));
    };
    let mut diags = Vec::new();
    let id = take_string(&mut doc, "sessionId").unwrap_or_else(|| {
        path.file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string()
    });
    let mut meta = SessionMeta::new(id, crate::Format::agent(&super::FORMAT));
    meta.format = Some(FORMAT_NAME.into());
    meta.title = doc
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty() && *t != UNTITLED)
        .map(str::to_string);
    meta.cwd = doc
        .get("workspaceDirectory")
        .and_then(Value::as_str)
        .map(str::to_string);
    let history = match doc.remove("history") {
        Some(Value::Array(h)) => h,
        _ => {
            diags.push(Diagnostic::warning(
                path,
                None,
                "no-history",
                "no `history` array",
            ));
            Vec::new()
        }
    };
    meta.created_at = created_at(path, &meta.id);
    meta.extra.insert("session_file".into(), Value::Object(doc));
    let mut session = Session::new(meta);
    for (i, item) in history.into_iter().enumerate() {
        let n = i as u64 + 1;
        let entries = match item {
            Value::Object(item) if item.get("message").is_some_and(Value::is_object) => {
                item_entries(item, n)
            }
            other => {
                diags.push(Diagnostic::warning(
                    path,
                    None,
                    "unknown-record",
                    format!("history item {n} has no message; kept verbatim"),
                ));
                vec![Entry::new(
                    format!("h{n}"),
                    None,
                    EntryKind::Unknown {
                        record_type: None,
                        raw: other,
                    },
                )]
            }
        };
        for mut e in entries {
            e.parent_id = session.leaf_id.clone();
            e.line = Some(n);
            session.push(e);
        }
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// The creation times of the sessions `sessions.json` at `index` lists, by
/// session id (`dateCreated`: epoch milliseconds, as a string).
fn creation_times(index: &Path) -> HashMap<String, i64> {
    let Ok(bytes) = crate::input::read_file(index) else {
        return Default::default();
    };
    let Ok(Value::Array(list)) = serde_json::from_slice::<Value>(&bytes) else {
        return Default::default();
    };
    list.iter()
        .filter_map(|s| {
            let id = s.get("sessionId")?.as_str()?;
            let ms = match s.get("dateCreated")? {
                Value::String(t) => t.parse().ok()?,
                v => v.as_i64()?,
            };
            Some((id.to_string(), ms))
        })
        .collect()
}

/// The index last parsed, with the size and time it had: reading every
/// session of a folder (an index build) parses its `sessions.json` once,
/// not once per session.
type IndexCache = Option<(PathBuf, u64, Option<i64>, Arc<HashMap<String, i64>>)>;
static LAST_INDEX: Mutex<IndexCache> = Mutex::new(None);

/// The session's creation time from the `sessions.json` beside it.
fn created_at(path: &Path, id: &str) -> Option<agentlog_model::Timestamp> {
    let index = path.with_file_name(super::wire::INDEX);
    let size = std::fs::metadata(&index).ok()?.len();
    let mtime = crate::env::mtime_ns(&index);
    let times = {
        let mut last = LAST_INDEX.lock().unwrap_or_else(|e| e.into_inner());
        match &*last {
            Some((p, sz, t, times)) if *p == index && *sz == size && *t == mtime => {
                Arc::clone(times)
            }
            _ => {
                let times = Arc::new(creation_times(&index));
                *last = Some((index, size, mtime, Arc::clone(&times)));
                times
            }
        }
    };
    times
        .get(id)
        .map(|ms| agentlog_model::Timestamp::Millis(*ms))
}

/// A history item: its message, then the results of its tool calls.
fn item_entries(mut item: Map<String, Value>, n: u64) -> Vec<Entry> {
    let Some(Value::Object(mut m)) = item.remove("message") else {
        return Vec::new();
    };
    let role = Role::parse(m.get("role").and_then(Value::as_str).unwrap_or(""));
    m.remove("role");
    let mut msg = Message::new(role);
    if let Some(Value::Object(mut r)) = item.remove("reasoning") {
        if let Some(text) = take_string(&mut r, "text") {
            msg.content.push(Block::thinking(text, None));
        }
        if !r.is_empty() {
            item.insert("reasoning".into(), Value::Object(r));
        }
    }
    match m.remove("content") {
        Some(Value::String(s)) if !s.is_empty() => {
            msg.content.push(Block::text(s));
            msg.content_is_text = true;
        }
        Some(Value::Array(parts)) if !parts.is_empty() => {
            msg.content.extend(parts.into_iter().map(part));
        }
        Some(other) => {
            m.insert("content".into(), other);
        }
        None => {}
    }
    if let Some(Value::Array(calls)) = m.remove("toolCalls") {
        msg.content.extend(calls.into_iter().map(tool_call));
    }
    // The usage stays in the message's fields as written too (the writer
    // gives it back as it was).
    if let Some(u) = m.get("usage").cloned() {
        let mut usage = usage_of(&u);
        usage.cost_usd = u
            .get("cost_cents")
            .and_then(Value::as_f64)
            .filter(|c| *c > 0.0)
            .map(|c| c / 100.0);
        msg.usage = Some(usage);
        msg.model = u.get("model").and_then(Value::as_str).map(str::to_string);
    }
    msg.extra = m;
    let mut results = Vec::new();
    if let Some(Value::Array(states)) = item.get("toolCallStates") {
        for s in states {
            let Some(output) = s.get("output").and_then(Value::as_array) else {
                continue;
            };
            let call_id = s
                .get("toolCallId")
                .and_then(Value::as_str)
                .map(str::to_string);
            let texts: Vec<Block> = output
                .iter()
                .filter_map(|o| o.get("content").and_then(Value::as_str))
                .map(Block::text)
                .collect();
            let is_error = s.get("status").and_then(Value::as_str) == Some("errored");
            let mut r = Message::new(Role::Tool);
            r.tool_call_id = call_id.clone();
            r.tool_name = s
                .pointer("/toolCall/function/name")
                .and_then(Value::as_str)
                .map(str::to_string);
            r.is_error = Some(is_error);
            r.content
                .push(Block::tool_result(call_id.clone(), texts, is_error));
            let id = format!(
                "h{n}/{}",
                call_id.unwrap_or_else(|| results.len().to_string())
            );
            results.push(Entry::new(id, None, EntryKind::Message(r)));
        }
    }
    let mut e = Entry::new(format!("h{n}"), None, EntryKind::Message(msg));
    e.extra = item;
    let mut out = vec![e];
    out.extend(results);
    out
}
