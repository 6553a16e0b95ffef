//! Cursor agent transcripts: one JSON object per line, either a message
//! `{"role", "message": {"content": string | block[]}}` or a lifecycle line
//! `{"type": "turn_ended", "status", "error"?}`. Lines carry no ids, no
//! timestamps, no model and no tokens; the session's metadata comes from
//! the chat directory of the same id (see [`super::meta`]).

use super::super::wire::content::{classify_user, fill_content, take_str};
use super::meta;
use crate::{jsonl, Diagnostic, FormatError, Read};
use agentlog_model::{
    Agent, Entry, EntryKind, Extra, Message, Role, RunOutcome, Session, SessionMeta,
};
use serde_json::Value;
use std::path::Path;

/// True when the first complete line of `head` looks like a transcript
/// line: a role and a message (and no `type`, which Claude lines carry), or
/// a `turn_ended` marker.
pub(in crate::cursor) fn looks_like(head: &[u8]) -> bool {
    let Some(Value::Object(first)) = jsonl::first_value(head) else {
        return false;
    };
    match first.get("type").and_then(Value::as_str) {
        Some("turn_ended") => true,
        Some(_) => false,
        None => {
            first.get("role").is_some_and(Value::is_string)
                && first.get("message").is_some_and(Value::is_object)
                && !first.contains_key("uuid")
                && !first.contains_key("sessionId")
        }
    }
}

/// Returns the session id a transcript path names: the file's stem.
fn session_id(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Returns the parent session of a subagent transcript
/// (`<parent-id>/subagents/<child-id>.jsonl`).
fn parent_session(path: &Path) -> Option<String> {
    let dir = path.parent()?;
    if dir.file_name()? != "subagents" {
        return None;
    }
    Some(dir.parent()?.file_name()?.to_string_lossy().into_owned())
}

/// Reads a transcript. Bad lines become diagnostics; a file with lines but
/// not one readable record is an error.
pub(in crate::cursor) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let mut diags = Vec::new();
    let mut smeta = SessionMeta::new(session_id(path), Agent::Cursor);
    smeta.format = Some("cursor".into());
    smeta.parent_session = parent_session(path);
    let mut session = Session::new(smeta);
    let mut prev: Option<String> = None;
    let mut turns = 0u64;
    let mut lines = 0u64;
    for line in jsonl::lines(bytes) {
        if jsonl::is_blank(line.bytes) {
            continue;
        }
        lines += 1;
        let Some(value) = jsonl::parse_line(path, &line, &mut diags) else {
            continue;
        };
        let Value::Object(obj) = value else {
            diags.push(Diagnostic::error(
                path,
                Some(line.number),
                "not-an-object",
                "a transcript line must be a JSON object; skipped",
            ));
            continue;
        };
        let (kind, extra) = record(obj, &mut turns, path, line.number, &mut diags);
        let mut entry = Entry::new(format!("l{}", line.number), prev.take(), kind);
        entry.extra = extra;
        entry.line = Some(line.number);
        prev = Some(entry.id.clone());
        session.push(entry);
    }
    if lines > 0 && session.entries.is_empty() {
        return Err(FormatError::invalid(
            path,
            None,
            "no line of this file is a readable Cursor transcript record",
        ));
    }
    meta::enrich_transcript(path, &mut session.meta, &mut diags);
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// Converts one transcript line into an entry kind and the entry's extra
/// fields.
fn record(
    mut obj: Extra,
    turns: &mut u64,
    path: &Path,
    line: u64,
    diags: &mut Vec<Diagnostic>,
) -> (EntryKind, Extra) {
    let ty = obj.get("type").and_then(Value::as_str).map(str::to_string);
    if ty.as_deref() == Some("turn_ended") {
        obj.remove("type");
        *turns += 1;
        let outcome = match take_str(&mut obj, "status").as_deref() {
            Some("success") | Some("completed") => RunOutcome::Completed,
            Some("aborted") | Some("cancelled") => RunOutcome::Cancelled,
            Some("error") => RunOutcome::Error,
            Some(other) => RunOutcome::Other(other.to_string()),
            None => RunOutcome::Other(String::new()),
        };
        let kind = EntryKind::RunEnd {
            run_id: format!("turn-{turns}"),
            outcome,
            final_text: None,
        };
        return (kind, obj);
    }
    let role = obj.get("role").and_then(Value::as_str).map(str::to_string);
    let is_message =
        ty.is_none() && role.is_some() && obj.get("message").is_some_and(Value::is_object);
    if !is_message {
        diags.push(Diagnostic::info(
            path,
            Some(line),
            "unknown-type",
            format!(
                "record type {:?} is not a Cursor message; kept verbatim",
                ty.as_deref().unwrap_or("(none)")
            ),
        ));
        return (
            EntryKind::Unknown {
                record_type: ty,
                raw: Value::Object(obj),
            },
            Extra::new(),
        );
    }
    obj.remove("role");
    let mut msg = Message::new(Role::parse(role.as_deref().unwrap_or_default()));
    if let Some(Value::Object(mut m)) = obj.remove("message") {
        fill_content(&mut msg, m.remove("content"));
        msg.id = take_str(&mut m, "id");
        msg.model = take_str(&mut m, "model");
        msg.extra = m;
    }
    if msg.model.is_none() {
        msg.model = take_str(&mut obj, "model");
    }
    classify_user(&mut msg);
    (EntryKind::Message(msg), obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_transcripts_not_claude_lines() {
        assert!(looks_like(
            b"{\"role\":\"user\",\"message\":{\"content\":\"hi\"}}\n"
        ));
        assert!(looks_like(
            b"{\"type\":\"turn_ended\",\"status\":\"success\"}\n"
        ));
        assert!(!looks_like(
            b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"},\"uuid\":\"u\"}\n"
        ));
    }
}
