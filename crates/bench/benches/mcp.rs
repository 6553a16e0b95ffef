//! `agentlog mcp` end to end over stdio (`cargo bench -p agentlog-bench
//! --bench mcp`; `AGENTLOG_BENCH_SIZE` picks the corpus, 1GB by default):
//! a generated corpus (`/var/tmp/agentlog-bench/mcp-corpus-<size>-seed11`,
//! made the first time as `agentlog-bench gen` makes it), indexed once, then one
//! `agentlog mcp` server speaking JSON-RPC over its standard input and
//! output, as an agent starts it. Every tool is called with varied
//! arguments (words, filters, sessions, paths, commands); each call is timed
//! from writing the request to reading the answer's line. Prints p50, p99
//! and max per tool against the target (p99 ≤ 50 ms at 1 GB), the answers'
//! sizes, and the machine's load first and last.
#![allow(missing_docs)]

use agentlog_bench::gen;
use agentlog_bench::words::{COMMANDS, FILES, PROJECTS};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// Calls of each tool (the first of each is a warm-up, not counted).
const CALLS: usize = 101;
const TARGET_P99_S: f64 = 0.050;
const SEED: u64 = 11;
const AGENTS: [&str; 4] = ["claude", "codex", "gemini", "pi"];
const BYS: [&str; 4] = ["day", "model", "project", "agent"];
const WORDS: [&str; 8] = [
    "parser",
    "refactor",
    "timeout",
    "lifetime",
    "deadlock",
    "serialize",
    "webhook",
    "migration",
];

