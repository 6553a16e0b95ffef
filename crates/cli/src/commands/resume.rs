use crate::{config, load, out};
use agentlog_api::resume::{resume, ResumeParams, Resumed};
use anyhow::Context;
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;

/// Continue a session in another agent.
///
/// Reads SESSION (a file of any format, or a session id or id prefix),
/// converts it to the native format of the agent named by --in, writes it
/// where that agent keeps its sessions (never over an existing file),
/// reports what the conversion could not carry, and prints the command
/// that continues the session there.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session file, or session id (prefix), or AGENT:ID.
    pub session: String,
    #[command(flatten)]
    pub which: crate::load::Which,
    /// The agent to continue in: claude, codex, gemini, pi, copilot, qwen,
    /// droid, kimi, vibe, continue, aider, or acpx (for a Gemini CLI chat).
    #[arg(long = "in", value_name = "AGENT")]
    pub target: String,
    /// Read the session as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// Read from the team database (SESSION is an id there):
    /// postgres://USER:PASSWORD@HOST:PORT/DATABASE.
    #[arg(long, value_name = "URL", env = "AGENTLOG_DB", hide_env_values = true)]
    pub db: Option<String>,
    /// Continue in this directory (default: the session's own working
    /// directory; needed when the source recorded none).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<std::path::PathBuf>,
    /// Show what would be written and run, without writing.
    #[arg(long)]
    pub dry_run: bool,
    /// Replace secrets (API keys, tokens, passwords, private keys) with
    /// [REDACTED:<kind>] and report what was found on stderr.
    #[arg(long)]
    pub redact: bool,
    /// Print the plan and the fidelity report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Use PATH as AGENT's data directory (repeatable), e.g. claude=/tmp/c.
    #[arg(long = "root", value_name = "AGENT=PATH")]
    pub roots: Vec<String>,
}

/// What `resume` did, for `--json`.
#[derive(Debug, Serialize)]
struct Report<'a> {
    source: &'a Path,
    source_format: &'a str,
    #[serde(flatten)]
    resumed: &'a Resumed,
}

/// Runs `agentlog resume`.
pub fn cmd_resume(args: Args) -> anyhow::Result<ExitCode> {
    let settings = config::settings(&args.roots)?;
    let target = load::format_named(&args.target)?;
    let fetched = match &args.db {
        Some(url) => crate::commands::db::fetch(url, &args.session)?,
        None => None,
    };
    let (session_arg, from) = match &fetched {
        Some(f) => (
            f.path.to_string_lossy().into_owned(),
            Some(args.from.clone().unwrap_or(f.format.clone())),
        ),
        None => (args.session.clone(), args.from.clone()),
    };
    let (source, format, read) = load::read_which(&session_arg, from.as_deref(), &args.which)?;
    for d in &read.diagnostics {
        crate::eprintln_clean!("{d}");
    }
    let mut session = read.session;
    crate::redact::apply(&mut session, args.redact, args.json)?;
    let params = ResumeParams {
        target: target.name().to_string(),
        cwd: args.cwd.clone(),
        dry_run: args.dry_run,
        source: Some(source.clone()),
    };
    let no_cwd = session.meta.cwd.as_deref().is_none_or(str::is_empty) && args.cwd.is_none();
    let resumed = resume(&settings, &session, &params)
        .with_context(|| format!("resuming {} in {}", source.display(), target.name()))
        .map_err(|e| {
            if no_cwd {
                crate::out::hinted(
                    e,
                    "the session records no working directory: give one with --cwd DIR",
                )
            } else {
                e
            }
        })?;
    if args.json {
        out::print_json(&Report {
            source: &source,
            source_format: format.name(),
            resumed: &resumed,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    let verb = if args.dry_run { "would write" } else { "wrote" };
    text.push_str(&format!("{verb} {}\n", resumed.path.display()));
    text.push_str(&resumed.fidelity.to_string());
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("continue with:\n  {}\n", resumed.command));
    out::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
