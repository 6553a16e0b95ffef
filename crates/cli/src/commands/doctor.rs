use crate::{config, out};
use agentlog_api::doctor::{doctor, DoctorParams, DoctorReport, FileReport, FileStatus};
use agentlog_formats::Severity;
use std::path::PathBuf;
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
/// Without PATHs, every session found on this machine is checked, and
/// what the index found that agentlog does not know is listed (record
/// types, fields and layouts of newer agent versions, files it could not
/// read: the drift `agentlog index` says once).
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

/// A diagnostic code on at least this many files is printed once, as a
/// summary, instead of once per file.
const SUMMARIZE_FROM: usize = 4;

/// Runs `agentlog doctor`.
pub fn cmd_doctor(args: Args) -> anyhow::Result<ExitCode> {
    let settings = config::settings(&[])?;
    let report = doctor(
        &settings,
        &DoctorParams {
            paths: args.paths.clone(),
            repair: args.repair,
        },
    )?;
    if args.json {
        out::print_json(&report.files)?;
    } else {
        out::print(&text(&report, args.repair))?;
        if args.paths.is_empty() {
            out::print(&archive_text(&settings)?)?;
        }
    }
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The archive's figures, and the agents set to delete sessions it does
/// not hold yet, with what to run.
fn archive_text(settings: &config::Settings) -> anyhow::Result<String> {
    let mut s = String::new();
    match agentlog_api::archive::stats(settings)? {
        Some(st) => {
            s.push_str("archive: ");
            s.push_str(&crate::commands::archive::stats_text(&st));
            s.push_str(&match settings.archive_keep_days {
                None => "archive: keeps every state forever (archive_keep_days in the configuration file sets a limit)\n".to_string(),
                Some(d) => format!("archive: keeps old states and deleted files {} (archive_keep_days)\n", out::count(u64::from(d), "day")),
            });
        }
        None if settings.archive_dir().is_none() => s.push_str(
            "archive: off (AGENTLOG_ARCHIVE=off): a session its agent deletes is gone from agentlog too\n",
        ),
        None => s.push_str("archive: none yet; `agentlog index` makes it\n"),
    }
    let (found, _) = agentlog_api::refresh::discover(settings)?;
    s.push_str(&retention_text(&agentlog_api::archive::retention(
        settings, &found,
    )));
    s.push_str(&drift_text(&agentlog_api::drift::report(settings)?));
    Ok(s)
}

/// What the index found that agentlog does not know (the drift alarm,
/// told once by `index` and the commands that refresh it), every item.
fn drift_text(alarms: &[agentlog_api::drift::Alarm]) -> String {
    let mut s = String::new();
    for a in alarms {
        s.push_str(&format!("drift: {}\n", a.message()));
        for u in a.unreadable.iter().skip(1) {
            s.push_str(&format!("  unreadable: {}: {}\n", u.path, u.why));
        }
    }
    if !alarms.is_empty() {
        s.push_str("drift: `agentlog validate --drift` says where each is, by line\n");
    }
    s
}

/// The agent's name for people.
pub fn agent_name(agent: &str) -> &str {
    match agent {
        "claude" => "Claude Code",
        "gemini" => "Gemini CLI",
        other => other,
    }
}

/// One line per agent set to delete sessions the archive does not hold.
pub fn retention_text(risks: &[agentlog_api::archive::Retention]) -> String {
    let mut s = String::new();
    for r in risks {
        let name = agent_name(r.agent);
        s.push_str(&format!(
            "warning: {name} deletes {} ({}); of its {}, {} not in agentlog's archive yet: run `agentlog index` (or `agentlog hooks install` to keep each as it is written)\n",
            r.deletes,
            r.setting,
            out::count(r.sessions as u64, "session"),
            match r.unkept {
                1 => "1 is".to_string(),
                n => format!("{} are", out::group(n as u64)),
            },
        ));
    }
    s
}

/// The report for a person: each file's problems and state, codes repeated
/// over many files once, then the counts.
fn text(report: &DoctorReport, repair: bool) -> String {
    let repeated = report.repeated(SUMMARIZE_FROM);
    let summarized = |code: &str| repeated.iter().any(|r| r.code == code);
    let mut s = String::new();
    for r in &report.files {
        for d in r.diagnostics.iter().filter(|d| !summarized(d.code)) {
            s.push_str(&format!("{d}\n"));
        }
        for fix in &r.repairs {
            s.push_str(&format!("{}: repaired: {fix}\n", r.path.display()));
        }
        s.push_str(&format!(
            "{}: {} ({})\n",
            r.path.display(),
            status(r),
            r.format.unwrap_or("unknown format")
        ));
    }
    for r in &repeated {
        s.push_str(&format!(
            "{} on {}, for example:\n  {}\n",
            r.code,
            out::count(r.files as u64, "file"),
            r.example
        ));
    }
    let c = &report.counts;
    let mut parts = vec![format!("{} ok", out::group(c.ok as u64))];
    if c.warnings > 0 {
        parts.push(format!("{} with warnings", out::group(c.warnings as u64)));
    }
    if c.needs_repair > 0 {
        parts.push(format!("{} to repair", out::group(c.needs_repair as u64)));
    }
    if c.errors > 0 {
        parts.push(format!("{} with errors", out::group(c.errors as u64)));
    }
    s.push_str(&format!(
        "{} checked: {}",
        out::count(c.checked as u64, "file"),
        parts.join(", ")
    ));
    if repair {
        s.push_str(&format!("; {} repaired", out::group(c.repaired as u64)));
    } else if c.needs_repair > 0 {
        s.push_str("; run again with --repair to fix torn tails, missing newlines and stale locks");
    }
    s.push('\n');
    s
}

/// One file's state in words.
fn status(r: &FileReport) -> String {
    let errors = r.count(Severity::Error);
    let warnings = r.count(Severity::Warning);
    let mut words = match r.status {
        FileStatus::Ok => "ok".to_string(),
        FileStatus::Warnings => "readable".to_string(),
        FileStatus::NeedsRepair => "needs repair".to_string(),
        FileStatus::Errors => out::count(errors as u64, "error"),
    };
    if warnings > 0 {
        words.push_str(&format!(", {}", out::count(warnings as u64, "warning")));
    }
    words
}
