//! What a Vibe session must hold, beyond what the reader reports: messages
//! of the roles Vibe writes, and tool results that answer calls.

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
        "Vibe",
    ));
    diags.extend(diag::orphan_results(path, &session));
    Ok(diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_an_unknown_role_and_an_orphan_result() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("session_20260101_000000_abcdef12");
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("messages.jsonl");
        std::fs::write(
            &p,
            "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"robot\",\"content\":\"?\"}\n{\"role\":\"tool\",\"content\":\"x\",\"tool_call_id\":\"c9\"}\n",
        )
        .unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        assert_eq!(codes, ["no-meta", "unknown-role", "orphan-result"]);
        std::fs::write(
            &p,
            "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"c1\",\"function\":{\"name\":\"bash\",\"arguments\":\"{}\"}}]}\n{\"role\":\"tool\",\"content\":\"x\",\"tool_call_id\":\"c1\"}\n",
        )
        .unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        assert_eq!(codes, ["no-meta"]);
    }
}
