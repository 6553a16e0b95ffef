//! `agentlog-bench`: writes deterministic corpora of agent sessions.
//!
//! `agentlog-bench gen --size 1GB --out DIR [--seed N] [--today DAY]`
//! writes sessions of every supported agent, dated over the 180 days
//! before today, in their native formats and layouts under DIR
//! (`DIR/.claude/projects/…`, `DIR/.codex/sessions/…`, …); run `agentlog`
//! with `HOME=DIR` to find them.

use anyhow::{anyhow, Context};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// The allocator of the `agentlog` binary, so that the readers measured
/// here run as they do there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
        /// Demo sessions: plausible scripted conversations (some with a
        /// branch), dated over the two weeks before today.
        #[arg(long)]
        demo: bool,
        /// Date the sessions as if today were this day (YYYY-MM-DD):
        /// sessions start over the 180 days (--demo: 14) before it, so the
        /// same seed, size and day give the same files. Default: today.
        #[arg(long, value_name = "DAY")]
        today: Option<String>,
    },
    /// Peak memory of whole agentlog commands per MB of input: a large pi
    /// session (show, validate, tree, index) and a pi header followed by
    /// millions of tiny records.
    Rss {
        /// Size of the large pi session.
        #[arg(long, default_value = "500MB")]
        size: String,
        /// How many `{}` records follow the header of the tiny-lines file.
        #[arg(long, default_value_t = 3_000_000)]
        tiny: u64,
        /// Where the inputs are written (outside the repo; removed after).
        #[arg(long, default_value = "/var/tmp/agentlog-bench/rss")]
        dir: PathBuf,
        /// The agentlog binary (default: the one beside this one).
        #[arg(long)]
        agentlog: Option<PathBuf>,
    },
    /// Time whole agentlog commands (index, search, ls, incremental
    /// updates) and the readers on a generated corpus, beside rg,
    /// fast-resume and agentsview in the same run.
    E2e {
        /// Corpus size (100MB, 1GB, 10GB).
        #[arg(long, default_value = "100MB")]
        size: String,
        /// Where corpora and work directories are kept (outside the repo).
        #[arg(long, default_value = "/var/tmp/agentlog-bench")]
        dir: PathBuf,
        /// The agentlog binary to time (default: the one beside this one).
        #[arg(long)]
        agentlog: Option<PathBuf>,
        /// Runs of each search.
        #[arg(long, default_value_t = 20)]
        runs: usize,
        /// Appends in the incremental-update test.
        #[arg(long, default_value_t = 500)]
        appends: usize,
        /// The directory with the peers' commands (default: what
        /// scripts/install-bench-peers.sh installs, target/peers/venv/bin).
        #[arg(long)]
        peers: Option<PathBuf>,
    },
    /// Time `agentlog pick` through tmux (first screen, each keystroke)
    /// on a generated corpus with its index warm, beside fast-resume's
    /// picker in the same run.
    Pick {
        /// Corpus size (100MB, 1GB, 10GB).
        #[arg(long, default_value = "1GB")]
        size: String,
        /// Where corpora and work directories are kept (outside the repo).
        #[arg(long, default_value = "/var/tmp/agentlog-bench")]
        dir: PathBuf,
        /// The agentlog binary to time (default: the one beside this one).
        #[arg(long)]
        agentlog: Option<PathBuf>,
        /// Starts of each picker timed.
        #[arg(long, default_value_t = 10)]
        runs: usize,
        /// The directory with fast-resume's `fr` (default: what
        /// scripts/install-bench-peers.sh installs, target/peers/venv/bin).
        #[arg(long)]
        peers: Option<PathBuf>,
    },
    /// Time `agentlog push` and the `--db` commands against a PostgreSQL
    /// started for the run (scripts/postgres.sh), beside agentsview's
    /// `sync` + `pg push` in the same run.
    Push {
        /// Corpus size (100MB, 1GB, 10GB).
        #[arg(long, default_value = "100MB")]
        size: String,
        /// Where corpora and work directories are kept (outside the repo).
        #[arg(long, default_value = "/var/tmp/agentlog-bench")]
        dir: PathBuf,
        /// The agentlog binary to time (default: the one beside this one).
        #[arg(long)]
        agentlog: Option<PathBuf>,
        /// Runs of each search and stats command.
        #[arg(long, default_value_t = 10)]
        runs: usize,
        /// Messages appended, each followed by a push.
        #[arg(long, default_value_t = 20)]
        appends: usize,
        /// The directory with agentsview (default: what
        /// scripts/install-bench-peers.sh installs, target/peers/venv/bin).
        #[arg(long)]
        peers: Option<PathBuf>,
    },
}

