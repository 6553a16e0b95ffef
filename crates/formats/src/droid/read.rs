//! Reads a Droid session (its store's `<id>.jsonl` with the
//! `<id>.settings.json` beside it, or an exec stream-json capture) into a
//! session.

use super::wire::{block, role_of, usage_of};
use super::FORMAT_NAME;
use crate::{jsonl, Diagnostic, FormatError, Read};
use agentlog_model::{
    Block, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta, Timestamp,
};
use serde_json::{Map, Value};
use std::path::Path;

/// Reads the records of `path`, whose bytes are `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let mut diags = Vec::new();
    let records = jsonl::parse_values(path, bytes, &mut diags);
    if records.is_empty() {
        return Err(FormatError::invalid(path, None, "no Droid records"));
    }
    let fallback = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut meta = SessionMeta::new(fallback, crate::Format::agent(&super::FORMAT));
    meta.format = Some(FORMAT_NAME.into());
    let mut entries: Vec<Entry> = Vec::new();
    let mut prev: Option<String> = None;
    for (n, v) in records {
        let Value::Object(o) = v else {
            diags.push(Diagnostic::warning(
                path,
                Some(n),
                "not-an-object",
                "line is JSON but not an object; kept verbatim",
            ));
            entries.push(unknown(n, None, Value::Null, &prev));
            continue;
        };
        let ty = o
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let ts = o
            .get("timestamp")
            .and_then(Value::as_str)
            .map(|s| Timestamp::Text(s.to_string()));
        if meta.created_at.is_none() {
            meta.created_at = ts.clone();
        }
        if let Some(sid) = o.get("session_id").and_then(Value::as_str) {
            meta.id = sid.to_string();
        }
        let entry = match ty.as_str() {
            "session_start" => {
                start_meta(&o, &mut meta);
                None
            }
            "message" if o.get("message").is_some_and(Value::is_object) => {
                store_message(&o, n, &prev)
            }
            "message" => stream_message(&o, n, &prev),
            "tool_call" => stream_call(&o, n, &prev),
            "tool_result" => stream_result(&o, n, &prev),
            "completion" => o.get("finalText").and_then(Value::as_str).map(|t| {
                let mut m = Message::new(Role::Assistant);
                m.content.push(Block::text(t.to_string()));
                entry(n, &o, EntryKind::Message(m), &prev, &["finalText"])
            }),
            // Bookkeeping Droid writes after each turn: kept as it is.
            "agent_turn_outcome" => Some(unknown(n, Some(&ty), Value::Object(o.clone()), &prev)),
            _ => None,
        };
        let entry = match entry {
            Some(e) => e,
            None if ty == "session_start" => {
                // Kept for the record (its fields are in the metadata).
                unknown(n, Some(&ty), Value::Object(o), &prev)
            }
            None => {
                diags.push(Diagnostic::info(
                    path,
                    Some(n),
                    "unknown-type",
                    format!("record type {ty:?} is not known; kept verbatim"),
                ));
                unknown(n, Some(&ty), Value::Object(o), &prev)
            }
        };
        let entry = match ts {
            Some(t) if entry.timestamp.is_none() => entry.at(t),
            _ => entry,
        };
        prev = Some(entry.id.clone());
        entries.push(entry);
    }
    if meta.updated_at.is_none() {
        meta.updated_at = entries.iter().rev().find_map(|e| e.timestamp.clone());
    }
    let mut session = Session::new(meta);
    // Entries name their parents when the store gives them; a parent
    // that is not an entry (the session id) makes a root.
    let ids: std::collections::HashSet<String> = entries.iter().map(|e| e.id.clone()).collect();
    for e in &mut entries {
        if let Some(p) = e.parent_id.take_if(|p| !ids.contains(p.as_str())) {
            // Kept to be written back as it was.
            e.extra
                .insert(super::PARENT_MARK.into(), serde_json::json!({ "id": p }));
        }
    }
    session.leaf_id = entries.last().map(|e| e.id.clone());
    session.entries = entries;
    settings(path, &mut session);
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// Applies the `<id>.settings.json` Droid keeps beside a stored session:
/// its model and its token usage. Droid records the session's total, not
/// each reply's, so the total goes on the last reply (sums and stats hold;
/// usage per turn is not known) when no reply has a usage of its own. The
/// file's fields are kept in `meta.extra.settings_file`.
fn settings(path: &Path, session: &mut Session) {
    let Some(stem) = path.file_stem() else {
        return;
    };
    let side = path.with_file_name(format!("{}.settings.json", stem.to_string_lossy()));
    if !side.is_file() {
        return;
    }
    let Ok(bytes) = crate::input::read_file(&side) else {
        return;
    };
    let Ok(Value::Object(s)) = serde_json::from_slice::<Value>(&bytes) else {
        return;
    };
    if session.meta.model.model.is_none() {
        session.meta.model.model = s.get("model").and_then(Value::as_str).map(str::to_string);
    }
    let usage = s.get("tokenUsage").and_then(usage_of);
    let counted = session.entries.iter().any(|e| e.response_usage().is_some());
    if let (Some(usage), false) = (usage, counted) {
        if let Some(m) = session.last_answer_mut() {
            m.usage = Some(usage);
        }
    }
    session
        .meta
        .extra
        .insert("settings_file".into(), Value::Object(s));
}

