//! The unified model -> pi records.
//!
//! A session read from a pi file is written back as it was (same version,
//! same fields). Any other session is written as a version 3 file; what pi
//! cannot hold is reported in the [`Fidelity`] report, and entry kinds pi has
//! no record for are carried in pi `custom` entries named
//! `agentlog.<kind>` (pi keeps those but leaves them out of the context).

use super::read::CONTENT_ROLES;
use super::{is_v1, version_of_meta, ABSENT_KEY, CURRENT_VERSION};
use crate::Fidelity;
use agentlog_model::{Agent, SessionMeta};
use agentlog_model::{
    Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, Timestamp, Usage,
};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// Returns true when `extra` lists `key` as absent in the native record.
fn was_absent(extra: &Extra, key: &str) -> bool {
    extra
        .get(ABSENT_KEY)
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|k| k.as_str() == Some(key)))
}

/// Adds the extras whose keys were not written from the model.
fn put_extras(map: &mut Map<String, Value>, extra: &Extra) {
    for (k, v) in extra {
        if k != ABSENT_KEY && !map.contains_key(k) {
            map.insert(k.clone(), v.clone());
        }
    }
}

fn put_opt<T: Into<Value> + Clone>(map: &mut Map<String, Value>, key: &str, v: &Option<T>) {
    if let Some(v) = v {
        map.insert(key.to_string(), v.clone().into());
    }
}

fn ts_value(t: &Timestamp) -> Value {
    match t {
        Timestamp::Text(s) => Value::String(s.clone()),
        Timestamp::Millis(ms) => Value::from(*ms),
    }
}

