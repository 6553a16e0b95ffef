//! Writing sessions as Gemini CLI chats.

use super::wire::{message_record, usage_tokens, CHECKPOINT, SUPERSEDED_IN_CHECKPOINT};
use super::{gemini_session_id, FORMAT_NAME, JSON, NO_MESSAGES};
use crate::{Fidelity, FormatError};
use agentlog_model::{Block, BlockKind, EntryKind, Message, Role, Session, Timestamp, Usage};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;

fn io(e: serde_json::Error) -> FormatError {
    FormatError::write("gemini chat", std::io::Error::from(e))
}

pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let mut fidelity = Fidelity::new(FORMAT_NAME);
    let native = session.meta.format.as_deref() == Some(FORMAT_NAME);
    let json_era = session.meta.format_version.as_ref().and_then(Value::as_str) == Some(JSON);
    if native && json_era {
        let doc = json_document(session);
        serde_json::to_writer_pretty(&mut *out, &doc).map_err(io)?;
        out.write_all(b"\n")
            .map_err(|e| FormatError::write("gemini chat", e))?;
        return Ok(fidelity);
    }
    let lines = if native {
        native_lines(session)
    } else {
        foreign_lines(session, &mut fidelity)
    };
    for line in lines {
        serde_json::to_writer(&mut *out, &line).map_err(io)?;
        out.write_all(b"\n")
            .map_err(|e| FormatError::write("gemini chat", e))?;
    }
    Ok(fidelity)
}

fn json_document(session: &Session) -> Value {
    let mut doc = session.meta.extra.clone();
    if doc.remove(NO_MESSAGES).is_some() {
        return Value::Object(doc);
    }
    let messages: Vec<Value> = session
        .entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Message(m) => Some(message_record(
                &with_entry_extra(m, &e.extra),
                e.timestamp.as_ref(),
                true,
            )),
            EntryKind::Unknown { raw, .. } => Some(raw.clone()),
            _ => None,
        })
        .collect();
    doc.insert("messages".into(), Value::Array(messages));
    Value::Object(doc)
}

fn native_lines(session: &Session) -> Vec<Value> {
    session
        .entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Event { event_type, .. } if event_type == SUPERSEDED_IN_CHECKPOINT => None,
            EntryKind::Event { payload, .. } => Some(payload.clone()),
            EntryKind::Unknown { raw, .. } => Some(raw.clone()),
            EntryKind::Message(m) => {
                let m = with_entry_extra(m, &e.extra);
                (!m.extra.contains_key(CHECKPOINT))
                    .then(|| message_record(&m, e.timestamp.as_ref(), true))
            }
            _ => None,
        })
        .collect()
}

/// Returns the sha256 hex of a project path (Gemini's `projectHash`).
pub(super) fn project_hash(cwd: &str) -> String {
    hex::encode(Sha256::digest(cwd.as_bytes()))
}

/// Builds the records of a session from another format.
struct Builder {
    records: Vec<Map<String, Value>>,
    /// Tool call id -> (record, call) index.
    calls: HashMap<String, (usize, usize)>,
    /// True while the last record is a gemini record that may take more.
    open: bool,
    session_id: String,
    count: usize,
}

