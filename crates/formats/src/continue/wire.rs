//! What Continue's session files are made of: the index's name and the
//! usage of a message.

use agentlog_model::Usage;
use serde_json::Value;

/// The list of sessions beside them (not a session).
pub(super) const INDEX: &str = "sessions.json";

/// The title Continue gives a session it has not named.
pub(super) const UNTITLED: &str = "Untitled Session";

fn num(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// Reads a message's `usage`: `prompt_tokens` includes the cached ones
/// (`prompt_tokens_details.cached_tokens`), `completion_tokens` the
/// reasoning (`completion_tokens_details.reasoning_tokens`).
pub(super) fn usage_of(u: &Value) -> Usage {
    let cache_read = num(u.pointer("/prompt_tokens_details/cached_tokens"));
    Usage {
        input: num(u.get("prompt_tokens")).saturating_sub(cache_read),
        output: num(u.get("completion_tokens")),
        cache_read,
        reasoning: num(u.pointer("/completion_tokens_details/reasoning_tokens")),
        total: u.get("total_tokens").and_then(Value::as_u64),
        ..Usage::default()
    }
}
