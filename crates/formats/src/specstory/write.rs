//! Writes a session as SessionData, or as SpecStory's markdown transcript.
//!
//! Writing puts back what reading kept, so a SessionData file read and
//! written again gives the same JSON values. Sessions from other formats are
//! grouped into exchanges by real user prompts: a user message with text
//! that is not harness-injected opens an exchange; tool results (in user
//! messages or tool-role messages) are merged into the agent message that
//! made the call.

pub(in crate::specstory) mod markdown;

use super::wire::tools::{classify_tool, path_hints};
use super::wire::types::{
    provider_name, ContentPart, Exchange, Message, ProviderInfo, SessionData, ToolInfo,
    SCHEMA_VERSION,
};
use super::wire::{EXCHANGE_CUSTOM, EXCHANGE_KEY, OUTPUT_KEY, USAGE_KEY};
use crate::Fidelity;
use crate::FormatError;
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Extra, Message as ModelMessage, Role, Session,
    Timestamp, Usage,
};
use serde_json::{json, Value};

/// Returns the SessionData of a unified session (see [`to_session_data`]
/// for what cannot be carried).
pub fn session_data_from(session: &Session) -> SessionData {
    to_session_data(session).0
}

/// Converts a unified session to SessionData and reports what SessionData
/// cannot hold.
pub fn to_session_data(session: &Session) -> (SessionData, Fidelity) {
    Writer::new(session).run()
}

pub(super) fn usage_to(u: &Usage) -> Extra {
    let mut m = Extra::new();
    for (k, v) in [
        ("inputTokens", u.input),
        ("outputTokens", u.output),
        ("cacheCreationInputTokens", u.cache_write),
        ("cacheReadInputTokens", u.cache_read),
        ("reasoningOutputTokens", u.reasoning),
    ] {
        if v > 0 {
            m.insert(k.into(), json!(v));
        }
    }
    m
}

pub(super) struct Writer<'a> {
    session: &'a Session,
    native: bool,
    data: SessionData,
    fidelity: Fidelity,
}

