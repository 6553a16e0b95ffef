//! Sessions as training data: one example per session in the OpenAI
//! fine-tuning chat format (`openai-chat`) or as ShareGPT conversations
//! (`sharegpt`), each a line of JSON Lines, with what the target could not
//! hold (thinking, images, other branches, usage, times, …).
//!
//! Both are built from one [`Conversation`]: the messages of the session's
//! active branch (the retried and abandoned branches are left out), with
//! a compaction's summary left out when the turns it summarized are there
//! (the summary is kept only when they are not, as the context the turns
//! after it rest on).
//!
//! ```
//! use agentlog_api::training::{example, Target};
//! let s = agentlog_api::example::session(0);
//! let (line, fidelity) = example(&s, Target::OpenAiChat);
//! let v: serde_json::Value = serde_json::from_str(&line)?;
//! assert_eq!(v["messages"][0]["role"], "user");
//! assert!(fidelity.target == "openai-chat");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use agentlog_formats::Fidelity;
use agentlog_model::{Block, BlockKind, Counted, Entry, EntryKind, Message, Role, Session};
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// A training-data target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The OpenAI fine-tuning chat format: `messages` with system, user,
    /// assistant (`tool_calls`) and tool (`tool_call_id`) roles, and the
    /// `tools` called.
    OpenAiChat,
    /// ShareGPT conversations as LLaMA-Factory and the Hugging Face tool-use
    /// datasets hold them: `conversations` of `from` (`human`, `gpt`,
    /// `function_call`, `observation`) and `value`, with `system` and
    /// `tools` beside them.
    ShareGpt,
}

/// The training-data targets' names.
pub const TARGETS: &[&str] = &["openai-chat", "sharegpt"];

impl Target {
    /// The target named `name` (`openai-chat`, `sharegpt`).
    pub fn named(name: &str) -> Option<Target> {
        match name {
            "openai-chat" | "openai" => Some(Target::OpenAiChat),
            "sharegpt" => Some(Target::ShareGpt),
            _ => None,
        }
    }

    /// The target's name.
    pub fn name(self) -> &'static str {
        match self {
            Target::OpenAiChat => "openai-chat",
            Target::ShareGpt => "sharegpt",
        }
    }
}

/// Who speaks in a [`Turn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Speaker {
    /// Instructions of the agent or the person.
    System,
    /// The person, or context the agent put before the model as theirs.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// A tool call of the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The call's id (one is made, `call_<n>`, when the agent kept none).
    pub id: String,
    /// The tool.
    pub name: String,
    /// The arguments as the model gave them.
    pub arguments: Value,
}

/// One message of a [`Conversation`].
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    /// Who speaks.
    pub speaker: Speaker,
    /// What was said (for a tool, its result as text).
    pub text: String,
    /// The model's tool calls.
    pub calls: Vec<Call>,
    /// For a tool's result: the call it answers.
    pub call_id: Option<String>,
}

impl Turn {
    fn new(speaker: Speaker, text: String) -> Turn {
        Turn {
            speaker,
            text,
            calls: Vec::new(),
            call_id: None,
        }
    }
}

/// What a session becomes as training data.
#[derive(Clone, Debug, Default)]
pub struct Conversation {
    /// The messages, in order.
    pub turns: Vec<Turn>,
    /// The user prompts among them (what a person typed).
    pub prompts: usize,
    /// True when the model called a tool.
    pub uses_tools: bool,
    /// The tools called, in the order first called.
    pub tools: Vec<String>,
    /// The tokens the agent recorded for the responses kept (input,
    /// output and cache, as `agentlog stats` counts them).
    pub tokens: u64,
}

/// Where a subagent's transcript goes.
pub trait Subagents {
    /// The turns of the subagent started by the tool call `call_id` of
    /// `entry`, when it is to be inlined into the tool's result.
    fn inline(&mut self, entry: &Entry, call_id: &str) -> Option<Conversation>;
}

/// No subagent is inlined.
pub struct NoSubagents;

impl Subagents for NoSubagents {
    fn inline(&mut self, _: &Entry, _: &str) -> Option<Conversation> {
        None
    }
}

