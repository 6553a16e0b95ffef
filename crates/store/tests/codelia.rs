#![allow(clippy::unwrap_used, clippy::expect_used)]
//! codelia's run recorder, state snapshots and replay.

use agentlog_store::codelia::{self, replay, RunRecorder, SessionState, SessionStateStore};
use agentlog_store::{AppendOptions, StoreError};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");
const RUN: &str = "8f1d7b7a-7e8f-4e0f-9a7c-1c5d0e6b2b7a";

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join("seeds/codelia").join(name)
}

fn fixture_records() -> Vec<Value> {
    std::fs::read_to_string(fixture("session-store-spec-example.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn new_run(dir: &Path) -> RunRecorder {
    let header = json!({"type":"header","schema_version":1,"run_id":"r1","started_at":"2026-02-03T23:59:59.000-02:00"});
    RunRecorder::create(dir, &header, AppendOptions::default())
        .unwrap()
        .0
}

fn ts() -> Value {
    json!("2026-02-04T02:00:00.000Z")
}

#[test]
fn recording_the_fixture_reproduces_it_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let records = fixture_records();
    let (mut run, rec) =
        RunRecorder::create(dir.path(), &records[0], AppendOptions::default()).unwrap();
    assert!(rec.is_clean());
    for r in &records[1..] {
        run.append(r).unwrap();
    }
    assert!(run.has_ended());
    let path = dir.path().join(format!("2026/02/03/{RUN}.jsonl"));
    assert_eq!(run.path(), path);
    drop(run);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        std::fs::read_to_string(fixture("session-store-spec-example.jsonl")).unwrap()
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}

#[test]
fn the_directory_date_is_the_utc_date_of_started_at() {
    let dir = tempfile::tempdir().unwrap();
    let run = new_run(dir.path());
    assert_eq!(run.path(), dir.path().join("2026/02/04/r1.jsonl"));
}

fn refused(run: &mut RunRecorder, record: Value, needle: &str) {
    let before = std::fs::read(run.path()).unwrap();
    let err = run.append(&record).unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err}");
    let msg = err.to_string();
    assert!(msg.contains(needle), "{msg:?} lacks {needle:?}");
    assert!(msg.contains(&format!("{}:", run.path().display())), "{msg}");
    assert_eq!(
        std::fs::read(run.path()).unwrap(),
        before,
        "a refused record wrote something"
    );
}

#[test]
fn ordering_violations_are_refused_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = new_run(dir.path());
    refused(
        &mut run,
        json!({"type":"header","schema_version":1,"run_id":"r1","started_at":"2026-02-04T00:00:00Z"}),
        "never rewritten",
    );
    refused(
        &mut run,
        json!({"type":"run.start","run_id":"r1","input":{}}),
        "needs a string \"ts\"",
    );
    refused(
        &mut run,
        json!({"type":"run.start","run_id":"other","ts":ts(),"input":{}}),
        "not this run's",
    );
    refused(&mut run, json!(["not", "an", "object"]), "JSON object");
    run.agent_event(5, json!({"type":"text"})).unwrap();
    refused(
        &mut run,
        json!({"type":"agent.event","run_id":"r1","ts":ts(),"seq":5,"event":{}}),
        "greater than the previous seq 5",
    );
    refused(
        &mut run,
        json!({"type":"agent.event","run_id":"r1","ts":ts(),"seq":2,"event":{}}),
        "greater than the previous seq 5",
    );
    refused(
        &mut run,
        json!({"type":"agent.event","run_id":"r1","ts":ts(),"event":{}}),
        "integer \"seq\"",
    );
    run.agent_event(6, json!({"type":"text"})).unwrap();
    refused(
        &mut run,
        json!({"type":"llm.response","run_id":"r1","ts":ts(),"seq":1,"output":{}}),
        "matches no earlier llm.request",
    );
    run.llm_request(1, json!({"messages":[]})).unwrap();
    refused(
        &mut run,
        json!({"type":"llm.request","run_id":"r1","ts":ts(),"seq":1,"input":{}}),
        "already used",
    );
    run.llm_response(1, json!({"messages":[]})).unwrap();
    refused(
        &mut run,
        json!({"type":"llm.response","run_id":"r1","ts":ts(),"seq":1,"output":{}}),
        "already answered",
    );
    // Namespaced and unknown records pass as they are.
    run.append(&json!({"type":"x.acme.audit","ts":ts(),"who":"me"}))
        .unwrap();
    run.append(&json!({"type":"run.telemetry","run_id":"r1","ts":ts()}))
        .unwrap();
    run.run_end("completed", None).unwrap();
    refused(
        &mut run,
        json!({"type":"run.status","run_id":"r1","ts":ts(),"status":"running"}),
        "the run has ended",
    );
}

