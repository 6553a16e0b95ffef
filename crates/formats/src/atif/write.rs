//! Writes a session as an ATIF trajectory: the entries of the branch the
//! session is on, in order, one step each (the agent's answers with their
//! reasoning, tool calls and tokens; prompts; system messages, compaction
//! summaries), each tool result in the observation of the step that made
//! its call, and the subagent sessions given embedded as subagent
//! trajectories, referred to from the results of the calls that started
//! them. A session read from ATIF is written back as the same document
//! (the fields the reader kept are put back). Everything else is named in
//! the fidelity report.

use super::read::{AGENT, CONTENT_FORM, NO_SESSION_ID};
use super::wire;
use crate::{Fidelity, FormatError};
use agentlog_model::{Block, BlockKind, Entry, EntryKind, Message, Role, Session, Usage};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io::Write;

/// Writes `session` to `out`.
pub(super) fn write(
    session: &Session,
    subagents: &[Session],
    out: &mut dyn Write,
) -> Result<Fidelity, FormatError> {
    let mut fidelity = Fidelity::new(super::FORMAT_NAME);
    let doc = trajectory(session, subagents, None, &mut fidelity);
    serde_json::to_writer_pretty(&mut *out, &doc)
        .map_err(|e| FormatError::write("ATIF trajectory", std::io::Error::from(e)))?;
    out.write_all(b"\n")
        .map_err(|e| FormatError::write("ATIF trajectory", e))?;
    Ok(fidelity)
}

/// True when the session was read from an ATIF file: the fields its reader
/// kept are written back.
fn from_atif(session: &Session) -> bool {
    session.meta.format.as_deref() == Some(super::FORMAT_NAME)
}

