//! Factory Droid sessions, in the two shapes Droid writes:
//!
//! - its session store (`~/.factory/sessions/<id>.jsonl`, or under
//!   `$DROID_SESSIONS_DIR`): a `session_start` record (id, title, cwd,
//!   owner, Droid version) followed by `message` records (`id`, `parentId`,
//!   `timestamp`, `message: {role, content[]}`) whose content blocks are
//!   Anthropic-style: `text`, `thinking`, `tool_use`, `tool_result`,
//!   `image`;
//! - the stream of `droid exec --output-format stream-json`: `message`
//!   (`role`, `text`), `tool_call` (`toolCallId`, `toolName`,
//!   `parameters`), `tool_result` (`toolCallId`, `value`), `completion`
//!   (`finalText`), each with `session_id` and `timestamp`.
//!
//! Records of other types are kept verbatim. Droid opens a session with a
//! user message of its own (`context-…`, `<system-reminder>` blocks): it is
//! marked injected. Written as a session-store file (see `write.rs`) that
//! `droid --resume <id>` continues. Checked against a file Droid 0.225.2
//! (`@factory/cli` from npm) wrote against the mock model server, and
//! public sample files of older shapes.

//!
//! The module's files are those of every format module: `wire.rs` (record
//! types, roles, content blocks, the settings' token usage), `read.rs` (the
//! records into a session) and `validate.rs` (what a session must hold).

mod read;
mod validate;
mod wire;
mod write;

use crate::env::{walk_files, DiscoverEnv};
use crate::{Diagnostic, Fidelity, Format, FormatError, Read, ResumePlan};
use agentlog_model::{Agent, Session};
use std::path::{Path, PathBuf};
use wire::first_type;

/// The registry name.
const FORMAT_NAME: &str = "droid";
/// Key in `Entry::extra` telling how a `message` record gave its parent
/// when `Entry::parent_id` does not: `absent` (none given: the previous
/// record), `null`, or `{"id": …}` for an id that names no entry (the
/// session's own).
const PARENT_MARK: &str = "$parentId";

/// The Factory Droid format.
pub struct DroidFormat;

/// The registry entry.
pub static FORMAT: DroidFormat = DroidFormat;

/// Returns where Droid keeps sessions: `$DROID_SESSIONS_DIR`, else
/// `~/.factory/sessions`.
pub fn sessions_dir(env: &DiscoverEnv) -> PathBuf {
    env.var_path("DROID_SESSIONS_DIR")
        .unwrap_or_else(|| env.home.join(".factory").join("sessions"))
}

impl Format for DroidFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Factory Droid session (sessions/<id>.jsonl, or exec stream-json)"
    }

    fn agent(&self) -> Agent {
        Agent::Other("droid".into())
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let in_factory = path
            .to_str()
            .is_some_and(|p| p.contains("/.factory/sessions/"));
        match first_type(head) {
            Some((ty, o)) if ty == "session_start" && o.contains_key("id") => 90,
            Some((ty, o))
                if ["message", "tool_call", "tool_result", "completion"].contains(&ty.as_str())
                    && o.contains_key("session_id")
                    && (o.contains_key("text")
                        || o.contains_key("toolCallId")
                        || o.contains_key("finalText")) =>
            {
                80
            }
            Some(_) if in_factory => 40,
            _ => 0,
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => vec![sessions_dir(env)],
        };
        roots
            .iter()
            .flat_map(|r| {
                walk_files(r, 3, &|p: &Path| {
                    p.extension().is_some_and(|e| e == "jsonl")
                        && !p
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
            })
            .collect()
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read(path, bytes)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    /// Returns `<sessions>/<cwd with / as ->/<id>.jsonl` (where Droid keeps
    /// a session of that folder) and `droid --resume <id>`.
    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        let cwd = crate::format::resume_cwd(session, FORMAT_NAME)?;
        let id = droid_session_id(session);
        let root = sessions_dir(env);
        let path = root
            .join(crate::safe_path::component(&cwd.replace('/', "-")))
            .join(crate::safe_path::component(&format!("{id}.jsonl")));
        crate::safe_path::inside(&root, &path)?;
        Ok(ResumePlan {
            path,
            command: format!("droid --resume {}", crate::shell::quote(&id)),
            cwd: Some(PathBuf::from(cwd)),
        })
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
}

/// The id a session has as a Droid session: its own when it came from
/// Droid or is a UUID (Droid's ids are), else one derived from it.
pub fn droid_session_id(session: &Session) -> String {
    let id = &session.meta.id;
    if session.meta.format.as_deref() == Some(FORMAT_NAME) || uuid::Uuid::parse_str(id).is_ok() {
        return id.clone();
    }
    crate::ids::stable_uuid(id).to_string()
}
