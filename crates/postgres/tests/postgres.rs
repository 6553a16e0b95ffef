//! The PostgreSQL backend against a real server started by
//! `scripts/postgres.sh`: the backend conformance suite, parity with the
//! SQLite index on generated homes, roles, and bad input. One server for
//! the whole file; each part uses its own database.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_formats::discover::{discover_all, DiscoverEnv, Found};
use agentlog_index::backend::ResolveParams;
use agentlog_index::{Backend, GroupBy, Index, ListParams, SearchParams, SessionInfo, StatsParams};
use agentlog_postgres::grant::Access;
use agentlog_postgres::throwaway::Throwaway;
use agentlog_postgres::{PgError, PgIndex, PushOptions};
use std::path::Path;

fn opts(machine: &str) -> PushOptions {
    PushOptions {
        machine: machine.to_string(),
        user: "tester".to_string(),
        redact: false,
    }
}

fn home(dir: &Path, size: u64, seed: u64) -> Vec<Found> {
    agentlog_bench::gen::generate(dir, size, seed).unwrap();
    let found = discover_all(&DiscoverEnv::with_home(dir), None);
    assert!(!found.is_empty());
    found
}

#[test]
fn postgres_backend() {
    let Some(pg) = Throwaway::for_test("postgres_backend") else {
        return;
    };
    conformance(&pg);
    parity(&pg);
    roles(&pg);
    responses(&pg);
    bad_input(&pg);
}

fn conformance(pg: &Throwaway) {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    agentlog_index::conformance::run(
        &mut || -> Box<dyn Backend> {
            n += 1;
            let url = pg.database(&format!("conformance{n}")).unwrap();
            Box::new(PgIndex::connect(&url, true).unwrap())
        },
        &dir.path().join("sessions"),
        &agentlog_index::conformance::sessions(1_750_000_000_000),
    );
}

/// Sessions as compared across backends (paths, ids, counts, tokens).
fn catalog(v: &[SessionInfo]) -> Vec<SessionInfo> {
    v.to_vec()
}

