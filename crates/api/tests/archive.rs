#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A home that keeps: a session whose file its agent deleted stays a
//! session (listed, read, searched, counted), from agentlog's archive.

use agentlog_api::{refresh, Library, ListOptions, Settings, Source};
use agentlog_index::{SearchParams, StatsParams};
use std::io::Write;
use std::path::{Path, PathBuf};

fn line(sid: &str, n: u32, text: &str) -> String {
    let parent = (n > 1).then(|| format!("{sid}-{}", n - 1));
    let role = if n % 2 == 1 { "user" } else { "assistant" };
    let mut v = serde_json::json!({
        "type": role,
        "uuid": format!("{sid}-{n}"),
        "parentUuid": parent,
        "sessionId": sid,
        "timestamp": format!("2026-11-{:02}T10:00:00Z", 10 + n % 10),
        "cwd": "/work/p",
        "message": {"role": role, "content": text},
    });
    if role == "assistant" {
        v["message"] = serde_json::json!({
            "role": "assistant", "id": format!("msg-{sid}-{n}"), "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 100, "output_tokens": 20}
        });
    }
    v.to_string() + "\n"
}

fn session(home: &Path, sid: &str, words: &[&str]) -> PathBuf {
    let dir = home.join(".claude/projects/-work-p");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{sid}.jsonl"));
    let mut f = std::fs::File::create(&p).unwrap();
    for (i, w) in words.iter().enumerate() {
        f.write_all(line(sid, i as u32 + 1, w).as_bytes()).unwrap();
    }
    p
}

fn settings(home: &Path) -> Settings {
    Settings::with_home(home)
}

fn index(s: &Settings) -> agentlog_api::refresh::Discovered {
    let d = refresh::discover_full(s).unwrap();
    refresh::update(s, &d, false, &mut |_| {}).unwrap();
    d
}

fn ids(lib: &Library, source: Source, deleted_only: bool) -> Vec<(String, bool)> {
    let l = lib
        .list(&ListOptions {
            source,
            deleted_only,
            ..ListOptions::default()
        })
        .unwrap();
    let mut v: Vec<(String, bool)> = l
        .sessions
        .into_iter()
        .map(|s| (s.id, s.deleted.is_some()))
        .collect();
    v.sort();
    v
}

const A: &str = "aaaaaaaa-1111-4111-8111-111111111111";
const B: &str = "bbbbbbbb-2222-4222-8222-222222222222";

#[test]
fn a_deleted_session_stays_listed_read_searched_and_counted() {
    let home = tempfile::tempdir().unwrap();
    let s = settings(home.path());
    let a = session(
        home.path(),
        A,
        &["where is the zebrafish parser", "in src/zebra.rs"],
    );
    session(home.path(), B, &["unrelated question", "unrelated answer"]);
    index(&s);
    let lib = Library::new(s.clone());
    let before = lib.stats(&StatsParams::default()).unwrap();
    let bytes = std::fs::read(&a).unwrap();

    std::fs::remove_file(&a).unwrap();
    index(&s);
    for source in [Source::Files, Source::Index] {
        assert_eq!(
            ids(&lib, source, false),
            vec![(A.to_string(), true), (B.to_string(), false)],
            "{source:?}"
        );
        assert_eq!(
            ids(&lib, source, true),
            vec![(A.to_string(), true)],
            "{source:?}"
        );
    }
    let read = lib.read(&A[..8]).unwrap();
    assert_eq!(read.session.meta.id, A);
    assert_eq!(read.session.message_count(), 2);
    let hits = lib.search(&SearchParams::new("zebrafish")).unwrap();
    assert_eq!(hits.hits.len(), 1);
    assert_eq!(hits.hits[0].session_id, A);
    let after = lib.stats(&StatsParams::default()).unwrap();
    assert_eq!(
        serde_json::to_value(&before.total).unwrap(),
        serde_json::to_value(&after.total).unwrap()
    );

    // Put back byte for byte; never over a file.
    let (to, n) = agentlog_api::archive::restore(&s, &A[..8], None, None, false).unwrap();
    assert_eq!((to.as_path(), n), (a.as_path(), bytes.len() as u64));
    assert_eq!(std::fs::read(&a).unwrap(), bytes);
    assert!(agentlog_api::archive::restore(&s, &A[..8], None, None, false).is_err());
    index(&s);
    assert_eq!(
        ids(&lib, Source::Index, false),
        vec![(A.to_string(), false), (B.to_string(), false)]
    );
}

