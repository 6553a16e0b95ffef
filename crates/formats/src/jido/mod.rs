//! jido_code's persisted session: one pretty-printed JSON object per
//! session, `~/.jido_code/sessions/{id}.json`, written when a session
//! closes and read back by `/resume`.
//!
//! The file holds `version`, `id`, `name`, `project_path`, `config`
//! (provider, model, temperature, max_tokens), `created_at`, `updated_at`,
//! `closed_at`, the `conversation` (messages with `id`, `role`, string
//! `content`, `timestamp`) and `todos` (`content`, `status`,
//! `active_form`). In the model: the name is the title, the project path
//! the working directory, the config the model configuration, each
//! conversation message a message entry (its id the entry id, each the
//! child of the one before) and the todos the session's todos. Fields the
//! model has no slot for (`language`, `prompt_history`,
//! `cumulative_usage`, `signature`, per-message `usage`, …) stay in the
//! `extra` maps; a message or a field of an unexpected shape is kept
//! verbatim, so reading then writing gives the same JSON value.
//!
//! A jido file holds plain text turns only. Writing another format's
//! session reports what it cannot hold: thinking, tool calls and results,
//! images, non-message entries, branches other than the active one. A
//! run's `run.start` text and `run.end` final answer (a codelia run log)
//! become a user and an assistant message.
//!
//! Differences from the real system (agentjido/jido_code): it writes keys
//! in alphabetical order and adds an HMAC `signature` over the pretty JSON,
//! keyed by a per-machine secret; agentlog writes the seed's key order and
//! keeps a signature it reads as an unknown field, but cannot re-sign a
//! file it changed (jido_code accepts unsigned files with a warning).

mod read;
pub mod validate;
mod wire;
mod write;

pub use read::decode;
pub use wire::to_pretty;
pub use write::encode;

use crate::env::{walk_files, DiscoverEnv};
use crate::{Diagnostic, Fidelity, Format, FormatError, Read};
use agentlog_model::{Agent, Session};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The jido format.
pub struct JidoFormat;

/// The registry entry.
pub static FORMAT: JidoFormat = JidoFormat;

impl Format for JidoFormat {
    fn name(&self) -> &'static str {
        "jido"
    }

    fn description(&self) -> &'static str {
        "jido_code persisted session (JSON)"
    }

    fn agent(&self) -> Agent {
        Agent::JidoCode
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if path.extension().is_some_and(|e| e != "json") {
            return 0;
        }
        let text = crate::jsonl::head_text(head, 64 * 1024);
        let t = text.trim_start();
        let keys = ["\"project_path\"", "\"conversation\"", "\"closed_at\""];
        let hits = keys.iter().filter(|k| t.contains(*k)).count();
        if t.starts_with('{') && hits == keys.len() {
            90
        } else if t.starts_with('{') && hits == 2 && t.contains("\"version\"") {
            60
        } else {
            0
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(self.name()) {
            Some(r) => r.to_vec(),
            None => vec![sessions_dir(env)],
        };
        roots
            .iter()
            .flat_map(|r| {
                walk_files(r, 0, &|p: &Path| {
                    p.extension().is_some_and(|e| e == "json")
                        && !p
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
            })
            .collect()
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        let doc: Value = serde_json::from_slice(bytes).map_err(|e| {
            FormatError::invalid(path, Some(e.line() as u64), format!("not valid JSON: {e}"))
        })?;
        let Value::Object(obj) = doc else {
            return Err(FormatError::invalid(
                path,
                None,
                "a jido session file must be a JSON object",
            ));
        };
        let mut diagnostics = Vec::new();
        let session = decode(path, &obj, &mut diagnostics);
        Ok(Read {
            session,
            diagnostics,
        })
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate_file(path)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        let (doc, fid) = encode(session);
        let mut buf = to_pretty(&doc).map_err(|e| FormatError::write("jido session", e))?;
        buf.push(b'\n');
        out.write_all(&buf)
            .map_err(|e| FormatError::write("jido session", e))?;
        Ok(fid)
    }
}

/// Returns jido_code's sessions directory, `~/.jido_code/sessions`.
pub fn sessions_dir(env: &DiscoverEnv) -> PathBuf {
    env.home_join(".jido_code").join("sessions")
}
