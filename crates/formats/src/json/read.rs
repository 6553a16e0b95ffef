//! Reads a document: the session as it is, and a leaf that names no entry
//! reported.

use crate::{Diagnostic, FormatError, Read};
use std::path::Path;

/// Reads the document at `path`, whose bytes are `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let session = super::wire::parse(path, bytes)?;
    let mut diagnostics = Vec::new();
    if let Some(leaf) = &session.leaf_id {
        if !session.entries.iter().any(|e| &e.id == leaf) {
            diagnostics.push(Diagnostic::warning(
                path,
                None,
                "unknown-leaf",
                format!("leaf {leaf:?} is not an entry"),
            ));
        }
    }
    Ok(Read {
        session,
        diagnostics,
    })
}
