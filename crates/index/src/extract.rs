//! What the index keeps of a session: one catalog row, one document per
//! entry (text, thinking, tool calls, tool output, filter tags) and one usage
//! row per model response.

use agentlog_model::{
    only_tool_results, Block, BlockKind, Counted, Entry, EntryKind, Message, Role, Session,
    DERIVED_FROM,
};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// At most this many bytes of each document column are indexed; the rest of
/// a huge tool output or file dump is left to the session file itself.
pub const MAX_COLUMN_BYTES: usize = 64 * 1024;

/// The catalog fields of one session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionRow {
    /// The session id.
    pub session_id: String,
    /// The agent's short name.
    pub agent: String,
    /// The project directory (cwd / workspace).
    pub project: Option<String>,
    /// The title, when the session has one.
    pub title: Option<String>,
    /// The first real user prompt (cut to 500 bytes).
    pub first_prompt: Option<String>,
    /// Start time, milliseconds since the epoch.
    pub created_ms: Option<i64>,
    /// Last change, milliseconds since the epoch.
    pub updated_ms: Option<i64>,
    /// What the session is (its format says: [`agentlog_formats::Format::session_kind`]).
    pub kind: agentlog_model::SessionKind,
}

/// One indexed entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Doc {
    /// The entry id (what `agentlog show --at` takes).
    pub entry_id: String,
    /// The 1-based line the entry was read from.
    pub line: Option<u64>,
    /// The entry's time, milliseconds since the epoch.
    pub ts_ms: Option<i64>,
    /// The effective role (`user`, `assistant`, `tool`, …) for messages.
    pub role: Option<String>,
    /// The entry kind (`message`, `compaction`, …).
    pub kind: &'static str,
    /// Message text, summaries, prompts.
    pub text: String,
    /// Thinking text.
    pub thinking: String,
    /// Tool names and the string values of tool inputs (commands, paths, …).
    pub tools: String,
    /// Tool output.
    pub output: String,
    /// Tool names called or answered, lower case.
    pub tool_names: Vec<String>,
    /// What the entry counts as (the model's one rule): the catalog's
    /// message, prompt and reply counts are sums of it.
    pub counted: Counted,
    /// True when the entry calls at least one tool.
    pub tool_calls: u32,
}

impl Doc {
    /// True when nothing of the entry is searchable.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
            && self.thinking.is_empty()
            && self.tools.is_empty()
            && self.output.is_empty()
    }
}

/// The token usage of one model response.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UsageRow {
    /// The entry that carries it.
    pub entry_id: String,
    /// Its line.
    pub line: Option<u64>,
    /// Its time.
    pub ts_ms: Option<i64>,
    /// The model, when known.
    pub model: Option<String>,
    /// The provider's response id, used to count a response once even when
    /// two files replay it.
    pub response_id: Option<String>,
    /// Prompt tokens not from cache.
    pub input: u64,
    /// Generated tokens.
    pub output: u64,
    /// Prompt tokens read from cache.
    pub cache_read: u64,
    /// Prompt tokens written to cache.
    pub cache_write: u64,
    /// Reasoning tokens (part of `output`).
    pub reasoning: u64,
    /// The cost the file recorded, if any.
    pub cost_usd: Option<f64>,
}

/// Everything the index keeps of one session.
#[derive(Clone, Debug, Default)]
pub struct Extracted {
    /// The catalog row.
    pub session: SessionRow,
    /// One document per entry.
    pub docs: Vec<Doc>,
    /// One row per response with usage.
    pub usage: Vec<UsageRow>,
}

