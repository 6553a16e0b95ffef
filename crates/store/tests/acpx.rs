#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The acpx session store: write ordering, failure policy, rotation,
//! sequence numbers across reopen, and the ACP mapping on a real run.

use agentlog_formats::acpx::events::{segment_path, AuditLine};
use agentlog_formats::acpx::{parse_record, Layout, ThreadMessage};
use agentlog_store::acpx::{AcpxOptions, AcpxStore, CreateParams, NewEvent};
use agentlog_store::SyncPolicy;
use serde_json::{json, Value};
use std::path::Path;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn snapshot(store: &AcpxStore, id: &str) -> Value {
    serde_json::from_slice(&std::fs::read(store.record_path(id)).unwrap()).unwrap()
}

fn update(text: &str) -> Value {
    json!({"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}})
}

fn seqs(store: &AcpxStore, id: &str) -> Vec<u64> {
    let (events, diags) = store.read_events(id).unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    events.iter().map(|e| e.event.seq().unwrap()).collect()
}

#[test]
fn every_event_is_logged_then_snapshotted() {
    let dir = tempfile::tempdir().unwrap();
    let store = AcpxStore::new(dir.path());
    let mut s = store
        .create(CreateParams {
            acpx_record_id: Some("rec".into()),
            acp_session_id: Some("acp".into()),
            cwd: Some("/repo".into()),
            ..CreateParams::default()
        })
        .unwrap();
    let user = s
        .send_prompt("req_1", &[json!({"type": "text", "text": "say hi"})], false)
        .unwrap();
    s.session_update(Some("req_1"), update("hi")).unwrap();
    s.session_update(Some("req_1"), update(" there")).unwrap();
    s.prompt_done(
        "req_1",
        "end_turn",
        json!({"requested": 1, "approved": 1, "denied": 0, "cancelled": 0}),
    )
    .unwrap();
    s.control(
        "control_started",
        "ctl_1",
        json!({"action": "set_mode", "input": {"modeId": "code"}}),
    )
    .unwrap();
    s.control(
        "control_done",
        "ctl_1",
        json!({"action": "set_mode", "ok": true, "result": {}}),
    )
    .unwrap();
    s.lifecycle(
        json!({"phase": "agent_exit", "exitCode": 1, "signal": null, "reason": "process_exit"}),
    )
    .unwrap();

    let snap = snapshot(&store, "rec");
    assert_eq!(snap["schema"], json!("acpx.session.v1"));
    assert_eq!(snap["acpx"]["audit_seq"], json!(7));
    let log = &snap["acpx"]["event_log"];
    assert_eq!(
        (log["last_seq"].clone(), log["segment_count"].clone()),
        (json!(7), json!(1))
    );
    assert_eq!(log["last_write_error"], Value::Null);
    assert_eq!(log["max_segment_bytes"], json!(64 * 1024 * 1024));
    assert_eq!(
        snap["thread"]["messages"],
        json!([
            {"User": {"id": user, "content": [{"Text": "say hi"}]}},
            {"Agent": {"content": [{"Text": "hi there"}], "tool_results": {}}}
        ])
    );
    let turn = &snap["acpx"]["last_turn"];
    assert_eq!(turn["request_id"], json!("req_1"));
    assert_eq!(turn["outcome"], json!("completed"));
    assert_eq!(turn["stop_reason"], json!("end_turn"));
    assert_eq!(turn["permission_stats"]["approved"], json!(1));
    let ctl = &snap["acpx"]["last_control_update"];
    assert_eq!(
        (ctl["action"].clone(), ctl["ok"].clone()),
        (json!("set_mode"), json!(true))
    );
    assert_eq!(ctl["payload"], json!({"mode_id": "code"}));
    assert_eq!(snap["lastAgentExitCode"], json!(1));
    assert_eq!(snap["lastAgentDisconnectReason"], json!("process_exit"));
    let ring = snap["acpx"]["audit_events"].as_array().unwrap();
    assert_eq!(ring.len(), 7);
    assert_eq!(ring[1]["type"], json!("session_update"));
    // The log holds the same events as envelopes.
    let (events, _) = store.read_events("rec").unwrap();
    let AuditLine::Envelope(first) = &events[0].event else {
        panic!()
    };
    assert_eq!(
        (
            first.event_version,
            first.seq,
            first.stream.as_str(),
            first.kind.as_str()
        ),
        (1, 1, "prompt", "prompt_started")
    );
    assert_eq!(first.acp_session_id.as_deref(), Some("acp"));
    assert_eq!(first.request_id.as_deref(), Some("req_1"));
    assert_eq!(seqs(&store, "rec"), [1, 2, 3, 4, 5, 6, 7]);
    // What the store writes passes the strict validation.
    let text = std::fs::read_to_string(store.record_path("rec")).unwrap();
    assert!(agentlog_formats::acpx::validate_text(Path::new("rec.json"), &text).is_empty());
}

#[test]
fn segments_rotate_and_the_oldest_are_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let opts = AcpxOptions {
        max_segment_bytes: 700,
        max_segments: 3,
        audit_ring: 4,
        sync: SyncPolicy::None,
    };
    let store = AcpxStore::with_options(dir.path(), opts);
    let mut s = store
        .create(CreateParams {
            acpx_record_id: Some("r".into()),
            ..CreateParams::default()
        })
        .unwrap();
    for i in 0..30 {
        let rec = s
            .session_update(None, update(&format!("chunk {i}")))
            .unwrap();
        assert!(rec.logged);
        assert_eq!(rec.seq, i + 1);
    }
    let d = dir.path();
    assert!(segment_path(d, "r", 0).is_file());
    assert!(segment_path(d, "r", 1).is_file());
    assert!(segment_path(d, "r", 2).is_file());
    assert!(!segment_path(d, "r", 3).exists());
    for n in 0..3 {
        let len = std::fs::metadata(segment_path(d, "r", n)).unwrap().len();
        assert!(len <= 700, "segment {n} has {len} bytes");
    }
    let snap = snapshot(&store, "r");
    assert_eq!(snap["acpx"]["event_log"]["segment_count"], json!(3));
    assert_eq!(snap["acpx"]["audit_events"].as_array().unwrap().len(), 4);
    assert_eq!(snap["acpx"]["audit_dropped_count"], json!(26));
    assert_eq!(snap["acpx"]["audit_events"][0]["seq"], json!(27));
    // All segments read oldest to newest: a contiguous run ending at 30.
    let got = seqs(&store, "r");
    assert_eq!(*got.last().unwrap(), 30);
    assert!(got.windows(2).all(|w| w[1] == w[0] + 1), "{got:?}");
    assert!(got[0] > 1, "the oldest segments were deleted");
    // The thread saw every chunk, whatever the log kept.
    let text: String = (0..30).map(|i| format!("chunk {i}")).collect();
    assert_eq!(
        snap["thread"]["messages"][0]["Agent"]["content"][0]["Text"],
        json!(text)
    );
}

#[test]
fn a_failed_append_is_recorded_and_the_snapshot_still_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = AcpxStore::new(dir.path());
    let mut s = store
        .create(CreateParams {
            acpx_record_id: Some("f".into()),
            ..CreateParams::default()
        })
        .unwrap();
    // A directory where the active segment should be: appends cannot work.
    std::fs::create_dir(segment_path(dir.path(), "f", 0)).unwrap();
    let rec = s.session_update(None, update("lost?")).unwrap();
    assert_eq!((rec.seq, rec.logged), (1, false));
    let snap = snapshot(&store, "f");
    let err = snap["acpx"]["event_log"]["last_write_error"]
        .as_str()
        .unwrap();
    assert!(err.contains("f.events.ndjson"), "{err}");
    assert_eq!(snap["acpx"]["audit_seq"], json!(1));
    assert_eq!(snap["acpx"]["event_log"]["last_seq"], json!(0));
    assert_eq!(
        snap["thread"]["messages"][0]["Agent"]["content"][0]["Text"],
        json!("lost?")
    );
    // Once the log is writable again the error clears and seq goes on.
    std::fs::remove_dir(segment_path(dir.path(), "f", 0)).unwrap();
    let rec = s.session_update(None, update(" no")).unwrap();
    assert_eq!((rec.seq, rec.logged), (2, true));
    let snap = snapshot(&store, "f");
    assert_eq!(snap["acpx"]["event_log"]["last_write_error"], Value::Null);
    assert_eq!(seqs(&store, "f"), [2]);
}