/// Builds the conversation of `session`'s active branch, recording in
/// `fidelity` what it leaves out; `subagents` gives the transcripts to
/// inline into the results of the calls that started them.
pub fn conversation(
    session: &Session,
    fidelity: &mut Fidelity,
    subagents: &mut dyn Subagents,
) -> Conversation {
    let branch = session.active_branch();
    let on_branch: HashSet<&str> = branch.iter().map(|e| e.id.as_str()).collect();
    for e in &session.entries {
        if !on_branch.contains(e.id.as_str()) {
            fidelity.lost(
                "turns on other branches (retried or abandoned; only the active branch is kept)",
                Some(&e.id),
            );
        }
    }
    // A subagent's own file is all sidechain; a session's file that keeps
    // its subagents inline marks only theirs.
    let has_main = branch
        .iter()
        .any(|e| e.message().is_some_and(|m| !m.sidechain));
    let mut c = Conversation::default();
    let mut made_ids = 0usize;
    let mut calls = Calls::default();
    for e in branch {
        if e.counted() == Counted::Prompt {
            c.prompts += 1;
        }
        if let Some(u) = e.response_usage() {
            c.tokens = c.tokens.saturating_add(u.sum());
        }
        if e.timestamp.is_some() {
            fidelity.lost("the times of messages", Some(&e.id));
        }
        match &e.kind {
            EntryKind::Message(m) => {
                if m.injected.as_deref() == Some("compact-summary") {
                    compaction(&mut c, m.text_content(), fidelity, &e.id);
                    continue;
                }
                if m.sidechain && has_main {
                    fidelity.lost(
                        "subagent messages kept inside the session file",
                        Some(&e.id),
                    );
                    continue;
                }
                message(&mut c, e, m, fidelity, subagents, &mut made_ids, &mut calls);
            }
            EntryKind::CustomMessage { content, .. } => {
                let text = blocks_text(content, fidelity, &e.id);
                if !text.is_empty() {
                    c.turns.push(Turn::new(Speaker::User, text));
                }
            }
            EntryKind::Compaction { summary, .. } => {
                compaction(&mut c, summary.clone(), fidelity, &e.id);
            }
            _ => fidelity.lost(format!("entry kind {}", e.kind_name()), Some(&e.id)),
        }
    }
    c
}

/// The tool calls met so far: those without a result yet, in order, and
/// every one.
#[derive(Default)]
struct Calls {
    open: Vec<String>,
    all: HashSet<String>,
}

/// A compaction's summary: left out when the turns it summarizes are
/// there, kept as the user's context when they are not.
fn compaction(c: &mut Conversation, summary: String, fidelity: &mut Fidelity, id: &str) {
    let turns_before = c.turns.iter().any(|t| t.speaker != Speaker::System);
    if turns_before || summary.trim().is_empty() {
        fidelity.lost(
            "compaction summaries (the turns they summarize are kept instead)",
            Some(id),
        );
    } else {
        c.turns.push(Turn::new(Speaker::User, summary));
    }
}

