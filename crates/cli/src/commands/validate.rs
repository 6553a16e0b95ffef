use crate::{load, out};
use agentlog_formats::{registry, Diagnostic, Severity};
use serde::Serialize;
use std::process::ExitCode;

/// Check session files and report every problem with file and line.
///
/// Exits 0 when no file has errors (warnings are allowed), 1 otherwise.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session files (or ids).
    #[arg(required = true)]
    pub sessions: Vec<String>,
    /// Check as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct FileReport {
    path: String,
    format: Option<String>,
    ok: bool,
    diagnostics: Vec<Diagnostic>,
}

/// Runs `agentlog validate`.
pub fn cmd_validate(args: Args) -> anyhow::Result<ExitCode> {
    let mut reports = Vec::new();
    for arg in &args.sessions {
        match expand_dir(arg, args.from.as_deref()) {
            Some(files) => reports.extend(
                files
                    .iter()
                    .map(|f| check(&f.display().to_string(), args.from.as_deref())),
            ),
            None => reports.push(check(arg, args.from.as_deref())),
        }
    }
    let failed = reports.iter().filter(|r| !r.ok).count();
    if args.json {
        out::print_json(&reports)?;
    } else {
        let mut text = String::new();
        for r in &reports {
            for d in &r.diagnostics {
                text.push_str(&format!("{d}\n"));
            }
            let (errors, warnings) = counts(&r.diagnostics);
            let status = if r.ok { "ok" } else { "FAILED" };
            text.push_str(&format!(
                "{}: {status} ({}, {errors} errors, {warnings} warnings)\n",
                r.path,
                r.format.as_deref().unwrap_or("unknown format")
            ));
        }
        if reports.len() > 1 {
            text.push_str(&format!(
                "{} files checked, {failed} failed\n",
                reports.len()
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

/// For a directory that is not itself a session (as some formats' are),
/// returns the session files below it, each detected on its own; `None`
/// for anything else.
fn expand_dir(arg: &str, from: Option<&str>) -> Option<Vec<std::path::PathBuf>> {
    let path = std::path::Path::new(arg);
    if !path.is_dir() || from.is_some() || registry::detect(path).is_ok() {
        return None;
    }
    let files = agentlog_formats::discover::walk_files(path, 12, &|p| {
        let is_sidecar = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains(".torn-") || n.ends_with(".lock"));
        !is_sidecar && registry::detect(p).is_ok()
    });
    Some(files)
}

fn counts(diags: &[Diagnostic]) -> (usize, usize) {
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diags
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .count();
    (errors, warnings)
}

fn check(arg: &str, from: Option<&str>) -> FileReport {
    let fail = |path: String, format: Option<String>, message: String| FileReport {
        diagnostics: vec![Diagnostic::error(
            std::path::Path::new(&path),
            None,
            "unreadable",
            message,
        )],
        path,
        format,
        ok: false,
    };
    let path = match load::resolve(arg) {
        Ok(p) => p,
        Err(e) => return fail(arg.to_string(), None, e.to_string()),
    };
    let shown = path.display().to_string();
    let format = match from {
        Some(name) => load::format_named(name),
        None => registry::detect(&path).map_err(anyhow::Error::from),
    };
    let format = match format {
        Ok(f) => f,
        Err(e) => match e.downcast_ref::<agentlog_formats::FormatError>() {
            Some(fe) => {
                return FileReport {
                    diagnostics: vec![fe.to_diagnostic(&path)],
                    path: shown,
                    format: None,
                    ok: false,
                }
            }
            None => return fail(shown, None, e.to_string()),
        },
    };
    match format.validate(&path) {
        Ok(diagnostics) => FileReport {
            ok: !diagnostics.iter().any(|d| d.severity == Severity::Error),
            path: shown,
            format: Some(format.name().to_string()),
            diagnostics,
        },
        Err(e) => FileReport {
            diagnostics: vec![e.to_diagnostic(&path)],
            path: shown,
            format: Some(format.name().to_string()),
            ok: false,
        },
    }
}