impl Builder {
    fn next_id(&mut self) -> String {
        self.count += 1;
        let seed = format!("{}/{}", self.session_id, self.count);
        let digest = Sha256::digest(seed.as_bytes());
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&digest[..16]);
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string()
    }

    fn record(&mut self, kind: &str, ts: &str) -> usize {
        let mut r = Map::new();
        r.insert("id".into(), self.next_id().into());
        r.insert("timestamp".into(), ts.into());
        r.insert("type".into(), kind.into());
        self.records.push(r);
        self.records.len() - 1
    }

    fn user(&mut self, kind: &str, ts: &str, parts: Vec<Value>) {
        if parts.is_empty() {
            return;
        }
        let i = self.record(kind, ts);
        self.records[i].insert("content".into(), Value::Array(parts));
        self.open = false;
    }

    fn result(&mut self, b: &Block, fallback_id: Option<&String>) -> bool {
        let BlockKind::ToolResult {
            tool_call_id,
            content,
            is_error,
        } = &b.kind
        else {
            return false;
        };
        let Some(id) = tool_call_id.as_ref().or(fallback_id) else {
            return false;
        };
        let Some(&(r, c)) = self.calls.get(id) else {
            return false;
        };
        let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
        let Some(call) = self.records[r]
            .get_mut("toolCalls")
            .and_then(Value::as_array_mut)
            .and_then(|a| a.get_mut(c))
            .and_then(Value::as_object_mut)
        else {
            return false;
        };
        let name = call.get("name").cloned().unwrap_or(Value::Null);
        let response = if *is_error {
            json!({"error": text.join("\n")})
        } else {
            json!({"output": text.join("\n")})
        };
        call.insert(
            "result".into(),
            json!([{"functionResponse": {"id": id, "name": name, "response": response}}]),
        );
        call.insert(
            "status".into(),
            if *is_error { "error" } else { "success" }.into(),
        );
        true
    }

    fn assistant(&mut self, m: &Message, ts: &str, fidelity: &mut Fidelity, entry: &str) {
        let has_text = m
            .content
            .iter()
            .any(|b| matches!(b.kind, BlockKind::Text { .. }));
        let reuse = self.open
            && !(has_text
                && self
                    .records
                    .last()
                    .is_some_and(|r| r.contains_key("toolCalls")));
        let i = if reuse {
            self.records.len() - 1
        } else {
            let i = self.record("gemini", ts);
            self.records[i].insert("content".into(), "".into());
            i
        };
        self.open = true;
        let rec = &mut self.records[i];
        for b in &m.content {
            match &b.kind {
                BlockKind::Text { text } => {
                    let old = rec.get("content").and_then(Value::as_str).unwrap_or("");
                    let joined = if old.is_empty() {
                        text.clone()
                    } else {
                        format!("{old}\n\n{text}")
                    };
                    rec.insert("content".into(), joined.into());
                }
                BlockKind::Thinking {
                    text,
                    signature,
                    redacted,
                } => {
                    if signature.is_some() {
                        fidelity.lost("thinking signatures", Some(entry));
                    }
                    if text.is_empty() {
                        if *redacted {
                            fidelity.lost("redacted thinking", Some(entry));
                        }
                        continue;
                    }
                    let t = json!({"subject": "", "description": text, "timestamp": ts});
                    push_array(rec, "thoughts", t);
                }
                BlockKind::ToolCall { id, name, input } => {
                    let id = id.clone().unwrap_or_else(|| format!("{name}_{entry}"));
                    let args = match input {
                        Value::String(s) => {
                            serde_json::from_str(s).unwrap_or_else(|_| input.clone())
                        }
                        v => v.clone(),
                    };
                    let call = json!({"id": id, "name": name, "args": args, "status": "success", "timestamp": ts});
                    let n = push_array(rec, "toolCalls", call);
                    self.calls.insert(id, (i, n));
                }
                BlockKind::ToolResult { .. } => {}
                _ => fidelity.lost(
                    format!("{} blocks in assistant messages", block_name(b)),
                    Some(entry),
                ),
            }
        }
        let rec = &mut self.records[i];
        if let Some(model) = &m.model {
            rec.insert("model".into(), model.clone().into());
        }
        if let Some(u) = &m.usage {
            let mut total: Usage = rec
                .get("tokens")
                .and_then(super::wire::tokens_usage)
                .unwrap_or_default();
            if rec.contains_key("tokens") {
                total.total = None;
            }
            total.add(u);
            rec.insert("tokens".into(), usage_tokens(&total));
        }
        for b in &m.content {
            self.result(b, None);
        }
    }
}

fn block_name(b: &Block) -> &'static str {
    match &b.kind {
        BlockKind::Image { .. } => "image",
        BlockKind::Other { .. } => "opaque",
        _ => "other",
    }
}