fn message(
    c: &mut Conversation,
    e: &Entry,
    m: &Message,
    fidelity: &mut Fidelity,
    subagents: &mut dyn Subagents,
    made_ids: &mut usize,
    seen: &mut Calls,
) {
    if m.usage.is_some() {
        fidelity.lost("token usage of each response", Some(&e.id));
    }
    if m.is_error == Some(true) {
        fidelity.lost("which tool results were errors", Some(&e.id));
    }
    let speaker = match &m.role {
        Role::System | Role::Developer => Speaker::System,
        Role::User => Speaker::User,
        Role::Assistant => Speaker::Assistant,
        Role::Tool => Speaker::Tool,
        Role::Custom(_) => {
            fidelity.lost(
                "messages of roles the target has no place for (kept as the user's)",
                Some(&e.id),
            );
            Speaker::User
        }
    };
    let mut text = Vec::new();
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for b in &m.content {
        match &b.kind {
            BlockKind::Text { text: t } => text.push(t.clone()),
            BlockKind::Thinking { .. } => fidelity.lost("thinking", Some(&e.id)),
            BlockKind::ToolCall { id, name, input } => {
                let id = id.clone().unwrap_or_else(|| {
                    *made_ids += 1;
                    format!("call_{made_ids}")
                });
                seen.open.push(id.clone());
                seen.all.insert(id.clone());
                if !c.tools.contains(name) {
                    c.tools.push(name.clone());
                }
                calls.push(Call {
                    id,
                    name: name.clone(),
                    arguments: input.clone(),
                });
            }
            BlockKind::ToolResult {
                tool_call_id,
                content,
                is_error,
            } => {
                if *is_error {
                    fidelity.lost("which tool results were errors", Some(&e.id));
                }
                let id = tool_call_id.clone().or_else(|| m.tool_call_id.clone());
                results.push((id, blocks_text(content, fidelity, &e.id)));
            }
            BlockKind::Image { .. } => fidelity.lost("images", Some(&e.id)),
            BlockKind::Other { .. } => fidelity.lost(
                "content parts of kinds the target has no place for",
                Some(&e.id),
            ),
        }
    }
    if speaker == Speaker::Tool && results.is_empty() {
        results.push((m.tool_call_id.clone(), text.join("\n\n")));
        text.clear();
    }
    let text = text.join("\n\n");
    if !calls.is_empty() {
        c.uses_tools = true;
    }
    if speaker == Speaker::Assistant {
        if text.is_empty() && calls.is_empty() {
            return;
        }
        // One response the agent wrote as several records (text, then each
        // call) is one assistant message.
        if let Some(last) = c
            .turns
            .last_mut()
            .filter(|t| t.speaker == Speaker::Assistant)
        {
            if !text.is_empty() {
                if !last.text.is_empty() {
                    last.text.push_str("\n\n");
                }
                last.text.push_str(&text);
            }
            last.calls.extend(calls);
            return;
        }
        c.turns.push(Turn {
            speaker,
            text,
            calls,
            call_id: None,
        });
        return;
    }
    for (id, mut result) in results {
        // A result without the call's id answers the oldest call left.
        let id = match id {
            Some(id) if seen.all.contains(&id) => {
                seen.open.retain(|c| *c != id);
                id
            }
            None if !seen.open.is_empty() => seen.open.remove(0),
            // A result must follow its call (OpenAI's format checks it).
            _ => {
                fidelity.lost(
                    "tool results whose call is not in the kept turns",
                    Some(&e.id),
                );
                continue;
            }
        };
        if let Some(sub) = subagents.inline(e, &id) {
            result = inlined(&sub, &result);
        }
        c.turns.push(Turn {
            speaker: Speaker::Tool,
            text: result,
            calls: Vec::new(),
            call_id: Some(id),
        });
    }
    if !text.is_empty() {
        c.turns.push(Turn::new(
            if speaker == Speaker::Tool {
                Speaker::User
            } else {
                speaker
            },
            text,
        ));
    }
}

/// A tool's result with the transcript of the subagent it started before
/// it.
fn inlined(sub: &Conversation, result: &str) -> String {
    let mut out = String::from("<subagent_transcript>\n");
    for t in &sub.turns {
        let who = match t.speaker {
            Speaker::System => "system",
            Speaker::User => "user",
            Speaker::Assistant => "assistant",
            Speaker::Tool => "tool",
        };
        if !t.text.is_empty() {
            out.push_str(&format!("[{who}] {}\n", t.text));
        }
        for call in &t.calls {
            out.push_str(&format!("[tool call {}] {}\n", call.name, call.arguments));
        }
    }
    out.push_str("</subagent_transcript>\n");
    out.push_str(result);
    out
}

/// The text of content blocks (a tool's result), images and other parts
/// left out.
fn blocks_text(blocks: &[Block], fidelity: &mut Fidelity, id: &str) -> String {
    let mut parts = Vec::new();
    for b in blocks {
        match &b.kind {
            BlockKind::Text { text } => parts.push(text.clone()),
            BlockKind::Image { .. } => fidelity.lost("images", Some(id)),
            BlockKind::Thinking { .. } => fidelity.lost("thinking", Some(id)),
            BlockKind::Other { value } => parts.push(value.to_string()),
            BlockKind::ToolCall { .. } | BlockKind::ToolResult { .. } => {
                parts.push(serde_json::to_string(b).unwrap_or_default())
            }
        }
    }
    parts.join("\n\n")
}

