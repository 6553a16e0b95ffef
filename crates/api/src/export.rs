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
/// then every writable format, then training data (`openai-chat`,
/// `sharegpt`) and `otel` (a trace).
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
        .chain(formats)
        .chain(crate::training::TARGETS.iter().copied())
        .chain([crate::otel::TARGET])
        .collect::<Vec<_>>()
        .join(", ")
}

/// Renders `session` as `to`: `markdown`/`md`, `text`/`txt` (plain, no
/// colour), `otel` (an OpenTelemetry trace as OTLP JSON, see
/// [`crate::otel`]), training data (`openai-chat`, `sharegpt`: one line of
/// JSON Lines, [`crate::training`]), or the name of a writable format.
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
    if to == crate::otel::TARGET {
        let (bytes, fidelity) = crate::otel::export(session);
        return Ok(Exported {
            written: Written::File(bytes),
            fidelity: Some(fidelity),
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

/// The sessions an ATIF export of `session`, read from `path` as `from`,
/// embeds as subagent trajectories: the transcripts its subagents left
/// beside it, each read whole: Claude Code's `subagents/agent-*.jsonl`,
/// Gemini CLI's chats in the folder named by the session id beside it,
/// and the Codex rollouts in the same folder that name the session as
/// their parent thread. A transcript that cannot be read is left out.
pub fn subagents(session: &Session, path: &std::path::Path, from: &str) -> Vec<Session> {
    let read_all = |format: &dyn agentlog_formats::Format, files: Vec<std::path::PathBuf>| {
        files
            .into_iter()
            .filter_map(|f| format.read_path(&f).ok().map(|r| r.session))
            .filter(|s| s.meta.id != session.meta.id)
            .collect::<Vec<_>>()
    };
    let in_dir = |dir: &std::path::Path| -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl" || x == "json"))
            .collect();
        files.sort();
        files
    };
    match from {
        "claude" => agentlog_formats::claude::read_subagents(path)
            .into_iter()
            .filter_map(|(_, r)| r.ok().map(|r| r.session))
            .collect(),
        "gemini" => match (path.parent(), agentlog_formats::registry::by_name("gemini")) {
            (Some(dir), Some(f)) => read_all(f, in_dir(&dir.join(&session.meta.id))),
            _ => Vec::new(),
        },
        "codex" => {
            let (Some(dir), Some(f)) =
                (path.parent(), agentlog_formats::registry::by_name("codex"))
            else {
                return Vec::new();
            };
            // Only files whose first record names the parent are read.
            let needle = format!("\"parent_thread_id\":\"{}\"", session.meta.id);
            let named = in_dir(dir)
                .into_iter()
                .filter(|p| p != path)
                .filter(|p| {
                    agentlog_formats::registry::read_head(p).is_ok_and(|h| {
                        String::from_utf8_lossy(&h)
                            .lines()
                            .next()
                            .is_some_and(|l| l.contains(&needle))
                    })
                })
                .collect();
            read_all(f, named)
                .into_iter()
                .filter(|s| s.meta.parent_session.as_deref() == Some(session.meta.id.as_str()))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// [`export`], with `subagents` (see [`subagents`]) embedded when `to` is
/// `atif`, referred to from the results of the calls that started them.
pub fn export_with(
    session: &Session,
    subagents: &[Session],
    to: &str,
) -> Result<Exported, ApiError> {
    if to != "atif" || subagents.is_empty() {
        return export(session, to);
    }
    let mut bytes = Vec::new();
    let fidelity = agentlog_formats::atif::write_with_subagents(session, subagents, &mut bytes)?;
    Ok(Exported {
        written: Written::File(bytes),
        fidelity: Some(fidelity),
    })
}
