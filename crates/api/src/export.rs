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

/// Returns what [`export`] writes, comma-separated: the transcripts
/// (`markdown`, `text`), then `more` (a front end's own, such as `html`),
/// then every writable format.
///
/// ```
/// let t = agentlog_api::export::targets(&["html"]);
/// assert!(t.starts_with("markdown, text, html, "), "{t}");
/// assert!(t.contains("codex") && t.contains("json") && !t.contains("cursor"));
/// ```
pub fn targets(more: &[&str]) -> String {
    let formats = agentlog_formats::registry::all()
        .iter()
        .filter(|f| f.can_write())
        .map(|f| f.name());
    ["markdown", "text"]
        .into_iter()
        .chain(more.iter().copied())
        .chain(crate::training::TARGETS.iter().copied())
        .chain(formats)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Renders `session` as `to`: `markdown`/`md`, `text`/`txt` (plain, no
/// colour), training data (`openai-chat`, `sharegpt`: one line of JSON
/// Lines, [`crate::training`]), or the name of a writable format.
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
    if let Some(target) = crate::training::Target::named(to) {
        let (line, fidelity) = crate::training::example(session, target);
        return Ok(Exported {
            written: Written::File((line + "\n").into_bytes()),
            fidelity: Some(fidelity),
        });
    }
    let format =
        agentlog_formats::registry::by_name(to).ok_or_else(|| ApiError::UnknownFormat {
            name: to.to_string(),
            known: targets(&[]),
        })?;
    let (written, fidelity) = format.write_session(session)?;
    Ok(Exported {
        written,
        fidelity: Some(fidelity),
    })
}
