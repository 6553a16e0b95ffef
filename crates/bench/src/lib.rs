//! Deterministic corpora of agent sessions for benchmarks, tests and demos.
//!
//! [`gen::generate`] writes realistic sessions for every supported agent
//! (Claude Code, Codex, Gemini, pi, codelia, jido_code) in their native
//! formats and layouts under a directory that stands in for a home
//! directory, so `agentlog` discovers them with `HOME=DIR`.
//!
//! ```no_run
//! let g = agentlog_bench::gen::generate("/tmp/corpus".as_ref(), 5_000_000, 1)?;
//! println!("{} sessions, {} bytes", g.files.len(), g.bytes);
//! # Ok::<(), std::io::Error>(())
//! ```
#![deny(unsafe_code)]

pub mod e2e;
pub mod gen;
pub mod pick;
pub mod push;
pub mod rss;
pub mod secrets;
pub mod words;

/// Parses a size such as `5MB`, `1GB`, `300kB` or `12345` (bytes; units
/// are powers of 1000, `KiB`/`MiB`/`GiB` powers of 1024).
pub fn parse_size(s: &str) -> Option<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    (n >= 0.0).then_some((n * mult) as u64)
}

/// Returns the CPU seconds (user + system) of this process's waited-for
/// children, from `/proc/self/stat` (clock ticks of 1/100 s).
pub fn children_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // Fields 16 and 17 of stat(5): cutime and cstime; `after` starts at 3.
    (f.get(13).copied().unwrap_or(0.0) + f.get(14).copied().unwrap_or(0.0)) / 100.0
}

/// Times a fixed task, in milliseconds: writing 256 MB of memory this
/// process never touched before, then 200 million steps of integer
/// arithmetic. The same machine runs it up to twice as slowly at times
/// (other work on the host it shares, invisible in its load); a benchmark
/// prints it beside its figures so runs are compared at the same pace.
pub fn pace_ms() -> f64 {
    let start = std::time::Instant::now();
    let mut block = vec![0u8; 256 << 20];
    for (i, page) in block.chunks_mut(4096).enumerate() {
        page[0] = i as u8;
    }
    let mut x = std::hint::black_box(
        block
            .iter()
            .step_by(4096)
            .map(|&b| u64::from(b))
            .sum::<u64>(),
    ) | 1;
    for _ in 0..200_000_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x);
    start.elapsed().as_secs_f64() * 1e3
}

/// True when a bench binary was started by `cargo bench` (which passes
/// `--bench`), false when `cargo test --all-targets` runs it as a smoke
/// test: the benchmarks take minutes and gigabytes, so they then only say
/// how to run them.
pub fn started_by_cargo_bench(name: &str) -> bool {
    let yes = std::env::args().any(|a| a == "--bench");
    if !yes {
        println!("{name}: benchmark not run (run it with `cargo bench -p agentlog-bench --bench {name}`)");
    }
    yes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes() {
        assert_eq!(parse_size("5MB"), Some(5_000_000));
        assert_eq!(parse_size("1GB"), Some(1_000_000_000));
        assert_eq!(parse_size("1.5kb"), Some(1500));
        assert_eq!(parse_size("2MiB"), Some(2 * 1024 * 1024));
        assert_eq!(parse_size("12"), Some(12));
        assert_eq!(parse_size("lots"), None);
    }
}
