use std::process::ExitCode;

/// Check session files and repair torn tails, keeping the cut bytes.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog doctor`.
pub fn cmd_doctor(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog doctor is not available in this build yet")
}
