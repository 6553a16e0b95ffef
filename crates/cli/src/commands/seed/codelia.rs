use std::process::ExitCode;

/// codelia operations.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog seed codelia`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog seed codelia is not available in this build yet")
}