/// The trajectory of `session` (embedded as `trajectory_id` when given).
fn trajectory(
    session: &Session,
    subagents: &[Session],
    trajectory_id: Option<&str>,
    fidelity: &mut Fidelity,
) -> Value {
    let atif = from_atif(session);
    let meta = &session.meta;
    let mut root = Map::new();
    let version = match (&meta.format_version, atif) {
        (Some(v), true) => Some(v.clone()),
        (None, true) => None,
        (_, false) => Some(wire::SCHEMA_VERSION.into()),
    };
    if let Some(v) = version {
        root.insert("schema_version".into(), v);
    }
    if !(atif && meta.extra.contains_key(NO_SESSION_ID)) {
        root.insert("session_id".into(), meta.id.clone().into());
    }
    if let Some(t) = trajectory_id {
        root.insert("trajectory_id".into(), t.into());
    }
    root.insert("agent".into(), Value::Object(agent(session, fidelity)));

    // Subagents by the id the calls that started them name.
    let by_agent_id: HashMap<&str, (&Session, String)> = subagents
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let aid = s
                .meta
                .extra
                .get("agentId")
                .and_then(Value::as_str)
                .unwrap_or(&s.meta.id);
            (aid, (s, embedded_id(s, i)))
        })
        .collect();
    let counted = counted(session);
    let mut steps = Steps {
        atif,
        counted: &counted,
        steps: Vec::new(),
        pending: None,
        fidelity,
    };
    let branch = session.active_branch();
    let on_branch: std::collections::HashSet<&str> = branch.iter().map(|e| e.id.as_str()).collect();
    for e in &session.entries {
        if on_branch.contains(e.id.as_str()) {
            continue;
        }
        match &e.kind {
            EntryKind::Message(_) => steps.fidelity.lost(
                "messages on branches other than the one the session is on (ATIF holds one line of steps)",
                Some(&e.id),
            ),
            other => steps
                .fidelity
                .lost(format!("entry kind {}", other.name()), Some(&e.id)),
        }
    }
    for e in &branch {
        let refs: Vec<(String, Value)> = e
            .subagent_calls()
            .into_iter()
            .filter_map(|(call, aid)| {
                by_agent_id.get(aid).map(|(s, tid)| {
                    let mut r = Map::new();
                    r.insert("trajectory_id".into(), tid.clone().into());
                    r.insert("session_id".into(), s.meta.id.clone().into());
                    (call.to_string(), Value::Array(vec![Value::Object(r)]))
                })
            })
            .collect();
        steps.entry(e, &refs);
    }
    steps.flush_pending();
    let Steps {
        steps: mut list,
        fidelity,
        ..
    } = steps;
    if list.is_empty() {
        // ATIF needs one step at least.
        let mut s = Map::new();
        s.insert("source".into(), "system".into());
        s.insert("message".into(), "".into());
        list.push(s);
    }
    let off_branch_tokens = counted.keys().any(|id| !on_branch.contains(id));
    let n_steps = list.len();
    let steps_value: Vec<Value> = list
        .into_iter()
        .enumerate()
        .map(|(i, mut s)| {
            let mut o = Map::new();
            o.insert("step_id".into(), (i as u64 + 1).into());
            o.append(&mut s);
            Value::Object(o)
        })
        .collect();
    root.insert("steps".into(), Value::Array(steps_value));

    if atif {
        for (k, v) in &meta.extra {
            if k != AGENT && k != NO_SESSION_ID {
                root.insert(k.clone(), v.clone());
            }
        }
    } else {
        let total = counted.values().fold(Usage::default(), |mut a, u| {
            a.add(u);
            a
        });
        root.insert(
            "final_metrics".into(),
            Value::Object(final_metrics(&total, n_steps, subagents)),
        );
        if off_branch_tokens {
            root.insert(
                "notes".into(),
                "final_metrics count every model response of the session, also those on branches other than the one these steps follow"
                    .into(),
            );
        }
        let mut extra = Map::new();
        extra.insert("source_agent".into(), meta.agent.as_str().into());
        if let Some(f) = &meta.format {
            extra.insert("source_format".into(), f.clone().into());
        }
        if let Some(t) = &meta.title {
            extra.insert("title".into(), t.clone().into());
        }
        if let Some(c) = &meta.cwd {
            extra.insert("cwd".into(), c.clone().into());
        }
        if let Some(t) = &meta.created_at {
            extra.insert("created_at".into(), t.to_rfc3339().into());
        }
        if let Some(p) = &meta.parent_session {
            extra.insert("parent_session".into(), p.clone().into());
        }
        root.insert("extra".into(), Value::Object(extra));
        if !meta.todos.is_empty() {
            fidelity.lost("the agent's todo list", None);
        }
        let other: Vec<&String> = meta
            .extra
            .keys()
            .filter(|k| k.as_str() != "agentId")
            .collect();
        if !other.is_empty() {
            fidelity.lost("session metadata fields of the source format", None);
        }
        if !subagents.is_empty() {
            let embedded: Vec<Value> = subagents
                .iter()
                .enumerate()
                .map(|(i, s)| trajectory(s, &[], Some(&embedded_id(s, i)), fidelity))
                .collect();
            root.insert("subagent_trajectories".into(), Value::Array(embedded));
        }
    }
    Value::Object(root)
}

/// The usage of each model response of `session`, by entry id, each
/// response once as `agentlog stats` counts it: an entry repeating the
/// response id of an earlier one (an answer the agent wrote over several
/// records, each with the response's usage) is not counted again.
fn counted(session: &Session) -> HashMap<&str, &Usage> {
    let mut seen = std::collections::HashSet::new();
    let mut out = HashMap::new();
    for e in &session.entries {
        let Some(u) = e.response_usage() else {
            continue;
        };
        let id = match &e.kind {
            EntryKind::Message(m) => m.id.as_deref(),
            EntryKind::LlmResponse { output, .. } => output.get("id").and_then(Value::as_str),
            _ => None,
        };
        if id.is_some_and(|id| !seen.insert(id)) {
            continue;
        }
        out.insert(e.id.as_str(), u);
    }
    out
}