fn parity(pg: &Throwaway) {
    let dir = tempfile::tempdir().unwrap();
    let found = home(&dir.path().join("home"), 3_000_000, 7);
    let (mut index, _) = Index::open(&dir.path().join("index.sqlite")).unwrap();
    index.update(&found, &mut |_| {}).unwrap();
    let url = pg.database("parity").unwrap();
    let db = PgIndex::connect(&url, true).unwrap();
    let r = db.push(&found, &opts("m1"), &mut |_| {}).unwrap();
    assert_eq!(r.sent_whole, found.len(), "{r:?}");
    assert!(r.skipped.is_empty(), "{r:?}");
    // A second push sends nothing.
    let again = db.push(&found, &opts("m1"), &mut |_| {}).unwrap();
    assert_eq!(again.unchanged, found.len(), "{again:?}");
    assert_eq!(again.bytes, 0);

    let lists = [
        ListParams::default(),
        ListParams {
            agents: vec!["Claude".into(), "codex".into()],
            ..ListParams::default()
        },
        ListParams {
            limit: 7,
            offset: 3,
            ..ListParams::default()
        },
        ListParams {
            order: agentlog_index::SessionOrder::Created,
            ..ListParams::default()
        },
    ];
    for p in &lists {
        let local = index.sessions(p).unwrap();
        let server = db.sessions(p).unwrap();
        assert!(!local.is_empty());
        assert_eq!(catalog(&server), catalog(&local), "ls {p:?}");
    }
    let status = Backend::status(&db).unwrap();
    let (entries, sessions, _) = index.counts().unwrap();
    assert_eq!((status.entries, status.sessions), (entries, sessions));

    // Words, phrases, prefixes, OR, exclusions, filters: same entries.
    let words = ["parser", "the", "error"];
    let mut queries: Vec<SearchParams> = Vec::new();
    for w in words {
        queries.push(SearchParams::new(w));
    }
    for q in [
        "\"cargo test\"",
        "pars*",
        "te*",
        "config OR parser",
        "error -parser",
        "src/main.rs",
        "\"fn main\"*",
    ] {
        queries.push(SearchParams::new(q));
    }
    queries.push(SearchParams {
        agents: vec!["codex".into()],
        ..SearchParams::new("test")
    });
    queries.push(SearchParams {
        roles: vec!["user".into()],
        ..SearchParams::new("the")
    });
    queries.push(SearchParams {
        roles: vec!["thinking".into()],
        ..SearchParams::new("the")
    });
    queries.push(SearchParams {
        tools: vec!["bash".into(), "Shell".into()],
        ..SearchParams::new("cargo")
    });
    queries.push(SearchParams {
        since_ms: Some(agentlog_bench::gen::EPOCH_MS + 60 * 86_400_000),
        until_ms: Some(agentlog_bench::gen::EPOCH_MS + 120 * 86_400_000),
        ..SearchParams::new("error")
    });
    let sid = &index.sessions(&ListParams::default()).unwrap()[2].session_id;
    queries.push(SearchParams {
        sessions: vec![sid[..8].to_string()],
        ..SearchParams::new("the")
    });
    let mut nonempty = 0;
    for mut q in queries {
        q.limit = 100_000;
        q.candidates = 100_000;
        q.now_ms = Some(agentlog_bench::gen::EPOCH_MS);
        let key = |h: &agentlog_index::Hit| (h.path.clone(), h.entry_id.clone());
        let mut local: Vec<_> = index.search(&q).unwrap().iter().map(key).collect();
        let mut server: Vec<_> = db.search(&q).unwrap().iter().map(key).collect();
        local.sort();
        server.sort();
        if !local.is_empty() {
            nonempty += 1;
        }
        assert_eq!(server.len(), local.len(), "search {:?}", q.query);
        assert!(server == local, "search {:?}: other entries", q.query);
        // Connected for reading (the schema checked by the search itself):
        // the same hits in the same order.
        let lazy = PgIndex::connect_lazily(&url).unwrap().search(&q).unwrap();
        assert_eq!(lazy, db.search(&q).unwrap(), "search {:?}", q.query);
    }
    assert!(nonempty >= 10, "too few queries matched anything");

    // Stats: same groups and totals.
    for by in [
        GroupBy::Model,
        GroupBy::Day,
        GroupBy::Agent,
        GroupBy::Project,
    ] {
        let p = StatsParams {
            by,
            ..StatsParams::default()
        };
        let (a, b) = (index.stats(&p).unwrap(), db.stats(&p).unwrap());
        assert!(a.total.total > 0);
        let keys = |s: &agentlog_index::Stats| {
            s.rows
                .iter()
                .map(|r| (r.key.clone(), r.responses, r.input, r.output, r.total))
                .collect::<Vec<_>>()
        };
        assert_eq!(keys(&b), keys(&a), "stats by {by:?}");
        let (ca, cb) = (
            a.total.cost_usd.unwrap_or(0.0),
            b.total.cost_usd.unwrap_or(0.0),
        );
        assert!((ca - cb).abs() < 1e-6 * ca.max(1.0), "cost {ca} vs {cb}");
    }

    // The original bytes come back as they were.
    for f in found.iter().take(5) {
        let s = db
            .find_session(&f.path.to_string_lossy())
            .unwrap()
            .pop()
            .unwrap();
        assert_eq!(
            db.original(s.file_id).unwrap(),
            std::fs::read(&f.path).unwrap()
        );
    }

    // An appended line is sent alone, and found.
    let target = found.iter().find(|f| f.format == "claude").unwrap();
    let mut bytes = std::fs::read(&target.path).unwrap();
    let last = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let mut line: serde_json::Value = serde_json::from_slice(&bytes[last..]).unwrap();
    line["uuid"] = "appended-entry-0001".into();
    line["parentUuid"] = serde_json::Value::Null;
    line["message"] = serde_json::json!({"role": "user", "content": "zanzibar quokka appended"});
    line["type"] = "user".into();
    bytes.extend_from_slice(format!("{line}\n").as_bytes());
    std::fs::write(&target.path, &bytes).unwrap();
    let r = db.push(&found, &opts("m1"), &mut |_| {}).unwrap();
    assert_eq!((r.appended, r.sent_whole), (1, 0), "{r:?}");
    assert_eq!(r.entries, 1, "{r:?}");
    let hits = db.search(&SearchParams::new("zanzibar quokka")).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].entry_id, "appended-entry-0001");
    let s = db
        .find_session(&target.path.to_string_lossy())
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(db.original(s.file_id).unwrap(), bytes);
    index.update(&found, &mut |_| {}).unwrap();
    assert_eq!(
        db.sessions(&ListParams::default()).unwrap(),
        index.sessions(&ListParams::default()).unwrap(),
        "catalog after an append"
    );
    // A rewritten file is sent whole.
    std::fs::write(&target.path, &bytes[..last]).unwrap();
    let r = db.push(&found, &opts("m1"), &mut |_| {}).unwrap();
    assert_eq!((r.appended, r.sent_whole), (0, 1), "{r:?}");
    assert!(db
        .search(&SearchParams::new("zanzibar"))
        .unwrap()
        .is_empty());
    let refs = db.resolve(&ResolveParams::new(&sid[..8])).unwrap();
    assert_eq!(refs[0].session_id, *sid);
}