/// The arguments of a call as a JSON string (a string the agent kept as
/// one stays as it is).
fn arguments_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "{}".to_string(),
        v => v.to_string(),
    }
}

/// The conversation as one line of `target` (without the newline).
pub fn line(c: &Conversation, target: Target) -> String {
    let v = match target {
        Target::OpenAiChat => openai_chat(c),
        Target::ShareGpt => sharegpt(c),
    };
    serde_json::to_string(&v).unwrap_or_default()
}

fn openai_chat(c: &Conversation) -> Value {
    let messages: Vec<Value> = c
        .turns
        .iter()
        .map(|t| match t.speaker {
            Speaker::System => json!({"role": "system", "content": t.text}),
            Speaker::User => json!({"role": "user", "content": t.text}),
            Speaker::Tool => json!({
                "role": "tool",
                "tool_call_id": t.call_id.clone().unwrap_or_default(),
                "content": t.text,
            }),
            Speaker::Assistant => {
                let mut m = Map::new();
                m.insert("role".into(), "assistant".into());
                m.insert(
                    "content".into(),
                    if t.text.is_empty() && !t.calls.is_empty() {
                        Value::Null
                    } else {
                        Value::String(t.text.clone())
                    },
                );
                if !t.calls.is_empty() {
                    let calls: Vec<Value> = t
                        .calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {
                                    "name": call.name,
                                    "arguments": arguments_text(&call.arguments),
                                },
                            })
                        })
                        .collect();
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                Value::Object(m)
            }
        })
        .collect();
    let tools: Vec<Value> = c
        .tools
        .iter()
        .map(|name| json!({"type": "function", "function": {"name": name}}))
        .collect();
    json!({"messages": messages, "tools": tools})
}

fn sharegpt(c: &Conversation) -> Value {
    let mut system = Vec::new();
    let mut conversations = Vec::new();
    for t in &c.turns {
        match t.speaker {
            // The system prompt ahead of every other turn is the row's
            // `system`; one later in the session is said as the user's.
            Speaker::System if conversations.is_empty() => system.push(t.text.clone()),
            Speaker::System | Speaker::User => {
                conversations.push(json!({"from": "human", "value": t.text}))
            }
            Speaker::Tool => conversations.push(json!({"from": "observation", "value": t.text})),
            Speaker::Assistant => {
                if !t.text.is_empty() {
                    conversations.push(json!({"from": "gpt", "value": t.text}));
                }
                if !t.calls.is_empty() {
                    let calls: Vec<Value> = t
                        .calls
                        .iter()
                        .map(|call| json!({"name": call.name, "arguments": call.arguments}))
                        .collect();
                    let value = match calls.as_slice() {
                        [one] => one.to_string(),
                        _ => Value::Array(calls).to_string(),
                    };
                    conversations.push(json!({"from": "function_call", "value": value}));
                }
            }
        }
    }
    let tools: Vec<Value> = c.tools.iter().map(|name| json!({"name": name})).collect();
    json!({
        "conversations": conversations,
        "system": system.join("\n\n"),
        "tools": Value::Array(tools).to_string(),
    })
}

/// What the target cannot hold beyond what [`conversation`] left out.
fn target_losses(session: &Session, c: &Conversation, target: Target, fidelity: &mut Fidelity) {
    let meta = &session.meta;
    if meta.title.is_some() || meta.cwd.is_some() || meta.created_at.is_some() {
        fidelity.lost(
            "the session's title, project folder and start time (a dataset's manifest keeps them)",
            None,
        );
    }
    if meta.model.model.is_some()
        || session
            .entries
            .iter()
            .any(|e| e.message().is_some_and(|m| m.model.is_some()))
    {
        fidelity.lost("which model answered", None);
    }
    if target == Target::ShareGpt && c.uses_tools {
        fidelity.lost(
            "the ids that link tool results to their calls (each result follows its call)",
            None,
        );
    }
}

/// One session as one example of `target`: the line (without its
/// newline) and what it could not hold.
pub fn example(session: &Session, target: Target) -> (String, Fidelity) {
    let mut fidelity = Fidelity::new(target.name());
    let c = conversation(session, &mut fidelity, &mut NoSubagents);
    target_losses(session, &c, target, &mut fidelity);
    (line(&c, target), fidelity)
}

