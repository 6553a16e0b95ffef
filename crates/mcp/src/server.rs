//! The MCP server: the tools, their descriptions, and how answers and
//! errors are handed to the client.

use crate::answer::{Answers, ToolError};
use crate::args::*;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler};
use serde_json::Value;

/// What the server tells a client about itself.
pub const INSTRUCTIONS: &str = "agentlog: the user's past sessions with AI coding agents (Claude Code, Codex, Gemini CLI, pi, OpenCode, Cursor, …) on this machine, read-only. Use search to find what was said or done before (decisions, fixes, errors), read_session to read around a hit, sessions_touching for the sessions that read, edited or ran a file or command, list_sessions to browse, stats for tokens and cost, context for what the model saw at a point, resume_command for how the user continues a session. Answers are JSON, cut to max_chars with paging (next_cursor / next_start); secrets in them are replaced by [REDACTED:kind].";

/// The agentlog MCP server.
#[derive(Clone)]
pub struct Server {
    answers: Answers,
}

impl Server {
    /// A server answering with `answers`.
    pub fn new(answers: Answers) -> Server {
        Server { answers }
    }

    /// Runs `f` off the async threads and hands its answer (or its error,
    /// as a tool error the model reads) to the client.
    async fn run(
        &self,
        f: impl FnOnce(&Answers) -> Result<Value, ToolError> + Send + 'static,
    ) -> Result<CallToolResult, ErrorData> {
        let answers = self.answers.clone();
        let redact = answers.redact;
        let done = tokio::task::spawn_blocking(move || f(&answers))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the tool failed: {e}"), None))?;
        match done {
            Ok(v) => {
                let text = serde_json::to_string(&v)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
            }
            Err(e) => {
                let mut msg = match &e {
                    ToolError::Arguments(m) => m.clone(),
                    ToolError::Failed(m) => format!("agentlog could not answer: {m}"),
                };
                if redact {
                    if let Ok(r) = agentlog_redact::Redactor::builtin() {
                        r.text(&mut msg, "error");
                    }
                }
                Ok(CallToolResult::error(vec![ContentBlock::text(msg)]))
            }
        }
    }
}

#[tool_router]
impl Server {
    /// Full-text search over every past session.
    #[tool(
        description = "Search the text of every past agent session on this machine (prompts, replies, thinking, tool calls and their outputs). Returns the best hits first, each with session_id, entry_id (the message), agent, project, time and a snippet with the matches between « and ». Use it for \"what did we decide about X\", \"how did I fix this error before\". Then read around a hit with read_session(session=session_id, at=entry_id). Pages: pass next_cursor back as cursor.",
        annotations(
            title = "Search past sessions",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn search(
        &self,
        Parameters(a): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |x| x.search(&a)).await
    }

    /// The sessions, newest first.
    #[tool(
        description = "List past agent sessions, newest first: id, agent, project directory, title (or first prompt), start and last change, messages and tokens. Filter by agent, project (a part of the directory) and since; order by started or updated. Pages: pass next_cursor back as cursor.",
        annotations(
            title = "List sessions",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn list_sessions(
        &self,
        Parameters(a): Parameters<ListArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |x| x.list_sessions(&a)).await
    }

    /// One session's messages.
    #[tool(
        description = "Read the messages of one session (by id, id prefix or AGENT:ID), on its active branch: number n, entry_id, role, time and text; tool calls with their inputs. Thinking and tool outputs are left out unless thinking=true / tool_output=true. Start at a search hit with at=entry_id, or at message start=n; a long session comes in pages (next_start).",
        annotations(
            title = "Read a session",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn read_session(
        &self,
        Parameters(a): Parameters<ReadArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |x| x.read_session(&a)).await
    }

    /// What the model saw.
    #[tool(
        description = "What the model saw at a point of a session: the messages of its context at a leaf entry (default: the latest), after compactions and branch summaries, with the model and thinking level in effect; each message summarized on one line. Pages: next_start.",
        annotations(
            title = "Model context at a leaf",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn context(
        &self,
        Parameters(a): Parameters<ContextArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |x| x.context(&a)).await
    }

    /// Sessions whose tool calls named a path or a command.
    #[tool(
        description = "Find the sessions whose tool calls touched a file or folder (read, edited, wrote it) or ran a command: give path (src/retry.rs, or part of it) or command (cargo test). Returns sessions newest first, with how many tool calls matched, the first and last one (entry_id, time) and an example. Read one with read_session(session, at=entry_id, tool_output=true).",
        annotations(
            title = "Sessions that touched a file or ran a command",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn sessions_touching(
        &self,
        Parameters(a): Parameters<TouchingArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |x| x.touching(&a)).await
    }

    /// Tokens and cost.
    #[tool(
        description = "Tokens and cost (USD, from list prices) of the past sessions' model responses, grouped by day, model, project or agent, with a total; filter by since/until, agent, project.",
        annotations(
            title = "Token and cost statistics",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn stats(
        &self,
        Parameters(a): Parameters<StatsArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |x| x.stats(&a)).await
    }

    /// The command that continues a session.
    #[tool(
        description = "The shell command that continues a session in an agent (its own, or another one: claude, codex, gemini, pi, …). Returned, never run: give the steps to the user. Continuing in another agent needs the session converted first; the first step (agentlog resume … --in AGENT) does that.",
        annotations(
            title = "How to resume a session",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn resume_command(
        &self,
        Parameters(a): Parameters<ResumeArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(move |x| x.resume_command(&a)).await
    }
}

#[tool_handler]
impl ServerHandler for Server {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
        .with_server_info(rmcp::model::Implementation::new(
            "agentlog",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(INSTRUCTIONS.to_string())
    }
}
