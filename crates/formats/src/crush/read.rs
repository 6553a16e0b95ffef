//! Reading one session out of a Crush database.

use super::wire::{seconds, KNOWN_PARTS};
use super::FORMAT_NAME;
use crate::chat::take_string;
use crate::sqlite::rows;
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{
    Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta, Usage,
};
use rusqlite::Connection;
use serde_json::{Map, Value};
use std::path::Path;

fn open(path: &Path) -> Result<Connection, FormatError> {
    crate::sqlite::open_read_only(path, &["sessions", "messages"], "a Crush database")
}

/// True when `path` opens as a database with Crush's tables.
pub(super) fn has_tables(path: &Path) -> bool {
    open(path).is_ok()
}

/// Returns the ids of every session in the database, oldest first.
pub(super) fn session_ids(path: &Path) -> Result<Vec<String>, FormatError> {
    crate::sqlite::ids(
        &open(path)?,
        path,
        "SELECT id FROM sessions ORDER BY created_at, id",
    )
}

/// The drift report: unknown part types and session columns.
pub(super) fn drift(read: &Read) -> Vec<crate::drift::Drift> {
    let mut t = crate::drift::Tally::default();
    crate::drift::unknown_records(read, &mut t);
    for e in &read.session.entries {
        let Some(m) = e.message() else { continue };
        for b in &m.content {
            if let BlockKind::Other { value } = &b.kind {
                let ty = value.get("type").and_then(Value::as_str).unwrap_or("?");
                if !KNOWN_PARTS.contains(&ty) {
                    t.add(
                        crate::drift::DriftKind::RecordType,
                        &format!("part.{ty}"),
                        e.line,
                    );
                }
            }
        }
    }
    t.into_items()
}

