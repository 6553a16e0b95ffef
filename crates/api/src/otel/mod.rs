//! Sessions as OpenTelemetry traces (`export --to otel`, `push --otlp`),
//! following the OpenTelemetry GenAI semantic conventions (`gen_ai.*`, the
//! development version of semconv 1.41):
//!
//! - one trace per session, its root an `invoke_agent {agent}` span
//!   (`gen_ai.operation.name` `invoke_agent`, `gen_ai.agent.name`,
//!   `gen_ai.conversation.id` the session id);
//! - under it a `chat {model}` span (kind client) per model call, with
//!   `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.response.model`,
//!   `gen_ai.response.id`, `gen_ai.response.finish_reasons` and the token
//!   usage (`gen_ai.usage.input_tokens` counting cached tokens as the
//!   conventions ask, `gen_ai.usage.output_tokens`,
//!   `gen_ai.usage.cache_read.input_tokens`,
//!   `gen_ai.usage.cache_creation.input_tokens`,
//!   `gen_ai.usage.reasoning.output_tokens`); the messages are the
//!   `gen_ai.input.messages` (those sent since the previous call: the
//!   prompt, the tool results) and `gen_ai.output.messages` attributes, as
//!   JSON strings in the conventions' message schema (the conventions
//!   replaced the older per-message events with these attributes);
//! - an `execute_tool {name}` span (kind internal) per tool call, with
//!   `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.call.arguments`
//!   and `gen_ai.tool.call.result`, from the call to its result, in error
//!   when the tool failed.
//!
//! A model call is one response of the model: the assistant entries of one
//! response id (Claude Code writes a line per content block), or a run of
//! assistant entries with one usage (Codex writes reasoning, message and
//! calls apart). Its tokens are counted once per response id, as `stats`
//! counts them, so a session's trace holds the tokens `stats` reports.
//!
//! Ids are derived from the agent, the session id and the entry ids
//! (SHA-256), so exporting or pushing a session again gives the same trace
//! and span ids. What a trace cannot hold is the [`Fidelity`] report.

pub mod push;

use agentlog_formats::Fidelity;
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Message, Role, Session, Timestamp, Usage,
    DERIVED_FROM,
};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value, AnyValue, ArrayValue, InstrumentationScope, KeyValue,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};

/// The export target's name.
pub const TARGET: &str = "otel";

/// The most tokens of one kind counted for one response (as the index
/// counts them: a file claiming more is taken at this).
const MAX_RESPONSE_TOKENS: u64 = u32::MAX as u64;

/// A session as a trace.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The trace id (16 bytes).
    pub trace_id: Vec<u8>,
    /// The resource: the agent that wrote the session.
    pub resource: Resource,
    /// The spans, the root (`invoke_agent`) first, then model calls and
    /// tool executions in the order the session holds them.
    pub spans: Vec<TraceSpan>,
    /// What the trace could not hold.
    pub fidelity: Fidelity,
}

/// One span of a [`Trace`].
#[derive(Debug, Clone)]
pub struct TraceSpan {
    /// The span.
    pub span: Span,
    /// False for what may still change as the agent writes on: the last
    /// model call while its turn is not finished (no answer with its usage
    /// yet, or calls waiting for their results), a tool call waiting for
    /// its result. `push` sends a span once it is settled.
    pub settled: bool,
}

impl Trace {
    /// The request carrying `spans` of this trace.
    pub fn request<'a>(
        &self,
        spans: impl IntoIterator<Item = &'a Span>,
    ) -> ExportTraceServiceRequest {
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(self.resource.clone()),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "agentlog".to_string(),
                        version: env!("CARGO_PKG_VERSION").to_string(),
                        ..Default::default()
                    }),
                    spans: spans.into_iter().cloned().collect(),
                    schema_url: String::new(),
                }],
                schema_url: String::new(),
            }],
        }
    }

    /// The whole trace as an OTLP request.
    pub fn whole(&self) -> ExportTraceServiceRequest {
        self.request(self.spans.iter().map(|s| &s.span))
    }
}

/// The OTLP JSON (the protobuf JSON mapping of `ExportTraceServiceRequest`)
/// of `session`'s trace, and what it could not hold.
pub fn export(session: &Session) -> (Vec<u8>, Fidelity) {
    let trace = trace(session);
    let mut bytes = serde_json::to_vec(&trace.whole()).unwrap_or_default();
    bytes.push(b'\n');
    (bytes, trace.fidelity)
}

/// 16 or 8 bytes of the SHA-256 of `parts` (never all zeros, which OTLP
/// takes as no id).
fn id(len: usize, parts: &[&str]) -> Vec<u8> {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    let mut out = h.finalize()[..len].to_vec();
    if out.iter().all(|b| *b == 0) {
        out[len - 1] = 1;
    }
    out
}

