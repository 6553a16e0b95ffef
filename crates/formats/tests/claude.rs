#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The Claude Code format against the real and synthetic fixtures.

use agentlog_formats::claude::{self, FORMAT};
use agentlog_formats::{Format, Read, Severity};
use agentlog_model::{BlockKind, EntryKind, Role, Session};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/native/claude"
);

fn fixture(rel: &str) -> PathBuf {
    Path::new(FIXTURES).join(rel)
}

fn read(rel: &str) -> Read {
    FORMAT.read_path(&fixture(rel)).unwrap()
}

fn all_fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from(FIXTURES)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    assert!(out.len() >= 21, "fixtures missing: {out:?}");
    out
}

/// The JSON values of every line that parses.
fn values(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
        .collect()
}

fn write(session: &Session) -> Vec<u8> {
    let mut out = Vec::new();
    FORMAT.write(session, &mut out).unwrap();
    out
}

fn messages(s: &Session) -> Vec<&agentlog_model::Message> {
    s.entries.iter().filter_map(|e| e.message()).collect()
}

fn count(s: &Session, role: Role) -> usize {
    messages(s).iter().filter(|m| m.role == role).count()
}

#[test]
fn every_fixture_round_trips_line_by_line() {
    for path in all_fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let read = FORMAT.read_bytes(&path, &bytes).unwrap();
        let out = write(&read.session);
        let want = values(&bytes);
        let got = values(&out);
        assert_eq!(got.len(), want.len(), "{}: line count", path.display());
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{}: valid line {}", path.display(), i + 1);
        }
        // Reading the written file gives the same session.
        let again = FORMAT.read_bytes(&path, &out).unwrap();
        assert_eq!(
            again.session.entries.len(),
            read.session.entries.len(),
            "{}",
            path.display()
        );
        assert_eq!(again.session.meta, read.session.meta, "{}", path.display());
    }
}
