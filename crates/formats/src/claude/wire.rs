//! The Claude Code line shapes and their conversion to and from the model.
//!
//! Claude records are handled as JSON values rather than fixed structs:
//! every version adds fields, and a lossless round-trip must give back all
//! of them. The conversions here map what the model has a place for and
//! leave the rest in the `extra` maps; [`diff`] and [`apply`] record, per
//! line, whatever a rebuilt line still differs in (a key the record did not
//! have, a chunk of a streamed response), so writing a read session gives
//! back the same JSON values.

use agentlog_model::{Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Usage};
use serde_json::{Map, Value};

/// The key under which a read entry keeps what is needed to write its lines
/// back exactly (in `Entry::extra` and `Block::extra`). Never native.
pub(crate) const MARK: &str = "agentlog:claude";

// ---------------------------------------------------------------- patches

/// Returns the patch that turns `rebuilt` into `raw`, or `None` when they
/// are equal. Objects and same-length arrays are compared key by key, so a
/// patch names only what differs.
pub(crate) fn diff(raw: &Value, rebuilt: &Value) -> Option<Value> {
    if raw == rebuilt {
        return None;
    }
    let mut set = Map::new();
    let mut unset = Vec::new();
    let mut at = Map::new();
    match (raw, rebuilt) {
        (Value::Object(r), Value::Object(b)) => {
            for (k, rv) in r {
                match b.get(k) {
                    None => {
                        set.insert(k.clone(), rv.clone());
                    }
                    Some(bv) if bv == rv => {}
                    Some(bv) if nestable(rv, bv) => {
                        if let Some(p) = diff(rv, bv) {
                            at.insert(k.clone(), p);
                        }
                    }
                    Some(_) => {
                        set.insert(k.clone(), rv.clone());
                    }
                }
            }
            for k in b.keys() {
                if !r.contains_key(k) {
                    unset.push(Value::String(k.clone()));
                }
            }
        }
        (Value::Array(r), Value::Array(b)) if r.len() == b.len() => {
            for (i, (rv, bv)) in r.iter().zip(b).enumerate() {
                if rv == bv {
                    continue;
                }
                if nestable(rv, bv) {
                    if let Some(p) = diff(rv, bv) {
                        at.insert(i.to_string(), p);
                    }
                } else {
                    set.insert(i.to_string(), rv.clone());
                }
            }
        }
        _ => {
            let mut p = Map::new();
            p.insert("value".into(), raw.clone());
            return Some(Value::Object(p));
        }
    }
    let mut p = Map::new();
    if !set.is_empty() {
        p.insert("set".into(), Value::Object(set));
    }
    if !unset.is_empty() {
        p.insert("unset".into(), Value::Array(unset));
    }
    if !at.is_empty() {
        p.insert("at".into(), Value::Object(at));
    }
    Some(Value::Object(p))
}

fn nestable(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(_), Value::Object(_)) => true,
        (Value::Array(x), Value::Array(y)) => x.len() == y.len(),
        _ => false,
    }
}

/// Applies a patch made by [`diff`] to `target`.
pub(crate) fn apply(target: &mut Value, patch: &Value) {
    let Some(p) = patch.as_object() else { return };
    if let Some(v) = p.get("value") {
        *target = v.clone();
        return;
    }
    match target {
        Value::Object(o) => {
            if let Some(Value::Array(keys)) = p.get("unset") {
                for k in keys.iter().filter_map(Value::as_str) {
                    o.remove(k);
                }
            }
            if let Some(Value::Object(set)) = p.get("set") {
                for (k, v) in set {
                    o.insert(k.clone(), v.clone());
                }
            }
            if let Some(Value::Object(at)) = p.get("at") {
                for (k, sub) in at {
                    if let Some(t) = o.get_mut(k) {
                        apply(t, sub);
                    }
                }
            }
        }
        Value::Array(a) => {
            let index = |k: &str| k.parse::<usize>().ok();
            if let Some(Value::Object(set)) = p.get("set") {
                for (k, v) in set {
                    if let Some(t) = index(k).and_then(|i| a.get_mut(i)) {
                        *t = v.clone();
                    }
                }
            }
            if let Some(Value::Object(at)) = p.get("at") {
                for (k, sub) in at {
                    if let Some(t) = index(k).and_then(|i| a.get_mut(i)) {
                        apply(t, sub);
                    }
                }
            }
        }
        _ => {}
    }
}