/// The trace id of the session `id` of `agent`.
pub fn trace_id(agent: &Agent, session_id: &str) -> Vec<u8> {
    id(16, &["agentlog trace", agent.as_str(), session_id])
}

fn span_id(agent: &Agent, session_id: &str, what: &str, key: &str) -> Vec<u8> {
    id(8, &["agentlog span", agent.as_str(), session_id, what, key])
}

fn kv(key: &str, value: any_value::Value) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    }
}

fn s(key: &str, v: impl Into<String>) -> KeyValue {
    kv(key, any_value::Value::StringValue(v.into()))
}

fn int(key: &str, v: u64) -> KeyValue {
    kv(
        key,
        any_value::Value::IntValue(v.min(i64::MAX as u64) as i64),
    )
}

fn strings(key: &str, v: &[String]) -> KeyValue {
    kv(
        key,
        any_value::Value::ArrayValue(ArrayValue {
            values: v
                .iter()
                .map(|x| AnyValue {
                    value: Some(any_value::Value::StringValue(x.clone())),
                })
                .collect(),
        }),
    )
}

fn nanos(t: &Timestamp) -> Option<u64> {
    t.millis()
        .filter(|ms| *ms > 0)
        .map(|ms| (ms as u64).saturating_mul(1_000_000))
}

fn entry_time(e: &Entry) -> Option<u64> {
    e.timestamp.as_ref().and_then(nanos).or_else(|| {
        e.message()
            .and_then(|m| m.timestamp.as_ref())
            .and_then(nanos)
    })
}

/// The `gen_ai.provider.name` for a response: the provider the session
/// names (in the conventions' spelling), else the one the model's name
/// says, else the agent's own.
fn provider_of(provider: Option<&str>, model: Option<&str>, agent: &Agent) -> Option<String> {
    let known = |p: &str| -> Option<&'static str> {
        let p = p.to_ascii_lowercase();
        Some(match p.as_str() {
            "anthropic" | "claude" => "anthropic",
            "openai" | "openai-codex" | "chatgpt" => "openai",
            "google" | "gemini" | "google-gemini-cli" | "gemini-cli" | "google-genai" => {
                "gcp.gemini"
            }
            "vertex" | "vertex_ai" | "google-vertex" => "gcp.vertex_ai",
            "mistral" | "mistralai" | "mistral_ai" => "mistral_ai",
            "xai" | "x_ai" | "grok" => "x_ai",
            "moonshot" | "moonshotai" | "moonshot_ai" | "kimi" => "moonshot_ai",
            "bedrock" | "amazon-bedrock" | "aws.bedrock" => "aws.bedrock",
            "azure" | "azure-openai" | "azure.ai.openai" => "azure.ai.openai",
            "deepseek" => "deepseek",
            "groq" => "groq",
            "cohere" => "cohere",
            "perplexity" => "perplexity",
            _ => return None,
        })
    };
    if let Some(p) = provider.filter(|p| !p.trim().is_empty()) {
        return Some(
            known(p)
                .map(str::to_string)
                .unwrap_or_else(|| p.to_ascii_lowercase()),
        );
    }
    if let Some(m) = model {
        let m = m.rsplit('/').next().unwrap_or(m).to_ascii_lowercase();
        let by_model = if m.starts_with("claude") {
            Some("anthropic")
        } else if m.starts_with("gpt")
            || m.starts_with("o1")
            || m.starts_with("o3")
            || m.starts_with("o4")
            || m.starts_with("codex")
            || m.starts_with("chatgpt")
        {
            Some("openai")
        } else if m.starts_with("gemini") {
            Some("gcp.gemini")
        } else if ["mistral", "devstral", "codestral", "magistral"]
            .iter()
            .any(|p| m.starts_with(p))
        {
            Some("mistral_ai")
        } else if m.starts_with("deepseek") {
            Some("deepseek")
        } else if m.starts_with("grok") {
            Some("x_ai")
        } else if m.starts_with("kimi") || m.starts_with("moonshot") {
            Some("moonshot_ai")
        } else {
            None
        };
        if let Some(p) = by_model {
            return Some(p.to_string());
        }
    }
    match agent {
        Agent::Claude => Some("anthropic".to_string()),
        Agent::Codex => Some("openai".to_string()),
        Agent::Gemini => Some("gcp.gemini".to_string()),
        _ => None,
    }
}

