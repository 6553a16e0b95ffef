//! Writes a session as a jido_code session document, in the seed's field
//! order, with a fidelity report.

use super::wire::{ts_text, ORDER};
use crate::Fidelity;
use agentlog_model::{
    BlockKind, Entry, EntryKind, Extra, Message, ModelConfig, Role, Session, SessionMeta,
    Timestamp, Todo,
};
use serde_json::{Map, Value};
use std::path::Path;

/// Returns the document for `session` and what it could not hold.
pub fn encode(session: &Session) -> (Value, Fidelity) {
    let mut fid = Fidelity::new("jido");
    let meta = &session.meta;
    let native = meta.format.as_deref() == Some("jido");
    let s = |v: &str| Value::String(v.to_string());
    let mut known = Map::new();
    match (&meta.format_version, native) {
        (Some(v), true) => {
            known.insert("version".into(), v.clone());
        }
        (None, true) => {}
        (_, false) => {
            known.insert(
                "version".into(),
                Value::from(super::validate::CURRENT_VERSION),
            );
        }
    }
    known.insert("id".into(), s(&meta.id));
    let name = meta.title.clone().or_else(|| {
        (!native).then(|| {
            meta.cwd
                .as_deref()
                .and_then(|c| Path::new(c).file_name())
                .map_or_else(|| meta.id.clone(), |n| n.to_string_lossy().into_owned())
        })
    });
    if let Some(n) = name {
        known.insert("name".into(), s(&n));
    }
    match &meta.cwd {
        Some(c) => {
            known.insert("project_path".into(), s(c));
        }
        None if !native => {
            fid.lost("project path (the source has none; written empty)", None);
            known.insert("project_path".into(), s(""));
        }
        None => {}
    }
    if !meta.model.is_empty() || !native {
        known.insert("config".into(), encode_config(&meta.model));
    }
    let first = session.entries.iter().find_map(|e| e.timestamp.clone());
    let last = session
        .entries
        .iter()
        .rev()
        .find_map(|e| e.timestamp.clone());
    let fill = |t: &Option<Timestamp>, fallback: Option<&Timestamp>| {
        t.as_ref()
            .or(if native { None } else { fallback })
            .map(ts_text)
    };
    let created = fill(&meta.created_at, first.as_ref());
    let updated = fill(&meta.updated_at, last.as_ref().or(meta.created_at.as_ref()));
    let closed = fill(&meta.closed_at, meta.updated_at.as_ref().or(last.as_ref()));
    for (k, v) in [
        ("created_at", created),
        ("updated_at", updated),
        ("closed_at", closed),
    ] {
        if let Some(v) = v {
            known.insert(k.into(), s(&v));
        }
    }
    let conversation = encode_conversation(session, native, &mut fid);
    if !conversation.is_empty() || !native {
        known.insert("conversation".into(), Value::Array(conversation));
    }
    if !meta.todos.is_empty() || !native {
        known.insert(
            "todos".into(),
            Value::Array(meta.todos.iter().map(|t| encode_todo(t, native)).collect()),
        );
    }
    if !native {
        report_foreign_meta(meta, &mut fid);
    }
    let empty = Extra::new();
    let extra = if native { &meta.extra } else { &empty };
    let mut out = Map::new();
    for k in ORDER {
        if let Some(v) = extra.get(k).cloned().or_else(|| known.get(k).cloned()) {
            out.insert(k.into(), v);
        }
    }
    for (k, v) in extra {
        if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
    (Value::Object(out), fid)
}

pub(super) fn encode_config(m: &ModelConfig) -> Value {
    let mut o = Map::new();
    if let Some(p) = &m.provider {
        o.insert("provider".into(), Value::String(p.clone()));
    }
    if let Some(p) = &m.model {
        o.insert("model".into(), Value::String(p.clone()));
    }
    if let Some(t) = m.temperature {
        o.insert(
            "temperature".into(),
            serde_json::Number::from_f64(t).map_or(Value::Null, Value::Number),
        );
    }
    if let Some(t) = m.max_tokens {
        o.insert("max_tokens".into(), Value::from(t));
    }
    for (k, v) in &m.extra {
        o.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Value::Object(o)
}

pub(super) fn encode_todo(t: &Todo, native: bool) -> Value {
    let mut o = Map::new();
    o.insert("content".into(), Value::String(t.content.clone()));
    o.insert("status".into(), Value::String(t.status.clone()));
    if let Some(a) = &t.active_form {
        o.insert("active_form".into(), Value::String(a.clone()));
    }
    if native {
        for (k, v) in &t.extra {
            o.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    Value::Object(o)
}

pub(super) fn encode_conversation(
    session: &Session,
    native: bool,
    fid: &mut Fidelity,
) -> Vec<Value> {
    // One chain: no entry with two children and a single root.
    let tree = session.tree();
    let linear = tree.branch_points().is_empty() && tree.roots().len() <= 1;
    let entries: Vec<&Entry> = if linear {
        session.entries.iter().collect()
    } else {
        let branch = session.active_branch();
        let off = session.entries.len().saturating_sub(branch.len());
        for _ in 0..off {
            fid.lost("entries off the active branch", None);
        }
        branch
    };
    let mut out = Vec::new();
    for e in entries {
        // The messages agentlog reads out of a codelia run log's records:
        // the run's input and final answer below are its turns for jido.
        if e.extra.contains_key(crate::codelia::DERIVED_FROM) {
            continue;
        }
        match &e.kind {
            EntryKind::Message(m) => {
                if let Some(v) = encode_message(e, m, native, fid) {
                    out.push(v);
                }
            }
            EntryKind::Unknown {
                record_type: Some(t),
                raw,
            } if native && t == "message" => out.push(raw.clone()),
            // A run's input and final answer are its user and assistant
            // turns (codelia run logs hold no messages otherwise).
            EntryKind::RunStart { input, .. }
                if !native && input.get("text").is_some_and(Value::is_string) =>
            {
                fid.lost(
                    "run_start entries (only the input text kept, as a user message)",
                    Some(&e.id),
                );
                let text = input
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let m = Message::text(Role::User, text);
                out.extend(encode_message(&turn_of(e), &m, native, fid));
            }
            EntryKind::RunEnd {
                final_text: Some(text),
                ..
            } if !native => {
                fid.lost(
                    "run_end entries (only the final answer kept, as an assistant message)",
                    Some(&e.id),
                );
                let m = Message::text(Role::Assistant, text.clone());
                out.extend(encode_message(&turn_of(e), &m, native, fid));
            }
            other => fid.lost(format!("{} entries", other.name()), Some(&e.id)),
        }
    }
    out
}

/// Returns an entry with only the id and time of `e`, for a message made
/// from a run record.
pub(super) fn turn_of(e: &Entry) -> Entry {
    let mut t = Entry::new(e.id.clone(), None, EntryKind::Resume);
    t.timestamp = e.timestamp.clone();
    t
}

pub(super) fn encode_message(
    e: &Entry,
    m: &Message,
    native: bool,
    fid: &mut Fidelity,
) -> Option<Value> {
    let role = match &m.role {
        Role::User | Role::Assistant | Role::System | Role::Tool => m.role.as_str().to_string(),
        Role::Developer => {
            fid.lost("developer role (written as system)", Some(&e.id));
            "system".to_string()
        }
        Role::Custom(r) if native => r.clone(),
        Role::Custom(r) => {
            fid.lost(format!("messages with role {r}"), Some(&e.id));
            return None;
        }
    };
    let mut parts: Vec<String> = Vec::new();
    for b in &m.content {
        match &b.kind {
            BlockKind::Text { text } => parts.push(text.clone()),
            BlockKind::ToolResult { .. } if m.role == Role::Tool => {
                parts.extend(b.plain_text());
            }
            BlockKind::Thinking { .. } => fid.lost("thinking", Some(&e.id)),
            BlockKind::ToolCall { .. } => fid.lost("tool calls", Some(&e.id)),
            BlockKind::ToolResult { .. } => fid.lost("tool results", Some(&e.id)),
            BlockKind::Image { .. } => fid.lost("images", Some(&e.id)),
            BlockKind::Other { .. } => fid.lost("content blocks of other kinds", Some(&e.id)),
        }
        if !native && !b.extra.is_empty() {
            fid.lost("native fields of content blocks", Some(&e.id));
        }
    }
    if parts.len() > 1 {
        fid.lost(
            "block structure (text blocks joined into one string)",
            Some(&e.id),
        );
    }
    let mut o = Map::new();
    o.insert("id".into(), Value::String(e.id.clone()));
    o.insert("role".into(), Value::String(role));
    o.insert("content".into(), Value::String(parts.join("\n\n")));
    match e.timestamp.as_ref().or(m.timestamp.as_ref()) {
        Some(t) => {
            o.insert("timestamp".into(), Value::String(ts_text(t)));
        }
        None if !native => fid.lost("message timestamps (the source has none)", Some(&e.id)),
        None => {}
    }
    if native {
        for (k, v) in &m.extra {
            o.entry(k.clone()).or_insert_with(|| v.clone());
        }
    } else {
        if m.usage.is_some() {
            fid.lost("token usage", Some(&e.id));
        }
        if !m.extra.is_empty() || !e.extra.is_empty() {
            fid.lost("native fields of messages", Some(&e.id));
        }
    }
    Some(Value::Object(o))
}

pub(super) fn report_foreign_meta(meta: &SessionMeta, fid: &mut Fidelity) {
    if meta.model.thinking_level.is_some() {
        fid.lost("thinking level", None);
    }
    if meta.parent_session.is_some() {
        fid.lost("parent session", None);
    }
    if meta.agent_version.is_some() {
        fid.lost("agent version", None);
    }
    if !meta.extra.is_empty() || !meta.model.extra.is_empty() {
        fid.lost("native session fields of the source format", None);
    }
}
