//! Checking session files against their formats (`agentlog validate`) and
//! the drift report: record types and fields agentlog does not know, per
//! agent and version (`agentlog validate --drift`).
//!
//! ```
//! use agentlog_api::validate::{validate, ValidateParams};
//! use agentlog_api::Settings;
//! # let home = tempfile::tempdir()?;
//! # let file = agentlog_api::example::write_claude_session(home.path())?;
//! let settings = Settings::with_home(home.path());
//! let reports = validate(&settings, &ValidateParams::new(vec![file.display().to_string()]))?;
//! assert!(reports[0].ok, "{:?}", reports[0].diagnostics);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::{ApiError, Settings};
use agentlog_formats::drift::Drift;
use agentlog_formats::{registry, Diagnostic, Format, Severity};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct ValidateParams {
    /// Session files, ids or id prefixes, or folders of sessions; for the
    /// drift report, empty means every session on the machine.
    pub sessions: Vec<String>,
    /// Read every file as this format instead of detecting it.
    pub from: Option<String>,
}

impl ValidateParams {
    /// Checks `sessions`, detecting each one's format.
    pub fn new(sessions: Vec<String>) -> ValidateParams {
        ValidateParams {
            sessions,
            from: None,
        }
    }
}

/// The report on one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// The file (or the argument, when it names none).
    pub path: String,
    /// The format it was read as.
    pub format: Option<String>,
    /// False when there are errors.
    pub ok: bool,
    /// Every problem found.
    pub diagnostics: Vec<Diagnostic>,
}

impl FileReport {
    /// Returns how many diagnostics of `severity` the file has.
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }
}

/// Checks every session `params` names (a folder: each session in it).
pub fn validate(settings: &Settings, params: &ValidateParams) -> Result<Vec<FileReport>, ApiError> {
    let from = match params.from.as_deref() {
        Some(name) => Some(crate::resolve::format_named(name)?),
        None => None,
    };
    let mut reports = Vec::new();
    for arg in &params.sessions {
        match expand_dir(settings, arg, from) {
            // A folder with nothing to check fails, saying so: an empty
            // report would read as "all good".
            Some(files) if files.is_empty() => reports.push(FileReport {
                diagnostics: vec![Diagnostic::error(
                    Path::new(arg),
                    None,
                    "no-sessions",
                    "the folder holds no session file of any known format",
                )],
                path: arg.to_string(),
                format: None,
                ok: false,
            }),
            Some(files) => reports.extend(
                files
                    .iter()
                    .map(|f| check(settings, &f.display().to_string(), from)),
            ),
            None => reports.push(check(settings, arg, from)),
        }
    }
    Ok(reports)
}

/// The sessions in folder `arg`, unless it is itself a session (or a
/// format was named).
fn expand_dir(settings: &Settings, arg: &str, from: Option<&dyn Format>) -> Option<Vec<PathBuf>> {
    let path = Path::new(arg);
    if !path.is_dir() || from.is_some() || registry::detect(path).is_ok() {
        return None;
    }
    let walked = crate::walk::session_files(settings, path);
    Some(walked.sessions.into_iter().map(|(p, _)| p).collect())
}

fn check(settings: &Settings, arg: &str, from: Option<&'static dyn Format>) -> FileReport {
    let path = match crate::resolve::resolve_path(settings, arg) {
        Ok(p) => p,
        Err(e) => {
            return FileReport {
                diagnostics: vec![Diagnostic::error(
                    Path::new(arg),
                    None,
                    "unreadable",
                    e.to_string(),
                )],
                path: arg.to_string(),
                format: None,
                ok: false,
            }
        }
    };
    let shown = path.display().to_string();
    let format = match from {
        Some(f) => f,
        None => match registry::detect(&path) {
            Ok(f) => f,
            Err(e) => {
                return FileReport {
                    diagnostics: vec![e.to_diagnostic(&path)],
                    path: shown,
                    format: None,
                    ok: false,
                }
            }
        },
    };
    let diagnostics = match format.validate(&path) {
        Ok(d) => d,
        Err(e) => vec![e.to_diagnostic(&path)],
    };
    FileReport {
        ok: !diagnostics.iter().any(|d| d.severity == Severity::Error),
        path: shown,
        format: Some(format.name().to_string()),
        diagnostics,
    }
}

/// The unknown record types and fields of one agent version.
#[derive(Debug, Clone, Serialize)]
pub struct DriftGroup {
    /// The format.
    pub format: String,
    /// The agent version the files were written by.
    pub version: String,
    /// How many files.
    pub files: usize,
    /// What agentlog does not know, with the first file it was seen in.
    pub items: Vec<DriftItem>,
}

/// One unknown record type or field.
#[derive(Debug, Clone, Serialize)]
pub struct DriftItem {
    /// What, how often, first where.
    #[serde(flatten)]
    pub drift: Drift,
    /// The first file it was seen in.
    pub file: String,
}

/// The drift report.
#[derive(Debug, Clone, Default)]
pub struct DriftReport {
    /// Per format and version.
    pub groups: Vec<DriftGroup>,
    /// Files that could not be read, with why.
    pub skipped: Vec<String>,
}

/// Lists, per agent and version, what the sessions `params` names (all
/// sessions when it names none) hold that agentlog does not know.
pub fn drift(settings: &Settings, params: &ValidateParams) -> Result<DriftReport, ApiError> {
    let from = match params.from.as_deref() {
        Some(name) => Some(crate::resolve::format_named(name)?),
        None => None,
    };
    let mut paths: Vec<(PathBuf, Option<&'static dyn Format>)> = Vec::new();
    if params.sessions.is_empty() {
        for f in agentlog_formats::discover::discover_all(&settings.env, None) {
            paths.push((f.path, registry::by_name(f.format)));
        }
    }
    for arg in &params.sessions {
        let files = expand_dir(settings, arg, from).unwrap_or_else(|| vec![PathBuf::from(arg)]);
        for f in files {
            let path =
                crate::resolve::resolve_path(settings, &f.display().to_string()).unwrap_or(f);
            let format = from.or_else(|| registry::detect(&path).ok());
            paths.push((path, format));
        }
    }
    let mut groups: BTreeMap<(String, String), DriftGroup> = BTreeMap::new();
    let mut skipped = Vec::new();
    for (path, format) in paths {
        let Some(format) = format else {
            skipped.push(format!("{}: not a known session format", path.display()));
            continue;
        };
        let read = match format.read_path(&path) {
            Ok(r) => r,
            Err(e) => {
                skipped.push(e.to_string());
                continue;
            }
        };
        let version = read
            .session
            .meta
            .agent_version
            .clone()
            .unwrap_or_else(|| "unknown version".into());
        let g = groups
            .entry((format.name().to_string(), version.clone()))
            .or_insert_with(|| DriftGroup {
                format: format.name().to_string(),
                version,
                files: 0,
                items: Vec::new(),
            });
        g.files += 1;
        for d in agentlog_formats::drift::report(format, &read) {
            match g
                .items
                .iter_mut()
                .find(|i| i.drift.kind == d.kind && i.drift.name == d.name)
            {
                Some(i) => i.drift.count += d.count,
                None => g.items.push(DriftItem {
                    drift: d,
                    file: path.display().to_string(),
                }),
            }
        }
    }
    Ok(DriftReport {
        groups: groups.into_values().collect(),
        skipped,
    })
}
