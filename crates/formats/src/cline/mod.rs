//! Cline CLI sessions (`~/.cline/data/sessions/<id>/<id>.messages.json`,
//! with `<id>.json` beside it), as Cline CLI 3.x writes them.
//!
//! - `<id>.json` gives the session id, start and end times, cwd, provider,
//!   model, title (`metadata.title`) and the CLI version
//!   (`metadata.sessionHistoryOrigin.version`); its other fields are kept in
//!   `meta.extra`.
//! - `<id>.messages.json` is `{version, messages[], …}`: Anthropic-style
//!   messages (`role`, `content` blocks, `id`, `ts` in epoch milliseconds,
//!   `modelInfo`, `metrics`), one entry each, chained in order. Blocks:
//!   `text`, `thinking`, `tool_use` -> tool call, `tool_result` -> tool
//!   result (string content as text; each item of an array as text when it
//!   is a text block, else as its JSON), `image`; others are kept.
//! - `metrics` is the usage: `inputTokens` includes `cacheReadTokens`, so
//!   `Usage::input = inputTokens - cacheReadTokens`.
//!
//! Written message for message, and other agents' sessions as Cline's
//! messages (`convert --to cline`). Not a `resume --in` target: `cline --id
//! <id>` continues only sessions listed in Cline's own session database
//! (`data/db/sessions.db`), which agentlog does not write into.
//!
//! The module's files are those of every format module: `wire.rs` (the
//! files' names and field readers), `read.rs` (the two files into a
//! session) and `validate.rs` (what a session must hold).

mod read;
mod validate;
mod wire;
mod write;

use crate::env::{list_dirs, DiscoverEnv};
use crate::{Diagnostic, Fidelity, Format, FormatError, Read};
use agentlog_model::{Agent, Session};
use std::path::{Path, PathBuf};
use wire::MESSAGES;

pub use wire::usage_of;

/// The registry name.
const FORMAT_NAME: &str = "cline";

/// The cline format.
pub struct ClineFormat;

/// The registry entry.
pub static FORMAT: ClineFormat = ClineFormat;

/// Returns Cline's data directory: `$CLINE_DIR/data`, else `~/.cline/data`.
pub fn cline_data_dir(env: &DiscoverEnv) -> PathBuf {
    env.var_path("CLINE_DIR")
        .unwrap_or_else(|| env.home.join(".cline"))
        .join("data")
}

impl Format for ClineFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Cline CLI session (sessions/<id>/<id>.messages.json)"
    }

    fn agent(&self) -> Agent {
        Agent::Other("cline".into())
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let named = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(MESSAGES));
        let text = String::from_utf8_lossy(head);
        let shaped = text.contains("\"messages\"") && text.contains("\"sessionId\"");
        match (named, shaped) {
            (true, true) => 95,
            (true, false) => 40,
            _ => 0,
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => vec![cline_data_dir(env).join("sessions")],
        };
        let mut out = Vec::new();
        for root in roots {
            for dir in list_dirs(&root) {
                let Some(id) = dir.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                crate::env::note_dir(&dir);
                let f = dir.join(format!("{id}{MESSAGES}"));
                if f.is_file() {
                    out.push(f);
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
