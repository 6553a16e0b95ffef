use std::process::ExitCode;

/// Migrate a session file to the newest version of its format.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog migrate`.
pub fn cmd_migrate(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog migrate is not available in this build yet")
}
