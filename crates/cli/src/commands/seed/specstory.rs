use std::process::ExitCode;

/// specstory operations.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog seed specstory`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog seed specstory is not available in this build yet")
}
