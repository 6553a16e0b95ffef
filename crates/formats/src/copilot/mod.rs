//! GitHub Copilot CLI sessions
//! (`~/.copilot/session-state/<id>/events.jsonl`, older `<id>.jsonl`).
//!
//! # Reading
//!
//! The file is an event stream, one `{type, data, id, timestamp, parentId}`
//! object per line. Every line becomes one entry whose id is the event's
//! `id` (`L<line>` when it is missing or repeats) and whose parent is its
//! `parentId`, so the file is written back line for line.
//!
//! - `user.message` -> a user message (`data.content`), `system.message` ->
//!   a system message marked injected (`system`);
//! - `assistant.message` -> an assistant message: `reasoningText` becomes a
//!   thinking block, `content` a text block, each `toolRequests[]` item a
//!   tool call (`toolCallId`, `name`, `arguments`). A message with
//!   `parentToolCallId` runs inside a subagent and is marked sidechain;
//!   `assistant.reasoning` is a thinking-only assistant message;
//! - `tool.execution_complete` -> a tool message with one tool result
//!   (`result.content`; `success: false` is an error), named after its call;
//! - `session.usage_record` (1.0.6x and later) gives the usage of the next
//!   assistant message: Copilot's `inputTokens` include cached tokens, so
//!   `Usage::input = inputTokens - cacheReadTokens`; older files without it
//!   count the message's own `outputTokens`;
//! - `session.start` (and `session.resume`) give the id, version, cwd, start
//!   time and model; the sibling `workspace.yaml`'s `name` the title.
//! - Every other type (turn boundaries, tool starts, `session.shutdown`
//!   with its per-model metrics, `subagent.*`, `session.truncation`,
//!   `hook.*`, `abort`, …) is an event entry holding `data` verbatim.
//!
//! Fields the model has no place for stay in the entry's and message's
//! extras; a line that is not an event object is kept as an unknown record.
//!
//! # Writing
//!
//! A session read from Copilot is written back line for line. A session from
//! another format becomes a new event stream (`session.start`, then
//! `user.message`, `session.usage_record` + `assistant.message`,
//! `tool.execution_complete` for the active branch), which `copilot
//! --resume=<id>` continues; a [`Fidelity`] report names what it cannot hold.

mod read;
mod validate;
mod wire;
mod write;

use crate::env::{list_dirs, walk_files, DiscoverEnv};
use crate::{Fidelity, Format, FormatError, Read, ResumePlan};
use agentlog_model::{Agent, Session};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "copilot";
/// `Event::source` of Copilot events.
const SOURCE: &str = "copilot";

/// The copilot format.
pub struct CopilotFormat;

/// The registry entry.
pub static FORMAT: CopilotFormat = CopilotFormat;

/// Returns Copilot's home: `$COPILOT_HOME`, else `~/.copilot`.
pub fn copilot_dir(env: &DiscoverEnv) -> PathBuf {
    env.var_path("COPILOT_HOME")
        .unwrap_or_else(|| env.home.join(".copilot"))
}

/// Returns the session id a session has as a Copilot session: its id when
/// that is a UUID, otherwise a UUID derived from it.
pub fn copilot_session_id(session: &Session) -> String {
    let id = &session.meta.id;
    if uuid::Uuid::parse_str(id).is_ok() {
        return id.clone();
    }
    crate::ids::stable_uuid(id).to_string()
}

/// True when the first JSON line looks like a Copilot event.
fn looks_like_events(head: &[u8]) -> bool {
    let Some(line) = crate::jsonl::lines(head)
        .find(|l| !crate::jsonl::is_blank(l.bytes))
        .map(|l| l.bytes)
    else {
        return false;
    };
    let Ok(serde_json::Value::Object(obj)) = serde_json::from_slice::<serde_json::Value>(line)
    else {
        return false;
    };
    let typ = obj.get("type").and_then(|t| t.as_str()).unwrap_or("");
    obj.get("data").is_some_and(serde_json::Value::is_object)
        && (typ.starts_with("session.")
            || typ.starts_with("user.")
            || typ.starts_with("assistant.")
            || typ.starts_with("system."))
}

