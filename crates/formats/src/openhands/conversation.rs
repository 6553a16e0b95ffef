//! Reads a conversation of the OpenHands CLI 1.x (its software agent SDK):
//! `~/.openhands/conversations/<id>/` with `base_state.json` (the agent's
//! settings, the workspace, and the token usage of each model response)
//! and `events/event-<n>-<uuid>.json`, one event a file.
//!
//! Each event has a `kind`: `SystemPromptEvent` (the system prompt and the
//! tools, marked injected), `MessageEvent` (a prompt or an answer, its
//! `llm_message`), `ActionEvent` (a tool call: the model's `thought` and
//! `reasoning_content`, the `tool_call` as the model sent it, its
//! `llm_response_id`), `ObservationEvent` (the call's result; an error, or a
//! command's non-zero exit code, is an error), `UserRejectObservation` and
//! `AgentErrorEvent` (a result that is an error). Other kinds (pauses,
//! condensations, state updates) are kept whole as events. Each model
//! response's usage, from `base_state.json` by response id, goes on the
//! first entry of that response; the CLI keeps only the latest run's
//! (resuming starts its statistics anew).

use super::wire::{event_file, event_files, event_time, push, unknown};
use super::FORMAT_NAME;
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{
    Block, BlockKind, Entry, EntryKind, Message, Role, Session, SessionMeta, Usage,
};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::Path;

/// The conversation's state file, beside its `events` folder.
pub(super) const BASE_STATE: &str = "base_state.json";