fn die(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("mcp bench: {what}: {e}");
    std::process::exit(1)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn agentlog() -> PathBuf {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--locked", "-p", "agentlog"])
        .current_dir(root())
        .status()
        .unwrap_or_else(|e| die("cargo build", e));
    if !status.success() {
        die("cargo build", "failed");
    }
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    dir.join("release/agentlog")
}

/// The corpus, generated the first time as `agentlog-bench gen` makes it
/// (dated over the months before the day it was made, so that `since`
/// filters find sessions).
fn corpus(size_text: &str) -> PathBuf {
    let size = agentlog_bench::parse_size(size_text).unwrap_or_else(|| die("size", size_text));
    let dir =
        PathBuf::from("/var/tmp/agentlog-bench").join(format!("mcp-corpus-{size_text}-seed{SEED}"));
    if !dir.join(".done").exists() {
        let t = Instant::now();
        let _ = std::fs::remove_dir_all(&dir);
        let now = chrono::Utc::now().timestamp_millis();
        let g = gen::generate_with(&dir, size, SEED, &gen::GenOptions::recent(now))
            .unwrap_or_else(|e| die("generating", e));
        std::fs::write(dir.join(".done"), b"").unwrap_or_else(|e| die("writing .done", e));
        println!(
            "generated {} sessions, {:.0} MB in {:.1} s at {}",
            g.files.len(),
            g.bytes as f64 / 1e6,
            t.elapsed().as_secs_f64(),
            dir.display()
        );
    }
    dir
}

/// The command with the corpus as HOME and the index (and configuration)
/// in `work`, outside the corpus; no archive (its capture is measured by
/// scripts/bench-archive.sh).
fn cmd(bin: &Path, home: &Path, work: &Path) -> Command {
    let mut c = Command::new(bin);
    c.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("AGENTLOG_INDEX", work.join("index.sqlite"))
        .env("AGENTLOG_ARCHIVE", "off")
        .env("XDG_DATA_HOME", work.join("share"))
        .env("XDG_CONFIG_HOME", work.join("config"));
    c
}

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    fn start(mut c: Command) -> Client {
        let mut child = c
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| die("starting agentlog mcp", e));
        let stdin = child.stdin.take().unwrap_or_else(|| die("stdin", "none"));
        let stdout = BufReader::new(child.stdout.take().unwrap_or_else(|| die("stdout", "none")));
        let mut c = Client {
            child,
            stdin,
            stdout,
            next: 1,
        };
        c.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "agentlog-bench", "version": "1"}}),
        );
        c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn send(&mut self, v: &Value) {
        let mut line = v.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|_| self.stdin.flush())
            .unwrap_or_else(|e| die("writing a request", e));
    }

    /// Sends a request; returns its result and the answer's size.
    fn request(&mut self, method: &str, params: Value) -> (Value, usize) {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self
                .stdout
                .read_line(&mut line)
                .unwrap_or_else(|e| die("reading an answer", e));
            if n == 0 {
                die("reading an answer", "the server closed its output");
            }
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| die("an answer", e));
            if v["id"] == json!(id) {
                if let Some(e) = v.get("error") {
                    die(method, e);
                }
                return (v["result"].clone(), line.len());
            }
        }
    }

    /// Calls `tool`; returns the answer's JSON (the tool's text) and size.
    fn call(&mut self, tool: &str, args: Value) -> (Value, usize) {
        let (r, size) = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let text = r["content"][0]["text"].as_str().unwrap_or_default();
        if r["isError"] == json!(true) {
            die(tool, format!("{args}: {text}"));
        }
        (serde_json::from_str(text).unwrap_or(Value::Null), size)
    }
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    if !agentlog_bench::started_by_cargo_bench("mcp") {
        return;
    }
    let size = std::env::var("AGENTLOG_BENCH_SIZE").unwrap_or_else(|_| "1GB".into());
    println!("mcp bench: corpus {size}, load {} at start", load());
    let home = corpus(&size);
    let bin = agentlog();
    let work = PathBuf::from("/var/tmp/agentlog-bench").join(format!("mcp-{size}"));
    std::fs::create_dir_all(&work).unwrap_or_else(|e| die("work dir", e));
    let t = Instant::now();
    let st = cmd(&bin, &home, &work)
        .arg("index")
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|e| die("agentlog index", e));
    if !st.success() {
        die("agentlog index", st);
    }
    println!("index current after {:.1} s", t.elapsed().as_secs_f64());

    let mut c = Client::start(cmd(&bin, &home, &work));
    // Sessions to read: the newest of each page of the listing.
    let (listed, _) = c.call("list_sessions", json!({"limit": 100}));
    let ids: Vec<String> = listed["sessions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s["session_id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if ids.is_empty() {
        die("list_sessions", "no sessions listed");
    }
    type Args = Box<dyn Fn(usize) -> Value>;
    let ids2 = ids.clone();
    let ids3 = ids.clone();
    let ids4 = ids.clone();
    let tools: Vec<(&str, Args)> = vec![
        (
            "search",
            Box::new(|i| {
                let mut a = json!({"query": WORDS[i % WORDS.len()]});
                match i % 4 {
                    1 => a["agent"] = json!(AGENTS[i / 4 % AGENTS.len()]),
                    2 => a["since"] = json!("30d"),
                    3 => a["cursor"] = json!("10"),
                    _ => {}
                }
                a
            }),
        ),
        (
            "list_sessions",
            Box::new(|i| match i % 4 {
                0 => json!({}),
                1 => json!({"agent": AGENTS[i / 4 % AGENTS.len()]}),
                2 => json!({"project": PROJECTS[i % PROJECTS.len()], "order": "updated"}),
                _ => json!({"since": "7d", "cursor": "20"}),
            }),
        ),
        (
            "read_session",
            Box::new(
                move |i| json!({"session": &ids2[i % ids2.len()][..8], "tool_output": i % 2 == 0, "thinking": i % 3 == 0}),
            ),
        ),
        (
            "context",
            Box::new(move |i| json!({"session": ids3[i % ids3.len()]})),
        ),
        (
            "sessions_touching",
            Box::new(|i| {
                if i % 2 == 0 {
                    json!({"path": FILES[i / 2 % FILES.len()]})
                } else {
                    json!({"command": COMMANDS[i / 2 % COMMANDS.len()]})
                }
            }),
        ),
        (
            "stats",
            Box::new(|i| {
                let mut a = json!({"by": BYS[i % BYS.len()]});
                if i % 3 == 1 {
                    a["since"] = json!("30d");
                }
                a
            }),
        ),
        (
            "resume_command",
            Box::new(
                move |i| json!({"session": ids4[i % ids4.len()], "agent": AGENTS[i % AGENTS.len()]}),
            ),
        ),
    ];
    let mut missed = Vec::new();
    println!(
        "{:<18} {:>9} {:>9} {:>9} {:>12}",
        "tool", "p50", "p99", "max", "answer p50"
    );
    for (tool, args) in &tools {
        let mut times = Vec::with_capacity(CALLS);
        let mut sizes = Vec::with_capacity(CALLS);
        for i in 0..CALLS {
            let a = args(i);
            let t = Instant::now();
            let (_, size) = c.call(tool, a);
            let s = t.elapsed().as_secs_f64();
            if i > 0 {
                times.push(s);
                sizes.push(size);
            }
        }
        times.sort_by(f64::total_cmp);
        sizes.sort_unstable();
        let p99 = pct(&times, 0.99);
        println!(
            "{:<18} {:>6.1} ms {:>6.1} ms {:>6.1} ms {:>9} B",
            tool,
            pct(&times, 0.5) * 1e3,
            p99 * 1e3,
            times.last().copied().unwrap_or(f64::NAN) * 1e3,
            sizes.get(sizes.len() / 2).copied().unwrap_or(0)
        );
        if p99 > TARGET_P99_S {
            missed.push(format!("{tool}: p99 {:.1} ms > 50 ms", p99 * 1e3));
        }
    }
    drop(c.stdin);
    let _ = c.child.wait();
    println!("load {} at end", load());
    if missed.is_empty() {
        println!("every tool met p99 <= 50 ms");
    } else {
        println!("missed: {}", missed.join("; "));
    }
}
