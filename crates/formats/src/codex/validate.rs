//! What a Codex rollout must hold, beyond what the reader reports: in the
//! envelope era, a `session_meta` record first whose payload has the
//! session's `id` (Codex lists and resumes a rollout by it), a `payload` on
//! every record, and tool outputs that answer calls.

use crate::{diag, jsonl, Diagnostic, FormatError};
use serde_json::Value;
use std::path::Path;

/// Returns every problem of the rollout at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let bytes = crate::input::read_file(path)?;
    let mut ignored = Vec::new();
    let records = jsonl::parse_values(path, &bytes, &mut ignored);
    // The envelope era: `{timestamp, type, payload}` on every line.
    let envelope = records
        .iter()
        .any(|(_, v)| v.get("type").is_some() && v.get("payload").is_some());
    if envelope {
        match records.first() {
            Some((n, v)) if v.get("type").and_then(Value::as_str) == Some("session_meta") => {
                let id = v.pointer("/payload/id").and_then(Value::as_str);
                if id.is_none_or(str::is_empty) {
                    diags.push(Diagnostic::warning(
                        path,
                        Some(*n),
                        "no-session-id",
                        "the `session_meta` record has no `payload.id`; Codex cannot resume the rollout",
                    ));
                }
            }
            first => diags.push(Diagnostic::warning(
                path,
                first.map(|(n, _)| *n),
                "no-session-meta",
                "the rollout does not start with a `session_meta` record; Codex cannot list or resume it",
            )),
        }
        for (n, v) in &records {
            if v.is_object() && v.get("payload").is_none() {
                diags.push(Diagnostic::warning(
                    path,
                    Some(*n),
                    "no-payload",
                    "a record without a `payload`",
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
    fn flags_a_missing_meta_a_record_without_payload_and_an_orphan_output() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("rollout-2025-01-01T00-00-00-x.jsonl");
        let lines = [
            r#"{"timestamp":"2025-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#,
            r#"{"timestamp":"2025-01-01T00:00:01Z","type":"event_msg"}"#,
            r#"{"timestamp":"2025-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c9","output":"x"}}"#,
        ];
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        for code in ["no-session-meta", "no-payload", "orphan-result"] {
            assert!(codes.contains(&code), "{code} in {codes:?}");
        }
        let meta =
            r#"{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"cwd":"/p"}}"#;
        std::fs::write(&p, format!("{meta}\n{}\n", lines[0])).unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        assert_eq!(codes, ["no-session-id"]);
    }
}