/// Returns what the index keeps of `session`.
pub fn extract(session: &Session) -> Extracted {
    let meta = &session.meta;
    let mut docs = Vec::with_capacity(session.entries.len());
    let mut usage = Vec::new();
    let mut first_ts: Option<i64> = None;
    let mut last_ts: Option<i64> = None;
    // A message a reader derived from a record (codelia's run records) is
    // what is searched of both: it reads as the conversation does (the
    // record's JSON around the text is not searched), and it is found
    // once, dated and placed as its record.
    let records: HashMap<&str, (Option<i64>, Option<u64>)> = session
        .entries
        .iter()
        .map(|e| (e.id.as_str(), (entry_ms(e), e.line)))
        .collect();
    fn derived_from(e: &Entry) -> Option<&str> {
        e.extra.get(DERIVED_FROM).and_then(Value::as_str)
    }
    let viewed: HashSet<&str> = session.entries.iter().filter_map(derived_from).collect();
    for e in &session.entries {
        let ts = entry_ms(e);
        if let Some(t) = ts {
            first_ts = Some(first_ts.map_or(t, |f| f.min(t)));
            last_ts = Some(last_ts.map_or(t, |l| l.max(t)));
        }
        if let Some(u) = usage_of(e, ts, meta.model.model.as_deref()) {
            usage.push(u);
        }
        let record = derived_from(e).and_then(|r| records.get(r));
        let mut d = doc_of(e, ts.or_else(|| record.and_then(|r| r.0)));
        if d.line.is_none() {
            d.line = record.and_then(|r| r.1);
        }
        if viewed.contains(e.id.as_str()) {
            d.text.clear();
            d.thinking.clear();
            d.tools.clear();
            d.output.clear();
        }
        docs.push(d);
    }
    let first_prompt = session.first_prompt().map(|p| cut(p.trim(), 500));
    let title = meta
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| last_session_name(session));
    Extracted {
        session: SessionRow {
            session_id: meta.id.clone(),
            agent: meta.agent.as_str().to_string(),
            project: meta.cwd.clone().filter(|c| !c.is_empty()),
            title,
            first_prompt,
            created_ms: meta
                .created_at
                .as_ref()
                .and_then(|t| t.millis())
                .or(first_ts),
            updated_ms: meta
                .updated_at
                .as_ref()
                .and_then(|t| t.millis())
                .or(last_ts)
                .or(first_ts),
            kind: agentlog_model::SessionKind::Conversation,
        },
        docs,
        usage,
    }
}

fn last_session_name(session: &Session) -> Option<String> {
    session.entries.iter().rev().find_map(|e| match &e.kind {
        EntryKind::SessionInfo { name: Some(n) } if !n.trim().is_empty() => Some(n.clone()),
        _ => None,
    })
}

fn entry_ms(e: &Entry) -> Option<i64> {
    e.timestamp
        .as_ref()
        .and_then(|t| t.millis())
        .or_else(|| e.message().and_then(|m| m.timestamp.as_ref()?.millis()))
}

fn usage_of(e: &Entry, ts: Option<i64>, session_model: Option<&str>) -> Option<UsageRow> {
    let u = e.response_usage()?;
    let (model, response_id) = match &e.kind {
        EntryKind::Message(m) => (
            m.model.clone().or_else(|| session_model.map(String::from)),
            m.id.clone(),
        ),
        EntryKind::LlmResponse { output, .. } => (
            output
                .get("model")
                .and_then(Value::as_str)
                .map(String::from)
                .or_else(|| session_model.map(String::from)),
            output.get("id").and_then(Value::as_str).map(String::from),
        ),
        _ => return None,
    };
    Some(UsageRow {
        entry_id: e.id.clone(),
        line: e.line,
        ts_ms: ts,
        model: model.filter(|m| !m.is_empty() && m != "<synthetic>"),
        response_id,
        input: u.input.min(MAX_RESPONSE_TOKENS),
        output: u.output.min(MAX_RESPONSE_TOKENS),
        cache_read: u.cache_read.min(MAX_RESPONSE_TOKENS),
        cache_write: u.cache_write.min(MAX_RESPONSE_TOKENS),
        reasoning: u.reasoning.min(MAX_RESPONSE_TOKENS),
        // A cost that is not a number of dollars one response could cost
        // is taken as not recorded (the price list then prices it).
        cost_usd: u
            .cost_usd
            .filter(|c| (0.0..=MAX_RESPONSE_COST_USD).contains(c)),
    })
}

