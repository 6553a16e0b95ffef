//! The web viewer and the HTML export, timed as a user runs them
//! (`cargo bench -p agentlog-bench --bench web`):
//!
//! 1. `agentlog export --all --to html` of a 500-session Claude corpus
//!    (median of five runs, with and without redaction)
//!    against `claude-code-log DIR -f html` (1.7.0, installed by
//!    scripts/install-claude-code-log.sh) on copies of the same files;
//! 2. the first page of the session list of `agentlog serve` over a
//!    catalog of 100,000 sessions (request time over loopback, an upper
//!    bound of the server time);
//! 3. the first screen of a 100 MB session (the first request, which reads
//!    the file, median of five new servers, and the size of the page it
//!    sends): Claude Code's, then the same conversation as Codex, pi and
//!    Gemini CLI write it.
//!
//! Prints figures, ratios, the machine's load and its pace (a fixed task
//! timed before and after: the same machine is at times twice as slow).
#![allow(missing_docs)]

use agentlog_bench::children_cpu;
use agentlog_bench::gen::{self, Conv};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Rounds of agentlog's export (with and without redaction).
const EXPORT_ROUNDS: usize = 9;

/// New servers asked for a 100 MB session's first screen, for a median.
const FIRST_SCREENS: usize = 5;

fn die(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("web bench: {what}: {e}");
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
    root().join("target/release/agentlog")
}

fn cmd(bin: &Path, home: &Path) -> Command {
    let mut c = Command::new(bin);
    c.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CONFIG_HOME", home.join(".config"));
    c
}

fn timed(c: &mut Command, what: &str) -> f64 {
    timed_cpu(c, what).0
}

/// Runs a command; returns its wall seconds and CPU seconds (user and
/// system, its threads together).
fn timed_cpu(c: &mut Command, what: &str) -> (f64, f64) {
    let cpu = children_cpu();
    let t = Instant::now();
    let out = c.output().unwrap_or_else(|e| die(what, e));
    if !out.status.success() {
        die(what, String::from_utf8_lossy(&out.stderr));
    }
    (t.elapsed().as_secs_f64(), children_cpu() - cpu)
}

fn dir_size(p: &Path) -> u64 {
    let mut n = 0;
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let path = e.path();
            if path.is_dir() {
                n += dir_size(&path);
            } else if let Ok(m) = e.metadata() {
                n += m.len();
            }
        }
    }
    n
}

fn copy_dir(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap_or_else(|e| die("cp", e));
    if !status.success() {
        die("cp", "failed");
    }
}

fn tiny(c: Conv) -> Conv {
    let mut c = c;
    c.turns.truncate(1);
    for t in &mut c.turns {
        t.steps.clear();
        t.thinking = None;
    }
    c
}

struct Server(std::process::Child, u16);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(bin: &Path, home: &Path) -> Server {
    let mut child = cmd(bin, home)
        .args(["serve", "--port", "0", "--refresh", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| die("serve", e));
    let mut lines = std::io::BufReader::new(
        child
            .stdout
            .take()
            .unwrap_or_else(|| die("serve", "no stdout")),
    )
    .lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    let port = first
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| die("serve", format!("no port in {first:?}")));
    Server(child, port)
}

/// Returns the seconds a GET takes and the size of the response.
fn get(port: u16, path: &str) -> (f64, usize) {
    let (secs, out) = fetch(port, path);
    (secs, out.len())
}