/// Fills the metadata from a `session_start` record.
fn start_meta(o: &Map<String, Value>, meta: &mut SessionMeta) {
    if let Some(id) = o.get("id").and_then(Value::as_str) {
        meta.id = id.to_string();
    }
    meta.title = o
        .get("sessionTitle")
        .or_else(|| o.get("title"))
        .and_then(Value::as_str)
        .map(str::to_string);
    meta.cwd = o.get("cwd").and_then(Value::as_str).map(str::to_string);
    meta.agent_version = o.get("version").and_then(Value::as_str).map(str::to_string);
    for (k, v) in o {
        if !["type", "id", "title", "sessionTitle", "cwd", "version"].contains(&k.as_str()) {
            meta.extra.insert(k.clone(), v.clone());
        }
    }
}

/// An entry for line `n`: its own `id` (else `line<n>`), its `parentId`
/// (else the previous entry), the record's other fields as extras.
fn entry(
    n: u64,
    o: &Map<String, Value>,
    kind: EntryKind,
    prev: &Option<String>,
    used: &[&str],
) -> Entry {
    let id = o
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| format!("line{n}"), str::to_string);
    let mut extra = Extra::new();
    let parent = match o.get("parentId") {
        Some(Value::String(p)) => Some(p.clone()),
        Some(Value::Null) => {
            extra.insert(super::PARENT_MARK.into(), "null".into());
            None
        }
        _ => {
            extra.insert(super::PARENT_MARK.into(), "absent".into());
            prev.clone()
        }
    };
    for (k, v) in o {
        if !["type", "id", "parentId", "timestamp"].contains(&k.as_str())
            && !used.contains(&k.as_str())
        {
            extra.insert(k.clone(), v.clone());
        }
    }
    let mut e = Entry::new(id, parent, kind);
    e.extra = extra;
    e.line = Some(n);
    e
}

fn unknown(n: u64, ty: Option<&str>, raw: Value, prev: &Option<String>) -> Entry {
    let mut e = Entry::new(
        format!("line{n}"),
        prev.clone(),
        EntryKind::Unknown {
            record_type: ty.map(str::to_string),
            raw,
        },
    );
    e.line = Some(n);
    e
}

/// A session-store `message` record.
fn store_message(o: &Map<String, Value>, n: u64, prev: &Option<String>) -> Option<Entry> {
    let msg = o.get("message")?.as_object()?;
    let mut m = Message::new(role_of(
        msg.get("role").and_then(Value::as_str).unwrap_or(""),
    ));
    match msg.get("content") {
        Some(Value::String(s)) => {
            m.content_is_text = true;
            m.content.push(Block::text(s.clone()));
        }
        Some(Value::Array(blocks)) => m.content.extend(blocks.iter().map(block)),
        _ => {}
    }
    for (k, v) in msg {
        if k != "role" && k != "content" {
            m.extra.insert(k.clone(), v.clone());
        }
    }
    // Droid opens a session with a user message of its own (id
    // `context-…`, `<system-reminder>` blocks: tools, skills, the
    // environment): context it injects, not a prompt.
    let context_id = o
        .get("id")
        .and_then(Value::as_str)
        .is_some_and(|id| id.starts_with("context-"));
    if m.role == Role::User
        && (context_id
            || m.text_content()
                .trim_start()
                .starts_with("<system-reminder>"))
    {
        m.injected = Some("system-reminder".into());
    }
    Some(entry(n, o, EntryKind::Message(m), prev, &["message"]))
}

/// A stream-json `message` (`role`, `text`).
fn stream_message(o: &Map<String, Value>, n: u64, prev: &Option<String>) -> Option<Entry> {
    let text = o.get("text")?.as_str()?;
    let mut m = Message::new(role_of(
        o.get("role").and_then(Value::as_str).unwrap_or("assistant"),
    ));
    m.content.push(Block::text(text.to_string()));
    Some(entry(n, o, EntryKind::Message(m), prev, &["role", "text"]))
}

/// A stream-json `tool_call`.
fn stream_call(o: &Map<String, Value>, n: u64, prev: &Option<String>) -> Option<Entry> {
    let name = o.get("toolName")?.as_str()?;
    let id = o
        .get("toolCallId")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut m = Message::new(Role::Assistant);
    m.content.push(Block::tool_call(
        id,
        name.to_string(),
        o.get("parameters").cloned().unwrap_or(Value::Null),
    ));
    Some(entry(
        n,
        o,
        EntryKind::Message(m),
        prev,
        &["toolCallId", "toolName", "parameters"],
    ))
}

/// A stream-json `tool_result` (`value`: text, or `stdout`/`exitCode`).
fn stream_result(o: &Map<String, Value>, n: u64, prev: &Option<String>) -> Option<Entry> {
    let id = o
        .get("toolCallId")
        .and_then(Value::as_str)
        .map(str::to_string);
    let value = o.get("value")?;
    let (text, failed) = match value {
        Value::String(s) => (s.clone(), false),
        Value::Object(v) => {
            let out = v
                .get("stdout")
                .or_else(|| v.get("output"))
                .and_then(Value::as_str)
                .map_or_else(|| value.to_string(), str::to_string);
            let code = v.get("exitCode").and_then(Value::as_i64).unwrap_or(0);
            (out, code != 0 || v.get("error").is_some())
        }
        other => (other.to_string(), false),
    };
    let mut m = Message::new(Role::Tool);
    m.content
        .push(Block::tool_result(id, vec![Block::text(text)], failed));
    Some(entry(
        n,
        o,
        EntryKind::Message(m),
        prev,
        &["toolCallId", "value"],
    ))
}
