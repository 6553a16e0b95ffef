//! The archive keeps every state it saw and gives each back byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_archive::{Archive, ArchiveError, Captured};
use std::io::Write;
use std::path::Path;

fn lines(n: usize, tag: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        writeln!(
            out,
            r#"{{"type":"user","uuid":"{tag}-{i}","message":{{"content":"line {i} of {tag}: the quick brown fox jumps over the lazy dog {}"}}}}"#,
            i * 7919 % 1000
        )
        .unwrap();
    }
    out
}

fn append(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

#[test]
fn appends_grow_one_version_and_rewrites_add_versions_each_given_back_exactly() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("s.jsonl");
    let mut a = Archive::open(&home.path().join("archive")).unwrap();

    let first = lines(3000, "a");
    std::fs::write(&file, &first).unwrap();
    assert_eq!(a.capture(&file, "claude").unwrap(), Captured::New);
    assert_eq!(a.capture(&file, "claude").unwrap(), Captured::Unchanged);
    let stored_first = a.stats().unwrap().stored_bytes;
    assert!(
        stored_first < first.len() as u64 / 3,
        "compressed: {stored_first}"
    );

    // An append: the same version grows, and costs about its new bytes.
    let more = lines(20, "b");
    append(&file, &more);
    assert_eq!(a.capture(&file, "claude").unwrap(), Captured::Appended);
    let versions = a.versions(&file).unwrap();
    // One version, and the state it grew from (its first bytes).
    assert_eq!(versions.len(), 2);
    assert!(versions[0].grew_into_next && !versions[1].grew_into_next);
    assert_eq!(versions[1].appends, 1);
    assert_eq!(a.read(&file, None).unwrap(), std::fs::read(&file).unwrap());
    assert_eq!(a.read(&file, Some(1)).unwrap(), first);
    let grown = a.stats().unwrap().stored_bytes - stored_first;
    assert!(grown < 64 * 1024, "an append stored {grown} bytes");

    // A rewrite (a compression that drops the middle): a new version,
    // and the old one is still there byte for byte.
    let before = std::fs::read(&file).unwrap();
    let mut rewritten = first[..first.len() / 4].to_vec();
    rewritten.extend_from_slice(&lines(10, "summary"));
    std::fs::write(&file, &rewritten).unwrap();
    assert_eq!(a.capture(&file, "claude").unwrap(), Captured::Rewritten);
    let versions = a.versions(&file).unwrap();
    assert_eq!(versions.len(), 3);
    assert_eq!(a.read(&file, Some(1)).unwrap(), first);
    assert_eq!(a.read(&file, Some(2)).unwrap(), before);
    assert_eq!(a.read(&file, Some(3)).unwrap(), rewritten);
    assert!(matches!(
        a.read(&file, Some(4)),
        Err(ArchiveError::NotKept {
            version: Some(4),
            ..
        })
    ));
    assert!(a.verify().unwrap().problems.is_empty());
}

#[test]
fn restore_puts_back_identical_bytes_and_never_over_a_file_unless_told() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("p").join("s.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let bytes = lines(500, "r");
    std::fs::write(&file, &bytes).unwrap();
    let mut a = Archive::open(&home.path().join("archive")).unwrap();
    a.capture(&file, "claude").unwrap();
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();

    let (to, n) = a.restore(&file, None, None, false).unwrap();
    assert_eq!((to.as_path(), n), (file.as_path(), bytes.len() as u64));
    assert_eq!(std::fs::read(&file).unwrap(), bytes);

    std::fs::write(&file, b"the user's own file").unwrap();
    let err = a.restore(&file, None, None, false).unwrap_err();
    assert!(matches!(err, ArchiveError::Exists { .. }), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), b"the user's own file");
    a.restore(&file, Some(1), None, true).unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}

