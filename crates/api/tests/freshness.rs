#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The index's freshness journal: commands look at directories, not at
//! every file, and still find what agents just wrote.

use agentlog_api::refresh;
use agentlog_api::Settings;
use agentlog_index::SearchParams;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A Claude Code record line of session `sid` saying `text`.
fn line(sid: &str, uuid: &str, parent: Option<&str>, text: &str) -> String {
    serde_json::json!({
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": sid,
        "timestamp": "2026-01-01T10:00:00Z",
        "cwd": "/p",
        "message": {"role": "user", "content": text},
    })
    .to_string()
        + "\n"
}

fn session(home: &Path, project: &str, sid: &str, text: &str) -> PathBuf {
    let dir = home.join(".claude/projects").join(project);
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{sid}.jsonl"));
    std::fs::write(&p, line(sid, &format!("{sid}-1"), None, text)).unwrap();
    p
}

fn append(path: &Path, sid: &str, n: u32, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    let parent = format!("{sid}-{}", n - 1);
    f.write_all(line(sid, &format!("{sid}-{n}"), Some(&parent), text).as_bytes())
        .unwrap();
}

/// The ids of the sessions where `word` is found, after the refresh every
/// command does.
fn found(settings: &Settings, word: &str) -> Vec<String> {
    let (index, _) = refresh::refreshed(settings, &mut |_| {}).unwrap();
    let r = agentlog_api::search(&index, &SearchParams::new(word)).unwrap();
    let mut ids: Vec<String> = r.hits.into_iter().map(|h| h.session_id).collect();
    ids.sort();
    ids.dedup();
    ids
}