/// The most a cost recorded for one response may be, in dollars, to be
/// counted as recorded (a response costs cents; `inf`, `NaN`, negative or
/// larger costs from a file made every sum `inf` or `NaN`).
pub const MAX_RESPONSE_COST_USD: f64 = 1e6;

/// The most tokens of one kind the catalog counts for one response; a file
/// claiming more (no model reads or writes a thousandth of it) is taken at
/// this. Sums of the catalog's counts then stay far inside SQL's 64-bit
/// integers, where one hostile file's counts made every sum overflow and
/// every command that reads the index fail.
pub const MAX_RESPONSE_TOKENS: u64 = u32::MAX as u64;

/// Returns the role under which a message is filtered: a user message that
/// only carries tool results counts as `tool`.
fn effective_role(m: &Message) -> String {
    if only_tool_results(m) && m.role == Role::User {
        "tool".to_string()
    } else {
        m.role.as_str().to_string()
    }
}

fn doc_of(e: &Entry, ts: Option<i64>) -> Doc {
    let mut d = Doc {
        entry_id: e.id.clone(),
        line: e.line,
        ts_ms: ts,
        kind: e.kind.name(),
        counted: e.counted(),
        ..Doc::default()
    };
    match &e.kind {
        EntryKind::Message(m) => {
            d.role = Some(effective_role(m));
            if let Some(t) = &m.tool_name {
                d.tool_names.push(t.to_lowercase());
            }
            for b in &m.content {
                add_block(&mut d, b);
            }
        }
        EntryKind::Compaction { summary, .. } | EntryKind::BranchSummary { summary, .. } => {
            push(&mut d.text, summary)
        }
        EntryKind::CustomMessage { content, .. } => {
            for b in content {
                add_block(&mut d, b);
            }
        }
        EntryKind::SessionInfo { name: Some(n) } => push(&mut d.text, n),
        EntryKind::Label { label: Some(l), .. } => push(&mut d.text, l),
        EntryKind::SessionInit {
            system_prompt,
            task,
            tools,
            ..
        } => {
            if let Some(t) = task {
                push(&mut d.text, t);
            }
            if let Some(s) = system_prompt {
                push(&mut d.text, s);
            }
            for t in tools {
                push(&mut d.tools, t);
            }
        }
        EntryKind::RunStart { input, .. } => {
            d.role = Some("user".to_string());
            strings_of(input, &mut d.text)
        }
        EntryKind::Event { .. } => {
            // A follow-up prompt recorded as an event (codelia's
            // `user_message`) is searchable like any prompt.
            if let Some(t) = e.prompt_text() {
                d.role = Some("user".to_string());
                push(&mut d.text, &t);
            }
        }
        EntryKind::RunStatus {
            message: Some(m), ..
        } => push(&mut d.text, m),
        EntryKind::RunError { name, message, .. } => {
            push(&mut d.text, name);
            push(&mut d.text, message);
        }
        EntryKind::RunEnd {
            final_text: Some(t),
            ..
        } => push(&mut d.text, t),
        EntryKind::LlmResponse { output, .. } => {
            d.role = Some("assistant".to_string());
            strings_of(output, &mut d.text)
        }
        EntryKind::ToolOutput {
            tool, output: out, ..
        } => {
            d.tool_names.push(tool.to_lowercase());
            push(&mut d.tools, tool);
            push(&mut d.output, out);
        }
        _ => {}
    }
    d.tool_names.sort();
    d.tool_names.dedup();
    d
}

fn add_block(d: &mut Doc, b: &Block) {
    match &b.kind {
        BlockKind::Text { text } => push(&mut d.text, text),
        BlockKind::Thinking { text, .. } => push(&mut d.thinking, text),
        BlockKind::ToolCall { name, input, .. } => {
            d.tool_calls += 1;
            d.tool_names.push(name.to_lowercase());
            push(&mut d.tools, name);
            strings_of(input, &mut d.tools);
        }
        BlockKind::ToolResult { content, .. } => {
            for c in content {
                match &c.kind {
                    BlockKind::Text { text } => push(&mut d.output, text),
                    BlockKind::ToolResult { .. } => add_block(d, c),
                    _ => {}
                }
            }
        }
        BlockKind::Image { .. } | BlockKind::Other { .. } => {}
    }
}

