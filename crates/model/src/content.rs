use crate::{is_empty_map, is_false, Extra, Timestamp};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;

/// Who speaks in a message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The human (or a harness speaking for them).
    User,
    /// The model.
    Assistant,
    /// A system prompt or system notice.
    System,
    /// Developer instructions (OpenAI's `developer` role).
    Developer,
    /// The result of a tool call, sent back to the model.
    Tool,
    /// Any other role a format defines (pi's `bashExecution`, `custom`, …).
    Custom(String),
}

impl Role {
    /// Returns the role's name.
    pub fn as_str(&self) -> &str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Developer => "developer",
            Role::Tool => "tool",
            Role::Custom(s) => s,
        }
    }

    /// Parses a role name; unknown names become [`Role::Custom`].
    pub fn parse(s: &str) -> Role {
        match s {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "system" => Role::System,
            "developer" => Role::Developer,
            "tool" => Role::Tool,
            other => Role::Custom(other.to_string()),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Role::parse(&String::deserialize(d)?))
    }
}

/// One piece of message content, with the native fields the model has no
/// place for kept in `extra`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// What the block is.
    #[serde(flatten)]
    pub kind: BlockKind,
    /// Native fields of the block not covered by `kind`.
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// The kinds of content a message can carry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockKind {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// Model reasoning. `text` may be empty when only a signature was kept.
    Thinking {
        /// The visible reasoning text (or summary).
        text: String,
        /// Provider signature that lets the reasoning be sent back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// True when the provider redacted or encrypted the reasoning.
        #[serde(default, skip_serializing_if = "is_false")]
        redacted: bool,
    },
    /// A request by the model to run a tool.
    ToolCall {
        /// The call id that links the call to its result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The tool's name.
        name: String,
        /// The arguments, as JSON (a string when the native form was a string).
        #[serde(default)]
        input: Value,
    },
    /// The result of a tool call.
    ToolResult {
        /// The id of the call this answers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
        /// The result content.
        #[serde(default)]
        content: Vec<Block>,
        /// True when the tool reported an error.
        #[serde(default, skip_serializing_if = "is_false")]
        is_error: bool,
    },
    /// An image, inline (base64 `data`) or by `url`.
    Image {
        /// MIME type, e.g. `image/png`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
        /// Base64 data.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// A URL (or data URL) for the image.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    },
    /// A native block kind the model does not know, verbatim.
    Other {
        /// The native block.
        value: Value,
    },
}

impl BlockKind {
    /// Returns the kind's name as messages about it say it.
    pub fn name(&self) -> &'static str {
        match self {
            BlockKind::Text { .. } => "text",
            BlockKind::Thinking { .. } => "thinking",
            BlockKind::ToolCall { .. } => "tool call",
            BlockKind::ToolResult { .. } => "tool result",
            BlockKind::Image { .. } => "image",
            BlockKind::Other { .. } => "unknown",
        }
    }
}

impl Block {
    /// Returns a text block.
    pub fn text(text: impl Into<String>) -> Block {
        Block {
            kind: BlockKind::Text { text: text.into() },
            extra: Extra::new(),
        }
    }

    /// Returns a thinking block.
    pub fn thinking(text: impl Into<String>, signature: Option<String>) -> Block {
        Block {
            kind: BlockKind::Thinking {
                text: text.into(),
                signature,
                redacted: false,
            },
            extra: Extra::new(),
        }
    }

    /// Returns a tool-call block.
    pub fn tool_call(id: Option<String>, name: impl Into<String>, input: Value) -> Block {
        Block {
            kind: BlockKind::ToolCall {
                id,
                name: name.into(),
                input,
            },
            extra: Extra::new(),
        }
    }

    /// Returns a tool-result block.
    pub fn tool_result(tool_call_id: Option<String>, content: Vec<Block>, is_error: bool) -> Block {
        Block {
            kind: BlockKind::ToolResult {
                tool_call_id,
                content,
                is_error,
            },
            extra: Extra::new(),
        }
    }

    /// Returns the block's own text: text, thinking, or the text of a result.
    pub fn plain_text(&self) -> Option<String> {
        match &self.kind {
            BlockKind::Text { text } | BlockKind::Thinking { text, .. } => Some(text.clone()),
            BlockKind::ToolResult { content, .. } => {
                let parts: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
                (!parts.is_empty()).then(|| parts.join("\n"))
            }
            _ => None,
        }
    }
}

