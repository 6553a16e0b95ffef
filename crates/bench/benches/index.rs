//! Index benchmark on a generated corpus (1 GB by default; set
//! `AGENTLOG_BENCH_SIZE=50MB`, or pass `--quick`, for a fast check).
//!
//! Measures, in one run: the full index build (time and peak memory, in a
//! child process so the figure is the build's own), re-indexing after 100
//! entries are appended to one session, and the latency of 100 fixed
//! queries, each compared with `rg -i -c` (every occurrence, counted per
//! file) over the raw files for the same words (ripgrep is installed by `scripts/install-ripgrep.sh` when missing; the
//! comparison is skipped with a message when it cannot be). Targets: build
//! at most 60 s and 500 MB, append at most 100 ms, query p50 at most 10 ms
//! and p99 at most 50 ms, every query at least 20x faster than rg.

use agentlog_bench::{gen, parse_size, words};
use agentlog_formats::discover::{discover_all, DiscoverEnv};
use agentlog_index::{Index, SearchParams};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const SEED: u64 = 1;

fn main() {
    // The build child is started without cargo's arguments: it must not be
    // turned away by the check below.
    if let Ok(dir) = std::env::var("AGENTLOG_BENCH_CHILD_BUILD") {
        child_build(Path::new(&dir));
        return;
    }
    if !agentlog_bench::started_by_cargo_bench("index") {
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let size_text = std::env::var("AGENTLOG_BENCH_SIZE")
        .unwrap_or_else(|_| if quick { "50MB" } else { "1GB" }.to_string());
    let Some(size) = parse_size(&size_text) else {
        eprintln!("AGENTLOG_BENCH_SIZE={size_text}: expected a size like 50MB or 1GB");
        std::process::exit(2);
    };
    let root = target_dir().join("bench-corpus");
    let corpus = root.join(format!("{size_text}-seed{SEED}"));
    ensure_corpus(&corpus, size);
    let work = root.join(format!("{size_text}-work"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap_or_else(|e| die("creating the work dir", e));
    let index_path = work.join("index.sqlite");

    println!(
        "== agentlog index benchmark: {size_text} corpus at {}",
        corpus.display()
    );
    let mut failures = Vec::new();

    // 1. Full build, in a child process for its own peak memory.
    let (build_s, peak_mb, sessions) = build_in_child(&corpus, &index_path);
    let mb = size as f64 / 1e6;
    println!(
        "full build: {build_s:.1} s for {mb:.0} MB ({:.1} MB/s), {sessions} sessions, peak memory {peak_mb:.0} MB",
        mb / build_s
    );
    // 60 s for 1 GB, in proportion for other sizes.
    let budget = 60.0 * size as f64 / 1e9;
    if build_s > budget.max(1.0) {
        failures.push(format!(
            "build took {build_s:.1} s (target {budget:.1} s: 60 s per GB)"
        ));
    }
    if peak_mb > 500.0 {
        failures.push(format!("build peak memory {peak_mb:.0} MB (target 500 MB)"));
    }

    let env = DiscoverEnv::with_home(&corpus);
    let found = discover_all(&env, None);
    let (mut index, _) = Index::open(&index_path).unwrap_or_else(|e| die("opening the index", e));

    // 2. Append 100 entries to one session of each incremental format.
    for agent in ["claude", "codex", "pi"] {
        let Some(f) = found
            .iter()
            .filter(|f| f.format == agent)
            .nth(found.len() / 50)
        else {
            continue;
        };
        let original = std::fs::read(&f.path).unwrap_or_else(|e| die("reading a session", e));
        let extra = entries_to_append(agent, 100);
        let mut grown = original.clone();
        grown.extend_from_slice(&extra);
        std::fs::write(&f.path, &grown).unwrap_or_else(|e| die("appending", e));
        let t = Instant::now();
        let r = index
            .update(&found, &mut |_| {})
            .unwrap_or_else(|e| die("updating", e));
        let took = t.elapsed();
        println!(
            "append 100 entries to one {agent} session: re-index {:.1} ms ({} file appended, {} read in full, {} unchanged)",
            ms(took),
            r.appended,
            r.read_full,
            r.unchanged
        );
        if ms(took) > 100.0 {
            failures.push(format!(
                "{agent} append re-index {:.1} ms (target 100 ms)",
                ms(took)
            ));
        }
        if r.appended != 1 {
            failures.push(format!("{agent} append was not incremental: {r:?}"));
        }
        // Put the corpus back as it was (and the index with it).
        std::fs::write(&f.path, &original).unwrap_or_else(|e| die("restoring", e));
        index
            .update(&found, &mut |_| {})
            .unwrap_or_else(|e| die("updating", e));
    }

    // 3. Queries, each against rg.
    let queries = queries();
    let rg = ripgrep();
    let mut lat = Vec::with_capacity(queries.len());
    let mut worst_ratio = f64::INFINITY;
    let mut slow_vs_rg = 0;
    for (q, rg_args) in &queries {
        let mut p = SearchParams::new(q.clone());
        p.limit = 20;
        let _ = index.search(&p); // warm
        let t = Instant::now();
        let hits = index.search(&p).unwrap_or_else(|e| die("searching", e));
        let took = t.elapsed();
        lat.push(took);
        if let Some(rg) = &rg {
            let t = Instant::now();
            // Every occurrence, counted per file (what the index answers:
            // every entry with the words), output drained through a pipe.
            let status = Command::new(rg)
                .args(["--hidden", "--no-ignore", "-i", "-c"])
                .args(rg_args)
                .arg(&corpus)
                .output();
            let rg_took = t.elapsed();
            if status.is_ok() {
                let ratio = rg_took.as_secs_f64() / took.as_secs_f64().max(1e-9);
                worst_ratio = worst_ratio.min(ratio);
                if ratio < 20.0 {
                    slow_vs_rg += 1;
                    failures.push(format!(
                        "query {q:?}: {:.2} ms vs rg {:.0} ms, only {ratio:.0}x",
                        ms(took),
                        ms(rg_took)
                    ));
                }
                println!(
                    "  {:<28} {:>4} hits {:>8.2} ms   rg {:>7.0} ms   {:>6.0}x",
                    q,
                    hits.len(),
                    ms(took),
                    ms(rg_took),
                    ratio
                );
            }
        } else {
            println!("  {:<28} {:>4} hits {:>8.2} ms", q, hits.len(), ms(took));
        }
    }
    lat.sort();
    let p50 = ms(lat[lat.len() / 2]);
    let p99 = ms(lat[(lat.len() * 99 / 100).min(lat.len() - 1)]);
    println!(
        "queries: {} queries, p50 {p50:.2} ms, p99 {p99:.2} ms, max {:.2} ms",
        lat.len(),
        ms(lat[lat.len() - 1])
    );
    if rg.is_some() {
        println!("vs rg: the slowest query is {worst_ratio:.0}x faster than rg; {slow_vs_rg} queries under 20x");
    } else {
        println!("vs rg: skipped (ripgrep is not installed and could not be installed)");
    }
    if p50 > 10.0 {
        failures.push(format!("query p50 {p50:.2} ms (target 10 ms)"));
    }
    if p99 > 50.0 {
        failures.push(format!("query p99 {p99:.2} ms (target 50 ms)"));
    }
    if failures.is_empty() {
        println!("all targets met");
    } else {
        println!("targets missed:");
        for f in &failures {
            println!("  {f}");
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn die(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("index bench: {what}: {e}");
    std::process::exit(1)
}

fn target_dir() -> PathBuf {
    if let Ok(t) = std::env::var("CARGO_TARGET_DIR") {
        return PathBuf::from(t);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

fn ensure_corpus(dir: &Path, size: u64) {
    let marker = dir.join(".complete");
    if marker.exists() {
        return;
    }
    let _ = std::fs::remove_dir_all(dir);
    let t = Instant::now();
    let g = gen::generate(dir, size, SEED).unwrap_or_else(|e| die("generating the corpus", e));
    std::fs::write(&marker, b"").unwrap_or_else(|e| die("marking the corpus", e));
    println!(
        "generated {} sessions ({:.0} MB) in {:.1} s",
        g.files.len(),
        g.bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
}

fn build_in_child(corpus: &Path, index: &Path) -> (f64, f64, u64) {
    let out = Command::new(
        std::env::current_exe().unwrap_or_else(|e| die("finding the bench binary", e)),
    )
    .env("AGENTLOG_BENCH_CHILD_BUILD", corpus)
    .env("AGENTLOG_BENCH_INDEX", index)
    .output()
    .unwrap_or_else(|e| die("running the build", e));
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        die("the build failed", String::from_utf8_lossy(&out.stderr));
    }
    let field = |k: &str| -> f64 {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let seconds = field("seconds=");
    if !seconds.is_finite() {
        die(
            "the build did not report its time",
            format!("{text}{}", String::from_utf8_lossy(&out.stderr)),
        );
    }
    (
        seconds,
        field("peak_kb=") / 1024.0,
        field("sessions=") as u64,
    )
}

fn child_build(corpus: &Path) {
    let index = std::env::var("AGENTLOG_BENCH_INDEX").unwrap_or_else(|e| die("index path", e));
    let env = DiscoverEnv::with_home(corpus);
    let t = Instant::now();
    let found = discover_all(&env, None);
    let (ix, report) = Index::rebuild(Path::new(&index), &found, &mut |_| {})
        .unwrap_or_else(|e| die("building the index", e));
    let took = t.elapsed().as_secs_f64();
    let peak = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .unwrap_or(f64::NAN);
    let sessions = ix.counts().map(|c| c.1).unwrap_or(0);
    println!(
        "seconds={took} peak_kb={peak} sessions={sessions} failed={}",
        report.failed
    );
}

/// Returns about `n` native lines of `agent` to append to a session.
fn entries_to_append(agent: &str, n: usize) -> Vec<u8> {
    let tmp = std::env::temp_dir().join(format!("agentlog-bench-append-{}", std::process::id()));
    let mut lines: Vec<String> = Vec::new();
    let mut k = 10_000;
    while lines.len() < n {
        let c = gen::conv(SEED + 99, k);
        k += 1;
        let path = gen::write_session(&tmp, agent, &c).unwrap_or_else(|e| die("writing", e));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        // Skip the session header of formats that have one.
        let skip = usize::from(agent != "claude");
        lines.extend(text.lines().skip(skip).map(String::from));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    lines.truncate(n);
    let mut out = lines.join("\n").into_bytes();
    out.push(b'\n');
    out
}

/// The 100 fixed queries and the rg arguments for the same words.
fn queries() -> Vec<(String, Vec<String>)> {
    let mut q: Vec<(String, Vec<String>)> = Vec::new();
    let word = |w: &str| {
        (
            w.to_string(),
            vec!["-F".to_string(), "-w".to_string(), w.to_string()],
        )
    };
    // Words of every frequency, from the most common down the list.
    for i in (0..words::PROSE.len())
        .step_by(words::PROSE.len() / 45)
        .take(45)
    {
        q.push(word(words::PROSE[i]));
    }
    for w in [
        "parse_config",
        "useEffect",
        "tokio",
        "retryWithBackoff",
        "HashMap",
        "pytest",
        "normalizePath",
        "decodeToken",
        "serde",
        "getElementById",
    ] {
        q.push(word(w));
    }
    // Phrases (commands and paths appear verbatim in tool inputs).
    for p in [
        "cargo test",
        "git status",
        "npm run build",
        "src/main.rs",
        "go test",
        "docker compose up",
        "git diff --stat",
        "pytest -x -q",
        "kubectl get pods",
        "terraform plan",
        "has been updated",
        "src/components/Button.tsx",
        "make check",
        "ls -la",
        "rg -n TODO src",
    ] {
        q.push((format!("\"{p}\""), vec!["-F".to_string(), p.to_string()]));
    }
    // Prefixes.
    for p in [
        "conf", "pars", "token", "serial", "migrat", "perm", "deploy", "bench", "valid",
        "compress", "sched", "replic", "auth", "encod", "memo",
    ] {
        q.push((format!("{p}*"), vec![format!(r"\b{p}\w*")]));
    }
    // Rare identifiers, found in a handful of entries (or none).
    for x in [
        0x1f3au32, 0x2b, 0x9c41, 0x777, 0x4e20, 0x123, 0x9999, 0x3a3a, 0x50, 0x8d2f, 0x61a8,
        0x1000, 0x2710, 0x4242, 0x7a12,
    ] {
        q.push(word(&format!("zq{x:x}")));
    }
    q.truncate(100);
    q
}

/// Returns the rg binary, installing it when missing and possible.
fn ripgrep() -> Option<PathBuf> {
    let find = || {
        Command::new("rg")
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|_| PathBuf::from("rg"))
    };
    if let Some(p) = find() {
        return Some(p);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/install-ripgrep.sh");
    let _ = Command::new("bash").arg(script).status();
    find()
}
