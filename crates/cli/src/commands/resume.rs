use std::process::ExitCode;

/// Continue a session in another agent.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog resume`.
pub fn cmd_resume(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog resume is not available in this build yet")
}
