//! `agentlog push` and the reading commands with `--db`, against a real
//! PostgreSQL started by `scripts/postgres.sh`: four machines pushing at
//! once with one killed (SIGKILL) and restarted, a second push sending
//! nothing, the same answers from the server as from the local index, and
//! clear errors for a server that cannot be reached.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use agentlog_formats::discover::{discover_all, DiscoverEnv};
use agentlog_index::{Index, ListParams, SessionInfo};
use agentlog_postgres::throwaway::Throwaway;
use agentlog_postgres::PgIndex;
use common::TestEnv;
use std::collections::BTreeMap;

fn local_catalog(env: &TestEnv) -> Vec<SessionInfo> {
    let found = discover_all(&DiscoverEnv::with_home(env.home()), None);
    let dir = tempfile::tempdir().unwrap();
    let (mut ix, _) = Index::open(&dir.path().join("ix.sqlite")).unwrap();
    ix.update(&found, &mut |_| {}).unwrap();
    ix.sessions(&ListParams::default()).unwrap()
}

fn tokens(v: &[SessionInfo]) -> u64 {
    v.iter()
        .flat_map(|s| &s.tokens)
        .map(|t| t.input + t.output + t.cache_read + t.cache_write)
        .sum()
}

#[test]
fn push_from_four_machines_with_one_killed() {
    let Some(pg) = Throwaway::for_test("push_from_four_machines_with_one_killed") else {
        return;
    };
    let url = pg.database("fleet").unwrap();
    let homes: Vec<TestEnv> = (0..4).map(|_| TestEnv::new()).collect();
    for (i, h) in homes.iter().enumerate() {
        let size = if i == 0 { 8_000_000 } else { 1_500_000 };
        agentlog_bench::gen::generate(h.home(), size, 100 + i as u64).unwrap();
    }
    let r = homes[0].run(&["db", "migrate", "--db", &url]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let version = agentlog_postgres::schema::SCHEMA_VERSION;
    assert!(
        r.stdout
            .contains(&format!("schema version {version} (created)")),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains(pg.url()), "the password is printed");
    let r = homes[0].run(&["db", "migrate", "--db", &url]);
    assert!(
        r.stdout
            .contains(&format!("schema version {version} (already current)")),
        "{}",
        r.stdout
    );

    let spawn = |i: usize| {
        homes[i]
            .command(&["push", "--db", &url, "--machine", &format!("m{i}")])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut children: Vec<_> = (0..4).map(spawn).collect();
    // Kill the first pusher once some of its files are on the server.
    let total0 = discover_all(&DiscoverEnv::with_home(homes[0].home()), None).len() as i64;
    let mut watch = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut killed_at = None;
    for _ in 0..6000 {
        let n: i64 = watch
            .query_one("SELECT count(*) FROM sessions WHERE machine = 'm0'", &[])
            .unwrap()
            .get(0);
        if n >= 3 {
            assert!(
                children[0].try_wait().unwrap().is_none(),
                "the push ended before it could be killed"
            );
            children[0].kill().unwrap(); // SIGKILL
            killed_at = Some(n);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let killed_at = killed_at.expect("the first push never got going");
    assert!(killed_at < total0, "killed after {killed_at} of {total0}");
    let out0 = children.remove(0).wait_with_output().unwrap();
    assert!(!out0.status.success());
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let partial: i64 = watch
        .query_one("SELECT count(*) FROM files WHERE machine = 'm0'", &[])
        .unwrap()
        .get(0);
    assert!(partial < total0, "{partial} of {total0} before the restart");
    // The restarted push completes; then a push sends nothing.
    let r = homes[0].run(&["push", "--db", &url, "--machine", "m0", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["report"]["unchanged"].as_i64().unwrap(), partial, "{v}");
    for (i, h) in homes.iter().enumerate() {
        let r = h.run(&[
            "push",
            "--db",
            &url,
            "--machine",
            &format!("m{i}"),
            "--json",
        ]);
        assert_eq!(r.status, 0, "{}", r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["report"]["bytes"], 0, "second push of m{i}: {v}");
        assert_eq!(v["report"]["unchanged"], v["report"]["files"], "{v}");
    }

    // The server holds exactly the union of the four catalogs.
    let db = PgIndex::connect(&url, false).unwrap();
    let server = db.sessions(&ListParams::default()).unwrap();
    let mut union = Vec::new();
    for h in &homes {
        union.extend(local_catalog(h));
    }
    let key = |s: &SessionInfo| (s.path.clone(), s.session_id.clone());
    let by_key = |v: &[SessionInfo]| -> BTreeMap<_, SessionInfo> {
        v.iter().map(|s| (key(s), s.clone())).collect()
    };
    assert_eq!(server.len(), union.len(), "sessions");
    assert_eq!(by_key(&server), by_key(&union), "session rows");
    let messages = |v: &[SessionInfo]| v.iter().map(|s| s.messages).sum::<u64>();
    assert_eq!(messages(&server), messages(&union));
    assert_eq!(tokens(&server), tokens(&union));
    let dups: i64 = watch
        .query_one(
            "SELECT count(*) FROM (SELECT 1 FROM docs GROUP BY session, entry_id, line
             HAVING count(*) > 1) d",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(dups, 0, "duplicate entries");
    let dups: i64 = watch
        .query_one(
            "SELECT count(*) FROM (SELECT 1 FROM usage GROUP BY session, entry_id, line
             HAVING count(*) > 1) d",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(dups, 0, "duplicate usage rows");
    // Every file of the killed machine comes back byte for byte.
    for f in discover_all(&DiscoverEnv::with_home(homes[0].home()), None) {
        let s = db
            .find_session(&f.path.to_string_lossy())
            .unwrap()
            .pop()
            .unwrap();
        assert_eq!(s.machine, "m0");
        assert!(db.original(s.file_id).unwrap() == std::fs::read(&f.path).unwrap());
    }
}

fn hits(json: &str) -> Vec<(String, String)> {
    let v: Vec<serde_json::Value> = serde_json::from_str(json).unwrap();
    let mut out: Vec<(String, String)> = v
        .iter()
        .map(|h| {
            (
                h["session_id"].as_str().unwrap().to_string(),
                h["entry_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn reading_commands_give_the_local_answers_from_the_server() {
    let Some(pg) = Throwaway::for_test("reading_commands_give_the_local_answers_from_the_server")
    else {
        return;
    };
    let url = pg.database("reading").unwrap();
    let env = TestEnv::new();
    agentlog_bench::gen::generate(env.home(), 1_000_000, 5).unwrap();
    let before: Vec<(std::path::PathBuf, Vec<u8>)> =
        discover_all(&DiscoverEnv::with_home(env.home()), None)
            .into_iter()
            .map(|f| {
                let b = std::fs::read(&f.path).unwrap();
                (f.path, b)
            })
            .collect();

    // An unreachable server: a clear error, nothing local changed.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let bad = format!("postgres://me:hunter2@127.0.0.1:{port}/agentlog");
    let r = env.run(&["push", "--db", &bad]);
    assert_eq!(r.status, 1);
    assert!(r.stderr.contains("cannot connect"), "{}", r.stderr);
    assert!(!r.stderr.contains("hunter2"), "{}", r.stderr);
    let r = env.run(&["search", "--db", &bad, "error"]);
    assert_eq!(r.status, 1);
    assert!(r.stderr.contains("cannot connect"), "{}", r.stderr);

    let r = env.run(&["push", "--db", &url]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stdout.contains("sent whole"), "{}", r.stdout);

    // The same catalog on the server as in the local index.
    let local = env.run(&["ls", "--cached", "--json"]);
    assert_eq!(local.status, 0, "{}", local.stderr);
    let db = PgIndex::connect(&url, false).unwrap();
    assert_eq!(
        db.sessions(&ListParams::default()).unwrap(),
        local_catalog(&env)
    );
    // search: the same entries.
    for q in [
        &["error"][..],
        &["\"cargo test\""],
        &["pars*"],
        &["test", "--agent", "codex"],
        &["the", "--role", "user"],
    ] {
        let mut a = vec!["search", "--json", "--limit", "10000"];
        a.extend_from_slice(q);
        let local = env.run(&a);
        a.extend_from_slice(&["--db", &url]);
        let server = env.run(&a);
        assert_eq!(server.status, local.status, "{q:?}: {}", server.stderr);
        assert_eq!(hits(&server.stdout), hits(&local.stdout), "search {q:?}");
    }
    // stats: the same rows.
    for by in ["model", "day", "agent"] {
        let local = env.run(&["stats", "--by", by, "--json"]);
        let server = env.run(&["stats", "--by", by, "--json", "--db", &url]);
        assert_eq!(server.status, 0, "{}", server.stderr);
        let rows = |s: &str| {
            let v: serde_json::Value = serde_json::from_str(s).unwrap();
            v["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r["key"].to_string(), r["total"].as_u64().unwrap()))
                .collect::<Vec<_>>()
        };
        assert_eq!(rows(&server.stdout), rows(&local.stdout), "stats by {by}");
    }
    // ls: the same sessions.
    let server = env.run(&["ls", "--db", &url, "--json"]);
    assert_eq!(server.status, 0, "{}", server.stderr);
    let listed = |s: &str| {
        let v: Vec<serde_json::Value> = serde_json::from_str(s).unwrap();
        let mut ids: Vec<(String, String, u64)> = v
            .iter()
            .map(|r| {
                (
                    r["id"].as_str().unwrap().to_string(),
                    r["agent"].as_str().unwrap().to_string(),
                    r["messages"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(listed(&server.stdout), listed(&local.stdout), "ls --db");
    // show, export and resume a session from the server.
    let ls: Vec<serde_json::Value> = serde_json::from_str(&local.stdout).unwrap();
    let id = ls[0]["id"].as_str().unwrap();
    let local = env.run(&["show", id]);
    let server = env.run(&["show", "--db", &url, id]);
    assert_eq!(server.status, 0, "{}", server.stderr);
    assert_eq!(server.stdout, local.stdout);
    let local = env.run(&["export", id, "--to", "json"]);
    let server = env.run(&["export", "--db", &url, id, "--to", "json"]);
    assert_eq!(server.status, 0, "{}", server.stderr);
    assert_eq!(server.stdout, local.stdout);
    let html = env.run(&["export", "--db", &url, id, "--to", "html"]);
    assert_eq!(html.status, 0, "{}", html.stderr);
    assert!(
        html.stdout.starts_with("<!doctype html>"),
        "{}",
        &html.stdout[..100.min(html.stdout.len())]
    );
    let r = env.run(&["resume", "--db", &url, id, "--in", "codex", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let written = std::path::PathBuf::from(v["path"].as_str().unwrap());
    assert!(written.starts_with(env.home()) && written.is_file(), "{v}");
    let r = env.run(&["show", "--db", &url, "no-such-session"]);
    assert_eq!(r.status, 1);
    assert!(r.stderr.contains("no session on"), "{}", r.stderr);

    // Local session files were never touched.
    for (p, b) in before {
        assert!(std::fs::read(&p).unwrap() == b, "{} changed", p.display());
    }
}

#[test]
fn push_redacts_secrets_unless_told_not_to() {
    let Some(pg) = Throwaway::for_test("push_redacts_secrets_unless_told_not_to") else {
        return;
    };
    let env = TestEnv::new();
    agentlog_bench::gen::generate(env.home(), 1_500_000, 101).unwrap();
    let found = discover_all(&DiscoverEnv::with_home(env.home()), None);
    let target = found.iter().find(|f| f.format == "claude").unwrap();
    let planted = agentlog_bench::secrets::planted(1);
    let mut bytes = std::fs::read(&target.path).unwrap();
    let last = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let mut line: serde_json::Value = serde_json::from_slice(&bytes[last..]).unwrap();
    line["uuid"] = "secret-entry-0001".into();
    line["type"] = "user".into();
    line["message"] = serde_json::json!({
        "role": "user",
        "content": agentlog_bench::secrets::planted_text(&planted),
    });
    bytes.extend_from_slice(format!("{line}\n").as_bytes());
    std::fs::write(&target.path, &bytes).unwrap();

    let stored = |db_name: &str, extra: &[&str]| -> (String, Vec<u8>) {
        let url = pg.database(db_name).unwrap();
        let mut args = vec!["push", "--db", url.as_str()];
        args.extend_from_slice(extra);
        let r = env.run(&args);
        assert_eq!(r.status, 0, "{}", r.stderr);
        let db = PgIndex::connect(&url, false).unwrap();
        let s = db
            .find_session(&target.path.to_string_lossy())
            .unwrap()
            .pop()
            .unwrap();
        let mut all = db.original(s.file_id).unwrap();
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        for row in c
            .query("SELECT text || thinking || tools || output FROM docs", &[])
            .unwrap()
        {
            all.extend_from_slice(row.get::<_, String>(0).as_bytes());
        }
        (r.stderr, all)
    };
    let (stderr, all) = stored("redacted", &[]);
    assert!(stderr.contains("redacted"), "{stderr}");
    let text = String::from_utf8_lossy(&all);
    for p in &planted {
        assert!(!text.contains(&p.secret), "{} was sent", p.kind);
    }
    assert!(text.contains("[REDACTED:"));
    let (_, all) = stored("as_is", &["--no-redact"]);
    let text = String::from_utf8_lossy(&all);
    assert!(planted.iter().any(|p| text.contains(&p.secret)));
}

/// A file that cannot be sent (here one that is not UTF-8, which redaction
/// refuses) makes the push fail: exit 1, the file and the reason named,
/// and the count; the other files are sent. Sent as it is, it goes through.
#[test]
fn push_fails_when_a_file_is_not_sent() {
    let Some(pg) = Throwaway::for_test("push_fails_when_a_file_is_not_sent") else {
        return;
    };
    let url = pg.database("skipped").unwrap();
    let env = TestEnv::new();
    agentlog_bench::gen::generate(env.home(), 300_000, 7).unwrap();
    let found = discover_all(&DiscoverEnv::with_home(env.home()), None);
    let hostile = found.iter().find(|f| f.format == "claude").unwrap();
    let mut bytes = std::fs::read(&hostile.path).unwrap();
    bytes.extend_from_slice(b"{\"type\":\"user\",\"bad\":\"\xff\xfe\"}\n");
    std::fs::write(&hostile.path, &bytes).unwrap();
    let r = env.run(&["push", "--db", &url]);
    assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
    let name = hostile.path.to_string_lossy();
    assert!(
        r.stderr.contains(&*name) && r.stderr.contains("cannot be redacted"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains(&format!("1 of {} files not pushed", found.len())),
        "{}",
        r.stderr
    );
    let db = PgIndex::connect(&url, false).unwrap();
    assert_eq!(
        db.sessions(&ListParams::default()).unwrap().len(),
        found.len() - 1
    );
    // The JSON report fails the same way.
    let r = env.run(&["push", "--db", &url, "--json"]);
    assert_eq!(r.status, 1, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["report"]["skipped"].as_array().unwrap().len(), 1, "{v}");
    let r = env.run(&["push", "--db", &url, "--no-redact"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
}

/// A machine name the owner bound to one role (`db grant --machine`) is
/// refused to another: the push fails loudly, says what to do, and sends
/// nothing.
#[test]
fn push_under_another_roles_machine_name_fails() {
    let Some(pg) = Throwaway::for_test("push_under_another_roles_machine_name_fails") else {
        return;
    };
    let url = pg.database("names").unwrap();
    let env = TestEnv::new();
    agentlog_bench::gen::generate(env.home(), 200_000, 9).unwrap();
    let grant = |role: &str, extra: &[&str]| {
        let mut args = vec!["db", "grant", role, "--push", "--db", url.as_str()];
        args.extend_from_slice(extra);
        let mut child = env
            .command(&args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        writeln!(child.stdin.take().unwrap(), "pw-{role}").unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    grant("laptop_a", &[]);
    let said = grant("laptop_b", &["--machine", "build-box"]);
    assert!(
        said.contains("machine name build-box is laptop_b's"),
        "{said}"
    );
    let as_a = pg.url_for("names", Some(("laptop_a", "pw-laptop_a")));
    let r = env.run(&["push", "--db", &as_a, "--machine", "build-box"]);
    assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("\"build-box\" belongs to another role")
            && r.stderr.contains("hint:")
            && !r.stderr.contains("laptop_b"),
        "{}",
        r.stderr
    );
    let db = PgIndex::connect(&url, false).unwrap();
    assert!(db.sessions(&ListParams::default()).unwrap().is_empty());
    let r = env.run(&["push", "--db", &as_a, "--machine", "laptop-a"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
}

/// A session its agent deleted, kept in the archive, is pushed like the
/// others.
#[test]
fn push_sends_a_deleted_session_from_the_archive() {
    let Some(pg) = Throwaway::for_test("push_sends_a_deleted_session_from_the_archive") else {
        return;
    };
    let url = pg.database("deleted").unwrap();
    let env = TestEnv::new();
    agentlog_bench::gen::generate(env.home(), 200_000, 11).unwrap();
    let found = discover_all(&DiscoverEnv::with_home(env.home()), None);
    let r = env.run(&["index"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let gone = found.iter().find(|f| f.format == "claude").unwrap();
    std::fs::remove_file(&gone.path).unwrap();
    let r = env.run(&["push", "--db", &url]);
    assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    let db = PgIndex::connect(&url, false).unwrap();
    let on_server = db.sessions(&ListParams::default()).unwrap();
    assert_eq!(on_server.len(), found.len());
    let name = gone.path.to_string_lossy();
    assert!(
        on_server.iter().any(|s| s.path == *name),
        "{name} was not pushed"
    );
    // Sent once: a second push has nothing to send.
    let r = env.run(&["push", "--db", &url, "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["report"]["sent_whole"], 0, "{v}");
    assert_eq!(v["report"]["appended"], 0, "{v}");
}
