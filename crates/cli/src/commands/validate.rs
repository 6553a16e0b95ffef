use crate::{load, out};
use agentlog_formats::{registry, Diagnostic, Severity};
use serde::Serialize;
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

#[derive(Serialize)]
struct FileReport {
    path: String,
    format: Option<String>,
    ok: bool,
    diagnostics: Vec<Diagnostic>,
}

/// Runs `agentlog validate`.
pub fn cmd_validate(args: Args) -> anyhow::Result<ExitCode> {
    if args.drift {
        return cmd_drift(&args);
    }
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
    let settings = crate::config::settings(&[]).ok()?;
    let walked = agentlog_api::walk::session_files(&settings, path);
    let files = walked.sessions.into_iter().map(|(p, _)| p).collect();
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

/// The drift of one agent version, over every file read of it.
#[derive(Serialize)]
struct DriftGroup {
    format: String,
    version: String,
    files: usize,
    items: Vec<DriftItem>,
}

#[derive(Serialize)]
struct DriftItem {
    #[serde(flatten)]
    drift: agentlog_formats::drift::Drift,
    /// The first file it was seen in.
    file: String,
}

/// Runs `agentlog validate --drift`.
fn cmd_drift(args: &Args) -> anyhow::Result<ExitCode> {
    use std::collections::BTreeMap;
    let mut paths: Vec<(
        std::path::PathBuf,
        Option<&'static dyn agentlog_formats::Format>,
    )> = Vec::new();
    if args.sessions.is_empty() {
        let settings = crate::config::settings(&[])?;
        for f in agentlog_formats::discover::discover_all(&settings.env, None) {
            paths.push((f.path, registry::by_name(f.format)));
        }
    }
    for arg in &args.sessions {
        let files = expand_dir(arg, args.from.as_deref())
            .unwrap_or_else(|| vec![std::path::PathBuf::from(arg)]);
        for f in files {
            let path = load::resolve(&f.display().to_string()).unwrap_or(f);
            let format = match args.from.as_deref() {
                Some(name) => Some(load::format_named(name)?),
                None => registry::detect(&path).ok(),
            };
            paths.push((path, format));
        }
    }
    let mut groups: BTreeMap<(String, String), DriftGroup> = BTreeMap::new();
    let mut unreadable = Vec::new();
    for (path, format) in paths {
        let Some(format) = format else {
            unreadable.push(format!("{}: not a known session format", path.display()));
            continue;
        };
        let read = match format.read_path(&path) {
            Ok(r) => r,
            Err(e) => {
                unreadable.push(e.to_string());
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
        for d in format.drift(&read) {
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
    let groups: Vec<DriftGroup> = groups.into_values().collect();
    if args.json {
        out::print_json(&groups)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    for g in &groups {
        let files = if g.files == 1 { "file" } else { "files" };
        if g.items.is_empty() {
            text.push_str(&format!(
                "{} {} ({} {files}): nothing unknown\n",
                g.format, g.version, g.files
            ));
            continue;
        }
        text.push_str(&format!(
            "{} {} ({} {files}): {} unknown\n",
            g.format,
            g.version,
            g.files,
            g.items.len()
        ));
        for i in &g.items {
            let what = match i.drift.kind {
                agentlog_formats::drift::DriftKind::RecordType => "record type",
                agentlog_formats::drift::DriftKind::Field => "field",
            };
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
    for u in &unreadable {
        text.push_str(&format!("skipped: {u}\n"));
    }
    if groups.is_empty() && unreadable.is_empty() {
        text.push_str("no sessions found\n");
    }
    out::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