/// Token counts of one model response.
///
/// `input` counts prompt tokens that were *not* read from cache; formats that
/// include cached tokens in their input count (Codex) subtract them on read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens not served from cache.
    #[serde(default)]
    pub input: u64,
    /// Generated tokens (including reasoning tokens).
    #[serde(default)]
    pub output: u64,
    /// Prompt tokens read from cache.
    #[serde(default)]
    pub cache_read: u64,
    /// Prompt tokens written to cache.
    #[serde(default)]
    pub cache_write: u64,
    /// Reasoning tokens, already counted in `output`.
    #[serde(default)]
    pub reasoning: u64,
    /// The total the provider reported, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Cost in US dollars, when the format records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Native usage fields not covered above.
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

impl Usage {
    /// Returns input + output + cache tokens (at most `u64::MAX`: counts
    /// come from files, which may hold any number).
    pub fn sum(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    /// Adds another usage into this one (extras are not merged); a count
    /// stops at `u64::MAX`.
    pub fn add(&mut self, other: &Usage) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
        self.total = match (self.total, other.total) {
            (Some(a), Some(b)) => Some(a.saturating_add(b)),
            (a, b) => a.or(b),
        };
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
}

/// A message in the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// The content blocks, in order.
    #[serde(default)]
    pub content: Vec<Block>,
    /// True when the native content was a bare string rather than a block
    /// list (formats that distinguish the two write it back the same way).
    #[serde(default, skip_serializing_if = "is_false")]
    pub content_is_text: bool,
    /// The native message id (e.g. Anthropic's `msg_…`), when distinct from
    /// the entry id. Serialized as `message_id`: a message is flattened into
    /// its entry, whose `id` is the entry id.
    #[serde(
        default,
        rename = "message_id",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<String>,
    /// The model that produced the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Token usage of the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why generation stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// For tool-result messages: the call answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For tool-result messages: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// For tool-result messages: whether the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// A message-level timestamp distinct from the entry's (serialized as
    /// `message_timestamp`).
    #[serde(
        default,
        rename = "message_timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<Timestamp>,
    /// Set when the message is context injected by the harness rather than a
    /// real turn (`environment_context`, `system-reminder`, `command`,
    /// `compact-summary`, …); the value names the kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injected: Option<String>,
    /// True for subagent/sidechain traffic kept in the same file.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sidechain: bool,
    /// Native message fields not covered above (serialized as
    /// `message_extra`, apart from the entry's own `extra`).
    #[serde(
        default,
        rename = "message_extra",
        skip_serializing_if = "is_empty_map"
    )]
    pub extra: Extra,
}

impl Message {
    /// Returns a message with no content.
    pub fn new(role: Role) -> Message {
        Message {
            role,
            content: Vec::new(),
            content_is_text: false,
            id: None,
            model: None,
            provider: None,
            usage: None,
            stop_reason: None,
            tool_call_id: None,
            tool_name: None,
            is_error: None,
            timestamp: None,
            injected: None,
            sidechain: false,
            extra: Extra::new(),
        }
    }

    /// Returns a message with one text block.
    pub fn text(role: Role, text: impl Into<String>) -> Message {
        let mut m = Message::new(role);
        m.content.push(Block::text(text));
        m
    }

    /// Returns the text blocks joined by blank lines (no thinking, no tools).
    pub fn text_content(&self) -> String {
        let parts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|b| match &b.kind {
                BlockKind::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        parts.join("\n\n")
    }

    /// Returns the tool calls of the message.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&Option<String>, &str, &Value)> {
        self.content.iter().filter_map(|b| match &b.kind {
            BlockKind::ToolCall { id, name, input } => Some((id, name.as_str(), input)),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_serialize_with_a_type_tag() {
        let b = Block::tool_call(Some("c1".into()), "bash", serde_json::json!({"cmd": "ls"}));
        let v = serde_json::to_value(&b).unwrap_or_default();
        assert_eq!(
            v,
            serde_json::json!({"type":"tool_call","id":"c1","name":"bash","input":{"cmd":"ls"}})
        );
        let back: Block = serde_json::from_value(v).unwrap_or_else(|_| Block::text(""));
        assert_eq!(back, b);
    }

    #[test]
    fn roles_keep_unknown_names() {
        assert_eq!(Role::parse("bashExecution").as_str(), "bashExecution");
        assert_eq!(Role::parse("user"), Role::User);
    }

    #[test]
    fn usage_adds() {
        let mut a = Usage {
            input: 1,
            output: 2,
            cost_usd: Some(0.5),
            ..Usage::default()
        };
        a.add(&Usage {
            input: 10,
            cache_read: 3,
            cost_usd: Some(0.25),
            ..Usage::default()
        });
        assert_eq!(
            (a.input, a.output, a.cache_read, a.cost_usd),
            (11, 2, 3, Some(0.75))
        );
        assert_eq!(a.sum(), 16);
    }
}
