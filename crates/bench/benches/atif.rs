//! What `agentlog export --to atif` costs against `--to markdown`, run as a
//! user runs it, on the same sessions in the same run.
//!
//! `cargo bench -p agentlog-bench --bench atif`
//!
//! Builds the release `agentlog`, generates a corpus of every agent
//! (`AGENTLOG_BENCH_SIZE`, default 1GB; `agentlog-bench gen`'s sessions),
//! then exports every session with `agentlog export FILE --to atif` and
//! `--to markdown`, one after the other, which first alternating from
//! session to session and round to round (`AGENTLOG_BENCH_ROUNDS`, default
//! 1), so that a change in the machine's state weighs on both alike. It
//! prints each one's time (wall clock, and the CPU time of the agentlog
//! processes as the kernel counts it, which a loaded machine disturbs
//! less; medians of the rounds' sums), throughput over the corpus' bytes,
//! the bytes written, and the ratio ATIF / markdown.

use agentlog_bench::{gen, parse_size, rss, started_by_cargo_bench};
use std::path::{Path, PathBuf};
use std::process::Command;

const SEED: u64 = 41;

fn die(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("atif bench: {what}: {e}");
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

/// The corpus' session files (generated once).
fn corpus(dir: &Path, size: u64) -> Vec<PathBuf> {
    let marker = dir.join(".complete");
    if !marker.exists() {
        let _ = std::fs::remove_dir_all(dir);
        gen::generate(dir, size, SEED).unwrap_or_else(|e| die("generating the corpus", e));
        std::fs::write(&marker, b"").unwrap_or_else(|e| die("corpus", e));
    }
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)
            .unwrap_or_else(|e| die("corpus", e))
            .flatten()
        {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .file_name()
                .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
            {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Exports every file to ATIF and to markdown, the two in turn; returns
/// the (wall, CPU, bytes written) of each.
fn export_all(bin: &Path, files: &[PathBuf], out: &Path, round: usize) -> [(f64, f64, u64); 2] {
    let mut sums = [(0.0, 0.0, 0u64); 2];
    for (i, f) in files.iter().enumerate() {
        let first = (i + round) % 2;
        for k in [first, 1 - first] {
            let to = ["atif", "markdown"][k];
            let mut c = Command::new(bin);
            c.arg("export")
                .arg(f)
                .args(["--to", to, "--force", "-o"])
                .arg(out)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            let (ok, wall, cpu) = rss::timed(&mut c).unwrap_or_else(|e| die("running agentlog", e));
            if !ok {
                die(&format!("agentlog export --to {to} failed on"), f.display());
            }
            let written = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
            let s = &mut sums[k];
            s.0 += wall;
            s.1 += cpu;
            s.2 += written;
        }
    }
    sums
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if !started_by_cargo_bench("atif") {
        return;
    }
    let size_text = std::env::var("AGENTLOG_BENCH_SIZE").unwrap_or_else(|_| "1GB".into());
    let Some(size) = parse_size(&size_text) else {
        eprintln!("AGENTLOG_BENCH_SIZE={size_text}: expected a size like 1GB");
        std::process::exit(2);
    };
    let rounds: usize = std::env::var("AGENTLOG_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1)
        .max(1);
    let bin = agentlog();
    let dir = target_dir().join(format!("bench-corpus/atif-{size_text}-seed{SEED}"));
    let files = corpus(&dir, size);
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let out = target_dir().join("bench-corpus/atif-export-out");
    let load = || {
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "== agentlog ATIF export benchmark: {} sessions, {:.1} MB at {}",
        files.len(),
        bytes as f64 / 1e6,
        dir.display()
    );
    println!("load average before: {}", load());
    let (mut wall, mut cpu, mut written) = (
        [Vec::new(), Vec::new()],
        [Vec::new(), Vec::new()],
        [0u64; 2],
    );
    for round in 0..rounds {
        for (k, (w, c, b)) in export_all(&bin, &files, &out, round)
            .into_iter()
            .enumerate()
        {
            wall[k].push(w);
            cpu[k].push(c);
            written[k] = b;
        }
    }
    let [wa, wm] = wall.map(median);
    let [ca, cm] = cpu.map(median);
    let mb = bytes as f64 / 1e6;
    for (name, w, c, b) in [
        ("atif", wa, ca, written[0]),
        ("markdown", wm, cm, written[1]),
    ] {
        println!(
            "export --to {name}: {w:.1} s wall ({:.1} MB/s), {c:.1} s CPU ({:.1} MB/s), {:.1} MB written",
            mb / w,
            mb / c,
            b as f64 / 1e6
        );
    }
    println!(
        "export --to atif / --to markdown = {:.2}x CPU, {:.2}x wall",
        ca / cm,
        wa / wm
    );
    println!("load average after: {}", load());
    let _ = std::fs::remove_file(&out);
}
