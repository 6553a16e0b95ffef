//! Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! # Reading
//!
//! Every line becomes one entry (id `L<line>`), so writing a session read
//! from Codex back in this format gives the same JSON values line by line.
//! Every era is read: the bare era (a meta line without `type`, bare
//! Responses-API items, `{"record_type":"state"}` lines kept as events), the
//! `{timestamp, type, payload}` envelope, and the TypeScript-era single
//! document `{"session": {…}, "items": […]}` (written back as one document).
//!
//! - `response_item` messages, reasoning, `function_call`,
//!   `custom_tool_call`, `local_shell_call`, `web_search_call` and the two
//!   output kinds become messages; outputs are tool-role messages with one
//!   tool-result block, paired with their call by `call_id`. Outputs may be
//!   plain text, a JSON-encoded `{"output", "metadata"}` string (its exit code
//!   sets `is_error`), or content items.
//! - **One source per text.** User and assistant text is written twice, as a
//!   `response_item` message (what the model saw) and as an `event_msg`
//!   `user_message`/`agent_message` (the UI copy). The response item is the
//!   message; an event whose role and text match a response item of the file
//!   stays an event (hidden), and only an event with no such response item
//!   becomes a message. `agent_reasoning` events always stay events: the
//!   `reasoning` item is the thinking.
//! - Injected context is marked in `Message::injected`:
//!   `environment_context`, `user_instructions`, `agents_md`,
//!   `turn_aborted`, `subagent_notification`, `developer`, `system`.
//! - Reasoning summaries are thinking blocks; `encrypted_content` stays in the
//!   message's extras and sets `redacted`. A reasoning item with no readable
//!   text is one empty thinking block.
//! - `turn_context` gives the model of the assistant messages after it;
//!   `compacted` is a compaction entry; `thread_rolled_back` drops the last
//!   N user turns from the active branch (they stay in the tree); token
//!   counts follow the rules of [`usage`](self#tokens).
//! - Forks (`forked_from_id`) and subagents
//!   (`source.subagent.thread_spawn.parent_thread_id`) set
//!   `meta.parent_session`. The parent history such a rollout replays after
//!   its own `session_meta` is detected (up to the first `turn_context` of a
//!   turn minted after the fork) and marked `injected = "fork_replay"`; its
//!   token counts are not counted again.
//! - Everything else (`world_state`, `inter_agent_*`, other events) is an
//!   event entry holding the payload verbatim.
//!
//! # Tokens
//!
//! See the `usage` module: `input_tokens` includes cached tokens, so
//! `Usage::input = input_tokens - cached_input_tokens`; each `token_count`
//! event is counted once (its `last_token_usage`, or the difference of
//! totals).
//!
//! # Writing
//!
//! A session read from Codex is written back line for line. A session from
//! another format becomes a rollout of the newest shape: `session_meta`
//! (id, timestamp, cwd, originator, cli_version, instructions, source),
//! `turn_context` with the model, `response_item` messages
//! (`input_text`/`output_text`), reasoning, `function_call` and
//! `function_call_output`, with `event_msg` `user_message`, `agent_message`
//! and `token_count` beside them, as Codex itself writes. Only the active
//! branch is written; the [`Fidelity`] report names the rest. The rollout id
//! is the session id when it is a UUID, and a UUID derived from it otherwise
//! ([`rollout_id`]).

mod read;
mod usage;
mod validate;
mod wire;
mod write;

use crate::env::{walk_files, DiscoverEnv};
use crate::{Fidelity, Format, FormatError, Read, ResumePlan};
use agentlog_model::{Agent, Session};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "codex";
/// `SessionMeta::format_version` of bare-era rollouts (no envelope).
const BARE: &str = "bare";
/// `SessionMeta::format_version` of TypeScript-era single-document files.
const DOCUMENT: &str = "document";

/// The codex format.
pub struct CodexFormat;

/// The registry entry.
pub static FORMAT: CodexFormat = CodexFormat;

/// Returns the UUID a session has as a Codex rollout: its id when that is a
/// UUID, otherwise a UUID derived from the id (the same every time).
pub fn rollout_id(session: &Session) -> String {
    crate::ids::stable_uuid(&session.meta.id)
        .hyphenated()
        .to_string()
}

/// Returns the Codex home: `$CODEX_HOME`, or `~/.codex`.
pub fn codex_home(env: &DiscoverEnv) -> PathBuf {
    env.var_path("CODEX_HOME")
        .unwrap_or_else(|| env.home_join(".codex"))
}

fn is_rollout(p: &Path) -> bool {
    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.starts_with("rollout-") && (n.ends_with(".jsonl") || n.ends_with(".json"))
    })
}

impl Format for CodexFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Codex CLI rollout (JSONL)"
    }

    fn agent(&self) -> Agent {
        Agent::Codex
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if head.is_empty() {
            return 0;
        }
        let first = crate::jsonl::first_value(head);
        let env_type = first
            .as_ref()
            .filter(|v| v.get("payload").is_some())
            .and_then(|v| v.get("type"))
            .and_then(|t| t.as_str());
        match env_type {
            Some("session_meta") => 95,
            Some("response_item" | "event_msg" | "turn_context" | "compacted" | "world_state") => {
                80
            }
            _ if is_rollout(path) => 60,
            _ => 0,
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        if let Some(roots) = env.roots_for(FORMAT_NAME) {
            return roots
                .iter()
                .flat_map(|r| walk_files(r, 6, &is_rollout))
                .collect();
        }
        let home = codex_home(env);
        let active = walk_files(&home.join("sessions"), 5, &is_rollout);
        let names: HashSet<_> = active.iter().filter_map(|p| p.file_name()).collect();
        let archived: Vec<PathBuf> = walk_files(&home.join("archived_sessions"), 5, &is_rollout)
            .into_iter()
            .filter(|p| p.file_name().is_none_or(|n| !names.contains(n)))
            .collect();
        let mut out = active.clone();
        out.extend(archived);
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read(path, bytes)
    }

    fn validate(&self, path: &Path) -> Result<Vec<crate::Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn drift(&self, read: &Read) -> Vec<crate::drift::Drift> {
        read::drift(read)
    }

    fn session_kind(&self, _path: &Path, session: &Session) -> agentlog_model::SessionKind {
        read::session_kind(session)
    }

    /// Returns `<CODEX_HOME or ~/.codex>/sessions/YYYY/MM/DD/rollout-<local
    /// time>-<uuid>.jsonl` (the session's start in local time, as Codex names
    /// its files) and `cd <cwd> && codex resume <uuid>`.
    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        let id = rollout_id(session);
        let start = session
            .meta
            .created_at
            .as_ref()
            .and_then(|t| t.to_utc())
            .unwrap_or_else(chrono::Utc::now)
            .with_timezone(&chrono::Local);
        let root = codex_home(env).join("sessions");
        let path = root
            .join(start.format("%Y").to_string())
            .join(start.format("%m").to_string())
            .join(start.format("%d").to_string())
            .join(format!(
                "rollout-{}-{id}.jsonl",
                start.format("%Y-%m-%dT%H-%M-%S")
            ));
        crate::safe_path::inside(&root, &path)?;
        let cwd = session.meta.cwd.as_ref().map(PathBuf::from);
        let command = format!("codex resume {id}");
        Ok(ResumePlan { path, command, cwd })
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }
}