/// The options of a benchmark run from its flags: the size parsed, the
/// binary and the peers found, the directory made.
fn options(
    size: String,
    dir: PathBuf,
    agentlog: Option<PathBuf>,
    runs: usize,
    appends: usize,
    peers: Option<PathBuf>,
) -> anyhow::Result<agentlog_bench::e2e::Options> {
    let bytes = agentlog_bench::parse_size(&size)
        .ok_or_else(|| anyhow!("--size {size:?}: expected a size like 100MB or 1GB"))?;
    let agentlog = agentlog_binary(agentlog)?;
    let peers_bin = peers_dir(peers);
    std::fs::create_dir_all(&dir)?;
    Ok(agentlog_bench::e2e::Options {
        size: bytes,
        size_text: size,
        dir,
        agentlog,
        runs,
        appends,
        peers_bin,
    })
}

/// Returns `agentlog` beside this binary unless given; an error when it
/// does not exist.
fn agentlog_binary(given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let agentlog = match given {
        Some(a) => a,
        None => std::env::current_exe()?.with_file_name("agentlog"),
    };
    if !agentlog.exists() {
        anyhow::bail!(
            "{} does not exist: build it (cargo build --release -p agentlog) or pass --agentlog",
            agentlog.display()
        );
    }
    Ok(agentlog)
}

/// The peers' bin directory: `given`, else what
/// scripts/install-bench-peers.sh installs (None when it cannot).
fn peers_dir(given: Option<PathBuf>) -> Option<PathBuf> {
    given.or_else(|| {
        let out = std::process::Command::new("bash")
            .arg(repo().join("scripts/install-bench-peers.sh"))
            .stderr(std::process::Stdio::inherit())
            .output()
            .ok()?;
        let p = String::from_utf8(out.stdout).ok()?;
        let p = p.trim();
        (out.status.success() && !p.is_empty()).then(|| PathBuf::from(p))
    })
}

fn repo() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn report(missed: Vec<String>) {
    if missed.is_empty() {
        println!("every target met");
    } else {
        println!("targets missed:");
        for m in missed {
            println!("  - {m}");
        }
    }
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Gen {
            size,
            out,
            seed,
            demo,
            today,
        } => {
            let bytes = agentlog_bench::parse_size(&size)
                .ok_or_else(|| anyhow!("--size {size:?}: expected a size like 5MB or 1GB"))?;
            let now_ms = match &today {
                None => chrono::Utc::now().timestamp_millis(),
                Some(day) => chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
                    .ok()
                    .and_then(|d| d.and_hms_opt(12, 0, 0))
                    .map(|t| t.and_utc().timestamp_millis())
                    .ok_or_else(|| anyhow!("--today {day:?}: expected a day like 2026-12-01"))?,
            };
            let started = std::time::Instant::now();
            // Dated before today, as an agent's sessions are: `ls --since
            // 30d` finds the last month's.
            let opts = if demo {
                agentlog_bench::gen::GenOptions::demo(now_ms, 14)
            } else {
                agentlog_bench::gen::GenOptions::recent(now_ms)
            };
            let g = agentlog_bench::gen::generate_with(&out, bytes, seed, &opts)
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
        Command::Rss {
            size,
            tiny,
            dir,
            agentlog,
        } => {
            let bytes = agentlog_bench::parse_size(&size)
                .ok_or_else(|| anyhow!("--size {size:?}: expected a size like 500MB"))?;
            let agentlog = agentlog_binary(agentlog)?;
            let rows = agentlog_bench::rss::run(&agentlog, &dir, bytes, tiny)?;
            print!("{}", agentlog_bench::rss::table(&rows));
            Ok(())
        }
        Command::E2e {
            size,
            dir,
            agentlog,
            runs,
            appends,
            peers,
        } => {
            let o = options(size, dir, agentlog, runs, appends, peers)?;
            report(agentlog_bench::e2e::run_all(&o)?);
            Ok(())
        }
        Command::Pick {
            size,
            dir,
            agentlog,
            runs,
            peers,
        } => {
            let o = options(size, dir, agentlog, runs, 0, peers)?;
            report(agentlog_bench::pick::run(&o)?);
            Ok(())
        }
        Command::Push {
            size,
            dir,
            agentlog,
            runs,
            appends,
            peers,
        } => {
            let o = options(size, dir, agentlog, runs, appends, peers)?;
            report(agentlog_bench::push::run_all(
                &o,
                &repo().join("scripts/postgres.sh"),
            )?);
            Ok(())
        }
    }
}
