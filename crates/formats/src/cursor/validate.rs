//! What a Cursor session must hold, beyond what the reader reports: tool
//! results that answer calls, and a conversation (a chat store whose tree
//! reaches no message is reported, not shown as empty).

use crate::{diag, Diagnostic, FormatError};
use std::path::Path;

/// Returns every problem of the chat directory, store or transcript at
/// `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    if session.message_count() == 0 {
        diags.push(Diagnostic::warning(
            path,
            None,
            "empty",
            "the session holds no prompt or answer",
        ));
    }
    diags.extend(diag::orphan_results(path, &session));
    Ok(diags)
}
