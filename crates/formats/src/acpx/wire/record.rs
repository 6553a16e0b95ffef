//! The acpx session record (`<acpxRecordId>.json`), as the seed document
//! specifies it, and the two other shapes real files have.
//!
//! Every struct keeps unknown fields in `extra`, and every optional field is
//! an [`Opt`] that remembers whether it was absent, `null` or set, so a
//! record read and written again gives the same JSON values.

use agentlog_model::Extra;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The only schema a session record may have.
pub const SCHEMA: &str = "acpx.session.v1";

/// A field that may be absent, `null`, or set.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Opt<T> {
    /// Not in the JSON.
    #[default]
    Absent,
    /// `null`.
    Null,
    /// A value.
    Set(T),
}

impl<T> Opt<T> {
    /// True when absent (used by `skip_serializing_if`).
    pub fn is_absent(&self) -> bool {
        matches!(self, Opt::Absent)
    }

    /// Returns the value, when set.
    pub fn get(&self) -> Option<&T> {
        match self {
            Opt::Set(v) => Some(v),
            _ => None,
        }
    }

    /// Returns the value mutably, when set.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        match self {
            Opt::Set(v) => Some(v),
            _ => None,
        }
    }

    /// Returns the value, setting it with `f` first when not set.
    pub fn get_or_insert_with(&mut self, f: impl FnOnce() -> T) -> &mut T {
        if !matches!(self, Opt::Set(_)) {
            *self = Opt::Set(f());
        }
        match self {
            Opt::Set(v) => v,
            // Set just above.
            _ => unreachable!(),
        }
    }
}

impl<T> From<Option<T>> for Opt<T> {
    fn from(o: Option<T>) -> Self {
        match o {
            Some(v) => Opt::Set(v),
            None => Opt::Null,
        }
    }
}

impl<T: Serialize> Serialize for Opt<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Opt::Set(v) => v.serialize(s),
            _ => s.serialize_none(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Opt<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(d)?.into())
    }
}

/// The whole record, in the seed's shape: camelCase runtime fields, the
/// conversation in `thread`, bookkeeping in `acpx`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// Must be [`SCHEMA`].
    #[serde(default)]
    pub schema: String,
    /// The record's id; the file is `<acpxRecordId>.json`.
    #[serde(default)]
    pub acpx_record_id: String,
    /// The ACP session id.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub acp_session_id: Opt<String>,
    /// The agent's own session id.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub agent_session_id: Opt<String>,
    /// The command that starts the agent.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub agent_command: Opt<String>,
    /// The working directory.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub cwd: Opt<String>,
    /// The session's name.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub name: Opt<String>,
    /// When the record was created.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub created_at: Opt<String>,
    /// When the record was last used.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub last_used_at: Opt<String>,
    /// Whether the session was closed.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub closed: Opt<bool>,
    /// When it was closed.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub closed_at: Opt<String>,
    /// The agent's process id.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub pid: Opt<Value>,
    /// When the agent process started.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub agent_started_at: Opt<Value>,
    /// When the last prompt was sent.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub last_prompt_at: Opt<Value>,
    /// The agent's last exit code.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub last_agent_exit_code: Opt<Value>,
    /// The signal that ended the agent.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub last_agent_exit_signal: Opt<Value>,
    /// When the agent exited.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub last_agent_exit_at: Opt<Value>,
    /// Why the agent disconnected.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub last_agent_disconnect_reason: Opt<Value>,
    /// The ACP protocol version.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub protocol_version: Opt<Value>,
    /// What the agent said it can do (opaque).
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub agent_capabilities: Opt<Value>,
    /// The conversation.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub thread: Opt<Thread>,
    /// Runtime bookkeeping.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub acpx: Opt<AcpxState>,
    /// Fields this shape does not name (kept verbatim).
    #[serde(flatten)]
    pub extra: Extra,
}

