//! Rendering a session for people or for another agent (`agentlog
//! export`): a transcript (`markdown`, `text`) or any writable format, with
//! what the format could not hold. (HTML is the web viewer's, in
//! `agentlog-web`.)
//!
//! ```
//! use agentlog_api::export::export;
//! let s = agentlog_api::example::session(0);
//! let md = export(&s, "markdown")?;
//! assert!(String::from_utf8(md.bytes)?.contains("tokenizer"));
//! assert!(md.fidelity.is_none());
//! let codex = export(&s, "codex")?;
//! assert!(codex.fidelity.is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::ApiError;
use agentlog_formats::render::{self, TextOptions};
use agentlog_formats::Fidelity;
use agentlog_model::Session;

/// An exported session.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The file's bytes.
    pub bytes: Vec<u8>,
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
            bytes: text.into_bytes(),
            fidelity: None,
        });
    }
    let format = crate::resolve::format_named(to)?;
    let mut bytes = Vec::new();
    let fidelity = format.write(session, &mut bytes)?;
    Ok(Exported {
        bytes,
        fidelity: Some(fidelity),
    })
}
