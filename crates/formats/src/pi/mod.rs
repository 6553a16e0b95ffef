//! pi / oh-my-pi session trees (JSONL, versions 1 to 3).
//!
//! A pi session file starts with a header record (`{"type":"session",…}`)
//! followed by one entry per line. Since version 2 the entries form a tree
//! through `id`/`parentId`; version 1 files are linear and have no ids.
//! Version 3 renamed the legacy `hookMessage` role to `custom`.
//!
//! Reading does not migrate: a version 1 file reads with ids derived from
//! line numbers (`line<N>`) and a linear parent chain, and writes back
//! without ids, as it was. Migration (what pi does on open) lives in
//! `agentlog_store::pi`.
//!
//! The mapping keeps every field. Where the model cannot tell a missing key
//! from a default (`content` of a message, the token counts of `usage`, an
//! entry's `parentId`), the missing key names are listed under the
//! [`ABSENT_KEY`] of the matching `extra` map. Message roles map as
//! `user`/`assistant` to [`Role::User`]/[`Role::Assistant`], `toolResult` to
//! [`Role::Tool`], and every other role (`bashExecution`, `custom`,
//! `hookMessage`, `branchSummary`, `compactionSummary`) to
//! [`Role::Custom`]. Usage maps `input`, `output`, `cacheRead`, `cacheWrite`,
//! `totalTokens` and `cost.total`; the whole `cost` object stays in the
//! usage's `extra`.
//!
//! Writing a session that did not come from a pi file produces a version 3
//! file. Entry kinds pi has no record for (run lifecycle, LLM snapshots,
//! tool outputs, events, resume markers, unknown records) are carried as pi
//! `custom` entries with `customType` `agentlog.<kind>` and the model's JSON
//! of the entry as `data`; pi keeps them and leaves them out of the context.
//! A message holding several tool results becomes one `toolResult` message
//! per result (ids `<id>`, `<id>-1`, …).
//!
//! [`Role::User`]: agentlog_model::Role::User
//! [`Role::Assistant`]: agentlog_model::Role::Assistant
//! [`Role::Tool`]: agentlog_model::Role::Tool
//! [`Role::Custom`]: agentlog_model::Role::Custom

mod paths;
mod read;
mod validate;
mod wire;
mod write;

pub use paths::{encode_cwd, session_file_name};
pub use read::{
    entry_from_record, message_from_value, meta_from_header, read_session, read_session_streaming,
    Ids,
};
pub(crate) use wire::version_of_meta;
pub use wire::{
    header_version, is_raw_lines, is_v1, ABSENT_KEY, CURRENT_VERSION, ENTRY_TYPES, RAW_LINES,
};
pub use write::message_to_value;

use crate::env::DiscoverEnv;
use crate::jsonl;
use crate::{Diagnostic, Fidelity, Format, FormatError, Read, ResumePlan};
use agentlog_model::{Agent, Session};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The pi format.
pub struct PiFormat;

/// The registry entry.
pub static FORMAT: PiFormat = PiFormat;

impl Format for PiFormat {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn description(&self) -> &'static str {
        "pi / oh-my-pi session tree (JSONL, versions 1-3)"
    }

    fn agent(&self) -> Agent {
        Agent::Pi
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if let Some(v) = jsonl::first_value(head) {
            let is_header = jsonl::str_field(&v, "type") == Some("session")
                && v.get("id").is_some_and(Value::is_string);
            return if is_header { 95 } else { 0 };
        }
        // A header longer than the detection window.
        let text = jsonl::head_text(head, 64);
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        if compact.starts_with("{\"type\":\"session\"") {
            return if path.extension().is_some_and(|e| e == "jsonl") {
                80
            } else {
                60
            };
        }
        0
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots: Vec<PathBuf> = match env.roots_for("pi") {
            Some(r) => r.to_vec(),
            None => paths::default_roots(env),
        };
        let mut out = Vec::new();
        for root in roots {
            out.extend(crate::env::walk_files(&root, 2, &|p| {
                p.extension().is_some_and(|e| e == "jsonl")
            }));
        }
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read_session(path, bytes)
    }

    /// Streams the file a line at a time (it is never in memory whole).
    fn read_path(&self, path: &Path) -> Result<Read, FormatError> {
        read_session_streaming(path)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        paths::resume_plan(session, env)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        let mut w = write::Writer::new(session);
        let line = |out: &mut dyn Write,
                    record: &serde_json::Map<String, Value>|
         -> Result<(), FormatError> {
            let mut buf = serde_json::to_vec(record)
                .map_err(|e| FormatError::write("a pi record", std::io::Error::from(e)))?;
            buf.push(b'\n');
            out.write_all(&buf)
                .map_err(|e| FormatError::write("a pi session", e))
        };
        if let Some(header) = w.header() {
            line(out, &header)?;
        }
        let mut prev: Option<&str> = None;
        for e in &session.entries {
            for record in w.entry(e, prev) {
                line(out, &record)?;
            }
            prev = Some(&e.id);
        }
        Ok(w.fidelity)
    }
}
