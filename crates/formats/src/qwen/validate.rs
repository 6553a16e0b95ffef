//! What a Qwen Code chat must hold, beyond what the reader reports: a
//! `uuid` and the one `sessionId` on every record, that id as the file's
//! name (`qwen --resume <id>` opens `<id>.jsonl`), and tool results that
//! answer calls.

use crate::{diag, jsonl, Diagnostic, FormatError};
use serde_json::Value;
use std::path::Path;

/// Returns every problem of the chat at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let bytes = crate::input::read_file(path)?;
    let mut ignored = Vec::new();
    let mut first: Option<String> = None;
    for (n, v) in jsonl::parse_values(path, &bytes, &mut ignored) {
        if !v.is_object() {
            continue;
        }
        if !v.get("uuid").is_some_and(Value::is_string) {
            diags.push(Diagnostic::warning(
                path,
                Some(n),
                "no-uuid",
                "a record without a `uuid`; later records cannot name it as their parent",
            ));
        }
        match (v.get("sessionId").and_then(Value::as_str), &first) {
            (Some(id), None) => first = Some(id.to_string()),
            (Some(id), Some(f)) if id != f => diags.push(Diagnostic::warning(
                path,
                Some(n),
                "other-session",
                format!("a record of session {id} in the chat of {f}"),
            )),
            _ => {}
        }
    }
    let stem = path.file_stem().and_then(|s| s.to_str());
    if let (Some(id), Some(stem)) = (&first, stem) {
        if id != stem {
            diags.push(Diagnostic::warning(
                path,
                None,
                "id-not-file-name",
                format!("the chat's session id is {id} but the file is {stem}.jsonl; `qwen --resume {id}` will not find it"),
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
    fn flags_missing_uuids_other_sessions_and_a_file_named_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s1.jsonl");
        let lines = [
            r#"{"uuid":"a","parentUuid":null,"sessionId":"s2","type":"user","message":{"role":"user","parts":[{"text":"hi"}]}}"#,
            r#"{"parentUuid":"a","sessionId":"s3","type":"user","message":{"role":"user","parts":[{"text":"again"}]}}"#,
        ];
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        for code in ["no-uuid", "other-session", "id-not-file-name"] {
            assert!(codes.contains(&code), "{code} in {codes:?}");
        }
    }
}
