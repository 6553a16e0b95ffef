//! The error type of the store crate.

use std::path::PathBuf;

/// Errors of durable storage.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file system operation failed.
    #[error("{}: {op}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done (`open`, `append`, `fsync`, …).
        op: &'static str,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Another writer holds the session file.
    #[error("{}: locked by another writer ({holder}); wait for it to finish or use --wait", path.display())]
    Locked {
        /// The session file.
        path: PathBuf,
        /// Who holds it, as far as known.
        holder: String,
    },
    /// An id or name cannot be used as a path component.
    #[error("invalid name {name:?}: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why not.
        reason: &'static str,
    },
    /// The data to store is not acceptable.
    #[error("{0}")]
    Invalid(String),
    /// A stored file could not be read back.
    #[error(transparent)]
    Format(#[from] agentlog_formats::FormatError),
}

impl StoreError {
    /// Returns an `Io` error.
    pub fn io(path: impl Into<PathBuf>, op: &'static str, source: std::io::Error) -> StoreError {
        StoreError::Io { path: path.into(), op, source }
    }
}
