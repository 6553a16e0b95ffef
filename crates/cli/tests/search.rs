#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `agentlog index`, `search` and `stats` in a temporary HOME.

mod common;

use common::{fixtures, TestEnv};
use serde_json::Value;

/// A HOME with one real Claude Code session and a generated corpus of every
/// agent.
fn home_with_sessions() -> TestEnv {
    let env = TestEnv::new();
    let src = fixtures()
        .join("native/claude/ccv-sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    env.write(
        ".claude/projects/-path-to-Demo/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        &std::fs::read(src).unwrap(),
    );
    agentlog_bench::gen::generate(env.home(), 1_000_000, 3).unwrap();
    env
}

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[test]
fn index_then_search_and_stats() {
    let env = home_with_sessions();
    let r = env.run(&["index", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v = json(&r.stdout);
    let sessions = v["sessions"].as_u64().unwrap();
    assert!(sessions > 5, "{v}");
    assert_eq!(v["update"]["read_full"].as_u64(), Some(sessions));
    assert!(env
        .home()
        .join(".local/share/agentlog/index.sqlite")
        .exists());

    // A second run reads nothing.
    let v = json(&env.run(&["index", "--json"]).stdout);
    assert_eq!(v["update"]["unchanged"].as_u64(), Some(sessions));
    assert_eq!(v["update"]["read_full"].as_u64(), Some(0));

    // Search: a phrase from the real session, with its ids and a marked
    // snippet.
    let r = env.run(&[
        "search",
        "\"CLAUDE.md file\"",
        "--agent",
        "claude",
        "--json",
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let hits = json(&r.stdout);
    let first = &hits[0];
    assert_eq!(first["session_id"], "1af7fc5e-8455-4414-9ccd-011d40f70b2a");
    assert!(first["entry_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(
        first["snippet"]
            .as_str()
            .unwrap()
            .contains("«CLAUDE.md file»"),
        "{first}"
    );
    assert_eq!(first["project"], "/path/to/Demo");

    // Text output names the session and the entry to open.
    let r = env.run(&["search", "CLAUDE.md", "--agent", "claude", "--limit", "1"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("1af7fc5e-8455-4414-9ccd-011d40f70b2a --at "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("«CLAUDE.md»"), "{}", r.stdout);
    // With more matches than the limit, the total is said: as many as the
    // JSON of every hit holds.
    let every = json(
        &env.run(&[
            "search",
            "CLAUDE.md",
            "--agent",
            "claude",
            "--limit",
            "1000",
            "--json",
        ])
        .stdout,
    );
    let n = every.as_array().unwrap().len();
    assert!(n > 1, "{every}");
    assert!(
        r.stdout
            .contains(&format!("showing the best 1 of {n} hits")),
        "{}",
        r.stdout
    );

    // No match: exit 1 and says so.
    let r = env.run(&["search", "zzqqxxnotaword"]);
    assert_eq!(r.status, 1);
    assert!(r.stdout.contains("no matches"));

    // Stats by model and by agent add up.
    let r = env.run(&["stats", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let by_model = json(&r.stdout);
    let total = by_model["total"]["total"].as_u64().unwrap();
    let sum: u64 = by_model["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["total"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, total);
    assert!(by_model["rows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["key"] == "claude-sonnet-4-20250514"));
    let by_agent = json(&env.run(&["stats", "--by", "agent", "--json"]).stdout);
    assert_eq!(by_agent["total"]["total"].as_u64(), Some(total));
    let r = env.run(&["stats", "--by", "day"]);
    assert_eq!(r.status, 0);
    assert!(r.stdout.starts_with("day "), "{}", r.stdout);
}

#[test]
fn search_refreshes_the_index_and_honours_index_path() {
    let env = home_with_sessions();
    let ix = env.home().join("elsewhere/ix.sqlite");
    let ix_arg = ix.to_str().unwrap();
    // No index yet: search builds it.
    let r = env.run(&["search", "CLAUDE.md", "--index", ix_arg, "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(ix.exists());
    // A new session is picked up by the next search without `index`.
    env.write(
        ".claude/projects/-srv-new/0000aaaa-1111-4222-8333-444455556666.jsonl",
        br#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"where does the frobnicator live"},"uuid":"u-1","timestamp":"2025-09-03T00:47:19.293Z","cwd":"/srv/new","sessionId":"0000aaaa-1111-4222-8333-444455556666"}
"#,
    );
    let mut c = env.command(&["search", "frobnicator", "--json"]);
    c.env("AGENTLOG_INDEX", ix_arg);
    let out = c.output().unwrap();
    let hits = json(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(
        hits[0]["session_id"],
        "0000aaaa-1111-4222-8333-444455556666"
    );
    assert_eq!(hits[0]["project"], "/srv/new");
}

#[test]
fn a_file_that_is_not_an_index_is_an_error_and_an_old_index_is_moved_aside() {
    let env = home_with_sessions();
    // --index naming a session file (a typo): an error, the file untouched.
    let session = env
        .home()
        .join(".claude/projects/-path-to-Demo/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    let before = std::fs::read(&session).unwrap();
    for args in [
        vec!["search", "CLAUDE.md", "--index"],
        vec!["index", "--index"],
        vec!["index", "--rebuild", "--index"],
    ] {
        let mut args = args.clone();
        let s = session.to_str().unwrap();
        args.push(s);
        let r = env.run(&args);
        assert_eq!(r.status, 1, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(s), "{}", r.stderr);
        assert!(r.stderr.contains("not an agentlog index"), "{}", r.stderr);
        assert_eq!(std::fs::read(&session).unwrap(), before);
    }
    // An index of another schema version is moved aside, then rebuilt.
    assert_eq!(env.run(&["index"]).status, 0);
    let path = env.home().join(".local/share/agentlog/index.sqlite");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA user_version = 1").unwrap();
    }
    let r = env.run(&["search", "CLAUDE.md", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stderr.contains("was unusable"), "{}", r.stderr);
    assert!(r.stderr.contains("index.sqlite.broken-"), "{}", r.stderr);
    assert!(!json(&r.stdout).as_array().unwrap().is_empty());
    let aside = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            let n = n.to_string_lossy();
            n.starts_with("index.sqlite.broken-") && !n.ends_with("-wal") && !n.ends_with("-shm")
        })
        .count();
    assert_eq!(aside, 1);
    // Rebuild on request.
    let r = env.run(&["index", "--rebuild", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(json(&r.stdout)["sessions"].as_u64().unwrap() > 5);
    // And a check on request finds nothing wrong.
    let r = env.run(&["index", "--check"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
}

#[test]
fn agentlog_processes_starting_together_make_one_index() {
    let env = home_with_sessions();
    let runs: Vec<(Vec<&str>, std::process::Child)> = [
        vec!["search", "CLAUDE.md", "--json"],
        vec!["search", "CLAUDE.md", "--json"],
        vec!["index", "--json"],
        vec!["stats", "--json"],
        vec!["search", "CLAUDE.md", "--json"],
        vec!["index", "--json"],
    ]
    .into_iter()
    .map(|args| {
        let child = env
            .command(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        (args, child)
    })
    .collect();
    for (args, child) in runs {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("error"), "{args:?}: {stderr}");
        let v = json(&String::from_utf8_lossy(&out.stdout));
        if args[0] == "search" {
            assert!(!v.as_array().unwrap().is_empty(), "{args:?}");
        }
    }
    let dir = env.home().join(".local/share/agentlog");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.contains("building") || n.contains("broken")),
        "{names:?}"
    );
    let r = env.run(&["index", "--json"]);
    assert_eq!(json(&r.stdout)["update"]["read_full"], 0, "{}", r.stdout);
}

#[test]
fn bad_queries_and_dates_are_explained() {
    let env = TestEnv::new();
    let r = env.run(&["search", "--", "-only"]);
    assert_eq!(r.status, 2, "a usage error");
    assert!(r.stderr.contains("at least one word"), "{}", r.stderr);
    let r = env.run(&["search", "x", "--since", "soon"]);
    assert_eq!(r.status, 2, "a usage error");
    assert!(r.stderr.contains("--since \"soon\""), "{}", r.stderr);
    let r = env.run(&["ls", "--since", "7x"]);
    assert_eq!(r.status, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--since \"7x\""), "{}", r.stderr);
    let r = env.run(&["stats", "--until", "7x"]);
    assert_eq!(r.status, 2, "{}", r.stderr);
    let r = env.run(&["ls", "--agent", "claud"]);
    assert_eq!(r.status, 2, "{}", r.stderr);
    assert!(r.stderr.contains("unknown agent \"claud\""), "{}", r.stderr);
}

#[test]
fn index_watch_picks_up_a_new_session_and_stops_when_its_output_closes() {
    use std::io::BufRead as _;
    let env = TestEnv::new();
    let src = fixtures()
        .join("native/claude/ccv-sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    let bytes = std::fs::read(src).unwrap();
    env.write(
        ".claude/projects/-p/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        &bytes,
    );
    assert_eq!(env.run(&["index"]).status, 0);
    let mut child = env
        .command(&["index", "--watch", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // A second session appears while it watches.
    env.write(
        ".claude/projects/-p/2af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        &bytes,
    );
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // The first report (waiting on the watcher, however long it takes).
    let line = lines.next().unwrap().unwrap();
    let v = json(&line);
    assert_eq!(v["read_full"].as_u64(), Some(1), "{v}");
    // Closing its output ends the watch at the next report.
    drop(lines);
    env.write(
        ".claude/projects/-p/3af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        &bytes,
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}
