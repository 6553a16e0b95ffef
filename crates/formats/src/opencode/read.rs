//! Reading one session out of an OpenCode database.

use super::wire::{
    millis, take_str, usage_of, KEPT_PARTS, KNOWN_MESSAGE, KNOWN_PART, KNOWN_SESSION,
};
use super::OpenCodeFormat;
use crate::sqlite::rows;
use crate::{Diagnostic, Format, FormatError, Read};
use agentlog_model::{
    Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta,
};
use rusqlite::Connection;
use serde_json::{Map, Value};
use std::path::Path;

/// The drift report of a session read from an OpenCode database.
pub(super) fn drift(read: &Read) -> Vec<crate::drift::Drift> {
    use crate::drift::{DriftKind, Tally};
    let mut t = Tally::default();
    crate::drift::unknown_records(read, &mut t);
    let find = |table: &[(&str, &'static [&'static str])], k: &str| {
        table.iter().find(|(n, _)| *n == k).map(|(_, f)| *f)
    };
    t.fields(
        "session",
        read.session.meta.extra.keys(),
        KNOWN_SESSION,
        None,
    );
    let part = |t: &mut Tally, typ: &str, keys: Vec<&String>, line: Option<u64>| match find(
        KNOWN_PART, typ,
    ) {
        Some(known) => t.fields(&format!("part.{typ}"), keys, known, line),
        None => t.add(DriftKind::RecordType, &format!("part.{typ}"), line),
    };
    for e in &read.session.entries {
        let Some(m) = e.message() else { continue };
        let role = m.role.as_str();
        match find(KNOWN_MESSAGE, role) {
            Some(known) => t.fields(
                &format!("message.{role}"),
                m.extra.keys().filter(|k| *k != "parts"),
                known,
                e.line,
            ),
            None => t.add(DriftKind::RecordType, &format!("message.{role}"), e.line),
        }
        for b in &m.content {
            let keys: Vec<&String> = b.extra.keys().collect();
            match &b.kind {
                BlockKind::Text { .. } => part(&mut t, "text", keys, e.line),
                BlockKind::Thinking { .. } => part(&mut t, "reasoning", keys, e.line),
                BlockKind::ToolCall { .. } => {
                    part(&mut t, "tool", keys, e.line);
                    if let Some(Value::Object(state)) = b.extra.get("state") {
                        part(&mut t, "tool.state", state.keys().collect(), e.line);
                    }
                }
                BlockKind::Other { value } => {
                    let typ = value
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("(none)");
                    let keys = value
                        .as_object()
                        .map(|o| o.keys().collect())
                        .unwrap_or_default();
                    part(&mut t, typ, keys, e.line);
                }
                _ => {}
            }
        }
        if let Some(Value::Array(kept)) = m.extra.get("parts") {
            for p in kept {
                let typ = p.get("type").and_then(Value::as_str).unwrap_or("(none)");
                let keys = p
                    .as_object()
                    .map(|o| o.keys().collect())
                    .unwrap_or_default();
                part(&mut t, typ, keys, e.line);
            }
        }
    }
    t.into_items()
}

/// Opens an OpenCode database read-only, checking its tables.
fn open(path: &Path) -> Result<Connection, FormatError> {
    crate::sqlite::open_read_only(
        path,
        &["session", "message", "part"],
        "an OpenCode database",
    )
}

/// True when `path` opens as a database with OpenCode's tables.
pub(super) fn has_tables(path: &Path) -> bool {
    open(path).is_ok()
}

/// Returns the ids of every session in the database, oldest first.
pub(super) fn session_ids(path: &Path) -> Result<Vec<String>, FormatError> {
    crate::sqlite::ids(
        &open(path)?,
        path,
        "SELECT id FROM session ORDER BY time_created, id",
    )
}

