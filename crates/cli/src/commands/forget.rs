//! `agentlog forget`: remove a session from the archive and the index for
//! good.

use crate::out;
use std::process::ExitCode;

/// Remove a session from agentlog's archive and the index, for good.
///
/// Every state the archive keeps goes, and, when its file is gone, the
/// session leaves the index. The session's file, when it is still on disk, is left alone: agentlog
/// never deletes what it did not create; the next index then reads it
/// (and keeps it) again.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session id (prefix) or the file's path.
    pub session: String,
    /// Do it (without it, say what would be removed).
    #[arg(long)]
    pub yes: bool,
}

/// Runs `agentlog forget`.
pub fn cmd_forget(args: Args) -> anyhow::Result<ExitCode> {
    let settings = crate::config::settings(&[])?;
    if !args.yes {
        let (found, kept) = agentlog_api::archive::versions(&settings, &args.session)?;
        out::print(&format!(
            "would forget {} ({}, {}); nothing was removed: run again with --yes\n",
            found.path.display(),
            found.format,
            out::count(kept.versions.len() as u64, "version")
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let (path, on_disk) = agentlog_api::archive::forget(&settings, &args.session)?;
    out::print(&format!(
        "forgot {}: removed from the archive{}\n",
        path.display(),
        if on_disk {
            "; the file is still on disk, and the next index reads it again"
        } else {
            " and the index"
        }
    ))?;
    Ok(ExitCode::SUCCESS)
}
