//! Cursor's chat store, `store.db`: SQLite with two tables.
//!
//! - `meta(key, value)`: the row with key `'0'` holds hex-encoded UTF-8
//!   JSON (`agentId`, `latestRootBlobId`, `name`, `mode`, `createdAt`,
//!   `lastUsedModel`); some builds write plain JSON or plain rows instead.
//! - `blobs(id, data)`: content-addressed (`id` is the sha256 hex of
//!   `data`). Message blobs are JSON (`{"role", "id"?, "content"}` with
//!   Vercel-AI-SDK parts); tree blobs are protobuf nodes whose field 1,
//!   when 32 bytes long, names a child blob.
//!
//! The conversation is the tree under `latestRootBlobId`, walked depth
//! first with children in order; blobs not reachable from it are older
//! states and are ignored. The database is opened read-only (the
//! equivalent of `mode=ro`) with a busy timeout, so a running agent is not
//! disturbed; when even that fails (a WAL database in a read-only
//! directory) it is opened `immutable`.

use super::super::wire::content::{classify_user, fill_content, scrub_secrets, take_str};
use super::super::wire::proto::{self, Field};
use super::meta;
use crate::sqlite::{connect, require_plain_table, sql_err};
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{BlockKind, Entry, EntryKind, Message, Role, Session, SessionMeta};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::Path;

/// The most blobs one walk visits; a store is far smaller in practice.
const MAX_NODES: usize = 1_000_000;

/// Opens the store read-only and checks its schema.
fn open(path: &Path) -> Result<Connection, FormatError> {
    let conn = connect(path, "mode=ro")
        .or_else(|_| connect(path, "mode=ro&immutable=1"))
        .map_err(|e| sql_err(path, "cannot open as a read-only SQLite database", e))?;
    for table in ["meta", "blobs"] {
        require_plain_table(&conn, path, table, "a Cursor chat store")?;
    }
    for (table, cols) in [("meta", ["key", "value"]), ("blobs", ["id", "data"])] {
        let mut stmt = conn
            .prepare(&format!("PRAGMA table_info({table})"))
            .map_err(|e| sql_err(path, "reading the schema", e))?;
        let have: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(1))
            .map_err(|e| sql_err(path, "reading the schema", e))?
            .flatten()
            .collect();
        if cols.iter().any(|c| !have.iter().any(|h| h == c)) {
            return Err(FormatError::invalid(
                path,
                None,
                format!(
                    "not a Cursor chat store: table {table}({}) is missing",
                    cols.join(", ")
                ),
            ));
        }
    }
    Ok(conn)
}

/// Returns a SQL value as bytes (TEXT and BLOB alike).
fn bytes_of(v: ValueRef<'_>) -> Option<Vec<u8>> {
    match v {
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(t.to_vec()),
        ValueRef::Integer(i) => Some(i.to_string().into_bytes()),
        _ => None,
    }
}

/// Decodes a `meta` value: hex-encoded JSON, plain JSON, or plain text.
fn decode_meta_value(raw: &[u8]) -> Value {
    let text = String::from_utf8_lossy(raw);
    let t = text.trim();
    if let Ok(bytes) = hex::decode(t) {
        if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
            return v;
        }
    }
    if t.starts_with('{') {
        if let Ok(v) = serde_json::from_str::<Value>(t) {
            return v;
        }
    }
    Value::String(text.into_owned())
}

/// Reads the `meta` table: the fields of row `'0'`, merged with any other
/// rows as plain keys, secrets removed.
fn read_meta_table(conn: &Connection, path: &Path) -> Result<Map<String, Value>, FormatError> {
    let mut stmt = conn
        .prepare("SELECT key, value FROM meta")
        .map_err(|e| sql_err(path, "reading the meta table", e))?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                bytes_of(r.get_ref(0)?).unwrap_or_default(),
                bytes_of(r.get_ref(1)?).unwrap_or_default(),
            ))
        })
        .map_err(|e| sql_err(path, "reading the meta table", e))?;
    let mut out = Map::new();
    for (key, value) in rows.flatten() {
        let key = String::from_utf8_lossy(&key).into_owned();
        match decode_meta_value(&value) {
            Value::Object(m) if key == "0" => out.extend(m),
            v => {
                out.insert(key, v);
            }
        }
    }
    let mut v = Value::Object(out);
    scrub_secrets(&mut v);
    Ok(match v {
        Value::Object(m) => m,
        _ => Map::new(),
    })
}

/// Reads only the metadata of a store (for transcripts of the same
/// session).
pub(in crate::cursor) fn read_meta_only(path: &Path) -> Result<Map<String, Value>, FormatError> {
    let conn = open(path)?;
    read_meta_table(&conn, path)
}

/// Parses a message blob: a JSON object with a `role`.
fn message_json(data: &[u8]) -> Option<Map<String, Value>> {
    let first = data.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'{' {
        return None;
    }
    match serde_json::from_slice::<Value>(data).ok()? {
        Value::Object(m) if m.get("role").is_some_and(Value::is_string) => Some(m),
        _ => None,
    }
}

/// Converts a message blob into a message.
fn message(mut m: Map<String, Value>) -> Message {
    let role = take_str(&mut m, "role").unwrap_or_default();
    let mut msg = Message::new(Role::parse(&role));
    fill_content(&mut msg, m.remove("content"));
    msg.id = take_str(&mut m, "id");
    msg.model = take_str(&mut m, "model");
    if msg.role == Role::Tool {
        if let Some((id, name)) = msg.content.iter().find_map(|b| match &b.kind {
            BlockKind::ToolResult { tool_call_id, .. } => Some((
                tool_call_id.clone(),
                b.extra
                    .get("toolName")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            )),
            _ => None,
        }) {
            msg.tool_call_id = id;
            msg.tool_name = name;
        }
    }
    msg.extra = m;
    classify_user(&mut msg);
    msg
}

