//! Upgrading old pi session files to the current version (`agentlog
//! migrate`): in place through the store's session manager (an atomic
//! rewrite), or as new bytes for the caller to write elsewhere.
//!
//! ```
//! use agentlog_api::migrate::migrated_bytes;
//! # let dir = tempfile::tempdir()?;
//! let old = dir.path().join("old.jsonl");
//! std::fs::write(&old, "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"cwd\":\"/p\"}\n")?;
//! let m = migrated_bytes(&old)?;
//! assert_eq!(m.from, 1);
//! assert!(m.to > 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::ApiError;
use agentlog_formats::FormatError;
use agentlog_store::pi::{migrate, SessionManager};
use std::path::Path;

/// What an in-place migration did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InPlace {
    /// The version the file had, when it was older than the current one.
    pub migrated_from: Option<u64>,
    /// The version it has now.
    pub to: u64,
    /// A torn tail cut or newline added first, in words.
    pub recovery: Option<String>,
}

/// A migration's result as bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// The file's version.
    pub from: u64,
    /// The version of `bytes` (the current one, or the file's when newer).
    pub to: u64,
    /// The migrated file.
    pub bytes: Vec<u8>,
}

/// Checks that `path` is a pi session file.
fn check_pi(path: &Path) -> Result<(), ApiError> {
    let format = agentlog_formats::registry::detect(path)?;
    if format.name() != "pi" {
        return Err(ApiError::Format(FormatError::Unsupported {
            format: format.name(),
            operation: "migrating (its files have a single version; only pi files are migrated)",
        }));
    }
    Ok(())
}

/// Migrates the pi file at `path` in place (atomically), recovering a torn
/// tail first.
pub fn migrate_in_place(path: &Path) -> Result<InPlace, ApiError> {
    check_pi(path)?;
    let mut sm = SessionManager::open(path, None)?;
    // Opening migrates in memory; flushing performs the atomic rewrite.
    sm.flush()?;
    Ok(InPlace {
        migrated_from: sm.migrated_from(),
        to: migrate::CURRENT_VERSION,
        recovery: sm
            .recovery()
            .filter(|r| !r.is_clean())
            .map(|r| r.to_string()),
    })
}

/// Returns the pi file at `path` migrated to the current version (as it is
/// when it is current or newer); the file is not changed.
pub fn migrated_bytes(path: &Path) -> Result<Migrated, ApiError> {
    check_pi(path)?;
    let bytes = agentlog_formats::input::read_file(path)?;
    let header = bytes
        .split(|&b| b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
        .and_then(|l| serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(l).ok())
        .filter(|h| h.get("type").and_then(|t| t.as_str()) == Some("session"))
        .ok_or_else(|| {
            ApiError::Format(FormatError::invalid(
                path,
                Some(1),
                "not a pi session header",
            ))
        })?;
    let from = migrate::version_of(&header);
    let bytes = if from < migrate::CURRENT_VERSION {
        migrate::migrate_bytes(&bytes, from)
    } else {
        bytes
    };
    Ok(Migrated {
        from,
        to: migrate::CURRENT_VERSION.max(from),
        bytes,
    })
}