#[test]
fn reopening_a_log_keeps_its_header_and_its_rules() {
    let dir = tempfile::tempdir().unwrap();
    let path = {
        let mut run = new_run(dir.path());
        run.run_start("go").unwrap();
        run.agent_event(3, json!({"type":"text"})).unwrap();
        run.llm_request(1, json!({"messages":[]})).unwrap();
        run.path().to_path_buf()
    };
    // A crash left half a line behind.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"{\"type\":\"agent.ev");
    std::fs::write(&path, &bytes).unwrap();
    let (mut run, rec) = RunRecorder::open(&path, AppendOptions::default()).unwrap();
    assert!(!rec.is_clean());
    assert_eq!(run.run_id(), "r1");
    refused(
        &mut run,
        json!({"type":"agent.event","run_id":"r1","ts":ts(),"seq":3,"event":{}}),
        "previous seq 3",
    );
    run.llm_response(1, json!({"messages":[]})).unwrap();
    drop(run);
    // A second create of the same run refuses to touch the header.
    let header = json!({"type":"header","schema_version":1,"run_id":"r1","started_at":"2026-02-04T01:59:59Z"});
    let err = RunRecorder::create(dir.path(), &header, AppendOptions::default()).unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 5);
    assert!(text.starts_with("{\"type\":\"header\",\"schema_version\":1,\"run_id\":\"r1\",\"started_at\":\"2026-02-03T23:59:59.000-02:00\"}\n"));
}

#[test]
fn run_ids_and_start_times_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    for (h, needle) in [
        (
            json!({"type":"header","run_id":"../x","started_at":"2026-02-04T00:00:00Z"}),
            "invalid name",
        ),
        (
            json!({"type":"header","run_id":"r","started_at":"tuesday"}),
            "RFC 3339",
        ),
        (
            json!({"type":"run.start","run_id":"r","started_at":"2026-02-04T00:00:00Z"}),
            "header",
        ),
    ] {
        let err = RunRecorder::create(dir.path(), &h, AppendOptions::default()).unwrap_err();
        assert!(err.to_string().contains(needle), "{err}");
    }
}

#[test]
fn replays_the_prompt_of_the_fixture_invocation() {
    let (p, diags) = replay(&fixture("session-store-spec-example.jsonl"), 1).unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(p.seq, 1);
    assert_eq!(p.model.as_deref(), Some("gpt-4.1-mini"));
    assert_eq!(
        p.model_info,
        Some(json!({"provider":"openai","name":"gpt-4.1-mini"}))
    );
    assert_eq!(p.messages.len(), 2);
    assert_eq!(p.messages[0]["role"], "system");
    assert_eq!(p.messages[1]["content"], "list files");
    assert_eq!(
        p.tools.as_ref().unwrap()[0]["function"]["name"],
        "exec_command"
    );
    assert_eq!(p.tool_choice, Some(Value::Null));
    assert_eq!(p.response.as_ref().unwrap()["stop_reason"], "tool_use");
    assert_eq!(p.line, Some(3));
    let err = replay(&fixture("session-store-spec-example.jsonl"), 7).unwrap_err();
    assert!(
        err.to_string()
            .contains("no llm.request with seq 7; invocations in the log: 1"),
        "{err}"
    );
}

#[test]
fn state_snapshots_save_load_and_list() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStateStore::new(dir.path());
    let fixture_state: SessionState =
        serde_json::from_slice(&std::fs::read(fixture("session-state-spec-example.json")).unwrap())
            .unwrap();
    let path = store.save(&fixture_state).unwrap();
    assert_eq!(
        path,
        dir.path()
            .join("state/f6d2c6d5-4a12-4cc4-bbc9-9a0c0d2b5af1.json")
    );
    let saved: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let original: Value =
        serde_json::from_slice(&std::fs::read(fixture("session-state-spec-example.json")).unwrap())
            .unwrap();
    assert_eq!(saved, original);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let mut later = SessionState::new("s2", vec![json!({"role":"user","content":"hi"})]);
    later.updated_at = "2026-03-01T00:00:00.000Z".into();
    later.extra.insert("future".into(), json!(true));
    store.save(&later).unwrap();
    assert_eq!(store.load("s2").unwrap().unwrap(), later);
    assert!(store.load("missing").unwrap().is_none());
    std::fs::write(dir.path().join("state/broken.json"), "{").unwrap();
    let listing = store.list().unwrap();
    let ids: Vec<&str> = listing
        .states
        .iter()
        .map(|s| s.session_id.as_str())
        .collect();
    assert_eq!(ids, ["s2", "f6d2c6d5-4a12-4cc4-bbc9-9a0c0d2b5af1"]);
    assert_eq!(listing.skipped.len(), 1);
    assert!(
        listing.skipped[0].1.contains("broken.json:1"),
        "{:?}",
        listing.skipped
    );
    for bad in ["../x", "a/b", ".hidden", ""] {
        assert!(store.load(bad).is_err(), "{bad:?} accepted");
    }
    assert!(store.delete("s2").unwrap());
    assert!(!store.delete("s2").unwrap());
}

#[test]
fn lists_runs_with_their_outcomes() {
    let dir = tempfile::tempdir().unwrap();
    let records = fixture_records();
    let (mut run, _) =
        RunRecorder::create(dir.path(), &records[0], AppendOptions::default()).unwrap();
    for r in &records[1..] {
        run.append(r).unwrap();
    }
    drop(run);
    let mut open = new_run(dir.path());
    open.run_start("second\nrun").unwrap();
    drop(open);
    let (runs, skipped) = codelia::list_runs(dir.path());
    assert!(skipped.is_empty());
    let got: Vec<(&str, &str, usize, Option<&str>)> = runs
        .iter()
        .map(|r| {
            (
                r.run_id.as_str(),
                r.outcome.as_str(),
                r.invocations,
                r.input.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (RUN, "completed", 1, Some("list files")),
            ("r1", "incomplete", 0, Some("second"))
        ]
    );
}
