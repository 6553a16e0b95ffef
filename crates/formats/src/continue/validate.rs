//! What a Continue session must hold, beyond what the reader reports:
//! messages of the roles Continue writes, and results that answer calls.

use crate::{diag, Diagnostic, FormatError};
use agentlog_model::{EntryKind, Role};
use std::path::Path;

/// Returns every problem of the session file at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    for e in &session.entries {
        if let EntryKind::Message(m) = &e.kind {
            if !matches!(
                m.role,
                Role::User | Role::Assistant | Role::Tool | Role::System
            ) {
                diags.push(Diagnostic::warning(
                    path,
                    e.line,
                    "unknown-role",
                    format!(
                        "message {} has role \"{}\"; Continue writes user, assistant, tool and system",
                        e.id,
                        m.role.as_str()
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