#[test]
fn verify_finds_a_flipped_byte_and_reading_refuses_it() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("s.jsonl");
    std::fs::write(&file, lines(2000, "v")).unwrap();
    let dir = home.path().join("archive");
    let mut a = Archive::open(&dir).unwrap();
    a.capture(&file, "pi").unwrap();
    assert!(a.verify().unwrap().problems.is_empty());
    drop(a);
    // One bit of one chunk's stored bytes flipped, behind the archive's back.
    let c = rusqlite::Connection::open(dir.join(agentlog_archive::DB_NAME)).unwrap();
    let (id, mut z): (i64, Vec<u8>) = c
        .query_row("SELECT id, z FROM chunks ORDER BY id LIMIT 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let mid = z.len() / 2;
    z[mid] ^= 0x10;
    c.execute(
        "UPDATE chunks SET z = ?2 WHERE id = ?1",
        rusqlite::params![id, z],
    )
    .unwrap();
    drop(c);
    let a = Archive::open(&dir).unwrap();
    let report = a.verify().unwrap();
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(
        report.problems[0].contains(&format!("chunk {id}")),
        "{:?}",
        report.problems
    );
    let err = a.read(&file, None).unwrap_err();
    assert!(matches!(err, ArchiveError::Damaged { .. }), "{err}");
}

#[test]
fn forget_and_rewrite_leave_no_trace_of_the_old_bytes_in_the_files() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("s.jsonl");
    let secret = "sk-ant-api03-PLANTEDSECRETVALUE0123456789abcdefghij";
    let mut bytes = lines(300, "f");
    bytes.extend_from_slice(format!("{{\"key\":\"{secret}\"}}\n").as_bytes());
    std::fs::write(&file, &bytes).unwrap();
    let dir = home.path().join("archive");
    let mut a = Archive::open(&dir).unwrap();
    a.capture(&file, "claude").unwrap();
    let other = home.path().join("t.jsonl");
    std::fs::write(&other, lines(50, "t")).unwrap();
    a.capture(&other, "claude").unwrap();

    // Chunks are compressed, so the plain secret is not in the files: look
    // for it in what every stored chunk decompresses to.
    let n = a
        .rewrite_versions(&file, &mut |b| {
            Some(
                String::from_utf8_lossy(b)
                    .replace(secret, "[REDACTED]")
                    .into_bytes(),
            )
        })
        .unwrap();
    assert_eq!(n, 1);
    let back = a.read(&file, None).unwrap();
    assert!(!String::from_utf8_lossy(&back).contains(secret));
    assert!(a.verify().unwrap().problems.is_empty());
    drop(a);
    let c = rusqlite::Connection::open(dir.join(agentlog_archive::DB_NAME)).unwrap();
    let mut st = c.prepare("SELECT z FROM chunks").unwrap();
    let all: Vec<Vec<u8>> = st
        .query_map([], |r| r.get::<_, Vec<u8>>(0))
        .unwrap()
        .map(|z| zstd::bulk::decompress(&z.unwrap(), 1 << 20).unwrap())
        .collect();
    assert!(!all
        .iter()
        .any(|d| String::from_utf8_lossy(d).contains(secret)));

    let mut a = Archive::open(&dir).unwrap();
    assert!(a.forget(&file).unwrap());
    assert!(!a.holds(&file).unwrap());
    assert!(a.holds(&other).unwrap());
    assert!(a.verify().unwrap().problems.is_empty());
    assert!(!a.forget(&file).unwrap());
}

#[cfg(unix)]
#[test]
fn symbolic_links_fifos_and_missing_files_are_refused_with_nothing_stored() {
    let home = tempfile::tempdir().unwrap();
    let mut a = Archive::open(&home.path().join("archive")).unwrap();
    let outside = home.path().join("outside.txt");
    std::fs::write(&outside, "not a session").unwrap();
    let link = home.path().join("s.jsonl");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let err = a.capture(&link, "claude").unwrap_err().to_string();
    assert!(
        err.contains("symbolic link") && err.contains("s.jsonl"),
        "{err}"
    );

    let fifo = home.path().join("f.jsonl");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let err = a.capture(&fifo, "claude").unwrap_err().to_string();
    assert!(err.contains("FIFO"), "{err}");

    let err = a
        .capture(&home.path().join("none.jsonl"), "claude")
        .unwrap_err()
        .to_string();
    assert!(err.contains("none.jsonl"), "{err}");
    assert_eq!(a.stats().unwrap().sources, 0);
    assert_eq!(a.stats().unwrap().chunks, 0);
}

#[cfg(unix)]
#[test]
fn the_archive_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("data").join("archive");
    let file = home.path().join("s.jsonl");
    std::fs::write(&file, lines(10, "p")).unwrap();
    Archive::open(&dir).unwrap().capture(&file, "pi").unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        assert_eq!(mode(&p), 0o600, "{}", p.display());
    }
}