/// The conversation snapshot, modelled on Zed's thread.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    /// The thread format version (`0.3.0`).
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub version: Opt<Value>,
    /// The title.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub title: Opt<String>,
    /// The messages.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub messages: Opt<Vec<ThreadMessage>>,
    /// When the thread last changed.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub updated_at: Opt<String>,
    /// A long summary.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub detailed_summary: Opt<Value>,
    /// The project at the start.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub initial_project_snapshot: Opt<Value>,
    /// Token usage of the whole thread.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub cumulative_token_usage: Opt<Value>,
    /// Token usage per request, keyed by user message id.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub request_token_usage: Opt<Map<String, Value>>,
    /// The model.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub model: Opt<Value>,
    /// The agent profile.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub profile: Opt<Value>,
    /// Whether the thread was imported.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub imported: Opt<Value>,
    /// The parent context of a subagent.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub subagent_context: Opt<Value>,
    /// `standard`, `fast` or `null`.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub speed: Opt<Value>,
    /// Whether thinking is on.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub thinking_enabled: Opt<Value>,
    /// The thinking effort.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub thinking_effort: Opt<Value>,
    /// Fields this shape does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The keys of [`Thread`]; in the flat shapes they sit at the top level.
pub const THREAD_KEYS: [&str; 16] = [
    "version",
    "title",
    "messages",
    "updated_at",
    "detailed_summary",
    "initial_project_snapshot",
    "cumulative_token_usage",
    "cumulative_cost",
    "request_token_usage",
    "model",
    "profile",
    "imported",
    "subagent_context",
    "speed",
    "thinking_enabled",
    "thinking_effort",
];

/// A thread message: `{"User": …}`, `{"Agent": …}` or `"Resume"`.
#[derive(Clone, Debug, PartialEq)]
pub enum ThreadMessage {
    /// A user prompt.
    User(UserMessage),
    /// The agent's answer.
    Agent(AgentMessage),
    /// A resume marker.
    Resume,
    /// Any other shape (legacy `kind`/`type` messages); invalid, kept as is.
    Invalid(Value),
}

/// The last agent message of `messages` holding the tool use `id`: its
/// index and the tool use.
pub fn tool_use_holder<'a>(
    messages: &'a [ThreadMessage],
    id: &str,
) -> Option<(usize, &'a ToolUse)> {
    messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| match m {
            ThreadMessage::Agent(a) => a.content.iter().find_map(|c| match c {
                Content::ToolUse(t) if t.id == id => Some((i, &**t)),
                _ => None,
            }),
            _ => None,
        })
}

/// A user message.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// A UUID.
    #[serde(default)]
    pub id: String,
    /// `{"Text": …}`, `{"Mention": …}`, `{"Image": …}` items.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Fields this shape does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An agent message.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentMessage {
    /// Text, thinking and tool uses, in order.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Tool results by tool-use id, in order.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub tool_results: Opt<ToolResults>,
    /// Provider reasoning details.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub reasoning_details: Opt<Value>,
    /// Fields this shape does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One content item, externally tagged.
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    /// `{"Text": "…"}`.
    Text(String),
    /// `{"Thinking": {"text": …, "signature": …}}`.
    Thinking {
        /// The reasoning.
        text: String,
        /// The provider signature (`null` when none).
        signature: Opt<String>,
        /// Other fields.
        extra: Extra,
    },
    /// `{"ToolUse": {…}}`.
    ToolUse(Box<ToolUse>),
    /// Any other item (`Mention`, `Image`, `RedactedThinking`, …), verbatim.
    Other(Value),
}

