//! Validation of ids and names that become file names.

use crate::StoreError;

/// Longest accepted name, in bytes.
pub const MAX_NAME_BYTES: usize = 255;

/// Checks that `name` can be used as a single path component: not empty,
/// not `.` or `..`, no separators, no NUL or other control characters, not
/// absolute, at most [`MAX_NAME_BYTES`] bytes.
pub fn validate_name(name: &str) -> Result<(), StoreError> {
    let bad = |reason| Err(StoreError::InvalidName { name: name.to_string(), reason });
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
    if name.contains(':') && name.len() >= 2 && name.as_bytes()[1] == b':' {
        return bad("looks like a drive path");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_names_that_escape_their_directory() {
        for bad in ["", ".", "..", "a/b", "..\\x", "/etc", "a\0b", "a\nb", "C:x"] {
            assert!(validate_name(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["550e8400-e29b-41d4-a716-446655440000", "my session", "a..b", "ünï"] {
            assert!(validate_name(good).is_ok(), "{good:?} rejected");
        }
        assert!(validate_name(&"x".repeat(256)).is_err());
    }
}
