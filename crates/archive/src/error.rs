//! What can go wrong with the archive, each naming the file.

use std::path::PathBuf;

/// An archive error.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The archive's database failed.
    #[error("{}: the archive's database: {source}", path.display())]
    Sql {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// A file could not be read or written.
    #[error("{}: {what}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The durable store failed.
    #[error("{source}")]
    Store {
        /// The path.
        path: PathBuf,
        /// The store's error.
        #[source]
        source: Box<agentlog_store::StoreError>,
    },
    /// A file that is not a regular file, or too large.
    #[error("{}: {why}", path.display())]
    Refused {
        /// The file.
        path: PathBuf,
        /// Why it is not captured.
        why: String,
    },
    /// The file changed while it was read, every time it was tried.
    #[error("{}: changed while it was read ({tries} tries); nothing was stored, the next capture tries again", path.display())]
    Changed {
        /// The file.
        path: PathBuf,
        /// How many reads were tried.
        tries: u32,
    },
    /// A stored chunk does not hash to its name, or is missing.
    #[error("{}: the archive is damaged: {what}", path.display())]
    Damaged {
        /// The database file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The archive does not keep this file (or this version).
    #[error("{}: not in agentlog's archive{}", path.display(), version.map(|v| format!(" (no version {v})")).unwrap_or_default())]
    NotKept {
        /// The file.
        path: PathBuf,
        /// The version asked for.
        version: Option<u32>,
    },
    /// A restore would replace an existing file.
    #[error("{}: a file is already there; agentlog does not replace it unless told to (--force)", path.display())]
    Exists {
        /// The file.
        path: PathBuf,
    },
}

impl ArchiveError {
    pub(crate) fn sql(path: &std::path::Path, source: rusqlite::Error) -> ArchiveError {
        ArchiveError::Sql {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn io(
        path: &std::path::Path,
        what: &'static str,
        source: std::io::Error,
    ) -> ArchiveError {
        ArchiveError::Io {
            path: path.to_path_buf(),
            what,
            source,
        }
    }
}
