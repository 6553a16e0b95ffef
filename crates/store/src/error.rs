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
    /// An append failed (the disk is full, a quota is exceeded, an I/O
    /// error). When `rolled_back` is true the file holds exactly the lines
    /// it held before: the partial line was removed.
    #[error(
        "{}: appending {bytes} bytes failed: {source}; {}",
        path.display(),
        if *rolled_back {
            "nothing of them was kept and every earlier line is intact"
        } else {
            "the partial line could not be removed; reopen the file to cut it off"
        }
    )]
    Append {
        /// The session file.
        path: PathBuf,
        /// The size of what was to be appended: one line with its newline,
        /// or the lines of a group under the grouped policy.
        bytes: usize,
        /// True when the file was truncated back to its length before the append.
        rolled_back: bool,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// Another writer holds the session file.
    #[error("{}: locked by another writer ({holder}); wait for it to finish", path.display())]
    Locked {
        /// The session file.
        path: PathBuf,
        /// Who holds it, as far as known (`pid 12 on host h since …`).
        holder: String,
    },
    /// A session file is a symbolic link; appends refuse links so that a
    /// name inside a store cannot be pointed at a file elsewhere.
    #[error("{}: is a symbolic link; session files are opened only as regular files (open the link's target instead)", path.display())]
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// A session file is not a regular file (a directory, a FIFO, a device).
    #[error("{}: not a regular file", path.display())]
    NotRegularFile {
        /// The path.
        path: PathBuf,
    },
    /// The writer cannot be used any more (an fsync failed, or a failed
    /// append could not be rolled back); reopen the file.
    #[error("{}: writer unusable after an earlier failure ({reason}); reopen the file", path.display())]
    Unusable {
        /// The session file.
        path: PathBuf,
        /// The earlier failure.
        reason: String,
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
        StoreError::Io {
            path: path.into(),
            op,
            source,
        }
    }

    /// Returns the underlying I/O error, when there is one.
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            StoreError::Io { source, .. } | StoreError::Append { source, .. } => Some(source),
            _ => None,
        }
    }

    /// True when the file system is out of space or quota.
    pub fn is_disk_full(&self) -> bool {
        self.io_error().is_some_and(|e| {
            matches!(
                e.kind(),
                std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
            ) || e.raw_os_error() == Some(libc::ENOSPC)
                || e.raw_os_error() == Some(libc::EDQUOT)
        })
    }
}