/// A tool use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolUse {
    /// The call id.
    #[serde(default)]
    pub id: String,
    /// The tool's name.
    #[serde(default)]
    pub name: String,
    /// The input as the agent sent it (a JSON string).
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub raw_input: Opt<Value>,
    /// The parsed input.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub input: Opt<Value>,
    /// Whether the input is complete.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub is_input_complete: Opt<Value>,
    /// A provider signature.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub thought_signature: Opt<Value>,
    /// Fields this shape does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The result of a tool use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The call answered.
    #[serde(default)]
    pub tool_use_id: String,
    /// The tool's name.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub tool_name: Opt<String>,
    /// Whether the tool failed.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub is_error: Opt<bool>,
    /// `{"Text": …}` or `{"Image": …}`.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub content: Opt<Value>,
    /// Structured output (opaque).
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub output: Opt<Value>,
    /// Fields this shape does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Tool results in their original order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolResults(pub Vec<(String, ToolResult)>);

impl ToolResults {
    /// Returns the result for `id`.
    pub fn get_mut(&mut self, id: &str) -> Option<&mut ToolResult> {
        self.0.iter_mut().find(|(k, _)| k == id).map(|(_, v)| v)
    }
}

/// The `acpx` namespace: runtime and control bookkeeping.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AcpxState {
    /// The agent's current mode.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub current_mode_id: Opt<Value>,
    /// The commands the agent offers.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub available_commands: Opt<Value>,
    /// The agent's configuration options (opaque).
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub config_options: Opt<Value>,
    /// The last audit sequence number given out.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub audit_seq: Opt<u64>,
    /// How many audit summaries the ring dropped.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub audit_dropped_count: Opt<u64>,
    /// The capped ring of recent audit summaries.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub audit_events: Opt<Vec<Value>>,
    /// The outcome of the latest prompt turn.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub last_turn: Opt<Value>,
    /// The latest control change.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub last_control_update: Opt<Value>,
    /// The state of the event log.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub event_log: Opt<EventLogState>,
    /// Fields this shape does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `acpx.event_log`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EventLogState {
    /// `1`.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub format_version: Opt<Value>,
    /// The active segment's path.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub active_path: Opt<String>,
    /// Segments on disk (active and rotated).
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub segment_count: Opt<u64>,
    /// Rotation size.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub max_segment_bytes: Opt<u64>,
    /// Segments kept.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub max_segments: Opt<u64>,
    /// The last sequence number written to the log.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub last_seq: Opt<u64>,
    /// When the log was last written.
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub last_write_at: Opt<Value>,
    /// Why the last append failed (`null` after a success).
    #[serde(default, skip_serializing_if = "Opt::is_absent")]
    pub last_write_error: Opt<Value>,
    /// Fields this shape does not name.
    #[serde(flatten)]
    pub extra: Extra,
}

fn tagged(tag: &str, v: Value) -> Value {
    let mut m = Map::new();
    m.insert(tag.into(), v);
    Value::Object(m)
}

/// Returns the tag and body of a single-key object.
fn single(v: &Value) -> Option<(&str, &Value)> {
    let o = v.as_object()?;
    if o.len() != 1 {
        return None;
    }
    o.iter().next().map(|(k, v)| (k.as_str(), v))
}

impl Content {
    /// Parses an item; shapes this module does not model become `Other`.
    pub fn from_value(v: Value) -> Content {
        match single(&v) {
            Some(("Text", Value::String(s))) => Content::Text(s.clone()),
            Some(("Thinking", Value::Object(o))) if o.get("text").is_some_and(Value::is_string) => {
                let mut extra = o.clone();
                let text = extra
                    .remove("text")
                    .and_then(|t| t.as_str().map(str::to_string))
                    .unwrap_or_default();
                let signature = match extra.remove("signature") {
                    None => Opt::Absent,
                    Some(Value::String(s)) => Opt::Set(s),
                    Some(Value::Null) => Opt::Null,
                    Some(other) => {
                        extra.insert("signature".into(), other);
                        Opt::Absent
                    }
                };
                Content::Thinking {
                    text,
                    signature,
                    extra,
                }
            }
            Some(("ToolUse", body @ Value::Object(_))) => {
                match serde_json::from_value::<ToolUse>(body.clone()) {
                    Ok(t) => Content::ToolUse(Box::new(t)),
                    Err(_) => Content::Other(v),
                }
            }
            _ => Content::Other(v),
        }
    }