/// Appends `s` (separated by a newline) while the column has room.
fn push(col: &mut String, s: &str) {
    if s.is_empty() || col.len() >= MAX_COLUMN_BYTES {
        return;
    }
    if !col.is_empty() {
        col.push('\n');
    }
    let room = MAX_COLUMN_BYTES.saturating_sub(col.len());
    col.push_str(cut_ref(s, room));
}

/// Appends the string leaves of a JSON value (tool arguments: commands,
/// paths, patterns), not its keys or punctuation. A string that is itself
/// JSON (Codex arguments) is parsed first.
fn strings_of(v: &Value, col: &mut String) {
    match v {
        Value::String(s) => {
            let t = s.trim_start();
            if (t.starts_with('{') || t.starts_with('[')) && t.len() < MAX_COLUMN_BYTES {
                if let Ok(inner) = serde_json::from_str::<Value>(t) {
                    if !inner.is_string() {
                        strings_of(&inner, col);
                        return;
                    }
                }
            }
            push(col, s)
        }
        Value::Array(a) => a.iter().for_each(|x| strings_of(x, col)),
        Value::Object(o) => o.values().for_each(|x| strings_of(x, col)),
        Value::Number(n) => push(col, &n.to_string()),
        Value::Bool(_) | Value::Null => {}
    }
}

fn cut_ref(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Returns `s` cut to at most `max` bytes on a character boundary.
pub fn cut(s: &str, max: usize) -> String {
    cut_ref(s, max).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentlog_model::{Agent, SessionMeta, Timestamp, Usage};

    fn session() -> Session {
        let mut s = Session::new(SessionMeta::new("s1", Agent::Claude));
        s.meta.cwd = Some("/home/u/proj".into());
        let mut u = Message::text(Role::User, "fix the parser");
        u.timestamp = Some(Timestamp::Text("2025-01-02T03:04:05Z".into()));
        s.push(Entry::new("u1", None, EntryKind::Message(u)));
        let mut a = Message::new(Role::Assistant);
        a.content.push(Block::thinking("consider the lexer", None));
        a.content.push(Block::tool_call(
            Some("c1".into()),
            "Read",
            serde_json::json!({"file_path": "/src/lex.rs", "limit": 20}),
        ));
        a.model = Some("claude-sonnet-4".into());
        a.usage = Some(Usage {
            input: 10,
            output: 5,
            ..Usage::default()
        });
        s.push(Entry::new("a1", Some("u1".into()), EntryKind::Message(a)));
        let mut r = Message::new(Role::User);
        r.content.push(Block::tool_result(
            Some("c1".into()),
            vec![Block::text("fn lex() {}")],
            false,
        ));
        s.push(Entry::new("r1", Some("a1".into()), EntryKind::Message(r)));
        s
    }

    #[test]
    fn splits_entries_into_columns() {
        let x = extract(&session());
        assert_eq!(x.session.first_prompt.as_deref(), Some("fix the parser"));
        assert_eq!(x.session.project.as_deref(), Some("/home/u/proj"));
        assert_eq!(x.docs.len(), 3);
        assert_eq!(x.docs[1].thinking, "consider the lexer");
        assert_eq!(x.docs[1].tools, "Read\n/src/lex.rs\n20");
        assert_eq!(x.docs[1].tool_names, ["read"]);
        assert_eq!(x.docs[2].role.as_deref(), Some("tool"));
        assert_eq!(x.docs[2].output, "fn lex() {}");
        assert_eq!(x.usage.len(), 1);
        assert_eq!(x.usage[0].model.as_deref(), Some("claude-sonnet-4"));
        assert_eq!(x.session.created_ms, Some(1_735_787_045_000));
    }

    #[test]
    fn columns_are_capped() {
        let mut col = String::new();
        push(&mut col, &"é".repeat(MAX_COLUMN_BYTES));
        assert!(col.len() <= MAX_COLUMN_BYTES);
        push(&mut col, "more");
        assert!(!col.ends_with("more"));
    }
}