/// A block as a part of the conventions' message schema.
fn part(b: &Block) -> Value {
    match &b.kind {
        BlockKind::Text { text } => json!({"type": "text", "content": text}),
        BlockKind::Thinking { text, .. } => json!({"type": "reasoning", "content": text}),
        BlockKind::ToolCall { id, name, input } => {
            json!({"type": "tool_call", "id": id, "name": name, "arguments": arguments(input)})
        }
        BlockKind::ToolResult {
            tool_call_id,
            content,
            ..
        } => {
            json!({"type": "tool_call_response", "id": tool_call_id, "response": result_value(content)})
        }
        BlockKind::Image {
            media_type,
            data,
            url,
        } => match (data, url) {
            (Some(d), _) => {
                json!({"type": "blob", "modality": "image", "mime_type": media_type, "content": d})
            }
            (None, Some(u)) => {
                json!({"type": "uri", "modality": "image", "mime_type": media_type, "uri": u})
            }
            (None, None) => json!({"type": "image"}),
        },
        BlockKind::Other { value } => {
            let kind = value
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("other")
                .to_string();
            json!({"type": kind, "value": value})
        }
    }
}

/// Tool arguments as an object when they are one, or JSON text holding
/// one.
fn arguments(input: &Value) -> Value {
    match input {
        Value::String(text) => serde_json::from_str::<Value>(text)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| input.clone()),
        v => v.clone(),
    }
}

