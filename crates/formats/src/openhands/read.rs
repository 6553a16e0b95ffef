//! Reads a session's events (`events/<n>.json`) into a session.

use super::wire::{event_file, event_files, event_time, events_dir, push, unknown, usage_of};
use super::FORMAT_NAME;
use crate::jsonl::pointer_in as at;
use crate::{FormatError, Read};
use agentlog_model::{Block, Entry, EntryKind, Message, Role, Session, SessionMeta};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::Path;

/// Reads the session whose events are in the folder `path` names.
pub(super) fn read(path: &Path) -> Result<Read, FormatError> {
    let Some(dir) = events_dir(path) else {
        return Err(FormatError::invalid(
            path,
            None,
            "not an OpenHands `events` folder or one of its numbered files",
        ));
    };
    if super::conversation::is_conversation(&dir) {
        return super::conversation::read(&dir);
    }
    let id = dir
        .parent()
        .and_then(|d| d.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let mut meta = SessionMeta::new(id, crate::Format::agent(&super::FORMAT));
    meta.format = Some(FORMAT_NAME.into());
    let mut diags = Vec::new();
    let mut session = Session::new(meta);
    let mut responses = HashSet::new();
    for (n, file) in event_files(&dir, super::wire::store_event_number)? {
        let event = match event_file(&file, &mut diags) {
            Some(Ok(event)) => event,
            Some(Err(other)) => {
                push(&mut session, unknown(n, other));
                continue;
            }
            None => continue,
        };
        note_meta(&mut session.meta, &event);
        for e in event_entries(event, n, &mut responses) {
            push(&mut session, e);
        }
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// Takes the session's start, working directory and model from the events.
fn note_meta(meta: &mut SessionMeta, event: &Map<String, Value>) {
    if meta.created_at.is_none() {
        meta.created_at = event_time(event);
    }
    if meta.cwd.is_none() {
        meta.cwd = event
            .get("extras")
            .and_then(|x| x.get("working_dir"))
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
            .map(str::to_string);
    }
    if meta.model.model.is_none() {
        meta.model.model = at(event, "/tool_call_metadata/model_response/model")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
}

/// The model's message in a tool call's response.
fn response_message(event: &Map<String, Value>) -> Option<&Value> {
    event
        .get("tool_call_metadata")?
        .pointer("/model_response/choices/0/message")
}

/// The entries of one event.
fn event_entries(
    mut ev: Map<String, Value>,
    n: u64,
    responses: &mut HashSet<String>,
) -> Vec<Entry> {
    let id = match ev.get("id") {
        Some(Value::Number(k)) => k.to_string(),
        _ => format!("e{n}"),
    };
    let ts = event_time(&ev);
    let source = ev
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let action = ev.get("action").and_then(Value::as_str).map(str::to_string);
    let observation = ev
        .get("observation")
        .and_then(Value::as_str)
        .map(str::to_string);
    let has_call = ev.contains_key("tool_call_metadata");
    let entry = |id: String, kind: EntryKind, ev: Map<String, Value>| {
        let mut e = Entry::new(id, None, kind);
        e.timestamp = ts.clone();
        e.line = Some(n);
        e.extra = ev;
        e
    };
    let arg = |ev: &Map<String, Value>, k: &str| {
        ev.get("args")
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    match (action.as_deref(), observation.as_deref()) {
        (Some("system"), _) => {
            let text = arg(&ev, "content")
                .or_else(|| {
                    ev.get("message")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .unwrap_or_default();
            let mut m = Message::text(Role::System, text);
            m.injected = Some("system_prompt".into());
            vec![entry(id, EntryKind::Message(m), ev)]
        }
        (Some("message"), _) if !has_call => {
            let role = if source == "user" {
                Role::User
            } else {
                Role::Assistant
            };
            let text = arg(&ev, "content").unwrap_or_default();
            let mut m = Message::text(role, text);
            if let Some(u) = take_usage(&mut ev, responses) {
                m.usage = Some(u);
            }
            vec![entry(id, EntryKind::Message(m), ev)]
        }
        (Some(_), _) if has_call => {
            let meta = ev.get("tool_call_metadata").cloned().unwrap_or(Value::Null);
            let call_id = meta
                .get("tool_call_id")
                .and_then(Value::as_str)
                .map(str::to_string);
            let name = meta
                .get("function_name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let mut m = Message::new(Role::Assistant);
            let first = responses_first(&ev, responses);
            if first {
                if let Some(r) = response_message(&ev) {
                    if let Some(t) = r.get("reasoning_content").and_then(Value::as_str) {
                        m.content.push(Block::thinking(t, None));
                    }
                    if let Some(t) = r
                        .get("content")
                        .and_then(Value::as_str)
                        .filter(|t| !t.is_empty())
                    {
                        m.content.push(Block::text(t));
                    }
                }
            }
            // The arguments the model sent, from its response.
            let input = response_message(&ev)
                .and_then(|r| r.get("tool_calls"))
                .and_then(Value::as_array)
                .and_then(|calls| {
                    calls
                        .iter()
                        .find(|c| c.get("id").and_then(Value::as_str) == call_id.as_deref())
                })
                .and_then(|c| c.pointer("/function/arguments"))
                .and_then(Value::as_str)
                .and_then(|a| serde_json::from_str(a).ok())
                .or_else(|| ev.get("args").cloned())
                .unwrap_or(Value::Null);
            m.content.push(Block::tool_call(call_id, name, input));
            if action.as_deref() == Some("finish") {
                if let Some(t) = arg(&ev, "final_thought").filter(|t| !t.is_empty()) {
                    m.content.push(Block::text(t));
                }
            }
            if first {
                m.usage = take_usage(&mut ev, responses);
                m.model = at(&ev, "/tool_call_metadata/model_response/model")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            vec![entry(id, EntryKind::Message(m), ev)]
        }
        (None, Some(obs)) if has_call => {
            let call_id = at(&ev, "/tool_call_metadata/tool_call_id")
                .and_then(Value::as_str)
                .map(str::to_string);
            let name = at(&ev, "/tool_call_metadata/function_name")
                .and_then(Value::as_str)
                .map(str::to_string);
            let text = ev
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let exit = at(&ev, "/extras/metadata/exit_code").and_then(Value::as_i64);
            let is_error = obs == "error" || exit.is_some_and(|c| c != 0);
            let mut m = Message::new(Role::Tool);
            m.tool_call_id = call_id.clone();
            m.tool_name = name;
            m.is_error = Some(is_error);
            m.content.push(Block::tool_result(
                call_id,
                vec![Block::text(text)],
                is_error,
            ));
            vec![entry(id, EntryKind::Message(m), ev)]
        }
        (a, o) if a.is_some() || o.is_some() => {
            let kind = a.or(o).unwrap_or_default().to_string();
            let payload = Value::Object(ev);
            vec![entry(
                id,
                EntryKind::Event {
                    source: if source.is_empty() {
                        FORMAT_NAME.into()
                    } else {
                        source
                    },
                    event_type: kind,
                    seq: Some(n),
                    payload,
                },
                Map::new(),
            )]
        }
        _ => vec![unknown(n, Value::Object(ev))],
    }
}

/// True when this event is the first seen of its model response (a
/// response with several calls gives an action for each).
fn responses_first(ev: &Map<String, Value>, responses: &HashSet<String>) -> bool {
    match at(ev, "/tool_call_metadata/model_response/id").and_then(Value::as_str) {
        Some(r) => !responses.contains(r),
        None => true,
    }
}

/// The usage of the event's model response, the first time the response is
/// seen (marking it seen).
fn take_usage(
    ev: &mut Map<String, Value>,
    responses: &mut HashSet<String>,
) -> Option<agentlog_model::Usage> {
    let meta = ev.get("tool_call_metadata")?;
    let response = meta.get("model_response")?;
    if let Some(r) = response.get("id").and_then(Value::as_str) {
        if !responses.insert(r.to_string()) {
            return None;
        }
    }
    response.get("usage").map(usage_of)
}
