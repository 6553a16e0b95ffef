//! Writes a session as an acpx session record: the record it was read
//! from, brought up to date, or a new one for a session of another agent.

use super::wire::record::{
    record_to_string, tool_use_holder, AcpxState, AgentMessage, Content, Layout, Opt,
    SessionRecord, Thread, ThreadMessage, ToolResult, ToolResults, ToolUse, UserMessage, SCHEMA,
};
use super::wire::{LAYOUT_KEY, ORDER_KEY, RECORD_KEY};
use crate::{Fidelity, FormatError};
use agentlog_model::{
    Block, BlockKind, EntryKind, Extra, Message, Role, Session, Timestamp, Usage,
};
use serde_json::{json, Map, Value};
use std::io::Write;

/// Writes `session` to `out`.
pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let (record, fidelity) = record_from_session(session);
    out.write_all(record.to_text().as_bytes())
        .map_err(|e| FormatError::write("acpx session record", e))?;
    Ok(fidelity)
}

pub(super) fn usage_to(u: &Usage) -> Value {
    json!({
        "input_tokens": u.input,
        "output_tokens": u.output,
        "cache_creation_input_tokens": u.cache_write,
        "cache_read_input_tokens": u.cache_read,
    })
}

/// The record, layout and key order to write for a session.
pub struct RecordOut {
    /// The record.
    pub record: SessionRecord,
    /// The layout to write it in.
    pub layout: Layout,
    /// The top-level key order.
    pub key_order: Vec<String>,
}

impl RecordOut {
    /// Returns the file text.
    pub fn to_text(&self) -> String {
        record_to_string(&self.record, self.layout, &self.key_order)
    }
}

/// Converts a unified session to a session record (in the layout it was
/// read in, or the seed's for sessions from other formats) and reports what
/// the record cannot hold.
pub fn record_from_session(session: &Session) -> (RecordOut, Fidelity) {
    let mut fid = Fidelity::new("acpx");
    let meta = &session.meta;
    let native = meta
        .extra
        .get(RECORD_KEY)
        .and_then(|v| serde_json::from_value::<SessionRecord>(v.clone()).ok());
    let layout = meta
        .extra
        .get(LAYOUT_KEY)
        .and_then(Value::as_str)
        .and_then(Layout::parse)
        .unwrap_or(Layout::Seed);
    let key_order: Vec<String> = meta
        .extra
        .get(ORDER_KEY)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    let is_native = native.is_some();
    let mut record = match native {
        Some(r) => r,
        None => fresh_record(session, &mut fid),
    };
    let (messages, usage) = messages_from(session, is_native, &mut fid);
    let thread = record.thread_mut();
    thread.messages = Opt::Set(messages);
    if !is_native && !usage.is_empty() {
        let mut total = Usage::default();
        for u in usage.values() {
            total.add(u);
        }
        thread.cumulative_token_usage = Opt::Set(usage_to(&total));
        thread.request_token_usage = Opt::Set(
            usage
                .iter()
                .map(|(k, u)| (k.clone(), usage_to(u)))
                .collect::<Map<String, Value>>(),
        );
    }
    (
        RecordOut {
            record,
            layout,
            key_order,
        },
        fid,
    )
}

pub(super) fn fresh_record(session: &Session, fid: &mut Fidelity) -> SessionRecord {
    let meta = &session.meta;
    let time = |t: &Option<Timestamp>| t.as_ref().map(|t| t.to_rfc3339());
    let mut r = SessionRecord::new(meta.id.clone());
    r.acp_session_id = Opt::Set(meta.id.clone());
    if let Some(cwd) = &meta.cwd {
        r.cwd = Opt::Set(cwd.clone());
    }
    let created = time(&meta.created_at).or_else(|| {
        session
            .entries
            .iter()
            .find_map(|e| e.timestamp.as_ref())
            .map(Timestamp::to_rfc3339)
    });
    if let Some(c) = &created {
        r.created_at = Opt::Set(c.clone());
    }
    let updated = time(&meta.updated_at).or_else(|| {
        session
            .entries
            .iter()
            .rev()
            .find_map(|e| e.timestamp.as_ref())
            .map(Timestamp::to_rfc3339)
    });
    if let Some(u) = &updated {
        r.last_used_at = Opt::Set(u.clone());
    }
    r.closed = Opt::Set(meta.closed_at.is_some());
    r.closed_at = time(&meta.closed_at).into();
    let thread: &mut Thread = r.thread_mut();
    thread.title = meta.title.clone().into();
    thread.updated_at = updated.clone().into();
    if let Some(m) = &meta.model.model {
        thread.model = Opt::Set(Value::String(m.clone()));
    }
    r.acpx = Opt::Set(AcpxState::default());
    if !meta.todos.is_empty() {
        fid.lost("todo list", None);
    }
    if meta.parent_session.is_some() {
        fid.lost("parent session", None);
    }
    if meta.agent_version.is_some() {
        fid.lost("agent version", None);
    }
    r.schema = SCHEMA.into();
    r
}

