//! agentlog's own format: the unified model as JSON. It holds everything
//! every other format can, so converting to it never loses anything.

use crate::{Diagnostic, Fidelity, Format, FormatError, Read};
use agentlog_model::{Agent, Session};
use std::io::Write;
use std::path::Path;

/// The unified-model JSON format.
pub struct JsonFormat;

/// The registry entry.
pub static FORMAT: JsonFormat = JsonFormat;

impl Format for JsonFormat {
    fn name(&self) -> &'static str {
        "json"
    }

    fn description(&self) -> &'static str {
        "agentlog's unified session model as JSON (lossless for every format)"
    }

    fn agent(&self) -> Agent {
        Agent::Agentlog
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, _path: &Path, head: &[u8]) -> u8 {
        let text = crate::jsonl::head_text(head, 4096);
        let t = text.trim_start();
        // agentlog writes `meta` first: that is the unified model, even when
        // the session it holds came from Gemini (whose `sessionId` and
        // `projectHash` then appear in `meta.extra` and would look like a
        // Gemini chat to a looser test).
        if let Some(rest) = t.strip_prefix('{') {
            if rest.trim_start().starts_with("\"meta\"") && t.contains("\"agent\"") {
                // Above every agent's own score: the session inside may
                // carry that agent's markers (acpx's schema name, …).
                return 99;
            }
        }
        if t.starts_with('{')
            && t.contains("\"meta\"")
            && t.contains("\"agent\"")
            && t.contains("\"entries\"")
        {
            60
        } else {
            0
        }
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        let session: Session = serde_json::from_slice(bytes).map_err(|e| {
            FormatError::invalid(
                path,
                Some(e.line() as u64),
                format!("not an agentlog session JSON: {e}"),
            )
        })?;
        let mut diagnostics = Vec::new();
        if let Some(leaf) = &session.leaf_id {
            if !session.entries.iter().any(|e| &e.id == leaf) {
                diagnostics.push(Diagnostic::warning(
                    path,
                    None,
                    "unknown-leaf",
                    format!("leaf {leaf:?} is not an entry"),
                ));
            }
        }
        Ok(Read {
            session,
            diagnostics,
        })
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        serde_json::to_writer_pretty(&mut *out, session)
            .map_err(|e| FormatError::write("session JSON", std::io::Error::from(e)))?;
        out.write_all(b"\n")
            .map_err(|e| FormatError::write("session JSON", e))?;
        Ok(Fidelity::new("json"))
    }
}
