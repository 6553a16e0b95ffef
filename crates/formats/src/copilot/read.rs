//! Reading Copilot CLI event streams.

use super::wire::{take_string, usage_of};
use super::{FORMAT_NAME, SOURCE};
use crate::{Diagnostic, Read};
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta,
    Timestamp, Usage,
};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Entry-extra key set when the event had no usable `id` (one was made up).
pub(super) const SYNTHETIC_ID: &str = "$synthetic_id";
/// Entry-extra key set when the event had no `parentId` key at all.
pub(super) const NO_PARENT: &str = "$no_parent_key";

pub(super) fn read(path: &Path, bytes: &[u8]) -> Read {
    let mut diags = Vec::new();
    let values = crate::jsonl::parse_values(path, bytes, &mut diags);
    let stem = if path.file_name().is_some_and(|n| n == "events.jsonl") {
        path.parent().and_then(Path::file_name)
    } else {
        path.file_stem()
    };
    let id = stem.map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let mut meta = SessionMeta::new(id, Agent::Copilot);
    meta.format = Some(FORMAT_NAME.into());
    if let Some(title) = workspace_name(path) {
        meta.title = Some(title);
    }
    let mut r = Reader {
        session: Session::new(meta),
        seen: HashSet::new(),
        tool_names: HashMap::new(),
        pending_usage: None,
        path,
        diags: &mut diags,
    };
    for (line, value) in values {
        r.record(line, value);
    }
    let session = r.session;
    Read {
        session,
        diagnostics: diags,
    }
}

/// The `name:` of the `workspace.yaml` beside an `events.jsonl`.
fn workspace_name(path: &Path) -> Option<String> {
    if path.file_name()? != "events.jsonl" {
        return None;
    }
    let text = std::fs::read_to_string(path.parent()?.join("workspace.yaml")).ok()?;
    text.lines().find_map(|l| {
        let v = l.strip_prefix("name:")?.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(v);
        (!v.is_empty()).then(|| v.to_string())
    })
}

struct Reader<'a> {
    session: Session,
    seen: HashSet<String>,
    tool_names: HashMap<String, String>,
    pending_usage: Option<Usage>,
    path: &'a Path,
    diags: &'a mut Vec<Diagnostic>,
}

