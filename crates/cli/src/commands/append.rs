use std::process::ExitCode;

/// Append JSONL entries from standard input to a session file, durably.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `agentlog append`.
pub fn cmd_append(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("agentlog append is not available in this build yet")
}
