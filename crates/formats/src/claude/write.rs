//! Writing sessions as Claude Code transcripts.
//!
//! A session read from a Claude file is written back line for line from
//! the model and what each entry kept under [`MARK`]. Any other session is
//! written in the shape of current (2.x) Claude Code files, as one
//! `parentUuid` chain along the active branch, so `claude --resume` can
//! continue it; what that shape cannot hold is reported.

use super::read::line_base;
use super::wire::{self, MARK};
use crate::{Fidelity, FormatError};
use agentlog_model::{Block, BlockKind, Entry, EntryKind, Message, Role, Session, Timestamp};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::io::Write;

/// The Claude Code version written into converted sessions: the newest
/// shape this writer follows.
pub(crate) const WRITER_VERSION: &str = "2.1.80";

fn emit(out: &mut dyn Write, v: &Value) -> Result<(), FormatError> {
    let mut line = serde_json::to_vec(v)
        .map_err(|e| FormatError::write("Claude transcript line", std::io::Error::from(e)))?;
    line.push(b'\n');
    out.write_all(&line)
        .map_err(|e| FormatError::write("Claude transcript", e))
}

/// True when the session was read from a Claude file (its entries carry
/// their native shape).
pub(crate) fn is_native(session: &Session) -> bool {
    session.meta.format.as_deref() == Some("claude")
}

/// Writes `session`, natively when it was read from Claude, converted
/// otherwise.
pub(crate) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    if is_native(session) {
        write_native(session, out)
    } else {
        write_converted(session, out)
    }
}

/// Writes every entry back as the lines it was read from.
fn write_native(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let fidelity = Fidelity::new("claude");
    for e in &session.entries {
        for v in native_lines(e) {
            emit(out, &v)?;
        }
    }
    Ok(fidelity)
}

/// Returns the native lines of an entry read from a Claude file.
pub(crate) fn native_lines(e: &Entry) -> Vec<Value> {
    let base = wire::entry_to_native(e);
    let mark = e.extra.get(MARK);
    if let Some(Value::Array(lines)) = mark.and_then(|m| m.get("lines")) {
        return lines
            .iter()
            .map(|l| {
                let blocks: Option<Vec<usize>> =
                    l.get("blocks").and_then(Value::as_array).map(|a| {
                        a.iter()
                            .filter_map(Value::as_u64)
                            .map(|i| i as usize)
                            .collect()
                    });
                let mut v = line_base(&base, e, blocks.as_deref());
                if let Some(p) = l.get("patch") {
                    wire::apply(&mut v, p);
                }
                v
            })
            .collect();
    }
    let mut v = base;
    if let Some(p) = mark.and_then(|m| m.get("patch")) {
        wire::apply(&mut v, p);
    }
    vec![v]
}

/// Returns a UUID derived from `parts`: the same input gives the same id.
pub(crate) fn derived_uuid(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    let d = h.finalize();
    let mut b = [0u8; 16];
    b.copy_from_slice(&d[..16]);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(b).to_string()
}

/// Returns the session id a converted session gets in Claude: its own id
/// when that is a UUID, else one derived from it.
pub(crate) fn claude_session_id(session: &Session) -> String {
    let id = &session.meta.id;
    if uuid::Uuid::parse_str(id).is_ok() {
        id.to_lowercase()
    } else {
        derived_uuid(&["agentlog-session", id])
    }
}

fn hex_id(parts: &[&str]) -> String {
    derived_uuid(parts).replace('-', "")
}

struct Converter<'a> {
    session: &'a Session,
    fidelity: Fidelity,
    session_id: String,
    cwd: String,
    version: String,
    git_branch: String,
    parent: Option<String>,
    last_ts: String,
    /// Tool-call ids as written, by their id in the model.
    tool_ids: HashMap<String, String>,
    /// Calls written and not answered yet, in order.
    open: Vec<(String, String)>,
    answered: HashSet<String>,
    lines: Vec<Value>,
    /// The summary of the compaction just written, until a summary message
    /// follows it (or it is written itself).
    pending_summary: Option<(String, String, String)>,
}