fn push_array(rec: &mut Map<String, Value>, key: &str, v: Value) -> usize {
    let arr = rec
        .entry(key.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    match arr.as_array_mut() {
        Some(a) => {
            a.push(v);
            a.len() - 1
        }
        None => 0,
    }
}

fn user_parts(m: &Message, fidelity: &mut Fidelity, entry: &str) -> Vec<Value> {
    let mut parts = Vec::new();
    for b in &m.content {
        match &b.kind {
            BlockKind::Text { text } => parts.push(json!({"text": text})),
            BlockKind::Image {
                media_type,
                data: Some(d),
                ..
            } => parts.push(json!({"inlineData": {"mimeType": media_type.clone().unwrap_or_else(|| "image/png".into()), "data": d}})),
            BlockKind::ToolResult { .. } => {}
            _ => fidelity.lost(format!("{} blocks in user messages", block_name(b)), Some(entry)),
        }
    }
    parts
}

fn foreign_lines(session: &Session, fidelity: &mut Fidelity) -> Vec<Value> {
    let meta = &session.meta;
    let start = meta
        .created_at
        .as_ref()
        .or_else(|| session.entries.iter().find_map(|e| e.timestamp.as_ref()))
        .map(Timestamp::to_rfc3339)
        .unwrap_or_else(|| Timestamp::now().to_rfc3339());
    let cwd = meta.cwd.clone().unwrap_or_default();
    if meta.cwd.is_none() {
        fidelity.lost("working directory (projectHash of an empty path)", None);
    }
    let mut b = Builder {
        records: Vec::new(),
        calls: HashMap::new(),
        open: false,
        session_id: gemini_session_id(session),
        count: 0,
    };
    let branch = session.active_branch();
    for _ in 0..session.entries.len() - branch.len() {
        fidelity.lost("entries on branches other than the current one", None);
    }
    let mut ts = start.clone();
    for e in branch {
        if let Some(t) = &e.timestamp {
            ts = t.to_rfc3339();
        }
        let EntryKind::Message(m) = &e.kind else {
            fidelity.lost(format!("entry kind {}", e.kind_name()), Some(&e.id));
            continue;
        };
        if !m.extra.is_empty() {
            fidelity.lost("native message fields of the source format", Some(&e.id));
        }
        match &m.role {
            Role::Assistant => b.assistant(m, &ts, fidelity, &e.id),
            Role::Tool => {
                let fallback = m.tool_call_id.as_ref();
                let mut any = false;
                for blk in &m.content {
                    any |= b.result(blk, fallback);
                }
                if !any {
                    // A tool message with plain content answers its call.
                    let blk = Block::tool_result(
                        m.tool_call_id.clone(),
                        m.content.clone(),
                        m.is_error == Some(true),
                    );
                    if !b.result(&blk, fallback) {
                        fidelity.lost("tool results with no matching call", Some(&e.id));
                    }
                }
            }
            Role::User if m.injected.is_none() => {
                for blk in &m.content {
                    b.result(blk, None);
                }
                let parts = user_parts(m, fidelity, &e.id);
                b.user("user", &ts, parts);
            }
            Role::User | Role::System | Role::Developer => {
                // Context the CLI would not send as a prompt: kept as a
                // notice.
                let parts = user_parts(m, fidelity, &e.id);
                let text: Vec<&str> = parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect();
                if !text.is_empty() {
                    let i = b.record("info", &ts);
                    b.records[i].insert("content".into(), text.join("\n\n").into());
                    b.open = false;
                }
                if m.role != Role::User {
                    fidelity.lost(
                        "system and developer messages (written as info notices)",
                        Some(&e.id),
                    );
                }
            }
            Role::Custom(r) => fidelity.lost(format!("messages with role {r}"), Some(&e.id)),
        }
    }
    let last = session
        .entries
        .iter()
        .rev()
        .find_map(|e| e.timestamp.as_ref())
        .map(Timestamp::to_rfc3339)
        .unwrap_or_else(|| start.clone());
    let mut lines = vec![json!({
        "sessionId": b.session_id,
        "projectHash": project_hash(&cwd),
        "startTime": start,
        "lastUpdated": last,
        "kind": "main",
    })];
    if let Some(title) = &meta.title {
        lines.push(json!({"$set": {"summary": title}}));
    }
    lines.extend(b.records.into_iter().map(Value::Object));
    lines
}

/// Returns the message with the entry's extras among its own. Gemini message
/// entries keep nothing in `Entry::extra`, but a trip through the unified
/// JSON format moves the message's extras there (both serialize as
/// `extra`).
fn with_entry_extra<'m>(
    m: &'m Message,
    extra: &agentlog_model::Extra,
) -> std::borrow::Cow<'m, Message> {
    if extra.is_empty() {
        return std::borrow::Cow::Borrowed(m);
    }
    let mut m = m.clone();
    for (k, v) in extra {
        m.extra.entry(k.clone()).or_insert_with(|| v.clone());
    }
    std::borrow::Cow::Owned(m)
}
