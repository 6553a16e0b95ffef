use crate::{is_empty_map, Block, Extra, Message, Timestamp, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One node of a session tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Unique within the session.
    pub id: String,
    /// The parent entry; `None` for a root.
    #[serde(default)]
    pub parent_id: Option<String>,
    /// When the entry was recorded, as the format wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    /// What the entry is.
    #[serde(flatten)]
    pub kind: EntryKind,
    /// Native record fields not covered by `kind`.
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
    /// The 1-based line (or record number) the entry was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

impl Entry {
    /// Returns an entry with no timestamp, extras or source line.
    pub fn new(id: impl Into<String>, parent_id: Option<String>, kind: EntryKind) -> Entry {
        Entry {
            id: id.into(),
            parent_id,
            timestamp: None,
            kind,
            extra: Extra::new(),
            line: None,
        }
    }

    /// Returns the entry with `timestamp` set.
    pub fn at(mut self, timestamp: Timestamp) -> Entry {
        self.timestamp = Some(timestamp);
        self
    }

    /// Returns the message, when the entry is one.
    pub fn message(&self) -> Option<&Message> {
        match &self.kind {
            EntryKind::Message(m) => Some(m),
            _ => None,
        }
    }

    /// Returns the short snake_case name of the entry kind.
    pub fn kind_name(&self) -> &'static str {
        self.kind.name()
    }

    /// Returns each (tool call id, tool name) of the tool calls of this
    /// entry's message that have an id.
    pub fn tool_call_names(&self) -> Vec<(&str, &str)> {
        let Some(m) = self.message() else {
            return Vec::new();
        };
        m.content
            .iter()
            .filter_map(|b| match &b.kind {
                crate::BlockKind::ToolCall {
                    id: Some(id), name, ..
                } => Some((id.as_str(), name.as_str())),
                _ => None,
            })
            .collect()
    }

    /// Returns each (tool call id, subagent id) of the subagents this entry
    /// says its tool calls started: the tool results of a message whose
    /// [`TOOL_USE_RESULT`] names an `agentId` (Claude Code's `Task` and
    /// `Agent` results).
    pub fn subagent_calls(&self) -> Vec<(&str, &str)> {
        let agent = self
            .extra
            .get(TOOL_USE_RESULT)
            .and_then(|t| t.get("agentId"))
            .and_then(Value::as_str);
        let (Some(agent), Some(m)) = (agent, self.message()) else {
            return Vec::new();
        };
        m.content
            .iter()
            .filter_map(|b| match &b.kind {
                crate::BlockKind::ToolResult {
                    tool_call_id: Some(call),
                    ..
                } => Some((call.as_str(), agent)),
                _ => None,
            })
            .collect()
    }
}

/// The extra field in which Claude Code keeps what a tool returned beside
/// the result the model saw (the subagent a `Task` call started, under
/// `agentId`, among it).
pub const TOOL_USE_RESULT: &str = "toolUseResult";

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// The run finished normally.
    Completed,
    /// The run was cancelled.
    Cancelled,
    /// The run failed.
    Error,
    /// A value the model does not know, kept verbatim.
    #[serde(untagged)]
    Other(String),
}