impl<'a> Writer<'a> {
    fn new(session: &'a Session) -> Writer<'a> {
        let native = session.meta.format.as_deref() == Some("specstory");
        Writer {
            session,
            native,
            data: SessionData::default(),
            fidelity: Fidelity::new("specstory"),
        }
    }

    fn run(mut self) -> (SessionData, Fidelity) {
        self.root();
        let branch = self.session.active_branch();
        if branch.len() < self.session.entries.len() {
            for e in &self.session.entries {
                if !branch.iter().any(|b| std::ptr::eq(*b, e)) {
                    self.fidelity
                        .lost("entries off the active branch", Some(&e.id));
                }
            }
        }
        for e in branch {
            self.entry(e);
        }
        self.finish_exchange_times();
        (self.data, self.fidelity)
    }

    fn root(&mut self) {
        let meta = &self.session.meta;
        let d = &mut self.data;
        d.schema_version = match &meta.format_version {
            Some(Value::String(v)) if self.native => v.clone(),
            _ => SCHEMA_VERSION.into(),
        };
        d.provider = match meta.extra.get("provider") {
            Some(p) if self.native => serde_json::from_value(p.clone()).unwrap_or_default(),
            _ => provider_for(&meta.agent, meta.agent_version.as_deref()),
        };
        if !self.native && provider_name(&d.provider.id).is_none() {
            // SpecStory's schema allows four provider ids; another agent's
            // session is written under the one its model family belongs
            // to, and `name` keeps the agent's own name.
            let family = model_family(
                meta.model.provider.as_deref(),
                meta.model.model.as_deref().or_else(|| {
                    self.session
                        .entries
                        .iter()
                        .find_map(|e| e.message().and_then(|m| m.model.as_deref()))
                }),
            );
            self.fidelity.lost(
                format!(
                    "the agent as provider id (SpecStory allows only claude, cursor, codex and gemini; \
                     written as {family}, with name {:?})",
                    d.provider.name
                ),
                None,
            );
            d.provider.id = family.into();
        }
        d.session_id = meta.id.clone();
        d.created_at = meta
            .created_at
            .as_ref()
            .or_else(|| {
                self.session
                    .entries
                    .iter()
                    .find_map(|e| e.timestamp.as_ref())
            })
            .map(time_text)
            .unwrap_or_default();
        d.updated_at = meta.updated_at.as_ref().map(time_text);
        d.workspace_root = meta.cwd.clone().unwrap_or_default();
        d.slug = meta
            .extra
            .get("slug")
            .and_then(Value::as_str)
            .map(str::to_string);
        if self.native {
            d.title = meta.title.clone();
            if let Some(Value::Object(extra)) = meta.extra.get("root_extra") {
                d.extra = extra.clone();
            }
        } else {
            if meta.title.is_some() {
                self.fidelity.lost("session title", None);
            }
            if !meta.todos.is_empty() {
                self.fidelity.lost("todo list", None);
            }
            if !meta.model.is_empty() {
                self.fidelity.lost("model configuration", None);
            }
            if meta.closed_at.is_some() {
                self.fidelity.lost("closed time", None);
            }
            if meta.parent_session.is_some() {
                self.fidelity.lost("parent session", None);
            }
        }
    }

    fn open_exchange(&mut self, header: Option<&Extra>) {
        let n = self.data.exchanges.len() + 1;
        let mut ex = Exchange {
            exchange_id: format!("ex_{n:03}"),
            ..Exchange::default()
        };
        if let Some(h) = header {
            for (k, v) in h {
                match (k.as_str(), v) {
                    ("exchangeId", Value::String(s)) => ex.exchange_id = s.clone(),
                    ("startTime", Value::String(s)) => ex.start_time = Some(s.clone()),
                    ("endTime", Value::String(s)) => ex.end_time = Some(s.clone()),
                    ("metadata", Value::Object(m)) => ex.metadata = Some(m.clone()),
                    _ => {
                        ex.extra.insert(k.clone(), v.clone());
                    }
                }
            }
            ex.extra.insert("__native".into(), Value::Bool(true));
        }
        self.data.exchanges.push(ex);
    }

    fn current(&mut self) -> &mut Exchange {
        if self.data.exchanges.is_empty() {
            self.open_exchange(None);
        }
        let last = self.data.exchanges.len() - 1;
        &mut self.data.exchanges[last]
    }

    fn entry(&mut self, e: &Entry) {
        if let Some(Value::Object(h)) = e.extra.get(EXCHANGE_KEY) {
            self.open_exchange(Some(h));
        }
        match &e.kind {
            EntryKind::Message(m) => self.message(e, m),
            EntryKind::Custom { custom_type, data } if custom_type == EXCHANGE_CUSTOM => {
                let h = data.as_ref().and_then(Value::as_object).cloned();
                self.open_exchange(h.as_ref());
            }
            other => self
                .fidelity
                .lost(format!("entry kind {}", other.name()), Some(&e.id)),
        }
    }

    fn message(&mut self, e: &Entry, m: &ModelMessage) {
        let ts = e.timestamp.as_ref().or(m.timestamp.as_ref()).map(time_text);
        match &m.role {
            Role::User => self.user(e, m, ts),
            Role::Assistant => self.agent(e, m, ts),
            Role::Tool => {
                let results: Vec<&Block> = m
                    .content
                    .iter()
                    .filter(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
                    .collect();
                if results.is_empty() {
                    // A tool-role message whose content is the result itself.
                    let block = Block::tool_result(
                        m.tool_call_id.clone(),
                        m.content.clone(),
                        m.is_error == Some(true),
                    );
                    self.merge_result(e, &block, m.tool_call_id.as_deref());
                } else {
                    for b in results {
                        self.merge_result(e, b, m.tool_call_id.as_deref());
                    }
                }
            }
            Role::Custom(r) if self.native && (r != "user" && r != "agent") => {
                // A role SessionData does not allow, read from a SessionData
                // file: written back as it was (validation reports it).
                let mut out = self.base_message(e, m, ts);
                out.role = r.clone();
                self.push_parts(&mut out, m, e);
                self.current().messages.push(out);
            }
            other => self
                .fidelity
                .lost(format!("{} message", other.as_str()), Some(&e.id)),
        }
    }

    fn base_message(&self, e: &Entry, m: &ModelMessage, ts: Option<String>) -> Message {
        let mut out = Message {
            id: m
                .id
                .clone()
                .or_else(|| (!self.native).then(|| e.id.clone())),
            timestamp: ts,
            model: m.model.clone(),
            ..Message::default()
        };
        for (k, v) in &m.extra {
            match k.as_str() {
                "pathHints" => {
                    out.path_hints = serde_json::from_value(v.clone()).ok();
                }
                "metadata" => out.metadata = v.as_object().cloned(),
                "content_absent" | USAGE_KEY => {}
                _ if self.native => {
                    out.extra.insert(k.clone(), v.clone());
                }
                _ => {}
            }
        }
        if let Some(Value::Object(u)) = m.extra.get(USAGE_KEY) {
            out.usage = Some(u.clone());
        } else if let Some(u) = &m.usage {
            let mapped = usage_to(u);
            if !mapped.is_empty() {
                out.usage = Some(mapped);
            }
        }
        if m.sidechain && !out.is_sidechain() {
            out.metadata
                .get_or_insert_with(Extra::new)
                .insert("isSidechain".into(), Value::Bool(true));
        }
        out
    }

    fn user(&mut self, e: &Entry, m: &ModelMessage, ts: Option<String>) {
        let mut had_results = false;
        for b in &m.content {
            if let BlockKind::ToolResult { tool_call_id, .. } = &b.kind {
                self.merge_result(e, b, tool_call_id.as_deref());
                had_results = true;
            }
        }
        if self.native {
            // Read from SessionData: written back as it was; its exchange
            // was opened by the marker on the entry.
            let mut out = self.base_message(e, m, ts);
            out.role = "user".into();
            self.push_parts(&mut out, m, e);
            self.current().messages.push(out);
            return;
        }
        let has_text = m
            .content
            .iter()
            .any(|b| matches!(&b.kind, BlockKind::Text { text } if !text.trim().is_empty()));
        if !has_text {
            if !had_results {
                self.fidelity.lost("user message without text", Some(&e.id));
            }
            return;
        }
        if m.injected.is_some() {
            self.fidelity.lost("injected context message", Some(&e.id));
            return;
        }
        let mut out = self.base_message(e, m, ts.clone());
        out.role = "user".into();
        if out.model.take().is_some() {
            self.fidelity.lost("model of a user message", Some(&e.id));
        }
        self.push_parts(&mut out, m, e);
        if !m.sidechain {
            self.open_exchange(None);
            if let Some(ex) = self.data.exchanges.last_mut() {
                ex.start_time = ts;
            }
        }
        self.current().messages.push(out);
    }

    /// Adds the text and thinking parts (and, for native sessions, parts of
    /// unknown types) of a model message; tool calls are handled by
    /// [`Writer::agent`].
    fn push_parts(&mut self, out: &mut Message, m: &ModelMessage, e: &Entry) {
        let absent = m.extra.get("content_absent") == Some(&Value::Bool(true));
        let mut parts = Vec::new();
        for b in &m.content {
            if let Some(p) = self.part(b, e) {
                parts.push(p);
            }
        }
        if !parts.is_empty() || (self.native && !absent) {
            out.content = Some(parts);
        }
    }

    fn part(&mut self, b: &Block, e: &Entry) -> Option<ContentPart> {
        let mut p = match &b.kind {
            BlockKind::Text { text } => ContentPart::text(text.clone()),
            BlockKind::Thinking {
                text,
                signature,
                redacted,
            } => {
                if signature.is_some() {
                    self.fidelity.lost("thinking signature", Some(&e.id));
                }
                if *redacted {
                    self.fidelity.lost("redacted thinking", Some(&e.id));
                }
                ContentPart::thinking(text.clone())
            }
            BlockKind::Other { value } if self.native => {
                let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
                let text = value.get("text").and_then(Value::as_str).unwrap_or("");
                ContentPart {
                    kind: kind.into(),
                    text: text.into(),
                    extra: Extra::new(),
                }
            }
            BlockKind::ToolCall { .. } | BlockKind::ToolResult { .. } => return None,
            BlockKind::Image { .. } => {
                self.fidelity.lost("image", Some(&e.id));
                return None;
            }
            BlockKind::Other { .. } => {
                self.fidelity.lost("unknown content block", Some(&e.id));
                return None;
            }
        };
        if self.native {
            p.extra = b.extra.clone();
        } else if !b.extra.is_empty() {
            self.fidelity
                .lost("native content block fields", Some(&e.id));
        }
        Some(p)
    }

    fn agent(&mut self, e: &Entry, m: &ModelMessage, ts: Option<String>) {
        let mut pending = self.base_message(e, m, ts.clone());
        pending.role = "agent".into();
        let absent = m.extra.get("content_absent") == Some(&Value::Bool(true));
        let mut parts: Vec<ContentPart> = Vec::new();
        let mut pieces = 0usize;
        for b in &m.content {
            if let BlockKind::ToolCall { id, name, input } = &b.kind {
                let mut msg =
                    std::mem::replace(&mut pending, self.follow_up(e, m, ts.clone(), pieces + 1));
                if !parts.is_empty() || (self.native && !absent) {
                    msg.content = Some(std::mem::take(&mut parts));
                }
                msg.tool = Some(self.tool(b, id, name, input));
                if msg.path_hints.is_none() && !self.native {
                    if let Some(t) = &msg.tool {
                        let hints = path_hints(&t.kind, input, &self.data.workspace_root);
                        if !hints.is_empty() {
                            msg.path_hints = Some(hints);
                        }
                    }
                }
                self.current().messages.push(msg);
                pieces += 1;
            } else if let Some(p) = self.part(b, e) {
                parts.push(p);
            } else if let BlockKind::ToolResult { tool_call_id, .. } = &b.kind {
                self.merge_result(e, b, tool_call_id.as_deref());
            }
        }
        if pieces == 0 || !parts.is_empty() {
            if !parts.is_empty() || (self.native && !absent) {
                pending.content = Some(parts);
            }
            if pieces > 0 || markdown::has_renderable_content(&pending) || self.native {
                self.current().messages.push(pending);
            } else if pending.path_hints.is_none() {
                self.fidelity
                    .lost("agent message without content", Some(&e.id));
            } else {
                self.current().messages.push(pending);
            }
        }
    }

    /// A second (third, …) SessionData message cut from one model message:
    /// same time and model, the id suffixed.
    fn follow_up(&self, e: &Entry, m: &ModelMessage, ts: Option<String>, k: usize) -> Message {
        let base_id = m.id.clone().unwrap_or_else(|| e.id.clone());
        Message {
            id: Some(format!("{base_id}:{k}")),
            timestamp: ts,
            role: "agent".into(),
            model: m.model.clone(),
            ..Message::default()
        }
    }

    fn tool(&mut self, b: &Block, id: &Option<String>, name: &str, input: &Value) -> ToolInfo {
        let kind = b
            .extra
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| classify_tool(name).to_string());
        let input_absent = b.extra.get("input_absent") == Some(&Value::Bool(true));
        let input = if input_absent {
            None
        } else {
            match input {
                Value::Object(_) => Some(input.clone()),
                Value::Null => None,
                Value::String(s) => match serde_json::from_str::<Value>(s) {
                    Ok(v @ Value::Object(_)) => Some(v),
                    _ => Some(json!({ "input": s })),
                },
                other if self.native => Some(other.clone()),
                other => Some(json!({ "input": other })),
            }
        };
        let s = |k: &str| b.extra.get(k).and_then(Value::as_str).map(str::to_string);
        ToolInfo {
            name: name.to_string(),
            kind,
            use_id: id.clone(),
            input,
            output: None,
            summary: s("summary"),
            formatted_markdown: s("formattedMarkdown"),
            extra: b
                .extra
                .get("tool_extra")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        }
    }

    /// Puts a tool result into the tool message that made the call: the one
    /// with the same use id, or, without an id, the latest tool message
    /// still without output.
    fn merge_result(&mut self, e: &Entry, b: &Block, call: Option<&str>) {
        let BlockKind::ToolResult {
            tool_call_id,
            content,
            is_error,
        } = &b.kind
        else {
            return;
        };
        let call = tool_call_id.as_deref().or(call);
        let output = match b.extra.get(OUTPUT_KEY) {
            Some(o) => o.clone(),
            None => {
                let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
                if content
                    .iter()
                    .any(|c| matches!(c.kind, BlockKind::Image { .. }))
                {
                    self.fidelity.lost("image in a tool result", Some(&e.id));
                }
                let mut o = json!({ "content": text.join("\n") });
                if *is_error {
                    o["is_error"] = Value::Bool(true);
                }
                o
            }
        };
        let found = self.data.exchanges.iter_mut().rev().find_map(|ex| {
            ex.messages
                .iter_mut()
                .rev()
                .find(|m| match (&m.tool, call) {
                    (Some(t), Some(id)) => t.use_id.as_deref() == Some(id),
                    (Some(t), None) => t.output.is_none(),
                    _ => false,
                })
        });
        match found {
            Some(m) => {
                if let Some(t) = m.tool.as_mut() {
                    t.output = Some(output);
                }
            }
            None => self
                .fidelity
                .lost("tool result without a matching call", Some(&e.id)),
        }
    }

    /// Fills exchange start and end times from the messages where the
    /// exchange was built here (never for exchanges read from SessionData).
    fn finish_exchange_times(&mut self) {
        for ex in &mut self.data.exchanges {
            let native = ex.extra.remove("__native").is_some();
            if native {
                continue;
            }
            if ex.start_time.is_none() {
                ex.start_time = ex.messages.iter().find_map(|m| m.timestamp.clone());
            }
            if ex.end_time.is_none() {
                ex.end_time = ex.messages.iter().rev().find_map(|m| m.timestamp.clone());
            }
        }
    }
}

pub(super) fn time_text(t: &Timestamp) -> String {
    match t {
        Timestamp::Text(s) => s.clone(),
        Timestamp::Millis(_) => t.to_rfc3339(),
    }
}

/// The SpecStory provider id whose models a session's model belongs to:
/// `claude` for Anthropic's, `codex` for OpenAI's, `gemini` for Google's,
/// and `cursor` (an agent of many vendors' models) for the rest.
pub(super) fn model_family(provider: Option<&str>, model: Option<&str>) -> &'static str {
    let p = provider.unwrap_or("").to_ascii_lowercase();
    let m = model.unwrap_or("").to_ascii_lowercase();
    if p.contains("anthropic") || m.starts_with("claude") {
        "claude"
    } else if p.contains("openai")
        || m.starts_with("gpt")
        || m.starts_with("codex")
        || m.starts_with('o') && m[1..].starts_with(|c: char| c.is_ascii_digit())
    {
        "codex"
    } else if p.contains("google") || p.contains("gemini") || m.starts_with("gemini") {
        "gemini"
    } else {
        "cursor"
    }
}