    /// Returns the item as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            Content::Text(s) => tagged("Text", Value::String(s.clone())),
            Content::Thinking {
                text,
                signature,
                extra,
            } => {
                let mut o = Map::new();
                o.insert("text".into(), Value::String(text.clone()));
                match signature {
                    Opt::Absent => {}
                    Opt::Null => {
                        o.insert("signature".into(), Value::Null);
                    }
                    Opt::Set(s) => {
                        o.insert("signature".into(), Value::String(s.clone()));
                    }
                }
                o.extend(extra.clone());
                tagged("Thinking", Value::Object(o))
            }
            Content::ToolUse(t) => {
                tagged("ToolUse", serde_json::to_value(t).unwrap_or(Value::Null))
            }
            Content::Other(v) => v.clone(),
        }
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Content::from_value(Value::deserialize(d)?))
    }
}

impl ThreadMessage {
    /// Parses a message; shapes other than `User`, `Agent` and `"Resume"`
    /// become [`ThreadMessage::Invalid`].
    pub fn from_value(v: Value) -> ThreadMessage {
        if v.as_str() == Some("Resume") {
            return ThreadMessage::Resume;
        }
        match single(&v) {
            Some(("User", body @ Value::Object(_))) => {
                match serde_json::from_value::<UserMessage>(body.clone()) {
                    Ok(u) => ThreadMessage::User(u),
                    Err(_) => ThreadMessage::Invalid(v),
                }
            }
            Some(("Agent", body @ Value::Object(_))) => {
                match serde_json::from_value::<AgentMessage>(body.clone()) {
                    Ok(a) => ThreadMessage::Agent(a),
                    Err(_) => ThreadMessage::Invalid(v),
                }
            }
            _ => ThreadMessage::Invalid(v),
        }
    }

    /// Returns the message as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            ThreadMessage::User(u) => {
                tagged("User", serde_json::to_value(u).unwrap_or(Value::Null))
            }
            ThreadMessage::Agent(a) => {
                tagged("Agent", serde_json::to_value(a).unwrap_or(Value::Null))
            }
            ThreadMessage::Resume => Value::String("Resume".into()),
            ThreadMessage::Invalid(v) => v.clone(),
        }
    }
}

impl Serialize for ThreadMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for ThreadMessage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(ThreadMessage::from_value(Value::deserialize(d)?))
    }
}

impl Serialize for ToolResults {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = Map::new();
        for (k, v) in &self.0 {
            m.insert(k.clone(), serde_json::to_value(v).unwrap_or(Value::Null));
        }
        m.serialize(s)
    }
}

impl<'de> Deserialize<'de> for ToolResults {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let m = Map::<String, Value>::deserialize(d)?;
        let mut out = Vec::with_capacity(m.len());
        for (k, v) in m {
            let r = serde_json::from_value::<ToolResult>(v).map_err(serde::de::Error::custom)?;
            out.push((k, r));
        }
        Ok(ToolResults(out))
    }
}

/// Which of the shapes a record file had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The seed document's shape: camelCase, nested `thread`.
    Seed,
    /// acpx's on-disk shape: flat snake_case (`acpx_record_id`, top-level
    /// `messages`).
    Disk,
    /// The in-memory shape acpx hands around (camelCase top level, thread
    /// fields flat), as in its replay bundles.
    Flat,
}

impl Layout {
    /// Returns the layout's name (`seed`, `disk`, `flat`).
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Seed => "seed",
            Layout::Disk => "disk",
            Layout::Flat => "flat",
        }
    }

    /// Parses a name from [`Layout::as_str`].
    pub fn parse(s: &str) -> Option<Layout> {
        Some(match s {
            "seed" => Layout::Seed,
            "disk" => Layout::Disk,
            "flat" => Layout::Flat,
            _ => return None,
        })
    }
}