fn roles(pg: &Throwaway) {
    let dir = tempfile::tempdir().unwrap();
    let a = home(&dir.path().join("a"), 300_000, 1);
    let b = home(&dir.path().join("b"), 300_000, 2);
    let url = pg.database("roles").unwrap();
    let admin = PgIndex::connect(&url, true).unwrap();
    admin.grant("laptop_a", "pw-a", Access::Push).unwrap();
    admin.grant("laptop_b", "pw-b", Access::Push).unwrap();
    admin.grant("viewer", "pw-v", Access::Read).unwrap();
    let pa = PgIndex::connect(&pg.url_for("roles", Some(("laptop_a", "pw-a"))), false).unwrap();
    let pb = PgIndex::connect(&pg.url_for("roles", Some(("laptop_b", "pw-b"))), false).unwrap();
    pa.push(&a, &opts("a"), &mut |_| {}).unwrap();
    pb.push(&b, &opts("b"), &mut |_| {}).unwrap();
    // Each pusher sees its own sessions only.
    let mine = pa.sessions(&ListParams::default()).unwrap();
    assert_eq!(mine.len(), a.len());
    assert!(mine
        .iter()
        .all(|s| s.path.starts_with(&*dir.path().join("a").to_string_lossy())));
    // It cannot delete another machine's rows (they are not there for it).
    let mut raw = postgres::Client::connect(
        &pg.url_for("roles", Some(("laptop_a", "pw-a"))),
        postgres::NoTls,
    )
    .unwrap();
    let n = raw
        .execute("DELETE FROM sessions WHERE machine = 'b'", &[])
        .unwrap();
    assert_eq!(n, 0);
    let n = raw
        .execute("DELETE FROM files WHERE machine = 'b'", &[])
        .unwrap();
    assert_eq!(n, 0);
    let n = raw
        .execute(
            "DELETE FROM doc_words w USING sessions s WHERE s.id = w.session AND s.machine = 'b'",
            &[],
        )
        .unwrap();
    assert_eq!(n, 0);
    let words: i64 = raw
        .query_one(
            "SELECT count(*) FROM doc_words WHERE owner <> current_user",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(words, 0, "another machine's words are visible");
    // Its searches find its own entries only.
    let hits = pa.search(&SearchParams::new("the")).unwrap();
    assert!(!hits.is_empty());
    assert!(hits
        .iter()
        .all(|h| h.path.starts_with(&*dir.path().join("a").to_string_lossy())));
    // Nor write rows as another role.
    let e = raw
        .execute(
            "INSERT INTO files(owner, machine, username, path, format, size, mtime_ns, lines,
               head_hash, tail_hash) VALUES ('laptop_b', 'x', 'x', 'x', 'x', 0, 0, 0, 0, 0)",
            &[],
        )
        .unwrap_err();
    assert!(e
        .as_db_error()
        .unwrap()
        .message()
        .contains("row-level security"));
    // Nor change the schema.
    assert!(raw.batch_execute("DROP TABLE docs").is_err());
    // What a large push runs after it (as the owner) is allowed.
    raw.batch_execute("SELECT agentlog_after_bulk_push()")
        .unwrap();
    // The reader sees everything and changes nothing.
    let viewer = PgIndex::connect(&pg.url_for("roles", Some(("viewer", "pw-v"))), false).unwrap();
    assert_eq!(
        viewer.sessions(&ListParams::default()).unwrap().len(),
        a.len() + b.len()
    );
    assert!(!viewer.search(&SearchParams::new("the")).unwrap().is_empty());
    let e = viewer.push(&a, &opts("v"), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("permission denied"), "{e}");
    let mut rv = postgres::Client::connect(
        &pg.url_for("roles", Some(("viewer", "pw-v"))),
        postgres::NoTls,
    )
    .unwrap();
    assert!(rv.execute("DELETE FROM sessions", &[]).is_err());
    assert!(rv
        .batch_execute("SELECT agentlog_after_bulk_push()")
        .is_err());
    // Everything is still there.
    assert_eq!(
        admin.sessions(&ListParams::default()).unwrap().len(),
        a.len() + b.len()
    );
    machine_names(pg, &admin, &b, dir.path());
}

