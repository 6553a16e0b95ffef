//! The error type of the format crate.

use std::path::PathBuf;

/// Errors of reading and writing session formats.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The input is not usable at all (not a single valid record, a wrong
    /// schema, …). Problems with single records are diagnostics instead.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line, when one line is to blame.
        line: Option<u64>,
        /// What is wrong and, where possible, what to do.
        message: String,
    },
    /// The format cannot do this.
    #[error("the {format} format does not support {operation}")]
    Unsupported {
        /// The format's name.
        format: &'static str,
        /// What was asked.
        operation: &'static str,
    },
    /// No format recognised the file.
    #[error("{}: not a session file agentlog recognises (known formats: {known})", path.display())]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// The format names.
        known: String,
    },
    /// Writing the output failed.
    #[error("writing {what}: {source}")]
    Write {
        /// What was being written.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl FormatError {
    /// Returns an `Io` error for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> FormatError {
        FormatError::Io {
            path: path.into(),
            source,
        }
    }

    /// Returns an `Invalid` error for `path`.
    pub fn invalid(
        path: impl Into<PathBuf>,
        line: Option<u64>,
        message: impl Into<String>,
    ) -> FormatError {
        FormatError::Invalid {
            path: path.into(),
            line,
            message: message.into(),
        }
    }

    /// Returns the error as a diagnostic for `fallback_path`: the error's own
    /// file and line where it has them, its message without the location.
    pub fn to_diagnostic(&self, fallback_path: &std::path::Path) -> crate::Diagnostic {
        match self {
            FormatError::Invalid {
                path,
                line,
                message,
            } => crate::Diagnostic::error(path, *line, "invalid", message.clone()),
            FormatError::Io { path, source } => {
                crate::Diagnostic::error(path, None, "unreadable", source.to_string())
            }
            FormatError::UnknownFormat { path, .. } => {
                crate::Diagnostic::error(path, None, "unknown-format", self.to_string())
            }
            other => crate::Diagnostic::error(fallback_path, None, "unreadable", other.to_string()),
        }
    }

    /// Returns a `Write` error.
    pub fn write(what: impl Into<String>, source: std::io::Error) -> FormatError {
        FormatError::Write {
            what: what.into(),
            source,
        }
    }
}
