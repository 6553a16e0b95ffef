//! What a pi session must hold, beyond what the reader reports: entry ids
//! that are unique (pi's tree is built from them), parents that are
//! entries, and tool results that answer calls.

use crate::{diag, Diagnostic, FormatError};
use std::collections::HashMap;
use std::path::Path;

/// Returns every problem of the session at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let mut lines: HashMap<&str, Option<u64>> = HashMap::new();
    for e in session.entries.iter().filter(|e| !super::is_raw_lines(e)) {
        if let Some(first) = lines.insert(e.id.as_str(), e.line) {
            diags.push(Diagnostic::error(
                path,
                e.line,
                "duplicate-id",
                format!(
                    "entry id {:?} was already used{}; pi links to one of them only",
                    e.id,
                    first.map(|l| format!(" on line {l}")).unwrap_or_default()
                ),
            ));
        }
    }
    for e in &session.entries {
        if let Some(p) = e.parent_id.as_deref().filter(|p| !lines.contains_key(p)) {
            diags.push(Diagnostic::warning(
                path,
                e.line,
                "unknown-parent",
                format!(
                    "entry {:?} names parent {p:?}, which is not an entry of the file",
                    e.id
                ),
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
    fn flags_duplicate_ids_unknown_parents_and_orphan_results() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:02Z","message":{"role":"user","content":"again","timestamp":2}}"#,
            r#"{"type":"message","id":"b","parentId":"zz","timestamp":"2025-01-01T00:00:03Z","message":{"role":"toolResult","toolCallId":"t9","toolName":"ls","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":3}}"#,
        ];
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        for code in ["duplicate-id", "unknown-parent", "orphan-result"] {
            assert!(codes.contains(&code), "{code} in {codes:?}");
        }
    }
}
