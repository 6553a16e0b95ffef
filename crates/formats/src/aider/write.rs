//! Writes an aider chat history: what `aider --restore-chat-history` reads
//! back. A run's header (`# aider chat started at <time>`), each prompt
//! line as `#### <line>`, each answer as its text, and aider's own output
//! (and, for another agent's session, its tool calls and results) as `> `
//! lines, which aider shows but does not send to the model again.

use super::wire::STARTED;
use super::FORMAT_NAME;
use crate::{Fidelity, FormatError};
use agentlog_model::{BlockKind, EntryKind, Message, Role, Session, Timestamp};
use std::io::Write;

pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let mut fidelity = Fidelity::new(FORMAT_NAME);
    // Aider's own token lines are in its output; another agent's usage is
    // written as aider writes it.
    let foreign = session.meta.format.as_deref() != Some(FORMAT_NAME);
    let mut text = String::new();
    let mut started = false;
    for e in session.active_branch() {
        match &e.kind {
            EntryKind::Event {
                event_type,
                payload,
                ..
            } if event_type == "chat_started" => {
                let at = payload
                    .get("started_at")
                    .and_then(|t| t.as_str())
                    .map(str::to_string)
                    .unwrap_or_else(|| stamp(e.timestamp.as_ref()));
                header(&mut text, &at);
                started = true;
            }
            EntryKind::Message(m) => {
                if !started {
                    let at = session.meta.created_at.as_ref().or(e.timestamp.as_ref());
                    header(&mut text, &stamp(at));
                    started = true;
                }
                message(&mut text, m, &e.id, &mut fidelity);
                if let (true, Some(u)) = (foreign && m.role == Role::Assistant, &m.usage) {
                    let sent = u.input + u.cache_read + u.cache_write;
                    let line = format!("Tokens: {sent} sent, {} received.", u.output);
                    block(&mut text, &line, "> ", "  ");
                }
            }
            other => fidelity.lost(format!("{} entry", other.name()), Some(&e.id)),
        }
    }
    out.write_all(text.as_bytes())
        .map_err(|e| FormatError::write("aider chat history", e))?;
    Ok(fidelity)
}

/// A time as aider writes it in its headers (`2026-11-23 21:16:04`).
fn stamp(t: Option<&Timestamp>) -> String {
    let dt = t
        .and_then(Timestamp::millis)
        .and_then(chrono::DateTime::from_timestamp_millis)
        .unwrap_or_else(chrono::Utc::now);
    dt.format("%Y-%m-%d %H:%M:%S").to_string()
}

fn header(text: &mut String, at: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(STARTED);
    text.push_str(at);
    text.push('\n');
}

/// Adds `lines` after a blank line, each with `prefix` (and aider's two
/// trailing spaces on its own output).
fn block(text: &mut String, lines: &str, prefix: &str, suffix: &str) {
    let lines = lines.trim_matches('\n');
    if lines.trim().is_empty() {
        return;
    }
    text.push('\n');
    for l in lines.lines() {
        text.push_str(prefix);
        text.push_str(l);
        text.push_str(suffix);
        text.push('\n');
    }
}

fn message(text: &mut String, m: &Message, id: &str, fidelity: &mut Fidelity) {
    let own_output = m.injected.as_deref() == Some("aider-output");
    if m.injected.is_some() && !own_output {
        fidelity.lost("injected context message", Some(id));
        return;
    }
    for b in &m.content {
        match (&m.role, &b.kind) {
            (_, BlockKind::Text { text: t }) if own_output => block(text, t, "> ", "  "),
            (Role::User, BlockKind::Text { text: t }) => block(text, t, "#### ", "  "),
            (Role::Assistant, BlockKind::Text { text: t }) => block(text, t, "", ""),
            (_, BlockKind::Thinking { .. }) => fidelity.lost("thinking", Some(id)),
            (_, BlockKind::ToolCall { name, input, .. }) => {
                fidelity.lost("tool call (written as aider output)", Some(id));
                block(text, &format!("{name}\n{}", readable(input)), "> ", "  ");
            }
            (_, BlockKind::ToolResult { content, .. }) => {
                fidelity.lost("tool result (written as aider output)", Some(id));
                let t: Vec<String> = content.iter().filter_map(|c| c.plain_text()).collect();
                block(text, &t.join("\n"), "> ", "  ");
            }
            (Role::Tool, BlockKind::Text { text: t }) => {
                fidelity.lost("tool result (written as aider output)", Some(id));
                block(text, t, "> ", "  ");
            }
            (_, other) => fidelity.lost(format!("{} block", other.name()), Some(id)),
        }
    }
}

/// A call's input as lines a person (and a secret scanner) reads: each
/// field as `key: value` with text values as they are (not JSON-escaped,
/// so a value spanning lines spans lines), other values as JSON; an input
/// that is JSON text is read as the object it holds.
fn readable(input: &serde_json::Value) -> String {
    use serde_json::Value;
    match input {
        Value::Object(fields) => fields
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}: {s}"),
                other => format!("{k}: {other}"),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => readable(&v),
            _ => s.clone(),
        },
        other => other.to_string(),
    }
}
