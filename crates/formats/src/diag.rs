//! Diagnostics: problems found in one place of one file.

use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing was lost.
    Info,
    /// Something unexpected was kept or skipped; read on.
    Warning,
    /// A record could not be read and was skipped.
    Error,
}

/// A problem found in one place of one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line, when the problem is on one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// How bad it is.
    pub severity: Severity,
    /// A short stable code (`invalid-json`, `torn-tail`, `unknown-type`, …).
    pub code: &'static str,
    /// What is wrong, for a person.
    pub message: String,
}

impl Diagnostic {
    /// Returns a diagnostic.
    pub fn new(
        path: &Path,
        line: Option<u64>,
        severity: Severity,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            path: path.to_path_buf(),
            line,
            severity,
            code,
            message: message.into(),
        }
    }

    /// Returns an error-level diagnostic.
    pub fn error(
        path: &Path,
        line: Option<u64>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self::new(path, line, Severity::Error, code, message)
    }

    /// Returns a warning-level diagnostic.
    pub fn warning(
        path: &Path,
        line: Option<u64>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self::new(path, line, Severity::Warning, code, message)
    }

    /// Returns an info-level diagnostic.
    pub fn info(
        path: &Path,
        line: Option<u64>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self::new(path, line, Severity::Info, code, message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{}", self.path.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": {sev}[{}]: {}", self.code, self.message)
    }
}
