//! Checking session files and repairing torn tails (`agentlog doctor`).
//!
//! Every file is read by its format and each problem reported with file and
//! line; JSON-lines files are also checked as the durable store sees them
//! (a torn last line, a missing final newline, invalid lines, permissions,
//! lock files of dead writers). A repair moves torn bytes into a sidecar
//! beside the file, so nothing is thrown away.
//!
//! One rule decides what a file's state is ([`FileStatus`]): errors, then
//! what a repair fixes, then warnings; the counts of a [`DoctorReport`] are
//! of files in each state, whatever number of files was checked.
//!
//! ```
//! use agentlog_api::doctor::{doctor, DoctorParams, FileStatus};
//! use agentlog_api::Settings;
//! # let home = tempfile::tempdir()?;
//! # let file = agentlog_api::example::write_claude_session(home.path())?;
//! let settings = Settings::with_home(home.path());
//! let report = doctor(&settings, &DoctorParams { paths: vec![file], repair: false })?;
//! assert_eq!(report.files[0].status, FileStatus::Ok);
//! assert!(report.passed());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::{ApiError, Settings};
use agentlog_formats::discover::discover_all;
use agentlog_formats::{registry, Diagnostic, Format, Severity};
use agentlog_store::append::Tail;
use agentlog_store::check::{check_jsonl, repair_tail, JsonlCheck};
use agentlog_store::lock::{self, LockState};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct DoctorParams {
    /// Session files, or directories to search for them; empty: every
    /// session found on the machine.
    pub paths: Vec<PathBuf>,
    /// Cut torn tails into sidecar files, add missing newlines, remove stale
    /// lock files.
    pub repair: bool,
}

/// The state of one checked file, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// Errors: the file cannot be read completely as its format.
    Errors,
    /// A torn tail, a missing final newline or a stale lock that `repair`
    /// fixes.
    NeedsRepair,
    /// Readable, with warnings (kept records the reader did not know,
    /// permissions open to other users, …).
    Warnings,
    /// Nothing to say beyond information.
    Ok,
}

impl FileStatus {
    /// True for the states `doctor` fails on.
    pub fn failed(self) -> bool {
        matches!(self, FileStatus::Errors | FileStatus::NeedsRepair)
    }
}

/// The report on one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// The file.
    pub path: PathBuf,
    /// The format it was read as.
    pub format: Option<&'static str>,
    /// Its state.
    pub status: FileStatus,
    /// False when the status is a failure (kept for readers of the JSON).
    pub ok: bool,
    /// Every problem found, by line.
    pub diagnostics: Vec<Diagnostic>,
    /// What `repair` did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repairs: Vec<String>,
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

/// How many files are in each state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Files checked.
    pub checked: usize,
    /// Files with nothing to report.
    pub ok: usize,
    /// Files with warnings only.
    pub warnings: usize,
    /// Files a repair would fix (after `repair`: that it could not).
    pub needs_repair: usize,
    /// Files with errors.
    pub errors: usize,
    /// Files a repair changed.
    pub repaired: usize,
}

/// A diagnostic code seen on many files, for a summary line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Repeated {
    /// The code (`permissions`, `dir-permissions`, …).
    pub code: &'static str,
    /// Its severity.
    pub severity: Severity,
    /// On how many files.
    pub files: usize,
    /// The message on the first of them.
    pub example: String,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    /// One report per file, in the order checked.
    pub files: Vec<FileReport>,
    /// Files per state.
    pub counts: Counts,
}

impl DoctorReport {
    /// True when no file is left with errors or in need of repair.
    pub fn passed(&self) -> bool {
        self.counts.errors == 0 && self.counts.needs_repair == 0
    }

