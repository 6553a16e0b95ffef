use crate::{config, out};
use agentlog_api::validate::{drift, validate, ValidateParams};
use agentlog_formats::Severity;
use std::process::ExitCode;

/// Check session files and report every problem with file and line.
///
/// Exits 0 when no file has errors (warnings are allowed), 1 otherwise.
/// With `--drift`, lists instead the record types and fields each agent
/// version wrote that agentlog does not know (of the files named, or of
/// every session found on this machine when none is named).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session files (or ids).
    #[arg(required_unless_present = "drift")]
    pub sessions: Vec<String>,
    /// Report unknown record types and fields per agent and version.
    #[arg(long)]
    pub drift: bool,
    /// Check as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `agentlog validate`.
pub fn cmd_validate(args: Args) -> anyhow::Result<ExitCode> {
    let settings = config::settings(&[])?;
    let params = ValidateParams {
        sessions: args.sessions.clone(),
        from: args.from.clone(),
    };
    if args.drift {
        return print_drift(&drift(&settings, &params)?, args.json);
    }
    let reports = validate(&settings, &params)?;
    let failed = reports.iter().filter(|r| !r.ok).count();
    if args.json {
        out::print_json(&reports)?;
    } else {
        let mut text = String::new();
        for r in &reports {
            for d in &r.diagnostics {
                text.push_str(&format!("{d}\n"));
            }
            let status = if r.ok { "ok" } else { "FAILED" };
            text.push_str(&format!(
                "{}: {status} ({}, {}, {})\n",
                r.path,
                r.format.as_deref().unwrap_or("unknown format"),
                out::count(r.count(Severity::Error) as u64, "error"),
                out::count(r.count(Severity::Warning) as u64, "warning"),
            ));
        }
        if reports.len() > 1 {
            text.push_str(&format!(
                "{} checked, {failed} failed\n",
                out::count(reports.len() as u64, "file")
            ));
        }
        out::print(&text)?;
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn print_drift(
    report: &agentlog_api::validate::DriftReport,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if json {
        out::print_json(&report.groups)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    for g in &report.groups {
        let files = out::count(g.files as u64, "file");
        if g.items.is_empty() {
            text.push_str(&format!(
                "{} {} ({files}): nothing unknown\n",
                g.format, g.version
            ));
            continue;
        }
        text.push_str(&format!(
            "{} {} ({files}): {} unknown\n",
            g.format,
            g.version,
            g.items.len()
        ));
        for i in &g.items {
            let what = i.drift.kind.words();
            let line = i
                .drift
                .first_line
                .map(|l| format!(" line {l}"))
                .unwrap_or_default();
            text.push_str(&format!(
                "  unknown {what} `{}` x{} (first in {}{line})\n",
                i.drift.name, i.drift.count, i.file
            ));
        }
    }
    for u in &report.skipped {
        text.push_str(&format!("skipped: {u}\n"));
    }
    if report.groups.is_empty() && report.skipped.is_empty() {
        text.push_str("no sessions found\n");
    }
    out::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