/// Returns a workspace path from a `file://` URI.
fn path_from_uri(s: &str) -> Option<String> {
    let rest = s.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok().filter(|p| p.starts_with('/'))
}

/// Reads a chat store.
pub(in crate::cursor) fn read(path: &Path) -> Result<Read, FormatError> {
    let conn = open(path)?;
    let mut diags = Vec::new();
    let store_meta = read_meta_table(&conn, path)?;
    let chat_dir = path.parent().unwrap_or(Path::new("."));
    let meta_json = meta::read_meta_json(chat_dir, &mut diags);
    let id = store_meta
        .get("agentId")
        .and_then(Value::as_str)
        .or_else(|| {
            meta_json
                .as_ref()
                .and_then(|m| m.get("agentId"))
                .and_then(Value::as_str)
        })
        .map(str::to_string)
        .or_else(|| {
            chat_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let mut smeta = SessionMeta::new(id, agentlog_model::Agent::Cursor);
    smeta.format = Some("cursor".into());
    if let Some(m) = &meta_json {
        meta::apply(&mut smeta, m);
    }
    meta::apply(&mut smeta, &store_meta);
    if let Some(v) = meta_json
        .as_ref()
        .and_then(|m| m.get("schemaVersion"))
        .or_else(|| store_meta.get("schemaVersion"))
    {
        smeta.format_version = Some(v.clone());
    }
    let root = meta_json
        .as_ref()
        .and_then(|m| m.get("latestRootBlobId"))
        .or_else(|| store_meta.get("latestRootBlobId"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut session = Session::new(smeta);
    match root {
        Some(root) => walk(&conn, path, &root, &mut session, &mut diags)?,
        None => diags.push(Diagnostic::warning(
            path,
            None,
            "no-root",
            "the store names no latestRootBlobId; only metadata was read",
        )),
    }
    session
        .meta
        .extra
        .insert("store_meta".into(), Value::Object(store_meta));
    if let Some(m) = meta_json {
        session
            .meta
            .extra
            .insert("meta_json".into(), Value::Object(m));
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// Walks the blob tree from `root`, depth first with children in order,
/// appending every message found as the next entry of one branch.
fn walk(
    conn: &Connection,
    path: &Path,
    root: &str,
    session: &mut Session,
    diags: &mut Vec<Diagnostic>,
) -> Result<(), FormatError> {
    let mut stmt = conn
        .prepare("SELECT data FROM blobs WHERE id = ?1")
        .map_err(|e| sql_err(path, "reading blobs", e))?;
    let mut fetch = |id: &str| -> Result<Option<Vec<u8>>, FormatError> {
        let mut get = |key: &str| {
            stmt.query_row([key], |r| Ok(bytes_of(r.get_ref(0)?)))
                .optional()
                .map(Option::flatten)
                .map_err(|e| sql_err(path, "reading blobs", e))
        };
        match get(id)? {
            Some(d) => Ok(Some(d)),
            None if id.bytes().any(|b| b.is_ascii_uppercase()) => get(&id.to_ascii_lowercase()),
            None => Ok(None),
        }
    };
    let mut visited = HashSet::new();
    let mut stack = vec![root.to_string()];
    let mut prev: Option<String> = None;
    let mut workspace: Option<String> = None;
    let push =
        |session: &mut Session, id: String, m: Map<String, Value>, prev: &mut Option<String>| {
            let mut e = Entry::new(id, prev.take(), EntryKind::Message(message(m)));
            e.line = Some(session.entries.len() as u64 + 1);
            *prev = Some(e.id.clone());
            session.push(e);
        };
    while let Some(id) = stack.pop() {
        if !visited.insert(id.clone()) {
            continue;
        }
        if visited.len() > MAX_NODES {
            diags.push(Diagnostic::warning(
                path,
                None,
                "too-many-blobs",
                "the blob tree is too large; the rest was skipped",
            ));
            break;
        }
        let Some(data) = fetch(&id)? else {
            diags.push(Diagnostic::warning(
                path,
                None,
                "missing-blob",
                format!("blob {id} is referenced but not stored; skipped"),
            ));
            continue;
        };
        if let Some(m) = message_json(&data) {
            push(session, id, m, &mut prev);
            continue;
        }
        let Some(fields) = proto::fields(&data) else {
            diags.push(Diagnostic::warning(
                path,
                None,
                "undecodable-blob",
                format!("blob {id} is neither a JSON message nor a tree node; skipped"),
            ));
            continue;
        };
        let mut children = Vec::new();
        let mut embedded = 0usize;
        for f in fields {
            let Field::Bytes(n, b) = f else { continue };
            if n == 1 && b.len() == 32 {
                children.push(hex::encode(b));
            } else if let Some(m) = message_json(b) {
                embedded += 1;
                push(session, format!("{id}#{embedded}"), m, &mut prev);
            } else if workspace.is_none() {
                workspace = std::str::from_utf8(b).ok().and_then(path_from_uri);
            }
        }
        stack.extend(children.into_iter().rev());
    }
    if session.meta.cwd.is_none() {
        session.meta.cwd = workspace;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_uris_and_meta_values() {
        assert_eq!(
            path_from_uri("file:///home/a%20b/x").as_deref(),
            Some("/home/a b/x")
        );
        assert_eq!(path_from_uri("https://x"), None);
        let hexed = hex::encode(br#"{"name":"n"}"#);
        assert_eq!(decode_meta_value(hexed.as_bytes())["name"], "n");
        assert_eq!(decode_meta_value(b"plain"), Value::from("plain"));
    }
}