/// The `trajectory_id` of the `i`th subagent: its agent id, else its
/// session id, made unique by its place.
fn embedded_id(s: &Session, i: usize) -> String {
    let base = s
        .meta
        .extra
        .get("agentId")
        .and_then(Value::as_str)
        .unwrap_or(&s.meta.id);
    format!("{base}#{}", i + 1)
}

/// The root's `final_metrics` for a session whose responses add up to
/// `total`, in `steps` steps, whose subagents' recorded cost counts too.
fn final_metrics(total: &Usage, steps: usize, subagents: &[Session]) -> Map<String, Value> {
    let mut f = Map::new();
    let prompt = total
        .input
        .saturating_add(total.cache_read)
        .saturating_add(total.cache_write);
    f.insert("total_prompt_tokens".into(), prompt.into());
    f.insert("total_completion_tokens".into(), total.output.into());
    f.insert("total_cached_tokens".into(), total.cache_read.into());
    let sub_cost: Option<f64> = subagents
        .iter()
        .filter_map(|s| {
            counted(s)
                .values()
                .filter_map(|u| u.cost_usd)
                .reduce(|a, b| a + b)
        })
        .reduce(|a, b| a + b);
    let cost = match (total.cost_usd, sub_cost) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    };
    if let Some(c) = cost.filter(|c| c.is_finite()) {
        f.insert("total_cost_usd".into(), c.into());
    }
    f.insert("total_steps".into(), (steps as u64).into());
    let mut extra = Map::new();
    if total.cache_write > 0 {
        extra.insert(
            format!("total_{}", wire::CACHE_WRITE),
            total.cache_write.into(),
        );
    }
    if total.reasoning > 0 {
        extra.insert(format!("total_{}", wire::REASONING), total.reasoning.into());
    }
    if !extra.is_empty() {
        f.insert("extra".into(), Value::Object(extra));
    }
    f
}

/// The `agent` object.
fn agent(session: &Session, fidelity: &mut Fidelity) -> Map<String, Value> {
    let meta = &session.meta;
    let mut a = Map::new();
    if from_atif(session) {
        if let Some(Value::Object(kept)) = meta.extra.get(AGENT) {
            a = kept.clone();
        }
    } else {
        a.insert("name".into(), agent_name(&meta.agent).into());
    }
    match &meta.agent_version {
        Some(v) => {
            a.insert("version".into(), v.clone().into());
        }
        None if !from_atif(session) => {
            a.insert("version".into(), "unknown".into());
            fidelity.lost(
                "the agent's version (the source does not record it; written as `unknown`)",
                None,
            );
        }
        None => {}
    }
    let model = meta.model.model.clone().or_else(|| {
        if from_atif(session) {
            return None;
        }
        session
            .entries
            .iter()
            .find_map(|e| e.message().and_then(|m| m.model.clone()))
    });
    if let Some(m) = model {
        a.insert("model_name".into(), m.into());
    }
    a
}

/// The agent's name as Harbor names the agents it runs (`claude-code`,
/// `gemini-cli`, …), else agentlog's.
fn agent_name(agent: &agentlog_model::Agent) -> &str {
    match agent.as_str() {
        "claude" => "claude-code",
        "gemini" => "gemini-cli",
        "cursor" => "cursor-cli",
        "copilot" => "copilot-cli",
        "qwen" => "qwen-code",
        other => other,
    }
}

/// The steps being written.
struct Steps<'f> {
    atif: bool,
    /// The usage of each entry that records a model response, counted once
    /// ([`counted`]).
    counted: &'f HashMap<&'f str, &'f Usage>,
    steps: Vec<Map<String, Value>>,
    /// Token usage of entries that are not agent steps (recorded LLM
    /// responses), for the next agent step, and how many responses.
    pending: Option<(Usage, u64)>,
    fidelity: &'f mut Fidelity,
}

