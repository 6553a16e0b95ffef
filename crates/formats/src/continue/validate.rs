//! What a Continue session must hold, beyond what the reader reports:
//! messages of the roles Continue writes, and results that answer calls.

use crate::{diag, Diagnostic, FormatError};
use agentlog_model::Role;
use std::path::Path;

/// Returns every problem of the session file at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    diags.extend(diag::roles_outside(
        path,
        &session,
        &[Role::User, Role::Assistant, Role::Tool, Role::System],
        "Continue",
    ));
    diags.extend(diag::orphan_results(path, &session));
    Ok(diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_an_unknown_role_and_a_result_of_no_call() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s1.json");
        let doc = r#"{"sessionId":"s1","workspaceDirectory":"/w","history":[
            {"message":{"role":"robot","content":"?"}},
            {"message":{"role":"assistant","content":""},"toolCallStates":[{"toolCallId":"c9","output":[{"content":"x"}]}]}]}"#;
        std::fs::write(&p, doc).unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        assert_eq!(codes, ["unknown-role", "orphan-result"]);
    }
}
