//! Reads a Vibe 2.x session: `messages.jsonl` (a chat message a line) and
//! the `meta.json` beside it.

use super::wire::{apply_meta, num, put_total_usage, read_meta, META};
use super::FORMAT_NAME;
use crate::chat::message_entry;
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{Entry, EntryKind, Session, SessionMeta, Usage};
use serde_json::Value;
use std::path::Path;

/// Reads the `messages.jsonl` at `path`, whose bytes are `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let mut diags: Vec<Diagnostic> = Vec::new();
    // The directory is `session_<date>_<time>_<first 8 of the id>`.
    let dir_id = path
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|n| n.to_str())
        .map(|n| n.rsplit('_').next().unwrap_or(n).to_string())
        .unwrap_or_default();
    let mut meta = SessionMeta::new(dir_id, crate::Format::agent(&super::FORMAT));
    meta.format = Some(FORMAT_NAME.into());
    meta.format_version = Some(Value::from("2.x"));
    let mut usage = Usage::default();
    match read_meta(&path.with_file_name(META)) {
        Some(doc) => {
            if let Some(stats) = doc.get("stats") {
                usage.input = num(stats.get("session_prompt_tokens"));
                usage.output = num(stats.get("session_completion_tokens"));
                usage.cost_usd = stats
                    .get("session_cost")
                    .and_then(Value::as_f64)
                    .filter(|c| *c > 0.0);
            }
            apply_meta(doc, &mut meta);
        }
        None => diags.push(Diagnostic::warning(
            path,
            None,
            "no-meta",
            "no readable meta.json beside it: the session's id, times and usage are unknown",
        )),
    }
    let mut session = Session::new(meta);
    for (n, v) in crate::jsonl::parse_values(path, bytes, &mut diags) {
        let mut e = match v {
            Value::Object(m) if m.get("role").is_some_and(Value::is_string) => {
                message_entry(m, n, "vibe")
            }
            other => {
                diags.push(Diagnostic::warning(
                    path,
                    Some(n),
                    "unknown-record",
                    format!("line {n} is not a chat message; kept verbatim"),
                ));
                Entry::new(
                    format!("l{n}"),
                    None,
                    EntryKind::Unknown {
                        record_type: None,
                        raw: other,
                    },
                )
            }
        };
        e.parent_id = session.leaf_id.clone();
        e.line = Some(n);
        session.push(e);
    }
    put_total_usage(&mut session, usage);
    Ok(Read {
        session,
        diagnostics: diags,
    })
}
