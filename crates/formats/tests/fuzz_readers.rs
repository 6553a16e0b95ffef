//! Fuzzes every registered reader: random bytes, and real fixture files (the
//! shared ones and this crate's `tests/fixtures`) cut,
//! corrupted and spliced at random places. A reader may return an error or
//! diagnostics, but must never panic. Runs for a bounded number of cases
//! (`PROPTEST_CASES`, default 64 per strategy and format).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_formats::registry;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures"
    ))
    .to_path_buf()
}

/// Small real files of every kind (under 64 KiB, so mutated copies stay fast).
fn seed_files() -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![
        fixtures(),
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")).to_path_buf(),
    ];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                if bytes.len() < 64 * 1024 && !p.extension().is_some_and(|x| x == "md" || x == "db")
                {
                    out.push((p, bytes));
                }
            }
        }
    }
    out.sort();
    out
}

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// What a mutation does to a real file.
#[derive(Debug, Clone)]
enum Mutation {
    Truncate(usize),
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    DuplicateLine(usize),
    DropNewlines,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 0..64))
            .prop_map(|(i, v)| Mutation::Insert(i, v)),
        (
            any::<usize>(),
            prop::sample::select(vec![
                b"{}".to_vec(),
                b"null".to_vec(),
                b"[]".to_vec(),
                b"{\"type\":\"message\"}".to_vec(),
                b"{\"type\":\"session\",\"version\":99}".to_vec(),
                b"{\"id\":1,\"parentId\":{}}".to_vec(),
                b"\xff\xfe".to_vec(),
                b"{\"$rewindTo\":\"x\"}".to_vec(),
                b"{\"$set\":{\"messages\":7}}".to_vec(),
            ])
        )
            .prop_map(|(i, v)| Mutation::Insert(i, [b"\n".as_slice(), &v, b"\n"].concat())),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        Just(Mutation::DropNewlines),
    ]
}

fn apply(bytes: &[u8], m: &Mutation) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let at = |i: usize| if b.is_empty() { 0 } else { i % (b.len() + 1) };
    match m {
        Mutation::Truncate(i) => {
            let n = at(*i);
            b.truncate(n);
        }
        Mutation::Flip(i, x) => {
            if !b.is_empty() {
                let n = i % b.len();
                b[n] ^= x | 1;
            }
        }
        Mutation::Insert(i, v) => {
            let n = at(*i);
            b.splice(n..n, v.iter().copied());
        }
        Mutation::DuplicateLine(i) => {
            let lines: Vec<&[u8]> = bytes.split(|&c| c == b'\n').collect();
            let l = lines[i % lines.len()];
            b.extend_from_slice(b"\n");
            b.extend_from_slice(l);
        }
        Mutation::DropNewlines => b.retain(|&c| c != b'\n'),
    }
    b
}

#[test]
fn readers_survive_random_bytes() {
    for format in registry::all() {
        let mut runner = TestRunner::new(config());
        let result = runner.run(&prop::collection::vec(any::<u8>(), 0..2048), |bytes| {
            let _ = format.read_bytes(Path::new("fuzz.jsonl"), &bytes);
            Ok(())
        });
        assert!(result.is_ok(), "{} reader: {result:?}", format.name());
    }
}

#[test]
fn readers_survive_random_json_lines() {
    let json_line = prop::collection::vec(
        prop_oneof![
            Just("{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2024-01-01T00:00:00Z\",\"cwd\":\"/x\"}".to_string()),
            Just("{\"type\":\"message\",\"id\":\"a\",\"parentId\":\"a\",\"message\":{\"role\":\"user\",\"content\":5}}".to_string()),
            Just("{\"type\":\"user\",\"uuid\":\"u\",\"parentUuid\":\"u\",\"message\":{\"content\":[{\"type\":\"tool_result\"}]}}".to_string()),
            Just("{\"type\":\"assistant\",\"message\":{\"id\":\"m\",\"content\":[{\"type\":\"tool_use\",\"input\":null}],\"usage\":{\"input_tokens\":-1}}}".to_string()),
            Just("{\"timestamp\":\"x\",\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"output\":[1]}}".to_string()),
            Just("{\"timestamp\":\"x\",\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{\"total_token_usage\":{\"input_tokens\":1e309}}}}".to_string()),
            Just("{\"type\":\"header\",\"schema_version\":1,\"run_id\":\"r\",\"started_at\":\"bad\"}".to_string()),
            Just("{\"type\":\"llm.response\",\"seq\":-4,\"output\":null}".to_string()),
            Just("{\"sessionId\":\"s\",\"projectHash\":\"h\",\"messages\":[{\"type\":\"gemini\",\"toolCalls\":[{}]}]}".to_string()),
            Just("{\"$rewindTo\":\"m\"}".to_string()),
            "\\PC{0,40}".prop_map(|s| s),
        ],
        0..24,
    )
    .prop_map(|lines| lines.join("\n").into_bytes());
    for format in registry::all() {
        let mut runner = TestRunner::new(config());
        let result = runner.run(&json_line, |bytes| {
            let _ = format.read_bytes(Path::new("fuzz.jsonl"), &bytes);
            Ok(())
        });
        assert!(result.is_ok(), "{} reader: {result:?}", format.name());
    }
}

#[test]
fn readers_survive_mutated_fixtures() {
    let seeds = seed_files();
    assert!(
        seeds.len() > 20,
        "fixtures not found under {}",
        fixtures().display()
    );
    for format in registry::all() {
        let mut runner = TestRunner::new(config());
        let strategy = (prop::sample::select(seeds.clone()), mutation());
        let result = runner.run(&strategy, |((path, bytes), m)| {
            let mutated = apply(&bytes, &m);
            let _ = format.read_bytes(&path, &mutated);
            Ok(())
        });
        assert!(result.is_ok(), "{} reader: {result:?}", format.name());
    }
}

#[test]
fn every_fixture_reads_without_panicking_in_its_detected_format() {
    for (path, bytes) in seed_files() {
        if let Some(format) = registry::detect_bytes(&path, &bytes) {
            let _ = format.read_bytes(&path, &bytes);
        }
    }
}
