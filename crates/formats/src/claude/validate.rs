//! What a Claude Code transcript must hold, beyond what the reader
//! reports: records of other sessions (noted), a `type` on every record,
//! and tool results that answer calls.

use crate::{diag, jsonl, Diagnostic, FormatError};
use serde_json::Value;
use std::path::Path;

/// Returns every problem of the transcript at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let bytes = crate::input::read_file(path)?;
    let mut ignored = Vec::new();
    let mut first_id: Option<String> = None;
    let mut others = 0usize;
    for (n, v) in jsonl::parse_values(path, &bytes, &mut ignored) {
        if v.is_object() && !v.get("type").is_some_and(Value::is_string) {
            diags.push(Diagnostic::warning(
                path,
                Some(n),
                "no-type",
                "a record without a `type`",
            ));
        }
        let Some(id) = v.get("sessionId").and_then(Value::as_str) else {
            continue;
        };
        match &first_id {
            None => first_id = Some(id.to_string()),
            Some(first) if first != id => {
                others += 1;
                if others == 1 {
                    diags.push(Diagnostic::info(
                        path,
                        Some(n),
                        "other-session",
                        format!(
                            "a record of session {id} in the transcript of {first} (history a resume carried over, or files joined)"
                        ),
                    ));
                }
            }
            Some(_) => {}
        }
    }
    if others > 1 {
        diags.push(Diagnostic::info(
            path,
            None,
            "other-session",
            format!("{others} records in all name another session"),
        ));
    }
    diags.extend(diag::orphan_results(path, &session));
    Ok(diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_other_sessions_untyped_records_and_orphan_results() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let lines = [
            r#"{"type":"user","uuid":"a","parentUuid":null,"sessionId":"s1","message":{"role":"user","content":"hi"}}"#,
            r#"{"uuid":"x","sessionId":"s1"}"#,
            r#"{"type":"user","uuid":"b","parentUuid":"a","sessionId":"s2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":"x"}]}}"#,
        ];
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        for code in ["no-type", "other-session", "orphan-result"] {
            assert!(codes.contains(&code), "{code} in {codes:?}");
        }
    }
}
