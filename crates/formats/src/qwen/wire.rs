//! What Qwen Code's chat records are made of: the record types, subtypes,
//! parts and fields seen in real files, and the readers of their values
//! (usage metadata, strings kept out of the extra fields).

use agentlog_model::{Block, BlockKind, Extra, Usage};
use serde_json::{Map, Value};

/// The record types and fields seen in real Qwen Code files (0.24.4); the
/// drift report names the others.
pub const KNOWN: &[(&str, &[&str])] = &[
    (
        "user",
        &[
            "cwd",
            "message",
            "parentUuid",
            "provenance",
            "sessionId",
            "timestamp",
            "type",
            "uuid",
            "version",
        ],
    ),
    (
        "assistant",
        &[
            "cwd",
            "message",
            "model",
            "parentUuid",
            "provenance",
            "sessionId",
            "timestamp",
            "type",
            "usageMetadata",
            "uuid",
            "version",
        ],
    ),
    (
        "tool_result",
        &[
            "cwd",
            "message",
            "parentUuid",
            "provenance",
            "sessionId",
            "timestamp",
            "toolCallResult",
            "type",
            "uuid",
            "version",
        ],
    ),
    (
        "system",
        &[
            "cwd",
            "parentUuid",
            "provenance",
            "sessionId",
            "subtype",
            "systemPayload",
            "timestamp",
            "type",
            "uuid",
            "version",
        ],
    ),
];

/// System record subtypes seen in real files.
pub const KNOWN_SUBTYPES: &[&str] = &["ui_telemetry", "attribution_snapshot"];

/// Part kinds (the key that makes a part what it is) seen in real files.
pub const KNOWN_PARTS: &[&str] = &["text", "functionCall", "functionResponse"];

pub(super) fn take_string(obj: &mut Map<String, Value>, key: &str) -> Option<String> {
    match obj.get(key) {
        Some(Value::String(_)) => match obj.remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

fn num(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// Reads `usageMetadata`.
pub fn usage_of(u: &Value) -> Usage {
    let prompt = num(u.get("promptTokenCount"));
    let cached = num(u.get("cachedContentTokenCount"));
    let candidates = num(u.get("candidatesTokenCount"));
    let thoughts = num(u.get("thoughtsTokenCount"));
    let total = u.get("totalTokenCount").and_then(Value::as_u64);
    // Gemini's own counts leave thoughts out of the candidates (the total
    // adds them); the OpenAI-compatible path counts them in.
    let output = if total == Some(prompt + candidates + thoughts) && thoughts > 0 {
        candidates + thoughts
    } else {
        candidates
    };
    Usage {
        input: prompt.saturating_sub(cached),
        output,
        cache_read: cached,
        reasoning: thoughts,
        total,
        ..Usage::default()
    }
}

/// Keys of an object, when it has exactly keys from `allowed`.
pub(super) fn only_keys(v: &Value, allowed: &[&str]) -> bool {
    v.as_object()
        .is_some_and(|o| o.keys().all(|k| allowed.contains(&k.as_str())))
}

pub(super) fn other(v: Value) -> Block {
    Block {
        kind: BlockKind::Other { value: v },
        extra: Extra::new(),
    }
}
