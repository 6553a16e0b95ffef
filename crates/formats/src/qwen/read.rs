//! Reading Qwen Code chats.

use super::wire::{only_keys, other, take_string, usage_of, KNOWN, KNOWN_PARTS, KNOWN_SUBTYPES};
use super::{FORMAT_NAME, SOURCE};
use crate::{Diagnostic, Read};
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta,
    Timestamp,
};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::Path;

/// Entry-extra key set when the record had no usable `uuid`.
pub(super) const SYNTHETIC_ID: &str = "$synthetic_id";
/// Entry-extra key set when the record had no `parentUuid` key at all.
pub(super) const NO_PARENT: &str = "$no_parent_key";
/// Block-extra key set on a tool result whose `response` was not a plain
/// `{"output": text}`: the text is the response as JSON.
pub(super) const RESPONSE_JSON: &str = "$response_json";
/// Block-extra key set on a tool call whose `functionCall` had no `args`.
pub(super) const NO_ARGS: &str = "$no_args";
/// Block-extra key of a tool result's `functionResponse.name`.
pub(super) const RESPONSE_NAME: &str = "$name";

pub(super) fn read(path: &Path, bytes: &[u8]) -> Read {
    let mut diags = Vec::new();
    let values = crate::jsonl::parse_values(path, bytes, &mut diags);
    let id = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let mut meta = SessionMeta::new(id, Agent::Other("qwen".into()));
    meta.format = Some(FORMAT_NAME.into());
    let mut session = Session::new(meta);
    let mut seen = HashSet::new();
    for (line, value) in values {
        let e = record(path, line, value, &mut seen, &mut session.meta, &mut diags);
        session.push(e);
    }
    Read {
        session,
        diagnostics: diags,
    }
}

fn record(
    path: &Path,
    line: u64,
    value: Value,
    seen: &mut HashSet<String>,
    meta: &mut SessionMeta,
    diags: &mut Vec<Diagnostic>,
) -> Entry {
    let Value::Object(mut obj) = value else {
        diags.push(Diagnostic::warning(
            path,
            Some(line),
            "unknown-record",
            "line is not a JSON object; kept verbatim",
        ));
        let mut e = Entry::new(
            format!("L{line}"),
            None,
            EntryKind::Unknown {
                record_type: None,
                raw: value,
            },
        );
        e.line = Some(line);
        return e;
    };
    let mut extra = Extra::new();
    let id = match obj.get("uuid") {
        Some(Value::String(s)) if !seen.contains(s) => take_string(&mut obj, "uuid"),
        _ => None,
    };
    let id = id.unwrap_or_else(|| {
        extra.insert(SYNTHETIC_ID.into(), Value::Bool(true));
        format!("L{line}")
    });
    seen.insert(id.clone());
    let parent_id = match obj.get("parentUuid") {
        Some(Value::String(_)) => take_string(&mut obj, "parentUuid"),
        Some(Value::Null) => {
            obj.remove("parentUuid");
            None
        }
        Some(_) => None,
        None => {
            extra.insert(NO_PARENT.into(), Value::Bool(true));
            None
        }
    };
    let timestamp = take_string(&mut obj, "timestamp").map(Timestamp::Text);
    note_meta(meta, &obj, timestamp.as_ref());
    let typ = obj.get("type").and_then(Value::as_str).map(str::to_string);
    let kind = match typ.as_deref() {
        Some("user" | "assistant" | "tool_result")
            if obj
                .get("message")
                .is_some_and(|m| m.get("parts").is_some_and(Value::is_array)) =>
        {
            let t = typ.clone().unwrap_or_default();
            obj.remove("type");
            match obj.remove("message") {
                Some(Value::Object(msg)) => EntryKind::Message(message(&t, msg, &mut obj)),
                other => {
                    obj.insert("type".into(), t.clone().into());
                    if let Some(m) = other {
                        obj.insert("message".into(), m);
                    }
                    EntryKind::Unknown {
                        record_type: Some(t),
                        raw: Value::Object(std::mem::take(&mut obj)),
                    }
                }
            }
        }
        Some("system") if obj.get("subtype").is_some_and(Value::is_string) => {
            obj.remove("type");
            let subtype = take_string(&mut obj, "subtype").unwrap_or_default();
            let payload = obj.remove("systemPayload");
            if payload.is_none() {
                extra.insert("$no_payload".into(), Value::Bool(true));
            }
            EntryKind::Event {
                source: SOURCE.into(),
                event_type: subtype,
                seq: None,
                payload: payload.unwrap_or(Value::Null),
            }
        }
        _ => {
            diags.push(Diagnostic::info(
                path,
                Some(line),
                "unknown-type",
                format!(
                    "record type {} kept verbatim",
                    typ.as_deref().unwrap_or("(none)")
                ),
            ));
            EntryKind::Unknown {
                record_type: typ,
                raw: Value::Object(std::mem::take(&mut obj)),
            }
        }
    };
    extra.extend(obj);
    let mut e = Entry::new(id, parent_id, kind);
    e.timestamp = timestamp;
    e.extra = extra;
    e.line = Some(line);
    e
}

fn note_meta(meta: &mut SessionMeta, obj: &Map<String, Value>, ts: Option<&Timestamp>) {
    let s = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
    if meta.created_at.is_none() {
        meta.created_at = ts.cloned();
        if let Some(id) = s("sessionId") {
            meta.id = id;
        }
    }
    if ts.is_some() {
        meta.updated_at = ts.cloned();
    }
    if meta.cwd.is_none() {
        meta.cwd = s("cwd");
    }
    if let Some(v) = s("version") {
        meta.agent_version = Some(v);
    }
    if let Some(m) = s("model") {
        meta.model.model = Some(m);
    }
}

