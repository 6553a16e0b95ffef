//! What Droid's records are made of: the type of a file's first record, the
//! roles and the Anthropic-style content blocks of its messages, and the
//! token usage of the `<id>.settings.json` beside a stored session.

use crate::jsonl;
use agentlog_model::{Block, BlockKind, Extra, Role, Usage};
use serde_json::{Map, Value};

/// The type of the first record, when it is one of Droid's.
pub(super) fn first_type(head: &[u8]) -> Option<(String, Map<String, Value>)> {
    let Some(Value::Object(o)) = jsonl::first_value(head) else {
        return None;
    };
    let ty = o.get("type")?.as_str()?.to_string();
    Some((ty, o))
}

pub(super) fn role_of(s: &str) -> Role {
    match s {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        other => Role::Custom(other.to_string()),
    }
}

/// Key in `Block::extra` of a `tool_result` whose `content` was a string.
pub(super) const CONTENT_STRING: &str = "$content_string";

/// The keys each known block type is made of; others are kept in
/// `Block::extra` and written back.
fn known_keys(ty: &str) -> &'static [&'static str] {
    match ty {
        "text" => &["type", "text"],
        "thinking" => &["type", "thinking", "signature"],
        "tool_use" => &["type", "id", "name", "input"],
        "tool_result" => &["type", "tool_use_id", "content", "is_error"],
        _ => &[],
    }
}

/// One Anthropic-style content block; fields the model has no place for
/// stay in its extras.
pub(super) fn block(v: &Value) -> Block {
    let mut b = modelled_block(v);
    if let (Some(o), false) = (v.as_object(), matches!(b.kind, BlockKind::Other { .. })) {
        let ty = o.get("type").and_then(Value::as_str).unwrap_or_default();
        let known = known_keys(ty);
        for (k, val) in o {
            if !known.contains(&k.as_str()) {
                b.extra.insert(k.clone(), val.clone());
            }
        }
        if ty == "tool_result" && o.get("content").is_some_and(Value::is_string) {
            b.extra.insert(CONTENT_STRING.into(), Value::Bool(true));
        }
    }
    b
}

fn modelled_block(v: &Value) -> Block {
    let other = || Block {
        kind: BlockKind::Other { value: v.clone() },
        extra: Extra::new(),
    };
    let Some(o) = v.as_object() else {
        return other();
    };
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    match o.get("type").and_then(Value::as_str) {
        Some("text") => s("text").map_or_else(other, Block::text),
        Some("thinking") => {
            s("thinking").map_or_else(other, |t| Block::thinking(t, s("signature")))
        }
        Some("tool_use") => match s("name") {
            Some(name) => Block::tool_call(
                s("id"),
                name,
                o.get("input").cloned().unwrap_or(Value::Null),
            ),
            None => other(),
        },
        Some("tool_result") => {
            let content = match o.get("content") {
                Some(Value::String(t)) => vec![Block::text(t.clone())],
                Some(Value::Array(items)) => items.iter().map(block).collect(),
                _ => Vec::new(),
            };
            let failed = o.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            Block::tool_result(s("tool_use_id"), content, failed)
        }
        _ => other(),
    }
}

/// Reads a `tokenUsage` object of Droid's settings file: `inputTokens`
/// (without the cache reads, which Droid counts apart), `outputTokens`,
/// `cacheCreationTokens`, `cacheReadTokens`, `thinkingTokens`.
pub(super) fn usage_of(u: &Value) -> Option<Usage> {
    let o = u.as_object()?;
    let n = |k: &str| o.get(k).and_then(Value::as_u64).unwrap_or(0);
    let usage = Usage {
        input: n("inputTokens"),
        output: n("outputTokens"),
        cache_write: n("cacheCreationTokens"),
        cache_read: n("cacheReadTokens"),
        reasoning: n("thinkingTokens"),
        ..Usage::default()
    };
    (usage != Usage::default()).then_some(usage)
}
