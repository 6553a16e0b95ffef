//! Kimi Code CLI sessions (`~/.kimi/sessions/<md5 of the work dir>/<id>/`),
//! as `kimi-cli` 1.x writes them:
//!
//! - `context.jsonl`, the model's context a record a line: chat messages
//!   (`user`, `assistant` with `think`/`text` parts and OpenAI-style
//!   `tool_calls`, `tool` results) and Kimi's own records, `_system_prompt`
//!   (the system prompt, marked injected), `_checkpoint` and `_usage`
//!   (kept as events). The session is named by this file.
//! - `wire.jsonl`, the UI's event stream: each `StatusUpdate` carries one
//!   model step's `token_usage` (`input_other`, `input_cache_read`,
//!   `input_cache_creation`, `output`) and the response's `message_id`, and
//!   is matched with the step's assistant message in order; `TurnBegin`
//!   and `StatusUpdate` times date the prompts and answers.
//! - `state.json`: the title (`custom_title`), todos and approval state,
//!   kept in the session's extra fields; `~/.kimi/kimi.json` names the
//!   work directory whose MD5 the session's folder is named by.
//!
//! Written back line for line; sessions of other agents are written as the
//! chat messages of Kimi's context, where `kimi -r <id>` continues them
//! (`resume --in kimi`).

mod read;
mod validate;
mod wire;
mod write;

use crate::env::{list_dirs, DiscoverEnv};
use crate::{Diagnostic, Fidelity, Format, FormatError, Read, ResumePlan};
use agentlog_model::Agent;
use agentlog_model::Session;
use md5::{Digest, Md5};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "kimi";

/// The Kimi Code CLI format.
pub struct KimiFormat;

/// The registry entry.
pub static FORMAT: KimiFormat = KimiFormat;

/// Returns Kimi's share directory: `$KIMI_SHARE_DIR`, else `~/.kimi`.
pub fn kimi_dir(env: &DiscoverEnv) -> PathBuf {
    env.var_path("KIMI_SHARE_DIR")
        .unwrap_or_else(|| env.home.join(".kimi"))
}

impl Format for KimiFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Kimi Code CLI session (sessions/<md5 of cwd>/<id>/context.jsonl)"
    }

    fn agent(&self) -> Agent {
        Agent::Other("kimi".into())
    }

    fn extension(&self) -> &'static str {
        "jsonl"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let named = path.file_name().is_some_and(|n| n == wire::CONTEXT);
        let text = crate::jsonl::head_text(head, head.len());
        let own = text.contains("\"_system_prompt\"") || text.contains("\"_checkpoint\"");
        match (named, own) {
            (true, true) => 95,
            (false, true) => 60,
            (true, false) if text.contains("\"role\"") => 40,
            _ => 0,
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => vec![kimi_dir(env).join("sessions")],
        };
        let mut out = Vec::new();
        for root in roots {
            crate::env::note_dir(&root);
            for work_dir in list_dirs(&root) {
                crate::env::note_dir(&work_dir);
                for session in list_dirs(&work_dir) {
                    let f = session.join(wire::CONTEXT);
                    if f.is_file() {
                        out.push(f);
                    }
                }
            }
        }
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read(path, bytes)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        let cwd = crate::format::resume_cwd(session, FORMAT_NAME)?;
        let id = crate::safe_path::component(&session.meta.id);
        let root = kimi_dir(env).join("sessions");
        let path = root
            .join(format!("{:x}", Md5::digest(cwd.as_bytes())))
            .join(&id)
            .join(wire::CONTEXT);
        crate::safe_path::inside(&root, &path)?;
        Ok(ResumePlan {
            path,
            command: format!("kimi -r {}", crate::shell::quote(&id)),
            cwd: Some(PathBuf::from(cwd)),
        })
    }

    fn register_resumed(
        &self,
        session: &Session,
        plan: &ResumePlan,
        env: &DiscoverEnv,
    ) -> Result<(), FormatError> {
        let Some(cwd) = &plan.cwd else {
            return Ok(());
        };
        let id = plan
            .path
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or(&session.meta.id);
        write::register_work_dir(&kimi_dir(env).join("kimi.json"), &cwd.to_string_lossy(), id)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }

    fn drift(&self, read: &Read) -> Vec<crate::drift::Drift> {
        let mut t = crate::drift::Tally::default();
        crate::drift::unknown_records(read, &mut t);
        for e in &read.session.entries {
            if let agentlog_model::EntryKind::Event { event_type, .. } = &e.kind {
                if !wire::OWN_RECORDS.contains(&event_type.as_str()) {
                    t.add(crate::drift::DriftKind::RecordType, event_type, e.line);
                }
            }
            if let Some(m) = e.message() {
                t.fields("message", m.extra.keys(), wire::MESSAGE_FIELDS, e.line);
            }
        }
        t.into_items()
    }
}
