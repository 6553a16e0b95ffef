//! What a document must hold, beyond what the reader reports: entry ids
//! that are unique and parents that are entries (a document may be edited
//! by hand or by a script).

use crate::{diag, Diagnostic, FormatError};
use std::collections::HashSet;
use std::path::Path;

/// Returns every problem of the document at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let mut ids = HashSet::new();
    for e in &session.entries {
        if !ids.insert(e.id.as_str()) {
            diags.push(Diagnostic::error(
                path,
                None,
                "duplicate-id",
                format!(
                    "two entries have the id {:?}; a parent link to it is ambiguous",
                    e.id
                ),
            ));
        }
    }
    for e in &session.entries {
        if let Some(p) = e.parent_id.as_deref().filter(|p| !ids.contains(p)) {
            diags.push(Diagnostic::warning(
                path,
                None,
                "unknown-parent",
                format!("entry {:?} names parent {p:?}, which is not an entry", e.id),
            ));
        }
    }
    Ok(diags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentlog_model::{Agent, Entry, EntryKind, Message, Role, Session, SessionMeta};

    #[test]
    fn flags_duplicate_ids_and_unknown_parents() {
        let mut s = Session::new(SessionMeta::new("s", Agent::Agentlog));
        let m = || EntryKind::Message(Message::text(Role::User, "hi"));
        s.entries.push(Entry::new("a", None, m()));
        s.entries.push(Entry::new("a", None, m()));
        s.entries.push(Entry::new("b", Some("zz".into()), m()));
        s.leaf_id = Some("b".into());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.json");
        std::fs::write(&p, serde_json::to_vec(&s).unwrap()).unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        assert_eq!(codes, ["duplicate-id", "unknown-parent"]);
    }
}
