//! What Kimi's session files are made of: their names, its own record
//! roles, and the usage of a `StatusUpdate`.

use agentlog_model::Usage;
use serde_json::Value;

/// The model context: the session's file.
pub(super) const CONTEXT: &str = "context.jsonl";
/// The UI's event stream beside it.
pub(super) const WIRE: &str = "wire.jsonl";
/// The session's state beside it.
pub(super) const STATE: &str = "state.json";

/// Kimi's own record roles (kept as events, named without the `_`).
pub(super) const OWN_RECORDS: &[&str] = &["checkpoint", "usage"];

/// Message fields left after reading, in the versions verified.
pub(super) const MESSAGE_FIELDS: &[&str] = &["content", "name"];

fn num(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// Reads a `StatusUpdate`'s `token_usage`.
pub(super) fn usage_of(t: &Value) -> Usage {
    Usage {
        input: num(t.get("input_other")),
        output: num(t.get("output")),
        cache_read: num(t.get("input_cache_read")),
        cache_write: num(t.get("input_cache_creation")),
        ..Usage::default()
    }
}

/// A wire timestamp (seconds since the epoch, fractional) in milliseconds.
pub(super) fn millis(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_f64)
        .map(|s| (s * 1000.0).round() as i64)
}