impl Reader<'_> {
    fn record(&mut self, line: u64, value: Value) {
        let Value::Object(mut obj) = value else {
            self.diags.push(Diagnostic::warning(
                self.path,
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
            self.push(e);
            return;
        };
        let mut extra = Extra::new();
        let id = match obj.get("id") {
            Some(Value::String(s)) if !self.seen.contains(s) => take_string(&mut obj, "id"),
            _ => None,
        };
        let id = id.unwrap_or_else(|| {
            extra.insert(SYNTHETIC_ID.into(), Value::Bool(true));
            format!("L{line}")
        });
        self.seen.insert(id.clone());
        let parent_id = match obj.get("parentId") {
            Some(Value::String(_)) => take_string(&mut obj, "parentId"),
            Some(Value::Null) => {
                obj.remove("parentId");
                None
            }
            Some(_) => None,
            None => {
                extra.insert(NO_PARENT.into(), Value::Bool(true));
                None
            }
        };
        let timestamp = take_string(&mut obj, "timestamp").map(Timestamp::Text);
        let typ = obj.get("type").and_then(Value::as_str).map(str::to_string);
        let kind = match (typ, obj.get("data")) {
            (Some(t), Some(Value::Object(_))) => {
                obj.remove("type");
                let Some(Value::Object(data)) = obj.remove("data") else {
                    return;
                };
                if t == "assistant.reasoning" {
                    extra.insert(super::write::TYPE_KEY.into(), t.clone().into());
                }
                self.kind(&t, data, timestamp.as_ref())
            }
            (t, _) => {
                self.diags.push(Diagnostic::warning(
                    self.path,
                    Some(line),
                    "unknown-record",
                    "event without a string `type` and an object `data`; kept verbatim",
                ));
                EntryKind::Unknown {
                    record_type: t,
                    raw: Value::Object(std::mem::take(&mut obj)),
                }
            }
        };
        extra.extend(obj);
        let mut e = Entry::new(id, parent_id, kind);
        e.timestamp = timestamp;
        e.extra = extra;
        e.line = Some(line);
        self.push(e);
    }

    fn push(&mut self, e: Entry) {
        // Events chain through `parentId`; the last one read is the leaf.
        self.session.push(e);
    }

    fn kind(&mut self, t: &str, mut data: Map<String, Value>, ts: Option<&Timestamp>) -> EntryKind {
        match t {
            "session.start" | "session.resume" => {
                self.start(t, &data, ts);
                event(t, data)
            }
            "session.usage_record" => {
                if let Some(u) = data.get("usage") {
                    self.pending_usage = Some(usage_of(u));
                }
                event(t, data)
            }
            "session.model_change" => {
                if let Some(m) = data.get("newModel").and_then(Value::as_str) {
                    self.session.meta.model.model = Some(m.to_string());
                }
                event(t, data)
            }
            "user.message" | "system.message" => {
                let role = if t == "user.message" {
                    Role::User
                } else {
                    Role::System
                };
                let mut m = Message::new(role);
                if let Some(text) = take_string(&mut data, "content") {
                    m.content.push(Block::text(text));
                }
                if t == "system.message" {
                    m.injected = Some("system".into());
                }
                if t == "user.message" && data.get("source").and_then(Value::as_str).is_some() {
                    m.injected = data
                        .get("source")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                }
                m.extra = data;
                EntryKind::Message(m)
            }
            "assistant.message" => EntryKind::Message(self.assistant(data)),
            "assistant.reasoning" => {
                let mut m = Message::new(Role::Assistant);
                if let Some(text) = take_string(&mut data, "content") {
                    m.content.push(Block::thinking(text, None));
                }
                m.extra = data;
                EntryKind::Message(m)
            }
            "tool.execution_start" => {
                if let (Some(id), Some(name)) = (
                    data.get("toolCallId").and_then(Value::as_str),
                    data.get("toolName").and_then(Value::as_str),
                ) {
                    self.tool_names.insert(id.to_string(), name.to_string());
                }
                event(t, data)
            }
            "tool.execution_complete" => EntryKind::Message(self.tool_result(data)),
            _ => event(t, data),
        }
    }

    fn start(&mut self, t: &str, data: &Map<String, Value>, ts: Option<&Timestamp>) {
        let meta = &mut self.session.meta;
        let s = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_string);
        if t == "session.start" {
            if let Some(id) = s("sessionId") {
                meta.id = id;
            }
            if let Some(v) = s("copilotVersion") {
                meta.agent_version = Some(v);
            }
            if let Some(v) = data.get("version") {
                meta.format_version = Some(v.clone());
            }
            meta.created_at = s("startTime").map(Timestamp::Text).or_else(|| ts.cloned());
        }
        if let Some(m) = s("selectedModel") {
            meta.model.model = Some(m);
        }
        if let Some(cwd) = data
            .get("context")
            .and_then(|c| c.get("cwd"))
            .and_then(Value::as_str)
        {
            meta.cwd = Some(cwd.to_string());
        }
    }

    fn assistant(&mut self, mut data: Map<String, Value>) -> Message {
        let mut m = Message::new(Role::Assistant);
        if let Some(text) = take_string(&mut data, "reasoningText") {
            m.content.push(Block::thinking(text, None));
        }
        if matches!(data.get("content"), Some(Value::String(s)) if !s.is_empty()) {
            if let Some(text) = take_string(&mut data, "content") {
                m.content.push(Block::text(text));
            }
        }
        let calls_ok = match data.get("toolRequests") {
            Some(Value::Array(a)) if !a.is_empty() => a.iter().all(|r| {
                r.get("toolCallId").is_some_and(Value::is_string)
                    && r.get("name").is_some_and(Value::is_string)
            }),
            _ => false,
        };
        if calls_ok {
            if let Some(Value::Array(reqs)) = data.remove("toolRequests") {
                for r in reqs {
                    let Value::Object(mut r) = r else { continue };
                    let id = take_string(&mut r, "toolCallId");
                    let name = take_string(&mut r, "name").unwrap_or_default();
                    let input = r.remove("arguments").unwrap_or(Value::Null);
                    if let Some(id) = &id {
                        self.tool_names.insert(id.clone(), name.clone());
                    }
                    let mut b = Block::tool_call(id, name, input);
                    b.extra = r;
                    m.content.push(b);
                }
            }
        }
        m.model = data
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string);
        m.id = data
            .get("messageId")
            .and_then(Value::as_str)
            .map(str::to_string);
        m.sidechain = data.get("parentToolCallId").is_some_and(Value::is_string);
        m.usage = self.pending_usage.take().or_else(|| {
            data.get("outputTokens")
                .and_then(Value::as_u64)
                .map(|o| Usage {
                    output: o,
                    ..Usage::default()
                })
        });
        m.extra = data;
        m
    }

    fn tool_result(&mut self, mut data: Map<String, Value>) -> Message {
        let mut m = Message::new(Role::Tool);
        let call = data
            .get("toolCallId")
            .and_then(Value::as_str)
            .map(str::to_string);
        let is_error = data.get("success").and_then(Value::as_bool) == Some(false);
        let mut content = Vec::new();
        if let Some(Value::Object(result)) = data.get_mut("result") {
            if let Some(text) = take_string(result, "content") {
                content.push(Block::text(text));
            }
        }
        m.tool_name = call.as_ref().and_then(|c| self.tool_names.get(c).cloned());
        m.tool_call_id = call.clone();
        m.is_error = Some(is_error);
        m.sidechain = data.get("parentToolCallId").is_some_and(Value::is_string);
        m.content.push(Block::tool_result(call, content, is_error));
        m.extra = data;
        m
    }
}

fn event(t: &str, data: Map<String, Value>) -> EntryKind {
    EntryKind::Event {
        source: SOURCE.into(),
        event_type: t.to_string(),
        seq: None,
        payload: Value::Object(data),
    }
}

/// Returns the text of the text blocks of `m`, joined, when it has any.
pub(super) fn joined_text(m: &Message) -> Option<String> {
    let parts: Vec<&str> = m
        .content
        .iter()
        .filter_map(|b| match &b.kind {
            BlockKind::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}
