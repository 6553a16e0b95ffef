//! What a Copilot CLI event file must hold, beyond what the reader reports:
//! a `session.start` (or `session.resume`) event first with the session's
//! id (Copilot resumes by it), a `type` and `data` on every event, and tool
//! results that answer calls.

use crate::{diag, jsonl, Diagnostic, FormatError};
use serde_json::Value;
use std::path::Path;

/// Returns every problem of the event file at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let bytes = crate::input::read_file(path)?;
    let mut ignored = Vec::new();
    let records = jsonl::parse_values(path, &bytes, &mut ignored);
    let ty = |v: &Value| v.get("type").and_then(Value::as_str).map(str::to_string);
    match records.first() {
        Some((n, v)) if matches!(ty(v).as_deref(), Some("session.start" | "session.resume")) => {
            if !v.pointer("/data/sessionId").is_some_and(Value::is_string) {
                diags.push(Diagnostic::warning(
                    path,
                    Some(*n),
                    "no-session-id",
                    "the first event has no `data.sessionId`; Copilot CLI cannot resume the session",
                ));
            }
        }
        first => diags.push(Diagnostic::warning(
            path,
            first.map(|(n, _)| *n),
            "no-session-start",
            "the file does not start with a `session.start` event; its id, cwd and model are not known",
        )),
    }
    for (n, v) in &records {
        if v.is_object() && (ty(v).is_none() || !v.get("data").is_some_and(Value::is_object)) {
            diags.push(Diagnostic::warning(
                path,
                Some(*n),
                "not-an-event",
                "a line without an event `type` and `data` object",
            ));
        }
    }
    diags.extend(diag::orphan_results(path, &session));
    Ok(diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_a_missing_start_a_shapeless_line_and_an_orphan_result() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("events.jsonl");
        let lines = [
            r#"{"type":"user.message","id":"a","data":{"content":"hi"}}"#,
            r#"{"type":"assistant.message","id":"b"}"#,
            r#"{"type":"tool.execution_complete","id":"c","data":{"toolCallId":"t9","success":true,"result":{"content":"x"}}}"#,
        ];
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        for code in ["no-session-start", "not-an-event", "orphan-result"] {
            assert!(codes.contains(&code), "{code} in {codes:?}");
        }
    }
}
