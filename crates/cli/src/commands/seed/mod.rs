//! `agentlog seed`: the seed systems' own operations (codelia replay, jido
//! session files, acpx records, SpecStory rendering).

use clap::Subcommand;
use std::process::ExitCode;

pub mod acpx;
pub mod codelia;
pub mod jido;
pub mod specstory;

/// Operations of the seed persistence designs.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    system: System,
}

#[derive(Subcommand, Debug)]
enum System {
    Codelia(codelia::Args),
    Jido(jido::Args),
    Specstory(specstory::Args),
    Acpx(acpx::Args),
}

/// Runs `agentlog seed`.
pub fn cmd_seed(args: Args) -> anyhow::Result<ExitCode> {
    match args.system {
        System::Codelia(a) => codelia::run(a),
        System::Jido(a) => jido::run(a),
        System::Specstory(a) => specstory::run(a),
        System::Acpx(a) => acpx::run(a),
    }
}