/// Returns the SessionData provider of an agent: the documented ids for
/// Claude Code, Cursor, Codex and Gemini CLI, the agent's own name
/// otherwise; version `unknown` when not recorded.
pub fn provider_for(agent: &Agent, version: Option<&str>) -> ProviderInfo {
    let id = agent.as_str();
    let version = version.filter(|v| !v.is_empty()).unwrap_or("unknown");
    let mut p = ProviderInfo::from_id(id, version);
    if provider_name(id).is_none() {
        p.name = display_name(agent);
    }
    p
}

pub(super) fn display_name(agent: &Agent) -> String {
    match agent {
        Agent::Pi => "pi".into(),
        Agent::Codelia => "codelia".into(),
        Agent::JidoCode => "JidoCode".into(),
        Agent::SpecStory => "SpecStory".into(),
        Agent::Acpx => "acpx".into(),
        Agent::Copilot => "Copilot CLI".into(),
        Agent::OpenCode => "OpenCode".into(),
        Agent::Aider => "Aider".into(),
        Agent::Droid => "Factory Droid CLI".into(),
        Agent::Agentlog => "agentlog".into(),
        other => other.as_str().to_string(),
    }
}

/// Writes `session` to `out` as SessionData JSON.
pub(super) fn write(
    session: &Session,
    out: &mut dyn std::io::Write,
) -> Result<Fidelity, crate::FormatError> {
    let (data, fidelity) = to_session_data(session);
    let json = to_json(&data)?;
    out.write_all(json.as_bytes())
        .map_err(|e| FormatError::write("SessionData JSON", e))?;
    Ok(fidelity)
}

/// Returns the SessionData JSON as SpecStory writes it: two-space indents
/// and a final newline.
pub fn to_json(data: &SessionData) -> Result<String, FormatError> {
    let mut s = serde_json::to_string_pretty(data)
        .map_err(|e| FormatError::write("SessionData JSON", std::io::Error::from(e)))?;
    s.push('\n');
    Ok(s)
}