/// Returns the seconds a GET of session page `path` takes, how the page
/// was read (the description of its `Server-Timing` header) and the size
/// of the response.
fn read_how(port: u16, path: &str) -> (f64, String, usize) {
    let (secs, out) = fetch(port, path);
    let head = String::from_utf8_lossy(&out[..out.len().min(4096)]).to_ascii_lowercase();
    let how = head
        .split("server-timing: read;desc=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("?")
        .to_string();
    (secs, how, out.len())
}

/// Returns the seconds a GET takes and the response.
fn fetch(port: u16, path: &str) -> (f64, Vec<u8>) {
    let t = Instant::now();
    let mut s =
        std::net::TcpStream::connect(("127.0.0.1", port)).unwrap_or_else(|e| die("connect", e));
    let _ = write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    );
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let secs = t.elapsed().as_secs_f64();
    if !out.starts_with(b"HTTP/1.1 200") {
        die(
            "GET",
            format!(
                "{path}: {}",
                String::from_utf8_lossy(&out[..out.len().min(200)])
            ),
        );
    }
    (secs, out)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"/._-".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn main() {
    if !agentlog_bench::started_by_cargo_bench("web") {
        return;
    }
    let tmp = std::env::temp_dir().join(format!("agentlog-bench-web-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap_or_else(|e| die("tmp", e));
    let bin = agentlog();
    println!(
        "== agentlog web benchmark (load before: {}; pace {:.0} ms: a fixed task, see agentlog_bench::pace_ms)",
        load(),
        agentlog_bench::pace_ms()
    );

    // 1. HTML export against claude-code-log.
    let home = tmp.join("export-home");
    let mut bytes = 0;
    for n in 0..500 {
        let p = gen::write_session(&home, "claude", &gen::conv(21, n))
            .unwrap_or_else(|e| die("gen", e));
        bytes += std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
    }
    println!("corpus: 500 Claude sessions, {:.1} MB", bytes as f64 / 1e6);
    let peer_home = tmp.join("peer-home");
    std::fs::create_dir_all(&peer_home).unwrap_or_else(|e| die("mkdir", e));
    copy_dir(&home.join(".claude"), &peer_home.join(".claude"));
    let index_s = timed(cmd(&bin, &home).arg("index"), "agentlog index");
    // Rounds with and without redaction in turn, each into a new folder;
    // the medians are compared, of wall time and of CPU time (the export
    // writes and syncs 47 MB, so its wall time moves by a fifth between
    // runs; its CPU time, two threads together, moves less).
    let out = tmp.join("html");
    let out2 = tmp.join("html-raw");
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..EXPORT_ROUNDS {
        let _ = std::fs::remove_dir_all(&out);
        with.push(timed_cpu(
            cmd(&bin, &home)
                .args(["export", "--all", "--to", "html", "-o"])
                .arg(&out),
            "agentlog export",
        ));
        let _ = std::fs::remove_dir_all(&out2);
        without.push(timed_cpu(
            cmd(&bin, &home)
                .args(["export", "--all", "--to", "html", "--no-redact", "-o"])
                .arg(&out2),
            "agentlog export --no-redact",
        ));
    }
    let export_s = median(with.iter().map(|r| r.0).collect());
    let raw_s = median(without.iter().map(|r| r.0).collect());
    let export_cpu = median(with.iter().map(|r| r.1).collect());
    let raw_cpu = median(without.iter().map(|r| r.1).collect());
    println!(
        "agentlog index (cold): {index_s:.2} s; export --all --to html (median of {EXPORT_ROUNDS}): {export_s:.2} s, {export_cpu:.2} s CPU ({:.0} MB written), without redaction {raw_s:.2} s, {raw_cpu:.2} s CPU (redaction costs {:.0}% wall, {:.0}% CPU)",
        dir_size(&out) as f64 / 1e6,
        (export_s / raw_s - 1.0) * 100.0,
        (export_cpu / raw_cpu - 1.0) * 100.0
    );
    let ccl = Command::new("bash")
        .arg(root().join("scripts/install-claude-code-log.sh"))
        .output();
    match ccl {
        Ok(o) if o.status.success() => {
            let peer = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
            let t = Instant::now();
            // Every project under ~/.claude/projects, one page per session
            // and an index (given the projects folder itself, it looks for
            // transcripts directly in it and finds none).
            let st = Command::new(&peer)
                .args(["--all-projects", "-f", "html"])
                .env("HOME", &peer_home)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let peer_s = t.elapsed().as_secs_f64();
            match st {
                Ok(s) if s.success() => println!(
                    "claude-code-log 1.7.0 -f html: {peer_s:.2} s ({:.0} MB of html)\n  ratio: agentlog export is {:.1}x faster (with its cold index: {:.1}x) (target >= 20x)",
                    {
                        let mut n = 0u64;
                        for e in walk(&peer_home.join(".claude/projects")) {
                            if e.extension().is_some_and(|x| x == "html") {
                                n += std::fs::metadata(&e).map(|m| m.len()).unwrap_or(0);
                            }
                        }
                        n as f64 / 1e6
                    },
                    peer_s / export_s,
                    peer_s / (export_s + index_s)
                ),
                other => println!("claude-code-log failed: {other:?}; comparison skipped"),
            }
        }
        Ok(o) => println!(
            "claude-code-log is not available ({}); comparison skipped",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => println!("claude-code-log is not available ({e}); comparison skipped"),
    }

    // 2. The list of 100,000 sessions.
    let big = tmp.join("list-home");
    let t = Instant::now();
    for n in 0..100_000 {
        gen::write_session(&big, "claude", &tiny(gen::conv(5, n)))
            .unwrap_or_else(|e| die("gen", e));
    }
    println!(
        "generated 100,000 small Claude sessions in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let index_s = timed(cmd(&bin, &big).arg("index"), "agentlog index");
    println!("indexed them in {index_s:.1} s (load {})", load());
    {
        let s = serve(&bin, &big);
        let _ = get(s.1, "/");
        let first = median((0..15).map(|_| get(s.1, "/").0).collect());
        let deep = median((0..15).map(|_| get(s.1, "/?page=1000").0).collect());
        // Filtered by agent and part of the project path and sorted by
        // messages: a project no session has, and one every session has
        // (all of them then sorted to find the first page).
        let filtered = |project: &str| {
            let url = format!("/?agent=claude&project={project}&sort=messages");
            median((0..15).map(|_| get(s.1, &url).0).collect())
        };
        let (none, all) = (filtered("api"), filtered("src"));
        println!(
            "session list of 100,000: first page {:.1} ms, page 1,000 {:.1} ms, filtered and sorted {:.1} ms (no match) and {:.1} ms (100,000 matches) (median of 15 requests, round trip; target < 100 ms)",
            first * 1e3,
            deep * 1e3,
            none * 1e3,
            all * 1e3
        );
    }

    // 3. A 100 MB session of each agent the generator writes in one file.
    for agent in ["claude", "codex", "pi", "gemini"] {
        first_screen(&bin, &tmp.join(format!("huge-{agent}")), agent);
    }
    println!(
        "load after: {}; pace {:.0} ms",
        load(),
        agentlog_bench::pace_ms()
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Writes a session of `agent` of at least 100 MB under `home`, indexes it
/// and prints the first request of its page on a new `serve`.
fn first_screen(bin: &Path, home: &Path, agent: &str) {
    let mut c = gen::conv(9, 0);
    let mut n = 1;
    let path = loop {
        let p = gen::write_session(home, agent, &c).unwrap_or_else(|e| die("gen", e));
        let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
        if len >= 100_000_000 {
            break p;
        }
        let _ = std::fs::remove_file(&p);
        // Turns enough for 100 MB at this size per turn (a little over).
        let per_turn = (len / c.turns.len().max(1) as u64).max(1);
        let target = c.turns.len() + ((100_000_000 - len) / per_turn) as usize + 1;
        while c.turns.len() < target {
            let more = gen::conv(9, n);
            n += 1;
            c.turns.extend(more.turns);
        }
        c.turns.truncate(target);
    };
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    timed(cmd(bin, home).arg("index"), "agentlog index");
    let p = enc(&path.to_string_lossy());
    let url = format!("/session?p={p}");
    // The first request of a new `serve`: one such request varies by a
    // third from run to run on this machine, so a median of FIRST_SCREENS,
    // each on a new server. The index keeps the file's shape, so the page
    // is read from the file's first lines; the same 100 entries asked of a
    // new server as the next page would be (`/entries`) read the whole
    // file, as the first screen did before and does for a file changed
    // since the index read it.
    let mut colds = Vec::new();
    let mut hows = std::collections::BTreeSet::new();
    let mut warm = Vec::new();
    let mut wholes = Vec::new();
    let mut body = 0;
    for _ in 0..FIRST_SCREENS {
        let s = serve(bin, home);
        let (cold, how, size) = read_how(s.1, &url);
        colds.push(cold);
        hows.insert(how);
        body = size;
        warm.extend((0..3).map(|_| get(s.1, &url).0));
        drop(s);
        let s = serve(bin, home);
        wholes.push(get(s.1, &format!("/entries?p={p}&from=0&to=100")).0);
    }
    colds.sort_by(f64::total_cmp);
    let (first, whole) = (median(colds.clone()), median(wholes));
    println!(
        "{:.0} MB {agent} session: first screen {:.2} s on the first request (read from: {}; median of {FIRST_SCREENS} new servers, {:.2}–{:.2} s), {:.3} s after; page {:.0} KB (100 entries; the rest is fetched as the reader scrolls) (target < 1 s); the same entries from the whole file {:.2} s ({:.1}x)",
        size as f64 / 1e6,
        first,
        hows.into_iter().collect::<Vec<_>>().join(", "),
        colds[0],
        colds[colds.len() - 1],
        median(warm),
        body as f64 / 1e3,
        whole,
        whole / first
    );
    let _ = std::fs::remove_dir_all(home);
}

fn walk(p: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let path = e.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}