#[test]
fn a_failed_snapshot_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = AcpxStore::new(dir.path());
    let mut s = store
        .create(CreateParams {
            acpx_record_id: Some("g".into()),
            ..CreateParams::default()
        })
        .unwrap();
    let path = store.record_path("g");
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("keep"), b"x").unwrap();
    let err = s.session_update(None, update("x")).unwrap_err();
    assert!(err.to_string().contains("g.json"), "{err}");
    // The event itself reached the log before the snapshot failed.
    assert_eq!(seqs(&store, "g"), [1]);
}

#[test]
fn seq_stays_monotonic_across_reopen_and_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let store = AcpxStore::new(dir.path());
    {
        let mut s = store
            .create(CreateParams {
                acpx_record_id: Some("m".into()),
                ..CreateParams::default()
            })
            .unwrap();
        for t in ["a", "b", "c"] {
            s.session_update(None, update(t)).unwrap();
        }
    }
    {
        let mut s = store.open("m").unwrap();
        assert_eq!(s.session_update(None, update("d")).unwrap().seq, 4);
    }
    // A crash between the append (step 3) and the snapshot (step 6): the
    // log is ahead of the snapshot.
    let active = segment_path(dir.path(), "m", 0);
    let mut log = std::fs::read_to_string(&active).unwrap();
    let last = log
        .lines()
        .last()
        .unwrap()
        .replace("\"seq\":4", "\"seq\":5");
    log.push_str(&last);
    log.push('\n');
    std::fs::write(&active, log).unwrap();
    let mut s = store.open("m").unwrap();
    assert_eq!(s.session_update(None, update("e")).unwrap().seq, 6);
    assert_eq!(seqs(&store, "m"), [1, 2, 3, 4, 5, 6]);
    assert_eq!(store.list().unwrap(), ["m"]);
}

