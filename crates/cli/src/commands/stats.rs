use std::process::ExitCode;

/// Count tokens and estimated cost by day, model, project and agent.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog stats`.
pub fn cmd_stats(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog stats is not available in this build yet")
}