/// A machine name belongs to the role that first pushed under it (or that
/// the owner bound it to): another role's push under it fails before
/// sending anything, the server refuses its rows whether or not the path
/// is taken (so it learns nothing of the other's files), and binding the
/// name gives it back, without the impostor's rows.
fn machine_names(pg: &Throwaway, admin: &PgIndex, b: &[Found], dir: &Path) {
    let url_a = pg.url_for("roles", Some(("laptop_a", "pw-a")));
    let url_b = pg.url_for("roles", Some(("laptop_b", "pw-b")));
    let pa = PgIndex::connect(&url_a, false).unwrap();
    let pb = PgIndex::connect(&url_b, false).unwrap();
    let count = |machine: &str| -> usize {
        admin
            .machines()
            .unwrap()
            .into_iter()
            .find(|(m, _)| m == machine)
            .map_or(0, |(_, n)| n as usize)
    };
    // a pushing under b's name, with b's own paths: refused, nothing sent.
    let e = pa.push(b, &opts("b"), &mut |_| {}).unwrap_err();
    assert!(
        matches!(&e, PgError::MachineTaken { machine, .. } if machine == "b"),
        "{e}"
    );
    assert!(!e.to_string().contains("laptop_b"), "says whose it is: {e}");
    assert_eq!(count("b"), b.len());
    // Nor by hand: a row under b's name is refused whether b has the path
    // or not, the same way.
    let mut raw = postgres::Client::connect(&url_a, postgres::NoTls).unwrap();
    let taken = b[0].path.to_string_lossy().into_owned();
    let mut messages = Vec::new();
    for path in [taken.as_str(), "/no/such/path"] {
        for conflict in ["", " ON CONFLICT (machine, path) DO NOTHING"] {
            let e = raw
                .execute(
                    &format!(
                        "INSERT INTO files(machine, username, path, format, size, mtime_ns, lines,
                           head_hash, tail_hash) VALUES ('b', 'x', $1, 'x', 0, 0, 0, 0, 0){conflict}"
                    ),
                    &[&path],
                )
                .unwrap_err();
            messages.push(e.as_db_error().unwrap().message().to_string());
        }
    }
    assert!(
        messages
            .iter()
            .all(|m| m == &messages[0] && m.contains("row-level security")),
        "{messages:?}"
    );
    // Claiming b's name by hand changes nothing and shows nothing.
    raw.execute(
        "INSERT INTO machines(name) VALUES ('b') ON CONFLICT (name) DO NOTHING",
        &[],
    )
    .unwrap();
    let seen: i64 = raw
        .query_one("SELECT count(*) FROM machines WHERE name = 'b'", &[])
        .unwrap()
        .get(0);
    assert_eq!(seen, 0);
    // a takes the name "c" first; b's pushes under it then fail loudly
    // (they sent 0 files with success before).
    let c_files = home(&dir.join("c"), 200_000, 3);
    pa.push(&c_files, &opts("c"), &mut |_| {}).unwrap();
    let e = pb.push(&c_files, &opts("c"), &mut |_| {}).unwrap_err();
    assert!(matches!(e, PgError::MachineTaken { .. }), "{e}");
    // The owner binds "c" to b: a's rows under it go, b pushes under it.
    let removed = admin.bind_machine("c", "laptop_b").unwrap();
    assert_eq!(removed as usize, c_files.len());
    assert_eq!(count("c"), 0);
    let r = pb.push(&c_files, &opts("c"), &mut |_| {}).unwrap();
    assert!(r.skipped.is_empty(), "{r:?}");
    assert_eq!(r.sent_whole + r.appended, c_files.len());
    assert_eq!(count("c"), c_files.len());
    let e = pa.push(&c_files, &opts("c"), &mut |_| {}).unwrap_err();
    assert!(matches!(e, PgError::MachineTaken { .. }), "{e}");
    // Binding needs a role that exists.
    assert!(admin.bind_machine("d", "no_such_role").is_err());
}

