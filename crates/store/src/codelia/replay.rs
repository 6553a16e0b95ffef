//! Prompt-level replay: the exact prompt of one LLM invocation, rebuilt
//! from its `llm.request` snapshot (which already reflects any compaction
//! or trimming done at the time).

use crate::StoreError;
use agentlog_formats::codelia::FORMAT;
use agentlog_formats::{Diagnostic, Format};
use agentlog_model::{EntryKind, Session};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// The prompt of one invocation, as it was sent.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prompt {
    /// The invocation number (`seq`).
    pub seq: u64,
    /// When the request was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts: Option<String>,
    /// The model named in the request input (`input.model`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The record's `model` object (provider, name, reasoning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_info: Option<Value>,
    /// The messages sent, in order.
    pub messages: Vec<Value>,
    /// The tool definitions offered (`null` or absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Value>,
    /// The tool choice (`null` or absent when the provider default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// The response's output, when the log has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// The 1-based line of the request in the log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// Returns the invocation numbers of a read run log, in file order.
pub fn invocations(session: &Session) -> Vec<u64> {
    session
        .entries
        .iter()
        .filter_map(|e| match e.kind {
            EntryKind::LlmRequest { seq, .. } => Some(seq),
            _ => None,
        })
        .collect()
}

/// Rebuilds the prompt of invocation `seq` of a read run log.
pub fn prompt_of(session: &Session, seq: u64) -> Option<Prompt> {
    let (entry, model, input) = session.entries.iter().find_map(|e| match &e.kind {
        EntryKind::LlmRequest {
            seq: s,
            model,
            input,
        } if *s == seq => Some((e, model, input)),
        _ => None,
    })?;
    let response = session.entries.iter().find_map(|e| match &e.kind {
        EntryKind::LlmResponse { seq: s, output, .. } if *s == seq => Some(output.clone()),
        _ => None,
    });
    let messages = match input.get("messages") {
        Some(Value::Array(m)) => m.clone(),
        _ => Vec::new(),
    };
    Some(Prompt {
        seq,
        ts: entry.timestamp.as_ref().map(ToString::to_string),
        model: input
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string),
        model_info: model.clone(),
        messages,
        tools: input.get("tools").cloned(),
        tool_choice: input.get("tool_choice").cloned(),
        response,
        line: entry.line,
    })
}

/// Reads the run log at `path` and rebuilds the prompt of invocation
/// `seq`, with the reader's diagnostics.
pub fn replay(path: &Path, seq: u64) -> Result<(Prompt, Vec<Diagnostic>), StoreError> {
    let read = FORMAT.read_path(path)?;
    match prompt_of(&read.session, seq) {
        Some(p) => Ok((p, read.diagnostics)),
        None => {
            let known = invocations(&read.session);
            let list = if known.is_empty() {
                "the log has no llm.request records".to_string()
            } else {
                format!(
                    "invocations in the log: {}",
                    known
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            Err(StoreError::Invalid(format!(
                "{}: no llm.request with seq {seq}; {list}",
                path.display()
            )))
        }
    }
}
