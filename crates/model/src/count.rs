//! The one rule for what counts as a message, a user prompt and a model
//! response's tokens, for every agent. `ls`, `stats`, the index and the
//! viewers all count through these functions.
//!
//! - A **user prompt** is something the person typed: a user message that is
//!   neither injected by the harness (`<environment_context>`, instructions,
//!   `system-reminder`, …), nor subagent traffic, nor only tool results; the
//!   input that started a run (codelia's `run.start`); a follow-up prompt a
//!   run log records as an agent `user_message` event.
//! - A **reply** is a model turn that says or does something: an assistant
//!   message with text, a tool call or other content, or a recorded LLM
//!   response. An assistant message holding only thinking (Claude writes
//!   thinking as its own line, Codex as a `reasoning` item) is not one.
//! - A **message** is a prompt, a reply, or a system/developer message the
//!   format did not mark as injected, or a subagent's user message. Tool
//!   results, injected context and custom roles are not messages.
//! - **Tokens** are the usage of model responses: the usage of messages and
//!   of recorded LLM responses, each entry once.
//!
//! ```
//! use agentlog_model::{Block, Entry, EntryKind, Message, Role, Session, SessionMeta, Agent, Counted};
//!
//! let mut s = Session::new(SessionMeta::new("s1", Agent::Codex));
//! let mut env = Message::text(Role::User, "<environment_context>…</environment_context>");
//! env.injected = Some("environment_context".into());
//! s.push(Entry::new("e1", None, EntryKind::Message(env)));
//! s.push(Entry::new("e2", Some("e1".into()), EntryKind::Message(Message::text(Role::User, "fix the build"))));
//! let mut reasoning = Message::new(Role::Assistant);
//! reasoning.content.push(Block::thinking("look at the logs", None));
//! s.push(Entry::new("e3", Some("e2".into()), EntryKind::Message(reasoning)));
//! s.push(Entry::new("e4", Some("e3".into()), EntryKind::Message(Message::text(Role::Assistant, "done"))));
//! assert_eq!(s.entries[1].counted(), Counted::Prompt);
//! assert_eq!((s.message_count(), s.prompt_count()), (2, 1));
//! assert_eq!(s.prompts(), ["fix the build"]);
//! ```

use crate::{BlockKind, Entry, EntryKind, Message, Role, Session, Usage};
use serde_json::Value;

/// What one entry counts as in a conversation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Counted {
    /// Not a message (tool results, injected context, thinking only,
    /// events, metadata, …).
    #[default]
    Not,
    /// A user prompt.
    Prompt,
    /// A model reply.
    Reply,
    /// Another message (a system or developer message the harness did not
    /// inject, a subagent's user message).
    Other,
}

impl Counted {
    /// True for prompts, replies and other messages.
    pub fn is_message(self) -> bool {
        self != Counted::Not
    }
}

/// True when every block of the message is a tool result.
pub fn only_tool_results(m: &Message) -> bool {
    !m.content.is_empty()
        && m.content
            .iter()
            .all(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
}

fn has_visible_content(m: &Message) -> bool {
    m.content.iter().any(|b| match &b.kind {
        BlockKind::Text { text } => !text.trim().is_empty(),
        BlockKind::Thinking { .. } | BlockKind::ToolResult { .. } => false,
        BlockKind::ToolCall { .. } | BlockKind::Image { .. } | BlockKind::Other { .. } => true,
    })
}

/// Returns what a message counts as.
pub fn message_counted(m: &Message) -> Counted {
    if m.injected.is_some() {
        return Counted::Not;
    }
    match m.role {
        Role::User if only_tool_results(m) || !has_visible_content(m) => Counted::Not,
        Role::User if m.sidechain => Counted::Other,
        Role::User => Counted::Prompt,
        Role::Assistant if has_visible_content(m) => Counted::Reply,
        Role::System | Role::Developer if has_visible_content(m) => Counted::Other,
        _ => Counted::Not,
    }
}

/// The text of a run's input (`{"type":"text","text":…}`, a bare string, or
/// the string leaves of another shape).
fn input_text(v: &Value) -> String {
    if let Some(t) = v.get("text").and_then(Value::as_str) {
        return t.to_string();
    }
    if let Some(t) = v.get("content").and_then(Value::as_str) {
        return t.to_string();
    }
    let mut out = String::new();
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(s);
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o
                .iter()
                .filter(|(k, _)| k.as_str() != "type")
                .for_each(|(_, x)| walk(x, out)),
            _ => {}
        }
    }
    walk(v, &mut out);
    out
}

/// Key in `Entry::extra` of a message a reader derived from another entry
/// of the same session (codelia's run records: the prompt of `run.start`,
/// the messages of `llm.response`, the result of `tool.output`). The record
/// is counted; the message read out of it is not counted again.
pub const DERIVED_FROM: &str = "codelia_record";

impl Entry {
    /// True when the entry is a view of another entry ([`DERIVED_FROM`]).
    pub fn is_derived(&self) -> bool {
        self.extra.contains_key(DERIVED_FROM)
    }

    /// Returns what the entry counts as (see the module documentation).
    pub fn counted(&self) -> Counted {
        if self.is_derived() {
            return Counted::Not;
        }
        match &self.kind {
            EntryKind::Message(m) => message_counted(m),
            EntryKind::RunStart { .. } | EntryKind::Event { .. } => {
                if self.prompt_text().is_some() {
                    Counted::Prompt
                } else {
                    Counted::Not
                }
            }
            EntryKind::LlmResponse { .. } => Counted::Reply,
            _ => Counted::Not,
        }
    }

