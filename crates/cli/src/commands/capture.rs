//! `agentlog capture`: keep session files in the archive now (what the
//! agents' hooks run).

use crate::out;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

/// Keep session files in agentlog's archive now, at the moment an agent
/// writes them.
///
/// With files, captures those. With --hook AGENT, reads what that agent
/// hands its hooks and captures the session it names: Claude Code and
/// Gemini CLI give a JSON object on standard input (its `transcript_path`),
/// Codex's `notify` program gets a JSON argument (its `thread-id`, whose
/// rollout file is found). `agentlog hooks install` sets this up. A hook
/// never fails its agent: problems are printed and the status is 0.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session files to capture.
    pub files: Vec<PathBuf>,
    /// Read the session from this agent's hook input (claude, codex,
    /// gemini, qwen).
    #[arg(long, value_name = "AGENT")]
    pub hook: Option<String>,
    /// Print what was kept.
    #[arg(long, short)]
    pub verbose: bool,
}

/// Runs `agentlog capture`.
pub fn cmd_capture(args: Args) -> anyhow::Result<ExitCode> {
    let settings = crate::config::settings(&[])?;
    let Some(hook) = &args.hook else {
        if args.files.is_empty() {
            anyhow::bail!("name the session files to capture, or --hook AGENT");
        }
        let mut failed = 0;
        for f in &args.files {
            match agentlog_api::archive::capture_file(&settings, f) {
                Ok(c) => out::print(&format!("{}: {}\n", f.display(), describe(c)))?,
                Err(e) => {
                    failed += 1;
                    crate::eprintln_clean!("agentlog: not kept: {e}");
                }
            }
        }
        return Ok(if failed > 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        });
    };
    // A hook's input: standard input for Claude Code and Gemini CLI, the
    // last argument for Codex's notify (clap takes it as a file).
    let mut input = String::new();
    if hook != "codex" {
        std::io::stdin().take(16 << 20).read_to_string(&mut input)?;
    } else if let Some(last) = args.files.last() {
        input = last.to_string_lossy().into_owned();
    }
    match agentlog_api::archive::capture_hook(&settings, hook, &input) {
        Ok((path, c)) => {
            if args.verbose {
                crate::eprintln_clean!("agentlog: {}: {}", path.display(), describe(c));
            }
        }
        Err(e) => crate::eprintln_clean!("agentlog: capture hook ({hook}): {e}"),
    }
    Ok(ExitCode::SUCCESS)
}

fn describe(c: agentlog_archive::Captured) -> &'static str {
    use agentlog_archive::Captured;
    match c {
        Captured::Unchanged => "already kept",
        Captured::New => "kept (new)",
        Captured::Appended => "kept (grew)",
        Captured::Rewritten => "kept (a new version)",
    }
}
