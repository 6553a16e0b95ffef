//! Paths built from session content: every piece is checked to be one
//! plain file-name component, and the result to stay inside its directory.
//!
//! Session content is attacker-controlled (a timestamp of `/abs/dir/x`, an
//! id of `../../x`): writers that derive a file name from it go through
//! [`component`] and [`inside`].
//!
//! ```
//! use agentlog_formats::safe_path::{component, inside, relative};
//! use std::path::Path;
//!
//! assert_eq!(component("2025-01-01T10-00-00Z_a/b"), "2025-01-01T10-00-00Z_a_b");
//! assert_eq!(component(".."), "_");
//! let root = Path::new("/home/me/.pi/agent/sessions");
//! assert!(inside(root, &root.join("--p--/x.jsonl")).is_ok());
//! assert!(inside(root, &root.join("../x.jsonl")).is_err());
//! assert!(relative(Path::new("events/event-00000-ab12cd34.json")).is_ok());
//! assert!(relative(Path::new("../x")).is_err() && relative(Path::new("/x")).is_err());
//! ```

use crate::FormatError;
use std::path::{Component, Path};

/// Returns `s` made into one safe file-name component: path separators,
/// NUL and control characters become `_`, and a name that would be empty,
/// `.` or `..` becomes `_`. Names are cut to 200 bytes (on a character
/// boundary).
pub fn component(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c == '\0' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    if out.len() > 200 {
        let mut end = 200;
        while !out.is_char_boundary(end) {
            end -= 1;
        }
        out.truncate(end);
    }
    if out.is_empty() || out == "." || out == ".." {
        return "_".into();
    }
    out
}

/// Returns `rel` when it is a relative path of plain names only (no `..`,
/// no `.`, no root or prefix, not empty): a file's place inside a folder
/// being written. Anything else is an `InvalidInput` error.
pub fn relative(rel: &Path) -> std::io::Result<&Path> {
    let plain =
        !rel.as_os_str().is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
    if plain {
        Ok(rel)
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a plain path inside the folder", rel.display()),
        ))
    }
}

/// Checks that `path` is `root` followed only by plain components (no
/// `..`, no root or prefix, no `.`): a path derived from session content
/// that would leave `root` is an error naming both.
pub fn inside(root: &Path, path: &Path) -> Result<(), FormatError> {
    let bad = |why: &str| {
        Err(FormatError::invalid(
            path.to_path_buf(),
            None,
            format!(
                "refusing to write outside {} ({why}); the session's content made this path",
                root.display()
            ),
        ))
    };
    let Ok(rest) = path.strip_prefix(root) else {
        return bad("not under it");
    };
    if rest.as_os_str().is_empty() {
        return bad("no file name");
    }
    for c in rest.components() {
        if !matches!(c, Component::Normal(_)) {
            return bad("a `..`, `.` or absolute component");
        }
    }
    Ok(())
}
