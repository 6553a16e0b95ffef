use std::process::ExitCode;

/// Search the text of every session.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog search`.
pub fn cmd_search(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog search is not available in this build yet")
}
