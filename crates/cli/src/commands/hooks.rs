//! `agentlog hooks`: install agentlog's capture into the agents' own
//! settings.

use crate::out;
use std::process::ExitCode;

/// Install agentlog's capture into the agents' own settings.
///
/// Sessions are then kept the moment the agents write them. Claude Code's and Gemini CLI's settings get hooks that run `agentlog
/// capture` when a turn ends, before a compaction and when a session ends;
/// Codex's config gets its `notify` program. What is in the settings
/// already stays; the first original of each file is kept beside it
/// (`.agentlog-backup`); `uninstall` removes only agentlog's entries. Every
/// change is shown first: without --yes nothing is written.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// Install or remove.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// Add agentlog's capture to the agents' settings.
    Install(Opts),
    /// Take agentlog's capture out of the agents' settings.
    Uninstall(Opts),
}

/// Which agents, and whether to write.
#[derive(clap::Args, Debug)]
pub struct Opts {
    /// Only this agent (claude, codex, gemini; repeatable; all when left
    /// out).
    #[arg(long = "agent", value_name = "AGENT")]
    pub agents: Vec<String>,
    /// Also a systemd user unit that runs `agentlog index --watch`
    /// (enable it with `systemctl --user enable --now agentlog-watch`).
    #[arg(long)]
    pub service: bool,
    /// Write the changes shown.
    #[arg(long)]
    pub yes: bool,
}

/// Runs `agentlog hooks`.
pub fn cmd_hooks(args: Args) -> anyhow::Result<ExitCode> {
    let settings = crate::config::settings(&[])?;
    let (remove, opts) = match &args.what {
        What::Install(o) => (false, o),
        What::Uninstall(o) => (true, o),
    };
    let (changes, skipped) = if remove {
        agentlog_api::hooks::plan_uninstall(&settings, &opts.agents, opts.service)?
    } else {
        let exe = std::env::current_exe()?;
        agentlog_api::hooks::plan_install(
            &settings,
            &opts.agents,
            &exe.to_string_lossy(),
            opts.service,
        )?
    };
    for s in &skipped {
        crate::eprintln_clean!("agentlog: {}: left alone: {}", s.agent, s.why);
    }
    if changes.is_empty() {
        out::print(if remove {
            "nothing to remove: no agent's settings hold agentlog's capture\n"
        } else {
            "nothing to change: agentlog's capture is installed already\n"
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    for c in &changes {
        out::print(&c.diff())?;
    }
    if !opts.yes {
        out::print(&format!(
            "{} to change; nothing was written: run again with --yes to write {}\n",
            out::count(changes.len() as u64, "file"),
            if changes.len() == 1 { "it" } else { "them" }
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    agentlog_api::hooks::apply(&changes)?;
    for c in &changes {
        out::print(&format!("wrote {} ({})\n", c.file.display(), c.agent))?;
    }
    if opts.service && !remove {
        out::print("start it with: systemctl --user daemon-reload && systemctl --user enable --now agentlog-watch\n")?;
    }
    Ok(ExitCode::SUCCESS)
}
