use crate::{config, out};
use agentlog_api::walk::is_jsonl_name;
use agentlog_formats::discover::discover_all;
use agentlog_formats::{registry, Diagnostic, Format, Severity};
use agentlog_store::append::Tail;
use agentlog_store::check::{check_jsonl, repair_tail, JsonlCheck};
use agentlog_store::lock::{self, LockState};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Check session files and repair torn tails, keeping the cut bytes.
///
/// Every file is read by its format (detected) and each problem reported
/// with file and line. JSON-lines files are also checked as the durable
/// store sees them: a torn last line (a write cut short by a crash), a
/// last line lacking its newline, invalid lines, permissions open to other
/// users, and lock files left by writers that died.
///
/// With --repair, torn tails are moved into a sidecar file beside the
/// session (`<file>.torn-<time>`, nothing is thrown away), missing
/// newlines are added and stale lock files removed. Files a writer holds
/// are left alone.
///
/// Without PATHs, every session found on this machine is checked.
/// Exits 1 when a problem remains (errors, or unrepaired torn tails and
/// stale locks), 0 otherwise.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session files, or directories to search for them.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Cut torn tails into sidecar files, add missing newlines, remove
    /// stale lock files.
    #[arg(long)]
    pub repair: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The report on one file.
#[derive(Debug, Serialize)]
struct FileReport {
    path: PathBuf,
    format: Option<&'static str>,
    ok: bool,
    diagnostics: Vec<Diagnostic>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    repairs: Vec<String>,
}

/// Codes of problems that stay a failure until repaired.
const NEEDS_REPAIR: [&str; 3] = ["torn-tail", "missing-newline", "stale-lock"];

/// Runs `agentlog doctor`.
pub fn cmd_doctor(args: Args) -> anyhow::Result<ExitCode> {
    let targets = targets(&args.paths)?;
    let mut reports = Vec::new();
    for (path, format) in targets {
        reports.push(check_file(&path, format, args.repair));
    }
    let failed = reports.iter().filter(|r| !r.ok).count();
    if args.json {
        out::print_json(&reports)?;
    } else {
        let mut text = String::new();
        let mut repaired = 0;
        for r in &reports {
            for d in &r.diagnostics {
                text.push_str(&format!("{d}\n"));
            }
            for fix in &r.repairs {
                text.push_str(&format!("{}: repaired: {fix}\n", r.path.display()));
            }
            repaired += usize::from(!r.repairs.is_empty());
            let problems = r
                .diagnostics
                .iter()
                .filter(|d| d.severity > Severity::Info)
                .count();
            let status = match (r.ok, problems) {
                (true, 0) => "ok".to_string(),
                (true, 1) => "ok with 1 warning".to_string(),
                (true, n) => format!("ok with {n} warnings"),
                (false, 1) => "1 problem".to_string(),
                (false, n) => format!("{n} problems"),
            };
            text.push_str(&format!(
                "{}: {status} ({})\n",
                r.path.display(),
                r.format.unwrap_or("unknown format")
            ));
        }
        text.push_str(&format!(
            "{} files checked, {failed} with problems",
            reports.len()
        ));
        if args.repair {
            text.push_str(&format!(", {repaired} repaired"));
        } else if reports
            .iter()
            .any(|r| r.diagnostics.iter().any(|d| NEEDS_REPAIR.contains(&d.code)))
        {
            text.push_str("; run again with --repair to fix torn tails and stale locks");
        }
        text.push('\n');
        out::print(&text)?;
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Returns the files to check, with the format each was found as.
fn targets(paths: &[PathBuf]) -> anyhow::Result<Vec<(PathBuf, Option<&'static dyn Format>)>> {
    let mut out = Vec::new();
    if paths.is_empty() {
        let settings = config::settings(&[])?;
        let formats = settings.formats(&[])?;
        for found in discover_all(&settings.env, Some(&formats)) {
            out.push((found.path, registry::by_name(found.format)));
        }
        return Ok(out);
    }
    for p in paths {
        if !p.exists() && p.symlink_metadata().is_err() {
            anyhow::bail!("{}: no such file or directory", p.display());
        }
        if p.is_dir() {
            // A directory may itself be a session (multi-file formats);
            // otherwise it holds sessions.
            if let Ok(f) = registry::detect(p) {
                out.push((p.clone(), Some(f)));
                continue;
            }
            let settings = config::settings(&[])?;
            let walked = agentlog_api::walk::session_files(&settings, p);
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

fn check_file(path: &Path, format: Option<&'static dyn Format>, repair: bool) -> FileReport {
    let mut diagnostics = Vec::new();
    let mut repairs = Vec::new();
    let is_symlink = path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink());
    let jsonl = path.is_file()
        && !is_symlink
        && (is_jsonl_name(path) || format.is_some_and(|f| f.extension() == "jsonl"));

    let mut store_check = None;
    if jsonl {
        match check_jsonl(path) {
            Ok(c) => {
                if repair {
                    repair_file(&c, &mut repairs, &mut diagnostics);
                    store_check = Some(if repairs.is_empty() {
                        c
                    } else {
                        check_jsonl(path).unwrap_or(c)
                    });
                } else {
                    store_check = Some(c);
                }
            }
            Err(e) => diagnostics.push(Diagnostic::error(path, None, "unreadable", e.to_string())),
        }
    }
    if is_symlink && is_jsonl_name(path) {
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
    let ok = !diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error || NEEDS_REPAIR.contains(&d.code));
    FileReport {
        path: path.to_path_buf(),
        format: format.map(|f| f.name()),
        ok,
        diagnostics,
        repairs,
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
        assert!(
            !r.ok && codes(&r).contains(&"torn-tail"),
            "{:?}",
            r.diagnostics
        );
        assert_eq!(
            std::fs::read(&p).unwrap(),
            original,
            "checking changes nothing"
        );
        let r = check_file(&p, format, true);
        assert!(r.ok, "{:?}", r.diagnostics);
        assert_eq!(r.repairs.len(), 1, "{:?}", r.repairs);
        let kept = std::fs::read(&p).unwrap();
        let sidecars = agentlog_store::check::sidecars_of(&p);
        assert_eq!(sidecars.len(), 1);
        let cut = std::fs::read(&sidecars[0]).unwrap();
        assert_eq!([kept, cut].concat(), original, "the cut bytes are kept");
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
        assert!(!r.ok, "an invalid line stays an error");
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
        assert!(
            !r.ok && codes(&r).contains(&"stale-lock"),
            "{:?}",
            r.diagnostics
        );
        let r = check_file(&p, None, true);
        assert!(r.ok, "{:?}", r.diagnostics);
        assert!(!holder.exists());
        assert!(r.repairs[0].contains("pid 999999"), "{:?}", r.repairs);
    }
}
