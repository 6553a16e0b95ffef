//! What `--redact` costs `agentlog export`, run as a user runs it.
//!
//! `cargo bench -p agentlog-bench --bench redact`
//!
//! Builds the release `agentlog`, generates a corpus of every agent
//! (`AGENTLOG_BENCH_SIZE`, default 50MB, plus 20 sessions full of planted
//! secrets), then exports every session with `agentlog export FILE --to
//! json` and `--to markdown`, with and without `--redact`: each session's
//! two exports one after the other, which first alternating from session
//! to session and round to round, so that a change in the machine's state
//! weighs on both alike. It prints the time of each (wall clock, and the
//! CPU time of the agentlog processes as the kernel counts it for each,
//! which a loaded machine disturbs less; medians of the rounds' sums) and
//! the ratio: redaction may cost at most 20% (ratio ≤ 1.20).

use agentlog_bench::{gen, parse_size, rss, secrets, started_by_cargo_bench};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SEED: u64 = 12;
const ROUNDS: usize = 3;

fn die(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("redact bench: {what}: {e}");
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

fn corpus(dir: &Path, size: u64) -> Vec<PathBuf> {
    let marker = dir.join(".complete");
    if !marker.exists() {
        let _ = std::fs::remove_dir_all(dir);
        gen::generate(dir, size, SEED).unwrap_or_else(|e| die("generating the corpus", e));
        let planted = dir.join("planted");
        std::fs::create_dir_all(&planted).unwrap_or_else(|e| die("corpus", e));
        let json = agentlog_formats::registry::by_name("json")
            .unwrap_or_else(|| die("corpus", "no json format"));
        for i in 0..20 {
            let mut out = Vec::new();
            json.write(&secrets::planted_session(i), &mut out)
                .unwrap_or_else(|e| die("corpus", e));
            std::fs::write(planted.join(format!("planted-{i}.json")), out)
                .unwrap_or_else(|e| die("corpus", e));
        }
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
                // Dot-files are the corpus's marker and agents' side files
                // (Gemini's `.project_root`), not sessions.
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// Exports every file with and without `--redact`, the two in turn (which
/// first alternates from file to file, and from round to round); returns
/// the (wall, CPU) seconds of the plain exports and of the redacting ones.
fn export_all(bin: &Path, files: &[PathBuf], to: &str, round: usize) -> [(f64, f64); 2] {
    let mut sums = [(0.0, 0.0); 2];
    for (i, f) in files.iter().enumerate() {
        let first = (i + round) % 2 == 1;
        for redact in [first, !first] {
            let mut c = Command::new(bin);
            c.arg("export").arg(f).args(["--to", to]);
            if is_planted(f) {
                c.args(["--from", "json"]);
            }
            if redact {
                c.arg("--redact");
            }
            c.stdout(Stdio::null()).stderr(Stdio::null());
            let (ok, wall, cpu) = rss::timed(&mut c).unwrap_or_else(|e| die("running agentlog", e));
            if !ok {
                die("agentlog export failed on", f.display());
            }
            let sum = &mut sums[usize::from(redact)];
            sum.0 += wall;
            sum.1 += cpu;
        }
    }
    sums
}

/// True for the planted sessions (agentlog JSON with metadata longer than
/// the json format's detection reads, so the format is named).
fn is_planted(p: &Path) -> bool {
    p.parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "planted")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if !started_by_cargo_bench("redact") {
        return;
    }
    let size_text = std::env::var("AGENTLOG_BENCH_SIZE").unwrap_or_else(|_| "50MB".into());
    let Some(size) = parse_size(&size_text) else {
        eprintln!("AGENTLOG_BENCH_SIZE={size_text}: expected a size like 50MB");
        std::process::exit(2);
    };
    let bin = agentlog();
    let dir = target_dir().join(format!("bench-corpus/redact-{size_text}-seed{SEED}"));
    let files = corpus(&dir, size);
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "== agentlog redact benchmark: {} sessions, {:.1} MB at {}",
        files.len(),
        bytes as f64 / 1e6,
        dir.display()
    );
    println!(
        "load average before: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut failed = false;
    for to in ["json", "markdown"] {
        let (mut wall, mut cpu) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
        for round in 0..ROUNDS {
            for (i, (w, c)) in export_all(&bin, &files, to, round).into_iter().enumerate() {
                wall[i].push(w);
                cpu[i].push(c);
            }
        }
        let [w0, w1] = wall.map(median);
        let [c0, c1] = cpu.map(median);
        let mb = bytes as f64 / 1e6;
        println!(
            "export --to {to}: plain {w0:.2} s wall ({:.1} MB/s), {c0:.2} s CPU; --redact {w1:.2} s wall ({:.1} MB/s), {c1:.2} s CPU",
            mb / w0,
            mb / w1
        );
        let (rw, rc) = (w1 / w0, c1 / c0);
        println!(
            "export --to {to}: --redact / plain = {rc:.2}x CPU, {rw:.2}x wall (target <= 1.20x)"
        );
        failed |= rc > 1.20;
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average after: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    if failed {
        eprintln!("redact bench: redaction costs more than 20% of export");
        std::process::exit(1);
    }
}