/// Reads the session `id` of the database at `db` (the first session when
/// no id is given); `shown` is the path the session is named by.
pub(super) fn read(db: &Path, id: Option<&str>, shown: &Path) -> Result<Read, FormatError> {
    let c = open(db)?;
    let id = match id {
        Some(id) => id.to_string(),
        None => session_ids(db)?
            .into_iter()
            .next()
            .ok_or_else(|| FormatError::invalid(db, None, "the database holds no session"))?,
    };
    let mut row = rows(&c, db, "SELECT * FROM sessions WHERE id = ?1", &id)?
        .into_iter()
        .next()
        .ok_or_else(|| {
            FormatError::invalid(shown, None, format!("no session `{id}` in the database"))
        })?;
    let mut meta = SessionMeta::new(id.clone(), crate::Format::agent(&super::FORMAT));
    meta.format = Some(FORMAT_NAME.into());
    meta.title = row
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty() && *t != super::wire::UNTITLED)
        .map(str::to_string);
    meta.parent_session = row
        .get("parent_session_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    meta.created_at = seconds(row.get("created_at"));
    meta.updated_at = seconds(row.get("updated_at"));
    // The project is the folder holding `.crush`.
    meta.cwd = db
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == super::wire::DATA_DIR))
        .and_then(Path::parent)
        .map(|p| p.to_string_lossy().into_owned());
    if let Some(Value::String(todos)) = row.get("todos") {
        if let Ok(v) = serde_json::from_str::<Value>(todos) {
            row.insert("todos".into(), v);
        }
    }
    let usage = Usage {
        input: row
            .get("prompt_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        output: row
            .get("completion_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        cost_usd: row.get("cost").and_then(Value::as_f64).filter(|c| *c > 0.0),
        ..Usage::default()
    };
    meta.extra.insert("session_row".into(), Value::Object(row));
    let mut diags = Vec::new();
    let mut session = Session::new(meta);
    let messages = rows(
        &c,
        db,
        "SELECT * FROM messages WHERE session_id = ?1 ORDER BY created_at, rowid",
        &id,
    )?;
    for (i, m) in messages.into_iter().enumerate() {
        let mut e = message(m, i as u64 + 1, shown, &mut diags);
        e.parent_id = session.leaf_id.clone();
        session.push(e);
    }
    // Crush keeps token counts for the session only.
    if usage.sum() > 0 || usage.cost_usd.is_some() {
        if let Some(m) = session.last_answer_mut() {
            m.usage = Some(usage);
        }
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// One `messages` row as an entry.
fn message(
    mut row: Map<String, Value>,
    n: u64,
    shown: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Entry {
    let id = take_string(&mut row, "id").unwrap_or_else(|| format!("m{n}"));
    let role = Role::parse(row.get("role").and_then(Value::as_str).unwrap_or(""));
    row.remove("role");
    row.remove("session_id");
    let mut msg = Message::new(role);
    msg.model = take_string(&mut row, "model").filter(|m| !m.is_empty());
    msg.provider = take_string(&mut row, "provider").filter(|p| !p.is_empty());
    let parts = match row.remove("parts") {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
            Ok(Value::Array(p)) => p,
            _ => {
                diags.push(Diagnostic::warning(
                    shown,
                    None,
                    "bad-parts",
                    format!("message {id}: `parts` is not a JSON list; kept as it is"),
                ));
                row.insert("parts".into(), Value::String(s));
                Vec::new()
            }
        },
        Some(other) => {
            row.insert("parts".into(), other);
            Vec::new()
        }
        None => Vec::new(),
    };
    let mut finish = Vec::new();
    for p in parts {
        if let Some(b) = part(p, &mut msg) {
            msg.content.push(b);
        }
        if let Some(f) = msg.extra.remove("$finish") {
            finish.push(f);
        }
    }
    if !finish.is_empty() {
        row.insert("finish".into(), Value::Array(finish));
    }
    let created = seconds(row.get("created_at"));
    msg.extra = row;
    let mut e = Entry::new(id, None, EntryKind::Message(msg));
    e.timestamp = created;
    e.line = Some(n);
    e
}

fn other(v: Value) -> Block {
    Block {
        kind: BlockKind::Other { value: v },
        extra: Extra::new(),
    }
}

/// One `{type, data}` part: a block, or (for `finish`) what the message
/// says about its end, noted on `msg`.
fn part(p: Value, msg: &mut Message) -> Option<Block> {
    let ty = p
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let Some(Value::Object(mut d)) = p.get("data").cloned() else {
        return Some(other(p));
    };
    let s = |d: &Map<String, Value>, k: &str| d.get(k).and_then(Value::as_str).map(str::to_string);
    let block = match ty.as_str() {
        "text" if d.get("text").is_some_and(Value::is_string) => {
            Block::text(take_string(&mut d, "text").unwrap_or_default())
        }
        "reasoning" if d.get("thinking").is_some_and(Value::is_string) => {
            let text = take_string(&mut d, "thinking").unwrap_or_default();
            let signature = take_string(&mut d, "signature").filter(|s| !s.is_empty());
            let mut b = Block::thinking(text, signature);
            b.extra = d;
            return Some(b);
        }
        "tool_call" if d.get("name").is_some_and(Value::is_string) => {
            let input = match d.remove("input") {
                Some(Value::String(raw)) => {
                    serde_json::from_str(&raw).unwrap_or(Value::String(raw))
                }
                Some(v) => v,
                None => Value::Null,
            };
            let mut b = Block::tool_call(s(&d, "id"), s(&d, "name").unwrap_or_default(), input);
            d.remove("id");
            d.remove("name");
            b.extra = d;
            return Some(b);
        }
        "tool_result" => {
            let call = s(&d, "tool_call_id");
            let is_error = d.get("is_error").and_then(Value::as_bool) == Some(true);
            let text = s(&d, "content").unwrap_or_default();
            if msg.tool_call_id.is_none() {
                msg.tool_call_id = call.clone();
                msg.tool_name = s(&d, "name");
                msg.is_error = Some(is_error);
            }
            d.remove("tool_call_id");
            d.remove("content");
            let mut b = Block::tool_result(call, vec![Block::text(text)], is_error);
            b.extra = d;
            return Some(b);
        }
        "finish" => {
            msg.stop_reason = s(&d, "reason");
            msg.extra.insert("$finish".into(), Value::Object(d));
            return None;
        }
        _ => return Some(other(p)),
    };
    Some(block)
}
