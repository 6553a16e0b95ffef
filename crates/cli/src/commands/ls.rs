use std::process::ExitCode;

/// List the sessions of every agent on this machine, newest first.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog ls`.
pub fn cmd_ls(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog ls is not available in this build yet")
}
