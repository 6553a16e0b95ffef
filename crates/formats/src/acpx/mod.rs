//! acpx session records (`~/.acpx/sessions/<acpxRecordId>.json`) and their
//! NDJSON audit logs.
//!
//! The seed document ("ACPX Session Model") specifies a camelCase record
//! with the conversation in a Zed-style `thread` (`User` / `Agent` /
//! `"Resume"` messages) and runtime bookkeeping in an `acpx` namespace, and
//! an audit log `<id>.events.ndjson` of enveloped events with rotated
//! segments `<id>.events.<n>.ndjson`. That is what agentlog writes.
//!
//! The real acpx differs, and both of its shapes are read too (and written
//! back in the shape they were read in):
//! - on disk it writes a flat snake_case record (`acpx_record_id`,
//!   top-level `messages`, `updated_at`, `cumulative_token_usage`, …,
//!   `event_log`, `last_seq`) — [`Layout::Disk`];
//! - in memory and in its replay bundles the record is camelCase with the
//!   thread fields flat (`acpxRecordId`, `messages`, `eventLog`) —
//!   [`Layout::Flat`];
//! - its event log is `<id>.stream.ndjson` with bare ACP JSON-RPC lines and
//!   no envelope; replay bundles wrap them as `{seq, at, direction,
//!   message}`. [`events::parse_line`] reads all three line shapes.
//!
//! A record read in acpx's on-disk shape takes the token usage acpx kept
//! only in its event log (`turn_result` lines of `<id>.stream.ndjson`
//! beside it) when the record holds none.
//!
//! `resume --in acpx` writes the on-disk shape into acpx's store, pointing
//! at a Gemini CLI chat that acpx continues through `gemini --acp` (see
//! `resume.rs`: acpx holds no conversation of its own).
//!
//! [`validate::problems`] applies the seed's strictness rules;
//! [`acp::apply_update`] is the seed's ACP mapping (the store in
//! `agentlog-store` uses it for every `session_update` event).

mod read;
mod resume;
pub mod validate;
mod wire;
mod write;

pub use read::{read_record, session_from_record};
pub use validate::validate_text;
pub use wire::{acp, events, record};
pub use write::{record_from_session, RecordOut};

pub use record::{
    parse_record, record_to_string, record_to_value, AcpxState, AgentMessage, Content,
    EventLogState, Layout, Opt, ParsedRecord, SessionRecord, Thread, ThreadMessage, ToolResult,
    ToolResults, ToolUse, UserMessage, SCHEMA,
};

use crate::{Diagnostic, Fidelity, Format, FormatError, Read};
use agentlog_model::{Agent, Session};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The acpx format.
pub struct AcpxFormat;

/// The registry entry.
pub static FORMAT: AcpxFormat = AcpxFormat;

/// Returns acpx's sessions directory under `home`.
pub fn sessions_dir(home: &Path) -> PathBuf {
    home.join(".acpx").join("sessions")
}

impl Format for AcpxFormat {
    fn name(&self) -> &'static str {
        "acpx"
    }

    fn description(&self) -> &'static str {
        "acpx session record (JSON, seed or on-disk shape) and its NDJSON event log"
    }

    fn agent(&self) -> Agent {
        Agent::Acpx
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let text = crate::jsonl::head_text(head, 4096);
        let t = text.trim_start();
        if t.starts_with('{') && t.contains("\"acpx.session.v1\"") {
            return 95;
        }
        if t.starts_with('{')
            && (t.contains("\"acpxRecordId\"") || t.contains("\"acpx_record_id\""))
        {
            return 80;
        }
        if read::is_event_log(path)
            && (t.starts_with("{\"eventVersion\"") || t.contains("\"acpxRecordId\""))
        {
            return 70;
        }
        if read::is_event_log(path) && t.starts_with("{\"seq\"") && t.contains("\"direction\"") {
            return 60;
        }
        0
    }

    fn discover(&self, env: &crate::env::DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for("acpx") {
            Some(r) => r.to_vec(),
            None => vec![sessions_dir(&env.home)],
        };
        let mut out = Vec::new();
        for root in roots {
            out.extend(crate::env::walk_files(&root, 0, &|p: &Path| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.ends_with(".json") && !name.starts_with('.') && name != "index.json"
            }));
        }
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read(path, bytes)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate_file(path)
    }

    fn resume_plan(
        &self,
        session: &Session,
        env: &crate::env::DiscoverEnv,
    ) -> Result<crate::ResumePlan, FormatError> {
        resume::plan(session, env)
    }

    fn write_resumable(
        &self,
        session: &Session,
        plan: &crate::ResumePlan,
    ) -> Result<(crate::Written, Fidelity), FormatError> {
        let mut bytes = Vec::new();
        let fidelity = resume::write(session, plan, &mut bytes)?;
        Ok((crate::Written::File(bytes), fidelity))
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }
}
