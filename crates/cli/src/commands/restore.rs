//! `agentlog restore`: put a session's file back from the archive.

use crate::out;
use std::path::PathBuf;
use std::process::ExitCode;

/// Put a session's file back where its agent looks, from agentlog's
/// archive, byte for byte.
///
/// The file is written exactly as agentlog last saw it (or as state N of `agentlog
/// archive versions`), and read back to check it. The agent then
/// resumes it as its own (`claude --resume <id>`, …). An existing file is
/// never replaced unless --force is given.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session id (prefix) or the file's path.
    pub session: String,
    /// The state to put back (a number from `agentlog archive versions`;
    /// the latest when left out).
    #[arg(long, value_name = "N")]
    pub state: Option<u32>,
    /// Write it here instead of where its agent keeps it.
    #[arg(long, value_name = "PATH")]
    pub to: Option<PathBuf>,
    /// Replace a file that is there.
    #[arg(long)]
    pub force: bool,
}

/// Runs `agentlog restore`.
pub fn cmd_restore(args: Args) -> anyhow::Result<ExitCode> {
    let settings = crate::config::settings(&[])?;
    let (path, n) = agentlog_api::archive::restore(
        &settings,
        &args.session,
        args.state,
        args.to.as_deref(),
        args.force,
    )?;
    out::print(&format!(
        "restored {} ({}), checked byte for byte\n",
        path.display(),
        out::count(n, "byte")
    ))?;
    Ok(ExitCode::SUCCESS)
}
