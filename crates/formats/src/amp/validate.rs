//! What an Amp thread must hold, beyond what the reader reports: messages
//! of the roles Amp writes, and results that answer calls.

use crate::{diag, Diagnostic, FormatError};
use agentlog_model::Role;
use std::path::Path;

/// Returns every problem of the thread file at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    diags.extend(diag::roles_outside(
        path,
        &session,
        &[
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Custom("info".into()),
        ],
        "Amp",
    ));
    diags.extend(diag::orphan_results(path, &session));
    Ok(diags)
}
