//! Rendering a session for people or for another agent (`agentlog
//! export`): a transcript (`markdown`, `text`) or any writable format, with
//! what the format could not hold. (HTML is the web viewer's, in
//! `agentlog-web`.)
//!
//! ```
//! use agentlog_api::export::export;
//! let s = agentlog_api::example::session(0);
//! let md = export(&s, "markdown")?;
//! let (_, bytes) = md.written.files()[0];
//! assert!(String::from_utf8_lossy(bytes).contains("tokenizer"));
//! assert!(md.fidelity.is_none());
//! let codex = export(&s, "codex")?;
//! assert!(codex.fidelity.is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::ApiError;
use agentlog_formats::render::{self, TextOptions};
use agentlog_formats::{Fidelity, Written};
use agentlog_model::Session;

/// An exported session.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The file (or, for a format whose sessions are folders, the folder's
    /// files).
    pub written: Written,
    /// For a session format, what it could not hold (`None` for a
    /// transcript).
    pub fidelity: Option<Fidelity>,
}

/// The transcript targets besides the formats.
pub const TRANSCRIPTS: &[&str] = &["markdown", "md", "text", "txt"];

/// Renders `session` as `to`: `markdown`/`md`, `text`/`txt` (plain, no
/// colour), or the name of a writable format.
pub fn export(session: &Session, to: &str) -> Result<Exported, ApiError> {
    let text = match to {
        "markdown" | "md" => Some(render::markdown(session) + "\n"),
        "text" | "txt" => Some(render::text(session, TextOptions::default())),
        _ => None,
    };
    if let Some(text) = text {
        return Ok(Exported {
            written: Written::File(text.into_bytes()),
            fidelity: None,
        });
    }
    let format = crate::resolve::format_named(to)?;
    let (written, fidelity) = format.write_session(session)?;
    Ok(Exported {
        written,
        fidelity: Some(fidelity),
    })
}