/// Writes a session from another format as a 2.x Claude transcript.
fn write_converted(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let meta = &session.meta;
    let mut c = Converter {
        session,
        fidelity: Fidelity::new("claude"),
        session_id: claude_session_id(session),
        cwd: meta.cwd.clone().unwrap_or_default(),
        version: match (&meta.agent, &meta.agent_version) {
            (agentlog_model::Agent::Claude, Some(v)) => v.clone(),
            _ => WRITER_VERSION.to_string(),
        },
        git_branch: meta
            .extra
            .get("gitBranch")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        parent: None,
        last_ts: meta
            .created_at
            .as_ref()
            .map(Timestamp::to_rfc3339)
            .unwrap_or_else(|| "1970-01-01T00:00:00.000Z".into()),
        tool_ids: HashMap::new(),
        open: Vec::new(),
        answered: HashSet::new(),
        lines: Vec::new(),
        pending_summary: None,
    };
    if meta.cwd.is_none() {
        c.fidelity.lost("working directory (none recorded)", None);
    }
    let branch = session.active_branch();
    let off = session.entries.len().saturating_sub(branch.len());
    for _ in 0..off {
        c.fidelity.lost("entries off the active branch", None);
    }
    for e in branch {
        c.entry(e);
    }
    c.flush_summary();
    c.close_open_calls("end");
    if let Some(title) = &meta.title {
        c.lines.push(json!({
            "type": "custom-title",
            "customTitle": title,
            "sessionId": c.session_id,
        }));
    }
    for v in &c.lines {
        emit(out, v)?;
    }
    Ok(c.fidelity)
}