impl Steps<'_> {
    /// Writes entry `e`, whose results of the calls `refs` name started a
    /// subagent embedded under that reference.
    fn entry(&mut self, e: &Entry, refs: &[(String, Value)]) {
        let id = e.id.as_str();
        if let Some(u) = self.counted.get(e.id.as_str()).copied() {
            let is_answer = matches!(&e.kind, EntryKind::Message(m) if m.role == Role::Assistant);
            if !is_answer {
                self.add_pending(u);
            }
        }
        match &e.kind {
            EntryKind::Message(m) => self.message(e, m, refs),
            EntryKind::Compaction { summary, .. } => {
                self.plain(e, "system", summary, Some("compaction"));
            }
            EntryKind::BranchSummary { summary, .. } => {
                self.plain(e, "system", summary, Some("branch_summary"));
            }
            EntryKind::CustomMessage { content, .. } => {
                let text = texts(content);
                self.plain(e, "user", &text, Some("custom_message"));
                if content
                    .iter()
                    .any(|b| !matches!(b.kind, BlockKind::Text { .. }))
                {
                    self.fidelity
                        .lost("content of extension messages other than text", Some(id));
                }
            }
            EntryKind::SessionInit {
                system_prompt,
                task,
                ..
            } => {
                if let Some(p) = system_prompt {
                    self.plain(e, "system", p, Some("session_init"));
                }
                if let Some(t) = task {
                    self.plain(e, "user", t, Some("session_init"));
                }
            }
            EntryKind::Unknown {
                record_type: Some(t),
                raw: Value::Object(step),
            } if self.atif && t == "step" => {
                let mut s = step.clone();
                s.remove("step_id");
                self.steps.push(s);
            }
            other => {
                self.fidelity
                    .lost(format!("entry kind {}", other.name()), Some(id));
            }
        }
    }

    /// The entry's time as ISO 8601: as written for an entry read from
    /// ATIF, else in RFC 3339 (a time that cannot be read is left out, and
    /// reported).
    fn time(&mut self, e: &Entry) -> Option<String> {
        if self.atif {
            return match &e.timestamp {
                Some(agentlog_model::Timestamp::Text(s)) => Some(s.clone()),
                _ => None,
            };
        }
        let t = e
            .timestamp
            .as_ref()
            .or_else(|| e.message().and_then(|m| m.timestamp.as_ref()))?;
        if t.to_utc().is_none() {
            self.fidelity
                .lost("times that are not a date and time", Some(&e.id));
            return None;
        }
        Some(t.to_rfc3339())
    }

    fn add_pending(&mut self, u: &Usage) {
        let (sum, n) = self.pending.get_or_insert((Usage::default(), 0));
        sum.add(u);
        *n += 1;
    }

    /// Puts usage no agent step took on the last agent step (or a step of
    /// its own).
    fn flush_pending(&mut self) {
        let Some((u, n)) = self.pending.take() else {
            return;
        };
        let last = self
            .steps
            .iter()
            .rposition(|s| s.get("source").and_then(Value::as_str) == Some("agent"));
        match last {
            Some(i) => {
                let s = &mut self.steps[i];
                let (mut sum, calls) = step_usage(s);
                sum.add(&u);
                set_metrics(s, &sum, calls + n);
            }
            None => {
                let mut s = Map::new();
                s.insert("source".into(), "agent".into());
                s.insert("message".into(), "".into());
                set_metrics(&mut s, &u, n);
                self.steps.push(s);
            }
        }
    }

    /// A step of `source` saying `text`, marked as made from an entry of
    /// `kind`.
    fn plain(&mut self, e: &Entry, source: &str, text: &str, kind: Option<&str>) {
        let mut s = Map::new();
        if let Some(t) = self.time(e) {
            s.insert("timestamp".into(), t.into());
        }
        s.insert("source".into(), source.into());
        s.insert("message".into(), text.into());
        if let Some(k) = kind {
            let mut x = Map::new();
            x.insert("agentlog_kind".into(), k.into());
            s.insert("extra".into(), Value::Object(x));
        }
        self.not_kept(e, None);
        self.steps.push(s);
    }

    /// Reports the entry's (and message's) native fields, which a step
    /// has no place for (unless the entry was read from ATIF).
    fn not_kept(&mut self, e: &Entry, m: Option<&Message>) {
        if self.atif {
            return;
        }
        if !e.extra.is_empty() {
            self.fidelity
                .lost("entry fields of the source format", Some(&e.id));
        }
        if m.is_some_and(|m| !m.extra.is_empty()) {
            self.fidelity
                .lost("message fields of the source format", Some(&e.id));
        }
    }

    fn message(&mut self, e: &Entry, m: &Message, refs: &[(String, Value)]) {
        let results: Vec<&Block> = m
            .content
            .iter()
            .filter(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
            .collect();
        let rest: Vec<&Block> = m
            .content
            .iter()
            .filter(|b| !matches!(b.kind, BlockKind::ToolResult { .. }))
            .collect();
        if self.atif && m.role == Role::Tool {
            // An observation, as the reader made it.
            let outs = results.iter().map(|b| result_out(b)).collect();
            self.observe(e, outs, refs);
            return;
        }
        // A tool's answer (a tool message, or a message of another role
        // answering a call by its own fields).
        let tool_message = m.role == Role::Tool
            || (m.role != Role::Assistant && m.tool_call_id.is_some() && results.is_empty());
        if tool_message && results.is_empty() {
            let result = ResultOut {
                call: m.tool_call_id.clone(),
                content: rest,
                is_error: m.is_error.unwrap_or(false),
                block: None,
            };
            self.not_kept(e, Some(m));
            self.observe(e, vec![result], refs);
            return;
        }
        if !results.is_empty() {
            let outs = results.iter().map(|b| result_out(b)).collect();
            if m.role != Role::Assistant {
                self.observe(e, outs, refs);
                if rest.is_empty() || m.role == Role::Tool {
                    self.not_kept(e, Some(m));
                    return;
                }
            } else {
                // Results inside an answer are written after its step.
                self.answer(e, m, &rest);
                self.observe(e, outs, refs);
                return;
            }
        }
        match m.role {
            Role::Assistant => self.answer(e, m, &rest),
            Role::User => self.said(e, m, "user", &rest, None),
            Role::System => self.said(e, m, "system", &rest, None),
            Role::Developer => self.said(e, m, "system", &rest, Some("developer")),
            Role::Tool => {}
            Role::Custom(ref r) => self.said(e, m, "user", &rest, Some(r.as_str())),
        }
    }

    /// The message part of a step: a string when every part is text (and
    /// the source did not write a list), else content parts.
    fn message_value(&mut self, e: &Entry, m: Option<&Message>, blocks: &[&Block]) -> Value {
        let kept_list =
            m.is_some_and(|m| m.extra.get(CONTENT_FORM).and_then(Value::as_str) == Some("list"));
        let parts: Vec<Value> = blocks.iter().filter_map(|b| self.part(e, b)).collect();
        let all_text = parts.iter().all(|p| {
            p.get("type").and_then(Value::as_str) == Some("text")
                && p.as_object().is_some_and(|o| o.len() == 2)
        });
        if all_text && !kept_list {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            Value::String(texts.join("\n\n"))
        } else {
            Value::Array(parts)
        }
    }

    /// One block as a content part, or `None` (reported) for what a part
    /// cannot be.
    fn part(&mut self, e: &Entry, b: &Block) -> Option<Value> {
        if !self.atif && !b.extra.is_empty() {
            self.fidelity
                .lost("content block fields of the source format", Some(&e.id));
        }
        match &b.kind {
            BlockKind::Text { text } => {
                let mut p = Map::new();
                p.insert("type".into(), "text".into());
                p.insert("text".into(), text.clone().into());
                Some(Value::Object(p))
            }
            BlockKind::Image {
                media_type,
                url: Some(url),
                ..
            } if !url.starts_with("data:")
                && media_type
                    .as_deref()
                    .is_some_and(|t| wire::IMAGE_TYPES.contains(&t)) =>
            {
                let mut src = Map::new();
                src.insert("media_type".into(), media_type.clone().into());
                src.insert("path".into(), url.clone().into());
                let mut p = Map::new();
                p.insert("type".into(), "image".into());
                p.insert("source".into(), Value::Object(src));
                Some(Value::Object(p))
            }
            BlockKind::Image { .. } => {
                self.fidelity.lost(
                    "images held inside the session (ATIF refers to images by file path or URL)",
                    Some(&e.id),
                );
                None
            }
            BlockKind::Other { value } if self.atif => Some(value.clone()),
            BlockKind::Other { .. } => {
                self.fidelity
                    .lost("content of kinds agentlog does not know", Some(&e.id));
                None
            }
            BlockKind::ToolCall { .. }
            | BlockKind::ToolResult { .. }
            | BlockKind::Thinking { .. } => None,
        }
    }

    /// A user or system step.
    fn said(
        &mut self,
        e: &Entry,
        m: &Message,
        source: &str,
        blocks: &[&Block],
        role: Option<&str>,
    ) {
        let mut s = Map::new();
        if let Some(t) = self.time(e) {
            s.insert("timestamp".into(), t.into());
        }
        s.insert("source".into(), source.into());
        let content: Vec<&Block> = blocks
            .iter()
            .copied()
            .filter(|b| {
                !matches!(
                    b.kind,
                    BlockKind::ToolCall { .. } | BlockKind::Thinking { .. }
                )
            })
            .collect();
        if content.len() < blocks.len() {
            self.fidelity.lost(
                "reasoning or tool calls in messages that are not the agent's",
                Some(&e.id),
            );
        }
        let message = self.message_value(e, Some(m), &content);
        s.insert("message".into(), message);
        self.native_extra(e, m, role, &mut s);
        self.steps.push(s);
    }

    /// The step's `extra`: kept fields of an ATIF entry, or what the
    /// source says of a message that a step's own fields do not.
    fn native_extra(
        &mut self,
        e: &Entry,
        m: &Message,
        role: Option<&str>,
        s: &mut Map<String, Value>,
    ) {
        if self.atif {
            for (k, v) in &e.extra {
                s.insert(k.clone(), v.clone());
            }
            return;
        }
        self.not_kept(e, Some(m));
        let mut x = Map::new();
        if let Some(r) = role {
            x.insert("role".into(), r.into());
        }
        if let Some(i) = &m.injected {
            x.insert("injected".into(), i.clone().into());
        }
        if m.sidechain {
            x.insert("sidechain".into(), true.into());
        }
        if let Some(r) = &m.stop_reason {
            x.insert("stop_reason".into(), r.clone().into());
        }
        if !x.is_empty() {
            s.insert("extra".into(), Value::Object(x));
        }
    }

    /// An agent step.
    fn answer(&mut self, e: &Entry, m: &Message, blocks: &[&Block]) {
        let mut s = Map::new();
        if let Some(t) = self.time(e) {
            s.insert("timestamp".into(), t.into());
        }
        s.insert("source".into(), "agent".into());
        if let Some(model) = &m.model {
            s.insert("model_name".into(), model.clone().into());
        }
        let content: Vec<&Block> = blocks
            .iter()
            .copied()
            .filter(|b| {
                !matches!(
                    b.kind,
                    BlockKind::ToolCall { .. } | BlockKind::Thinking { .. }
                )
            })
            .collect();
        let message = self.message_value(e, Some(m), &content);
        s.insert("message".into(), message);
        let mut reasoning = Vec::new();
        for b in blocks {
            if let BlockKind::Thinking {
                text,
                signature,
                redacted,
            } = &b.kind
            {
                reasoning.push(text.as_str());
                if !self.atif && signature.is_some() {
                    self.fidelity.lost("thinking signatures", Some(&e.id));
                }
                if *redacted {
                    self.fidelity
                        .lost("encrypted or redacted reasoning", Some(&e.id));
                }
            }
        }
        if !reasoning.is_empty() {
            s.insert("reasoning_content".into(), reasoning.join("\n\n").into());
        }
        let mut calls = Vec::new();
        for b in blocks {
            if let BlockKind::ToolCall { id, name, input } = &b.kind {
                let mut c = Map::new();
                let call_id = match id {
                    Some(id) => id.clone(),
                    None => {
                        self.fidelity
                            .lost("tool calls without an id (ids were made)", Some(&e.id));
                        format!("{}-call-{}", e.id, calls.len() + 1)
                    }
                };
                c.insert("tool_call_id".into(), call_id.into());
                c.insert("function_name".into(), name.clone().into());
                c.insert("arguments".into(), self.arguments(e, input));
                if self.atif {
                    for (k, v) in &b.extra {
                        c.insert(k.clone(), v.clone());
                    }
                } else if !b.extra.is_empty() {
                    self.fidelity
                        .lost("content block fields of the source format", Some(&e.id));
                }
                calls.push(Value::Object(c));
            }
        }
        if !calls.is_empty() {
            s.insert("tool_calls".into(), Value::Array(calls));
        }
        let own = self.counted.get(e.id.as_str()).map(|u| (*u).clone());
        let mut calls_n = u64::from(own.is_some());
        let mut usage = own.clone();
        if let Some((p, n)) = self.pending.take() {
            let u = usage.get_or_insert_with(Usage::default);
            u.add(&p);
            calls_n += n;
        }
        match (&own, usage) {
            (Some(own), Some(_))
                if calls_n == 1 && self.atif && own.extra.contains_key(wire::KEPT_METRICS) =>
            {
                let kept = own.extra.get(wire::KEPT_METRICS).and_then(Value::as_object);
                match kept {
                    Some(k) if wire::same_counts(&wire::usage_of(k), own) => {
                        s.insert("metrics".into(), Value::Object(k.clone()));
                    }
                    _ => set_metrics(&mut s, own, 1),
                }
            }
            (_, Some(u)) => set_metrics(&mut s, &u, calls_n),
            (_, None) => {}
        }
        self.native_extra(e, m, None, &mut s);
        self.steps.push(s);
    }

    /// A tool call's arguments as the object ATIF needs: an object as it
    /// is, a string holding one parsed, anything else under `value`.
    fn arguments(&mut self, e: &Entry, input: &Value) -> Value {
        match input {
            Value::Object(_) => input.clone(),
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Object(_)) => v,
                _ => self.wrapped(e, input),
            },
            Value::Null => Value::Object(Map::new()),
            _ => self.wrapped(e, input),
        }
    }

    fn wrapped(&mut self, e: &Entry, input: &Value) -> Value {
        self.fidelity.lost(
            "tool call arguments that are not a JSON object (written under `value`)",
            Some(&e.id),
        );
        let mut o = Map::new();
        o.insert("value".into(), input.clone());
        Value::Object(o)
    }

    /// Adds `results` to the observations of the steps that made their
    /// calls (a result of no call known to the last step).
    fn observe(&mut self, e: &Entry, results: Vec<ResultOut<'_>>, refs: &[(String, Value)]) {
        if results.is_empty() && self.atif {
            // An observation with no results.
            if let Some(s) = self.steps.last_mut() {
                s.entry("observation").or_insert_with(empty_observation);
            }
            return;
        }
        for r in results {
            let mut o = Map::new();
            let target = r.call.as_deref().and_then(|c| {
                self.steps.iter().rposition(|s| {
                    s.get("tool_calls")
                        .and_then(Value::as_array)
                        .is_some_and(|calls| {
                            calls
                                .iter()
                                .any(|k| k.get("tool_call_id").and_then(Value::as_str) == Some(c))
                        })
                })
            });
            match (&r.call, target) {
                (Some(c), Some(_)) => {
                    o.insert("source_call_id".into(), c.clone().into());
                }
                (Some(c), None) => {
                    self.fidelity
                        .lost("tool results whose call is not in the session", Some(&e.id));
                    let mut x = Map::new();
                    x.insert("tool_call_id".into(), c.clone().into());
                    o.insert("extra".into(), Value::Object(x));
                }
                (None, _) => {}
            }
            let form = r
                .block
                .and_then(|b| b.extra.get(CONTENT_FORM))
                .and_then(Value::as_str)
                .map(str::to_string);
            match form.as_deref() {
                Some("absent") => {}
                Some("null") => {
                    o.insert("content".into(), Value::Null);
                }
                _ => {
                    let v = if form.as_deref() == Some("list") {
                        Value::Array(r.content.iter().filter_map(|b| self.part(e, b)).collect())
                    } else {
                        self.message_value(e, None, &r.content)
                    };
                    o.insert("content".into(), v);
                }
            }
            if let Some(b) = r.block {
                if self.atif {
                    for (k, v) in &b.extra {
                        if k != CONTENT_FORM {
                            o.insert(k.clone(), v.clone());
                        }
                    }
                } else if !b.extra.is_empty() {
                    self.fidelity
                        .lost("content block fields of the source format", Some(&e.id));
                }
            }
            if !self.atif {
                let mut x = o
                    .remove("extra")
                    .and_then(|v| match v {
                        Value::Object(x) => Some(x),
                        _ => None,
                    })
                    .unwrap_or_default();
                if r.is_error {
                    x.insert("is_error".into(), true.into());
                }
                if !x.is_empty() {
                    o.insert("extra".into(), Value::Object(x));
                }
                if let Some((_, refv)) = refs.iter().find(|(c, _)| Some(c) == r.call.as_ref()) {
                    o.insert("subagent_trajectory_ref".into(), refv.clone());
                }
            }
            let i = match target {
                Some(i) => i,
                None => {
                    if self.steps.is_empty() {
                        let mut s = Map::new();
                        s.insert("source".into(), "system".into());
                        s.insert("message".into(), "".into());
                        self.steps.push(s);
                    }
                    self.steps.len() - 1
                }
            };
            let obs = self.steps[i]
                .entry("observation")
                .or_insert_with(empty_observation);
            if let Some(list) = obs.get_mut("results").and_then(Value::as_array_mut) {
                list.push(Value::Object(o));
            }
        }
    }
}

