use std::process::ExitCode;

/// acpx operations.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog seed acpx`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog seed acpx is not available in this build yet")
}
