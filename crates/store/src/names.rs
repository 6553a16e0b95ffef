//! Validation of ids and names that become file names.
//!
//! Session ids, run ids and names arrive from files and from users; before
//! one becomes part of a path it must be a single, harmless path
//! component, so that no id can climb out of its store directory or name a
//! file elsewhere.

use crate::StoreError;
use std::path::{Component, Path, PathBuf};

/// Longest accepted name, in bytes.
pub const MAX_NAME_BYTES: usize = 255;

/// Checks that `name` can be used as a single path component: not empty,
/// not `.` or `..`, no separators (`/` or `\`), no NUL or other control
/// characters, not absolute, not a drive path (`C:`), at most
/// [`MAX_NAME_BYTES`] bytes.
pub fn validate_name(name: &str) -> Result<(), StoreError> {
    let bad = |reason| {
        Err(StoreError::InvalidName {
            name: name.to_string(),
            reason,
        })
    };
    if name.is_empty() {
        return bad("empty");
    }
    if name == "." || name == ".." {
        return bad("a relative directory reference");
    }
    if name.len() > MAX_NAME_BYTES {
        return bad("longer than 255 bytes");
    }
    if name.contains('/') || name.contains('\\') {
        return bad("contains a path separator");
    }
    if name.chars().any(char::is_control) {
        return bad("contains a control character");
    }
    let b = name.as_bytes();
    if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        return bad("looks like a drive path");
    }
    Ok(())
}

/// Returns `dir/name` after checking `name` with [`validate_name`].
pub fn join_name(dir: &Path, name: &str) -> Result<PathBuf, StoreError> {
    validate_name(name)?;
    Ok(dir.join(name))
}

/// Returns `dir/<id>.<extension>` for a stored session after checking `id`
/// with [`validate_name`] and refusing a leading dot (hidden and temporary
/// files share the directory).
pub fn session_file(dir: &Path, id: &str, extension: &str) -> Result<PathBuf, StoreError> {
    validate_name(id)?;
    if id.starts_with('.') {
        return Err(StoreError::InvalidName {
            name: id.to_string(),
            reason: "starts with a dot (hidden and temporary files)",
        });
    }
    Ok(dir.join(format!("{id}.{extension}")))
}

/// Checks a relative path of several components (`a/b/c.jsonl`) meant to
/// stay inside a base directory: not absolute, no `..` or `.` components,
/// and every component a valid name.
pub fn validate_relative_path(path: &Path) -> Result<(), StoreError> {
    let text = path.to_string_lossy();
    let bad = |reason| {
        Err(StoreError::InvalidName {
            name: text.to_string(),
            reason,
        })
    };
    if path.as_os_str().is_empty() {
        return bad("empty");
    }
    for c in path.components() {
        match c {
            Component::Normal(part) => match part.to_str() {
                Some(s) => validate_name(s)?,
                None => return bad("not valid UTF-8"),
            },
            Component::ParentDir => return bad("climbs out with '..'"),
            Component::CurDir => return bad("contains a '.' component"),
            Component::RootDir | Component::Prefix(_) => return bad("absolute"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_names_that_escape_their_directory() {
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "..\\x",
            "/etc",
            "a\0b",
            "a\nb",
            "C:x",
            "a\u{7f}",
            "x\u{85}y",
            "../../etc/passwd",
        ] {
            assert!(validate_name(bad).is_err(), "{bad:?} accepted");
        }
        for good in [
            "550e8400-e29b-41d4-a716-446655440000",
            "my session",
            "a..b",
            "ünï",
            "2025-01-01T10-00-00",
            "...",
            "1:2",
        ] {
            assert!(validate_name(good).is_ok(), "{good:?} rejected");
        }
        assert!(validate_name(&"x".repeat(256)).is_err());
        assert!(validate_name(&"x".repeat(255)).is_ok());
    }

    #[test]
    fn joins_only_valid_names() {
        assert_eq!(
            join_name(Path::new("/s"), "a.jsonl").unwrap(),
            PathBuf::from("/s/a.jsonl")
        );
        let err = join_name(Path::new("/s"), "../x").unwrap_err();
        assert!(err.to_string().contains("\"../x\""), "{err}");
    }

    #[test]
    fn relative_paths_stay_inside() {
        assert!(validate_relative_path(Path::new("a/b/c.jsonl")).is_ok());
        for bad in ["", "/a", "a/../b", "./a", "a/\u{1}"] {
            assert!(
                validate_relative_path(Path::new(bad)).is_err(),
                "{bad:?} accepted"
            );
        }
    }
}