#[test]
fn capture_all_reads_only_what_changed_and_reports_what_it_could_not_keep() {
    let home = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for i in 0..40 {
        let p = home.path().join(format!("s{i}.jsonl"));
        std::fs::write(&p, lines(50 + i, &format!("c{i}"))).unwrap();
        files.push((p, "claude".to_string()));
    }
    files.push((home.path().join("gone.jsonl"), "claude".to_string()));
    let mut a = Archive::open(&home.path().join("archive")).unwrap();
    let r = a.capture_all(&files, &mut |_, _| {}).unwrap();
    assert_eq!((r.new, r.failed.len()), (40, 1), "{r:?}");
    assert!(r.failed[0].message.contains("gone.jsonl"));
    append(&files[3].0, &lines(2, "more"));
    std::fs::write(&files[5].0, lines(3, "other")).unwrap();
    let r = a.capture_all(&files[..40], &mut |_, _| {}).unwrap();
    assert_eq!(
        (r.unchanged, r.appended, r.rewritten, r.new),
        (38, 1, 1, 0),
        "{r:?}"
    );
    for (p, _) in &files[..40] {
        assert_eq!(a.read(p, None).unwrap(), std::fs::read(p).unwrap());
    }
    assert_eq!(a.versions(&files[5].0).unwrap().len(), 2);
}

#[test]
fn a_large_file_is_stored_ahead_and_read_back_whole() {
    // Past the bytes a capture holds before it stores chunks ahead: random
    // bytes do not compress.
    use rand::{RngCore, SeedableRng};
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("big.jsonl");
    let mut bytes = vec![0u8; 80 << 20];
    rand::rngs::StdRng::seed_from_u64(7).fill_bytes(&mut bytes);
    std::fs::write(&file, &bytes).unwrap();
    let mut a = Archive::open(&home.path().join("archive")).unwrap();
    let r = a
        .capture_all(&[(file.clone(), "pi".into())], &mut |_, _| {})
        .unwrap();
    assert_eq!(r.new, 1, "{r:?}");
    assert!(a.read(&file, None).unwrap() == bytes);
    assert!(a.verify().unwrap().problems.is_empty());
    let mut b = Archive::open(&home.path().join("archive2")).unwrap();
    assert_eq!(b.capture(&file, "pi").unwrap(), Captured::New);
    assert!(b.read(&file, None).unwrap() == bytes);
}

#[test]
fn prune_drops_old_states_and_long_gone_files_and_keeps_every_latest_state() {
    let home = tempfile::tempdir().unwrap();
    let a_file = home.path().join("a.jsonl");
    let b_file = home.path().join("b.jsonl");
    let mut a = Archive::open(&home.path().join("archive")).unwrap();
    std::fs::write(&a_file, lines(300, "a1")).unwrap();
    a.capture(&a_file, "pi").unwrap();
    append(&a_file, &lines(3, "a2"));
    a.capture(&a_file, "pi").unwrap();
    std::fs::write(&a_file, lines(10, "a3")).unwrap();
    a.capture(&a_file, "pi").unwrap();
    std::fs::write(&b_file, lines(20, "b")).unwrap();
    a.capture(&b_file, "pi").unwrap();
    std::fs::remove_file(&b_file).unwrap();
    a.note_presence(std::slice::from_ref(&b_file), &[]).unwrap();
    assert_eq!(a.versions(&a_file).unwrap().len(), 3);
    // Nothing is older than an hour ago.
    let hour_ago = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        - 3_600_000;
    assert_eq!(a.prune(hour_ago, false).unwrap(), (0, 0));
    // Everything is older than an hour from now: a dry run changes nothing.
    let later = hour_ago + 2 * 3_600_000;
    assert_eq!(a.prune(later, true).unwrap(), (2, 1));
    assert_eq!(a.versions(&a_file).unwrap().len(), 3);
    assert_eq!(a.prune(later, false).unwrap(), (2, 1));
    let left = a.versions(&a_file).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(
        a.read(&a_file, None).unwrap(),
        std::fs::read(&a_file).unwrap()
    );
    assert!(!a.holds(&b_file).unwrap());
    assert!(a.verify().unwrap().problems.is_empty());
}

/// A WAL database with one table, as an agent keeps its sessions.
fn agent_database(path: &Path, rows: usize) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(
        "PRAGMA journal_mode = WAL; CREATE TABLE message(id INTEGER PRIMARY KEY, text TEXT);",
    )
    .unwrap();
    for i in 0..rows {
        c.execute(
            "INSERT INTO message(text) VALUES (?1)",
            [format!(
                "message {i}: the quick brown fox {}",
                i * 7919 % 1000
            )],
        )
        .unwrap();
    }
    c
}