/// Everything an entry can be, across the seed designs and native formats.
// Messages are the bulk of every session, so boxing them would add an
// allocation to nearly every entry to shrink the rare other kinds.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EntryKind {
    /// A conversation message.
    Message(Message),
    /// The user switched models.
    ModelChange {
        /// Provider, when recorded apart from the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
        /// The model id (or `provider/model`).
        model: String,
        /// The model's role (oh-my-pi's role map, e.g. `default`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
    },
    /// The thinking / reasoning level changed.
    ThinkingLevelChange {
        /// The new level (`off`, `low`, `high`, …).
        level: String,
    },
    /// Earlier context was compacted into a summary.
    Compaction {
        /// The summary sent to the model.
        summary: String,
        /// A short form for UIs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        short_summary: Option<String>,
        /// The first entry kept verbatim after the summary.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_kept_entry_id: Option<String>,
        /// Context size before compaction.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens_before: Option<u64>,
        /// Implementation data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Whether an extension produced it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_extension: Option<bool>,
        /// Extension data kept across compaction.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        preserve_data: Option<Value>,
    },
    /// A summary of a branch that was left.
    BranchSummary {
        /// The branch point (`root` when branching from the root).
        from_id: String,
        /// The summary.
        summary: String,
        /// Extension data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// Whether an extension produced it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_extension: Option<bool>,
    },
    /// A user bookmark on another entry; `label: None` clears it.
    Label {
        /// The entry labelled.
        target_id: String,
        /// The label, or `None` to clear.
        #[serde(default)]
        label: Option<String>,
    },
    /// Extension state; not part of the model's context.
    Custom {
        /// The extension's type name.
        custom_type: String,
        /// The state.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// An extension-injected message that is part of the model's context.
    CustomMessage {
        /// The extension's type name.
        custom_type: String,
        /// The content.
        content: Vec<Block>,
        /// True when the native content was a bare string.
        #[serde(default, skip_serializing_if = "crate::is_false")]
        content_is_text: bool,
        /// Whether UIs show it.
        #[serde(default)]
        display: bool,
        /// Extension data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// Session metadata set mid-session (name/title).
    SessionInfo {
        /// The session's display name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// Rules injected by the harness (oh-my-pi's TTSR).
    TtsrInjection {
        /// The rule names.
        rules: Vec<String>,
    },
    /// The initial context of a subagent session.
    SessionInit {
        /// The system prompt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        system_prompt: Option<String>,
        /// The task given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
        /// Tool names available.
        #[serde(default)]
        tools: Vec<String>,
        /// Expected output schema.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_schema: Option<Value>,
    },
    /// A run started (codelia `run.start`).
    RunStart {
        /// The run's id.
        run_id: String,
        /// The user input that started it.
        #[serde(default)]
        input: Value,
    },
    /// A run changed status.
    RunStatus {
        /// The run's id.
        run_id: String,
        /// The status (`running`, `completed`, …; unknown values kept).
        status: String,
        /// A human message.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The context window left, reported during a run.
    RunContext {
        /// The run's id.
        run_id: String,
        /// Percent of context left.
        context_left_percent: f64,
    },
    /// A run failed.
    RunError {
        /// The run's id.
        run_id: String,
        /// Error name.
        name: String,
        /// Error message.
        message: String,
        /// Stack trace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stack: Option<String>,
    },
    /// A run ended.
    RunEnd {
        /// The run's id.
        run_id: String,
        /// How it ended.
        outcome: RunOutcome,
        /// The final answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        final_text: Option<String>,
    },
    /// A snapshot of what was sent to the model for one invocation.
    LlmRequest {
        /// The invocation number.
        seq: u64,
        /// The model asked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<Value>,
        /// The request (messages, tools, tool choice), verbatim.
        input: Value,
    },
    /// What the model answered for one invocation.
    LlmResponse {
        /// The invocation number; matches the request.
        seq: u64,
        /// The response, verbatim.
        output: Value,
        /// Token usage of the response.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
    /// The full output of a tool call.
    ToolOutput {
        /// The tool's name.
        tool: String,
        /// The call id.
        tool_call_id: String,
        /// The raw output.
        output: String,
        /// Whether the tool failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
    /// A UI, agent or audit event.
    Event {
        /// Where it came from (`agent`, `acp`, `runtime`, …).
        source: String,
        /// The event type.
        event_type: String,
        /// The event's sequence number in its stream.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
        /// The event body, verbatim.
        #[serde(default)]
        payload: Value,
    },
    /// The session was resumed here.
    Resume,
    /// A record the model does not know, verbatim.
    Unknown {
        /// The record's type discriminator, when it had one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        record_type: Option<String>,
        /// The whole record.
        raw: Value,
    },
}

impl EntryKind {
    /// Returns the short snake_case name of the kind.
    pub fn name(&self) -> &'static str {
        match self {
            EntryKind::Message(_) => "message",
            EntryKind::ModelChange { .. } => "model_change",
            EntryKind::ThinkingLevelChange { .. } => "thinking_level_change",
            EntryKind::Compaction { .. } => "compaction",
            EntryKind::BranchSummary { .. } => "branch_summary",
            EntryKind::Label { .. } => "label",
            EntryKind::Custom { .. } => "custom",
            EntryKind::CustomMessage { .. } => "custom_message",
            EntryKind::SessionInfo { .. } => "session_info",
            EntryKind::TtsrInjection { .. } => "ttsr_injection",
            EntryKind::SessionInit { .. } => "session_init",
            EntryKind::RunStart { .. } => "run_start",
            EntryKind::RunStatus { .. } => "run_status",
            EntryKind::RunContext { .. } => "run_context",
            EntryKind::RunError { .. } => "run_error",
            EntryKind::RunEnd { .. } => "run_end",
            EntryKind::LlmRequest { .. } => "llm_request",
            EntryKind::LlmResponse { .. } => "llm_response",
            EntryKind::ToolOutput { .. } => "tool_output",
            EntryKind::Event { .. } => "event",
            EntryKind::Resume => "resume",
            EntryKind::Unknown { .. } => "unknown",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Role;

    #[test]
    fn entries_serialize_flat_with_a_kind_tag() {
        let e = Entry::new(
            "e1",
            None,
            EntryKind::ThinkingLevelChange {
                level: "high".into(),
            },
        );
        let v = serde_json::to_value(&e).unwrap_or_default();
        assert_eq!(
            v,
            serde_json::json!({"id":"e1","parent_id":null,"kind":"thinking_level_change","level":"high"})
        );
        let back: Entry =
            serde_json::from_value(v).unwrap_or_else(|_| Entry::new("", None, EntryKind::Resume));
        assert_eq!(back, e);
    }

    #[test]
    fn message_entries_round_trip_through_json() {
        let e = Entry::new(
            "m",
            Some("p".into()),
            EntryKind::Message(Message::text(Role::User, "hi")),
        );
        let s = serde_json::to_string(&e).unwrap_or_default();
        let back: Entry =
            serde_json::from_str(&s).unwrap_or_else(|_| Entry::new("", None, EntryKind::Resume));
        assert_eq!(back, e);
        assert_eq!(back.kind_name(), "message");
    }

    #[test]
    fn message_fields_do_not_collide_with_entry_fields() {
        let mut m = Message::text(Role::Assistant, "x");
        m.id = Some("msg_1".into());
        m.timestamp = Some(crate::Timestamp::Millis(5));
        m.extra.insert("api".into(), serde_json::json!("a"));
        let mut e = Entry::new("e", None, EntryKind::Message(m)).at(crate::Timestamp::Millis(7));
        e.extra.insert("cwd".into(), serde_json::json!("/x"));
        let s = serde_json::to_string(&e).unwrap_or_default();
        let back: Entry = serde_json::from_str(&s).unwrap_or_else(|err| panic!("{err}: {s}"));
        assert_eq!(back, e);
    }

    #[test]
    fn unknown_outcomes_are_kept() {
        let o: RunOutcome = serde_json::from_str("\"timeout\"").unwrap_or(RunOutcome::Completed);
        assert_eq!(o, RunOutcome::Other("timeout".into()));
    }
}