/// True when a message holds tool results and nothing else but blank text.
fn only_tool_results(m: &Message) -> bool {
    m.content
        .iter()
        .any(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
        && m.content.iter().all(|b| match &b.kind {
            BlockKind::ToolResult { .. } => true,
            BlockKind::Text { text } => text.trim().is_empty(),
            _ => false,
        })
}

impl Converter<'_> {
    fn ts(&mut self, e: &Entry) -> String {
        if let Some(t) = e.timestamp.as_ref().filter(|t| t.to_utc().is_some()) {
            self.last_ts = t.to_rfc3339();
        }
        self.last_ts.clone()
    }

    fn envelope(&self, ty: &str, uuid: &str, ts: &str) -> Map<String, Value> {
        let mut o = Map::new();
        o.insert(
            "parentUuid".into(),
            self.parent.clone().map_or(Value::Null, Value::String),
        );
        o.insert("isSidechain".into(), false.into());
        o.insert("userType".into(), "external".into());
        o.insert("cwd".into(), self.cwd.clone().into());
        o.insert("sessionId".into(), self.session_id.clone().into());
        o.insert("version".into(), self.version.clone().into());
        o.insert("gitBranch".into(), self.git_branch.clone().into());
        o.insert("type".into(), ty.into());
        o.insert("uuid".into(), uuid.into());
        o.insert("timestamp".into(), ts.into());
        o
    }

    fn uuid_for(&self, e: &Entry, suffix: &str) -> String {
        if suffix.is_empty() && uuid::Uuid::parse_str(&e.id).is_ok() {
            return e.id.clone();
        }
        derived_uuid(&["agentlog-entry", &self.session.meta.id, &e.id, suffix])
    }

    fn push(&mut self, mut o: Map<String, Value>, message: Value) {
        let uuid = o.get("uuid").and_then(Value::as_str).map(str::to_string);
        o.insert("message".into(), message);
        self.lines.push(Value::Object(o));
        self.parent = uuid;
    }

    fn tool_id(&mut self, id: Option<&str>, fallback: &str) -> String {
        let key = id.unwrap_or(fallback).to_string();
        if let Some(v) = self.tool_ids.get(&key) {
            return v.clone();
        }
        let clean: String = key
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let v = if id.is_none() || clean.is_empty() {
            format!("toolu_{}", &hex_id(&[&self.session.meta.id, &key])[..24])
        } else {
            clean
        };
        self.tool_ids.insert(key, v.clone());
        v
    }

    fn entry(&mut self, e: &Entry) {
        let is_summary = e
            .message()
            .is_some_and(|m| m.injected.as_deref() == Some("compact-summary"));
        if is_summary {
            self.pending_summary = None;
        } else {
            self.flush_summary();
        }
        match &e.kind {
            EntryKind::Message(m) => match m.role {
                Role::Assistant => self.assistant(e, m),
                Role::Tool => self.tool_result(e, m, ""),
                // Gemini keeps function responses in user messages.
                Role::User if only_tool_results(m) => self.tool_result(e, m, ""),
                Role::User => self.user(e, m, false),
                _ => {
                    self.fidelity.lost(
                        format!("{} messages (written as meta user messages)", m.role),
                        Some(&e.id),
                    );
                    self.user(e, m, true)
                }
            },
            EntryKind::CustomMessage { content, .. } => {
                let mut m = Message::new(Role::User);
                m.content = content.clone();
                self.user(e, &m, true)
            }
            EntryKind::Compaction {
                summary,
                tokens_before,
                ..
            } => self.compaction(e, summary, *tokens_before),
            EntryKind::SessionInfo { name: Some(name) } => {
                self.lines.push(json!({
                    "type": "custom-title",
                    "customTitle": name,
                    "sessionId": self.session_id,
                }));
            }
            other => self
                .fidelity
                .lost(format!("entry kind {}", other.name()), Some(&e.id)),
        }
    }

    fn close_open_calls(&mut self, at: &str) {
        if self.open.is_empty() {
            return;
        }
        let open = std::mem::take(&mut self.open);
        let content: Vec<Value> = open
            .iter()
            .map(|(id, _)| {
                json!({
                    "type": "tool_result",
                    "tool_use_id": id,
                    "content": "No result was recorded for this tool call.",
                    "is_error": true,
                })
            })
            .collect();
        for (id, _) in &open {
            self.fidelity.lost(
                "tool calls without a result (an error result was added)",
                Some(id),
            );
            self.answered.insert(id.clone());
        }
        let uuid = derived_uuid(&[
            "agentlog-missing-results",
            &self.session.meta.id,
            at,
            &open[0].0,
        ]);
        let ts = self.last_ts.clone();
        let o = self.envelope("user", &uuid, &ts);
        self.push(o, json!({"role": "user", "content": content}));
    }

    fn user(&mut self, e: &Entry, m: &Message, meta_flag: bool) {
        self.close_open_calls(&e.id);
        let mut content = Vec::new();
        for b in &m.content {
            match &b.kind {
                BlockKind::Text { text } if !text.is_empty() => {
                    content.push(json!({"type": "text", "text": text}))
                }
                BlockKind::Text { .. } => {}
                BlockKind::Image { .. } => content.push(wire::block_to_native(&plain(b))),
                BlockKind::ToolResult { .. } => {
                    self.fidelity.lost(
                        "tool results inside user messages (written as text)",
                        Some(&e.id),
                    );
                    if let Some(t) = b.plain_text() {
                        content.push(json!({"type": "text", "text": t}));
                    }
                }
                _ => self.fidelity.lost(
                    format!("{} blocks in user messages", block_name(b)),
                    Some(&e.id),
                ),
            }
        }
        if content.is_empty() {
            return;
        }
        let ts = self.ts(e);
        let uuid = self.uuid_for(e, "");
        let mut o = self.envelope("user", &uuid, &ts);
        if meta_flag || m.injected.as_deref() == Some("meta") {
            o.insert("isMeta".into(), true.into());
        }
        if m.injected.as_deref() == Some("compact-summary") {
            o.insert("isCompactSummary".into(), true.into());
        }
        let single_text = m.content_is_text
            && content.len() == 1
            && content[0].get("type").and_then(Value::as_str) == Some("text");
        let content = if single_text {
            content[0].get("text").cloned().unwrap_or(Value::Null)
        } else {
            Value::Array(content)
        };
        self.push(o, json!({"role": "user", "content": content}));
    }

    fn tool_result(&mut self, e: &Entry, m: &Message, suffix: &str) {
        let mut results: Vec<(Option<String>, Vec<Block>, bool)> = Vec::new();
        for b in &m.content {
            if let BlockKind::ToolResult {
                tool_call_id,
                content,
                is_error,
            } = &b.kind
            {
                results.push((tool_call_id.clone(), content.clone(), *is_error));
            }
        }
        if results.is_empty() {
            let content: Vec<Block> = m
                .content
                .iter()
                .filter(|b| !matches!(b.kind, BlockKind::ToolResult { .. }))
                .cloned()
                .collect();
            results.push((m.tool_call_id.clone(), content, m.is_error.unwrap_or(false)));
        }
        let mut blocks = Vec::new();
        for (call, content, is_error) in results {
            let known = call
                .as_deref()
                .and_then(|c| self.tool_ids.get(c))
                .cloned()
                .filter(|id| self.open.iter().any(|(o, _)| o == id));
            // The same result again (Gemini records a call's result with the
            // call and once more as a function response): written once.
            let repeated = call
                .as_deref()
                .and_then(|c| self.tool_ids.get(c))
                .is_some_and(|id| self.answered.contains(id));
            if known.is_none() && repeated {
                continue;
            }
            let Some(id) = known else {
                self.fidelity.lost(
                    "tool results without a matching call (written as text)",
                    Some(&e.id),
                );
                let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
                let mut um = Message::text(Role::User, text.join("\n"));
                um.content_is_text = true;
                self.user(e, &um, true);
                continue;
            };
            self.open.retain(|(o, _)| *o != id);
            self.answered.insert(id.clone());
            let mut inner = Vec::new();
            for b in &content {
                match &b.kind {
                    BlockKind::Text { text } => inner.push(json!({"type": "text", "text": text})),
                    BlockKind::Image { .. } => inner.push(wire::block_to_native(&plain(b))),
                    _ => {
                        self.fidelity.lost(
                            format!("{} blocks in tool results", block_name(b)),
                            Some(&e.id),
                        );
                        if let Some(t) = b.plain_text() {
                            inner.push(json!({"type": "text", "text": t}));
                        }
                    }
                }
            }
            let mut r = Map::new();
            r.insert("tool_use_id".into(), id.into());
            r.insert("type".into(), "tool_result".into());
            let only_text = inner
                .iter()
                .all(|v| v.get("type").and_then(Value::as_str) == Some("text"));
            if only_text {
                let text: Vec<&str> = inner
                    .iter()
                    .filter_map(|v| v.get("text").and_then(Value::as_str))
                    .collect();
                r.insert("content".into(), text.join("\n").into());
            } else {
                r.insert("content".into(), Value::Array(inner));
            }
            if is_error {
                r.insert("is_error".into(), true.into());
            }
            blocks.push(Value::Object(r));
        }
        if blocks.is_empty() {
            return;
        }
        let ts = self.ts(e);
        let uuid = self.uuid_for(e, suffix);
        let o = self.envelope("user", &uuid, &ts);
        self.push(o, json!({"role": "user", "content": blocks}));
    }

    fn assistant(&mut self, e: &Entry, m: &Message) {
        self.close_open_calls(&e.id);
        let anthropic = m.provider.as_deref().is_none_or(|p| p == "anthropic")
            && m.model
                .as_deref()
                .or(self.session.meta.model.model.as_deref())
                .is_some_and(|x| x.starts_with("claude"));
        let mut content = Vec::new();
        let mut calls = Vec::new();
        let mut results = Message::new(Role::Tool);
        for b in &m.content {
            match &b.kind {
                BlockKind::ToolResult { .. } => results.content.push(b.clone()),
                BlockKind::Text { text } if !text.is_empty() => {
                    content.push(json!({"type": "text", "text": text}))
                }
                BlockKind::Text { .. } => {}
                BlockKind::Thinking {
                    text,
                    signature,
                    redacted,
                } => match (anthropic, redacted, signature, b.extra.get("data")) {
                    (true, true, _, Some(data)) => {
                        content.push(json!({"type": "redacted_thinking", "data": data}))
                    }
                    (true, false, Some(sig), _) => content.push(json!({
                        "type": "thinking", "thinking": text, "signature": sig
                    })),
                    _ => self.fidelity.lost(
                        "thinking without an Anthropic signature (Claude cannot send it back)",
                        Some(&e.id),
                    ),
                },
                BlockKind::ToolCall { id, name, input } => {
                    let fallback = format!("{}#{}", e.id, calls.len());
                    let tid = self.tool_id(id.as_deref(), &fallback);
                    let input = match input {
                        Value::Object(_) => input.clone(),
                        Value::String(s) => match serde_json::from_str::<Value>(s) {
                            Ok(v @ Value::Object(_)) => v,
                            _ => {
                                self.fidelity.lost(
                                    "tool inputs that are not JSON objects (wrapped)",
                                    Some(&e.id),
                                );
                                json!({ "input": s })
                            }
                        },
                        Value::Null => json!({}),
                        other => {
                            self.fidelity.lost(
                                "tool inputs that are not JSON objects (wrapped)",
                                Some(&e.id),
                            );
                            json!({ "input": other })
                        }
                    };
                    calls.push((tid.clone(), name.clone()));
                    content
                        .push(json!({"type": "tool_use", "id": tid, "name": name, "input": input}));
                }
                _ => self.fidelity.lost(
                    format!("{} blocks in assistant messages", block_name(b)),
                    Some(&e.id),
                ),
            }
        }
        if content.is_empty() {
            return;
        }
        let ts = self.ts(e);
        let uuid = self.uuid_for(e, "");
        let mut o = self.envelope("assistant", &uuid, &ts);
        let msg_id = match &m.id {
            Some(id) if id.starts_with("msg_") => id.clone(),
            _ => format!(
                "msg_{}",
                &hex_id(&["msg", &self.session.meta.id, &e.id])[..24]
            ),
        };
        let request_id = e
            .extra
            .get("requestId")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| {
                format!(
                    "req_{}",
                    &hex_id(&["req", &self.session.meta.id, &e.id])[..24]
                )
            });
        let stop = match m.stop_reason.as_deref() {
            Some(
                s @ ("end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "pause_turn"
                | "refusal"),
            ) => s.to_string(),
            _ if !calls.is_empty() => "tool_use".into(),
            Some(s) if s.contains("length") || s.contains("max") => "max_tokens".into(),
            _ => "end_turn".into(),
        };
        let usage = m.usage.clone().unwrap_or_default();
        let mut usage_v = Map::new();
        usage_v.insert("input_tokens".into(), usage.input.into());
        usage_v.insert(
            "cache_creation_input_tokens".into(),
            usage.cache_write.into(),
        );
        usage_v.insert("cache_read_input_tokens".into(), usage.cache_read.into());
        usage_v.insert("output_tokens".into(), usage.output.into());
        let model = m
            .model
            .clone()
            .or_else(|| self.session.meta.model.model.clone())
            .unwrap_or_else(|| "unknown".into());
        let message = json!({
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": null,
            "usage": Value::Object(usage_v),
        });
        o.insert("requestId".into(), request_id.into());
        self.push(o, message);
        self.open.extend(calls);
        // Results recorded inside the assistant message (Gemini's tool
        // calls carry theirs) follow it as Claude's tool-result message.
        if !results.content.is_empty() {
            self.tool_result(e, &results, "results");
        }
    }

    fn compaction(&mut self, e: &Entry, summary: &str, tokens_before: Option<u64>) {
        self.close_open_calls(&e.id);
        let ts = self.ts(e);
        let uuid = self.uuid_for(e, "");
        let logical = self.parent.take();
        let mut o = self.envelope("system", &uuid, &ts);
        o.insert("subtype".into(), "compact_boundary".into());
        o.insert("content".into(), "Conversation compacted".into());
        o.insert("isMeta".into(), false.into());
        o.insert("level".into(), "info".into());
        o.insert(
            "logicalParentUuid".into(),
            logical.map_or(Value::Null, Value::String),
        );
        o.insert(
            "compactMetadata".into(),
            json!({"trigger": "manual", "preTokens": tokens_before.unwrap_or(0)}),
        );
        self.lines.push(Value::Object(o));
        self.parent = Some(uuid);
        if !summary.is_empty() {
            let su = self.uuid_for(e, "summary");
            self.pending_summary = Some((su, ts, summary.to_string()));
        }
    }

    /// Writes the summary message of the last compaction, when none
    /// followed it.
    fn flush_summary(&mut self) {
        let Some((uuid, ts, summary)) = self.pending_summary.take() else {
            return;
        };
        let mut o = self.envelope("user", &uuid, &ts);
        o.insert("isCompactSummary".into(), true.into());
        o.insert("isVisibleInTranscriptOnly".into(), true.into());
        self.push(o, json!({"role": "user", "content": summary}));
    }
}

/// Returns `b` without its extras (converted blocks carry no foreign fields).
fn plain(b: &Block) -> Block {
    Block {
        kind: b.kind.clone(),
        extra: Default::default(),
    }
}

fn block_name(b: &Block) -> &'static str {
    b.kind.name()
}