// ----------------------------------------------------------------- blocks

/// Moves the fields of `o` into the model: `take` is given each key and
/// value in order and keeps what it uses; what it gives back is the rest,
/// returned in its order. Nothing is copied (copying every field of every
/// record was a large part of reading a session).
pub(crate) fn sift(
    o: Map<String, Value>,
    mut take: impl FnMut(&str, Value) -> Option<Value>,
) -> Extra {
    o.into_iter()
        .filter_map(|(k, v)| take(&k, v).map(|v| (k, v)))
        .collect()
}

fn other(v: Value) -> Block {
    Block {
        kind: BlockKind::Other { value: v },
        extra: Extra::new(),
    }
}

fn is_str(o: &Map<String, Value>, k: &str) -> bool {
    o.get(k).is_some_and(Value::is_string)
}

fn absent_or_str(o: &Map<String, Value>, k: &str) -> bool {
    o.get(k).is_none_or(Value::is_string)
}

/// Converts one native content block, moving its parts into the model.
/// Shapes the model cannot hold exactly become [`BlockKind::Other`] with
/// the block verbatim.
pub(crate) fn block_from_native(v: Value) -> Block {
    let o = match v {
        Value::Object(o) => o,
        v => return other(v),
    };
    match o.get("type").and_then(Value::as_str) {
        Some("text") if is_str(&o, "text") => {
            let mut text = String::new();
            let extra = sift(o, |k, v| match (k, v) {
                ("type", _) => None,
                ("text", Value::String(s)) => {
                    text = s;
                    None
                }
                (_, v) => Some(v),
            });
            Block {
                kind: BlockKind::Text { text },
                extra,
            }
        }
        Some("thinking") if is_str(&o, "thinking") && absent_or_str(&o, "signature") => {
            let (mut text, mut signature) = (String::new(), None);
            let extra = sift(o, |k, v| match (k, v) {
                ("type", _) => None,
                ("thinking", Value::String(s)) => {
                    text = s;
                    None
                }
                ("signature", Value::String(s)) => {
                    signature = Some(s);
                    None
                }
                (_, v) => Some(v),
            });
            Block {
                kind: BlockKind::Thinking {
                    text,
                    signature,
                    redacted: false,
                },
                extra,
            }
        }
        Some("redacted_thinking") => Block {
            kind: BlockKind::Thinking {
                text: String::new(),
                signature: None,
                redacted: true,
            },
            extra: sift(o, |k, v| (k != "type").then_some(v)),
        },
        Some("tool_use")
            if is_str(&o, "name") && absent_or_str(&o, "id") && o.contains_key("input") =>
        {
            let (mut id, mut name, mut input) = (None, String::new(), Value::Null);
            let extra = sift(o, |k, v| match (k, v) {
                ("type", _) => None,
                ("id", Value::String(s)) => {
                    id = Some(s);
                    None
                }
                ("name", Value::String(s)) => {
                    name = s;
                    None
                }
                ("input", v) => {
                    input = v;
                    None
                }
                (_, v) => Some(v),
            });
            Block {
                kind: BlockKind::ToolCall { id, name, input },
                extra,
            }
        }
        Some("tool_result")
            if absent_or_str(&o, "tool_use_id")
                && matches!(
                    o.get("content"),
                    None | Some(Value::String(_)) | Some(Value::Array(_))
                ) =>
        {
            let (mut tool_call_id, mut content, mut is_error) = (None, None, None);
            let mut extra = sift(o, |k, v| match (k, v) {
                ("type", _) => None,
                ("tool_use_id", Value::String(s)) => {
                    tool_call_id = Some(s);
                    None
                }
                ("content", v) => {
                    content = Some(v);
                    None
                }
                ("is_error", v) => {
                    is_error = Some(v);
                    None
                }
                (_, v) => Some(v),
            });
            let content = match content {
                Some(Value::String(s)) => {
                    let mut m = Map::new();
                    m.insert("content_is_text".into(), Value::Bool(true));
                    extra.insert(MARK.into(), Value::Object(m));
                    vec![Block::text(s)]
                }
                Some(Value::Array(items)) => items.into_iter().map(block_from_native).collect(),
                _ => Vec::new(),
            };
            let is_error = match is_error {
                Some(Value::Bool(b)) => b,
                None => false,
                // Kept verbatim in extra; written back as it was.
                Some(x) => {
                    extra.insert("is_error".into(), x);
                    false
                }
            };
            Block {
                kind: BlockKind::ToolResult {
                    tool_call_id,
                    content,
                    is_error,
                },
                extra,
            }
        }
        Some("image") => {
            // A source the model holds exactly: base64 data with its type,
            // or a URL, and nothing else.
            let fits = o
                .get("source")
                .and_then(Value::as_object)
                .is_some_and(|src| {
                    let is = |k: &str| is_str(src, k);
                    match src.get("type").and_then(Value::as_str) {
                        Some("base64") => src.len() == 3 && is("media_type") && is("data"),
                        Some("url") => src.len() == 2 && is("url"),
                        _ => false,
                    }
                });
            if !fits {
                return other(Value::Object(o));
            }
            let mut source = Map::new();
            let extra = sift(o, |k, v| match (k, v) {
                ("type", _) => None,
                ("source", Value::Object(src)) => {
                    source = src;
                    None
                }
                (_, v) => Some(v),
            });
            let mut text = |k: &str| match source.remove(k) {
                Some(Value::String(s)) => Some(s),
                _ => None,
            };
            let kind = match text("url") {
                Some(url) => BlockKind::Image {
                    media_type: None,
                    data: None,
                    url: Some(url),
                },
                None => BlockKind::Image {
                    media_type: text("media_type"),
                    data: text("data"),
                    url: None,
                },
            };
            Block { kind, extra }
        }
        _ => other(Value::Object(o)),
    }
}

