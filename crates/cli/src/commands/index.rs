use std::process::ExitCode;

/// Build or refresh the search index of every session.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog index`.
pub fn cmd_index(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog index is not available in this build yet")
}
