//! What a Kimi session must hold, beyond what the reader reports: tool
//! results that answer calls, and a usage figure for every answer.

use crate::{diag, Diagnostic, FormatError};
use agentlog_model::{EntryKind, Role};
use std::path::Path;

/// Returns every problem of the `context.jsonl` at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    for e in &session.entries {
        if let EntryKind::Message(m) = &e.kind {
            if m.role == Role::Assistant && m.usage.is_none() {
                diags.push(Diagnostic::warning(
                    path,
                    e.line,
                    "no-usage",
                    format!(
                        "answer {} has no StatusUpdate in {} to take its usage from",
                        e.id,
                        super::wire::WIRE
                    ),
                ));
            }
        }
    }
    diags.extend(diag::orphan_results(path, &session));
    Ok(diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_an_answer_without_usage_and_an_orphan_result() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("context.jsonl");
        std::fs::write(
            &p,
            "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"yo\"}\n{\"role\":\"tool\",\"content\":\"x\",\"tool_call_id\":\"c9\"}\n",
        )
        .unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        assert_eq!(codes, ["no-usage", "orphan-result"]);
        std::fs::write(
            dir.path().join("wire.jsonl"),
            "{\"timestamp\":1.5,\"message\":{\"type\":\"StatusUpdate\",\"payload\":{\"token_usage\":{\"input_other\":3,\"output\":1}}}}\n",
        )
        .unwrap();
        std::fs::write(
            &p,
            "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"yo\"}\n",
        )
        .unwrap();
        assert!(validate(&p).unwrap().is_empty());
    }
}
