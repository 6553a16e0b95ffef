//! The error type of the index crate.

use std::path::PathBuf;

/// Errors of building, updating and querying the index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The index database failed.
    #[error("index {}: {source}", path.display())]
    Sqlite {
        /// The index file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },
    /// A file could not be read, written or removed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The search query cannot be understood.
    #[error("search query {query:?}: {message}")]
    Query {
        /// The query as given.
        query: String,
        /// What is wrong and what to write instead.
        message: String,
    },
    /// A filter value (a date, a duration, a name) cannot be understood.
    #[error("{what} {value:?}: {message}")]
    Filter {
        /// Which filter (`--since`, `--until`, …).
        what: &'static str,
        /// The value as given.
        value: String,
        /// What is accepted.
        message: String,
    },
    /// The file at the index path is not an agentlog index: it is never
    /// replaced or removed.
    #[error("{}: {what}, not an agentlog index; agentlog leaves it alone", path.display())]
    NotAnIndex {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        what: String,
    },
    /// Another process holds the index locked for longer than agentlog
    /// waits.
    #[error("index {} is busy: another process holds it ({message}); try again when it is done", path.display())]
    Busy {
        /// The index file.
        path: PathBuf,
        /// SQLite's message.
        message: String,
    },
    /// The index file is damaged.
    #[error("index {} is damaged ({problems}); a rebuild makes a new index from the session files", path.display())]
    Damaged {
        /// The index file.
        path: PathBuf,
        /// What `PRAGMA quick_check` found.
        problems: String,
    },
    /// The backend cannot do this.
    #[error("the {backend} index backend does not support {operation}")]
    Unsupported {
        /// The backend's name.
        backend: &'static str,
        /// What was asked.
        operation: &'static str,
    },
    /// Another backend's failure (PostgreSQL), as text.
    #[error("{backend}: {message}")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// What failed.
        message: String,
    },
    /// A session of the catalog could not be read.
    #[error("{message}")]
    Session {
        /// The session file, as the catalog names it.
        path: String,
        /// What went wrong (naming the file).
        message: String,
    },
}

impl IndexError {
    /// Returns an `Io` error for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> IndexError {
        IndexError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Adds the index path to SQLite errors.
pub(crate) trait SqlContext<T> {
    /// Returns the result with the error wrapped as [`IndexError::Sqlite`].
    fn at(self, path: &std::path::Path) -> Result<T, IndexError>;
}

impl<T> SqlContext<T> for Result<T, rusqlite::Error> {
    fn at(self, path: &std::path::Path) -> Result<T, IndexError> {
        self.map_err(|source| match source.sqlite_error_code() {
            // Damage found by any query is reported with the fix.
            Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase) => {
                IndexError::Damaged {
                    path: path.to_path_buf(),
                    problems: source.to_string(),
                }
            }
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                IndexError::Busy {
                    path: path.to_path_buf(),
                    message: source.to_string(),
                }
            }
            _ => IndexError::Sqlite {
                path: path.to_path_buf(),
                source,
            },
        })
    }
}
