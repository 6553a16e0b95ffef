//! Reads a jido_code session document into a session.

use super::encode;
use super::wire::{text, ts};
use crate::Diagnostic;
use agentlog_model::{
    Agent, Entry, EntryKind, Extra, Message, ModelConfig, Role, Session, SessionMeta, Timestamp,
    Todo,
};
use serde_json::{Map, Value};
use std::path::Path;

/// Reads a session document into the model.
pub fn decode(path: &Path, obj: &Map<String, Value>, diags: &mut Vec<Diagnostic>) -> Session {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut meta = SessionMeta::new(text(obj.get("id")).unwrap_or(stem), Agent::JidoCode);
    meta.format = Some("jido".into());
    meta.format_version = obj.get("version").cloned();
    meta.title = text(obj.get("name"));
    meta.cwd = text(obj.get("project_path"));
    meta.created_at = ts(obj.get("created_at"));
    meta.updated_at = ts(obj.get("updated_at"));
    meta.closed_at = ts(obj.get("closed_at"));
    if let Some(cfg) = obj.get("config").and_then(decode_config) {
        meta.model = cfg;
    }
    if let Some(Value::Array(todos)) = obj.get("todos") {
        if let Some(t) = todos.iter().map(decode_todo).collect::<Option<Vec<_>>>() {
            meta.todos = t;
        }
    }
    if let Some(v) = obj.get("version") {
        if v.as_u64() != Some(super::validate::CURRENT_VERSION) {
            diags.push(Diagnostic::warning(
                path,
                None,
                "unsupported-schema-version",
                format!(
                    "version {v} is not {}; read as is (restore migrates older versions)",
                    super::validate::CURRENT_VERSION
                ),
            ));
        }
    }
    let mut session = Session::new(meta);
    if let Some(Value::Array(msgs)) = obj.get("conversation") {
        let mut parent: Option<String> = None;
        for (i, m) in msgs.iter().enumerate() {
            let mut e = match decode_message(m) {
                Some(e) => e,
                None => {
                    diags.push(Diagnostic::warning(
                        path,
                        None,
                        "unmapped-message",
                        format!("conversation[{i}] is not a message of the expected shape; kept verbatim"),
                    ));
                    Entry::new(
                        format!("conversation-{i}"),
                        None,
                        EntryKind::Unknown {
                            record_type: Some("message".into()),
                            raw: m.clone(),
                        },
                    )
                }
            };
            e.parent_id = parent.take();
            e.line = Some(i as u64 + 1);
            parent = Some(e.id.clone());
            session.push(e);
        }
    }
    // Whatever does not come back the same stays verbatim in `extra`.
    let (back, _) = encode(&session);
    let mut extra = Extra::new();
    for (k, v) in obj {
        if back.get(k) != Some(v) {
            extra.insert(k.clone(), v.clone());
        }
    }
    session.meta.extra = extra;
    session
}

pub(super) fn decode_config(v: &Value) -> Option<ModelConfig> {
    let mut m = v.as_object()?.clone();
    let mut cfg = ModelConfig::default();
    let take_str = |m: &mut Map<String, Value>, k: &str| match m.get(k) {
        Some(Value::String(s)) => {
            let s = s.clone();
            m.shift_remove(k);
            Some(s)
        }
        _ => None,
    };
    cfg.provider = take_str(&mut m, "provider");
    cfg.model = take_str(&mut m, "model");
    if let Some(t) = m.get("temperature").and_then(Value::as_f64) {
        cfg.temperature = Some(t);
        m.shift_remove("temperature");
    }
    if let Some(t) = m.get("max_tokens").and_then(Value::as_u64) {
        cfg.max_tokens = Some(t);
        m.shift_remove("max_tokens");
    }
    cfg.extra = m;
    Some(cfg)
}

pub(super) fn decode_todo(v: &Value) -> Option<Todo> {
    let mut m = v.as_object()?.clone();
    let content = text(m.get("content"))?;
    let status = text(m.get("status"))?;
    let active_form = match m.get("active_form") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return None,
    };
    for k in ["content", "status", "active_form"] {
        m.shift_remove(k);
    }
    Some(Todo {
        content,
        status,
        active_form,
        extra: m,
    })
}

pub(super) fn decode_message(v: &Value) -> Option<Entry> {
    let mut m = v.as_object()?.clone();
    let id = text(m.get("id"))?;
    let role = text(m.get("role"))?;
    let content = text(m.get("content"))?;
    let timestamp = match m.get("timestamp") {
        None => None,
        Some(Value::String(s)) => Some(Timestamp::Text(s.clone())),
        Some(_) => return None,
    };
    for k in ["id", "role", "content", "timestamp"] {
        m.shift_remove(k);
    }
    let mut msg = Message::text(Role::parse(&role), content);
    msg.content_is_text = true;
    msg.extra = m;
    let mut e = Entry::new(id, None, EntryKind::Message(msg));
    e.timestamp = timestamp;
    Some(e)
}
