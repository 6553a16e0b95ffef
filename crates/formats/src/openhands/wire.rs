//! What OpenHands' event store is made of: its folder names and the usage
//! of a model response.

use agentlog_model::Usage;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The folder of a session's events.
pub(super) const EVENTS: &str = "events";

/// The `events` folder `path` names: the folder itself, or the folder of
/// one of its event files.
pub(super) fn events_dir(path: &Path) -> Option<PathBuf> {
    if path.file_name().is_some_and(|n| n == EVENTS) {
        return Some(path.to_path_buf());
    }
    let parent = path.parent()?;
    let numbered = path
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    (numbered && parent.file_name().is_some_and(|n| n == EVENTS)).then(|| parent.to_path_buf())
}

fn num(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// Reads a model response's `usage` (OpenAI's shape, through LiteLLM):
/// `prompt_tokens` includes the cached ones, `completion_tokens` the
/// reasoning.
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