fn take_data(
    row: &mut Map<String, Value>,
    path: &Path,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) -> Map<String, Value> {
    let text = row.remove("data");
    match text
        .as_ref()
        .and_then(Value::as_str)
        .map(serde_json::from_str::<Value>)
    {
        Some(Ok(Value::Object(m))) => m,
        _ => {
            diags.push(Diagnostic::warning(
                path,
                None,
                "invalid-json",
                format!("{what}: `data` is not a JSON object; kept verbatim"),
            ));
            let mut m = Map::new();
            m.insert("$data".into(), text.unwrap_or(Value::Null));
            m
        }
    }
}

pub(super) fn read(
    format: &OpenCodeFormat,
    db: &Path,
    id: Option<&str>,
    shown: &Path,
) -> Result<Read, FormatError> {
    let c = open(db)?;
    let id = match id {
        Some(id) => id.to_string(),
        None => {
            let ids = session_ids(db)?;
            match ids.as_slice() {
                [one] => one.clone(),
                _ => {
                    return Err(FormatError::invalid(
                        db,
                        None,
                        format!(
                            "the database holds {} sessions; name one as {}#<session id>",
                            ids.len(),
                            db.display()
                        ),
                    ))
                }
            }
        }
    };
    let mut diags = Vec::new();
    let mut srows = rows(&c, db, "SELECT * FROM session WHERE id = ?1", &id)?;
    let Some(mut srow) = srows.pop() else {
        return Err(FormatError::invalid(
            shown,
            None,
            format!("no session `{id}` in {}", db.display()),
        ));
    };
    let mut meta = SessionMeta::new(id.clone(), format.agent());
    meta.format = Some(format.name().into());
    srow.remove("id");
    let s = |row: &mut Map<String, Value>, k: &str| match row.remove(k) {
        Some(Value::String(v)) => Some(v),
        Some(other) => {
            if !other.is_null() {
                row.insert(k.to_string(), other);
            }
            None
        }
        None => None,
    };
    meta.title = s(&mut srow, "title");
    meta.cwd = s(&mut srow, "directory");
    meta.agent_version = s(&mut srow, "version");
    meta.parent_session = s(&mut srow, "parent_id");
    meta.created_at = millis(srow.get("time_created"));
    meta.updated_at = millis(srow.get("time_updated"));
    if let Some(model) = srow
        .get("model")
        .and_then(Value::as_str)
        .and_then(|m| serde_json::from_str::<Value>(m).ok())
    {
        meta.model.model = model.get("id").and_then(Value::as_str).map(str::to_string);
        meta.model.provider = model
            .get("providerID")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    meta.extra = srow.into_iter().filter(|(_, v)| !v.is_null()).collect();
    let mut session = Session::new(meta);

    let messages = rows(
        &c,
        db,
        "SELECT * FROM message WHERE session_id = ?1 ORDER BY time_created, id",
        &id,
    )?;
    let parts = rows(
        &c,
        db,
        "SELECT * FROM part WHERE session_id = ?1 ORDER BY message_id, id",
        &id,
    )?;
    let mut by_message: std::collections::HashMap<String, Vec<Map<String, Value>>> =
        std::collections::HashMap::new();
    for mut p in parts {
        let mid = p
            .get("message_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let pid = p
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let mut data = take_data(&mut p, shown, &format!("part {pid}"), &mut diags);
        data.insert("id".into(), pid.into());
        by_message.entry(mid).or_default().push(data);
    }
    let mut prev: Option<String> = None;
    for (n, mut row) in messages.into_iter().enumerate() {
        let mid = row
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let data = take_data(&mut row, shown, &format!("message {mid}"), &mut diags);
        let parts = by_message.remove(&mid).unwrap_or_default();
        let mut e = Entry::new(
            mid.clone(),
            prev.clone(),
            EntryKind::Message(message(data, parts, shown, &mut diags)),
        );
        e.timestamp = millis(row.get("time_created"));
        row.remove("id");
        row.remove("session_id");
        row.remove("time_created");
        e.extra = row;
        e.line = Some(n as u64 + 1);
        session.push(e);
        prev = Some(mid);
    }
    for (mid, _) in by_message {
        diags.push(Diagnostic::warning(
            shown,
            None,
            "orphan-part",
            format!("parts of message {mid}, which is not in the session, were skipped"),
        ));
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

fn message(
    mut data: Map<String, Value>,
    parts: Vec<Map<String, Value>>,
    path: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Message {
    let role = match data.get("role").and_then(Value::as_str) {
        Some(r) => Role::parse(r),
        None => Role::Custom("unknown".into()),
    };
    let mut m = Message::new(role.clone());
    if role == Role::Assistant {
        if let Some(t) = data.get("tokens") {
            m.usage = Some(usage_of(t, data.get("cost")));
        }
        m.model = data
            .get("modelID")
            .and_then(Value::as_str)
            .map(str::to_string);
        m.provider = data
            .get("providerID")
            .and_then(Value::as_str)
            .map(str::to_string);
        m.stop_reason = data
            .get("finish")
            .and_then(Value::as_str)
            .map(str::to_string);
        if data.get("summary").and_then(Value::as_bool) == Some(true) {
            m.injected = Some("compact-summary".into());
        }
        if let Some(err) = data.get("error") {
            let name = err.get("name").and_then(Value::as_str).unwrap_or("error");
            diags.push(Diagnostic::info(
                path,
                None,
                "agent-error",
                format!("an assistant message ended with {name}"),
            ));
        }
    }
    let mut kept = Vec::new();
    for mut p in parts {
        let t = p
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match t.as_str() {
            "text" => {
                let text = take_str(&mut p, "text");
                if p.get("synthetic").and_then(Value::as_bool) == Some(true) {
                    m.injected.get_or_insert_with(|| "synthetic".into());
                }
                p.remove("type");
                let mut b = Block::text(text);
                b.extra = p;
                m.content.push(b);
            }
            "reasoning" => {
                let text = take_str(&mut p, "text");
                p.remove("type");
                let mut b = Block::thinking(text, None);
                b.extra = p;
                m.content.push(b);
            }
            "tool" => tool(&mut m, p),
            "file" => {
                let mime = p.get("mime").and_then(Value::as_str).map(str::to_string);
                if mime.as_deref().is_some_and(|t| t.starts_with("image/")) {
                    let url = p.get("url").and_then(Value::as_str).map(str::to_string);
                    let mut b = Block {
                        kind: BlockKind::Image {
                            media_type: mime,
                            data: None,
                            url,
                        },
                        extra: Extra::new(),
                    };
                    p.remove("mime");
                    p.remove("url");
                    p.remove("type");
                    b.extra = p;
                    m.content.push(b);
                } else {
                    m.content.push(Block {
                        kind: BlockKind::Other {
                            value: Value::Object(p),
                        },
                        extra: Extra::new(),
                    });
                }
            }
            _ if KEPT_PARTS.contains(&t.as_str()) => kept.push(Value::Object(p)),
            _ => m.content.push(Block {
                kind: BlockKind::Other {
                    value: Value::Object(p),
                },
                extra: Extra::new(),
            }),
        }
    }
    if !kept.is_empty() {
        data.insert("parts".into(), Value::Array(kept));
    }
    m.extra = data;
    m
}

/// A tool part: the call, then its result when it has one.
fn tool(m: &mut Message, mut p: Map<String, Value>) {
    let call_id = match p.remove("callID") {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let name = take_str(&mut p, "tool");
    let mut state = match p.remove("state") {
        Some(Value::Object(s)) => s,
        Some(other) => {
            p.insert("state".into(), other);
            Map::new()
        }
        None => Map::new(),
    };
    let input = state.remove("input").unwrap_or(Value::Null);
    let status = state.get("status").and_then(Value::as_str).unwrap_or("");
    let result = match status {
        "completed" => Some((take_str(&mut state, "output"), false)),
        "error" => Some((take_str(&mut state, "error"), true)),
        _ => None,
    };
    p.remove("type");
    p.insert("state".into(), Value::Object(state));
    let mut call = Block::tool_call(call_id.clone(), name, input);
    call.extra = p;
    m.content.push(call);
    if let Some((text, is_error)) = result {
        m.content.push(Block::tool_result(
            call_id,
            vec![Block::text(text)],
            is_error,
        ));
    }
}