fn message(t: &str, mut msg: Map<String, Value>, rec: &mut Map<String, Value>) -> Message {
    let role = match t {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => Role::Tool,
    };
    let mut m = Message::new(role);
    let parts = match msg.remove("parts") {
        Some(Value::Array(p)) => p,
        _ => Vec::new(),
    };
    m.content = parts.into_iter().map(part).collect();
    m.extra = msg;
    if t == "assistant" {
        m.model = rec.get("model").and_then(Value::as_str).map(str::to_string);
        m.usage = rec.get("usageMetadata").map(usage_of);
    }
    if t == "tool_result" {
        let result = rec.get("toolCallResult");
        let status = result.and_then(|r| r.get("status")).and_then(Value::as_str);
        m.is_error = status.map(|s| s != "success");
        m.tool_call_id = result
            .and_then(|r| r.get("callId"))
            .and_then(Value::as_str)
            .map(str::to_string);
        m.tool_name = m.content.iter().find_map(|b| {
            b.extra
                .get(RESPONSE_NAME)
                .and_then(Value::as_str)
                .map(str::to_string)
        });
        if m.is_error == Some(true) {
            for b in &mut m.content {
                if let BlockKind::ToolResult { is_error, .. } = &mut b.kind {
                    *is_error = true;
                }
            }
        }
    }
    if t == "user" && rec.get("provenance").and_then(Value::as_str) != Some("real_user") {
        if let Some(p) = rec.get("provenance").and_then(Value::as_str) {
            m.injected = Some(p.to_string());
        }
    }
    m
}

fn part(p: Value) -> Block {
    let Value::Object(mut p) = p else {
        return other(p);
    };
    if p.get("text").is_some_and(Value::is_string) {
        let text = take_string(&mut p, "text").unwrap_or_default();
        let mut b = if p.get("thought").and_then(Value::as_bool) == Some(true) {
            Block::thinking(text, None)
        } else {
            Block::text(text)
        };
        b.extra = p;
        return b;
    }
    if p.get("functionCall").is_some_and(|c| {
        only_keys(c, &["id", "name", "args"]) && c.get("name").is_some_and(Value::is_string)
    }) {
        let Some(Value::Object(mut c)) = p.remove("functionCall") else {
            return other(Value::Object(p));
        };
        let id = take_string(&mut c, "id");
        let name = take_string(&mut c, "name").unwrap_or_default();
        let args = c.remove("args");
        let no_args = args.is_none();
        let mut b = Block::tool_call(id, name, args.unwrap_or(Value::Null));
        if no_args {
            b.extra.insert(NO_ARGS.into(), Value::Bool(true));
        }
        b.extra.extend(p);
        return b;
    }
    if p.get("functionResponse")
        .is_some_and(|r| only_keys(r, &["id", "name", "response"]))
    {
        let Some(Value::Object(mut r)) = p.remove("functionResponse") else {
            return other(Value::Object(p));
        };
        let id = take_string(&mut r, "id");
        let name = r.remove("name");
        let (text, json) = match r.remove("response") {
            Some(Value::Object(o))
                if o.len() == 1 && o.get("output").is_some_and(Value::is_string) =>
            {
                (
                    o.get("output")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    false,
                )
            }
            Some(v) => (v.to_string(), true),
            None => (String::new(), false),
        };
        let mut b = Block::tool_result(id, vec![Block::text(text)], false);
        if json {
            b.extra.insert(RESPONSE_JSON.into(), Value::Bool(true));
        }
        if let Some(n) = name {
            b.extra.insert(RESPONSE_NAME.into(), n);
        }
        b.extra.extend(p);
        return b;
    }
    if let Some(Value::Object(d)) = p.get("inlineData") {
        if only_keys(&Value::Object(d.clone()), &["mimeType", "data"]) {
            let media_type = d
                .get("mimeType")
                .and_then(Value::as_str)
                .map(str::to_string);
            let data = d.get("data").and_then(Value::as_str).map(str::to_string);
            p.remove("inlineData");
            return Block {
                kind: BlockKind::Image {
                    media_type,
                    data,
                    url: None,
                },
                extra: p,
            };
        }
    }
    other(Value::Object(p))
}

/// The drift report of a Qwen Code chat.
pub(super) fn drift(read: &Read) -> Vec<crate::drift::Drift> {
    use crate::drift::{DriftKind, Tally};
    let mut t = Tally::default();
    crate::drift::unknown_records(read, &mut t);
    for e in &read.session.entries {
        let (typ, parts): (&str, Option<&Vec<Block>>) = match &e.kind {
            EntryKind::Message(m) => (
                match m.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    _ => "tool_result",
                },
                Some(&m.content),
            ),
            EntryKind::Event { event_type, .. } => {
                if !KNOWN_SUBTYPES.contains(&event_type.as_str()) {
                    t.add(
                        DriftKind::RecordType,
                        &format!("system.{event_type}"),
                        e.line,
                    );
                }
                ("system", None)
            }
            _ => continue,
        };
        if let Some((_, known)) = KNOWN.iter().find(|(k, _)| *k == typ) {
            t.fields(typ, e.extra.keys(), known, e.line);
        }
        for b in parts.into_iter().flatten() {
            if let BlockKind::Other { value } = &b.kind {
                let kind = value
                    .as_object()
                    .and_then(|o| o.keys().find(|k| !KNOWN_PARTS.contains(&k.as_str())))
                    .map_or("(none)", String::as_str);
                t.add(DriftKind::RecordType, &format!("part.{kind}"), e.line);
            }
        }
    }
    t.into_items()
}
