//! OpenHands sessions in its event store (`~/.openhands/sessions/<id>/`),
//! as `openhands-ai` 0.x writes them in headless mode and its server:
//! `events/<n>.json`, one event a file, numbered from 0.
//!
//! - An event is an action or an observation: `id`, `timestamp`, `source`
//!   (`user`, `agent`, `environment`), `message`, `action` with `args` or
//!   `observation` with `content` and `extras`, `cause` (the action an
//!   observation answers), and for tool use `tool_call_metadata`: the
//!   function and call id and the model's whole response (its reasoning,
//!   the call's arguments, the response's usage).
//! - `system` is the system prompt (marked injected); `message` actions are
//!   prompts and answers; actions with tool call metadata are the model's
//!   calls (`finish` also gives its final thought as the answer's text),
//!   with the response's reasoning and usage on the first call of each
//!   response; observations with it are the calls' results. Other events
//!   (`recall`, `agent_state_changed`, `null`, …) are kept as events.
//!
//! The session is named by its `events` directory.
//!
//! The CLI of 1.x (PyPI `openhands`, on its software agent SDK) keeps
//! conversations in `~/.openhands/conversations/<id>/` instead:
//! `base_state.json` and `events/event-<n>-<uuid>.json` (see
//! `conversation.rs`); such a session is named by its `events` folder too.
//! Sessions are written as such conversations (`write.rs`): a folder of
//! files, which `openhands --resume <id>` continues.

mod conversation;
mod read;
mod validate;
mod wire;
mod write;

use crate::env::{list_dirs, DiscoverEnv};
use crate::{Diagnostic, Fidelity, Format, FormatError, Read, ResumePlan, Written};
use agentlog_model::{Agent, Session};
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "openhands";

/// The OpenHands format.
pub struct OpenHandsFormat;

/// The registry entry.
pub static FORMAT: OpenHandsFormat = OpenHandsFormat;

/// Returns OpenHands' file store: `$FILE_STORE_PATH`, else `~/.openhands`.
pub fn file_store(env: &DiscoverEnv) -> PathBuf {
    env.var_path("FILE_STORE_PATH")
        .unwrap_or_else(|| env.home.join(".openhands"))
}

impl Format for OpenHandsFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "OpenHands event store (sessions/<id>/events/ or conversations/<id>/events/)"
    }

    fn agent(&self) -> Agent {
        Agent::Other("openhands".into())
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if head.is_empty()
            && wire::events_dir(path)
                .is_some_and(|d| d.join("0.json").is_file() || conversation::is_conversation(&d))
        {
            return 95;
        }
        let text = crate::jsonl::head_text(head, head.len());
        if path
            .file_name()
            .is_some_and(|n| n == conversation::BASE_STATE)
            && text.contains("\"persistence_dir\"")
        {
            return 85;
        }
        let event = text.contains("\"source\"")
            && (text.contains("\"action\"")
                || text.contains("\"observation\"")
                || text.contains("\"kind\""));
        if event && wire::events_dir(path).is_some() {
            90
        } else {
            0
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => {
                // 0.x's event store, and the 1.x CLI's conversations (always
                // under `~/.openhands`).
                vec![
                    file_store(env).join("sessions"),
                    env.home.join(".openhands/conversations"),
                ]
            }
        };
        let mut out = Vec::new();
        for root in roots {
            crate::env::note_dir(&root);
            for session in list_dirs(&root) {
                // (a folder being written, or left by a crash, is hidden;
                // a scrub's backup is named so)
                if session.file_name().is_some_and(|n| {
                    let n = n.to_string_lossy();
                    n.starts_with('.') || n.contains(crate::env::BACKUP_MARK)
                }) {
                    continue;
                }
                let events = session.join(wire::EVENTS);
                if events.is_dir() {
                    out.push(events);
                }
            }
        }
        out
    }

    fn read_path(&self, path: &Path) -> Result<Read, FormatError> {
        let mut read = read::read(path)?;
        read.diagnostics = crate::diag::summarize(std::mem::take(&mut read.diagnostics), 100);
        Ok(read)
    }

    fn read_bytes(&self, path: &Path, _bytes: &[u8]) -> Result<Read, FormatError> {
        // The events are many files: read from the directory, whatever file
        // of it was given.
        read::read(path)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn writes_folder(&self) -> bool {
        true
    }

    fn write(
        &self,
        _session: &Session,
        _out: &mut dyn std::io::Write,
    ) -> Result<Fidelity, FormatError> {
        Err(FormatError::Unsupported {
            format: FORMAT_NAME,
            operation: "writing one stream: a conversation is a folder of files (write it into a folder, with -o DIR)",
        })
    }

    fn write_session(&self, session: &Session) -> Result<(Written, Fidelity), FormatError> {
        write::write(session)
    }

    /// The session's folder: `conversations/<id>/` (1.x), `sessions/<id>/`
    /// (0.x), the folder holding `events`.
    fn session_folder(&self, path: &Path) -> Option<PathBuf> {
        let path = std::path::absolute(path).ok()?;
        wire::events_dir(&path)?.parent().map(Path::to_path_buf)
    }

    /// `base_state.json` and the event files in `events/` (`event-<n>-<id>.json`
    /// in 1.x, `<n>.json` in 0.x).
    fn is_session_file(&self, rel: &Path) -> bool {
        if rel == Path::new(conversation::BASE_STATE) {
            return true;
        }
        let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
        rel.parent() == Some(Path::new(wire::EVENTS))
            && (conversation::event_number(name).is_some()
                || wire::store_event_number(name).is_some())
    }

    /// The CLI continues `~/.openhands/conversations/<id>/` (the id as 32
    /// hex digits) with `openhands --resume <id>`, in the directory it
    /// works in.
    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        let cwd = crate::format::resume_cwd(session, FORMAT_NAME)?;
        let id = conversation_id(&session.meta.id);
        Ok(ResumePlan {
            path: env.home.join(".openhands/conversations").join(&id),
            command: format!("openhands --resume {id}"),
            cwd: Some(PathBuf::from(cwd)),
        })
    }
}

/// The conversation id OpenHands is given for a session: its own id when
/// that is a UUID, else one made from it (the same every time), as the 32
/// hex digits OpenHands names the folder with.
fn conversation_id(session_id: &str) -> String {
    crate::ids::stable_uuid(session_id).simple().to_string()
}
