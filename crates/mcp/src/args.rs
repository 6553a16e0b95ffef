//! The tools' arguments: their JSON schemas (and the descriptions a model
//! reads) are made from these types.

use schemars::JsonSchema;
use serde::Deserialize;

/// `search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for. Words are all required: `retry backoff`; `"exact
    /// phrase"`; `pars*` for a prefix; `a OR b`; `-word` excludes. Case
    /// and accents are ignored; punctuation separates words, so
    /// `src/main.rs` finds that path.
    pub query: String,
    /// Search the query's words as one exact phrase.
    pub phrase: Option<bool>,
    /// Only these agents, comma-separated: claude, codex, gemini, pi,
    /// opencode, cursor, copilot, …
    pub agent: Option<String>,
    /// Only sessions whose project directory contains this text.
    pub project: Option<String>,
    /// Only sessions whose id starts with this.
    pub session: Option<String>,
    /// Only messages since a date (2026-01-31), a time (RFC 3339) or a span
    /// ago (30m, 12h, 7d, 2w).
    pub since: Option<String>,
    /// Only messages before this (same forms as since).
    pub until: Option<String>,
    /// Hits per page (1–50, default 10).
    pub limit: Option<usize>,
    /// The next_cursor of the previous answer, for the next page.
    pub cursor: Option<String>,
    /// Most characters of JSON to return (500–100000, default 12000).
    pub max_chars: Option<usize>,
}

/// The order of a listing.
#[derive(Debug, Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Newest start first.
    Started,
    /// Most recent change first.
    Updated,
}

/// `list_sessions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only these agents, comma-separated: claude, codex, gemini, pi, …
    pub agent: Option<String>,
    /// Only sessions whose project directory contains this text.
    pub project: Option<String>,
    /// Only sessions started since a date (2026-01-31), a time (RFC 3339)
    /// or a span ago (30m, 12h, 7d, 2w).
    pub since: Option<String>,
    /// `started` (default) or `updated`: newest first either way.
    pub order: Option<Order>,
    /// Sessions per page (1–100, default 20).
    pub limit: Option<usize>,
    /// The next_cursor of the previous answer, for the next page.
    pub cursor: Option<String>,
    /// Most characters of JSON to return (500–100000, default 12000).
    pub max_chars: Option<usize>,
}

/// `read_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// The session: its id, the first characters of it, or AGENT:ID (from
    /// search or list_sessions).
    pub session: String,
    /// Start at this entry (a search hit's entry_id), on the branch that
    /// holds it, with the message before it.
    pub at: Option<String>,
    /// Start at this message number (0 is the first; next_start of the
    /// previous answer).
    pub start: Option<usize>,
    /// Most messages to return (1–200, default 30).
    pub max_messages: Option<usize>,
    /// Include the model's thinking (default false).
    pub thinking: Option<bool>,
    /// Include what tools returned (default false: only their size).
    pub tool_output: Option<bool>,
    /// Most characters of JSON to return (500–100000, default 12000).
    pub max_chars: Option<usize>,
}

/// `context`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextArgs {
    /// The session: its id, the first characters of it, or AGENT:ID.
    pub session: String,
    /// The entry to build the context at (default: the session's current
    /// leaf, its latest message).
    pub leaf: Option<String>,
    /// Start at this message of the context (next_start of the previous
    /// answer).
    pub start: Option<usize>,
    /// Most characters of JSON to return (500–100000, default 12000).
    pub max_chars: Option<usize>,
}

/// `sessions_touching`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TouchingArgs {
    /// A file or folder path, or part of one (src/retry.rs, retry.rs).
    pub path: Option<String>,
    /// A command, or its first words (cargo test, git rebase).
    pub command: Option<String>,
    /// Only these agents, comma-separated.
    pub agent: Option<String>,
    /// Only sessions whose project directory contains this text.
    pub project: Option<String>,
    /// Only tool calls since a date, a time or a span ago (7d).
    pub since: Option<String>,
    /// Only tool calls before this.
    pub until: Option<String>,
    /// Most sessions to return (1–100, default 20).
    pub limit: Option<usize>,
    /// Most characters of JSON to return (500–100000, default 12000).
    pub max_chars: Option<usize>,
}

/// How stats are grouped.
#[derive(Debug, Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// The UTC day.
    Day,
    /// The model.
    Model,
    /// The project directory.
    Project,
    /// The agent.
    Agent,
}

/// `stats`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatsArgs {
    /// Group by `day`, `model` (default), `project` or `agent`.
    pub by: Option<By>,
    /// Only responses since a date, a time or a span ago (7d).
    pub since: Option<String>,
    /// Only responses before this.
    pub until: Option<String>,
    /// Only these agents, comma-separated.
    pub agent: Option<String>,
    /// Only projects whose directory contains this text.
    pub project: Option<String>,
    /// Most rows (1–400, default 30; for days, the latest).
    pub limit: Option<usize>,
    /// Most characters of JSON to return (500–100000, default 12000).
    pub max_chars: Option<usize>,
}

/// `resume_command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeArgs {
    /// The session: its id, the first characters of it, or AGENT:ID.
    pub session: String,
    /// The agent to continue it in (claude, codex, gemini, pi, copilot,
    /// qwen, …; default: its own agent).
    pub agent: Option<String>,
}