/// Top-level keys of the on-disk shape and their seed names.
const DISK_KEYS: [(&str, &str); 24] = [
    ("acpx_record_id", "acpxRecordId"),
    ("acp_session_id", "acpSessionId"),
    ("agent_session_id", "agentSessionId"),
    ("agent_command", "agentCommand"),
    ("agent_argv", "agentArgv"),
    ("created_at", "createdAt"),
    ("last_used_at", "lastUsedAt"),
    ("last_seq", "lastSeq"),
    ("last_request_id", "lastRequestId"),
    ("event_log", "eventLog"),
    ("closed_at", "closedAt"),
    ("agent_started_at", "agentStartedAt"),
    ("last_prompt_at", "lastPromptAt"),
    ("last_agent_exit_code", "lastAgentExitCode"),
    ("last_agent_exit_signal", "lastAgentExitSignal"),
    ("last_agent_exit_at", "lastAgentExitAt"),
    ("last_agent_disconnect_reason", "lastAgentDisconnectReason"),
    ("protocol_version", "protocolVersion"),
    ("agent_capabilities", "agentCapabilities"),
    ("imported_from", "importedFrom"),
    ("schema", "schema"),
    ("cwd", "cwd"),
    ("name", "name"),
    ("closed", "closed"),
];

/// Returns the layout of a record document.
pub fn detect_layout(doc: &Map<String, Value>) -> Layout {
    if doc.contains_key("thread") {
        Layout::Seed
    } else if doc.contains_key("acpx_record_id") || doc.contains_key("acp_session_id") {
        Layout::Disk
    } else if doc.contains_key("messages") {
        Layout::Flat
    } else {
        Layout::Seed
    }
}

/// Rewrites a record document of any layout into the seed's shape.
pub fn normalize(mut doc: Map<String, Value>, layout: Layout) -> Map<String, Value> {
    if layout == Layout::Seed {
        return doc;
    }
    let mut thread = Map::new();
    for key in THREAD_KEYS {
        if let Some(v) = doc.remove(key) {
            thread.insert(key.into(), v);
        }
    }
    let mut out = Map::new();
    for (k, v) in doc {
        let name = match layout {
            Layout::Disk => DISK_KEYS
                .iter()
                .find(|(d, _)| *d == k)
                .map(|(_, s)| s.to_string())
                .unwrap_or(k),
            _ => k,
        };
        out.insert(name, v);
    }
    out.insert("thread".into(), Value::Object(thread));
    out
}

/// Rewrites a seed-shaped document into `layout`, with the top-level keys
/// in the order of `order` (keys not in it follow in their own order).
pub fn denormalize(
    mut doc: Map<String, Value>,
    layout: Layout,
    order: &[String],
) -> Map<String, Value> {
    if layout != Layout::Seed {
        let thread = match doc.remove("thread") {
            Some(Value::Object(t)) => t,
            _ => Map::new(),
        };
        let mut flat = Map::new();
        for (k, v) in doc {
            let name = match layout {
                Layout::Disk => DISK_KEYS
                    .iter()
                    .find(|(_, s)| *s == k)
                    .map(|(d, _)| d.to_string())
                    .unwrap_or(k),
                _ => k,
            };
            flat.insert(name, v);
        }
        flat.extend(thread);
        doc = flat;
    }
    if order.is_empty() {
        return doc;
    }
    let mut out = Map::new();
    for k in order {
        if let Some(v) = doc.remove(k) {
            out.insert(k.clone(), v);
        }
    }
    out.extend(doc);
    out
}

/// A record read from a file, with the layout it had.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedRecord {
    /// The record in the seed's shape.
    pub record: SessionRecord,
    /// The layout of the file.
    pub layout: Layout,
    /// The top-level keys in file order.
    pub key_order: Vec<String>,
}