/// The number of an event file's name (`event-00012-<uuid>.json`).
pub(super) fn event_number(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("event-")?.strip_suffix(".json")?;
    let digits = rest.split('-').next()?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// True when the `events` folder `dir` is a 1.x conversation's: it has a
/// `base_state.json` beside it, or (a conversation agentlog wrote, which
/// OpenHands gives its state when it continues it) 1.x event files.
pub(super) fn is_conversation(dir: &Path) -> bool {
    dir.parent().is_some_and(|c| c.join(BASE_STATE).is_file())
        || std::fs::read_dir(dir).is_ok_and(|rd| {
            rd.flatten()
                .any(|e| e.file_name().to_str().and_then(event_number).is_some())
        })
}

/// Reads the conversation whose `events` folder is `dir`.
pub(super) fn read(dir: &Path) -> Result<Read, FormatError> {
    let mut diags = Vec::new();
    let conv = dir.parent().unwrap_or(dir);
    let state_path = conv.join(BASE_STATE);
    let state = match crate::input::read_file(&state_path) {
        // Written by agentlog: OpenHands writes its state on continuing.
        Err(FormatError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            None
        }
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(m)) => Some(m),
            Ok(_) => {
                return Err(FormatError::invalid(
                    &state_path,
                    Some(1),
                    "not a JSON object",
                ))
            }
            Err(e) => {
                return Err(FormatError::invalid(
                    &state_path,
                    Some(e.line() as u64),
                    format!("not JSON: {e}"),
                ))
            }
        },
        Err(e) => {
            diags.push(Diagnostic::warning(
                &state_path,
                None,
                "unreadable",
                e.to_string(),
            ));
            None
        }
    };
    let has_state = state.is_some();
    let state = state.unwrap_or_default();
    let id = state
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| conv.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let mut meta = SessionMeta::new(id, crate::Format::agent(&super::FORMAT));
    meta.format = Some(FORMAT_NAME.into());
    meta.cwd = state
        .get("workspace")
        .and_then(|w| w.get("working_dir"))
        .and_then(Value::as_str)
        .map(str::to_string);
    meta.model.model = state
        .get("agent")
        .and_then(|a| a.pointer("/llm/model"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut usages = usages_by_response(&state);
    if has_state {
        meta.extra.insert("base_state".into(), Value::Object(state));
    }
    let mut session = Session::new(meta);
    for (n, file) in event_files(dir, event_number)? {
        let event = match event_file(&file, &mut diags) {
            Some(Ok(event)) => event,
            Some(Err(other)) => {
                push(&mut session, unknown(n, other));
                continue;
            }
            None => continue,
        };
        if session.meta.created_at.is_none() {
            session.meta.created_at = event_time(&event);
        }
        push(&mut session, entry(event, n, &mut usages));
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// Each model response's usage and model, by response id, from every
/// usage counter of the state's statistics.
fn usages_by_response(state: &Map<String, Value>) -> HashMap<String, (Usage, Option<String>)> {
    let mut out = HashMap::new();
    let Some(Value::Object(metrics)) = state.get("stats").and_then(|s| s.get("usage_to_metrics"))
    else {
        return out;
    };
    for m in metrics.values() {
        let Some(list) = m.get("token_usages").and_then(Value::as_array) else {
            continue;
        };
        for u in list {
            let Some(r) = u.get("response_id").and_then(Value::as_str) else {
                continue;
            };
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            let cache_read = n("cache_read_tokens");
            let usage = Usage {
                // The prompt's tokens count the cached ones.
                input: n("prompt_tokens").saturating_sub(cache_read),
                output: n("completion_tokens"),
                cache_read,
                cache_write: n("cache_write_tokens"),
                reasoning: n("reasoning_tokens"),
                ..Usage::default()
            };
            let model = u.get("model").and_then(Value::as_str).map(str::to_string);
            out.insert(r.to_string(), (usage, model));
        }
    }
    out
}

/// The blocks of a list of content parts (`{"type": "text", "text", …}`,
/// `{"type": "image", "image_urls"}`), each part's other fields kept on its
/// block so [`super::write`] gives the part back (see [`part_value`]).
fn parts(content: Option<Value>) -> Vec<Block> {
    let Some(Value::Array(list)) = content else {
        return Vec::new();
    };
    list.into_iter()
        .map(|c| match c {
            Value::Object(mut o)
                if o.get("type").and_then(Value::as_str) == Some("image")
                    && o.get("image_urls")
                        .and_then(Value::as_array)
                        .is_some_and(|u| u.len() == 1 && u[0].is_string()) =>
            {
                let url = match o.remove("image_urls") {
                    Some(Value::Array(mut u)) => {
                        u.pop().and_then(|u| u.as_str().map(str::to_string))
                    }
                    _ => None,
                };
                o.remove("type");
                Block {
                    kind: BlockKind::Image {
                        media_type: None,
                        data: None,
                        url,
                    },
                    extra: o,
                }
            }
            other => crate::chat::part(other),
        })
        .collect()
}

/// A content part as OpenHands writes it, from a block [`parts`] read (its
/// other fields back, when `own`) or from another agent's session (only
/// the fields OpenHands' content takes, as it refuses any other); `None`
/// for a block that is not text or an image.
pub(super) fn part_value(b: &Block, own: bool) -> Option<Value> {
    match &b.kind {
        BlockKind::Text { .. } | BlockKind::Other { .. } if own => Some(crate::chat::part_value(b)),
        BlockKind::Text { text } => Some(serde_json::json!({"type": "text", "text": text})),
        BlockKind::Other { .. } => None,
        BlockKind::Image {
            media_type,
            data,
            url,
        } => {
            let url = match (url, data) {
                (Some(u), _) => u.clone(),
                (None, Some(d)) => format!(
                    "data:{};base64,{d}",
                    media_type.as_deref().unwrap_or("image/png")
                ),
                (None, None) => return None,
            };
            let mut o = if own {
                crate::chat::own_fields(&b.extra)
            } else {
                Map::new()
            };
            o.insert("type".into(), "image".into());
            o.insert("image_urls".into(), Value::Array(vec![url.into()]));
            Some(Value::Object(o))
        }
        _ => None,
    }
}

/// Takes `key` out of `m` when it is a list (of content parts); anything
/// else stays in `m`, kept as it was.
fn take_list(m: &mut Map<String, Value>, key: &str) -> Option<Value> {
    if m.get(key).is_some_and(Value::is_array) {
        m.remove(key)
    } else {
        None
    }
}

/// Takes `key` out of `m` when it is a non-empty string: the model's
/// reasoning, which becomes a thinking block.
fn take_reasoning(m: &mut Map<String, Value>) -> Option<Block> {
    match m.get("reasoning_content") {
        Some(Value::String(t)) if !t.is_empty() => {
            crate::chat::take_string(m, "reasoning_content").map(|t| Block::thinking(t, None))
        }
        _ => None,
    }
}

/// The entry of one event.
fn entry(
    mut ev: Map<String, Value>,
    n: u64,
    usages: &mut HashMap<String, (Usage, Option<String>)>,
) -> Entry {
    let id = ev
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("e{n}"));
    let ts = event_time(&ev);
    let kind_name = ev
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    // The usage of the response an event belongs to, the first time.
    let mut take_usage = |ev: &Map<String, Value>, m: &mut Message| {
        let r = ev.get("llm_response_id").and_then(Value::as_str)?;
        let (u, model) = usages.remove(r)?;
        m.usage = Some(u);
        m.model = model;
        Some(())
    };
    let kind = match kind_name.as_str() {
        "SystemPromptEvent" => {
            let text = ev
                .get("system_prompt")
                .and_then(|p| p.get("text"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let mut m = Message::text(Role::System, text);
            m.injected = Some("system_prompt".into());
            if let Some(Value::Object(p)) = ev.get_mut("system_prompt") {
                p.remove("text");
            }
            EntryKind::Message(m)
        }
        "MessageEvent" => {
            let role = crate::jsonl::pointer_in(&ev, "/llm_message/role")
                .and_then(Value::as_str)
                .unwrap_or("user");
            let mut m = Message::new(Role::parse(role));
            // The text is in the entry; the rest of the message is kept.
            if let Some(Value::Object(lm)) = ev.get_mut("llm_message") {
                m.content.extend(take_reasoning(lm));
                m.content.extend(parts(take_list(lm, "content")));
            }
            take_usage(&ev, &mut m);
            EntryKind::Message(m)
        }
        "ActionEvent" => {
            let mut m = Message::new(Role::Assistant);
            m.content.extend(take_reasoning(&mut ev));
            m.content.extend(parts(take_list(&mut ev, "thought")));
            let call = ev.get("tool_call").cloned().unwrap_or(Value::Null);
            let call_id = call
                .get("id")
                .or_else(|| ev.get("tool_call_id"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let name = call
                .get("name")
                .or_else(|| ev.get("tool_name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            // The arguments as the model sent them (a string of JSON).
            let input = match call.get("arguments") {
                Some(Value::String(a)) => {
                    serde_json::from_str(a).unwrap_or_else(|_| Value::String(a.clone()))
                }
                Some(other) => other.clone(),
                None => ev.get("action").cloned().unwrap_or(Value::Null),
            };
            m.content.push(Block::tool_call(call_id, name, input));
            take_usage(&ev, &mut m);
            EntryKind::Message(m)
        }
        "ObservationEvent" | "UserRejectObservation" | "AgentErrorEvent" => {
            let call_id = ev
                .get("tool_call_id")
                .and_then(Value::as_str)
                .map(str::to_string);
            let mut content = match ev.get_mut("observation") {
                Some(Value::Object(o)) => parts(take_list(o, "content")),
                _ => Vec::new(),
            };
            let obs = ev.get("observation");
            for key in ["rejection_reason", "error"] {
                if let Some(t) = ev.get(key).and_then(Value::as_str) {
                    content.push(Block::text(t));
                }
            }
            let exit = obs
                .and_then(|o| o.pointer("/metadata/exit_code"))
                .and_then(Value::as_i64);
            let is_error = kind_name != "ObservationEvent"
                || obs
                    .and_then(|o| o.get("is_error"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
                || exit.is_some_and(|c| c != 0);
            let mut m = Message::new(Role::Tool);
            m.tool_call_id = call_id.clone();
            m.tool_name = ev
                .get("tool_name")
                .and_then(Value::as_str)
                .map(str::to_string);
            m.is_error = Some(is_error);
            m.content
                .push(Block::tool_result(call_id, content, is_error));
            EntryKind::Message(m)
        }
        _ => {
            let source = ev
                .get("source")
                .and_then(Value::as_str)
                .unwrap_or(FORMAT_NAME)
                .to_string();
            let kind = EntryKind::Event {
                source,
                event_type: if kind_name.is_empty() {
                    "(none)".into()
                } else {
                    kind_name
                },
                seq: Some(n),
                payload: Value::Object(ev),
            };
            let mut e = Entry::new(id, None, kind);
            e.timestamp = ts;
            e.line = Some(n);
            return e;
        }
    };
    let mut e = Entry::new(id, None, kind);
    e.timestamp = ts;
    e.line = Some(n);
    e.extra = ev;
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_file_names_give_their_number() {
        assert_eq!(
            event_number("event-00012-6ca05210-a231-48f7-a223-3080a92cda10.json"),
            Some(12)
        );
        assert_eq!(event_number("event-x-1.json"), None);
        assert_eq!(event_number("12.json"), None);
    }
}
