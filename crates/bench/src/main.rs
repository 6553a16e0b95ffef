//! `agentlog-bench`: writes deterministic corpora of agent sessions.
//!
//! `agentlog-bench gen --size 1GB --out DIR [--seed N]` writes sessions of
//! every supported agent in their native formats and layouts under DIR
//! (`DIR/.claude/projects/…`, `DIR/.codex/sessions/…`, …); run `agentlog`
//! with `HOME=DIR` to find them.

use anyhow::{anyhow, Context};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Corpus generator for agentlog's benchmarks, tests and demos.
#[derive(Parser, Debug)]
#[command(name = "agentlog-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Write a deterministic corpus of sessions of every agent.
    Gen {
        /// Total size of the session files (5MB, 1GB, …).
        #[arg(long, default_value = "5MB")]
        size: String,
        /// The directory to write into (a stand-in home directory).
        #[arg(long)]
        out: PathBuf,
        /// The random seed: the same seed and size give the same files.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Gen { size, out, seed } => {
            let bytes = agentlog_bench::parse_size(&size)
                .ok_or_else(|| anyhow!("--size {size:?}: expected a size like 5MB or 1GB"))?;
            let started = std::time::Instant::now();
            let g = agentlog_bench::gen::generate(&out, bytes, seed)
                .with_context(|| format!("writing the corpus under {}", out.display()))?;
            let mut by_agent: std::collections::BTreeMap<&str, usize> = Default::default();
            for (_, a) in &g.files {
                *by_agent.entry(a).or_default() += 1;
            }
            let parts: Vec<String> = by_agent.iter().map(|(a, n)| format!("{a} {n}")).collect();
            println!(
                "wrote {} sessions ({}), {:.1} MB, under {} in {:.1} s",
                g.files.len(),
                parts.join(", "),
                g.bytes as f64 / 1e6,
                out.display(),
                started.elapsed().as_secs_f64()
            );
            Ok(())
        }
    }
}
