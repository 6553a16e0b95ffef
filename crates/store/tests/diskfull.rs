//! Disk-full tests on a small tmpfs mounted by the test (root only; the
//! test prints why and passes when it cannot mount one): an append that
//! does not fit fails with a clear error, leaves no partial line, and loses
//! nothing already stored; a snapshot that does not fit leaves the old one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_store::snapshot::write_atomic;
use agentlog_store::{AppendOptions, AppendWriter, StoreError};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn mount(size: &str) -> Option<SmallFs> {
        let dir = tempfile::tempdir().ok()?;
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(SmallFs { dir }),
            Ok(o) => {
                println!(
                    "SKIPPED: cannot mount a small tmpfs ({}); run as root to test a full disk",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                println!("SKIPPED: cannot run mount ({e}); run as root to test a full disk");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn line(n: usize, len: usize) -> Vec<u8> {
    let head = format!("{{\"id\":\"e{n}\",\"pad\":\"");
    let mut l = head.into_bytes();
    l.resize(len - 2, b'x');
    l.extend_from_slice(b"\"}");
    l
}

/// Fills the file system with a filler file until a write fails.
fn fill(dir: &Path) -> PathBuf {
    let filler = dir.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let chunk = vec![0u8; 4096];
    while std::io::Write::write_all(&mut f, &chunk).is_ok() {}
    filler
}

#[test]
fn a_full_disk_fails_appends_cleanly_and_loses_nothing() {
    let Some(fs) = SmallFs::mount("256k") else {
        return;
    };
    let path = fs.path().join("sessions/s.jsonl");
    // A snapshot beside the session, written while there is room (whether
    // a page is free once the appends below have filled the disk depends
    // on how their last page fills).
    let snap = fs.path().join("sessions/state.json");
    write_atomic(&snap, b"{\"v\":1}\n").unwrap();
    let (mut w, _) = AppendWriter::open(&path, AppendOptions::default()).unwrap();
    // Lines of 1000 bytes with a newline: page boundaries fall inside lines,
    // so the write that meets the full disk is often cut short.
    let mut stored: Vec<u8> = Vec::new();
    let mut n = 0;
    let err = loop {
        let l = line(n, 1000);
        match w.append_line(&l) {
            Ok(()) => {
                stored.extend_from_slice(&l);
                stored.push(b'\n');
                n += 1;
            }
            Err(e) => break e,
        }
        assert!(n < 10_000, "the small file system never filled up");
    };
    println!("disk full after {n} lines: {err}");
    assert!(err.is_disk_full(), "{err}");
    assert!(
        matches!(
            err,
            StoreError::Append {
                rolled_back: true,
                ..
            }
        ),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("s.jsonl")
            && msg.contains("No space left")
            && msg.contains("every earlier line is intact"),
        "{msg}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        stored,
        "the file holds exactly the stored lines"
    );
    assert_eq!(w.len(), stored.len() as u64);

    // Larger and smaller lines keep failing or fitting whole, never partly.
    for (i, len) in [9000usize, 5000, 3000, 200, 40].into_iter().enumerate() {
        let l = line(100_000 + i, len);
        match w.append_line(&l) {
            Ok(()) => {
                stored.extend_from_slice(&l);
                stored.push(b'\n');
            }
            Err(e) => assert!(e.is_disk_full(), "{e}"),
        }
        assert_eq!(std::fs::read(&path).unwrap(), stored);
    }

    // A snapshot that does not fit leaves the old one and no temp file.
    drop(w);
    let spare = fill(fs.path());
    let err = write_atomic(&snap, &vec![b' '; 300_000]).unwrap_err();
    assert!(err.is_disk_full(), "{err}");
    assert_eq!(std::fs::read(&snap).unwrap(), b"{\"v\":1}\n");
    let names: Vec<String> = std::fs::read_dir(fs.path().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.ends_with(".tmp")),
        "temp file left: {names:?}"
    );

    // With space again (the filler and the snapshot gone) the same file
    // opens clean and takes appends.
    std::fs::remove_file(&spare).unwrap();
    std::fs::remove_file(&snap).unwrap();
    let (mut w, rec) = AppendWriter::open(&path, AppendOptions::default()).unwrap();
    assert!(rec.is_clean(), "{rec}");
    w.append_line(&line(1, 100)).unwrap();
    stored.extend_from_slice(&line(1, 100));
    stored.push(b'\n');
    assert_eq!(std::fs::read(&path).unwrap(), stored);
}

#[test]
fn a_writer_survives_a_full_disk_and_goes_on_when_space_returns() {
    let Some(fs) = SmallFs::mount("128k") else {
        return;
    };
    let path = fs.path().join("s.jsonl");
    let (mut w, _) = AppendWriter::open(&path, AppendOptions::default()).unwrap();
    w.append_line(&line(0, 500)).unwrap();
    let filler = fill(fs.path());
    let mut failures = 0;
    for n in 1..50 {
        if let Err(e) = w.append_line(&line(n, 3000)) {
            assert!(e.is_disk_full(), "{e}");
            failures += 1;
        }
    }
    assert!(failures > 0, "the disk never filled up");
    let before = std::fs::read(&path).unwrap();
    assert!(before.ends_with(b"\n"));
    for l in before.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        serde_json::from_slice::<serde_json::Value>(l).unwrap();
    }
    std::fs::remove_file(&filler).unwrap();
    w.append_line(&line(99, 3000)).unwrap();
    let after = std::fs::read(&path).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    assert!(after.ends_with(b"\"}\n"));
}

#[test]
fn a_grouped_writer_keeps_every_synced_group_on_a_full_disk() {
    let Some(fs) = SmallFs::mount("128k") else {
        return;
    };
    let path = fs.path().join("s.jsonl");
    let sync = agentlog_store::SyncPolicy::Grouped {
        entries: 4,
        interval: std::time::Duration::from_secs(3600),
    };
    let (mut w, _) = AppendWriter::open(
        &path,
        AppendOptions {
            sync,
            lock: agentlog_store::LockMode::Fail,
        },
    )
    .unwrap();
    let mut written: Vec<u8> = Vec::new();
    let mut durable: Vec<u8> = Vec::new();
    let mut n = 0;
    let err = loop {
        let l = line(n, 900);
        match w.append_line(&l) {
            Ok(()) => {
                written.extend_from_slice(&l);
                written.push(b'\n');
                if w.pending() == 0 {
                    durable.clone_from(&written);
                }
                n += 1;
            }
            Err(e) => break e,
        }
        assert!(n < 10_000, "the small file system never filled up");
    };
    assert!(err.is_disk_full(), "{err}");
    assert!(
        matches!(
            err,
            StoreError::Append {
                rolled_back: true,
                ..
            }
        ),
        "{err}"
    );
    // Every synced group is there, whole; the failed group left nothing.
    assert_eq!(std::fs::read(&path).unwrap(), durable);
    assert_eq!(w.pending(), 0);
    assert_eq!(w.len(), durable.len() as u64);
}
