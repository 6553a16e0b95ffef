use crate::{config, out};
use agentlog_api::secrets::{scan, Leak, ScanParams};
use agentlog_formats::render::sanitize::sanitize_line;
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

/// Runs `agentlog scan`.
pub fn cmd_scan(args: Args) -> anyhow::Result<ExitCode> {
    let settings = config::settings(&args.roots)?;
    let found = scan(
        &settings,
        &ScanParams {
            sessions: args.sessions.clone(),
            agents: args.agent.clone(),
        },
    )?;
    for w in &found.warnings {
        crate::eprintln_clean!("agentlog: warning: {w}");
    }
    if args.json {
        out::print_json(&found.findings)?;
    } else {
        out::print(&table(&found.findings, found.scanned))?;
    }
    Ok(if found.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn table(rows: &[Leak], scanned: usize) -> String {
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
