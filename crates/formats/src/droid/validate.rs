//! What a Droid session must hold, beyond what the reader reports: a
//! stored session starts with its `session_start` record, every record has
//! a type, and tool results answer calls.

use crate::{diag, jsonl, Diagnostic, FormatError};
use serde_json::Value;
use std::path::Path;

/// Returns every problem of the Droid file at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let bytes = crate::input::read_file(path)?;
    let mut ignored = Vec::new();
    let records = jsonl::parse_values(path, &bytes, &mut ignored);
    let stored = records
        .iter()
        .any(|(_, v)| v.get("message").is_some_and(Value::is_object));
    let starts = records
        .first()
        .is_some_and(|(_, v)| v.get("type").and_then(Value::as_str) == Some("session_start"));
    if stored && !starts {
        diags.push(Diagnostic::warning(
            path,
            records.first().map(|(n, _)| *n),
            "no-session-start",
            "a stored session does not start with its `session_start` record; its id, title and cwd are not known",
        ));
    }
    for (n, v) in &records {
        if v.is_object() && !v.get("type").is_some_and(Value::is_string) {
            diags.push(Diagnostic::warning(
                path,
                Some(*n),
                "no-type",
                "a record without a `type`",
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
    fn flags_a_missing_start_an_untyped_record_and_an_orphan_result() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let lines = [
            r#"{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#,
            r#"{"id":"b","message":{"role":"assistant","content":[]}}"#,
            r#"{"type":"message","id":"c","parentId":"a","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":"x"}]}}"#,
        ];
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        assert!(codes.contains(&"no-session-start"), "{codes:?}");
        assert!(codes.contains(&"no-type"), "{codes:?}");
        assert!(codes.contains(&"orphan-result"), "{codes:?}");
    }
}