/// The sample run's ACP traffic recorded through the store gives the
/// thread acpx wrote.
#[test]
fn the_sample_run_recorded_through_the_store() {
    let base = Path::new(FIXTURES).join("seeds/acpx");
    let expected = parse_record(
        serde_json::from_slice(&std::fs::read(base.join("record.json")).unwrap()).unwrap(),
    )
    .unwrap()
    .record;
    let dir = tempfile::tempdir().unwrap();
    let store = AcpxStore::new(dir.path());
    let mut s = store
        .create(CreateParams {
            acpx_record_id: Some(expected.acpx_record_id.clone()),
            cwd: expected.cwd.get().cloned(),
            ..CreateParams::default()
        })
        .unwrap();
    let text = std::fs::read_to_string(base.join("events.ndjson")).unwrap();
    let mut user_ids = Vec::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let msg = &v["message"];
        let req = msg["id"].as_u64().map(|n| n.to_string());
        match msg["method"].as_str() {
            Some("session/prompt") => {
                let id = s
                    .send_prompt(
                        req.as_deref().unwrap(),
                        msg["params"]["prompt"].as_array().unwrap(),
                        false,
                    )
                    .unwrap();
                user_ids.push(id);
            }
            Some("session/update") => {
                s.session_update(None, msg["params"].clone()).unwrap();
            }
            None if msg["result"]["stopReason"].is_string() => {
                s.prompt_done(
                    req.as_deref().unwrap(),
                    msg["result"]["stopReason"].as_str().unwrap(),
                    json!({}),
                )
                .unwrap();
            }
            _ => {}
        }
    }
    // Same messages once the fresh user ids are swapped for the sample's.
    let mut got = s.record().messages().to_vec();
    let mut sample_ids = expected.messages().iter().filter_map(|m| match m {
        ThreadMessage::User(u) => Some(u.id.clone()),
        _ => None,
    });
    for m in &mut got {
        if let ThreadMessage::User(u) = m {
            u.id = sample_ids.next().unwrap();
        }
    }
    assert_eq!(got, expected.messages());
    assert_eq!(user_ids.len(), 2);
    assert_eq!(
        seqs(&store, &expected.acpx_record_id),
        (1..=6).collect::<Vec<_>>()
    );
}

#[test]
fn records_in_acpx_own_shape_keep_it() {
    let dir = tempfile::tempdir().unwrap();
    let disk = json!({
        "schema": "acpx.session.v1",
        "acpx_record_id": "d",
        "acp_session_id": "acp-d",
        "cwd": "/w",
        "last_seq": 3,
        "title": null,
        "messages": [],
        "updated_at": "2026-01-01T00:00:00.000Z",
        "cumulative_token_usage": {},
        "request_token_usage": {},
        "acpx": {}
    });
    std::fs::write(
        dir.path().join("d.json"),
        serde_json::to_vec_pretty(&disk).unwrap(),
    )
    .unwrap();
    let store = AcpxStore::new(dir.path());
    let mut s = store.open("d").unwrap();
    s.session_update(None, update("ok")).unwrap();
    let snap = snapshot(&store, "d");
    assert_eq!(parse_record(snap.clone()).unwrap().layout, Layout::Disk);
    assert_eq!(snap["acpx_record_id"], json!("d"));
    assert_eq!(
        snap["messages"][0]["Agent"]["content"][0]["Text"],
        json!("ok")
    );
    // Only acpx.session.v1 records open.
    std::fs::write(
        dir.path().join("old.json"),
        br#"{"schema": "acpx.session.v0", "acpxRecordId": "old"}"#,
    )
    .unwrap();
    let err = store.open("old").unwrap_err();
    assert!(err.to_string().contains("only acpx.session.v1"), "{err}");
    assert!(store.open("../x").is_err());
    let rec = s
        .record_event(NewEvent {
            stream: "queue",
            source: "queue",
            kind: "queue_event".into(),
            request_id: Some("req_9".into()),
            payload: json!({"phase": "accepted", "requestId": "req_9"}),
        })
        .unwrap();
    assert_eq!(
        rec.seq, 5,
        "follows the record's last_seq of 3 and one update"
    );
}