/// Writes `files` Claude Code sessions under `dir`, file `i` holding the
/// response `msg_shared_{i}` (also in the other home) and one of its own.
fn claude_home(dir: &Path, tag: &str, files: usize) -> Vec<Found> {
    let projects = dir.join(".claude/projects/-work-p");
    std::fs::create_dir_all(&projects).unwrap();
    for i in 0..files {
        let sid = format!("0000{i:04}-0000-4000-8000-{tag:0>12}");
        let line = |uuid: &str, parent: Option<&str>, t: u32, msg: serde_json::Value| {
            serde_json::json!({
                "type": msg["role"], "uuid": uuid, "parentUuid": parent, "sessionId": sid,
                "timestamp": format!("2025-03-0{}T10:00:{t:02}Z", 1 + i % 3), "cwd": "/work/p",
                "message": msg,
            })
            .to_string()
        };
        let reply = |id: &str, input: u64| {
            serde_json::json!({
                "id": id, "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": format!("reply {id}")}],
                "usage": {"input_tokens": input, "output_tokens": 10},
            })
        };
        let lines = [
            line(
                "u1",
                None,
                0,
                serde_json::json!({"role": "user", "content": "hello"}),
            ),
            line("a1", Some("u1"), 1, reply(&format!("msg_shared_{i}"), 100)),
            line(
                "u2",
                Some("a1"),
                2,
                serde_json::json!({"role": "user", "content": "more"}),
            ),
            line(
                "a2",
                Some("u2"),
                3,
                reply(&format!("msg_{tag}_{i}"), 1 + i as u64),
            ),
        ];
        std::fs::write(
            projects.join(format!("{sid}.jsonl")),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
    discover_all(&DiscoverEnv::with_home(dir), None)
}

/// A response seen in files of two machines counts once, whichever pushed
/// first and though neither pusher can see the other's rows; when the
/// file holding its counted row is gone, the other row counts. Totals as
/// the SQLite index counts the same files.
fn responses(pg: &Throwaway) {
    let dir = tempfile::tempdir().unwrap();
    let c = claude_home(&dir.path().join("c"), "c", 20);
    let d = claude_home(&dir.path().join("d"), "d", 20);
    assert_eq!((c.len(), d.len()), (20, 20));
    let url = pg.database("responses").unwrap();
    let admin = PgIndex::connect(&url, true).unwrap();
    admin.grant("laptop_c", "pw-c", Access::Push).unwrap();
    admin.grant("laptop_d", "pw-d", Access::Push).unwrap();
    let connect = |role: &str, pw: &str| {
        PgIndex::connect(&pg.url_for("responses", Some((role, pw))), false).unwrap()
    };
    std::thread::scope(|s| {
        let pc = s.spawn(|| connect("laptop_c", "pw-c").push(&c, &opts("c"), &mut |_| {}));
        let pd = s.spawn(|| connect("laptop_d", "pw-d").push(&d, &opts("d"), &mut |_| {}));
        pc.join().unwrap().unwrap();
        pd.join().unwrap().unwrap();
    });
    let local = |found: &[Found]| {
        let (mut index, _) =
            Index::open(&dir.path().join(format!("{}.sqlite", found.len()))).unwrap();
        index.update(found, &mut |_| {}).unwrap();
        index.stats(&StatsParams::default()).unwrap().total
    };
    let both: Vec<Found> = c.iter().chain(&d).cloned().collect();
    let total = admin.stats(&StatsParams::default()).unwrap().total;
    // 20 shared responses once, 40 of their own.
    assert_eq!(total.responses, 60);
    assert_eq!(total.input, 20 * 100 + 2 * (1..=20).sum::<u64>());
    assert_eq!(total, local(&both));
    // Machine c's files are gone: machine d's rows of the shared responses
    // count now.
    let mut pc = connect("laptop_c", "pw-c");
    pc.set_identity("c", "tester");
    Backend::update(
        &mut pc,
        &agentlog_index::backend::UpdateParams { found: Vec::new() },
        &mut |_| {},
    )
    .unwrap();
    let total = admin.stats(&StatsParams::default()).unwrap().total;
    assert_eq!(total.responses, 40);
    assert_eq!(total, local(&d));
}

