//! What an ATIF trajectory must hold beyond what the reader reports:
//! steps of the three sources, agent-only fields on the agent's steps, and
//! observation results that answer a call of their own step.

use crate::{diag, Diagnostic, FormatError};
use agentlog_model::{BlockKind, EntryKind, Role};
use std::path::Path;

/// Returns every problem of the trajectory file at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let mut calls: Vec<String> = Vec::new();
    for e in &session.entries {
        let EntryKind::Message(m) = &e.kind else {
            continue;
        };
        if m.role == Role::Tool {
            for b in &m.content {
                if let BlockKind::ToolResult {
                    tool_call_id: Some(c),
                    ..
                } = &b.kind
                {
                    if !calls.contains(c) {
                        diags.push(Diagnostic::error(
                            path,
                            e.line,
                            "orphan-result",
                            format!("step {}: an observation answers call {c:?}, which the step did not make", e.line.unwrap_or(0)),
                        ));
                    }
                }
            }
            continue;
        }
        calls = m
            .content
            .iter()
            .filter_map(|b| match &b.kind {
                BlockKind::ToolCall { id: Some(id), .. } => Some(id.clone()),
                _ => None,
            })
            .collect();
        let agent_only = m.usage.is_some()
            || m.model.is_some()
            || m.content
                .iter()
                .any(|b| matches!(b.kind, BlockKind::Thinking { .. }))
            || e.extra.contains_key("reasoning_effort");
        if m.role != Role::Assistant && agent_only {
            diags.push(Diagnostic::error(
                path,
                e.line,
                "agent-only-field",
                format!("step {}: model, reasoning, tool calls or metrics on a step that is not the agent's", e.line.unwrap_or(0)),
            ));
        }
    }
    Ok(diags)
}
