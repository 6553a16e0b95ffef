use std::process::ExitCode;

/// jido operations.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog seed jido`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog seed jido is not available in this build yet")
}
