//! `agentlog dataset` over generated corpora, run as a user runs it: time
//! and peak memory at each size, to show memory does not grow with the
//! corpus.
//!
//! `cargo bench -p agentlog-bench --bench dataset`
//!
//! Builds the release `agentlog`, generates a corpus of every agent at
//! each size of `AGENTLOG_BENCH_SIZES` (default `100MB,1GB`; kept in
//! `target/bench-data/` for the next run), then runs `agentlog dataset -o
//! DIR` (openai-chat, split by project) over each and prints its wall
//! time, throughput and peak resident set (the kernel's, `wait4`). The
//! target: the peak at the largest size at most 1.5 times the peak at the
//! smallest.

use agentlog_bench::{gen, parse_size, rss, started_by_cargo_bench};
use std::path::{Path, PathBuf};
use std::process::Command;

const SEED: u64 = 41;

fn die(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("dataset bench: {what}: {e}");
    std::process::exit(1)
}

fn target_dir() -> PathBuf {
    if let Ok(t) = std::env::var("CARGO_TARGET_DIR") {
        return PathBuf::from(t);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// Builds the release binary and returns its path.
fn agentlog() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--quiet",
            "-p",
            "agentlog",
            "--bin",
            "agentlog",
        ])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .status()
        .unwrap_or_else(|e| die("building agentlog", e));
    if !status.success() {
        die("building agentlog", status);
    }
    target_dir().join("release/agentlog")
}

/// The corpus of `size` bytes (generated once) and its size on disk.
fn corpus(size: u64) -> (PathBuf, u64) {
    let dir = target_dir().join(format!("bench-data/dataset-{size}"));
    let marker = dir.join(".complete");
    if !marker.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        gen::generate(&dir, size, SEED).unwrap_or_else(|e| die("generating the corpus", e));
        std::fs::write(&marker, b"").unwrap_or_else(|e| die("corpus", e));
    }
    (dir.clone(), bytes_under(&dir))
}

fn bytes_under(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(p),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

fn main() {
    if !started_by_cargo_bench("dataset") {
        return;
    }
    let sizes: Vec<u64> = std::env::var("AGENTLOG_BENCH_SIZES")
        .unwrap_or_else(|_| "100MB,1GB".into())
        .split(',')
        .map(|s| parse_size(s).unwrap_or_else(|| die("AGENTLOG_BENCH_SIZES", s)))
        .collect();
    let bin = agentlog();
    println!("agentlog dataset (openai-chat, split by project, redaction on)");
    println!(
        "{:>10}  {:>9}  {:>9}  {:>8}  {:>9}  {:>10}",
        "corpus MB", "examples", "seconds", "MB/s", "peak MB", "output MB"
    );
    let mut peaks = Vec::new();
    for size in sizes {
        let (home, bytes) = corpus(size);
        let dir = target_dir().join(format!("bench-data/dataset-out-{size}"));
        let _ = std::fs::remove_dir_all(&dir);
        let args = ["dataset", "-o", dir.to_str().unwrap_or_default()];
        let (peak, seconds) =
            rss::peak_of(&bin, &args, &home).unwrap_or_else(|e| die("running agentlog", e));
        let manifest: serde_json::Value = std::fs::read(dir.join("manifest.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_else(|| die("reading the manifest", dir.display()));
        let examples: u64 = ["train", "test"]
            .iter()
            .filter_map(|s| manifest["splits"][s]["examples"].as_u64())
            .sum();
        let mb = bytes as f64 / 1e6;
        let peak_mb = peak as f64 / 1e6;
        println!(
            "{:>10.0}  {:>9}  {:>9.1}  {:>8.1}  {:>9.1}  {:>10.1}",
            mb,
            examples,
            seconds,
            mb / seconds,
            peak_mb,
            bytes_under(&dir) as f64 / 1e6
        );
        peaks.push(peak_mb);
    }
    if let (Some(first), Some(last)) = (peaks.first(), peaks.last()) {
        let ratio = last / first;
        println!(
            "peak memory, largest corpus / smallest: {ratio:.2} (target ≤ 1.50: {})",
            if ratio <= 1.5 { "met" } else { "missed" }
        );
    }
}
