//! One writer, many readers: readers during writes see only whole lines;
//! a second writer is refused with the holder named, or waits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_store::lock::{self, LockState};
use agentlog_store::read::{read_whole_lines, LineReader};
use agentlog_store::{AppendOptions, AppendWriter, LockMode, StoreError, SyncPolicy};
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

const WRITER: &str = env!("CARGO_BIN_EXE_crash-writer");

fn spawn_writer(
    path: &std::path::Path,
    run: u64,
    extra: &[&str],
) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(WRITER)
        .arg(path)
        .arg(run.to_string())
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

fn check_entry(line: &[u8], expect_n: u64) {
    let v: serde_json::Value = serde_json::from_slice(line).unwrap_or_else(|e| {
        panic!(
            "a reader saw a partial line ({e}): {:?}",
            String::from_utf8_lossy(&line[..line.len().min(60)])
        )
    });
    assert_eq!(v["n"].as_u64(), Some(expect_n), "lines out of order");
}

#[test]
fn readers_during_writes_see_only_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    const COUNT: u64 = 8_000;
    // A writer process syncing every few lines, so that readers keep up and
    // now and then meet a write in progress; lines of up to 40 KB span
    // several pages.
    let (mut child, rx) = spawn_writer(
        &path,
        1,
        &["--policy", "grouped", "--count", &COUNT.to_string()],
    );
    assert!(rx.recv().unwrap().starts_with("open "));
    let mut follower = LineReader::open(&path).unwrap();
    let mut followed = 0u64;
    let mut snapshots = 0u64;
    let mut polls = 0u64;
    let mut partial_tails_seen = 0u64;
    let mut raw = std::fs::File::open(&path).unwrap();
    while followed < COUNT {
        polls += 1;
        // Follow line by line.
        while let Some(line) = follower.next_line().unwrap() {
            check_entry(&line, followed);
            followed += 1;
        }
        // Look at the raw end of the file: a line may be half there.
        let len = raw.metadata().unwrap().len();
        if len > 0 {
            let mut last = [0u8; 1];
            raw.seek(SeekFrom::Start(len - 1)).unwrap();
            if raw.read(&mut last).unwrap() == 1 && last[0] != b'\n' {
                partial_tails_seen += 1;
            }
        }
        // Now and then read the whole file afresh, as a one-shot reader would.
        if polls.is_multiple_of(16) {
            let whole = read_whole_lines(&path).unwrap();
            for (n, line) in whole
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .enumerate()
            {
                check_entry(line, n as u64);
            }
            snapshots += 1;
        }
    }
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let said: Vec<String> = rx.iter().collect();
    assert_eq!(said.last().map(String::as_str), Some("done"));
    assert_eq!(follower.next_line().unwrap(), None);
    println!("{followed} lines followed in {polls} polls ({partial_tails_seen} met a line in progress), {snapshots} whole-file reads");
}

#[test]
fn a_second_writer_is_refused_with_the_holder_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let (mut child, rx) = spawn_writer(&path, 1, &["--policy", "every"]);
    assert!(rx.recv().unwrap().starts_with("open "));
    let err = AppendWriter::open(&path, AppendOptions::default()).unwrap_err();
    match &err {
        StoreError::Locked { holder, .. } => {
            assert!(
                holder.contains(&format!("pid {}", child.id())),
                "holder {holder:?}"
            );
            assert!(holder.contains(&lock::hostname()), "holder {holder:?}");
            assert!(holder.contains(" since "), "holder {holder:?}");
        }
        other => panic!("expected Locked, got {other}"),
    }
    assert!(err.to_string().contains("s.jsonl"), "{err}");
    assert!(matches!(lock::probe(&path).unwrap(), LockState::Held(Some(h)) if h.pid == child.id()));
    // Killed, the writer leaves its holder file behind: stale, not held.
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        matches!(lock::probe(&path).unwrap(), LockState::Stale(Some(h)) if h.pid == child.id() && h.is_dead_here())
    );
    // The next writer takes over and replaces the stale holder record.
    let (w, _) = AppendWriter::open(&path, AppendOptions::default()).unwrap();
    assert_eq!(lock::read_holder(&path).unwrap().pid, std::process::id());
    w.close().unwrap();
    assert_eq!(lock::probe(&path).unwrap(), LockState::Free);
}

#[test]
fn a_waiting_writer_goes_on_when_the_holder_is_done() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let opts = AppendOptions {
        sync: SyncPolicy::EveryEntry,
        lock: LockMode::Wait,
    };
    let (mut first, _) = AppendWriter::open(&path, opts).unwrap();
    first.append_line(b"{\"w\":1,\"n\":0}").unwrap();
    // A second writer process asks to wait.
    let (mut child, rx) = spawn_writer(&path, 2, &["--policy", "every", "--wait", "--count", "3"]);
    // While it waits, the holder keeps writing; none of the waiter's lines
    // may come between.
    for n in 1..200u64 {
        first
            .append_line(format!("{{\"w\":1,\"n\":{n}}}").as_bytes())
            .unwrap();
    }
    assert!(
        rx.try_recv().is_err(),
        "the second writer opened while the first held the lock"
    );
    assert!(
        matches!(lock::probe(&path).unwrap(), LockState::Held(Some(h)) if h.pid == std::process::id())
    );
    first.close().unwrap();
    assert!(rx.recv().unwrap().starts_with("open 0 false"));
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let text = read_whole_lines(&path).unwrap();
    let lines: Vec<serde_json::Value> = text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 203);
    assert!(lines[..200].iter().all(|v| v["w"] == 1));
    assert!(lines[200..]
        .iter()
        .all(|v| v["id"].as_str().unwrap().starts_with("r2-")));
}

#[test]
fn two_writers_in_one_process_are_refused_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let (_w, _) = AppendWriter::open(&path, AppendOptions::default()).unwrap();
    let err = AppendWriter::open(&path, AppendOptions::default()).unwrap_err();
    assert!(matches!(err, StoreError::Locked { .. }), "{err}");
}
