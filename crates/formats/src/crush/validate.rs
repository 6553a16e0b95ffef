//! What a Crush session must hold, beyond what the reader reports: tool
//! results that answer calls.

use crate::{diag, Diagnostic, FormatError};
use std::path::Path;

/// Returns every problem of the session at `path` (`crush.db#<id>`).
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    diags.extend(diag::orphan_results(path, &session));
    Ok(diags)
}
