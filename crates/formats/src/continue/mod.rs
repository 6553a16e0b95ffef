//! Continue CLI sessions (`~/.continue/sessions/<id>.json`, listed in
//! `sessions.json` beside them), as `cn` 1.5 writes them: one JSON object,
//! `{sessionId, title, workspaceDirectory, history[], usage}`.
//!
//! - Each `history` item holds a chat `message` (`role`, `content` as a
//!   string or parts, `toolCalls` OpenAI-style, `usage` with
//!   `prompt_tokens`, `completion_tokens` and its reasoning share, the
//!   model), the item's `contextItems`, `editorState`, `reasoning` (text)
//!   and `toolCallStates`: each call's parsed arguments, status and
//!   `output` items, read as the call's result.
//! - Everything not mapped is kept in the entries' and the session's extra
//!   fields.
//!
//! Written item for item; another agent's session is written as the
//! history Continue keeps, which `cn --resume` continues (`resume --in
//! continue`).

mod read;
mod validate;
mod wire;
mod write;

use crate::env::DiscoverEnv;
use crate::{Diagnostic, Fidelity, Format, FormatError, Read, ResumePlan};
use agentlog_model::{Agent, Session};
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "continue";

/// The Continue CLI format.
pub struct ContinueFormat;

/// The registry entry.
pub static FORMAT: ContinueFormat = ContinueFormat;

/// Returns Continue's global directory: `$CONTINUE_GLOBAL_DIR`, else
/// `~/.continue`.
pub fn continue_dir(env: &DiscoverEnv) -> PathBuf {
    env.var_path("CONTINUE_GLOBAL_DIR")
        .unwrap_or_else(|| env.home.join(".continue"))
}

impl Format for ContinueFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Continue CLI session (sessions/<id>.json)"
    }

    fn agent(&self) -> Agent {
        Agent::Other("continue".into())
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let text = crate::jsonl::head_text(head, head.len());
        let shaped = text.contains("\"sessionId\"")
            && text.contains("\"history\"")
            && text.contains("\"workspaceDirectory\"");
        let in_sessions = path
            .parent()
            .and_then(|d| d.file_name())
            .is_some_and(|n| n == "sessions");
        match (shaped, in_sessions) {
            (true, true) => 90,
            (true, false) => 70,
            _ => 0,
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => vec![continue_dir(env).join("sessions")],
        };
        let mut out = Vec::new();
        for root in roots {
            crate::env::note_dir(&root);
            let Ok(entries) = std::fs::read_dir(&root) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                let is_session = p.extension().is_some_and(|x| x == "json")
                    && p.file_name().is_some_and(|n| n != wire::INDEX)
                    && e.file_type().is_ok_and(|t| t.is_file());
                if is_session {
                    out.push(p);
                }
            }
        }
        crate::env::sort_paths(&mut out);
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read(path, bytes)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(
        &self,
        session: &Session,
        out: &mut dyn std::io::Write,
    ) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }

    /// `cn --resume` continues the newest file of the sessions folder: the
    /// one just written.
    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        let cwd = crate::format::resume_cwd(session, FORMAT_NAME)?;
        let root = continue_dir(env).join("sessions");
        let id = crate::safe_path::component(&session.meta.id);
        let path = root.join(format!("{id}.json"));
        crate::safe_path::inside(&root, &path)?;
        Ok(ResumePlan {
            path,
            command: "cn --resume".into(),
            cwd: Some(PathBuf::from(cwd)),
        })
    }
}