#[test]
fn a_rebuild_from_the_archive_alone_lists_searches_and_counts_the_same() {
    let home = tempfile::tempdir().unwrap();
    let s = settings(home.path());
    let a = session(home.path(), A, &["the quokka migration plan", "step one"]);
    let b = session(home.path(), B, &["the wombat cache", "evicts hourly"]);
    index(&s);
    let lib = Library::new(s.clone());
    let stats = serde_json::to_value(lib.stats(&StatsParams::default()).unwrap().total).unwrap();
    let listed = ids(&lib, Source::Index, false);
    std::fs::remove_file(&a).unwrap();
    std::fs::remove_file(&b).unwrap();
    std::fs::remove_file(&s.index_path).unwrap();
    let d = refresh::discover_full(&s).unwrap();
    refresh::update(&s, &d, true, &mut |_| {}).unwrap();
    let mut again: Vec<(String, bool)> = ids(&lib, Source::Index, false);
    assert!(again.iter().all(|(_, deleted)| *deleted));
    again.iter_mut().for_each(|x| x.1 = false);
    assert_eq!(again, listed);
    for w in ["quokka", "wombat"] {
        assert_eq!(
            lib.search(&SearchParams::new(w)).unwrap().hits.len(),
            1,
            "{w}"
        );
    }
    let after = serde_json::to_value(lib.stats(&StatsParams::default()).unwrap().total).unwrap();
    assert_eq!(after, stats);
}

#[test]
fn a_rewritten_file_keeps_both_versions_and_the_diff_shows_what_went() {
    let home = tempfile::tempdir().unwrap();
    let s = settings(home.path());
    let a = session(
        home.path(),
        A,
        &[
            "first question about lemurs",
            "first answer",
            "second question",
            "second answer",
        ],
    );
    index(&s);
    // A rewrite that drops the middle (as a compression does).
    let mut f = std::fs::File::create(&a).unwrap();
    f.write_all(line(A, 1, "summary of the lemur talk").as_bytes())
        .unwrap();
    drop(f);
    index(&s);
    let (_, kept) = agentlog_api::archive::versions(&s, &A[..8]).unwrap();
    assert_eq!(kept.versions.len(), 2);
    let diff = agentlog_api::archive::diff(&s, &A[..8], 1, 2).unwrap();
    assert!(
        diff.lines()
            .any(|l| l.starts_with('-') && l.contains("second question")),
        "{diff}"
    );
    assert!(
        diff.lines()
            .any(|l| l.starts_with('+') && l.contains("summary of the lemur talk")),
        "{diff}"
    );
    let (_, old) = agentlog_api::archive::read_version(&s, &A[..8], Some(1)).unwrap();
    assert_eq!(old.session.message_count(), 4);
}

#[test]
fn forget_removes_a_deleted_session_for_good() {
    let home = tempfile::tempdir().unwrap();
    let s = settings(home.path());
    let a = session(home.path(), A, &["forget me", "ok"]);
    session(home.path(), B, &["keep me", "ok"]);
    index(&s);
    std::fs::remove_file(&a).unwrap();
    index(&s);
    let (path, on_disk) = agentlog_api::archive::forget(&s, &A[..8]).unwrap();
    assert_eq!((path, on_disk), (a, false));
    let lib = Library::new(s.clone());
    assert_eq!(
        ids(&lib, Source::Index, false),
        vec![(B.to_string(), false)]
    );
    assert_eq!(
        ids(&lib, Source::Files, false),
        vec![(B.to_string(), false)]
    );
    assert!(lib.read(&A[..8]).is_err());
}

#[test]
fn with_the_archive_off_a_deleted_session_is_gone_as_before() {
    let home = tempfile::tempdir().unwrap();
    let mut s = settings(home.path());
    s.archive = agentlog_api::settings::ArchivePlace::Off;
    let a = session(home.path(), A, &["x", "y"]);
    index(&s);
    std::fs::remove_file(&a).unwrap();
    index(&s);
    let lib = Library::new(s);
    assert!(ids(&lib, Source::Index, false).is_empty());
}

/// OpenCode's real database (two sessions, most rows in the write-ahead
/// log), put where OpenCode keeps it.
fn opencode_home(home: &Path) -> PathBuf {
    let fixtures = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../formats/tests/fixtures/opencode/1.18.33"
    );
    let dir = home.join(".local/share/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["opencode.db", "opencode.db-wal"] {
        std::fs::copy(Path::new(fixtures).join(f), dir.join(f)).unwrap();
    }
    dir.join("opencode.db")
}