/// What a tool returned: its text, or its blocks as parts when it is not
/// only text.
fn result_value(content: &[Block]) -> Value {
    if content
        .iter()
        .all(|b| matches!(b.kind, BlockKind::Text { .. }))
    {
        let text: Vec<&str> = content
            .iter()
            .filter_map(|b| match &b.kind {
                BlockKind::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        Value::String(text.join("\n"))
    } else {
        Value::Array(content.iter().map(part).collect())
    }
}

/// A message as an input message of the conventions' schema: a user
/// message of tool results only is the `tool` role's.
fn input_message(m: &Message) -> Value {
    let only_results = agentlog_model::only_tool_results(m);
    let role = if only_results || m.role == Role::Tool {
        "tool"
    } else {
        m.role.as_str()
    };
    let mut parts: Vec<Value> = m.content.iter().map(part).collect();
    if m.role == Role::Tool && !only_results {
        // A tool message (OpenAI's shape): the whole content answers one call.
        parts = vec![json!({
            "type": "tool_call_response",
            "id": m.tool_call_id,
            "response": result_value(&m.content),
        })];
    }
    json!({"role": role, "parts": parts})
}

fn text_message(role: &str, name: Option<&str>, text: &str) -> Value {
    let mut m = json!({"role": role, "parts": [{"type": "text", "content": text}]});
    if let Some(n) = name {
        m["name"] = Value::String(n.to_string());
    }
    m
}

/// A finish reason in the conventions' words (`stop`, `length`,
/// `tool_call`, …) for a stop reason as the agent recorded it.
fn finish_reason(stop: Option<&str>, called_tools: bool) -> String {
    match stop {
        Some("end_turn" | "stop" | "STOP" | "stop_sequence" | "completed") => "stop".to_string(),
        Some("max_tokens" | "length" | "MAX_TOKENS") => "length".to_string(),
        Some("tool_use" | "tool_calls" | "toolUse" | "function_call") => "tool_call".to_string(),
        Some("content_filter" | "SAFETY") => "content_filter".to_string(),
        Some(other) if !other.is_empty() => other.to_string(),
        _ if called_tools => "tool_call".to_string(),
        _ => "stop".to_string(),
    }
}

/// One model call being gathered.
#[derive(Default)]
struct Call {
    first_entry: String,
    inputs: Vec<Value>,
    start: Option<u64>,
    end: Option<u64>,
    response_id: Option<String>,
    model: Option<String>,
    provider: Option<String>,
    stop_reason: Option<String>,
    usage: Option<Usage>,
    parts: Vec<Value>,
    tools: Vec<usize>,
    visible: bool,
    cost: Option<f64>,
}

impl Call {
    /// True when the assistant entry with response id `rid` and `usage`
    /// belongs to this call.
    fn continues(&self, rid: Option<&str>, has_usage: bool) -> bool {
        match (self.response_id.as_deref(), rid) {
            (Some(a), Some(b)) => a == b,
            (None, Some(_)) => self.usage.is_none(),
            (_, None) => !(has_usage && self.usage.is_some()),
        }
    }
}

/// One tool execution being gathered.
struct Tool {
    key: String,
    name: String,
    call_id: Option<String>,
    arguments: Value,
    start: Option<u64>,
    end: Option<u64>,
    result: Option<Value>,
    is_error: bool,
    /// The index of the call that asked for it.
    call: usize,
}

/// Everything gathered from the session's entries.
#[derive(Default)]
struct Gathered {
    calls: Vec<Call>,
    tools: Vec<Tool>,
    /// Tool spans by call id.
    by_call_id: HashMap<String, usize>,
    pending: Vec<Value>,
    pending_first: Option<String>,
    open: bool,
    seen_responses: HashSet<String>,
    last_time: Option<u64>,
}

impl Gathered {
    fn input(&mut self, e: &Entry, m: Value) {
        self.open = false;
        if self.pending.is_empty() {
            self.pending_first = Some(e.id.clone());
        }
        self.pending.push(m);
    }

    /// Sets the result of the tool call `call_id` (without an id, of the
    /// oldest call without an id still waiting); false when there is no
    /// such call.
    fn result(
        &mut self,
        call_id: Option<&str>,
        value: Value,
        is_error: bool,
        at: Option<u64>,
    ) -> bool {
        let i = match call_id {
            Some(c) => self.by_call_id.get(c).copied(),
            None => self
                .tools
                .iter()
                .position(|t| t.result.is_none() && t.call_id.is_none()),
        };
        let Some(i) = i else {
            return false;
        };
        let t = &mut self.tools[i];
        if t.result.is_some() {
            return true;
        }
        t.result = Some(value);
        t.is_error = is_error;
        t.end = at.or(t.start);
        true
    }
}

/// The trace of `session`: what [`export`] writes and `push` sends.
pub fn trace(session: &Session) -> Trace {
    let mut fidelity = Fidelity::new(TARGET);
    let sources: HashSet<&str> = session
        .entries
        .iter()
        .filter_map(|e| e.extra.get(DERIVED_FROM).and_then(Value::as_str))
        .collect();
    let mut g = Gathered::default();
    let session_start = session.meta.created_at.as_ref().and_then(nanos);
    g.last_time = session_start;
    let mut untimed = false;
    for e in &session.entries {
        let t = entry_time(e);
        if t.is_none() {
            untimed = true;
        }
        let at = t.or(g.last_time);
        let derived = e.is_derived();
        let extra = e
            .extra
            .keys()
            .filter(|k| k.as_str() != DERIVED_FROM)
            .count();
        if extra > 0 {
            fidelity.lost("entry fields of the source format", Some(&e.id));
        }
        match &e.kind {
            EntryKind::Message(m) if m.role == Role::Assistant => {
                if !m.extra.is_empty() {
                    fidelity.lost("message fields of the source format", Some(&e.id));
                }
                let usage = e.response_usage();
                let rid = m.id.as_deref();
                assistant(&mut g, e, at, rid, usage);
                let call = g.calls.len() - 1;
                let c = &mut g.calls[call];
                c.model = c.model.take().or_else(|| m.model.clone());
                c.provider = c.provider.take().or_else(|| m.provider.clone());
                if m.stop_reason.is_some() {
                    c.stop_reason = m.stop_reason.clone();
                }
                for (i, b) in m.content.iter().enumerate() {
                    if !b.extra.is_empty() {
                        fidelity.lost("content block fields of the source format", Some(&e.id));
                    }
                    match &b.kind {
                        BlockKind::Thinking {
                            text,
                            signature,
                            redacted,
                        } => {
                            if signature.is_some() {
                                fidelity.lost(
                                    "thinking signatures (the provider's seal that lets the reasoning be sent back to it)",
                                    Some(&e.id),
                                );
                            }
                            if *redacted && text.is_empty() {
                                fidelity
                                    .lost("reasoning the provider keeps encrypted", Some(&e.id));
                                continue;
                            }
                        }
                        BlockKind::Text { text } if text.trim().is_empty() => continue,
                        _ => {}
                    }
                    if matches!(
                        b.kind,
                        BlockKind::Text { .. }
                            | BlockKind::ToolCall { .. }
                            | BlockKind::Image { .. }
                            | BlockKind::Other { .. }
                    ) {
                        g.calls[call].visible = true;
                    }
                    g.calls[call].parts.push(part(b));
                    if let BlockKind::ToolCall { id, name, input } = &b.kind {
                        let ti = g.tools.len();
                        if let Some(cid) = id {
                            g.by_call_id.insert(cid.clone(), ti);
                        }
                        g.tools.push(Tool {
                            key: format!("{}#{i}", e.id),
                            name: name.clone(),
                            call_id: id.clone(),
                            arguments: arguments(input),
                            start: at,
                            end: None,
                            result: None,
                            is_error: false,
                            call,
                        });
                        g.calls[call].tools.push(ti);
                    }
                }
            }
            EntryKind::LlmResponse { output, .. } => {
                let rid = output.get("id").and_then(Value::as_str);
                assistant(&mut g, e, at, rid, e.response_usage());
                let c = g.calls.last_mut();
                if let Some(c) = c {
                    if c.model.is_none() {
                        c.model = output
                            .get("model")
                            .and_then(Value::as_str)
                            .map(String::from);
                    }
                    if !sources.contains(e.id.as_str()) {
                        // No message was read out of it: its text is what it
                        // holds verbatim.
                        c.parts
                            .push(json!({"type": "text", "content": output.to_string()}));
                        c.visible = true;
                    }
                }
            }
            EntryKind::Message(m) => {
                if !m.extra.is_empty() {
                    fidelity.lost("message fields of the source format", Some(&e.id));
                }
                if m.content.iter().any(|b| !b.extra.is_empty()) {
                    fidelity.lost("content block fields of the source format", Some(&e.id));
                }
                let msg = input_message(m);
                for b in &m.content {
                    if let BlockKind::ToolResult {
                        tool_call_id,
                        content,
                        is_error,
                    } = &b.kind
                    {
                        let found = g.result(
                            tool_call_id.as_deref(),
                            result_value(content),
                            *is_error,
                            at,
                        );
                        if !found {
                            fidelity.lost(
                                "tool results whose call is not in the session (they are kept as the next call's input only)",
                                Some(&e.id),
                            );
                        }
                    }
                }
                if m.role == Role::Tool && !agentlog_model::only_tool_results(m) {
                    let found = g.result(
                        m.tool_call_id.as_deref(),
                        result_value(&m.content),
                        m.is_error.unwrap_or(false),
                        at,
                    );
                    if !found {
                        fidelity.lost(
                            "tool results whose call is not in the session (they are kept as the next call's input only)",
                            Some(&e.id),
                        );
                    }
                }
                g.input(e, msg);
            }
            EntryKind::RunStart { .. } if !derived && !sources.contains(e.id.as_str()) => {
                if let Some(text) = e.prompt_text() {
                    g.input(e, text_message("user", None, &text));
                }
            }
            EntryKind::Event { .. } if e.prompt_text().is_some() => {
                if let Some(text) = e.prompt_text() {
                    g.input(e, text_message("user", None, &text));
                }
            }
            EntryKind::ToolOutput {
                tool_call_id,
                output,
                is_error,
                ..
            } => {
                if !sources.contains(e.id.as_str()) {
                    let set = g.result(
                        Some(tool_call_id),
                        Value::String(output.clone()),
                        is_error.unwrap_or(false),
                        at,
                    );
                    if !set {
                        fidelity.lost("entry kind tool_output", Some(&e.id));
                    }
                }
            }
            EntryKind::Compaction { summary, .. } => {
                g.input(e, text_message("user", Some("compaction summary"), summary));
            }
            EntryKind::BranchSummary { summary, .. } => {
                g.input(e, text_message("user", Some("branch summary"), summary));
            }
            EntryKind::CustomMessage {
                custom_type,
                content,
                ..
            } => {
                let parts: Vec<Value> = content.iter().map(part).collect();
                g.input(
                    e,
                    json!({"role": "user", "name": custom_type, "parts": parts}),
                );
            }
            EntryKind::SessionInit {
                system_prompt,
                task,
                tools,
                output_schema,
            } => {
                if let Some(p) = system_prompt {
                    g.input(e, text_message("system", None, p));
                }
                if let Some(t) = task {
                    g.input(e, text_message("user", None, t));
                }
                if !tools.is_empty() || output_schema.is_some() {
                    fidelity.lost(
                        "the tools and output schema a subagent was given",
                        Some(&e.id),
                    );
                }
            }
            other => {
                // Not conversation: it does not end the model call before it.
                fidelity.lost(format!("entry kind {}", other.name()), Some(&e.id));
            }
        }
        if let Some(t) = t {
            g.last_time = Some(g.last_time.map_or(t, |l| l.max(t)));
        }
    }
    if !g.pending.is_empty() {
        let first = g.pending_first.clone();
        for _ in 0..g.pending.len() {
            fidelity.lost(
                "messages after the last model call (a trace holds a message as the input of the call that answers it)",
                first.as_deref(),
            );
        }
    }
    if !session.tree().branch_points().is_empty() {
        fidelity.lost(
            "the branch structure (a trace lists every model call in file order; which turn continues which is lost)",
            None,
        );
    }
    if !session.meta.todos.is_empty() {
        fidelity.lost("the session's todo list", None);
    }
    if !session.meta.extra.is_empty() {
        fidelity.lost("session metadata fields of the source format", None);
    }
    let any_time = g.last_time.is_some();
    if !any_time && !session.entries.is_empty() {
        fidelity.lost(
            "the times of the turns (the session records none: the trace is placed at 1970-01-01)",
            None,
        );
    } else if untimed {
        fidelity.lost(
            "the times of some entries (the session records none for them: they are placed at the time before them)",
            None,
        );
    }
    spans(session, g, fidelity)
}

/// Adds the assistant entry `e` (response id `rid`, its `usage`) to the
/// open model call, or opens a new one with the messages sent since the
/// last.
fn assistant(
    g: &mut Gathered,
    e: &Entry,
    at: Option<u64>,
    rid: Option<&str>,
    usage: Option<&Usage>,
) {
    let same = g.open
        && g.calls
            .last()
            .is_some_and(|c| c.continues(rid, usage.is_some()));
    if !same {
        let start = g.last_time.or(at);
        g.calls.push(Call {
            first_entry: e.id.clone(),
            inputs: std::mem::take(&mut g.pending),
            start,
            ..Call::default()
        });
        g.pending_first = None;
        g.open = true;
    }
    let Some(c) = g.calls.last_mut() else {
        return;
    };
    if c.response_id.is_none() {
        c.response_id = rid.map(String::from);
    }
    c.end = at.or(c.end);
    if let Some(u) = usage {
        let counted = match rid {
            Some(r) => g.seen_responses.insert(r.to_string()),
            None => true,
        };
        if counted {
            let u = Usage {
                input: u.input.min(MAX_RESPONSE_TOKENS),
                output: u.output.min(MAX_RESPONSE_TOKENS),
                cache_read: u.cache_read.min(MAX_RESPONSE_TOKENS),
                cache_write: u.cache_write.min(MAX_RESPONSE_TOKENS),
                reasoning: u.reasoning.min(MAX_RESPONSE_TOKENS),
                ..Usage::default()
            };
            c.usage.get_or_insert_with(Usage::default).add(&u);
            if let Some(cost) = usage.and_then(|u| u.cost_usd).filter(|c| c.is_finite()) {
                c.cost = Some(c.cost.unwrap_or(0.0) + cost);
            }
        }
    }
}

/// The spans of what was gathered.
fn spans(session: &Session, g: Gathered, fidelity: Fidelity) -> Trace {
    let agent = &session.meta.agent;
    let sid = session.meta.id.as_str();
    let trace_id = trace_id(agent, sid);
    let root_id = span_id(agent, sid, "agent", "");
    let session_model = session.meta.model.model.as_deref();
    let session_provider = session.meta.model.provider.as_deref();
    let uses_usage = g.calls.iter().any(|c| c.usage.is_some());
    // Something the agent wrote after the last call (a prompt, results)
    // ends it.
    let followed = !g.pending.is_empty();
    let start = session
        .meta
        .created_at
        .as_ref()
        .and_then(nanos)
        .into_iter()
        .chain(g.calls.iter().filter_map(|c| c.start))
        .min()
        .unwrap_or(0);
    let end = g.last_time.unwrap_or(start).max(start);
    let mut out = Vec::new();

    let mut root = vec![
        s("gen_ai.operation.name", "invoke_agent"),
        s("gen_ai.agent.name", agent.as_str()),
        s("gen_ai.conversation.id", sid),
    ];
    if let Some(p) = provider_of(session_provider, session_model, agent) {
        root.push(s("gen_ai.provider.name", p));
    }
    if let Some(m) = session_model {
        root.push(s("gen_ai.request.model", m));
    }
    if let Some(t) = session.meta.title.as_deref() {
        root.push(s("agentlog.session.title", t));
    }
    if let Some(c) = session.meta.cwd.as_deref() {
        root.push(s("agentlog.session.cwd", c));
    }
    if let Some(p) = session.meta.parent_session.as_deref() {
        root.push(s("agentlog.session.parent", p));
    }
    out.push(TraceSpan {
        span: Span {
            trace_id: trace_id.clone(),
            span_id: root_id.clone(),
            name: format!("invoke_agent {}", agent.as_str()),
            kind: SpanKind::Internal as i32,
            start_time_unix_nano: start,
            end_time_unix_nano: end,
            attributes: root,
            ..Default::default()
        },
        settled: true,
    });

    let last_call = g.calls.len().checked_sub(1);
    let mut last_model: Option<&str> = None;
    for (i, c) in g.calls.iter().enumerate() {
        // A response that does not name its model was made by the model
        // of the one before it.
        let model = c.model.as_deref().or(last_model).or(session_model);
        last_model = model;
        let mut a = vec![s("gen_ai.operation.name", "chat")];
        if let Some(p) = provider_of(c.provider.as_deref().or(session_provider), model, agent) {
            a.push(s("gen_ai.provider.name", p));
        }
        if let Some(m) = model {
            a.push(s("gen_ai.request.model", m));
            a.push(s("gen_ai.response.model", m));
        }
        a.push(s("gen_ai.conversation.id", sid));
        if let Some(r) = &c.response_id {
            a.push(s("gen_ai.response.id", r.as_str()));
        }
        let called = !c.tools.is_empty();
        let finish = finish_reason(c.stop_reason.as_deref(), called);
        a.push(strings(
            "gen_ai.response.finish_reasons",
            std::slice::from_ref(&finish),
        ));
        if let Some(u) = &c.usage {
            let input = u
                .input
                .saturating_add(u.cache_read)
                .saturating_add(u.cache_write);
            a.push(int("gen_ai.usage.input_tokens", input));
            a.push(int("gen_ai.usage.output_tokens", u.output));
            a.push(int("gen_ai.usage.cache_read.input_tokens", u.cache_read));
            a.push(int(
                "gen_ai.usage.cache_creation.input_tokens",
                u.cache_write,
            ));
            if u.reasoning > 0 {
                a.push(int("gen_ai.usage.reasoning.output_tokens", u.reasoning));
            }
        }
        if let Some(cost) = c.cost {
            a.push(kv(
                "agentlog.usage.cost_usd",
                any_value::Value::DoubleValue(cost),
            ));
        }
        a.push(s(
            "gen_ai.input.messages",
            Value::Array(c.inputs.clone()).to_string(),
        ));
        let output = json!([{"role": "assistant", "parts": c.parts, "finish_reason": finish}]);
        a.push(s("gen_ai.output.messages", output.to_string()));
        a.push(s("agentlog.entry.id", c.first_entry.as_str()));
        let name = match model {
            Some(m) => format!("chat {m}"),
            None => "chat".to_string(),
        };
        let cstart = c.start.or(c.end).unwrap_or(start);
        let cend = c.end.unwrap_or(cstart).max(cstart);
        // The last call is settled when its turn is over: it answered
        // without calling tools, with its usage (when the agent records
        // usage at all).
        let settled = Some(i) != last_call
            || followed
            || (c.visible && !called && (c.usage.is_some() || !uses_usage));
        out.push(TraceSpan {
            span: Span {
                trace_id: trace_id.clone(),
                span_id: span_id(agent, sid, "chat", &c.first_entry),
                parent_span_id: root_id.clone(),
                name,
                kind: SpanKind::Client as i32,
                start_time_unix_nano: cstart,
                end_time_unix_nano: cend,
                attributes: a,
                ..Default::default()
            },
            settled,
        });
        for ti in &c.tools {
            let t = &g.tools[*ti];
            out.push(tool_span(
                t, &trace_id, &root_id, agent, sid, start, last_call,
            ));
        }
    }
    Trace {
        trace_id,
        resource: Resource {
            attributes: resource_attributes(session),
            ..Default::default()
        },
        spans: out,
        fidelity,
    }
}

fn tool_span(
    t: &Tool,
    trace_id: &[u8],
    root_id: &[u8],
    agent: &Agent,
    sid: &str,
    start: u64,
    last_call: Option<usize>,
) -> TraceSpan {
    let mut a = vec![
        s("gen_ai.operation.name", "execute_tool"),
        s("gen_ai.tool.name", t.name.as_str()),
        s("gen_ai.tool.type", "function"),
        s("gen_ai.conversation.id", sid),
    ];
    if let Some(id) = &t.call_id {
        a.push(s("gen_ai.tool.call.id", id.as_str()));
    }
    a.push(s("gen_ai.tool.call.arguments", t.arguments.to_string()));
    if let Some(r) = &t.result {
        let text = match r {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        a.push(s("gen_ai.tool.call.result", text));
    }
    let status = if t.is_error {
        a.push(s("error.type", "_OTHER"));
        Some(Status {
            message: "the tool reported an error".to_string(),
            code: StatusCode::Error as i32,
        })
    } else {
        None
    };
    a.push(s("agentlog.entry.id", t.key.as_str()));
    let tstart = t.start.unwrap_or(start);
    let tend = t.end.unwrap_or(tstart).max(tstart);
    TraceSpan {
        span: Span {
            trace_id: trace_id.to_vec(),
            span_id: span_id(agent, sid, "tool", &t.key),
            parent_span_id: root_id.to_vec(),
            name: format!("execute_tool {}", t.name),
            kind: SpanKind::Internal as i32,
            start_time_unix_nano: tstart,
            end_time_unix_nano: tend,
            attributes: a,
            status,
            ..Default::default()
        },
        // Waiting for its result while the model has not gone on.
        settled: t.result.is_some() || Some(t.call) != last_call,
    }
}

fn resource_attributes(session: &Session) -> Vec<KeyValue> {
    let mut a = vec![s("service.name", session.meta.agent.as_str())];
    if let Some(v) = session.meta.agent_version.as_deref() {
        a.push(s("service.version", v));
    }
    a.push(s("telemetry.sdk.name", "agentlog"));
    a.push(s("telemetry.sdk.version", env!("CARGO_PKG_VERSION")));
    a
}

/// Adds the losses of `other` into `into` (counts summed, the first entry
/// kept).
pub fn merge_fidelity(into: &mut Fidelity, other: &Fidelity) {
    for l in &other.losses {
        match into.losses.iter_mut().find(|x| x.what == l.what) {
            Some(x) => x.count += l.count,
            None => into.losses.push(l.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentlog_model::SessionMeta;

    fn at(ms: i64) -> Timestamp {
        Timestamp::Millis(1_750_000_000_000 + ms)
    }

    fn attr<'a>(span: &'a Span, key: &str) -> Option<&'a any_value::Value> {
        span.attributes
            .iter()
            .find(|k| k.key == key)
            .and_then(|k| k.value.as_ref())
            .and_then(|v| v.value.as_ref())
    }

    fn session() -> Session {
        let mut s = Session::new(SessionMeta::new("s-1", Agent::Claude));
        s.push(
            Entry::new(
                "u1",
                None,
                EntryKind::Message(Message::text(Role::User, "list files")),
            )
            .at(at(0)),
        );
        // One response written as two lines (thinking, then a call), one usage.
        for (id, block) in [
            ("a1", Block::thinking("look", Some("sig".into()))),
            (
                "a2",
                Block::tool_call(Some("c1".into()), "Bash", json!({"command": "ls"})),
            ),
        ] {
            let mut m = Message::new(Role::Assistant);
            m.id = Some("msg_1".into());
            m.model = Some("claude-sonnet-4-5".into());
            m.usage = Some(Usage {
                input: 10,
                output: 5,
                cache_read: 100,
                ..Usage::default()
            });
            m.content.push(block);
            s.push(Entry::new(id, None, EntryKind::Message(m)).at(at(1000)));
        }
        let mut r = Message::new(Role::User);
        r.content.push(Block::tool_result(
            Some("c1".into()),
            vec![Block::text("a b")],
            false,
        ));
        s.push(Entry::new("r1", None, EntryKind::Message(r)).at(at(2000)));
        let mut a = Message::text(Role::Assistant, "two files");
        a.id = Some("msg_2".into());
        a.usage = Some(Usage {
            input: 3,
            output: 4,
            ..Usage::default()
        });
        s.push(Entry::new("a3", None, EntryKind::Message(a)).at(at(3000)));
        s
    }

    #[test]
    fn a_session_is_a_root_a_span_per_call_and_per_tool() {
        let t = trace(&session());
        let names: Vec<&str> = t.spans.iter().map(|s| s.span.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "invoke_agent claude",
                "chat claude-sonnet-4-5",
                "execute_tool Bash",
                "chat claude-sonnet-4-5"
            ]
        );
        let chat = &t.spans[1].span;
        assert_eq!(
            attr(chat, "gen_ai.usage.input_tokens"),
            Some(&any_value::Value::IntValue(110)),
            "cached tokens are input tokens"
        );
        assert_eq!(
            attr(chat, "gen_ai.provider.name"),
            Some(&any_value::Value::StringValue("anthropic".into()))
        );
        let tool = &t.spans[2].span;
        assert_eq!(
            attr(tool, "gen_ai.tool.call.result"),
            Some(&any_value::Value::StringValue("a b".into()))
        );
        assert_eq!(
            tool.end_time_unix_nano - tool.start_time_unix_nano,
            1_000_000_000
        );
        assert!(t.spans.iter().all(|s| s.settled));
        assert!(t
            .fidelity
            .losses
            .iter()
            .any(|l| l.what.starts_with("thinking signatures")));
        // The same session gives the same ids.
        let again = trace(&session());
        assert_eq!(again.spans[3].span.span_id, t.spans[3].span.span_id);
        assert_eq!(again.trace_id, t.trace_id);
    }

    #[test]
    fn a_turn_still_running_is_not_settled() {
        let mut s = session();
        s.entries.truncate(3);
        let t = trace(&s);
        assert_eq!(t.spans.len(), 3);
        assert!(!t.spans[1].settled, "the call waits for its tool");
        assert!(!t.spans[2].settled, "the tool waits for its result");
    }
}
