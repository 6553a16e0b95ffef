//! The team-server benchmark: whole `agentlog push` and `--db` commands
//! timed as a user runs them, against a PostgreSQL started for the run by
//! `scripts/postgres.sh` (Debian's server, on loopback), beside the peer a
//! team would otherwise run, agentsview (`sync`, then `pg push`), in the
//! same run.
//!
//! Figures: a cold push of the whole corpus against a cold `agentlog index`
//! of the same corpus (target: within 2x), a second push with nothing
//! changed, the push after one appended message (target: under 200 ms),
//! search on the server (p50 under 20 ms, p99 under 100 ms) beside the
//! same searches on the local index, and stats by day and by model (under
//! 200 ms). The machine's load is printed first and last.

use crate::e2e::{
    dir_bytes, ensure_corpus, home_for, ms, num_cpus, percentile, run, time_quick, uptime,
    with_home, Options,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The words searched on the server and locally.
const QUERIES: [&str; 10] = [
    "parser",
    "refactor",
    "timeout",
    "lifetime",
    "deadlock",
    "serialize",
    "webhook",
    "migration",
    "\"cargo test\"",
    "pars*",
];

/// A server started for the run, stopped (and its folder removed) when
/// dropped.
struct Server {
    script: PathBuf,
    dir: PathBuf,
    url: String,
}

impl Server {
    fn start(script: &Path, dir: &Path) -> anyhow::Result<Server> {
        let _ = Command::new("bash")
            .arg(script)
            .arg("stop")
            .arg(dir)
            .output();
        // Shared memory on huge pages where the machine allows, as for a
        // production server (see the script).
        let out = Command::new("bash")
            .arg(script)
            .arg("start")
            .arg(dir)
            .env("AGENTLOG_PG_HUGE_PAGES", "1")
            .output()?;
        let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || !url.starts_with("postgres://") {
            anyhow::bail!(
                "{} start failed: {}",
                script.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(Server {
            script: script.to_path_buf(),
            dir: dir.to_path_buf(),
            url,
        })
    }

    /// Creates the empty database `name`; returns its URL.
    fn database(&self, name: &str) -> anyhow::Result<String> {
        let mut c = postgres::Client::connect(&self.url, postgres::NoTls)?;
        c.batch_execute(&format!("CREATE DATABASE \"{name}\""))?;
        let (base, _) = self.url.rsplit_once('/').unwrap_or((&self.url, ""));
        Ok(format!("{base}/{name}"))
    }

    /// Says whether the server's shared memory is on huge pages.
    fn memory(&self) -> String {
        match std::fs::read_to_string(self.dir.join("hugepages"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
        {
            Some(mb) if mb > 0 => format!("shared memory on huge pages ({mb} MB)"),
            _ => {
                "shared memory on 4 kB pages (huge pages need root and vm.nr_hugepages)".to_string()
            }
        }
    }

    fn version(&self) -> String {
        postgres::Client::connect(&self.url, postgres::NoTls)
            .and_then(|mut c| c.query_one("SHOW server_version", &[]))
            .map(|r| r.get::<_, String>(0))
            .unwrap_or_else(|_| "?".into())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(&self.script)
            .arg("stop")
            .arg(&self.dir)
            .output();
    }
}

fn agentlog(o: &Options, home: &Path, args: &[&str]) -> Command {
    let mut c = crate::e2e::agentlog(o, home, args);
    c.env("AGENTLOG_MACHINE", "bench")
        .env("AGENTLOG_NO_BACKGROUND", "1");
    c
}

/// The longest a peer's cold push may run (seconds).
const PEER_LIMIT: u64 = 900;

fn agentsview(bin: &Path, home: &Path, url: &str, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(args);
    with_peer_env(c, home, url)
}

fn with_peer_env(mut c: Command, home: &Path, url: &str) -> Command {
    c.env("AGENTSVIEW_NO_DAEMON", "1")
        .env("AGENTSVIEW_PG_URL", format!("{url}?sslmode=disable"))
        .env("AGENTSVIEW_PG_MACHINE", "bench");
    with_home(&mut c, home);
    c
}

/// Appends one user message to the pi session `path` (continuing its last
/// entry), after giving the file its own copy (the corpus is hard-linked).
fn append_message(path: &Path, n: usize) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path)?;
    let last: serde_json::Value =
        serde_json::from_str(text.lines().last().unwrap_or("{}")).unwrap_or_default();
    std::fs::remove_file(path)?;
    std::fs::write(path, &text)?;
    let line = serde_json::json!({
        "type": "message",
        "id": format!("bench-append-{n}"),
        "parentId": last.get("id"),
        "timestamp": "2026-06-01T10:00:00.000Z",
        "message": {"role": "user", "content": format!("one more question, number {n}"), "timestamp": 1_780_308_000_000u64}
    });
    let mut f = std::fs::OpenOptions::new().append(true).open(path)?;
    writeln!(f, "{line}")?;
    Ok(())
}

/// Times agentsview's cold `sync` and `pg push` (the push stopped after
/// [`PEER_LIMIT`]) beside agentlog's `push_s`; returns false when its push
/// did not finish (it is then not timed further).
fn cold_peer(
    av: &Path,
    corpus: &Path,
    home: &Path,
    url: &str,
    push_s: f64,
) -> anyhow::Result<bool> {
    home_for(corpus, home)?;
    let sync = run(&mut agentsview(av, home, url, &["sync"]));
    let mut c = Command::new("timeout");
    c.arg(PEER_LIMIT.to_string()).arg(av).args(["pg", "push"]);
    let push = run(&mut with_peer_env(c, home, url));
    let total = sync.secs + push.secs;
    if push.secs >= PEER_LIMIT as f64 {
        println!(
            "cold: agentsview sync {:.1} s + pg push stopped after {PEER_LIMIT} s: over {total:.0} s; agentlog push is over {:.1}x faster (agentsview is not timed further)",
            sync.secs,
            total / push_s
        );
        return Ok(false);
    }
    println!(
        "cold: agentsview sync {:.1} s + pg push {:.1} s = {total:.1} s{}; agentlog push is {:.1}x faster",
        sync.secs,
        push.secs,
        if sync.ok && push.ok { "" } else { " (failed)" },
        total / push_s
    );
    Ok(sync.ok && push.ok)
}

/// Times `runs` runs of each command; returns the sorted wall times.
fn times(runs: usize, cmds: &mut dyn FnMut() -> Vec<Command>) -> (Vec<f64>, usize) {
    let mut v = Vec::new();
    let mut failed = 0;
    for _ in 0..runs {
        for mut c in cmds() {
            let (secs, ok, _) = time_quick(&mut c);
            if ok {
                v.push(secs);
            } else {
                failed += 1;
            }
        }
    }
    (v, failed)
}

/// Runs the benchmark with the server `postgres_script` starts (`runs`:
/// of each search and stats command; `appends`: messages appended, each
/// followed by a push) and prints its figures; returns the lines of
/// targets missed.
pub fn run_all(o: &Options, postgres_script: &Path) -> anyhow::Result<Vec<String>> {
    let mut missed = Vec::new();
    println!("== agentlog push benchmark, {} corpus", o.size_text);
    println!("machine: {} cores, {} (start)", num_cpus(), uptime());
    let corpus = ensure_corpus(&o.dir, &o.size_text, o.size)?;
    let mb = dir_bytes(&corpus) as f64 / 1e6;
    let work = o.dir.join(format!("{}-push", o.size_text));
    std::fs::create_dir_all(&work)?;
    let server = Server::start(postgres_script, &work.join("postgres"))?;
    println!(
        "server: PostgreSQL {} on loopback, started by {}; {}",
        server.version(),
        postgres_script.display(),
        server.memory()
    );
    let url = server.database("agentlog_bench")?;
    let home = work.join("agentlog");
    home_for(&corpus, &home)?;

    // Cold: the local index, then the push, of the same corpus.
    let t = run(&mut agentlog(o, &home, &["index"]));
    if !t.ok {
        anyhow::bail!("agentlog index failed: {}", t.stderr);
    }
    let index_s = t.secs;
    println!(
        "cold: agentlog index {index_s:.1} s ({:.1} MB/s)",
        mb / index_s
    );
    let t = run(&mut agentlog(o, &home, &["push", "--db", &url]));
    if !t.ok {
        anyhow::bail!("agentlog push failed: {}", t.stderr);
    }
    let push_s = t.secs;
    let ratio = push_s / index_s;
    println!(
        "cold: agentlog push {push_s:.1} s ({:.1} MB/s, redacting, peak {:.0} MB) = {ratio:.2}x the local index  [target: <= 2x]",
        mb / push_s,
        t.peak_mb
    );
    if ratio > 2.0 {
        missed.push(format!(
            "cold push {push_s:.1} s = {ratio:.2}x the local index (target 2x)"
        ));
    }
    let av_home = work.join("agentsview");
    let av_url = server.database("agentsview_bench")?;
    let av = match o
        .peers_bin
        .as_ref()
        .map(|b| b.join("agentsview"))
        .filter(|b| b.exists())
    {
        Some(av) => cold_peer(&av, &corpus, &av_home, &av_url, push_s)?.then_some(av),
        None => {
            match &o.peers_bin {
                Some(dir) => println!(
                    "cold: agentsview skipped (not in {}; scripts/install-bench-peers.sh installs it)",
                    dir.display()
                ),
                None => println!(
                    "cold: agentsview skipped (scripts/install-bench-peers.sh could not install it)"
                ),
            }
            None
        }
    };

    // A second push: nothing changed, nothing sent.
    let (mut again, _) = times(3, &mut || vec![agentlog(o, &home, &["push", "--db", &url])]);
    let mut av_again = Vec::new();
    if let Some(av) = &av {
        for _ in 0..3 {
            let t = Instant::now();
            let a = time_quick(&mut agentsview(av, &av_home, &av_url, &["sync"]));
            let b = time_quick(&mut agentsview(av, &av_home, &av_url, &["pg", "push"]));
            if a.1 && b.1 {
                av_again.push(t.elapsed().as_secs_f64());
            }
        }
    }
    println!(
        "nothing changed: agentlog push {}{}",
        ms(percentile(&mut again, 0.5)),
        if av_again.is_empty() {
            String::new()
        } else {
            format!(
                "; agentsview sync + pg push {}",
                ms(percentile(&mut av_again, 0.5))
            )
        }
    );

    // One appended message, then a push, `appends` times.
    let pi = agentlog_formats::discover::discover_all(
        &agentlog_formats::discover::DiscoverEnv::with_home(&home),
        Some(&["pi".to_string()]),
    );
    let Some(target) = pi.get(pi.len() / 2).map(|f| f.path.clone()) else {
        anyhow::bail!("the corpus has no pi session to append to");
    };
    let av_target = av_home.join(target.strip_prefix(&home)?);
    let mut inc = Vec::new();
    let mut av_inc = Vec::new();
    for n in 0..o.appends {
        append_message(&target, n)?;
        let (secs, ok, _) = time_quick(&mut agentlog(o, &home, &["push", "--db", &url]));
        if ok {
            inc.push(secs);
        }
        if let (Some(av), true) = (&av, n < 5) {
            append_message(&av_target, n)?;
            let t = Instant::now();
            let a = time_quick(&mut agentsview(av, &av_home, &av_url, &["sync"]));
            let b = time_quick(&mut agentsview(av, &av_home, &av_url, &["pg", "push"]));
            if a.1 && b.1 {
                av_inc.push(t.elapsed().as_secs_f64());
            }
        }
    }
    let (p50, max) = (percentile(&mut inc, 0.5), percentile(&mut inc, 1.0));
    println!(
        "one message appended, then push ({} rounds): agentlog p50 {}, max {}  [target: < 200 ms]{}",
        inc.len(),
        ms(p50),
        ms(max),
        if av_inc.is_empty() {
            String::new()
        } else {
            let a = percentile(&mut av_inc, 0.5);
            format!(
                "; agentsview sync + pg push p50 {} ({:.0}x agentlog)",
                ms(a),
                a / p50
            )
        }
    );
    if max > 0.2 {
        missed.push(format!("incremental push max {} (target 200 ms)", ms(max)));
    }

    // Search and stats on the server, and the same on the local index.
    let q = |db: Option<&str>| -> Vec<Command> {
        QUERIES
            .iter()
            .map(|w| {
                let mut a = vec!["search", w];
                if let Some(u) = db {
                    a.extend_from_slice(&["--db", u]);
                }
                agentlog(o, &home, &a)
            })
            .collect()
    };
    let _ = times(1, &mut || q(Some(&url)));
    let (mut server_s, failed) = times(o.runs, &mut || q(Some(&url)));
    let (mut local_s, _) = times(o.runs, &mut || q(None));
    let (sp50, sp99) = (
        percentile(&mut server_s, 0.5),
        percentile(&mut server_s, 0.99),
    );
    let (lp50, lp99) = (
        percentile(&mut local_s, 0.5),
        percentile(&mut local_s, 0.99),
    );
    println!(
        "search ({} queries x {} runs): on the server p50 {} p99 {}{}; on this machine p50 {} p99 {} ({:.1}x)  [targets on the server: p50 < 20 ms, p99 < 100 ms]",
        QUERIES.len(),
        o.runs,
        ms(sp50),
        ms(sp99),
        if failed > 0 {
            format!(" ({failed} failed)")
        } else {
            String::new()
        },
        ms(lp50),
        ms(lp99),
        sp50 / lp50
    );
    if sp50 > 0.02 {
        missed.push(format!("server search p50 {} (target 20 ms)", ms(sp50)));
    }
    if sp99 > 0.1 {
        missed.push(format!("server search p99 {} (target 100 ms)", ms(sp99)));
    }
    for by in ["day", "model"] {
        let st = |db: Option<&str>| {
            let mut a = vec!["stats", "--by", by];
            if let Some(u) = db {
                a.extend_from_slice(&["--db", u]);
            }
            vec![agentlog(o, &home, &a)]
        };
        let (mut s, _) = times(o.runs.min(10), &mut || st(Some(&url)));
        let (mut l, _) = times(o.runs.min(10), &mut || st(None));
        let (s50, smax) = (percentile(&mut s, 0.5), percentile(&mut s, 1.0));
        println!(
            "stats --by {by}: on the server p50 {} max {}; on this machine p50 {}  [target: < 200 ms]",
            ms(s50),
            ms(smax),
            ms(percentile(&mut l, 0.5))
        );
        if smax > 0.2 {
            missed.push(format!(
                "server stats by {by} max {} (target 200 ms)",
                ms(smax)
            ));
        }
    }
    println!("machine: {} (end)", uptime());
    drop(server);
    Ok(missed)
}
