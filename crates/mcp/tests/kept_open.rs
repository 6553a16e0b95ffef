//! The server keeps its index open between calls: each call still sees what
//! changed on disk since the one before (an appended turn, a new session, a
//! deleted file the archive keeps), as a fresh `agentlog search` would.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use agentlog_api::{Library, Settings};
use agentlog_mcp::args::{ListArgs, SearchArgs};
use agentlog_mcp::Answers;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

const SESSION: &str = "7a1c0ffe-5eed-4d1e-9b0b-5ec7e7000001";

fn planted(home: &Path) -> PathBuf {
    let dir = home.join(".claude/projects/-home-dev-retry");
    std::fs::create_dir_all(&dir).unwrap();
    let to = dir.join(format!("{SESSION}.jsonl"));
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/planted-claude.jsonl"),
        &to,
    )
    .unwrap();
    to
}

fn line(sid: &str, uuid: &str, parent: Option<&str>, text: &str) -> String {
    let v = json!({
        "isSidechain": false, "userType": "external", "cwd": "/home/dev/retry",
        "sessionId": sid, "version": "2.1.0", "parentUuid": parent, "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": uuid, "timestamp": "2026-11-20T11:00:00.000Z"
    });
    format!("{v}\n")
}

/// The sessions with hits, each once.
fn search(a: &Answers, q: &str) -> Vec<String> {
    let args: SearchArgs = serde_json::from_value(json!({ "query": q })).unwrap();
    let out: Value = a.search(&args).unwrap();
    out["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["session_id"].as_str().unwrap().to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn listed(a: &Answers) -> usize {
    let args: ListArgs = serde_json::from_value(json!({})).unwrap();
    let out = a.list_sessions(&args).unwrap();
    out["sessions"].as_array().unwrap().len()
}

#[test]
fn each_call_sees_what_changed_since_the_last() {
    let home = tempfile::tempdir().unwrap();
    let file = planted(home.path());
    let answers = Answers::new(Library::new(Settings::with_home(home.path())), true);
    assert_eq!(search(&answers, "zephyrquokka"), [SESSION]);
    assert!(search(&answers, "quillfeather").is_empty());

    // A turn appended to the session.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    f.write_all(
        line(
            SESSION,
            "11111111-0000-4000-8000-0000000000f1",
            Some("11111111-0000-4000-8000-000000000006"),
            "and the quillfeather limit?",
        )
        .as_bytes(),
    )
    .unwrap();
    drop(f);
    assert_eq!(search(&answers, "quillfeather"), [SESSION]);

    // A new session in a new project.
    let other = "7a1c0ffe-5eed-4d1e-9b0b-5ec7e7000002";
    let dir = home.path().join(".claude/projects/-home-dev-other");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{other}.jsonl")),
        line(
            other,
            "22222222-0000-4000-8000-000000000001",
            None,
            "the marmotlantern plan",
        ),
    )
    .unwrap();
    assert_eq!(search(&answers, "marmotlantern"), [other]);
    assert_eq!(listed(&answers), 2);

    // The first deleted: still found, from the archive.
    std::fs::remove_file(&file).unwrap();
    assert_eq!(search(&answers, "zephyrquokka"), [SESSION]);
    assert_eq!(listed(&answers), 2);
}
