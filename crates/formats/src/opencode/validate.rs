//! What an OpenCode (or Kilo Code) session must hold, beyond what the
//! reader reports: tool results that answer calls. A whole database is
//! checked session by session.

use super::OpenCodeFormat;
use crate::member::{member_path, split_member};
use crate::{diag, Diagnostic, FormatError};
use std::path::Path;

/// Returns every problem of the session at `path` (`<db>#<id>`), or of
/// every session of the database at `path`.
pub(super) fn validate(
    format: &OpenCodeFormat,
    path: &Path,
) -> Result<Vec<Diagnostic>, FormatError> {
    if split_member(path).is_some() {
        let (session, mut diags) = diag::read_and_check(format, path)?;
        diags.extend(diag::orphan_results(path, &session));
        return Ok(diags);
    }
    let mut diags = Vec::new();
    for id in super::read::session_ids(path)? {
        diags.extend(validate(format, &member_path(path, &id))?);
    }
    Ok(diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_database_is_checked_session_by_session() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/opencode/1.18.33/opencode.db");
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("opencode.db");
        std::fs::copy(&src, &db).unwrap();
        let ids = super::super::read::session_ids(&db).unwrap();
        assert!(!ids.is_empty());
        let whole = validate(&super::super::FORMAT, &db).unwrap();
        let mut each = Vec::new();
        for id in &ids {
            each.extend(validate(&super::super::FORMAT, &member_path(&db, id)).unwrap());
        }
        assert_eq!(whole, each);
        // A database that is not OpenCode's is an error, not an empty report.
        let other = dir.path().join("other.db");
        rusqlite::Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t(x);")
            .unwrap();
        assert!(validate(&super::super::FORMAT, &other).is_err());
    }
}