fn bad_input(pg: &Throwaway) {
    let dir = tempfile::tempdir().unwrap();
    let found = home(&dir.path().join("h"), 500_000, 3);
    let before: Vec<Vec<u8>> = found
        .iter()
        .map(|f| std::fs::read(&f.path).unwrap())
        .collect();
    let url = pg.database("bad").unwrap();

    // Unreachable: a port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let e =
        PgIndex::connect(&format!("postgres://u:secret@127.0.0.1:{port}/db"), true).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, PgError::Connect { .. }), "{msg}");
    assert!(
        msg.contains("cannot connect") && !msg.contains("secret"),
        "{msg}"
    );

    // Wrong password.
    let wrong = pg.url_for("bad", Some(("agentlog", "not-the-password")));
    let e = PgIndex::connect(&wrong, true).unwrap_err();
    assert!(
        e.to_string().contains("password authentication failed"),
        "{e}"
    );
    assert!(!e.to_string().contains("not-the-password"), "{e}");

    // A server with a newer schema is refused before anything is written.
    let newer = pg.database("newer").unwrap();
    drop(PgIndex::connect(&newer, true).unwrap());
    let mut c = postgres::Client::connect(&newer, postgres::NoTls).unwrap();
    c.execute(
        "INSERT INTO refinery_schema_history(version, name, applied_on, checksum)
         VALUES (99, 'from_the_future', '2030-01-01', '0')",
        &[],
    )
    .unwrap();
    let e = PgIndex::connect(&newer, true).unwrap_err();
    assert!(matches!(e, PgError::NewerSchema { server: 99, .. }), "{e}");
    assert!(e.to_string().contains("upgrade agentlog"), "{e}");
    // Connected for reading, the first statement refuses it: a search
    // (which reads the version with its answer), and anything else.
    let lazy = PgIndex::connect_lazily(&newer).unwrap();
    let e = lazy.search(&SearchParams::new("the")).unwrap_err();
    assert!(matches!(e, PgError::NewerSchema { server: 99, .. }), "{e}");
    let lazy = PgIndex::connect_lazily(&newer).unwrap();
    let e = lazy.sessions(&ListParams::default()).unwrap_err();
    assert!(matches!(e, PgError::NewerSchema { server: 99, .. }), "{e}");
    let lazy = PgIndex::connect_lazily(&newer).unwrap();
    let e = lazy.stats(&StatsParams::default()).unwrap_err();
    assert!(matches!(e, PgError::NewerSchema { server: 99, .. }), "{e}");
    // A database without the schema: the search's own error is not what
    // is said, but that the schema is missing.
    let empty = pg.database("empty").unwrap();
    let e = PgIndex::connect_lazily(&empty)
        .unwrap()
        .search(&SearchParams::new("the"))
        .unwrap_err();
    assert!(matches!(e, PgError::NotMigrated { server: 0, .. }), "{e}");

    // A connection dropped in the middle of a push: a clear error, then the
    // next push completes with nothing twice.
    let db = PgIndex::connect(&url, true).unwrap();
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut done = 0;
    let e = db
        .push(&found, &opts("h"), &mut |p| {
            done = p.done;
            if p.done == 2 {
                admin
                    .execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                         WHERE application_name = 'agentlog' AND pid <> pg_backend_pid()",
                        &[],
                    )
                    .unwrap();
            }
        })
        .unwrap_err();
    assert!(done >= 2);
    // The server's words, or the socket's when it went first (a push sends
    // over two connections: either may see the other end go).
    let msg = e.to_string().to_lowercase();
    assert!(
        msg.contains("terminat") || msg.contains("closed") || msg.contains("connection"),
        "{msg}"
    );
    let db = PgIndex::connect(&url, true).unwrap();
    let (_, partial, _) = db.counts().unwrap();
    assert!(partial < found.len() as u64);
    let r = db.push(&found, &opts("h"), &mut |_| {}).unwrap();
    assert_eq!(r.sent_whole as u64 + partial, found.len() as u64, "{r:?}");
    let (local, _) = Index::open(&dir.path().join("ix.sqlite")).unwrap();
    let mut local = local;
    local.update(&found, &mut |_| {}).unwrap();
    assert_eq!(
        db.sessions(&ListParams::default()).unwrap(),
        local.sessions(&ListParams::default()).unwrap()
    );
    assert_eq!(db.counts().unwrap().0, local.counts().unwrap().0);
    // Local files untouched throughout.
    let after: Vec<Vec<u8>> = found
        .iter()
        .map(|f| std::fs::read(&f.path).unwrap())
        .collect();
    assert!(before == after);
}
