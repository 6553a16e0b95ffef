//! Parse throughput of the pi format reader (through the registry) in MB/s,
//! against the physical floor measured in the same run on the same file:
//! `cat FILE > /dev/null` (reading) and `wc -l FILE` (reading and
//! finding the newlines).
//!
//! `cargo bench -p agentlog-bench --bench parse`
//!
//! The file is built from the real pi fixtures: the v3 session (written by
//! pi itself) repeated with fresh ids and chained into one long tree of
//! about 64 MB. It goes to `$AGENTLOG_BENCH_DIR` (default: the system temp
//! directory). Every tool reads it from the page cache (it is read once
//! before measuring); each measurement is the median of several.

use serde_json::Value;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The allocator of the `agentlog` binary, so that the reader measured here
/// runs as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/seeds/pi-mono/generated/large-session.migrated-by-pi-0.73.1.jsonl"
);
const REPEATS: usize = 5;

fn die(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("parse bench: {what}: {e}");
    std::process::exit(1)
}

/// Writes about `target_bytes` of pi session: the fixture's header once,
/// then its entries again and again, each copy with its own ids and its
/// first entry hung under the last entry of the copy before.
fn build_corpus(path: &Path, target_bytes: usize) -> usize {
    let text = std::fs::read_to_string(FIXTURE).unwrap_or_else(|e| die(FIXTURE, e));
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    let entries: Vec<Value> = lines.filter_map(|l| serde_json::from_str(l).ok()).collect();
    let ids: HashSet<String> = entries
        .iter()
        .filter_map(|e| e.get("id").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(path).unwrap_or_else(|e| die("corpus", e)));
    let mut written = 0usize;
    writeln!(out, "{header}").unwrap_or_else(|e| die("corpus", e));
    written += header.len() + 1;
    let mut last_id: Option<String> = None;
    let mut copy = 0usize;
    while written < target_bytes {
        for (i, e) in entries.iter().enumerate() {
            let mut e = e.clone();
            if let Value::Object(map) = &mut e {
                for (k, v) in map.iter_mut() {
                    if let Value::String(s) = v {
                        if (k == "id" || k.ends_with("Id")) && ids.contains(s.as_str()) {
                            *s = format!("{s}{copy:x}");
                        }
                    }
                }
                if i == 0 && copy > 0 {
                    map.insert(
                        "parentId".into(),
                        last_id.clone().map_or(Value::Null, Value::String),
                    );
                }
                if let Some(id) = map.get("id").and_then(Value::as_str) {
                    last_id = Some(id.to_string());
                }
            }
            let line = serde_json::to_string(&e).unwrap_or_else(|e| die("corpus", e));
            writeln!(out, "{line}").unwrap_or_else(|e| die("corpus", e));
            written += line.len() + 1;
        }
        copy += 1;
    }
    out.flush().unwrap_or_else(|e| die("corpus", e));
    written
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_command(cmd: &str, args: &[&str], path: &Path) -> Option<Duration> {
    let mut runs = Vec::new();
    for _ in 0..REPEATS {
        let t = Instant::now();
        let status = Command::new(cmd)
            .args(args)
            .arg(path)
            .stdout(Stdio::null())
            .status()
            .ok()?;
        if !status.success() {
            return None;
        }
        runs.push(t.elapsed());
    }
    Some(median(runs))
}

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

fn main() {
    if !agentlog_bench::started_by_cargo_bench("parse") {
        return;
    }
    let dir = std::env::var_os("AGENTLOG_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let quick = std::env::args().any(|a| a == "--quick");
    let target = if quick { 8 } else { 64 } << 20;
    let path = dir.join(format!("agentlog-parse-bench-{}.jsonl", std::process::id()));
    let bytes = build_corpus(&path, target);
    let format = match agentlog_formats::registry::by_name("pi") {
        Some(f) => f,
        None => die("registry", "no format named pi"),
    };
    // Warm the page cache and check the file reads as one pi session.
    let _ = std::fs::read(&path);
    let first = format
        .read_path(&path)
        .unwrap_or_else(|e| die("pi reader", e));
    let entries = first.session.entries.len();
    let diags = first.diagnostics.len();
    drop(first);

    let mut runs = Vec::new();
    for _ in 0..REPEATS {
        let t = Instant::now();
        let read = format
            .read_path(&path)
            .unwrap_or_else(|e| die("pi reader", e));
        runs.push(t.elapsed());
        drop(read);
    }
    let pi = median(runs);
    let cat = time_command("cat", &[], &path);
    let wc = time_command("wc", &["-l"], &path);
    let _ = std::fs::remove_file(&path);

    println!(
        "parse bench: {:.1} MB pi session, {entries} entries, {diags} diagnostics (median of {REPEATS})",
        bytes as f64 / 1e6
    );
    let pi_rate = mbps(bytes, pi);
    println!(
        "pi reader (registry)   {:>8.1} MB/s  {:>8.1} ms",
        pi_rate,
        pi.as_secs_f64() * 1e3
    );
    for (name, d) in [("cat > /dev/null", cat), ("wc -l", wc)] {
        match d {
            Some(d) => println!(
                "{name:<22} {:>8.1} MB/s  {:>8.1} ms   floor/pi = {:.1}x",
                mbps(bytes, d),
                d.as_secs_f64() * 1e3,
                mbps(bytes, d) / pi_rate
            ),
            None => println!("{name:<22} not available"),
        }
    }
}