/// Records in `fidelity` what `target` cannot hold of `session` beyond
/// the conversation (its title, folder, model).
pub fn losses_beyond(session: &Session, c: &Conversation, target: Target, fidelity: &mut Fidelity) {
    target_losses(session, c, target, fidelity);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use agentlog_model::{Agent, SessionMeta};

    fn entry(id: &str, parent: Option<&str>, m: Message) -> Entry {
        Entry::new(id, parent.map(str::to_string), EntryKind::Message(m))
    }

    fn tool_session() -> Session {
        let mut s = Session::new(SessionMeta::new("s1", Agent::Claude));
        s.push(entry(
            "u1",
            None,
            Message::text(Role::User, "list the files"),
        ));
        let mut a = Message::new(Role::Assistant);
        a.content.push(Block::thinking("ls will do", None));
        a.content.push(Block::text("Listing."));
        a.content.push(Block::tool_call(
            Some("c1".into()),
            "Bash",
            json!({"command": "ls"}),
        ));
        s.push(entry("a1", Some("u1"), a));
        let mut r = Message::new(Role::User);
        r.content.push(Block::tool_result(
            Some("c1".into()),
            vec![Block::text("Cargo.toml\nsrc")],
            false,
        ));
        s.push(entry("r1", Some("a1"), r));
        s.push(entry(
            "a2",
            Some("r1"),
            Message::text(Role::Assistant, "Two entries."),
        ));
        s
    }

    #[test]
    fn openai_chat_carries_calls_as_functions_and_results_by_id() {
        let (line, f) = example(&tool_session(), Target::OpenAiChat);
        let v: Value = serde_json::from_str(&line).unwrap();
        let m = &v["messages"];
        assert_eq!(m[1]["role"], "assistant");
        assert_eq!(m[1]["content"], "Listing.");
        assert_eq!(m[1]["tool_calls"][0]["function"]["name"], "Bash");
        assert_eq!(
            m[1]["tool_calls"][0]["function"]["arguments"],
            "{\"command\":\"ls\"}"
        );
        assert_eq!(m[2]["role"], "tool");
        assert_eq!(m[2]["tool_call_id"], "c1");
        assert_eq!(m[2]["content"], "Cargo.toml\nsrc");
        assert_eq!(m[3]["content"], "Two entries.");
        assert_eq!(v["tools"][0]["function"]["name"], "Bash");
        assert!(f.to_string().contains("thinking (once"), "{f}");
    }

    #[test]
    fn sharegpt_says_calls_and_observations() {
        let (line, _) = example(&tool_session(), Target::ShareGpt);
        let v: Value = serde_json::from_str(&line).unwrap();
        let c = &v["conversations"];
        let froms: Vec<&str> = c
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["from"].as_str().unwrap())
            .collect();
        assert_eq!(
            froms,
            ["human", "gpt", "function_call", "observation", "gpt"]
        );
        let call: Value = serde_json::from_str(c[2]["value"].as_str().unwrap()).unwrap();
        assert_eq!(
            call,
            json!({"name": "Bash", "arguments": {"command": "ls"}})
        );
    }

    #[test]
    fn only_the_active_branch_and_no_summary_beside_its_turns() {
        let mut s = tool_session();
        // A retried answer on another branch.
        s.entries.push(entry(
            "x1",
            Some("u1"),
            Message::text(Role::Assistant, "abandoned"),
        ));
        s.push(Entry::new(
            "k1",
            Some("a2".into()),
            EntryKind::Compaction {
                summary: "the user listed files".into(),
                short_summary: None,
                first_kept_entry_id: None,
                tokens_before: None,
                details: None,
                from_extension: None,
                preserve_data: None,
            },
        ));
        s.push(entry("u2", Some("k1"), Message::text(Role::User, "thanks")));
        let (line, f) = example(&s, Target::OpenAiChat);
        assert!(!line.contains("abandoned"), "{line}");
        assert!(!line.contains("the user listed files"), "{line}");
        let text = f.to_string();
        assert!(text.contains("other branches"), "{text}");
        assert!(text.contains("compaction summaries"), "{text}");
    }
}