    /// Returns the text of the entry when it is a user prompt.
    pub fn prompt_text(&self) -> Option<String> {
        if self.is_derived() {
            return None;
        }
        let t = match &self.kind {
            EntryKind::Message(m) if message_counted(m) == Counted::Prompt => m.text_content(),
            EntryKind::RunStart { input, .. } => input_text(input),
            // A run log's agent event (codelia); other formats' user
            // message events (Codex's `event_msg`) mirror a message.
            EntryKind::Event {
                source,
                event_type,
                payload,
                ..
            } if source == "agent" && event_type == "user_message" => input_text(payload),
            _ => return None,
        };
        (!t.trim().is_empty()).then_some(t)
    }

    /// Returns the token usage of the model response this entry records: a
    /// message's usage or a recorded LLM response's.
    pub fn response_usage(&self) -> Option<&Usage> {
        if self.is_derived() {
            return None;
        }
        match &self.kind {
            EntryKind::Message(m) => m.usage.as_ref(),
            EntryKind::LlmResponse { usage, .. } => usage.as_ref(),
            _ => None,
        }
    }
}

impl Session {
    /// Returns the number of messages (prompts, replies and other
    /// messages; see [`Counted`]).
    pub fn message_count(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.counted().is_message())
            .count()
    }

    /// Returns the number of user prompts.
    pub fn prompt_count(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.counted() == Counted::Prompt)
            .count()
    }

    /// Returns the text of every user prompt, in file order.
    pub fn prompts(&self) -> Vec<String> {
        self.entries.iter().filter_map(Entry::prompt_text).collect()
    }

    /// Returns the text of the first user prompt.
    pub fn first_prompt(&self) -> Option<String> {
        self.entries.iter().find_map(Entry::prompt_text)
    }

    /// Returns the sum of the usage of every model response, each entry
    /// counted once.
    pub fn total_usage(&self) -> Usage {
        let mut total = Usage::default();
        for u in self.entries.iter().filter_map(Entry::response_usage) {
            total.add(u);
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Agent, Block, SessionMeta};
    use serde_json::json;

    #[test]
    fn token_counts_from_a_file_add_up_without_overflowing() {
        let huge = Usage {
            input: u64::MAX,
            output: u64::MAX - 1,
            total: Some(u64::MAX),
            ..Usage::default()
        };
        let mut s = Session::new(SessionMeta::new("s", Agent::Claude));
        for id in ["a", "b"] {
            let mut m = Message::new(Role::Assistant);
            m.usage = Some(huge.clone());
            s.push(Entry::new(id, None, EntryKind::Message(m)));
        }
        let t = s.total_usage();
        assert_eq!(
            (t.input, t.output, t.total),
            (u64::MAX, u64::MAX, Some(u64::MAX))
        );
        assert_eq!(t.sum(), u64::MAX);
    }

    fn msg(role: Role, blocks: Vec<Block>) -> Message {
        let mut m = Message::new(role);
        m.content = blocks;
        m
    }

    #[test]
    fn claude_thinking_lines_and_tool_results_are_not_messages() {
        let thinking = msg(Role::Assistant, vec![Block::thinking("hmm", None)]);
        assert_eq!(message_counted(&thinking), Counted::Not);
        let call = msg(
            Role::Assistant,
            vec![Block::tool_call(None, "Read", json!({}))],
        );
        assert_eq!(message_counted(&call), Counted::Reply);
        let result = msg(
            Role::User,
            vec![Block::tool_result(None, vec![Block::text("ok")], false)],
        );
        assert_eq!(message_counted(&result), Counted::Not);
        let mut reminder = Message::text(Role::User, "<system-reminder>x</system-reminder>");
        reminder.injected = Some("system-reminder".into());
        assert_eq!(message_counted(&reminder), Counted::Not);
        let mut side = Message::text(Role::User, "subtask");
        side.sidechain = true;
        assert_eq!(message_counted(&side), Counted::Other);
        assert_eq!(
            message_counted(&Message::text(Role::User, "  \n")),
            Counted::Not
        );
    }

    #[test]
    fn codex_developer_and_injected_messages_are_not_messages() {
        let mut dev = Message::text(Role::Developer, "<permissions instructions>");
        dev.injected = Some("developer".into());
        assert_eq!(message_counted(&dev), Counted::Not);
        let sys = Message::text(Role::System, "You are helpful.");
        assert_eq!(message_counted(&sys), Counted::Other);
    }

    #[test]
    fn run_logs_count_every_prompt_and_response() {
        let mut s = Session::new(SessionMeta::new("r", Agent::Codelia));
        s.push(Entry::new(
            "l1",
            None,
            EntryKind::RunStart {
                run_id: "r".into(),
                input: json!({"type": "text", "text": "list files"}),
            },
        ));
        s.push(Entry::new(
            "l2",
            Some("l1".into()),
            EntryKind::LlmResponse {
                seq: 1,
                output: json!({}),
                usage: Some(Usage {
                    input: 3,
                    output: 4,
                    ..Usage::default()
                }),
            },
        ));
        s.push(Entry::new(
            "l3",
            Some("l2".into()),
            EntryKind::Event {
                source: "agent".into(),
                event_type: "user_message".into(),
                seq: Some(1),
                payload: json!({"type": "user_message", "content": "now sort them"}),
            },
        ));
        s.push(Entry::new(
            "l4",
            Some("l3".into()),
            EntryKind::Event {
                source: "agent".into(),
                event_type: "final".into(),
                seq: Some(2),
                payload: json!({"type": "final", "content": "done"}),
            },
        ));
        assert_eq!(s.prompts(), ["list files", "now sort them"]);
        assert_eq!((s.message_count(), s.prompt_count()), (3, 2));
        assert_eq!(s.total_usage().sum(), 7);
        assert_eq!(s.first_prompt().as_deref(), Some("list files"));
    }
}
