//! What both of Vibe's layouts share: file names, the session's
//! `meta.json`, and where the session's token totals go.

use agentlog_model::{Session, SessionMeta, Timestamp, Usage};
use serde_json::{Map, Value};
use std::path::Path;

/// A session's metadata file (both layouts).
pub(super) const META: &str = "meta.json";
/// The 3.x store's pointer to its newest generation.
pub(super) const CURRENT: &str = "CURRENT";
/// A 2.x session's messages.
pub(super) const MESSAGES: &str = "messages.jsonl";

/// The fields of a 2.x message line left after reading (the message shape
/// 2.x's `meta.json` shows in its `system_prompt`).
pub(super) const LEGACY_FIELDS: &[&str] = &[
    "content",
    "images",
    "injected",
    "name",
    "reasoning_message_id",
    "reasoning_state",
    "tool_call_id",
    "user_display_content",
];

/// The fields of a 3.x history `message` entry left after reading.
pub(super) const ENTRY_FIELDS: &[&str] = &[
    "content",
    "createdAt",
    "generationStatus",
    "inputEntryId",
    "outcome",
    "relatedEntryId",
    "sessionId",
    "source",
    "turnId",
    "updatedAt",
];

/// As [`ENTRY_FIELDS`], for a `reasoning` entry.
pub(super) const REASONING_FIELDS: &[&str] = &[
    "createdAt",
    "generationStatus",
    "inputEntryId",
    "outcome",
    "relatedEntryId",
    "sessionId",
    "summary",
    "turnId",
    "updatedAt",
];

/// As [`ENTRY_FIELDS`], for an `effect` entry (a tool run).
pub(super) const EFFECT_FIELDS: &[&str] = &[
    "createdAt",
    "detail",
    "generationStatus",
    "inputEntryId",
    "relatedEntryId",
    "sessionId",
    "state",
    "title",
    "turnId",
    "updatedAt",
];

pub(super) fn num(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

pub(super) use crate::chat::take_string;

/// Fills `meta` from a parsed `meta.json` and keeps the whole document in
/// `meta.extra["meta_file"]`.
pub(super) fn apply_meta(doc: Map<String, Value>, meta: &mut SessionMeta) {
    let s = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
    if let Some(id) = s("session_id") {
        meta.id = id;
    }
    meta.created_at = s("start_time").map(Timestamp::Text);
    meta.closed_at = s("end_time").map(Timestamp::Text);
    meta.title = s("title").filter(|t| !t.trim().is_empty());
    meta.parent_session = s("parent_session_id");
    meta.cwd = doc
        .get("environment")
        .and_then(|e| e.get("working_directory"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| s("origin_directory"));
    if let Some(config) = doc.get("config") {
        meta.model.model = config
            .get("model_name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| model_of_alias(config));
    }
    meta.extra.insert("meta_file".into(), Value::Object(doc));
}

/// The model of 2.x's `config`: the `models` entry whose alias is the
/// `active_model`.
fn model_of_alias(config: &Value) -> Option<String> {
    let active = config.get("active_model")?.as_str()?;
    config
        .get("models")?
        .as_array()?
        .iter()
        .find(|m| m.get("alias").and_then(Value::as_str) == Some(active))
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Reads the `meta.json` at `path` (a missing or unreadable one is left out:
/// the caller names the session from its directory).
pub(super) fn read_meta(path: &Path) -> Option<Map<String, Value>> {
    let bytes = crate::input::read_file(path).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// Puts the session's token totals on its last answer: Vibe records no
/// usage per answer.
pub(super) fn put_total_usage(session: &mut Session, usage: Usage) {
    if usage.sum() == 0 {
        return;
    }
    if let Some(m) = session.last_answer_mut() {
        m.usage = Some(usage);
    }
}
