//! What an OpenHands session must hold, beyond what the reader reports:
//! results that answer calls.

use crate::{diag, Diagnostic, FormatError};
use std::path::Path;

/// Returns every problem of the session at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    diags.extend(diag::orphan_results(path, &session));
    Ok(diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_a_result_of_no_call() {
        let dir = tempfile::tempdir().unwrap();
        let events = dir.path().join("s1/events");
        std::fs::create_dir_all(&events).unwrap();
        std::fs::write(
            events.join("0.json"),
            r#"{"id":0,"source":"agent","observation":"run","content":"x","tool_call_metadata":{"function_name":"execute_bash","tool_call_id":"c9"}}"#,
        )
        .unwrap();
        let codes: Vec<&str> = validate(&events).unwrap().iter().map(|d| d.code).collect();
        assert_eq!(codes, ["orphan-result"]);
    }
}