fn days_ago(path: &Path, days: u64) {
    let t = std::time::SystemTime::now() - std::time::Duration::from_secs(days * 86_400);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

#[test]
fn new_sessions_and_appends_are_found_without_a_stat_of_every_file() {
    let home = tempfile::tempdir().unwrap();
    let settings = Settings::with_home(home.path());
    let a = session(home.path(), "-p", "aaaa", "alphaword here");
    assert_eq!(found(&settings, "alphaword"), ["aaaa"]);
    let (index, _) = refresh::refreshed(&settings, &mut |_| {}).unwrap();
    let journal = index
        .journal()
        .unwrap()
        .expect("a journal after a full check");
    assert!(
        journal
            .dirs
            .iter()
            .any(|(d, _)| d.ends_with(".claude/projects/-p")),
        "{journal:?}"
    );
    drop(index);

    // An append to a session being written: found (it is recent).
    append(&a, "aaaa", 2, "gammaword now");
    assert_eq!(found(&settings, "gammaword"), ["aaaa"]);
    // A new session beside it, and one in a new project folder.
    session(home.path(), "-p", "bbbb", "betaword");
    assert_eq!(found(&settings, "betaword"), ["bbbb"]);
    session(home.path(), "-q", "cccc", "deltaword");
    assert_eq!(found(&settings, "deltaword"), ["cccc"]);
    // A session removed: agentlog's archive keeps it, so it is still
    // found; without the archive it is no longer found.
    std::fs::remove_file(home.path().join(".claude/projects/-p/bbbb.jsonl")).unwrap();
    assert_eq!(found(&settings, "betaword"), ["bbbb"]);
    let mut off = settings.clone();
    off.archive = agentlog_api::settings::ArchivePlace::Off;
    off.index_path = home.path().join("without-archive.sqlite");
    assert!(found(&off, "betaword").is_empty());
}

#[test]
fn a_search_does_not_wait_for_an_update_when_nothing_changed() {
    // Another process updating the index (a full check in the background)
    // holds its lock; a search that finds nothing changed answers anyway.
    let home = tempfile::tempdir().unwrap();
    let settings = Settings::with_home(home.path());
    let a = session(home.path(), "-p", "aaaa", "alphaword here");
    assert_eq!(found(&settings, "alphaword"), ["aaaa"]);
    let held = hold_lock(&settings);
    let (tx, rx) = std::sync::mpsc::channel();
    let s = settings.clone();
    std::thread::spawn(move || tx.send(found(&s, "alphaword")).unwrap());
    let answer = rx.recv_timeout(std::time::Duration::from_secs(60));
    assert_eq!(answer.ok(), Some(vec!["aaaa".to_string()]));
    // Something to read waits for the lock, then is found.
    append(&a, "aaaa", 2, "gammaword now");
    let (tx, rx) = std::sync::mpsc::channel();
    let s = settings.clone();
    std::thread::spawn(move || tx.send(found(&s, "gammaword")).unwrap());
    drop(held);
    let answer = rx.recv_timeout(std::time::Duration::from_secs(60));
    assert_eq!(answer.ok(), Some(vec!["aaaa".to_string()]));
}

/// Holds the update lock of the index of `settings`, as a process updating
/// it does, until dropped.
fn hold_lock(settings: &Settings) -> std::fs::File {
    let mut lock_path = settings.index_path.as_os_str().to_owned();
    lock_path.push(".lock");
    let held = std::fs::File::options()
        .read(true)
        .write(true)
        .open(&lock_path)
        .unwrap();
    held.lock().unwrap();
    held
}

/// What `agentlog index` does: a full check of every file, in a thread;
/// its report arrives on the channel.
fn full_check(settings: &Settings) -> std::sync::mpsc::Receiver<agentlog_index::UpdateReport> {
    let (tx, rx) = std::sync::mpsc::channel();
    let s = settings.clone();
    std::thread::spawn(move || {
        let d = refresh::discover_full(&s).unwrap();
        tx.send(refresh::update(&s, &d, false, &mut |_| {}).unwrap().1)
            .unwrap()
    });
    rx
}

#[test]
fn a_full_check_waits_for_another_update_only_when_it_has_something_to_read() {
    // Another process holds the update lock (a full check of its own, which
    // at 10 GB stats files for 0.5 s). This one stats every file without
    // the lock: with nothing changed it answers at once...
    let home = tempfile::tempdir().unwrap();
    let settings = Settings::with_home(home.path());
    let a = session(home.path(), "-p", "aaaa", "alphaword here");
    assert_eq!(found(&settings, "alphaword"), ["aaaa"]);
    let held = hold_lock(&settings);
    let answer = full_check(&settings).recv_timeout(std::time::Duration::from_secs(60));
    let report = answer.expect("a full check with nothing to read waited for the lock");
    assert_eq!(
        (report.files, report.unchanged, report.read_full),
        (1, 1, 0)
    );
    // ...and with an append to read, it waits for the lock, then reads it.
    append(&a, "aaaa", 2, "gammaword now");
    let rx = full_check(&settings);
    assert!(
        rx.recv_timeout(std::time::Duration::from_millis(500))
            .is_err(),
        "the append was read while another process held the lock"
    );
    drop(held);
    let report = rx.recv_timeout(std::time::Duration::from_secs(60)).unwrap();
    assert_eq!(report.appended + report.read_full, 1, "{report:?}");
    assert_eq!(found(&settings, "gammaword"), ["aaaa"]);
}

/// Rows of the full-text index's segment data (each small update adds a
/// segment of its own until segments are merged).
fn segment_rows(settings: &Settings) -> i64 {
    let db = rusqlite::Connection::open(&settings.index_path).unwrap();
    db.query_row("SELECT count(*) FROM fts_data", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_command_reading_an_append_leaves_merging_to_the_full_check() {
    // Merging the full-text segments took 40 % of a search right after an
    // append at 10 GB. The update a command makes of recent files adds
    // its segment and leaves merging to the next full check (`agentlog
    // index`, the background check, the watcher); FTS5 itself merges a
    // level that reaches 64 segments, so they never pile up.
    let home = tempfile::tempdir().unwrap();
    let settings = Settings::with_home(home.path());
    let a = session(home.path(), "-p", "aaaa", "alphaword here");
    assert_eq!(found(&settings, "alphaword"), ["aaaa"]);
    let before = segment_rows(&settings);
    for n in 2..42 {
        append(&a, "aaaa", n, &format!("note{n}word"));
        assert_eq!(found(&settings, &format!("note{n}word")), ["aaaa"]);
    }
    let unmerged = segment_rows(&settings);
    assert!(
        unmerged >= before + 40,
        "{before} -> {unmerged} rows: the updates merged"
    );
    full_check(&settings).recv().unwrap();
    let merged = segment_rows(&settings);
    assert!(merged < unmerged, "{unmerged} -> {merged}: nothing merged");
    for n in 2..42 {
        assert_eq!(found(&settings, &format!("note{n}word")), ["aaaa"]);
    }
    // Far more updates than a level holds: FTS5 merges on its own, and
    // every word is still found.
    for n in 42..140 {
        append(&a, "aaaa", n, &format!("note{n}word"));
        refresh::refreshed(&settings, &mut |_| {}).unwrap();
    }
    assert!(segment_rows(&settings) < before + 98);
    for n in (2..140).step_by(7) {
        assert_eq!(found(&settings, &format!("note{n}word")), ["aaaa"]);
    }
}

#[test]
fn an_append_to_an_old_session_waits_for_the_full_check() {
    let home = tempfile::tempdir().unwrap();
    let settings = Settings::with_home(home.path());
    let old = session(home.path(), "-p", "oldd", "firstword");
    days_ago(&old, 3);
    assert_eq!(found(&settings, "firstword"), ["oldd"]);
    // Resumed days later: the file grows, its folder does not change. The
    // quick check (folders and recent files) does not see it: that is
    // what keeps it from a stat of every file...
    append(&old, "oldd", 2, "resumedword");
    assert!(found(&settings, "resumedword").is_empty());
    let (index, _) = refresh::refreshed(&settings, &mut |_| {}).unwrap();
    // ...and the full check is not due yet (the CLI starts one in the
    // background when it is)...
    assert!(!refresh::full_check_due(&index));
    // ...which finds it.
    index.clear_journal().unwrap();
    drop(index);
    assert_eq!(found(&settings, "resumedword"), ["oldd"]);
}

#[test]
fn a_journal_of_other_settings_does_not_count() {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let mut settings = Settings::with_home(home.path());
    session(home.path(), "-p", "aaaa", "alphaword");
    assert_eq!(found(&settings, "alphaword"), ["aaaa"]);
    // The same index, another root for Claude: a full check, not the
    // journal of the home's folders.
    session(elsewhere.path(), "-r", "zzzz", "zetaword");
    settings.env.roots.insert(
        "claude".into(),
        vec![elsewhere.path().join(".claude/projects")],
    );
    assert_eq!(found(&settings, "zetaword"), ["zzzz"]);
}

#[test]
fn the_full_check_is_claimed_once() {
    let home = tempfile::tempdir().unwrap();
    let settings = Settings::with_home(home.path());
    session(home.path(), "-p", "aaaa", "alphaword");
    let (index, _) = refresh::refreshed(&settings, &mut |_| {}).unwrap();
    index.clear_journal().unwrap();
    // Due (no journal): the first caller claims it, the next does not.
    assert!(refresh::full_check_due(&index));
    assert!(!refresh::full_check_due(&index));
}

#[test]
fn a_read_claims_a_due_check_only_for_a_caller_that_runs_checks() {
    let home = tempfile::tempdir().unwrap();
    let mut settings = Settings::with_home(home.path());
    session(home.path(), "-p", "aaaa", "alphaword");
    let fresh = refresh::for_reading(&settings, &mut |_| {}).unwrap();
    assert!(matches!(fresh.refreshed, refresh::Refreshed::Built(_)));
    assert!(!fresh.check_due);
    // The last full check a minute ago: one is due.
    let aged = |index: &agentlog_index::Index| {
        let mut journal = index.journal().unwrap().unwrap();
        journal.checked_ms -= 60_000;
        index.save_journal(&journal).unwrap();
    };
    aged(&fresh.index);
    drop(fresh);
    // Settings made without the process run no checks: none is claimed.
    assert!(!settings.background_checks);
    let fresh = refresh::for_reading(&settings, &mut |_| {}).unwrap();
    assert_eq!(fresh.refreshed, refresh::Refreshed::Current);
    assert!(!fresh.check_due);
    drop(fresh);
    // A caller that runs them claims it, once.
    settings.background_checks = true;
    let fresh = refresh::for_reading(&settings, &mut |_| {}).unwrap();
    assert!(fresh.check_due);
    drop(fresh);
    assert!(
        !refresh::for_reading(&settings, &mut |_| {})
            .unwrap()
            .check_due
    );
}

#[test]
fn a_listing_reads_the_index_once_there_is_one() {
    use agentlog_api::list::Source;
    let home = tempfile::tempdir().unwrap();
    let settings = Settings::with_home(home.path());
    session(home.path(), "-p", "aaaa", "alphaword");
    assert_eq!(Source::Auto.resolve(&settings), Source::Files);
    assert_eq!(Source::Index.resolve(&settings), Source::Index);
    refresh::refreshed(&settings, &mut |_| {}).unwrap();
    assert_eq!(Source::Auto.resolve(&settings), Source::Index);
    assert_eq!(Source::Files.resolve(&settings), Source::Files);
}

#[test]
fn the_journal_of_a_background_check_counts_for_the_next_command() {
    let home = tempfile::tempdir().unwrap();
    session(home.path(), "-p", "aaaa", "alphaword");
    let settings = Settings::with_home(home.path());
    // The full check a command starts in the background runs with
    // AGENTLOG_NO_BACKGROUND set (so that it starts no other).
    let mut background = settings.clone();
    background
        .env
        .vars
        .insert("AGENTLOG_NO_BACKGROUND".into(), "1".into());
    let (index, _) = refresh::refreshed(&background, &mut |_| {}).unwrap();
    let kept = index.journal().unwrap().expect("a journal");
    drop(index);
    // The next command relies on that journal: no full check of its own,
    // which would keep a journal again.
    let (index, _) = refresh::refreshed(&settings, &mut |_| {}).unwrap();
    assert_eq!(index.journal().unwrap(), Some(kept));
}
