//! Qwen Code chats
//! (`~/.qwen/projects/<cwd with non-alphanumerics as '-'>/chats/<session id>.jsonl`).
//!
//! # Reading
//!
//! One record per line, `{uuid, parentUuid, sessionId, timestamp, type, cwd,
//! version, …}`, chained through `parentUuid` (the tree the CLI resumes
//! from). Every line becomes one entry with the record's `uuid` as its id
//! (`L<line>` when missing or repeated), so the file is written back line
//! for line.
//!
//! - `user`, `assistant` and `tool_result` records carry a Gemini-style
//!   `message` (`{role, parts[]}`): `{text}` -> text, `{text, thought: true}`
//!   -> thinking, `{functionCall: {id, name, args}}` -> tool call,
//!   `{functionResponse: {id, name, response}}` -> tool result (the
//!   `response.output` text, or the response as JSON), `{inlineData}` ->
//!   image; other parts are kept as blocks. `tool_result` records are tool
//!   messages; their `toolCallResult.status` other than `success` marks an
//!   error.
//! - `assistant.usageMetadata` is the usage: `promptTokenCount` includes
//!   `cachedContentTokenCount`, so `Usage::input = prompt - cached`; the
//!   output is `candidatesTokenCount`, plus `thoughtsTokenCount` when the
//!   total shows the candidates exclude them (Gemini's own counting).
//! - `system` records (`subtype`: `ui_telemetry`, `attribution_snapshot`,
//!   `chat_compression`, …) are event entries holding `systemPayload`
//!   verbatim; records of other types are kept as unknown records.
//!
//! # Writing
//!
//! A session read from Qwen Code is written back line for line. A session
//! from another format becomes a new chat (`user`, `assistant` with usage,
//! `tool_result` records, chained) that `qwen --resume <id>` continues; a
//! [`Fidelity`] report names what it cannot hold.

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
const FORMAT_NAME: &str = "qwen";
/// `Event::source` of Qwen Code system records.
const SOURCE: &str = "qwen";

/// The qwen format.
pub struct QwenFormat;

/// The registry entry.
pub static FORMAT: QwenFormat = QwenFormat;

/// Returns Qwen Code's runtime directory: `$QWEN_RUNTIME_DIR`, else
/// `$QWEN_HOME`, else `~/.qwen`.
pub fn qwen_dir(env: &DiscoverEnv) -> PathBuf {
    env.var_path("QWEN_RUNTIME_DIR")
        .or_else(|| env.var_path("QWEN_HOME"))
        .unwrap_or_else(|| env.home.join(".qwen"))
}

/// Returns the project directory name Qwen Code derives from a cwd: every
/// UTF-16 unit other than an ASCII letter or digit becomes `-` (as its
/// JavaScript `replace(/[^a-zA-Z0-9]/g, "-")` does).
pub fn project_id(cwd: &str) -> String {
    let mut out = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    out
}

/// Returns the session id a session has as a Qwen Code chat: its id when
/// that is a UUID, otherwise a UUID derived from it.
pub fn qwen_session_id(session: &Session) -> String {
    let id = &session.meta.id;
    if uuid::Uuid::parse_str(id).is_ok() {
        return id.clone();
    }
    crate::ids::stable_uuid(id).to_string()
}

/// True when the first JSON line looks like a Qwen Code chat record.
fn looks_like_chat(head: &[u8]) -> bool {
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
    obj.contains_key("uuid")
        && obj.contains_key("sessionId")
        && obj.contains_key("parentUuid")
        && matches!(
            obj.get("type").and_then(|t| t.as_str()),
            Some("user" | "assistant" | "tool_result" | "system")
        )
        && (obj.get("message").is_some_and(|m| m.get("parts").is_some())
            || obj.contains_key("systemPayload"))
}

impl Format for QwenFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Qwen Code chat (projects/<cwd>/chats/<id>.jsonl)"
    }

    fn agent(&self) -> Agent {
        Agent::Other("qwen".into())
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if !looks_like_chat(head) {
            return 0;
        }
        let in_chats = path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "chats");
        // `message.parts` is Qwen's (Claude's messages hold `content`), so
        // a chat outside Qwen's folder still beats Claude's 90.
        if in_chats {
            95
        } else {
            92
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => vec![qwen_dir(env).join("projects")],
        };
        let mut out = Vec::new();
        for root in roots {
            for project in list_dirs(&root) {
                out.extend(walk_files(&project.join("chats"), 0, &|p| {
                    p.extension().is_some_and(|x| x == "jsonl")
                }));
            }
        }
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        Ok(read::read(path, bytes))
    }

    fn validate(&self, path: &Path) -> Result<Vec<crate::Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn drift(&self, read: &Read) -> Vec<crate::drift::Drift> {
        read::drift(read)
    }

    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        let id = qwen_session_id(session);
        let cwd = crate::format::resume_cwd(session, FORMAT_NAME)?;
        let root = qwen_dir(env).join("projects");
        let path = root
            .join(crate::safe_path::component(&project_id(&cwd)))
            .join("chats")
            .join(crate::safe_path::component(&format!("{id}.jsonl")));
        crate::safe_path::inside(&root, &path)?;
        Ok(ResumePlan {
            path,
            command: format!("qwen --resume {}", crate::shell::quote(&id)),
            cwd: Some(PathBuf::from(cwd)),
        })
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_ids_replace_every_other_character() {
        assert_eq!(project_id("/tmp/agmock/qw1/proj"), "-tmp-agmock-qw1-proj");
        assert_eq!(project_id("/a b/é.x"), "-a-b---x");
        assert_eq!(project_id("/😀"), "---");
    }
}