    /// Returns the codes seen on at least `min_files` files (a file-level
    /// diagnostic such as `permissions` repeated across a whole folder),
    /// most frequent first.
    pub fn repeated(&self, min_files: usize) -> Vec<Repeated> {
        let mut by_code: BTreeMap<&'static str, Repeated> = BTreeMap::new();
        for f in &self.files {
            let mut seen = Vec::new();
            for d in &f.diagnostics {
                if seen.contains(&d.code) {
                    continue;
                }
                seen.push(d.code);
                by_code
                    .entry(d.code)
                    .and_modify(|r| r.files += 1)
                    .or_insert_with(|| Repeated {
                        code: d.code,
                        severity: d.severity,
                        files: 1,
                        example: d.to_string(),
                    });
            }
        }
        let mut out: Vec<Repeated> = by_code
            .into_values()
            .filter(|r| r.files >= min_files)
            .collect();
        out.sort_by(|a, b| b.files.cmp(&a.files).then(a.code.cmp(b.code)));
        out
    }
}

/// Codes of problems that stay a failure until repaired.
pub const NEEDS_REPAIR: [&str; 3] = ["torn-tail", "missing-newline", "stale-lock"];

/// Checks (and with `repair`, repairs) the files `params` names.
pub fn doctor(settings: &Settings, params: &DoctorParams) -> Result<DoctorReport, ApiError> {
    let mut files = Vec::new();
    for (path, format) in targets(settings, &params.paths)? {
        files.push(check_file(&path, format, params.repair));
    }
    let mut counts = Counts {
        checked: files.len(),
        ..Counts::default()
    };
    for f in &files {
        match f.status {
            FileStatus::Ok => counts.ok += 1,
            FileStatus::Warnings => counts.warnings += 1,
            FileStatus::NeedsRepair => counts.needs_repair += 1,
            FileStatus::Errors => counts.errors += 1,
        }
        counts.repaired += usize::from(!f.repairs.is_empty());
    }
    Ok(DoctorReport { files, counts })
}

/// A file to check, with the format it was found as.
type Target = (PathBuf, Option<&'static dyn Format>);

/// Returns the files to check, with the format each was found as.
fn targets(settings: &Settings, paths: &[PathBuf]) -> Result<Vec<Target>, ApiError> {
    let mut out = Vec::new();
    if paths.is_empty() {
        let formats = settings.formats(&[])?;
        for found in discover_all(&settings.env, Some(&formats)) {
            out.push((found.path, registry::by_name(found.format)));
        }
        return Ok(out);
    }
    for p in paths {
        if p.symlink_metadata().is_err() {
            return Err(ApiError::io(
                p,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
            ));
        }
        if p.is_dir() {
            // A directory may itself be a session (multi-file formats);
            // otherwise it holds sessions.
            if let Ok(f) = registry::detect(p) {
                out.push((p.clone(), Some(f)));
                continue;
            }
            let walked = crate::walk::session_files(settings, p);
            out.extend(
                walked
                    .sessions
                    .into_iter()
                    .map(|(f, format)| (f, Some(format))),
            );
            out.extend(walked.other_jsonl.into_iter().map(|f| (f, None)));
        } else {
            out.push((p.clone(), registry::detect(p).ok()));
        }
    }
    Ok(out)
}

/// Checks one file (repairing it first when asked).
pub fn check_file(path: &Path, format: Option<&'static dyn Format>, repair: bool) -> FileReport {
    let mut diagnostics = Vec::new();
    let mut repairs = Vec::new();
    let is_symlink = path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink());
    let jsonl = path.is_file()
        && !is_symlink
        && (crate::walk::is_jsonl_name(path) || format.is_some_and(|f| f.extension() == "jsonl"));

    let mut store_check = None;
    if jsonl {
        match check_jsonl(path) {
            Ok(c) => {
                let before = c.sidecars.clone();
                let mut c = c;
                if repair {
                    repair_file(&c, &mut repairs, &mut diagnostics);
                    if !repairs.is_empty() {
                        if let Ok(mut again) = check_jsonl(path) {
                            // The sidecar this run made is reported with the
                            // repair, not as the work of an earlier one.
                            again.sidecars.retain(|s| before.contains(s));
                            c = again;
                        }
                    }
                }
                store_check = Some(c);
            }
            Err(e) => diagnostics.push(Diagnostic::error(path, None, "unreadable", e.to_string())),
        }
    }
    if is_symlink && crate::walk::is_jsonl_name(path) {
        diagnostics.push(Diagnostic::info(
            path,
            None,
            "symlink",
            "is a symbolic link: `agentlog append` refuses to write through it; check its target instead",
        ));
    }
    let store_diags = store_check
        .as_ref()
        .map(JsonlCheck::diagnostics)
        .unwrap_or_default();

    match format {
        Some(f) => match f.validate(path) {
            Ok(diags) => {
                for d in diags {
                    // The store's view of a line's JSON and of the tail is the
                    // more precise one (it knows about locks and repairs).
                    let dup = matches!(d.code, "torn-tail" | "invalid-json" | "invalid-utf8")
                        && store_check.is_some()
                        && (store_diags.iter().any(|s| s.line == d.line) || d.code == "torn-tail");
                    if !dup {
                        diagnostics.push(d);
                    }
                }
            }
            Err(e) => diagnostics.push(Diagnostic::error(
                path,
                None,
                "unreadable",
                format!("as {}: {e}", f.name()),
            )),
        },
        None if !jsonl => diagnostics.push(Diagnostic::warning(
            path,
            None,
            "unknown-format",
            format!(
                "not a session file of a known format ({})",
                registry::names()
            ),
        )),
        None => {}
    }
    diagnostics.extend(store_diags);
    diagnostics.sort_by_key(|d| (d.line.unwrap_or(0), std::cmp::Reverse(d.severity)));
    let status = status_of(&diagnostics);
    FileReport {
        path: path.to_path_buf(),
        format: format.map(|f| f.name()),
        status,
        ok: !status.failed(),
        diagnostics,
        repairs,
    }
}

