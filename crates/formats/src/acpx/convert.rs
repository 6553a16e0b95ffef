//! Conversion between session records and the unified model.
//!
//! Reading keeps the whole record: the thread's messages become entries
//! (tool results become tool-result entries after their agent message), and
//! everything else — runtime fields, the `acpx` namespace, token usage, the
//! file's layout and key order — is kept in `meta.extra["acpx_record"]`, so
//! writing the session back gives the same JSON values.

use super::record::{
    record_to_string, AcpxState, AgentMessage, Content, Layout, Opt, ParsedRecord, SessionRecord,
    Thread, ThreadMessage, ToolResult, ToolResults, ToolUse, UserMessage, SCHEMA,
};
use crate::Fidelity;
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta,
    Timestamp, Usage,
};
use serde_json::{json, Map, Value};

const RECORD_KEY: &str = "acpx_record";
const LAYOUT_KEY: &str = "acpx_layout";
const ORDER_KEY: &str = "acpx_key_order";

/// Converts a parsed record to a unified session.
pub fn session_from_record(parsed: &ParsedRecord) -> Session {
    let r = &parsed.record;
    let mut meta = SessionMeta::new(r.acpx_record_id.clone(), Agent::Acpx);
    meta.format = Some("acpx".into());
    meta.format_version = Some(Value::String(r.schema.clone()));
    meta.cwd = r.cwd.get().cloned();
    let thread = r.thread.get();
    meta.title = thread
        .and_then(|t| t.title.get().cloned())
        .or_else(|| r.name.get().cloned());
    meta.created_at = r.created_at.get().cloned().map(Timestamp::Text);
    meta.updated_at = thread
        .and_then(|t| t.updated_at.get().cloned())
        .or_else(|| r.last_used_at.get().cloned())
        .map(Timestamp::Text);
    meta.closed_at = r.closed_at.get().cloned().map(Timestamp::Text);
    if let Some(Value::String(m)) = thread.and_then(|t| t.model.get()) {
        meta.model.model = Some(m.clone());
    }
    let mut rest = r.clone();
    if let Some(t) = rest.thread.get_mut() {
        if let Opt::Set(msgs) = &mut t.messages {
            msgs.clear();
        }
    }
    if let Ok(v) = serde_json::to_value(&rest) {
        meta.extra.insert(RECORD_KEY.into(), v);
    }
    meta.extra.insert(
        LAYOUT_KEY.into(),
        Value::String(parsed.layout.as_str().into()),
    );
    meta.extra.insert(ORDER_KEY.into(), json!(parsed.key_order));

    let request_usage = thread.and_then(|t| t.request_token_usage.get());
    let mut session = Session::new(meta);
    let mut used = std::collections::HashSet::new();
    let mut last_user: Option<String> = None;
    for (i, m) in r.messages().iter().enumerate() {
        let fallback = format!("m{i}");
        let (kind, preferred) = match m {
            ThreadMessage::User(u) => {
                last_user = Some(u.id.clone());
                (EntryKind::Message(user_message(u)), Some(u.id.clone()))
            }
            ThreadMessage::Agent(a) => {
                let mut msg = agent_message(a);
                msg.usage = last_user
                    .as_ref()
                    .and_then(|id| request_usage.and_then(|u| u.get(id)))
                    .map(usage_from);
                (EntryKind::Message(msg), None)
            }
            ThreadMessage::Resume => (EntryKind::Resume, None),
            ThreadMessage::Invalid(v) => (
                EntryKind::Unknown {
                    record_type: None,
                    raw: v.clone(),
                },
                None,
            ),
        };
        let id = unique(
            &mut used,
            preferred.filter(|s| !s.is_empty()).unwrap_or(fallback),
        );
        let parent = session.leaf_id.clone();
        session.push(Entry::new(id.clone(), parent, kind));
        if let ThreadMessage::Agent(a) = m {
            if let Opt::Set(results) = &a.tool_results {
                for (key, res) in &results.0 {
                    let rid = unique(&mut used, format!("{id}:{key}"));
                    let parent = session.leaf_id.clone();
                    session.push(Entry::new(
                        rid,
                        parent,
                        EntryKind::Message(result_message(key, res)),
                    ));
                }
            }
        }
    }
    session
}

fn unique(used: &mut std::collections::HashSet<String>, id: String) -> String {
    let mut candidate = id.clone();
    let mut n = 1;
    while used.contains(&candidate) {
        n += 1;
        candidate = format!("{id}~{n}");
    }
    used.insert(candidate.clone());
    candidate
}