fn empty_observation() -> Value {
    let mut o = Map::new();
    o.insert("results".into(), Value::Array(Vec::new()));
    Value::Object(o)
}

/// A tool result being written.
struct ResultOut<'a> {
    call: Option<String>,
    content: Vec<&'a Block>,
    is_error: bool,
    block: Option<&'a Block>,
}

/// A tool-result block as a result to write.
fn result_out(b: &Block) -> ResultOut<'_> {
    match &b.kind {
        BlockKind::ToolResult {
            tool_call_id,
            content,
            is_error,
        } => ResultOut {
            call: tool_call_id.clone(),
            content: content.iter().collect(),
            is_error: *is_error,
            block: Some(b),
        },
        _ => ResultOut {
            call: None,
            content: vec![b],
            is_error: false,
            block: None,
        },
    }
}

/// The usage a step's metrics say and how many responses they sum.
fn step_usage(s: &Map<String, Value>) -> (Usage, u64) {
    let u = s
        .get("metrics")
        .and_then(Value::as_object)
        .map(wire::usage_of)
        .unwrap_or_default();
    let n = s
        .get("llm_call_count")
        .and_then(Value::as_u64)
        .unwrap_or(u64::from(s.contains_key("metrics")));
    (u, n)
}

/// Sets the step's metrics to `u`, the sum of `calls` responses.
fn set_metrics(s: &mut Map<String, Value>, u: &Usage, calls: u64) {
    s.insert("metrics".into(), Value::Object(wire::metrics_of(u)));
    if calls > 1 {
        s.insert("llm_call_count".into(), calls.into());
    }
}

/// The text of `blocks`.
fn texts(blocks: &[Block]) -> String {
    blocks
        .iter()
        .filter_map(|b| match &b.kind {
            BlockKind::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}
