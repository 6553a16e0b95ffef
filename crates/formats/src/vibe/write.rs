//! Writing Vibe sessions in the 2.x layout (`messages.jsonl`, and the
//! `meta.json` beside it when resuming): a 2.x session line for line, and
//! any other (a 3.x store session among them) as the chat messages 2.x
//! keeps, which Vibe 3.x imports when `vibe --resume <id>` names it.

use super::wire::META;
use super::FORMAT_NAME;
use crate::chat::{foreign_lines, message_line, Reasoning};
use crate::{Fidelity, FormatError};
use agentlog_model::{EntryKind, Session, Timestamp};
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;

/// True for a session read from a 2.x `messages.jsonl`.
fn is_legacy(session: &Session) -> bool {
    session.meta.format.as_deref() == Some(FORMAT_NAME)
        && session.meta.format_version.as_ref() == Some(&Value::from("2.x"))
}

pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let mut fidelity = Fidelity::new(FORMAT_NAME);
    let lines = if is_legacy(session) {
        let mut lines = Vec::new();
        for e in &session.entries {
            match &e.kind {
                EntryKind::Message(m) => lines.push(message_line(e, m)),
                EntryKind::Unknown { raw, .. } => lines.push(raw.clone()),
                other => fidelity.lost(format!("{} entry", other.name()), Some(&e.id)),
            }
        }
        lines
    } else {
        foreign_lines(session, &mut fidelity, Reasoning::ReasoningContent)
    };
    for line in lines {
        serde_json::to_writer(&mut *out, &line)
            .map_err(|e| FormatError::write("vibe messages", std::io::Error::other(e)))?;
        out.write_all(b"\n")
            .map_err(|e| FormatError::write("vibe messages", e))?;
    }
    Ok(fidelity)
}

fn text(t: &Timestamp) -> String {
    match t {
        Timestamp::Text(s) => s.clone(),
        Timestamp::Millis(ms) => chrono::DateTime::from_timestamp_millis(*ms)
            .map(|d| d.to_rfc3339())
            .unwrap_or_default(),
    }
}

/// Writes the `meta.json` Vibe needs beside the `messages.jsonl` at
/// `messages` to find and import the session, unless one is there: its id,
/// times, working directory, title and message count.
pub(super) fn write_meta(session: &Session, messages: &Path, cwd: &str) -> Result<(), FormatError> {
    let path = messages.with_file_name(META);
    if std::fs::symlink_metadata(&path).is_ok() {
        return Ok(());
    }
    let count = std::fs::read(messages)
        .map(|b| b.split(|c| *c == b'\n').filter(|l| !l.is_empty()).count())
        .unwrap_or(0);
    let start = session
        .meta
        .created_at
        .as_ref()
        .or(session.entries.first().and_then(|e| e.timestamp.as_ref()))
        .map(text)
        .unwrap_or_else(|| chrono::Utc::now().to_rfc3339());
    let end = session
        .meta
        .closed_at
        .as_ref()
        .or(session.meta.updated_at.as_ref())
        .or(session.entries.last().and_then(|e| e.timestamp.as_ref()))
        .map(text)
        .unwrap_or_else(|| start.clone());
    let meta = json!({
        "session_id": crate::safe_path::component(&session.meta.id),
        "parent_session_id": null,
        "start_time": start,
        "end_time": end,
        "git_commit": null,
        "git_branch": null,
        "environment": {"working_directory": cwd},
        "origin_directory": cwd,
        "username": std::env::var("USER").unwrap_or_else(|_| "agentlog".into()),
        "title": session.meta.title,
        "title_source": "auto",
        "total_messages": count,
    });
    let text = serde_json::to_string_pretty(&meta)
        .map_err(|e| FormatError::write("vibe meta.json", std::io::Error::other(e)))?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| FormatError::io(&path, e))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| FormatError::io(&path, e))
}
