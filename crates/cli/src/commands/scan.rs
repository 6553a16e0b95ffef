use crate::{config, load, out};
use agentlog_api::list::{par_map, read_found};
use agentlog_formats::discover::{discover_report, Found};
use agentlog_formats::render::sanitize::sanitize_line;
use agentlog_redact::{Finding, Redactor};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// List the secrets that leaked into sessions.
///
/// Reads every session agentlog finds (or the sessions named) and lists
/// each secret in them: its kind, the session, where it is (entry id and
/// field) and a fingerprint (the first 8 hex digits of its SHA-256), never
/// the secret itself. The same fingerprint twice is the same secret.
/// Exits 1 when a secret is found, 0 when none is.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session files or ids (default: every session found).
    pub sessions: Vec<String>,
    /// Only these agents (comma-separated).
    #[arg(long, value_name = "AGENT", value_delimiter = ',')]
    pub agent: Vec<String>,
    /// Use PATH as AGENT's data directory (repeatable), e.g. claude=/tmp/c.
    #[arg(long = "root", value_name = "AGENT=PATH")]
    pub roots: Vec<String>,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One secret found, for `--json`.
#[derive(Debug, Serialize)]
struct Row {
    kind: String,
    session: String,
    agent: String,
    path: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    entry: Option<String>,
    field: String,
    fingerprint: String,
}

fn rows(path: &std::path::Path, read: &agentlog_formats::Read, r: &Redactor) -> Vec<Row> {
    let s = &read.session;
    r.scan_session(s)
        .findings
        .into_iter()
        .map(|f: Finding| Row {
            kind: f.kind,
            session: s.meta.id.clone(),
            agent: s.meta.agent.to_string(),
            path: path.to_path_buf(),
            entry: f.location.entry,
            field: f.location.field,
            fingerprint: f.fingerprint,
        })
        .collect()
}

/// Runs `agentlog scan`.
pub fn cmd_scan(args: Args) -> anyhow::Result<ExitCode> {
    let redactor = Redactor::builtin()?;
    let mut found: Vec<Row> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let scanned;
    if args.sessions.is_empty() {
        let settings = config::settings(&args.roots)?;
        let formats = settings.formats(&args.agent)?;
        let report = discover_report(&settings.env, Some(&formats));
        warnings.extend(report.diagnostics.iter().map(ToString::to_string));
        let results = par_map(&report.found, &|_, _| {}, |f: &Found| {
            read_found(f).map(|read| rows(&f.path, &read, redactor))
        });
        scanned = report.found.len();
        for (f, r) in report.found.iter().zip(results) {
            match r {
                Some(Ok(mut rs)) => found.append(&mut rs),
                Some(Err(e)) => warnings.push(format!("{e:#}")),
                None => warnings.push(format!(
                    "{}: the {} reader failed on this file; please report it",
                    f.path.display(),
                    f.format
                )),
            }
        }
    } else {
        scanned = args.sessions.len();
        for arg in &args.sessions {
            let (path, _format, read) = load::read(arg, None)?;
            found.extend(rows(&path, &read, redactor));
        }
    }
    for w in &warnings {
        eprintln!("agentlog: warning: {w}");
    }
    if args.json {
        out::print_json(&found)?;
    } else {
        out::print(&table(&found, scanned))?;
    }
    Ok(if found.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn table(rows: &[Row], scanned: usize) -> String {
    let mut text = String::new();
    let kind_w = rows.iter().map(|r| r.kind.len()).max().unwrap_or(4).max(4);
    if !rows.is_empty() {
        text.push_str(&format!(
            "{:<kind_w$}  {:<8}  {:<8}  WHERE\n",
            "KIND", "FINGERPR", "SESSION"
        ));
    }
    for r in rows {
        let session: String = r.session.chars().take(8).collect();
        let place = match &r.entry {
            Some(e) => format!("{} entry {} {}", r.path.display(), e, r.field),
            None => format!("{} {}", r.path.display(), r.field),
        };
        text.push_str(&format!(
            "{:<kind_w$}  {:<8}  {:<8}  {}\n",
            r.kind,
            r.fingerprint,
            sanitize_line(&session),
            sanitize_line(&place)
        ));
    }
    let sessions: std::collections::BTreeSet<&PathBuf> = rows.iter().map(|r| &r.path).collect();
    let distinct: std::collections::BTreeSet<(&str, &str)> = rows
        .iter()
        .map(|r| (r.kind.as_str(), r.fingerprint.as_str()))
        .collect();
    text.push_str(&format!(
        "{} secret{} ({} distinct) in {} of {} session{}\n",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        distinct.len(),
        sessions.len(),
        scanned,
        if scanned == 1 { "" } else { "s" }
    ));
    text
}
