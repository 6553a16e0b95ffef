//! What OpenCode's database rows are made of: the message, part and
//! session fields seen in real databases, the part types kept as they
//! are, and the readers of their values (token counts and cost, times).

use agentlog_model::{Timestamp, Usage};
use serde_json::{Map, Value};

/// What real databases of the versions verified (OpenCode 1.18.33, Kilo
/// 7.7.7) hold: message fields by role, part fields by part type, and
/// session columns. The drift report names everything else.
pub const KNOWN_MESSAGE: &[(&str, &[&str])] = &[
    (
        "user",
        &["role", "time", "agent", "model", "summary", "tools"],
    ),
    (
        "assistant",
        &[
            "role",
            "time",
            "agent",
            "mode",
            "path",
            "parentID",
            "modelID",
            "providerID",
            "finish",
            "cost",
            "tokens",
        ],
    ),
];

/// Part fields by part type (see [`KNOWN_MESSAGE`]).
pub const KNOWN_PART: &[(&str, &[&str])] = &[
    ("text", &["id", "type", "text", "time"]),
    ("reasoning", &["id", "type", "text", "time"]),
    ("tool", &["id", "type", "tool", "callID", "state"]),
    (
        "tool.state",
        &["status", "input", "output", "metadata", "title", "time"],
    ),
    ("step-start", &["id", "type", "time"]),
    (
        "step-finish",
        &["id", "type", "reason", "tokens", "cost", "time", "metrics"],
    ),
];

/// Session columns (see [`KNOWN_MESSAGE`]).
pub const KNOWN_SESSION: &[&str] = &[
    "agent",
    "cost",
    "directory",
    "id",
    "metadata",
    "model",
    "parent_id",
    "path",
    "permission",
    "project_id",
    "revert",
    "share_url",
    "slug",
    "summary_additions",
    "summary_deletions",
    "summary_diffs",
    "summary_files",
    "time_archived",
    "time_compacting",
    "time_created",
    "time_updated",
    "title",
    "tokens_cache_read",
    "tokens_cache_write",
    "tokens_input",
    "tokens_output",
    "tokens_reasoning",
    "version",
    "workspace_id",
];

/// Bookkeeping part types kept in the message's extras.
pub const KEPT_PARTS: &[&str] = &[
    "step-start",
    "step-finish",
    "snapshot",
    "patch",
    "agent",
    "subtask",
    "retry",
    "compaction",
];

pub(super) fn millis(v: Option<&Value>) -> Option<Timestamp> {
    v.and_then(Value::as_i64).map(Timestamp::Millis)
}

fn num(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// Reads OpenCode's `tokens` object.
pub fn usage_of(tokens: &Value, cost: Option<&Value>) -> Usage {
    let reasoning = num(tokens.get("reasoning"));
    let cache = tokens.get("cache");
    Usage {
        input: num(tokens.get("input")),
        output: num(tokens.get("output")) + reasoning,
        cache_read: num(cache.and_then(|c| c.get("read"))),
        cache_write: num(cache.and_then(|c| c.get("write"))),
        reasoning,
        total: tokens.get("total").and_then(Value::as_u64),
        cost_usd: cost.and_then(Value::as_f64).filter(|c| *c > 0.0),
        ..Usage::default()
    }
}

pub(super) fn take_str(p: &mut Map<String, Value>, k: &str) -> String {
    match p.remove(k) {
        Some(Value::String(s)) => s,
        Some(other) => {
            p.insert(k.to_string(), other);
            String::new()
        }
        None => String::new(),
    }
}
