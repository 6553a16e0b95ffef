//! What a codelia file must hold, beyond what the reader reports: a state
//! snapshot named after its session (`state/<session_id>.json`, where
//! codelia looks for it), and tool results that answer calls.

use crate::{diag, Diagnostic, FormatError};
use std::path::Path;

/// Returns every problem of the run log or state snapshot at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if session
        .meta
        .extra
        .get(super::LAYOUT_KEY)
        .and_then(serde_json::Value::as_str)
        == Some(super::LAYOUT_STATE)
        && !session.meta.id.is_empty()
        && session.meta.id != stem
    {
        diags.push(Diagnostic::warning(
            path,
            None,
            "id-not-file-name",
            format!(
                "the snapshot is of session {} but named {stem}.json; codelia looks for state/{}.json",
                session.meta.id, session.meta.id
            ),
        ));
    }
    diags.extend(diag::orphan_results(path, &session));
    Ok(diags)
}
