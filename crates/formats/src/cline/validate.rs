//! What a Cline session must hold, beyond what the reader reports: its id,
//! messages of the two roles Cline writes, and results that answer calls.

use crate::{diag, Diagnostic, FormatError};
use agentlog_model::Role;
use serde_json::Value;
use std::path::Path;

/// Returns every problem of the messages file at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let has_id = session
        .meta
        .extra
        .get("messages_file")
        .is_some_and(|f| f.get("sessionId").is_some_and(Value::is_string));
    if !has_id {
        diags.push(Diagnostic::warning(
            path,
            None,
            "no-session-id",
            "no `sessionId`; the id is taken from the file name",
        ));
    }
    diags.extend(diag::roles_outside(
        path,
        &session,
        &[Role::User, Role::Assistant],
        "Cline",
    ));
    diags.extend(diag::orphan_results(path, &session));
    Ok(diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_a_missing_id_an_unknown_role_and_an_orphan_result() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s1.messages.json");
        let doc = r#"{"version":1,"messages":[
            {"role":"user","content":"hi"},
            {"role":"robot","content":"?"},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t9","content":"x"}]}]}"#;
        std::fs::write(&p, doc).unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        assert_eq!(codes, ["no-session-id", "unknown-role", "orphan-result"]);
        let ok = r#"{"version":1,"sessionId":"s1","messages":[
            {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ls","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}]}"#;
        std::fs::write(&p, ok).unwrap();
        assert!(validate(&p).unwrap().is_empty());
    }
}
