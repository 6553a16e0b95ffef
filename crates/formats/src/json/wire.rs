//! The document: the unified model's own serde form
//! ([`agentlog_model::Session`]), which agentlog writes with `meta` first.

use crate::FormatError;
use agentlog_model::Session;
use std::path::Path;

/// Returns how sure (0 to 100) the format is that a file starting with
/// `head` is a document.
pub(super) fn detect(head: &[u8]) -> u8 {
    let text = crate::jsonl::head_text(head, 4096);
    let t = text.trim_start();
    // agentlog writes `meta` first: that is the unified model, even when
    // the session it holds came from Gemini (whose `sessionId` and
    // `projectHash` then appear in `meta.extra` and would look like a
    // Gemini chat to a looser test).
    if let Some(rest) = t.strip_prefix('{') {
        if rest.trim_start().starts_with("\"meta\"") && t.contains("\"agent\"") {
            // Above every agent's own score: the session inside may carry
            // that agent's markers (acpx's schema name, …).
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

/// Parses the document at `path`.
pub(super) fn parse(path: &Path, bytes: &[u8]) -> Result<Session, FormatError> {
    serde_json::from_slice(bytes).map_err(|e| {
        FormatError::invalid(
            path,
            Some(e.line() as u64),
            format!("not an agentlog session JSON: {e}"),
        )
    })
}
