//! Writes Continue CLI session files: a Continue session item for item,
//! and any other as the history Continue keeps (prompts, answers with
//! their reasoning and `toolCalls`, each call's result in the answer's
//! `toolCallStates`), which `cn --resume` continues (it takes the newest
//! session file).

use super::wire::UNTITLED;
use super::FORMAT_NAME;
use crate::chat::{call_value, own_fields, part_value, put_content};
use crate::{Fidelity, FormatError};
use agentlog_model::{Block, BlockKind, EntryKind, Message, Role, Session};
use serde_json::{json, Map, Value};
use std::io::Write;

pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let mut fidelity = Fidelity::new(FORMAT_NAME);
    let (mut doc, id, history) = if session.meta.format.as_deref() == Some(FORMAT_NAME) {
        let doc = match session.meta.extra.get("session_file") {
            Some(Value::Object(d)) => d.clone(),
            _ => Map::new(),
        };
        (
            doc,
            session.meta.id.clone(),
            own_items(session, &mut fidelity),
        )
    } else {
        let mut doc = Map::new();
        let title = session
            .meta
            .title
            .clone()
            .unwrap_or_else(|| UNTITLED.into());
        doc.insert("title".into(), title.into());
        let cwd = session.meta.cwd.clone().unwrap_or_default();
        doc.insert("workspaceDirectory".into(), cwd.into());
        doc.insert("usage".into(), totals(session));
        // Continue names a session by its file (`<id>.json`).
        let id = crate::safe_path::component(&session.meta.id);
        (doc, id, foreign_items(session, &mut fidelity))
    };
    doc.insert("sessionId".into(), id.into());
    doc.insert("history".into(), Value::Array(history));
    // Continue writes its files indented by two spaces.
    serde_json::to_writer_pretty(&mut *out, &Value::Object(doc))
        .map_err(|e| FormatError::write("continue session", std::io::Error::other(e)))?;
    Ok(fidelity)
}

/// A Continue session's items as they were read.
fn own_items(session: &Session, fidelity: &mut Fidelity) -> Vec<Value> {
    let mut items = Vec::new();
    for e in &session.entries {
        match &e.kind {
            // A call's result is written in its answer's `toolCallStates`,
            // which the item keeps.
            EntryKind::Message(m) if m.role == Role::Tool && e.id.contains('/') => {}
            EntryKind::Message(m) => {
                let mut item = e.extra.clone();
                let mut msg = own_fields(&m.extra);
                msg.insert("role".into(), m.role.as_str().into());
                let mut parts = Vec::new();
                let mut calls = Vec::new();
                for b in &m.content {
                    match &b.kind {
                        BlockKind::Thinking { text, .. } => {
                            let r = item
                                .entry("reasoning")
                                .or_insert_with(|| Value::Object(Map::new()));
                            if let Value::Object(r) = r {
                                r.insert("text".into(), text.clone().into());
                            }
                        }
                        BlockKind::ToolCall { .. } => calls.push(call_value(b)),
                        _ => parts.push(part_value(b)),
                    }
                }
                put_content(&mut msg, m.content_is_text, parts, calls, "toolCalls");
                item.insert("message".into(), Value::Object(msg));
                items.push(Value::Object(item));
            }
            EntryKind::Unknown { raw, .. } => items.push(raw.clone()),
            other => fidelity.lost(format!("{} entry", other.name()), Some(&e.id)),
        }
    }
    items
}

/// Another agent's session as Continue's history.
fn foreign_items(session: &Session, fidelity: &mut Fidelity) -> Vec<Value> {
    let mut items: Vec<Value> = Vec::new();
    for e in session.active_branch() {
        let EntryKind::Message(m) = &e.kind else {
            fidelity.lost(format!("{} entry", e.kind.name()), Some(&e.id));
            continue;
        };
        if m.injected.is_some() {
            fidelity.lost("injected context message", Some(&e.id));
            continue;
        }
        match m.role {
            Role::User | Role::Tool => {
                let mut text = Vec::new();
                for b in &m.content {
                    match &b.kind {
                        BlockKind::ToolResult {
                            tool_call_id,
                            content,
                            is_error,
                        } => attach_result(
                            &mut items,
                            tool_call_id.as_ref().or(m.tool_call_id.as_ref()),
                            content,
                            *is_error,
                            &e.id,
                            fidelity,
                        ),
                        BlockKind::Text { text: t } if m.role == Role::Tool => attach_result(
                            &mut items,
                            m.tool_call_id.as_ref(),
                            &[Block::text(t.clone())],
                            m.is_error.unwrap_or(false),
                            &e.id,
                            fidelity,
                        ),
                        BlockKind::Text { text: t } => text.push(t.clone()),
                        other => fidelity.lost(format!("{} block", other.name()), Some(&e.id)),
                    }
                }
                if !text.is_empty() {
                    let text = text.join("\n");
                    items.push(json!({
                        "message": {"role": "user", "content": text},
                        "contextItems": [],
                        "editorState": text,
                    }));
                }
            }
            Role::Assistant => {
                if let Some(item) = answer_item(m, &e.id, fidelity) {
                    items.push(item);
                }
            }
            _ => fidelity.lost(format!("{} message", m.role.as_str()), Some(&e.id)),
        }
    }
    items
}

