//! The SessionData 1.0 types, field for field as the JSON is written.
//!
//! Every struct keeps the fields it does not know in `extra`, and optional
//! fields remember whether they were present, so reading a file and writing
//! it back gives the same JSON values.

use agentlog_model::Extra;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The only schema version SessionData 1.0 accepts.
pub const SCHEMA_VERSION: &str = "1.0";

/// The tool types the schema allows, in the seed's order.
pub const TOOL_TYPES: [&str; 7] = [
    "write", "read", "search", "shell", "task", "generic", "unknown",
];

/// A whole session: provider, ids, times and the exchanges.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionData {
    /// Must be `"1.0"`.
    #[serde(rename = "schemaVersion", default)]
    pub schema_version: String,
    /// Which agent produced the session.
    #[serde(default)]
    pub provider: ProviderInfo,
    /// The session's id (often a UUID).
    #[serde(rename = "sessionId", default)]
    pub session_id: String,
    /// ISO 8601 time the session started.
    #[serde(rename = "createdAt", default)]
    pub created_at: String,
    /// ISO 8601 time of the last update.
    #[serde(rename = "updatedAt", default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// A human-readable, file-name-safe name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    /// An agent-generated title. The SpecStory CLI writes it (an addition
    /// after the seed document); the seed's schema does not allow it at the
    /// root, so `validate` reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Absolute path of the project directory.
    #[serde(rename = "workspaceRoot", default)]
    pub workspace_root: String,
    /// The conversational turns.
    #[serde(default)]
    pub exchanges: Vec<Exchange>,
    /// Root fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Identifies the agent that produced a session.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderInfo {
    /// `claude`, `cursor`, `codex` or `gemini` in the seed.
    #[serde(default)]
    pub id: String,
    /// The display name (`Claude Code`, …).
    #[serde(default)]
    pub name: String,
    /// The agent's version.
    #[serde(default)]
    pub version: String,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One conversational turn, usually a user message and the agent's answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// Unique within the session.
    #[serde(rename = "exchangeId", default)]
    pub exchange_id: String,
    /// When the exchange began.
    #[serde(rename = "startTime", default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// When the exchange completed.
    #[serde(rename = "endTime", default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<String>,
    /// The messages, in order.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Extra>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A user or agent message.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// A stable message id, when the provider has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// ISO 8601 time of the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// `user` or `agent`.
    #[serde(default)]
    pub role: String,
    /// The model that answered (agent messages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Text and thinking parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentPart>>,
    /// The tool the agent used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolInfo>,
    /// Files the message refers to.
    #[serde(rename = "pathHints", default, skip_serializing_if = "Option::is_none")]
    pub path_hints: Option<Vec<String>>,
    /// Token usage (an addition of the SpecStory CLI after the seed: camelCase
    /// counters such as `inputTokens`, kept as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Extra>,
    /// Provider-specific metadata (`isSidechain`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Extra>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A piece of message content.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContentPart {
    /// `text` or `thinking`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The text.
    #[serde(default)]
    pub text: String,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A tool use by the agent, with its result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// The tool's name as the agent called it.
    #[serde(default)]
    pub name: String,
    /// One of [`TOOL_TYPES`].
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The tool-use id.
    #[serde(rename = "useId", default, skip_serializing_if = "Option::is_none")]
    pub use_id: Option<String>,
    /// The parameters (an object in the seed; any value upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// The result (an object in the seed; any value upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// A one-line summary, shown in the `<summary>` tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Markdown the provider rendered for this tool use.
    #[serde(
        rename = "formattedMarkdown",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub formatted_markdown: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl SessionData {
    /// Returns an empty SessionData 1.0 with the given provider and id.
    pub fn new(provider: ProviderInfo, session_id: impl Into<String>) -> SessionData {
        SessionData {
            schema_version: SCHEMA_VERSION.to_string(),
            provider,
            session_id: session_id.into(),
            ..SessionData::default()
        }
    }

    /// Returns every message of every exchange, in order.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.exchanges.iter().flat_map(|e| e.messages.iter())
    }
}

impl ProviderInfo {
    /// Returns the provider with a display name derived from `id` for the
    /// four documented providers (the id itself otherwise).
    pub fn from_id(id: &str, version: impl Into<String>) -> ProviderInfo {
        ProviderInfo {
            id: id.to_string(),
            name: provider_name(id).unwrap_or(id).to_string(),
            version: version.into(),
            extra: Extra::new(),
        }
    }
}

/// Returns the display name of a documented provider id.
pub fn provider_name(id: &str) -> Option<&'static str> {
    Some(match id {
        "claude" => "Claude Code",
        "cursor" => "Cursor CLI",
        "codex" => "Codex CLI",
        "gemini" => "Gemini CLI",
        _ => return None,
    })
}

/// Returns the provider id of a documented display name.
pub fn provider_id(name: &str) -> Option<&'static str> {
    Some(match name {
        "Claude Code" => "claude",
        "Cursor CLI" => "cursor",
        "Codex CLI" => "codex",
        "Gemini CLI" => "gemini",
        _ => return None,
    })
}

impl Message {
    /// Returns a user message with one text part.
    pub fn user(text: impl Into<String>) -> Message {
        Message {
            role: "user".into(),
            content: Some(vec![ContentPart::text(text)]),
            ..Message::default()
        }
    }

    /// Returns an agent message with no content.
    pub fn agent() -> Message {
        Message {
            role: "agent".into(),
            ..Message::default()
        }
    }

    /// Returns the content parts (empty when absent).
    pub fn parts(&self) -> &[ContentPart] {
        self.content.as_deref().unwrap_or(&[])
    }

    /// True when the message's metadata marks it as sidechain traffic.
    pub fn is_sidechain(&self) -> bool {
        self.metadata
            .as_ref()
            .and_then(|m| m.get("isSidechain"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

impl ContentPart {
    /// Returns a text part.
    pub fn text(text: impl Into<String>) -> ContentPart {
        ContentPart {
            kind: "text".into(),
            text: text.into(),
            extra: Extra::new(),
        }
    }

    /// Returns a thinking part.
    pub fn thinking(text: impl Into<String>) -> ContentPart {
        ContentPart {
            kind: "thinking".into(),
            text: text.into(),
            extra: Extra::new(),
        }
    }
}
