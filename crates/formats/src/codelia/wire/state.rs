//! The resume state snapshot `sessions/state/<session_id>.json`.
//!
//! One JSON object: `schema_version`, `session_id`, `updated_at`, the last
//! `run_id` and `invoke_seq`, the conversation as `messages` (codelia's
//! `BaseMessage`s) and `meta`. Each message becomes a message entry; one that
//! does not map exactly is kept verbatim as an unknown entry.

use super::header::ts_text;
use super::message::{self, extend_missing};
use crate::{Diagnostic, Fidelity};
use agentlog_model::{Agent, Entry, EntryKind, Session, SessionMeta, Timestamp};
use serde_json::{Map, Value};
use std::path::Path;

/// The key in `SessionMeta::extra` that marks a session read from a state
/// snapshot, so writing it back gives a snapshot again.
pub const LAYOUT_KEY: &str = "x.agentlog.layout";
/// The value of [`LAYOUT_KEY`] for state snapshots.
pub const LAYOUT_STATE: &str = "codelia-state";

/// The order codelia writes snapshot fields in.
const ORDER: [&str; 7] = [
    "schema_version",
    "session_id",
    "updated_at",
    "run_id",
    "invoke_seq",
    "messages",
    "meta",
];

/// True when `v` looks like a state snapshot.
pub fn is_state(v: &Value) -> bool {
    v.get("session_id").is_some_and(Value::is_string)
        && v.get("messages").is_some_and(Value::is_array)
        && v.get("schema_version").is_some()
}

/// Reads a snapshot object into a session.
pub(crate) fn decode(
    path: &Path,
    obj: &Map<String, Value>,
    diags: &mut Vec<Diagnostic>,
) -> Session {
    let mut rest = obj.clone();
    let id = match rest.get("session_id") {
        Some(Value::String(s)) => s.clone(),
        _ => file_stem(path),
    };
    let mut meta = SessionMeta::new(id, Agent::Codelia);
    meta.format = Some("codelia".into());
    meta.format_version = rest.shift_remove("schema_version");
    if meta.format_version != Some(Value::from(super::header::SCHEMA_VERSION)) {
        diags.push(Diagnostic::warning(
            path,
            None,
            "unsupported-schema-version",
            format!(
                "state schema_version {} is not 1; read in best-effort mode",
                meta.format_version.clone().unwrap_or(Value::Null)
            ),
        ));
    }
    if let Some(Value::String(_)) = rest.get("session_id") {
        rest.shift_remove("session_id");
    }
    if let Some(Value::String(u)) = rest.get("updated_at") {
        meta.updated_at = Some(Timestamp::Text(u.clone()));
        rest.shift_remove("updated_at");
    }
    let messages = match rest.shift_remove("messages") {
        Some(Value::Array(m)) => m,
        Some(other) => {
            rest.insert("messages".into(), other);
            Vec::new()
        }
        None => Vec::new(),
    };
    rest.insert(LAYOUT_KEY.into(), Value::String(LAYOUT_STATE.into()));
    meta.extra = rest;
    let mut session = Session::new(meta);
    let mut parent: Option<String> = None;
    for (i, m) in messages.into_iter().enumerate() {
        let id = format!("m{}", i + 1);
        let kind = match message::decode(&m) {
            Some(msg) => EntryKind::Message(msg),
            None => {
                diags.push(Diagnostic::warning(
                    path,
                    None,
                    "unmapped-message",
                    format!("messages[{i}] has a shape agentlog does not map; kept verbatim"),
                ));
                EntryKind::Unknown {
                    record_type: Some("message".into()),
                    raw: m,
                }
            }
        };
        let mut e = Entry::new(id.clone(), parent.take(), kind);
        e.line = Some(i as u64 + 1);
        session.push(e);
        parent = Some(id);
    }
    session
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Returns the snapshot for `session` and what it could not hold.
pub(crate) fn encode(session: &Session) -> (Value, Fidelity) {
    let mut fid = Fidelity::new("codelia");
    let meta = &session.meta;
    let mut extra = meta.extra.clone();
    extra.shift_remove(LAYOUT_KEY);
    let mut known = Map::new();
    known.insert(
        "schema_version".into(),
        meta.format_version.clone().unwrap_or(Value::from(1)),
    );
    known.insert("session_id".into(), Value::String(meta.id.clone()));
    if let Some(u) = meta.updated_at.as_ref().or(meta.created_at.as_ref()) {
        known.insert("updated_at".into(), Value::String(ts_text(u)));
    }
    let mut messages = Vec::new();
    for e in session.active_branch() {
        match &e.kind {
            EntryKind::Message(m) => messages.push(message::encode(m, &mut fid, Some(&e.id))),
            EntryKind::Unknown {
                record_type: Some(t),
                raw,
            } if t == "message" => messages.push(raw.clone()),
            other => fid.lost(format!("{} entries", other.name()), Some(&e.id)),
        }
    }
    known.insert("messages".into(), Value::Array(messages));
    let mut out = Map::new();
    for k in ORDER {
        if let Some(v) = known.shift_remove(k).or_else(|| extra.get(k).cloned()) {
            out.insert(k.into(), v);
        }
    }
    extend_missing(&mut out, &extra);
    (Value::Object(out), fid)
}