/// Writes a session as pi records.
pub(crate) struct Writer<'a> {
    session: &'a Session,
    /// True when the session was read from a pi file: written back as is.
    native: bool,
    /// True when writing a version 1 (linear, id-less) file.
    v1: bool,
    pub(crate) fidelity: Fidelity,
    /// For an entry written as several records, the id of the last one.
    tail: HashMap<String, String>,
    /// Tool names by call id, for tool results written as messages.
    tool_names: HashMap<String, String>,
    /// The time used where a converted entry has none.
    default_time: Timestamp,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(session: &'a Session) -> Writer<'a> {
        let native = session.meta.format.as_deref() == Some("pi");
        let v1 = native && is_v1(version_of_meta(&session.meta));
        Writer {
            session,
            native,
            v1,
            fidelity: Fidelity::new("pi"),
            tail: HashMap::new(),
            tool_names: HashMap::new(),
            default_time: session
                .meta
                .created_at
                .clone()
                .unwrap_or_else(Timestamp::now),
        }
    }

    /// Returns the header record (none for a headerless file read as is).
    pub(crate) fn header(&mut self) -> Option<Map<String, Value>> {
        let meta = &self.session.meta;
        if self.native && was_absent(&meta.extra, "header") {
            return None;
        }
        let mut h = Map::new();
        h.insert("type".into(), "session".into());
        if self.native {
            if let Some(v) = &meta.format_version {
                h.insert("version".into(), v.clone());
            }
        } else {
            h.insert("version".into(), CURRENT_VERSION.into());
        }
        if !(self.native && was_absent(&meta.extra, "id")) {
            h.insert("id".into(), meta.id.clone().into());
        }
        match &meta.created_at {
            Some(t) if self.native => {
                h.insert("timestamp".into(), ts_value(t));
            }
            t => {
                let t = t.clone().unwrap_or_else(|| self.default_time.clone());
                h.insert("timestamp".into(), t.to_rfc3339().into());
            }
        }
        match &meta.cwd {
            Some(c) => {
                h.insert("cwd".into(), c.clone().into());
            }
            None if !self.native => {
                h.insert("cwd".into(), "".into());
            }
            None => {}
        }
        put_opt(&mut h, "title", &meta.title);
        put_opt(&mut h, "parentSession", &meta.parent_session);
        if self.native {
            put_opt(&mut h, "provider", &meta.model.provider);
            put_opt(&mut h, "modelId", &meta.model.model);
            put_opt(&mut h, "thinkingLevel", &meta.model.thinking_level);
            put_extras(&mut h, &meta.extra);
        } else {
            if !meta.model.is_empty() {
                self.fidelity.lost(
                    "session model configuration (pi records model changes as entries)",
                    None,
                );
            }
            if !meta.todos.is_empty() {
                self.fidelity.lost("todo list", None);
            }
            if !meta.extra.is_empty() {
                self.fidelity
                    .lost("session metadata fields of the source format", None);
            }
        }
        Some(h)
    }

    /// Returns the records for one entry (a message holding several tool
    /// results becomes one record per result).
    pub(crate) fn entry(&mut self, e: &Entry, prev: Option<&str>) -> Vec<Map<String, Value>> {
        if self.v1 && e.parent_id.as_deref() != prev {
            self.fidelity
                .lost("tree branches (a version 1 pi file is linear)", Some(&e.id));
        }
        if let EntryKind::Unknown { raw, record_type } = &e.kind {
            if self.native {
                if let Value::Object(m) = raw {
                    return vec![m.clone()];
                }
                if let (Some(super::RAW_LINES), Value::String(lines)) =
                    (record_type.as_deref(), raw)
                {
                    // Each line was a JSON object when read.
                    return lines
                        .lines()
                        .filter_map(|l| serde_json::from_str::<Map<String, Value>>(l).ok())
                        .collect();
                }
            }
            self.fidelity.lost(
                "records of unknown type (kept as custom entries agentlog.unknown)",
                Some(&e.id),
            );
            let data = json!({"recordType": record_type, "raw": raw});
            return vec![self.record(
                e,
                "custom",
                custom_fields("agentlog.unknown", data),
                &Extra::new(),
            )];
        }
        if let EntryKind::Message(m) = &e.kind {
            return self.message_records(e, m);
        }
        let (ty, fields) = match &e.kind {
            EntryKind::ModelChange {
                provider,
                model,
                role,
            } => {
                let mut f = Map::new();
                match provider {
                    Some(p) => {
                        f.insert("provider".into(), p.clone().into());
                        f.insert("modelId".into(), model.clone().into());
                    }
                    None => {
                        f.insert("model".into(), model.clone().into());
                    }
                }
                put_opt(&mut f, "role", role);
                ("model_change", f)
            }
            EntryKind::ThinkingLevelChange { level } => {
                let mut f = Map::new();
                f.insert("thinkingLevel".into(), level.clone().into());
                ("thinking_level_change", f)
            }
            EntryKind::Compaction {
                summary,
                short_summary,
                first_kept_entry_id,
                tokens_before,
                details,
                from_extension,
                preserve_data,
            } => {
                let mut f = Map::new();
                f.insert("summary".into(), summary.clone().into());
                put_opt(&mut f, "shortSummary", short_summary);
                put_opt(&mut f, "firstKeptEntryId", first_kept_entry_id);
                put_opt(&mut f, "tokensBefore", tokens_before);
                put_opt(&mut f, "details", details);
                put_opt(&mut f, "fromExtension", from_extension);
                put_opt(&mut f, "preserveData", preserve_data);
                ("compaction", f)
            }
            EntryKind::BranchSummary {
                from_id,
                summary,
                details,
                from_extension,
            } => {
                let mut f = Map::new();
                f.insert("fromId".into(), from_id.clone().into());
                f.insert("summary".into(), summary.clone().into());
                put_opt(&mut f, "details", details);
                put_opt(&mut f, "fromExtension", from_extension);
                ("branch_summary", f)
            }
            EntryKind::Label { target_id, label } => {
                let mut f = Map::new();
                f.insert("targetId".into(), target_id.clone().into());
                put_opt(&mut f, "label", label);
                ("label", f)
            }
            EntryKind::Custom { custom_type, data } => {
                let mut f = Map::new();
                f.insert("customType".into(), custom_type.clone().into());
                put_opt(&mut f, "data", data);
                ("custom", f)
            }
            EntryKind::CustomMessage {
                custom_type,
                content,
                content_is_text,
                display,
                details,
            } => {
                let mut f = Map::new();
                f.insert("customType".into(), custom_type.clone().into());
                f.insert(
                    "content".into(),
                    self.content_value(content, *content_is_text, &e.id),
                );
                f.insert("display".into(), (*display).into());
                put_opt(&mut f, "details", details);
                ("custom_message", f)
            }
            EntryKind::SessionInfo { name } => {
                let mut f = Map::new();
                put_opt(&mut f, "name", name);
                ("session_info", f)
            }
            EntryKind::TtsrInjection { rules } => {
                let mut f = Map::new();
                f.insert("injectedRules".into(), rules.clone().into());
                ("ttsr_injection", f)
            }
            EntryKind::SessionInit {
                system_prompt,
                task,
                tools,
                output_schema,
            } => {
                let mut f = Map::new();
                put_opt(&mut f, "systemPrompt", system_prompt);
                put_opt(&mut f, "task", task);
                f.insert("tools".into(), tools.clone().into());
                put_opt(&mut f, "outputSchema", output_schema);
                ("session_init", f)
            }
            other => {
                let name = other.name();
                // A pi file read back holds these exactly as they were
                // written; only a conversion into pi loses their meaning.
                if !self.native {
                    self.fidelity.lost(
                        format!("entry kind {name} (kept as custom entries agentlog.{name})"),
                        Some(&e.id),
                    );
                }
                let data = serde_json::to_value(other).unwrap_or(Value::Null);
                ("custom", custom_fields(&format!("agentlog.{name}"), data))
            }
        };
        vec![self.record(e, ty, fields, &e.extra)]
    }

    /// Returns a record: the entry keys, then `fields`, then the extras.
    fn record(
        &mut self,
        e: &Entry,
        ty: &str,
        fields: Map<String, Value>,
        extra: &Extra,
    ) -> Map<String, Value> {
        self.record_with_id(e, &e.id.clone(), e.parent_id.clone(), ty, fields, extra)
    }

    fn record_with_id(
        &mut self,
        e: &Entry,
        id: &str,
        parent: Option<String>,
        ty: &str,
        fields: Map<String, Value>,
        extra: &Extra,
    ) -> Map<String, Value> {
        let mut r = Map::new();
        r.insert("type".into(), ty.into());
        if !self.v1 {
            r.insert("id".into(), id.into());
            let parent = parent.map(|p| self.tail.get(&p).cloned().unwrap_or(p));
            if !(self.native && was_absent(extra, "parentId")) {
                r.insert(
                    "parentId".into(),
                    parent.map(Value::String).unwrap_or(Value::Null),
                );
            }
        }
        match &e.timestamp {
            Some(t) if self.native => {
                r.insert("timestamp".into(), ts_value(t));
            }
            Some(t) => {
                r.insert("timestamp".into(), t.to_rfc3339().into());
            }
            None if !self.native => {
                r.insert("timestamp".into(), self.default_time.to_rfc3339().into());
            }
            None => {}
        }
        r.extend(fields);
        if self.native {
            put_extras(&mut r, extra);
        } else if !extra.is_empty() {
            self.fidelity
                .lost("entry fields of the source format", Some(&e.id));
        }
        r
    }

    fn message_records(&mut self, e: &Entry, m: &Message) -> Vec<Map<String, Value>> {
        let results: Vec<&Block> = m
            .content
            .iter()
            .filter(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
            .collect();
        if results.is_empty() {
            let mut f = Map::new();
            f.insert("message".into(), Value::Object(self.message_value(m, e)));
            return vec![self.record(e, "message", f, &e.extra)];
        }
        // pi has one toolResult message per result: split the message.
        let mut out = Vec::new();
        let mut parent = e.parent_id.clone();
        let mut n = 0usize;
        let next_id = |n: &mut usize| {
            let id = if *n == 0 {
                e.id.clone()
            } else {
                format!("{}-{}", e.id, n)
            };
            *n += 1;
            id
        };
        let rest: Vec<Block> = m
            .content
            .iter()
            .filter(|b| !matches!(b.kind, BlockKind::ToolResult { .. }))
            .cloned()
            .collect();
        if !rest.is_empty() {
            let mut head = m.clone();
            head.content = rest;
            let id = next_id(&mut n);
            let mut f = Map::new();
            f.insert(
                "message".into(),
                Value::Object(self.message_value(&head, e)),
            );
            out.push(self.record_with_id(e, &id, parent.clone(), "message", f, &e.extra));
            parent = Some(id);
        }
        for b in results {
            let BlockKind::ToolResult {
                tool_call_id,
                content,
                is_error,
            } = &b.kind
            else {
                continue;
            };
            let mut tm = Message::new(Role::Tool);
            tm.content = content.clone();
            tm.tool_call_id = tool_call_id.clone();
            tm.tool_name = tool_call_id
                .as_ref()
                .and_then(|c| self.tool_names.get(c).cloned())
                .or_else(|| Some(String::new()));
            tm.is_error = Some(*is_error);
            tm.timestamp = m.timestamp.clone();
            let id = next_id(&mut n);
            let mut f = Map::new();
            f.insert("message".into(), Value::Object(self.message_value(&tm, e)));
            out.push(self.record_with_id(e, &id, parent.clone(), "message", f, &Extra::new()));
            parent = Some(id);
        }
        if let Some(last) = parent {
            if last != e.id {
                self.tail.insert(e.id.clone(), last);
            }
        }
        out
    }

    /// Returns pi's form of a message.
    pub(crate) fn message_value(&mut self, m: &Message, e: &Entry) -> Map<String, Value> {
        let mut v = Map::new();
        let role = match &m.role {
            Role::Tool => "toolResult".to_string(),
            Role::System | Role::Developer => {
                self.fidelity.lost(
                    format!(
                        "{} messages (pi has no such role; kept with their role)",
                        m.role
                    ),
                    Some(&e.id),
                );
                m.role.as_str().to_string()
            }
            r => r.as_str().to_string(),
        };
        v.insert("role".into(), role.clone().into());
        // Another format's `content` field among the extras is not pi's:
        // only a pi message keeps its unmapped content there.
        let kept_elsewhere =
            self.native && (m.extra.contains_key("content") || was_absent(&m.extra, "content"));
        let wanted =
            m.content_is_text || !m.content.is_empty() || CONTENT_ROLES.contains(&role.as_str());
        // pi reads assistant and tool-result content as an array of blocks
        // (a string crashes it: `content.flatMap is not a function`); only
        // user and custom messages may hold a plain string.
        let as_text = m.content_is_text
            && (self.native || !matches!(role.as_str(), "assistant" | "toolResult"));
        if !kept_elsewhere && wanted {
            v.insert(
                "content".into(),
                self.content_value(&m.content, as_text, &e.id),
            );
        }
        put_opt(&mut v, "toolCallId", &m.tool_call_id);
        put_opt(&mut v, "toolName", &m.tool_name);
        put_opt(&mut v, "provider", &m.provider);
        put_opt(&mut v, "model", &m.model);
        if let Some(u) = &m.usage {
            v.insert("usage".into(), Value::Object(self.usage_value(u)));
        }
        put_opt(&mut v, "stopReason", &m.stop_reason);
        put_opt(&mut v, "isError", &m.is_error);
        match &m.timestamp {
            Some(t) if self.native => {
                v.insert("timestamp".into(), ts_value(t));
            }
            t => {
                if !self.native {
                    let ms = t
                        .as_ref()
                        .or(e.timestamp.as_ref())
                        .and_then(Timestamp::millis)
                        .or_else(|| self.default_time.millis())
                        .unwrap_or(0);
                    v.insert("timestamp".into(), ms.into());
                }
            }
        }
        for (id, name, _) in m.tool_calls() {
            if let Some(id) = id {
                self.tool_names.insert(id.clone(), name.to_string());
            }
        }
        if self.native {
            put_extras(&mut v, &m.extra);
        } else {
            if !m.extra.is_empty() {
                self.fidelity
                    .lost("message fields of the source format", Some(&e.id));
            }
            if m.id.is_some() {
                self.fidelity.lost("native message ids", Some(&e.id));
            }
            if m.injected.is_some() {
                self.fidelity.lost("injected-context markers", Some(&e.id));
            }
            if m.sidechain {
                self.fidelity.lost("sidechain markers", Some(&e.id));
            }
        }
        v
    }

    fn usage_value(&mut self, u: &Usage) -> Map<String, Value> {
        let mut v = Map::new();
        let counts = [
            ("input", u.input),
            ("output", u.output),
            ("cacheRead", u.cache_read),
            ("cacheWrite", u.cache_write),
        ];
        for (key, n) in counts {
            let skip =
                self.native && (u.extra.contains_key(key) || (n == 0 && was_absent(&u.extra, key)));
            if !skip {
                v.insert(key.into(), n.into());
            }
        }
        match u.total {
            Some(t) => {
                v.insert("totalTokens".into(), t.into());
            }
            None if !self.native => {
                v.insert("totalTokens".into(), u.sum().into());
            }
            None => {}
        }
        let cost = match (u.extra.get("cost"), u.cost_usd) {
            (Some(Value::Object(c)), total) if self.native => {
                let mut c = c.clone();
                if let Some(t) = total {
                    if c.get("total").and_then(Value::as_f64) != Some(t) {
                        c.insert("total".into(), t.into());
                    }
                }
                Some(Value::Object(c))
            }
            (_, total) if !self.native || total.is_some() => Some(json!({
                "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                "total": total.unwrap_or(0.0),
            })),
            _ => None,
        };
        if let Some(c) = cost {
            v.insert("cost".into(), c);
        }
        if self.native {
            put_extras(&mut v, &u.extra);
        }
        v
    }

    fn content_value(&mut self, blocks: &[Block], is_text: bool, entry: &str) -> Value {
        if is_text {
            if let [Block {
                kind: BlockKind::Text { text },
                ..
            }] = blocks
            {
                return Value::String(text.clone());
            }
            if blocks.is_empty() {
                return Value::String(String::new());
            }
        }
        Value::Array(
            blocks
                .iter()
                .filter_map(|b| self.block_value(b, entry))
                .collect(),
        )
    }

    fn block_value(&mut self, b: &Block, entry: &str) -> Option<Value> {
        let mut v = Map::new();
        match &b.kind {
            BlockKind::Text { text } => {
                v.insert("type".into(), "text".into());
                v.insert("text".into(), text.clone().into());
            }
            BlockKind::Thinking {
                text,
                signature,
                redacted,
            } => {
                if !self.native {
                    // pi replays thinking only to the model that wrote it;
                    // to any other model it sends the text as plain text.
                    self.fidelity.lost(
                        "thinking of another agent's model (pi sends it to the model as plain text)",
                        Some(entry),
                    );
                }
                v.insert("type".into(), "thinking".into());
                v.insert("thinking".into(), text.clone().into());
                put_opt(&mut v, "thinkingSignature", signature);
                if *redacted {
                    v.insert("redacted".into(), true.into());
                }
            }
            BlockKind::ToolCall { id, name, input } => {
                v.insert("type".into(), "toolCall".into());
                put_opt(&mut v, "id", id);
                v.insert("name".into(), name.clone().into());
                let args = match input {
                    Value::String(s) if !self.native => serde_json::from_str::<Value>(s)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| input.clone()),
                    Value::Null if !self.native => json!({}),
                    other => other.clone(),
                };
                v.insert("arguments".into(), args);
            }
            BlockKind::Image {
                media_type,
                data,
                url,
            } => match (media_type, data) {
                (Some(mt), Some(d)) => {
                    v.insert("type".into(), "image".into());
                    v.insert("data".into(), d.clone().into());
                    v.insert("mimeType".into(), mt.clone().into());
                    if url.is_some() {
                        self.fidelity.lost("image URLs", Some(entry));
                    }
                }
                _ => {
                    self.fidelity.lost(
                        "images without inline data (kept as a text note)",
                        Some(entry),
                    );
                    v.insert("type".into(), "text".into());
                    let text = format!("[image: {}]", url.as_deref().unwrap_or("no data"));
                    v.insert("text".into(), text.into());
                }
            },
            BlockKind::ToolResult { content, .. } => {
                // Only reached for tool results nested in custom messages.
                self.fidelity.lost(
                    "tool results inside non-message content (kept as text)",
                    Some(entry),
                );
                let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
                v.insert("type".into(), "text".into());
                v.insert("text".into(), text.join("\n").into());
            }
            BlockKind::Other { value } => {
                if self.native {
                    return Some(value.clone());
                }
                self.fidelity
                    .lost("content blocks of unknown kinds", Some(entry));
                return None;
            }
        }
        if self.native {
            put_extras(&mut v, &b.extra);
        } else if !b.extra.is_empty() {
            self.fidelity
                .lost("content block fields of the source format", Some(entry));
        }
        Some(Value::Object(v))
    }
}

fn custom_fields(custom_type: &str, data: Value) -> Map<String, Value> {
    let mut f = Map::new();
    f.insert("customType".into(), custom_type.into());
    f.insert("data".into(), data);
    f
}

/// Returns pi's JSON form of a message (`AgentMessage`): the fields a pi
/// message had when it was read are kept; a message without a timestamp
/// gets the current time in milliseconds.
pub fn message_to_value(m: &agentlog_model::Message) -> Value {
    let mut meta = SessionMeta::new("", Agent::Pi);
    meta.format = Some("pi".into());
    meta.format_version = Some(CURRENT_VERSION.into());
    let session = Session::new(meta);
    let mut w = Writer::new(&session);
    let e = agentlog_model::Entry::new("", None, EntryKind::Resume);
    let mut v = w.message_value(m, &e);
    if !v.contains_key("timestamp") {
        let now = agentlog_model::Timestamp::now().millis().unwrap_or(0);
        v.insert("timestamp".into(), now.into());
    }
    Value::Object(v)
}