/// The one rule from diagnostics to a file's state.
fn status_of(diagnostics: &[Diagnostic]) -> FileStatus {
    if diagnostics.iter().any(|d| d.severity == Severity::Error) {
        FileStatus::Errors
    } else if diagnostics.iter().any(|d| NEEDS_REPAIR.contains(&d.code)) {
        FileStatus::NeedsRepair
    } else if diagnostics.iter().any(|d| d.severity > Severity::Info) {
        FileStatus::Warnings
    } else {
        FileStatus::Ok
    }
}

/// Repairs what `check` found: the tail and a stale lock file.
fn repair_file(check: &JsonlCheck, repairs: &mut Vec<String>, diagnostics: &mut Vec<Diagnostic>) {
    let path = check.path.as_path();
    if let LockState::Held(h) = &check.lock {
        if check.tail != Tail::Clean {
            let who = h
                .as_ref()
                .map_or("holder unknown".to_string(), |h| h.to_string());
            diagnostics.push(Diagnostic::info(
                path,
                None,
                "not-repaired",
                format!("a writer holds the file ({who}); left alone"),
            ));
        }
        return;
    }
    if matches!(check.lock, LockState::Stale(_)) {
        match lock::remove_stale(path) {
            Ok(Some(h)) => repairs.push(format!("removed the stale lock file of {h}")),
            Ok(None) => {}
            Err(e) => diagnostics.push(Diagnostic::error(
                path,
                None,
                "repair-failed",
                e.to_string(),
            )),
        }
    }
    if check.tail != Tail::Clean {
        match repair_tail(path) {
            Ok(rec) if !rec.is_clean() => repairs.push(rec.to_string()),
            Ok(_) => {}
            Err(e) => diagnostics.push(Diagnostic::error(
                path,
                None,
                "repair-failed",
                e.to_string(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

    fn codes(r: &FileReport) -> Vec<&'static str> {
        r.diagnostics.iter().map(|d| d.code).collect()
    }

    #[test]
    fn a_truncated_real_session_is_found_and_repaired_into_a_sidecar() {
        let src = Path::new(FIXTURES).join("native/claude/agentsview-truncated.jsonl");
        let original = std::fs::read(&src).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, &original).unwrap();
        let format = registry::detect(&p).ok();
        let r = check_file(&p, format, false);
        assert_eq!(r.status, FileStatus::NeedsRepair, "{:?}", r.diagnostics);
        assert!(codes(&r).contains(&"torn-tail"));
        assert_eq!(
            std::fs::read(&p).unwrap(),
            original,
            "checking changes nothing"
        );
        let r = check_file(&p, format, true);
        assert!(r.ok, "{:?}", r.diagnostics);
        assert_eq!(r.repairs.len(), 1, "{:?}", r.repairs);
        assert!(
            !codes(&r).contains(&"sidecar"),
            "the sidecar made by this run is not from an earlier repair: {:?}",
            r.diagnostics
        );
        let kept = std::fs::read(&p).unwrap();
        let sidecars = agentlog_store::check::sidecars_of(&p);
        assert_eq!(sidecars.len(), 1);
        let cut = std::fs::read(&sidecars[0]).unwrap();
        assert_eq!([kept, cut].concat(), original, "the cut bytes are kept");
        // The next run does report it as an earlier repair's.
        let r = check_file(&p, format, false);
        assert!(codes(&r).contains(&"sidecar"), "{:?}", r.diagnostics);
    }

    #[test]
    fn a_missing_newline_is_added_and_invalid_lines_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, b"{\"a\":1}\nnope\n{\"b\":2}").unwrap();
        let r = check_file(&p, None, false);
        assert!(
            codes(&r).contains(&"missing-newline") && codes(&r).contains(&"invalid-json"),
            "{:?}",
            r.diagnostics
        );
        assert!(r
            .diagnostics
            .iter()
            .any(|d| d.code == "invalid-json" && d.line == Some(2)));
        let r = check_file(&p, None, true);
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\nnope\n{\"b\":2}\n");
        assert_eq!(
            r.status,
            FileStatus::Errors,
            "an invalid line stays an error"
        );
        assert!(!codes(&r).contains(&"missing-newline"));
    }

    #[test]
    fn a_stale_lock_is_reported_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, b"{}\n").unwrap();
        let holder = lock::holder_path(&p);
        std::fs::write(
            &holder,
            br#"{"pid":999999,"host":"h","since":"2026-01-01T00:00:00Z"}"#,
        )
        .unwrap();
        let r = check_file(&p, None, false);
        assert_eq!(r.status, FileStatus::NeedsRepair, "{:?}", r.diagnostics);
        assert!(codes(&r).contains(&"stale-lock"));
        let r = check_file(&p, None, true);
        assert!(r.ok, "{:?}", r.diagnostics);
        assert!(!holder.exists());
        assert!(r.repairs[0].contains("pid 999999"), "{:?}", r.repairs);
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_and_its_single_file_count_the_same_and_repeats_are_summarized() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let src = Path::new(FIXTURES).join("native/claude/agentsview-valid_session.jsonl");
        let mut files = Vec::new();
        for i in 0..5 {
            let p = dir.path().join(format!("s{i}.jsonl"));
            std::fs::copy(&src, &p).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
            files.push(p);
        }
        let settings = Settings::with_home(dir.path());
        let all = doctor(
            &settings,
            &DoctorParams {
                paths: vec![dir.path().to_path_buf()],
                repair: false,
            },
        )
        .unwrap();
        let one = doctor(
            &settings,
            &DoctorParams {
                paths: vec![files[0].clone()],
                repair: false,
            },
        )
        .unwrap();
        assert_eq!(all.counts.checked, 5);
        assert_eq!(all.counts.warnings, 5, "{:?}", all.counts);
        assert_eq!(one.counts.warnings, 1, "{:?}", one.counts);
        assert_eq!(all.passed(), one.passed());
        let rep = all.repeated(3);
        assert!(
            rep.iter().any(|r| r.code == "permissions" && r.files == 5),
            "{rep:?}"
        );
    }
}
