//! Opening a pi session and building its context: agentlog's
//! `SessionManager` against the real pi `SessionManager` (npm
//! `@mariozechner/pi-coding-agent` 0.73.1, Node), on the same files in the
//! same run.
//!
//! Files: a generated session tree (deterministic, at least 200 MB and
//! 500,000 entries, with branches, compactions, labels and tool calls; kept
//! in `target/bench-data/` and reused) and pi's own `large-session.jsonl`
//! (version 1, so both sides migrate it; each run gets a fresh copy), and
//! the same file once migrated (version 3: what every later open costs).
//! Each side runs in its own process so its peak resident memory can be
//! read: agentlog re-runs this binary with `--child`, pi runs
//! `scripts/pi-peer.mjs bench`. The best of three runs is reported.
//!
//! pi rewrites a version 1 file as soon as it opens it (without fsync);
//! agentlog migrates it in memory and rewrites it (durably: fsync, rename,
//! directory fsync) before its first write. For that row the cost of
//! agentlog's open, context and first append (the rewrite, then one fsynced
//! line) is printed as well, on its own: pi's peer has no such step.
//!
//! On the generated tree the active path is about 520,000 entries long;
//! pi builds it with `Array.unshift`, which is quadratic in the path
//! length, so its context step costs more than its open (measured here:
//! about 9 s to open, 14 s for the context).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const PI_VERSION: &str = "0.73.1";
const RUNS: usize = 3;
const MIN_BYTES: u64 = 200 * 1024 * 1024;
const MIN_ENTRIES: u64 = 500_000;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(
            Path::new(&args[i + 1]),
            args.iter().any(|a| a == "--append"),
        );
        return;
    }
    if !agentlog_bench::started_by_cargo_bench("pi_open") {
        return;
    }
    let data = repo().join("target/bench-data");
    std::fs::create_dir_all(&data).unwrap();
    let generated = data.join("pi-tree-gen1.jsonl");
    let (bytes, entries) = ensure_generated(&generated);
    let large = repo().join("../shared/fixtures/seeds/pi-mono/large-session.jsonl");
    let peer = peer();
    if peer.is_none() {
        println!("pi_open: the pi peer (npm @mariozechner/pi-coding-agent@{PI_VERSION}) is unavailable; printing agentlog's figures only");
    }
    // The same session after migration: what every later open costs.
    let large_v3 = data.join("pi-large-session-v3.jsonl");
    let v1 = std::fs::read(&large).unwrap();
    std::fs::write(
        &large_v3,
        agentlog_store::pi::migrate::migrate_bytes(&v1, 1),
    )
    .unwrap();
    let cases = [
        (
            format!(
                "generated tree ({} MB, {entries} entries)",
                bytes / 1_000_000
            ),
            generated.clone(),
            false,
        ),
        (
            "pi large-session.jsonl (v1, migrated on open)".to_string(),
            large,
            true,
        ),
        (
            "pi large-session.jsonl after migration (v3)".to_string(),
            large_v3,
            false,
        ),
    ];
    for (name, file, copy) in cases {
        println!("pi_open: {name}");
        let ours = best_of(&file, copy, |f| run_ours(f, false));
        println!(
            "  agentlog:   open+context              {:>10.1} ms   peak RSS {:>6} MiB   ({} context messages)",
            ours.ms,
            ours.rss_kib / 1024,
            ours.messages
        );
        if copy {
            // A migrated file: what deferring the rewrite moves to the
            // first append.
            let first = best_of(&file, copy, |f| run_ours(f, true));
            println!(
                "  agentlog:   open+context+first append {:>10.1} ms   peak RSS {:>6} MiB   (rewrite and append fsynced)",
                first.ms,
                first.rss_kib / 1024,
            );
        }
        if let Some(module) = &peer {
            let theirs = best_of(&file, copy, |f| run_pi(module, f));
            println!(
                "  pi {PI_VERSION}:  open+context              {:>10.1} ms   peak RSS {:>6} MiB   ({} context messages)",
                theirs.ms,
                theirs.rss_kib / 1024,
                theirs.messages
            );
            println!(
                "  ratio:       {:.1}x faster, {:.2}x pi's peak memory{}",
                theirs.ms / ours.ms,
                ours.rss_kib as f64 / theirs.rss_kib as f64,
                if theirs.messages == ours.messages {
                    ""
                } else {
                    "   (CONTEXT SIZES DIFFER)"
                }
            );
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Run {
    ms: f64,
    rss_kib: u64,
    messages: u64,
}

/// Runs `f` on `file` (on a fresh copy when `copy`) three times; returns
/// the fastest run and the highest peak memory.
fn best_of(file: &Path, copy: bool, f: impl Fn(&Path) -> Run) -> Run {
    let tmp = tempfile_dir();
    let mut best: Option<Run> = None;
    for i in 0..RUNS {
        let target = if copy {
            let t = tmp.join(format!("copy-{i}.jsonl"));
            std::fs::copy(file, &t).unwrap();
            t
        } else {
            file.to_path_buf()
        };
        let r = f(&target);
        best = Some(match best {
            None => r,
            Some(b) => Run {
                ms: b.ms.min(r.ms),
                rss_kib: b.rss_kib.max(r.rss_kib),
                messages: r.messages,
            },
        });
    }
    let _ = std::fs::remove_dir_all(&tmp);
    best.unwrap()
}

fn tempfile_dir() -> PathBuf {
    tempfile_dir_named("tmp")
}

fn tempfile_dir_named(name: &str) -> PathBuf {
    let d = repo().join(format!("target/bench-data/{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn parse_run(out: &[u8]) -> Run {
    let v: Value = serde_json::from_slice(out)
        .unwrap_or_else(|e| panic!("bad child output ({e}): {}", String::from_utf8_lossy(out)));
    Run {
        ms: v["ms"].as_f64().unwrap(),
        rss_kib: v["maxRssKiB"].as_u64().unwrap(),
        messages: v["messages"].as_u64().unwrap(),
    }
}

fn run_ours(file: &Path, append: bool) -> Run {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.arg("--child").arg(file);
    if append {
        cmd.arg("--append");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_run(&out.stdout)
}

fn run_pi(module: &Path, file: &Path) -> Run {
    let sandbox = tempfile_dir_named("pi-agent");
    let out = Command::new("node")
        .arg("--max-old-space-size=16384")
        .arg(repo().join("scripts/pi-peer.mjs"))
        .arg(module)
        .arg("bench")
        .arg(file)
        .env("PI_CODING_AGENT_DIR", sandbox.join("agent"))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&sandbox);
    assert!(
        out.status.success(),
        "pi peer: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_run(&out.stdout)
}

/// The measured side of agentlog: open, build the context (and with
/// `append`, append one message), report.
fn child(file: &Path, append: bool) {
    let t0 = Instant::now();
    let mut sm = agentlog_store::pi::SessionManager::open(file, None).unwrap();
    let ctx = sm.build_session_context();
    if append {
        sm.append_message_value(
            serde_json::json!({"role":"user","content":"one more","timestamp":1}),
        )
        .unwrap();
    }
    let ms = t0.elapsed().as_secs_f64() * 1000.0;
    let messages = ctx.messages.len();
    let rss = peak_rss_kib();
    drop(ctx);
    drop(sm);
    println!("{{\"ms\":{ms},\"messages\":{messages},\"maxRssKiB\":{rss}}}");
}

/// The process's peak resident set size (`VmHWM`), in KiB.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

/// Returns the path of pi's session-manager module, installed once by
/// `scripts/install-pi-peer.sh`; `None` (with its reason on stderr) when
/// that is not possible.
fn peer() -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(repo().join("scripts/install-pi-peer.sh"))
        .arg(PI_VERSION)
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !path.trim().is_empty()).then(|| PathBuf::from(path.trim()))
}

// ----- the generated session ---------------------------------------------

/// Returns the size and entry count of the generated file, writing it
/// first when it is missing or too small.
fn ensure_generated(path: &Path) -> (u64, u64) {
    if let Ok(m) = std::fs::metadata(path) {
        if m.len() >= MIN_BYTES {
            let n = count_lines(path) - 1;
            if n >= MIN_ENTRIES {
                return (m.len(), n);
            }
        }
    }
    println!("pi_open: generating {} (once)", path.display());
    let tmp = path.with_extension("partial");
    let (bytes, n) = Generator::new().write(&tmp);
    std::fs::rename(&tmp, path).unwrap();
    (bytes, n)
}

/// Counts the lines of a file without holding it in memory (this
/// process's memory is not measured, but keeps the machine quiet).
fn count_lines(path: &Path) -> u64 {
    use std::io::Read;
    let mut f = std::fs::File::open(path).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf).unwrap();
        if k == 0 {
            return n;
        }
        n += buf[..k].iter().filter(|&&b| b == b'\n').count() as u64;
    }
}

const WORDS: &[&str] = &[
    "the",
    "session",
    "tree",
    "branch",
    "parser",
    "file",
    "line",
    "error",
    "value",
    "compile",
    "test",
    "fix",
    "module",
    "function",
    "return",
    "struct",
    "field",
    "index",
    "reader",
    "writer",
    "append",
    "lock",
    "context",
    "summary",
    "model",
    "token",
    "cache",
    "config",
    "path",
    "search",
    "result",
    "output",
    "input",
    "crate",
    "workspace",
    "build",
    "check",
    "memory",
    "fast",
    "stream",
    "entry",
    "label",
    "leaf",
    "root",
    "child",
    "parent",
    "compaction",
    "migrate",
    "version",
];

/// A deterministic generator (xorshift) of a long branching pi session.
struct Generator {
    state: u64,
    n: u64,
    /// Ids of the current branch, root first (the tail is enough).
    chain: Vec<String>,
    out: Vec<u8>,
    millis: i64,
    /// Bytes written so far.
    bytes: u64,
}

impl Generator {
    fn new() -> Generator {
        Generator {
            state: 0x9E37_79B9_7F4A_7C15,
            n: 0,
            chain: Vec::new(),
            out: Vec::with_capacity(1 << 20),
            millis: 1_760_000_000_000,
            bytes: 0,
        }
    }

    fn next(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }

    fn text(&mut self, bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + 16);
        while s.len() < bytes {
            let w = WORDS[(self.next() % WORDS.len() as u64) as usize];
            s.push_str(w);
            s.push_str(if self.next().is_multiple_of(17) {
                "\\n"
            } else {
                " "
            });
        }
        s
    }

    fn ts(&mut self) -> String {
        self.millis += 1000 + (self.next() % 5000) as i64;
        chrono::DateTime::from_timestamp_millis(self.millis)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    }

    /// Writes one entry below the current leaf; `body` is the rest of the
    /// record after the common keys.
    fn entry(
        &mut self,
        file: &mut std::io::BufWriter<std::fs::File>,
        ty: &str,
        body: &str,
    ) -> String {
        self.n += 1;
        let id = format!("{:08x}", (self.n as u32).wrapping_mul(2_654_435_761));
        let parent = match self.chain.last() {
            Some(p) => format!("\"{p}\""),
            None => "null".into(),
        };
        let ts = self.ts();
        self.out.clear();
        write!(
            self.out,
            "{{\"type\":\"{ty}\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"{ts}\""
        )
        .unwrap();
        if !body.is_empty() {
            self.out.push(b',');
            self.out.extend_from_slice(body.as_bytes());
        }
        self.out.extend_from_slice(b"}\n");
        file.write_all(&self.out).unwrap();
        self.bytes += self.out.len() as u64;
        self.chain.push(id.clone());
        if self.chain.len() > 4096 {
            self.chain.drain(..2048);
        }
        id
    }

    fn write(mut self, path: &Path) -> (u64, u64) {
        let f = std::fs::File::create(path).unwrap();
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        let header = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"0199a000-0000-7000-8000-000000000001\",\"timestamp\":\"{}\",\"cwd\":\"/work/bench\"}}\n",
            self.ts()
        );
        w.write_all(header.as_bytes()).unwrap();
        self.bytes = header.len() as u64;
        let mut turn = 0u64;
        while self.bytes < MIN_BYTES + MIN_BYTES / 10 || self.n < MIN_ENTRIES + MIN_ENTRIES / 10 {
            turn += 1;
            let ms = self.millis;
            let t = {
                let n = self.range(60, 300) as usize;
                self.text(n)
            };
            self.entry(
                &mut w,
                "message",
                &format!(
                    "\"message\":{{\"role\":\"user\",\"content\":\"{t}\",\"timestamp\":{ms}}}"
                ),
            );
            let think = {
                let n = self.range(40, 200) as usize;
                self.text(n)
            };
            let call = format!("call_{turn}");
            let path_arg = format!("src/{}.rs", WORDS[(turn % WORDS.len() as u64) as usize]);
            let usage = "\"usage\":{\"input\":1200,\"output\":300,\"cacheRead\":5000,\"cacheWrite\":0,\"totalTokens\":6500,\"cost\":{\"input\":0.0036,\"output\":0.0045,\"cacheRead\":0.0015,\"cacheWrite\":0,\"total\":0.0096}}";
            self.entry(&mut w, "message", &format!(
                "\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"thinking\",\"thinking\":\"{think}\",\"thinkingSignature\":\"sig{turn}\"}},{{\"type\":\"toolCall\",\"id\":\"{call}\",\"name\":\"read\",\"arguments\":{{\"path\":\"{path_arg}\"}}}}],\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\",{usage},\"stopReason\":\"toolUse\",\"timestamp\":{ms}}}"
            ));
            let result = {
                let n = self.range(100, 900) as usize;
                self.text(n)
            };
            self.entry(&mut w, "message", &format!(
                "\"message\":{{\"role\":\"toolResult\",\"toolCallId\":\"{call}\",\"toolName\":\"read\",\"content\":[{{\"type\":\"text\",\"text\":\"{result}\"}}],\"isError\":false,\"timestamp\":{ms}}}"
            ));
            let answer = {
                let n = self.range(50, 400) as usize;
                self.text(n)
            };
            self.entry(&mut w, "message", &format!(
                "\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{answer}\"}}],\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\",{usage},\"stopReason\":\"stop\",\"timestamp\":{ms}}}"
            ));
            if turn.is_multiple_of(7) {
                let level = ["low", "medium", "high"][(turn % 3) as usize];
                self.entry(
                    &mut w,
                    "thinking_level_change",
                    &format!("\"thinkingLevel\":\"{level}\""),
                );
            }
            if turn.is_multiple_of(53) {
                self.entry(
                    &mut w,
                    "model_change",
                    "\"provider\":\"anthropic\",\"modelId\":\"claude-sonnet-4-5\"",
                );
            }
            if turn.is_multiple_of(29) {
                let hi = 30.min(self.chain.len() as u64);
                let k = self.range(1, hi) as usize;
                let target = self.chain[self.chain.len() - k].clone();
                self.entry(
                    &mut w,
                    "label",
                    &format!("\"targetId\":\"{target}\",\"label\":\"mark-{turn}\""),
                );
            }
            if turn.is_multiple_of(41) {
                self.entry(
                    &mut w,
                    "custom",
                    &format!("\"customType\":\"bench.state\",\"data\":{{\"turn\":{turn}}}"),
                );
            }
            if turn.is_multiple_of(97) && self.chain.len() > 60 {
                let kept = self.chain[self.chain.len() - 40].clone();
                let summary = self.text(800);
                self.entry(
                    &mut w,
                    "compaction",
                    &format!(
                    "\"summary\":\"{summary}\",\"firstKeptEntryId\":\"{kept}\",\"tokensBefore\":{}",
                    100_000 + turn
                ),
                );
            }
            if turn.is_multiple_of(61) && self.chain.len() > 30 {
                // Go back a few entries and continue there: a branch.
                let back = self.range(4, 24) as usize;
                let from = self.chain[self.chain.len() - 1 - back].clone();
                self.chain.truncate(self.chain.len() - back);
                if turn.is_multiple_of(2) {
                    let s = self.text(200);
                    self.entry(
                        &mut w,
                        "branch_summary",
                        &format!("\"fromId\":\"{from}\",\"summary\":\"{s}\""),
                    );
                }
            }
        }
        w.flush().unwrap();
        let len = std::fs::metadata(path).unwrap().len();
        (len, self.n)
    }
}
