//! What an ATIF trajectory is made of (Harbor's RFC 0001, ATIF-v1.8, as
//! its Pydantic models in `harbor.models.trajectories` define it): the
//! fields of each object, the step sources, and how a step's `metrics`
//! hold a model response's tokens.

use agentlog_model::Usage;
use serde_json::{Map, Value};

/// The schema version the writer writes (the newest Harbor knows).
pub(super) const SCHEMA_VERSION: &str = "ATIF-v1.8";

/// Every version Harbor's models accept.
pub(super) const VERSIONS: &[&str] = &[
    "ATIF-v1.0",
    "ATIF-v1.1",
    "ATIF-v1.2",
    "ATIF-v1.3",
    "ATIF-v1.4",
    "ATIF-v1.5",
    "ATIF-v1.6",
    "ATIF-v1.7",
    "ATIF-v1.8",
];

/// The fields of the root object.
pub(super) const ROOT_FIELDS: &[&str] = &[
    "schema_version",
    "session_id",
    "trajectory_id",
    "agent",
    "steps",
    "notes",
    "final_metrics",
    "continued_trajectory_ref",
    "extra",
    "subagent_trajectories",
];

/// The fields of a step.
pub(super) const STEP_FIELDS: &[&str] = &[
    "step_id",
    "timestamp",
    "source",
    "model_name",
    "reasoning_effort",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
    "is_copied_context",
    "llm_call_count",
    "extra",
];

/// The image types an image part may have.
pub(super) const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The key of a step's `metrics.extra` (and, summed, of
/// `final_metrics.extra` with `total_` before it) under which prompt tokens
/// written to the cache are counted, as Harbor's Claude Code converter
/// writes them; its Codex converter writes [`CACHE_WRITE_ALT`].
pub(super) const CACHE_WRITE: &str = "cache_creation_input_tokens";
/// Harbor's Codex converter's name for [`CACHE_WRITE`].
pub(super) const CACHE_WRITE_ALT: &str = "cache_write_input_tokens";
/// The key of `metrics.extra` for reasoning tokens (counted in
/// `completion_tokens`), as Harbor's Codex converter writes it.
pub(super) const REASONING: &str = "reasoning_output_tokens";

/// Where the reader keeps a step's `metrics` object whole, in the usage's
/// extra fields, so that a trajectory is written back as it was.
pub(super) const KEPT_METRICS: &str = "atif_metrics";

/// Returns the count under `key` of `map`, when it is a count.
fn count(map: &Map<String, Value>, key: &str) -> Option<u64> {
    map.get(key).and_then(Value::as_u64)
}

/// Returns the usage a step's `metrics` say: `prompt_tokens` include the
/// cached ones (`cached_tokens`) and those written to the cache (counted
/// apart in `extra`), which the model's `input` does not.
pub(super) fn usage_of(metrics: &Map<String, Value>) -> Usage {
    let extra = metrics.get("extra").and_then(Value::as_object);
    let from_extra = |k: &str| extra.and_then(|e| count(e, k));
    let cache_read = count(metrics, "cached_tokens").unwrap_or(0);
    let cache_write = from_extra(CACHE_WRITE)
        .or_else(|| from_extra(CACHE_WRITE_ALT))
        .unwrap_or(0);
    let prompt = count(metrics, "prompt_tokens").unwrap_or(0);
    Usage {
        input: prompt
            .saturating_sub(cache_read)
            .saturating_sub(cache_write),
        output: count(metrics, "completion_tokens").unwrap_or(0),
        cache_read,
        cache_write,
        reasoning: from_extra(REASONING).unwrap_or(0),
        total: None,
        cost_usd: metrics.get("cost_usd").and_then(Value::as_f64),
        extra: Default::default(),
    }
}

/// Returns the `metrics` of a step for `usage` (a sum of `calls` model
/// responses).
pub(super) fn metrics_of(usage: &Usage) -> Map<String, Value> {
    let mut m = Map::new();
    let prompt = usage
        .input
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write);
    m.insert("prompt_tokens".into(), prompt.into());
    m.insert("completion_tokens".into(), usage.output.into());
    m.insert("cached_tokens".into(), usage.cache_read.into());
    if let Some(c) = usage.cost_usd.filter(|c| c.is_finite()) {
        m.insert("cost_usd".into(), c.into());
    }
    let mut extra = Map::new();
    if usage.cache_write > 0 {
        extra.insert(CACHE_WRITE.into(), usage.cache_write.into());
    }
    if usage.reasoning > 0 {
        extra.insert(REASONING.into(), usage.reasoning.into());
    }
    if !extra.is_empty() {
        m.insert("extra".into(), Value::Object(extra));
    }
    m
}

/// True when `a` and `b` count the same tokens and cost.
pub(super) fn same_counts(a: &Usage, b: &Usage) -> bool {
    (
        a.input,
        a.output,
        a.cache_read,
        a.cache_write,
        a.reasoning,
        a.cost_usd,
    ) == (
        b.input,
        b.output,
        b.cache_read,
        b.cache_write,
        b.reasoning,
        b.cost_usd,
    )
}

/// True when `head`, the first bytes of a file, look like an ATIF
/// trajectory: a JSON object naming an ATIF schema version or with the
/// root fields every trajectory has.
pub(super) fn looks_like(head: &str) -> bool {
    let t = head.trim_start();
    if !t.starts_with('{') {
        return false;
    }
    let has = |k: &str| t.contains(&format!("\"{k}\""));
    (t.contains("\"ATIF-v") && has("schema_version"))
        || (has("steps") && has("agent") && has("step_id") && has("source"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_and_usage_say_the_same_tokens() {
        let u = Usage {
            input: 10,
            output: 5,
            cache_read: 100,
            cache_write: 7,
            reasoning: 2,
            cost_usd: Some(0.5),
            ..Usage::default()
        };
        let m = metrics_of(&u);
        assert_eq!(m["prompt_tokens"], 117);
        assert!(same_counts(&usage_of(&m), &u));
    }
}
