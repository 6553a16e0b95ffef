//! Durability of the append-only writer on real session files: opening a
//! copy of every JSON-lines fixture for appending changes nothing but a
//! torn tail (kept in a sidecar, byte for byte) or a missing newline, the
//! format reader still reads the file afterwards, and appends land after
//! the last whole line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_store::read::{read_whole_lines, LineReader};
use agentlog_store::snapshot::write_atomic;
use agentlog_store::{AppendOptions, AppendWriter, LockMode, SyncPolicy};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn jsonl_fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from(FIXTURES)];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("jsonl" | "ndjson")
            ) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn copy_to(dir: &Path, src: &Path) -> PathBuf {
    let p = dir.join(src.file_name().unwrap());
    std::fs::write(&p, std::fs::read(src).unwrap()).unwrap();
    p
}

#[test]
fn opening_real_sessions_for_appending_loses_nothing() {
    let fixtures = jsonl_fixtures();
    assert!(fixtures.len() >= 10, "fixtures not found under {FIXTURES}");
    let (mut torn, mut newline, mut clean) = (0, 0, 0);
    for src in &fixtures {
        let dir = tempfile::tempdir().unwrap();
        let original = std::fs::read(src).unwrap();
        let p = copy_to(dir.path(), src);
        let format = agentlog_formats::registry::detect(&p).ok();
        let entries_before = format
            .and_then(|f| f.read_path(&p).ok())
            .map(|r| r.session.entries.len());

        let (mut w, rec) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        let after_open = std::fs::read(&p).unwrap();
        if rec.torn_bytes > 0 {
            torn += 1;
            let cut = std::fs::read(rec.sidecar.as_ref().unwrap()).unwrap();
            assert_eq!(
                [after_open.clone(), cut].concat(),
                original,
                "{}: kept + cut != original",
                src.display()
            );
            assert!(after_open.is_empty() || after_open.ends_with(b"\n"));
        } else if rec.newline_added {
            newline += 1;
            assert_eq!(
                after_open,
                [original.clone(), b"\n".to_vec()].concat(),
                "{}",
                src.display()
            );
        } else {
            clean += 1;
            assert_eq!(
                after_open,
                original,
                "{}: a clean file was changed",
                src.display()
            );
        }

        // The format still reads everything it read before (a torn tail
        // was never an entry).
        if let (Some(f), Some(before)) = (format, entries_before) {
            let read = f
                .read_path(&p)
                .unwrap_or_else(|e| panic!("{}: {e}", src.display()));
            assert_eq!(
                read.session.entries.len(),
                before,
                "{}: entries changed",
                src.display()
            );
        }

        // An append lands after the last whole line, never glued to one.
        w.append_line(br#"{"type":"agentlog-durability-test"}"#)
            .unwrap();
        w.close().unwrap();
        let now = std::fs::read(&p).unwrap();
        assert_eq!(&now[..after_open.len()], &after_open[..]);
        assert_eq!(
            &now[after_open.len()..],
            b"{\"type\":\"agentlog-durability-test\"}\n"
        );
    }
    println!(
        "{} fixtures: {clean} clean, {newline} lacked only a newline, {torn} had a torn tail",
        fixtures.len()
    );
    assert!(torn >= 1, "the truncated fixture should have a torn tail");
}

#[test]
fn readers_of_a_real_session_cut_anywhere_see_only_its_whole_lines() {
    let src = Path::new(FIXTURES).join("native/claude/as-stage0-small.jsonl");
    let original = std::fs::read(&src).unwrap();
    let line_ends: Vec<usize> = original
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    // The file as a crash (or a write in progress) may leave it: cut at
    // many offsets, inside lines and right after them.
    for cut in (0..=original.len())
        .step_by(97)
        .chain(line_ends.iter().copied())
    {
        std::fs::write(&p, &original[..cut]).unwrap();
        let expect_len = line_ends
            .iter()
            .copied()
            .filter(|&e| e <= cut)
            .max()
            .unwrap_or(0);
        assert_eq!(read_whole_lines(&p).unwrap(), &original[..expect_len]);
        let mut r = LineReader::open(&p).unwrap();
        let mut n = 0;
        while let Some(line) = r.next_line().unwrap() {
            serde_json::from_slice::<serde_json::Value>(&line).unwrap();
            n += 1;
        }
        assert_eq!(r.offset(), expect_len as u64);
        assert_eq!(n, line_ends.iter().filter(|&&e| e <= cut).count());
    }
}

#[test]
fn reopening_under_each_policy_keeps_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    let policies = [
        SyncPolicy::EveryEntry,
        SyncPolicy::GROUPED_DEFAULT,
        SyncPolicy::Grouped {
            entries: 3,
            interval: std::time::Duration::ZERO,
        },
        SyncPolicy::None,
    ];
    let mut expected = Vec::new();
    for (k, sync) in policies.into_iter().enumerate() {
        let (mut w, rec) = AppendWriter::open(
            &p,
            AppendOptions {
                sync,
                lock: LockMode::Fail,
            },
        )
        .unwrap();
        assert!(rec.is_clean(), "{rec}");
        for i in 0..10 {
            let v = serde_json::json!({"policy": k, "i": i, "text": "line \n with \"escapes\" ✓"});
            w.append_json(&v).unwrap();
            expected.push(v);
        }
        // A grouped writer with a zero interval syncs on every append.
        if sync
            == (SyncPolicy::Grouped {
                entries: 3,
                interval: std::time::Duration::ZERO,
            })
        {
            assert_eq!(w.pending(), 0);
        }
        drop(w);
    }
    let got: Vec<serde_json::Value> = std::fs::read_to_string(&p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn snapshots_replace_whole_files_of_real_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("state/session.json");
    let a = std::fs::read(Path::new(FIXTURES).join("native/claude/as-stage0-small.jsonl")).unwrap();
    let b = std::fs::read(Path::new(FIXTURES).join("seeds/pi-mono/large-session.jsonl")).unwrap();
    for bytes in [&a, &b, &a] {
        write_atomic(&target, bytes).unwrap();
        assert_eq!(&std::fs::read(&target).unwrap(), bytes);
    }
    let names: Vec<_> = std::fs::read_dir(target.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}