const OC_PARENT: &str = "ses_df5decaf8ffeAqX67SjvHMne1P";

#[test]
fn sessions_inside_a_deleted_database_stay_sessions_and_it_comes_back() {
    let home = tempfile::tempdir().unwrap();
    let s = settings(home.path());
    let db = opencode_home(home.path());
    index(&s);
    let lib = Library::new(s.clone());
    let listed = ids(&lib, Source::Index, false);
    assert_eq!(listed.len(), 2, "{listed:?}");
    let before = lib.read(OC_PARENT).unwrap().session;
    let hits = |lib: &Library| {
        lib.search(&SearchParams::new("subagent"))
            .unwrap()
            .hits
            .iter()
            .map(|h| h.session_id.clone())
            .collect::<Vec<_>>()
    };
    let found_before = hits(&lib);
    assert!(
        found_before.contains(&OC_PARENT.to_string()),
        "{found_before:?}"
    );

    // The agent's database goes, log and all.
    std::fs::remove_file(&db).unwrap();
    std::fs::remove_file(db.with_extension("db-wal")).unwrap();
    index(&s);
    for source in [Source::Files, Source::Index] {
        let l = ids(&lib, source, true);
        assert_eq!(
            l.len(),
            2,
            "{source:?}: {l:?} {:?}",
            ids(&lib, source, false)
        );
        assert!(l.iter().all(|(_, deleted)| *deleted), "{l:?}");
    }
    let after = lib.read(OC_PARENT).unwrap().session;
    assert_eq!(after.message_count(), before.message_count());
    assert_eq!(
        agentlog_formats::render::markdown(&after),
        agentlog_formats::render::markdown(&before)
    );
    assert_eq!(hits(&lib), found_before);
    // Forgetting one session would forget the database's others: refused.
    let e = agentlog_api::archive::forget(&s, OC_PARENT).unwrap_err();
    assert!(e.to_string().contains("inside its agent's database"), "{e}");

    // Restored: one consistent database (the log folded in) that reads the
    // same.
    let (to, _) = agentlog_api::archive::restore(&s, OC_PARENT, None, None, false).unwrap();
    assert_eq!(to, db);
    assert!(!db.with_extension("db-wal").exists());
    index(&s);
    let l = ids(&lib, Source::Index, false);
    assert_eq!(l.len(), 2);
    assert!(l.iter().all(|(_, deleted)| !*deleted), "{l:?}");
    let back = lib.read(OC_PARENT).unwrap().session;
    assert_eq!(
        agentlog_formats::render::markdown(&back),
        agentlog_formats::render::markdown(&before)
    );
}

#[test]
fn a_database_changed_by_its_agent_keeps_each_state_once() {
    let home = tempfile::tempdir().unwrap();
    let s = settings(home.path());
    let db = opencode_home(home.path());
    index(&s);
    // Indexing again without a change keeps no new state.
    index(&s);
    let (_, kept) = agentlog_api::archive::versions(&s, OC_PARENT).unwrap();
    assert_eq!(kept.versions.len(), 1);
    let first = agentlog_archive::Archive::open(&s.archive_dir().unwrap())
        .unwrap()
        .stats()
        .unwrap();
    // The agent renames the session (a write in the log).
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute(
        "UPDATE session SET title = 'Renamed by the agent' WHERE id = ?1",
        [OC_PARENT],
    )
    .unwrap();
    drop(c);
    index(&s);
    let (_, kept) = agentlog_api::archive::versions(&s, OC_PARENT).unwrap();
    assert_eq!(kept.versions.len(), 2);
    let (_, old) = agentlog_api::archive::read_version(&s, OC_PARENT, Some(1)).unwrap();
    assert_eq!(old.session.meta.title.as_deref(), Some("Mock title"));
    let (_, new) = agentlog_api::archive::read_version(&s, OC_PARENT, Some(2)).unwrap();
    assert_eq!(
        new.session.meta.title.as_deref(),
        Some("Renamed by the agent")
    );
    // The second state stored only what changed, not a second database.
    let second = agentlog_archive::Archive::open(&s.archive_dir().unwrap())
        .unwrap()
        .stats()
        .unwrap();
    let db_size = kept.versions[1].stat.size;
    assert!(
        second.stored_bytes - first.stored_bytes < db_size / 2,
        "{first:?} {second:?} of a {db_size}-byte database"
    );
}