/// Parses a record document of any layout.
pub fn parse_record(doc: Value) -> Result<ParsedRecord, String> {
    let Value::Object(map) = doc else {
        return Err("a session record must be a JSON object".into());
    };
    let layout = detect_layout(&map);
    let key_order = map.keys().cloned().collect();
    let normalized = normalize(map, layout);
    let record = serde_json::from_value(Value::Object(normalized)).map_err(|e| e.to_string())?;
    Ok(ParsedRecord {
        record,
        layout,
        key_order,
    })
}

/// Returns the JSON of a record in `layout`, keys in `order`.
pub fn record_to_value(record: &SessionRecord, layout: Layout, order: &[String]) -> Value {
    match serde_json::to_value(record) {
        Ok(Value::Object(m)) => Value::Object(denormalize(m, layout, order)),
        Ok(other) => other,
        Err(_) => Value::Null,
    }
}

/// Returns the record file's text: two-space indented JSON and a newline,
/// as acpx writes it.
pub fn record_to_string(record: &SessionRecord, layout: Layout, order: &[String]) -> String {
    let mut s = serde_json::to_string_pretty(&record_to_value(record, layout, order))
        .unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

impl SessionRecord {
    /// Returns a new record in the seed's shape with an empty thread and
    /// `acpx` namespace.
    pub fn new(acpx_record_id: impl Into<String>) -> SessionRecord {
        SessionRecord {
            schema: SCHEMA.into(),
            acpx_record_id: acpx_record_id.into(),
            thread: Opt::Set(Thread {
                version: Opt::Set(Value::String("0.3.0".into())),
                title: Opt::Null,
                messages: Opt::Set(Vec::new()),
                ..Thread::default()
            }),
            acpx: Opt::Set(AcpxState::default()),
            ..SessionRecord::default()
        }
    }

    /// Returns the thread messages (empty when there is no thread).
    pub fn messages(&self) -> &[ThreadMessage] {
        self.thread
            .get()
            .and_then(|t| t.messages.get())
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Returns the thread, creating an empty one when absent.
    pub fn thread_mut(&mut self) -> &mut Thread {
        self.thread.get_or_insert_with(Thread::default)
    }

    /// Returns the `acpx` namespace, creating it when absent.
    pub fn acpx_mut(&mut self) -> &mut AcpxState {
        self.acpx.get_or_insert_with(AcpxState::default)
    }
}

impl Thread {
    /// Returns the messages, creating the list when absent.
    pub fn messages_mut(&mut self) -> &mut Vec<ThreadMessage> {
        self.messages.get_or_insert_with(Vec::new)
    }
}

impl AcpxState {
    /// Returns `event_log`, creating it when absent.
    pub fn event_log_mut(&mut self) -> &mut EventLogState {
        self.event_log.get_or_insert_with(EventLogState::default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn opt_keeps_absent_null_and_set_apart() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct T {
            #[serde(default, skip_serializing_if = "Opt::is_absent")]
            a: Opt<u64>,
        }
        for text in ["{}", "{\"a\":null}", "{\"a\":3}"] {
            let t: T = serde_json::from_str(text).unwrap_or(T { a: Opt::Absent });
            assert_eq!(serde_json::to_string(&t).ok().as_deref(), Some(text));
        }
    }

    #[test]
    fn layouts_normalize_and_come_back() {
        let disk = json!({
            "schema": "acpx.session.v1",
            "acpx_record_id": "r1",
            "last_seq": 3,
            "title": null,
            "messages": ["Resume", {"kind": "user"}],
            "updated_at": "t",
            "acpx": {}
        });
        let parsed = parse_record(disk.clone()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.layout, Layout::Disk);
        assert_eq!(parsed.record.acpx_record_id, "r1");
        assert_eq!(parsed.record.messages().len(), 2);
        assert!(matches!(
            parsed.record.messages()[1],
            ThreadMessage::Invalid(_)
        ));
        let back = record_to_value(&parsed.record, parsed.layout, &parsed.key_order);
        assert_eq!(back, disk);
        let keys: Vec<&String> = back
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys[1], "acpx_record_id");
    }
}