/// An answer: its text, its reasoning, its calls (their states filled in
/// as their results come), its usage.
fn answer_item(m: &Message, id: &str, fidelity: &mut Fidelity) -> Option<Value> {
    let mut texts = Vec::new();
    let mut reasoning = Vec::new();
    let mut calls = Vec::new();
    for b in &m.content {
        match &b.kind {
            BlockKind::Text { text } => texts.push(text.clone()),
            BlockKind::Thinking {
                text, signature, ..
            } => {
                if signature.is_some() {
                    fidelity.lost("thinking signature", Some(id));
                }
                reasoning.push(text.clone());
            }
            BlockKind::ToolCall { id, name, input } => {
                let mut c = call_value(&Block::tool_call(id.clone(), name.clone(), input.clone()));
                c["type"] = "function".into();
                calls.push(c);
            }
            other => fidelity.lost(format!("{} block", other.name()), Some(id)),
        }
    }
    if texts.is_empty() && calls.is_empty() && reasoning.is_empty() {
        return None;
    }
    let mut msg = json!({"role": "assistant", "content": texts.join("\n")});
    if !calls.is_empty() {
        msg["toolCalls"] = Value::Array(calls);
    }
    if let Some(u) = &m.usage {
        let prompt = u.input + u.cache_read + u.cache_write;
        let mut usage = json!({
            "prompt_tokens": prompt,
            "completion_tokens": u.output,
            "total_tokens": prompt + u.output,
            "completion_tokens_details": {"reasoning_tokens": u.reasoning},
        });
        if let Some(model) = &m.model {
            usage["model"] = model.clone().into();
        }
        msg["usage"] = usage;
    }
    let mut item = json!({"message": msg, "contextItems": []});
    if !reasoning.is_empty() {
        item["reasoning"] = json!({"active": false, "text": reasoning.join("\n")});
    }
    Some(item)
}

/// Puts a call's result in the state of that call, in the answer that
/// made it.
fn attach_result(
    items: &mut [Value],
    call: Option<&String>,
    content: &[Block],
    is_error: bool,
    entry: &str,
    fidelity: &mut Fidelity,
) {
    let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
    let found = call.and_then(|call| {
        items.iter_mut().rev().find_map(|item| {
            let c = item
                .pointer("/message/toolCalls")?
                .as_array()?
                .iter()
                .find(|c| c.get("id").and_then(Value::as_str) == Some(call.as_str()))?
                .clone();
            Some((item, c))
        })
    });
    let Some((item, c)) = found else {
        fidelity.lost("tool result without its call", Some(entry));
        return;
    };
    let parsed = c
        .pointer("/function/arguments")
        .and_then(Value::as_str)
        .and_then(|a| serde_json::from_str::<Value>(a).ok())
        .unwrap_or(Value::Null);
    let state = json!({
        "toolCallId": c["id"],
        "toolCall": c,
        "status": if is_error { "errored" } else { "done" },
        "parsedArgs": parsed,
        "output": [{
            "content": text.join("\n"),
            "name": "Tool Result",
            "description": "Tool execution result",
        }],
    });
    match item.get_mut("toolCallStates") {
        Some(Value::Array(states)) => states.push(state),
        _ => item["toolCallStates"] = json!([state]),
    }
}

/// The session's totals, as Continue keeps them beside its history.
fn totals(session: &Session) -> Value {
    let (mut prompt, mut completion, mut cached, mut written) = (0u64, 0u64, 0u64, 0u64);
    for m in session.entries.iter().filter_map(|e| e.message()) {
        if let Some(u) = &m.usage {
            prompt += u.input + u.cache_read + u.cache_write;
            completion += u.output;
            cached += u.cache_read;
            written += u.cache_write;
        }
    }
    json!({
        "totalCost": 0,
        "promptTokens": prompt,
        "completionTokens": completion,
        "promptTokensDetails": {"cachedTokens": cached, "cacheWriteTokens": written},
    })
}