impl Format for CopilotFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "GitHub Copilot CLI session events (session-state/<id>/events.jsonl)"
    }

    fn agent(&self) -> Agent {
        Agent::Copilot
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if head.is_empty() {
            return if path.join("events.jsonl").is_file() && path.join("workspace.yaml").is_file() {
                80
            } else {
                0
            };
        }
        if !looks_like_events(head) {
            return 0;
        }
        if path.file_name().is_some_and(|n| n == "events.jsonl") {
            95
        } else {
            85
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => vec![copilot_dir(env).join("session-state")],
        };
        let mut out = Vec::new();
        for root in roots {
            // Bare `<id>.jsonl` files of early versions.
            out.extend(walk_files(&root, 0, &|p| {
                p.extension().is_some_and(|x| x == "jsonl")
            }));
            for dir in list_dirs(&root) {
                crate::env::note_dir(&dir);
                let events = dir.join("events.jsonl");
                if events.is_file() {
                    out.push(events);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        Ok(read::read(path, bytes))
    }

    fn validate(&self, path: &Path) -> Result<Vec<crate::Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn read_path(&self, path: &Path) -> Result<Read, FormatError> {
        let file = if path.is_dir() {
            path.join("events.jsonl")
        } else {
            path.to_path_buf()
        };
        let bytes = std::fs::read(&file).map_err(|e| FormatError::io(&file, e))?;
        self.read_bytes(&file, &bytes)
    }

    fn drift(&self, read: &Read) -> Vec<crate::drift::Drift> {
        drift(read)
    }

    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        let id = copilot_session_id(session);
        let root = copilot_dir(env).join("session-state");
        let path = root
            .join(crate::safe_path::component(&id))
            .join("events.jsonl");
        crate::safe_path::inside(&root, &path)?;
        let cwd = session.meta.cwd.clone().filter(|c| !c.is_empty());
        let command = format!("copilot --resume={}", crate::shell::quote(&id));
        Ok(ResumePlan {
            path,
            command,
            cwd: cwd.map(PathBuf::from),
        })
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }
}

/// The event types and `data` fields not seen in real files of the
/// versions verified (see [`wire::KNOWN`]).
fn drift(read: &Read) -> Vec<crate::drift::Drift> {
    use crate::drift::{DriftKind, Tally};
    use agentlog_model::{EntryKind, Role};
    let mut t = Tally::default();
    crate::drift::unknown_records(read, &mut t);
    let known = |typ: &str| wire::KNOWN.iter().find(|(k, _)| *k == typ).map(|(_, f)| *f);
    for e in &read.session.entries {
        t.fields(
            "envelope",
            e.extra.keys(),
            &["type", "data", "id", "timestamp", "parentId"],
            e.line,
        );
        let (typ, keys): (String, Vec<&String>) = match &e.kind {
            EntryKind::Event {
                event_type,
                payload,
                ..
            } => (
                event_type.clone(),
                payload
                    .as_object()
                    .map(|o| o.keys().collect())
                    .unwrap_or_default(),
            ),
            EntryKind::Message(m) => {
                let typ = match (&m.role, e.extra.get(write::TYPE_KEY)) {
                    (_, Some(serde_json::Value::String(t))) => t.as_str(),
                    (Role::User, _) => "user.message",
                    (Role::System, _) => "system.message",
                    (Role::Tool, _) => "tool.execution_complete",
                    _ => "assistant.message",
                };
                (typ.to_string(), m.extra.keys().collect())
            }
            _ => continue,
        };
        match known(&typ) {
            Some(fields) => t.fields(&typ, keys, fields, e.line),
            None => t.add(DriftKind::RecordType, &typ, e.line),
        }
    }
    t.into_items()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_event_lines_only() {
        let p = Path::new("x.jsonl");
        assert!(FORMAT.detect(p, br#"{"type":"session.start","data":{}}"#) > 0);
        assert_eq!(FORMAT.detect(p, br#"{"type":"session","version":3}"#), 0);
        assert_eq!(FORMAT.detect(p, b"not json"), 0);
    }
}