fn user_message(u: &UserMessage) -> Message {
    let mut m = Message::new(Role::User);
    m.id = Some(u.id.clone());
    m.content = u.content.iter().map(block_from).collect();
    m.extra = u.extra.clone();
    m
}

fn agent_message(a: &AgentMessage) -> Message {
    let mut m = Message::new(Role::Assistant);
    m.content = a.content.iter().map(block_from).collect();
    m.extra = a.extra.clone();
    if let Opt::Set(v) = &a.reasoning_details {
        m.extra.insert("reasoning_details".into(), v.clone());
    } else if a.reasoning_details == Opt::Null {
        m.extra.insert("reasoning_details".into(), Value::Null);
    }
    if a.tool_results.is_absent() {
        m.extra
            .insert("tool_results_absent".into(), Value::Bool(true));
    }
    m
}

fn block_from(c: &Content) -> Block {
    match c {
        Content::Text(t) => Block::text(t.clone()),
        Content::Thinking {
            text,
            signature,
            extra,
        } => {
            let mut b = Block::thinking(text.clone(), signature.get().cloned());
            b.extra = extra.clone();
            if *signature == Opt::Null {
                b.extra.insert("signature_null".into(), Value::Bool(true));
            }
            b
        }
        Content::ToolUse(t) => {
            let mut b = Block::tool_call(
                Some(t.id.clone()),
                t.name.clone(),
                t.input.get().cloned().unwrap_or(Value::Null),
            );
            let mut rest = t.clone();
            rest.input = if t.input.is_absent() {
                Opt::Absent
            } else {
                Opt::Null
            };
            if let Ok(Value::Object(o)) = serde_json::to_value(&rest) {
                b.extra.insert("acpx_tool_use".into(), Value::Object(o));
            }
            b
        }
        Content::Other(v) => {
            if v.get("RedactedThinking").is_some() {
                let mut b = Block::thinking("", None);
                if let BlockKind::Thinking { redacted, .. } = &mut b.kind {
                    *redacted = true;
                }
                b.extra.insert("acpx_raw".into(), v.clone());
                return b;
            }
            Block {
                kind: BlockKind::Other { value: v.clone() },
                extra: Extra::new(),
            }
        }
    }
}

fn result_message(key: &str, r: &ToolResult) -> Message {
    let mut m = Message::new(Role::Tool);
    m.tool_call_id = Some(r.tool_use_id.clone());
    m.tool_name = r.tool_name.get().cloned();
    m.is_error = r.is_error.get().copied();
    let content = match r.content.get() {
        Some(v) => match v.get("Text").and_then(Value::as_str) {
            Some(t) => vec![Block::text(t)],
            None => vec![Block {
                kind: BlockKind::Other { value: v.clone() },
                extra: Extra::new(),
            }],
        },
        None => Vec::new(),
    };
    let mut b = Block::tool_result(
        Some(r.tool_use_id.clone()),
        content,
        r.is_error.get() == Some(&true),
    );
    if let Ok(Value::Object(o)) = serde_json::to_value(r) {
        b.extra.insert("acpx_result".into(), Value::Object(o));
    }
    b.extra.insert("acpx_key".into(), Value::String(key.into()));
    m.content.push(b);
    m
}

fn usage_from(v: &Value) -> Usage {
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input: n("input_tokens"),
        output: n("output_tokens"),
        cache_read: n("cache_read_input_tokens"),
        cache_write: n("cache_creation_input_tokens"),
        ..Usage::default()
    }
}

fn usage_to(u: &Usage) -> Value {
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

fn fresh_record(session: &Session, fid: &mut Fidelity) -> SessionRecord {
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
fn messages_from(
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
fn uuid_for(entry_id: &str) -> String {
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

fn content_from(b: &Block, fid: &mut Fidelity, entry: &str, native: bool) -> Option<Content> {
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
fn attach_result(
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
                tool_name: m.tool_name.clone().into(),
                is_error: Opt::Set(*is_error),
                content: Opt::Set(json!({ "Text": text.join("\n") })),
                output: Opt::Null,
                extra: Extra::new(),
            }
        }
    };
    let holder = out.iter().rposition(|msg| match msg {
        ThreadMessage::Agent(a) => a
            .content
            .iter()
            .any(|c| matches!(c, Content::ToolUse(t) if t.id == id)),
        _ => false,
    });
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