#[test]
fn a_database_is_kept_as_one_consistent_copy_log_included() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("store.db");
    let c = agent_database(&db, 200);
    let mut a = Archive::open(&home.path().join("archive")).unwrap();
    assert_eq!(a.capture_database(&db, "opencode").unwrap(), Captured::New);
    assert_eq!(
        a.capture_database(&db, "opencode").unwrap(),
        Captured::Unchanged
    );
    c.execute("INSERT INTO message(text) VALUES ('the last word')", [])
        .unwrap();
    assert_eq!(
        a.capture_database(&db, "opencode").unwrap(),
        Captured::Rewritten
    );
    // Each state is a database of its own that reads as it was then,
    // though most rows were only in the log.
    for (n, rows) in [(1, 200), (2, 201)] {
        let copy = home.path().join(format!("state{n}.db"));
        a.restore(&db, Some(n), Some(&copy), false).unwrap();
        let r = rusqlite::Connection::open(&copy).unwrap();
        let count: i64 = r
            .query_row("SELECT count(*) FROM message", [], |r| r.get(0))
            .unwrap();
        assert_eq!(count, rows);
        let ok: String = r
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
    }
    assert!(a.verify().unwrap().problems.is_empty());
    // Nothing of the copies is left beside the archive.
    let left: Vec<_> = std::fs::read_dir(home.path().join("archive"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(".copy-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_database_its_agent_holds_locked_is_refused_with_its_last_state_kept() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("store.db");
    drop(agent_database(&db, 50));
    let mut a = Archive::open(&home.path().join("archive")).unwrap();
    a.capture_database(&db, "opencode").unwrap();
    // The agent writes, and holds the database for itself.
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch("PRAGMA locking_mode = EXCLUSIVE;").unwrap();
    c.execute("INSERT INTO message(text) VALUES ('locked')", [])
        .unwrap();
    let err = a.capture_database(&db, "opencode").unwrap_err().to_string();
    assert!(
        err.contains("store.db") && err.contains("locked by its agent"),
        "{err}"
    );
    assert_eq!(a.versions(&db).unwrap().len(), 1);
    assert!(a.verify().unwrap().problems.is_empty());
    // Once the agent lets go, the next capture keeps the new state.
    drop(c);
    assert_eq!(
        a.capture_database(&db, "opencode").unwrap(),
        Captured::Rewritten
    );
}

#[test]
fn a_file_that_shrinks_is_a_new_state_and_one_shrinking_while_read_is_never_half_kept() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("s.jsonl");
    let long = lines(20_000, "s");
    std::fs::write(&file, &long).unwrap();
    let mut a = Archive::open(&home.path().join("archive")).unwrap();
    a.capture(&file, "claude").unwrap();
    let short = &long[..long.len() / 3];
    std::fs::write(&file, short).unwrap();
    assert_eq!(a.capture(&file, "claude").unwrap(), Captured::Rewritten);
    assert_eq!(a.read(&file, Some(1)).unwrap(), long);
    assert_eq!(a.read(&file, Some(2)).unwrap(), short);

    // A writer that truncates the file and fills it with another content
    // as fast as it can while captures run: each capture keeps a state the
    // file had at one moment (a prefix of one content), never bytes of two.
    let contents: Vec<Vec<u8>> = ["t", "u", "v"]
        .iter()
        .enumerate()
        .map(|(i, tag)| lines(6_000 * (i + 1), tag))
        .collect();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (file, contents, stop) = (file.clone(), contents.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::fs::write(&file, &contents[n % contents.len()]).unwrap();
                n += 1;
            }
        })
    };
    let (mut kept, mut changed) = (0, 0);
    for _ in 0..30 {
        match a.capture(&file, "claude") {
            Ok(_) => kept += 1,
            Err(ArchiveError::Changed { .. }) => changed += 1,
            Err(e) => panic!("{e}"),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    assert_eq!(kept + changed, 30);
    assert!(a.verify().unwrap().problems.is_empty());
    for v in a.versions(&file).unwrap().iter().skip(2) {
        let bytes = a.read(&file, Some(v.number)).unwrap();
        assert!(
            contents.iter().any(|c| c.starts_with(&bytes)),
            "state {} mixes two contents",
            v.number
        );
    }
}
