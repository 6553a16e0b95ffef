//! What Cline's session files are made of: their names and the readers of
//! their fields (usage metrics, strings kept out of a block's extra fields).

use agentlog_model::{Block, BlockKind, Extra, Usage};
use serde_json::Value;

/// Marks a result whose content was one string.
pub(super) const CONTENT_STRING: &str = "$content_string";
/// Holds a result's content that was neither a string nor items.
pub(super) const CONTENT_VALUE: &str = "$content_value";
/// Marks a result item that was not a plain text block (its text is the
/// item's JSON).
pub(super) const ITEM_JSON: &str = "$item_json";

/// The suffix of message files.
pub(super) const MESSAGES: &str = ".messages.json";

pub(super) fn num(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// Reads `metrics`.
pub fn usage_of(m: &Value) -> Usage {
    let cache_read = num(m.get("cacheReadTokens"));
    Usage {
        input: num(m.get("inputTokens")).saturating_sub(cache_read),
        output: num(m.get("outputTokens")),
        cache_read,
        cache_write: num(m.get("cacheWriteTokens")),
        cost_usd: m.get("cost").and_then(Value::as_f64).filter(|c| *c > 0.0),
        ..Usage::default()
    }
}

pub(super) fn other(v: Value) -> Block {
    Block {
        kind: BlockKind::Other { value: v },
        extra: Extra::new(),
    }
}

pub(super) use crate::chat::take_string as take_str;
