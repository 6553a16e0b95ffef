//! What a Gemini CLI chat must hold, beyond what the reader reports: the
//! session's id (in the document, or in the header line of a JSONL chat),
//! an `id` on every message record (Gemini rewrites history by it), and
//! tool results that answer calls.

use crate::{diag, jsonl, Diagnostic, FormatError};
use serde_json::Value;
use std::path::Path;

/// A record and its line (0 inside a document).
type Line = (u64, Value);

/// Returns every problem of the chat at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let bytes = crate::input::read_file(path)?;
    let (header, messages): (Option<Line>, Vec<Line>) =
        match serde_json::from_slice::<Value>(&bytes) {
            // The document: `{sessionId, …, messages: […]}`.
            Ok(doc) if doc.is_object() => {
                let messages = doc
                    .get("messages")
                    .and_then(Value::as_array)
                    .map(|m| m.iter().map(|v| (0, v.clone())).collect())
                    .unwrap_or_default();
                (Some((1, doc)), messages)
            }
            _ => {
                let mut ignored = Vec::new();
                let mut records = jsonl::parse_values(path, &bytes, &mut ignored).into_iter();
                let header = records.next();
                let messages = records
                    .filter(|(_, v)| v.get("type").is_some() && v.get("$set").is_none())
                    .collect();
                (header, messages)
            }
        };
    let id = header
        .as_ref()
        .and_then(|(_, h)| h.get("sessionId"))
        .and_then(Value::as_str);
    if id.is_none_or(str::is_empty) {
        diags.push(Diagnostic::warning(
            path,
            header.as_ref().map(|(n, _)| *n),
            "no-session-id",
            "no `sessionId` where Gemini CLI keeps it (the document, or the chat's first line); Gemini cannot resume the chat",
        ));
    }
    for (n, m) in &messages {
        if !m.get("id").is_some_and(Value::is_string) {
            diags.push(Diagnostic::warning(
                path,
                (*n > 0).then_some(*n),
                "no-id",
                "a message record without an `id`; Gemini CLI rewrites history by message id",
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
    fn flags_a_missing_session_id_and_a_message_without_id() {
        let dir = tempfile::tempdir().unwrap();
        let chats = dir.path().join(".gemini/tmp/p/chats");
        std::fs::create_dir_all(&chats).unwrap();
        let p = chats.join("session-2025-01-01T00-00-abcd1234.jsonl");
        let lines = [
            r#"{"projectHash":"h","startTime":"2025-01-01T00:00:00Z","kind":"main"}"#,
            r#"{"type":"user","timestamp":"2025-01-01T00:00:01Z","content":[{"text":"hi"}]}"#,
        ];
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        for code in ["no-session-id", "no-id"] {
            assert!(codes.contains(&code), "{code} in {codes:?}");
        }
    }
}
