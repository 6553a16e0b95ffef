//! Append throughput of the durable store's writer under each fsync policy,
//! against the physical limit measured the same way in the same run: a raw
//! loop of `write` (+ `fdatasync`) of the same 1 KB lines to a file opened
//! for append. For the grouped policy the raw loop writes each group of
//! lines in one `write` before its fdatasync, as the writer does.
//!
//! `cargo bench -p agentlog-bench --bench append`
//!
//! The files go to `$AGENTLOG_BENCH_DIR` (default: the system temp
//! directory); point it at the disk whose sessions matter. Each measurement
//! is repeated, alternating writer and raw loop, and the median is shown.
//!
//! Targets: every-entry within 1.5x of the raw write+fdatasync loop;
//! grouped at least 200,000 entries/s of 1 KB.

use agentlog_store::{AppendOptions, AppendWriter, LockMode, SyncPolicy};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const LINE_BYTES: usize = 1024;
const REPEATS: usize = 5;

fn line(i: usize) -> Vec<u8> {
    let mut l = format!("{{\"id\":\"{i:012}\",\"type\":\"message\",\"text\":\"").into_bytes();
    l.resize(LINE_BYTES - 3, b'a' + (i % 26) as u8);
    l.extend_from_slice(b"\"}");
    debug_assert_eq!(l.len() + 1, LINE_BYTES);
    l
}

/// The raw loop: one `write` per line — or, with `batch`, one `write` per
/// group of `sync_every` lines — and an fdatasync every `sync_every` lines
/// (never when 0).
fn raw(path: &Path, lines: &[Vec<u8>], sync_every: usize, batch: bool) -> Duration {
    let _ = std::fs::remove_file(path);
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| die(path, e));
    let mut buf = Vec::with_capacity(LINE_BYTES * sync_every.max(1));
    let t = Instant::now();
    for (i, l) in lines.iter().enumerate() {
        buf.extend_from_slice(l);
        buf.push(b'\n');
        let end_of_group = sync_every > 0 && (i + 1) % sync_every == 0;
        if !batch || end_of_group {
            f.write_all(&buf).unwrap_or_else(|e| die(path, e));
            buf.clear();
        }
        if end_of_group {
            f.sync_data().unwrap_or_else(|e| die(path, e));
        }
    }
    f.write_all(&buf).unwrap_or_else(|e| die(path, e));
    if sync_every > 0 {
        f.sync_data().unwrap_or_else(|e| die(path, e));
    }
    t.elapsed()
}

/// The store's writer under `sync`.
fn store(path: &Path, lines: &[Vec<u8>], sync: SyncPolicy) -> Duration {
    let _ = std::fs::remove_file(path);
    let t = Instant::now();
    let (mut w, _) = AppendWriter::open(
        path,
        AppendOptions {
            sync,
            lock: LockMode::Fail,
        },
    )
    .unwrap_or_else(|e| die(path, e));
    for l in lines {
        w.append_line(l).unwrap_or_else(|e| die(path, e));
    }
    if !matches!(sync, SyncPolicy::None) {
        w.sync().unwrap_or_else(|e| die(path, e));
    }
    let d = t.elapsed();
    drop(w);
    d
}

fn die(path: &Path, e: impl std::fmt::Display) -> ! {
    eprintln!("append bench: {}: {e}", path.display());
    std::process::exit(1)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn rate(n: usize, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64()
}

/// Measures the writer and the raw loop alternately and prints both.
#[allow(clippy::too_many_arguments)]
fn compare(
    name: &str,
    dir: &Path,
    n: usize,
    repeats: usize,
    sync: SyncPolicy,
    raw_sync_every: usize,
    raw_batch: bool,
    raw_name: &str,
) -> (f64, f64) {
    let lines: Vec<Vec<u8>> = (0..n).map(line).collect();
    let ours_path = dir.join(format!("{name}.store.jsonl"));
    let raw_path = dir.join(format!("{name}.raw.jsonl"));
    let mut ours = Vec::new();
    let mut peer = Vec::new();
    for _ in 0..repeats {
        peer.push(raw(&raw_path, &lines, raw_sync_every, raw_batch));
        ours.push(store(&ours_path, &lines, sync));
    }
    let _ = std::fs::remove_file(&ours_path);
    let _ = std::fs::remove_file(&raw_path);
    let (o, p) = (rate(n, median(ours)), rate(n, median(peer)));
    println!(
        "{name:<12} {n:>7} x 1 KB   store {o:>11.0} entries/s ({:>7.1} MB/s)   {raw_name} {p:>11.0} entries/s   raw/store = {:.2}x",
        o * LINE_BYTES as f64 / 1e6,
        p / o
    );
    (o, p)
}

fn main() {
    if !agentlog_bench::started_by_cargo_bench("append") {
        return;
    }
    let dir = std::env::var_os("AGENTLOG_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = dir.join(format!("agentlog-append-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| die(&dir, e));
    let quick = std::env::args().any(|a| a == "--quick");
    let scale = if quick { 10 } else { 1 };
    println!("append bench in {} (lines of {LINE_BYTES} bytes with the newline, median of 3 to {REPEATS} runs)", dir.display());

    let (every, every_raw) = compare(
        "every-entry",
        &dir,
        500 / scale,
        3,
        SyncPolicy::EveryEntry,
        1,
        false,
        "raw write+fdatasync",
    );
    let grouped_policy = SyncPolicy::GROUPED_DEFAULT;
    let group = match grouped_policy {
        SyncPolicy::Grouped { entries, .. } => entries,
        _ => 1,
    };
    let (grouped, grouped_raw) = compare(
        "grouped",
        &dir,
        200_000 / scale,
        REPEATS,
        grouped_policy,
        group,
        true,
        &format!("raw {group}-line write+fdatasync"),
    );
    let (none, none_raw) = compare(
        "none",
        &dir,
        200_000 / scale,
        REPEATS,
        SyncPolicy::None,
        0,
        false,
        "raw write",
    );
    let _ = std::fs::remove_dir_all(&dir);

    println!();
    println!(
        "every-entry: {:.2}x the raw write+fdatasync loop (target <= 1.5x): {}",
        every_raw / every,
        verdict(every_raw / every <= 1.5)
    );
    println!(
        "grouped:     {grouped:.0} entries/s of 1 KB (target >= 200,000): {}; {:.2}x its raw loop",
        verdict(grouped >= 200_000.0),
        grouped_raw / grouped
    );
    println!("none:        {:.2}x the raw write loop", none_raw / none);
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT MET"
    }
}