/// Puts a text, thinking or tool-use block into `o` as the Anthropic
/// Messages API writes it (Claude Code and Cline keep these blocks so);
/// false, with `o` as it was, for any other block.
pub(crate) fn put_message_block(o: &mut Map<String, Value>, kind: &BlockKind) -> bool {
    match kind {
        BlockKind::Text { text } => {
            o.insert("type".into(), "text".into());
            o.insert("text".into(), text.clone().into());
        }
        BlockKind::Thinking {
            text,
            signature,
            redacted,
        } => {
            if *redacted {
                o.insert("type".into(), "redacted_thinking".into());
            } else {
                o.insert("type".into(), "thinking".into());
                o.insert("thinking".into(), text.clone().into());
                if let Some(s) = signature {
                    o.insert("signature".into(), s.clone().into());
                }
            }
        }
        BlockKind::ToolCall { id, name, input } => {
            o.insert("type".into(), "tool_use".into());
            if let Some(id) = id {
                o.insert("id".into(), id.clone().into());
            }
            o.insert("name".into(), name.clone().into());
            o.insert("input".into(), input.clone());
        }
        _ => return false,
    }
    true
}

/// Converts a model block to its native form.
pub(crate) fn block_to_native(b: &Block) -> Value {
    let mut o = Map::new();
    match &b.kind {
        _ if put_message_block(&mut o, &b.kind) => {}
        BlockKind::ToolResult {
            tool_call_id,
            content,
            is_error,
        } => {
            o.insert("type".into(), "tool_result".into());
            if let Some(id) = tool_call_id {
                o.insert("tool_use_id".into(), id.clone().into());
            }
            let as_text = b
                .extra
                .get(MARK)
                .and_then(|m| m.get("content_is_text"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if as_text {
                let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
                o.insert("content".into(), text.join("\n").into());
            } else {
                o.insert(
                    "content".into(),
                    Value::Array(content.iter().map(block_to_native).collect()),
                );
            }
            if *is_error {
                o.insert("is_error".into(), true.into());
            }
        }
        BlockKind::Image {
            media_type,
            data,
            url,
        } => {
            o.insert("type".into(), "image".into());
            let mut src = Map::new();
            match url {
                Some(u) if data.is_none() => {
                    src.insert("type".into(), "url".into());
                    src.insert("url".into(), u.clone().into());
                }
                _ => {
                    src.insert("type".into(), "base64".into());
                    src.insert(
                        "media_type".into(),
                        media_type
                            .clone()
                            .unwrap_or_else(|| "image/png".into())
                            .into(),
                    );
                    src.insert("data".into(), data.clone().unwrap_or_default().into());
                }
            }
            o.insert("source".into(), Value::Object(src));
        }
        BlockKind::Other { value } => return value.clone(),
        // (put above)
        BlockKind::Text { .. } | BlockKind::Thinking { .. } | BlockKind::ToolCall { .. } => {}
    }
    for (k, v) in &b.extra {
        if k != MARK {
            o.insert(k.clone(), v.clone());
        }
    }
    Value::Object(o)
}

// ------------------------------------------------------------------ usage

const USAGE_KEYS: [&str; 4] = [
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
];

/// Converts a native `usage` object.
pub(crate) fn usage_from_native(o: &Map<String, Value>) -> Usage {
    let mut u = Usage::default();
    let mut extra = Extra::new();
    for (k, v) in o {
        let slot = match k.as_str() {
            "input_tokens" => Some(&mut u.input),
            "output_tokens" => Some(&mut u.output),
            "cache_read_input_tokens" => Some(&mut u.cache_read),
            "cache_creation_input_tokens" => Some(&mut u.cache_write),
            _ => None,
        };
        match (slot, v.as_u64()) {
            (Some(s), Some(n)) => *s = n,
            _ => {
                extra.insert(k.clone(), v.clone());
            }
        }
    }
    u.extra = extra;
    u
}

/// Converts a usage to the native object (the four counters, then extras).
pub(crate) fn usage_to_native(u: &Usage) -> Value {
    let mut o = Map::new();
    for (k, n) in USAGE_KEYS
        .iter()
        .zip([u.input, u.output, u.cache_read, u.cache_write])
    {
        o.insert((*k).into(), n.into());
    }
    for (k, v) in &u.extra {
        o.insert(k.clone(), v.clone());
    }
    Value::Object(o)
}

// --------------------------------------------------------------- messages

/// Converts a native `message` object of a `user`/`assistant` record,
/// moving its parts into the model.
pub(crate) fn message_from_native(record_type: Option<&str>, o: Map<String, Value>) -> Message {
    let role = match o.get("role").and_then(Value::as_str) {
        Some(r) => Role::parse(r),
        None => Role::parse(record_type.unwrap_or("assistant")),
    };
    let mut m = Message::new(role);
    let extra = sift(o, |k, v| match (k, v) {
        ("role", _) => None,
        ("content", Value::String(s)) => {
            m.content = vec![Block::text(s)];
            m.content_is_text = true;
            None
        }
        ("content", Value::Array(items)) => {
            m.content = items.into_iter().map(block_from_native).collect();
            None
        }
        ("id", Value::String(s)) => {
            m.id = Some(s);
            None
        }
        ("model", Value::String(s)) => {
            m.model = Some(s);
            None
        }
        ("stop_reason", Value::String(s)) => {
            m.stop_reason = Some(s);
            None
        }
        ("stop_reason", Value::Null) => None,
        ("usage", Value::Object(u)) => {
            m.usage = Some(usage_from_native(&u));
            None
        }
        (_, v) => Some(v),
    });
    m.extra = extra;
    m
}

/// Converts a model message to the native `message` object.
pub(crate) fn message_to_native(m: &Message) -> Value {
    let mut o = Map::new();
    if let Some(id) = &m.id {
        o.insert("id".into(), id.clone().into());
    }
    let role = match m.role {
        Role::Tool => "user",
        ref r => r.as_str(),
    };
    o.insert("role".into(), role.into());
    if let Some(model) = &m.model {
        o.insert("model".into(), model.clone().into());
    }
    if m.content_is_text && m.content.len() == 1 {
        if let BlockKind::Text { text } = &m.content[0].kind {
            o.insert("content".into(), text.clone().into());
        }
    }
    if !o.contains_key("content") {
        o.insert(
            "content".into(),
            Value::Array(m.content.iter().map(block_to_native).collect()),
        );
    }
    if m.role == Role::Assistant && m.id.is_some() || m.stop_reason.is_some() {
        o.insert(
            "stop_reason".into(),
            m.stop_reason.clone().map_or(Value::Null, Value::String),
        );
    }
    if let Some(u) = &m.usage {
        o.insert("usage".into(), usage_to_native(u));
    }
    for (k, v) in &m.extra {
        o.insert(k.clone(), v.clone());
    }
    Value::Object(o)
}

// ---------------------------------------------------------------- records

/// Returns the native `type` a model entry is written as.
pub(crate) fn record_type(e: &Entry) -> String {
    match &e.kind {
        EntryKind::Message(m) => match m.role {
            Role::Assistant => "assistant".into(),
            _ => "user".into(),
        },
        EntryKind::Compaction { .. } => "system".into(),
        EntryKind::Event { event_type, .. } => event_type
            .split(':')
            .next()
            .unwrap_or(event_type)
            .to_string(),
        EntryKind::Custom { custom_type, .. } => custom_type.clone(),
        EntryKind::SessionInfo { .. } => e
            .extra
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("custom-title")
            .to_string(),
        EntryKind::Unknown { record_type, .. } => record_type.clone().unwrap_or_default(),
        other => other.name().to_string(),
    }
}

/// The native key a title record keeps its title under.
pub(crate) fn title_key(record_type: &str) -> &'static str {
    match record_type {
        "summary" => "summary",
        "ai-title" => "aiTitle",
        "agent-name" => "agentName",
        _ => "customTitle",
    }
}

/// Rebuilds the native record of an entry read from a Claude file, before
/// its patch is applied: the model's fields in their native places, then
/// the native fields the model had no place for.
pub(crate) fn entry_to_native(e: &Entry) -> Value {
    if let EntryKind::Unknown { raw, .. } = &e.kind {
        return raw.clone();
    }
    let mut o = Map::new();
    let ty = record_type(e);
    o.insert("type".into(), ty.clone().into());
    o.insert("uuid".into(), e.id.clone().into());
    o.insert(
        "parentUuid".into(),
        e.parent_id.clone().map_or(Value::Null, Value::String),
    );
    if let Some(ts) = &e.timestamp {
        o.insert(
            "timestamp".into(),
            serde_json::to_value(ts).unwrap_or(Value::Null),
        );
    }
    match &e.kind {
        EntryKind::Message(m) => {
            o.insert("isSidechain".into(), m.sidechain.into());
            o.insert("message".into(), message_to_native(m));
        }
        EntryKind::Event {
            payload: Value::Object(p),
            ..
        }
        | EntryKind::Custom {
            data: Some(Value::Object(p)),
            ..
        } => {
            for (k, v) in p {
                o.insert(k.clone(), v.clone());
            }
        }
        EntryKind::SessionInfo { name: Some(n) } => {
            o.insert(title_key(&ty).into(), n.clone().into());
        }
        _ => {}
    }
    for (k, v) in &e.extra {
        if k != MARK {
            o.insert(k.clone(), v.clone());
        }
    }
    Value::Object(o)
}

// ------------------------------------------------------------ known fields

/// The fields Claude Code writes on its `user`, `assistant` and `system`
/// records, as real files from 1.0.x to 2.1.330 hold them: a field beyond
/// these is what the drift report names (`agentlog validate --drift`, and
/// the index's drift alarm).
pub(crate) const KNOWN_FIELDS: [(&str, &[&str]); 3] = [
    (
        "user",
        &[
            "agentId",
            "classifierMetaLines",
            "cwd",
            "entrypoint",
            "gitBranch",
            "imagePasteIds",
            "interruptedByShutdown",
            "interruptedMessageId",
            "isCompactSummary",
            "isMeta",
            "isSidechain",
            "isVisibleInTranscriptOnly",
            "mcpMeta",
            "message",
            "origin",
            "parentUuid",
            "permissionDecision",
            "permissionMode",
            "promptId",
            "promptSource",
            "sandboxed",
            "sessionId",
            "sessionKind",
            "session_id",
            "slug",
            "sourceToolAssistantUUID",
            "sourceToolUseID",
            "thinkingMetadata",
            "timestamp",
            "todos",
            "toolDenialKind",
            "toolEndsTurn",
            "toolUseResult",
            "turnCompanion",
            "turnOrigin",
            "turnPosition",
            "type",
            "userType",
            "uuid",
            "version",
            MARK,
        ],
    ),
    (
        "assistant",
        &[
            "agentId",
            "apiBlockIndex",
            "apiErrorStatus",
            "attributionAgent",
            "attributionMcpServer",
            "attributionMcpTool",
            "attributionPlugin",
            "attributionSkill",
            "costUSD",
            "cwd",
            "effort",
            "entrypoint",
            "error",
            "errorDetails",
            "gitBranch",
            "isAbortedMidStream",
            "isApiErrorMessage",
            "isSidechain",
            "madeBy",
            "message",
            "parentUuid",
            "perTurnEffort",
            "promptCacheRequested",
            "requestId",
            "requestRef",
            "requestedModel",
            "sessionId",
            "sessionKind",
            "session_id",
            "slug",
            "supersedesUuids",
            "thinkingDisplay",
            "thinkingDurationMs",
            "timestamp",
            "toolInputStreamMs",
            "type",
            "userType",
            "uuid",
            "version",
            MARK,
        ],
    ),
    (
        "system",
        &[
            "apiRefusalCategory",
            "apiRefusalExplanation",
            "cause",
            "compactMetadata",
            "content",
            "cwd",
            "direction",
            "durationMs",
            "entrypoint",
            "error",
            "fallbackModel",
            "gitBranch",
            "hasOutput",
            "hookAdditionalContext",
            "hookCount",
            "hookErrors",
            "hookInfos",
            "isMeta",
            "isSidechain",
            "level",
            "logicalParentUuid",
            "maxRetries",
            "messageCount",
            "originalModel",
            "parentUuid",
            "pendingBackgroundAgentCount",
            "preventedContinuation",
            "refusedUserMessageUuid",
            "requestId",
            "retractedMessageUuids",
            "retryAttempt",
            "retryInMs",
            "scope",
            "sessionId",
            "sessionKind",
            "session_id",
            "slug",
            "source",
            "stopReason",
            "subtype",
            "timestamp",
            "toolUseID",
            "trigger",
            "type",
            "userType",
            "uuid",
            "version",
            MARK,
        ],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patches_give_back_the_raw_value() {
        let raw = json!({"a":1,"m":{"c":[{"x":1},{"y":2}],"k":null},"z":"q"});
        let rebuilt = json!({"a":2,"m":{"c":[{"x":1},{"y":3,"w":0}],"k":1,"n":1},"u":true});
        let p = diff(&raw, &rebuilt).unwrap_or(Value::Null);
        let mut t = rebuilt.clone();
        apply(&mut t, &p);
        assert_eq!(t, raw);
        assert!(diff(&raw, &raw).is_none());
    }

    #[test]
    fn blocks_round_trip() {
        for b in [
            json!({"type":"text","text":"hi","citations":null}),
            json!({"type":"thinking","thinking":"","signature":"sig"}),
            json!({"type":"redacted_thinking","data":"xx"}),
            json!({"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}),
            json!({"tool_use_id":"t1","type":"tool_result","content":"ok"}),
            json!({"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"}],"is_error":true}),
            json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}),
            json!({"type":"fallback","from":{"model":"a"},"to":{"model":"b"}}),
            json!("bare"),
        ] {
            let m = block_from_native(b.clone());
            assert_eq!(block_to_native(&m), b, "{b}");
        }
    }
}
