use std::process::ExitCode;

/// Print the context (messages) the model would see at the leaf.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog context`.
pub fn cmd_context(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog context is not available in this build yet")
}