/// Builds the thread messages; usage per user message id for sessions from
/// other formats.
pub(super) fn messages_from(
    session: &Session,
    native: bool,
    fid: &mut Fidelity,
) -> (
    Vec<ThreadMessage>,
    std::collections::BTreeMap<String, Usage>,
) {
    let mut out: Vec<ThreadMessage> = Vec::new();
    let mut usage = std::collections::BTreeMap::new();
    let mut last_user: Option<String> = None;
    let branch = session.active_branch();
    if branch.len() < session.entries.len() {
        fid.lost("entries off the active branch", None);
    }
    for e in branch {
        match &e.kind {
            EntryKind::Resume => out.push(ThreadMessage::Resume),
            EntryKind::Unknown { raw, .. } if native => {
                out.push(ThreadMessage::Invalid(raw.clone()))
            }
            EntryKind::Message(m) => match &m.role {
                Role::User
                    if m.content
                        .iter()
                        .all(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
                        && !m.content.is_empty() =>
                {
                    for b in &m.content {
                        attach_result(&mut out, b, m, fid, &e.id);
                    }
                }
                Role::User => {
                    let id = m.id.clone().filter(|_| native).unwrap_or_else(|| {
                        if native {
                            e.id.clone()
                        } else {
                            uuid_for(&e.id)
                        }
                    });
                    let mut content = Vec::new();
                    for b in &m.content {
                        match &b.kind {
                            BlockKind::ToolResult { .. } => {
                                attach_result(&mut out, b, m, fid, &e.id)
                            }
                            _ => {
                                if let Some(c) = content_from(b, fid, &e.id, native) {
                                    content.push(c);
                                }
                            }
                        }
                    }
                    if m.injected.is_some() {
                        fid.lost("injected-context marker", Some(&e.id));
                    }
                    last_user = Some(id.clone());
                    out.push(ThreadMessage::User(UserMessage {
                        id,
                        content,
                        extra: if native {
                            m.extra.clone()
                        } else {
                            Extra::new()
                        },
                    }));
                }
                Role::Assistant => {
                    let mut a = AgentMessage::default();
                    for b in &m.content {
                        if let Some(c) = content_from(b, fid, &e.id, native) {
                            a.content.push(c);
                        }
                    }
                    if native {
                        let mut extra = m.extra.clone();
                        a.reasoning_details = match extra.remove("reasoning_details") {
                            Some(Value::Null) => Opt::Null,
                            Some(v) => Opt::Set(v),
                            None => Opt::Absent,
                        };
                        a.tool_results = if extra.remove("tool_results_absent").is_some() {
                            Opt::Absent
                        } else {
                            Opt::Set(ToolResults::default())
                        };
                        a.extra = extra;
                    } else {
                        a.tool_results = Opt::Set(ToolResults::default());
                        if let (Some(u), Some(id)) = (&m.usage, &last_user) {
                            usage
                                .entry(id.clone())
                                .or_insert_with(Usage::default)
                                .add(u);
                        }
                        if m.model.is_some() {
                            fid.lost("per-message model", Some(&e.id));
                        }
                    }
                    out.push(ThreadMessage::Agent(a));
                }
                Role::Tool => {
                    if m.content
                        .iter()
                        .any(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
                    {
                        for b in &m.content {
                            attach_result(&mut out, b, m, fid, &e.id);
                        }
                    } else {
                        let b = Block::tool_result(
                            m.tool_call_id.clone(),
                            m.content.clone(),
                            m.is_error == Some(true),
                        );
                        attach_result(&mut out, &b, m, fid, &e.id);
                    }
                }
                other => fid.lost(format!("{} message", other.as_str()), Some(&e.id)),
            },
            other => fid.lost(format!("entry kind {}", other.name()), Some(&e.id)),
        }
    }
    (out, usage)
}

/// A stable UUID-shaped id for a user message that came from another format.
pub(super) fn uuid_for(entry_id: &str) -> String {
    if uuid::Uuid::parse_str(entry_id).is_ok() {
        return entry_id.to_string();
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(entry_id.as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&digest[..16]);
    // A version-8 (custom) UUID derived from the entry id: stable across runs.
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(b).to_string()
}

pub(super) fn content_from(
    b: &Block,
    fid: &mut Fidelity,
    entry: &str,
    native: bool,
) -> Option<Content> {
    match &b.kind {
        BlockKind::Text { text } => Some(Content::Text(text.clone())),
        BlockKind::Thinking {
            text,
            signature,
            redacted,
        } => {
            if *redacted {
                if let Some(raw) = b.extra.get("acpx_raw") {
                    return Some(Content::Other(raw.clone()));
                }
                fid.lost("redacted thinking", Some(entry));
                return None;
            }
            let mut extra = b.extra.clone();
            let null = extra.remove("signature_null").is_some();
            let signature = match signature {
                Some(s) => Opt::Set(s.clone()),
                None if null || !native => Opt::Null,
                None => Opt::Absent,
            };
            if !native {
                extra.clear();
            }
            Some(Content::Thinking {
                text: text.clone(),
                signature,
                extra,
            })
        }
        BlockKind::ToolCall { id, name, input } => {
            let mut t = b
                .extra
                .get("acpx_tool_use")
                .and_then(|v| serde_json::from_value::<ToolUse>(v.clone()).ok())
                .unwrap_or_else(|| ToolUse {
                    raw_input: Opt::Set(Value::String(input.to_string())),
                    is_input_complete: Opt::Set(Value::Bool(true)),
                    thought_signature: Opt::Null,
                    ..ToolUse::default()
                });
            t.id = id.clone().unwrap_or_default();
            t.name = name.clone();
            if !(t.input.is_absent() && input.is_null()) {
                t.input = Opt::Set(input.clone());
            }
            Some(Content::ToolUse(Box::new(t)))
        }
        BlockKind::Other { value } if native => Some(Content::Other(value.clone())),
        BlockKind::Image { .. } => {
            fid.lost("image", Some(entry));
            None
        }
        BlockKind::Other { .. } => {
            fid.lost("unknown content block", Some(entry));
            None
        }
        BlockKind::ToolResult { .. } => None,
    }
}

/// Puts a tool result into the `tool_results` of the agent message holding
/// the call (the latest agent message when no call matches).
pub(super) fn attach_result(
    out: &mut [ThreadMessage],
    b: &Block,
    m: &Message,
    fid: &mut Fidelity,
    entry: &str,
) {
    let BlockKind::ToolResult {
        tool_call_id,
        content,
        is_error,
    } = &b.kind
    else {
        return;
    };
    let id = tool_call_id
        .clone()
        .or_else(|| m.tool_call_id.clone())
        .unwrap_or_default();
    let key = b
        .extra
        .get("acpx_key")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| id.clone());
    let call = tool_use_holder(out, &id);
    let holder = call.map(|(i, _)| i);
    // The result names its tool: the message's tool name, else the call's.
    let call_name = call.map(|(_, t)| t.name.clone());
    let result = match b
        .extra
        .get("acpx_result")
        .and_then(|v| serde_json::from_value::<ToolResult>(v.clone()).ok())
    {
        Some(r) => r,
        None => {
            let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
            ToolResult {
                tool_use_id: id.clone(),
                tool_name: m.tool_name.clone().or(call_name).into(),
                is_error: Opt::Set(*is_error),
                content: Opt::Set(json!({ "Text": text.join("\n") })),
                output: Opt::Null,
                extra: Extra::new(),
            }
        }
    };
    let holder = holder.or_else(|| {
        out.iter()
            .rposition(|msg| matches!(msg, ThreadMessage::Agent(_)))
    });
    match holder.and_then(|i| out.get_mut(i)) {
        Some(ThreadMessage::Agent(a)) => a
            .tool_results
            .get_or_insert_with(ToolResults::default)
            .0
            .push((key, result)),
        _ => fid.lost("tool result without an agent message", Some(entry)),
    }
}
