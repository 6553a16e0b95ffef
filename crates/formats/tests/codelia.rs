#![allow(clippy::unwrap_used, clippy::expect_used)]
//! codelia run logs and state snapshots: fixtures round-trip, tolerant
//! reading, mapping to the model and conversion.

use agentlog_formats::codelia::{self, FORMAT};
use agentlog_formats::discover::DiscoverEnv;
use agentlog_formats::{registry, Format, Severity};
use agentlog_model::{
    Agent, Block, Entry, EntryKind, Message, Role, RunOutcome, Session, SessionMeta,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join("seeds/codelia").join(name)
}

fn lines_of(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn write(session: &Session) -> (Vec<u8>, agentlog_formats::Fidelity) {
    let mut out = Vec::new();
    let fid = FORMAT.write(session, &mut out).unwrap();
    (out, fid)
}

fn read(name: &str, bytes: &[u8]) -> agentlog_formats::Read {
    FORMAT.read_bytes(Path::new(name), bytes).unwrap()
}

#[test]
fn every_fixture_round_trips() {
    let mut seen = 0;
    for entry in std::fs::read_dir(Path::new(FIXTURES).join("seeds/codelia")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let r = FORMAT.read_path(&path).unwrap();
        let (out, fid) = write(&r.session);
        assert!(fid.is_lossless(), "{}: {fid}", path.display());
        if path.extension().unwrap() == "jsonl" {
            assert_eq!(lines_of(&out), lines_of(&bytes), "{}", path.display());
            // Byte for byte, too: codelia's key order is kept.
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(bytes).unwrap()
            );
        } else {
            let a: Value = serde_json::from_slice(&out).unwrap();
            let b: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(a, b, "{}", path.display());
        }
        seen += 1;
    }
    assert_eq!(seen, 2);
}

#[test]
fn maps_every_record_to_its_entry_kind() {
    let r = FORMAT
        .read_path(&fixture("session-store-spec-example.jsonl"))
        .unwrap();
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    let s = &r.session;
    assert_eq!(s.meta.id, "8f1d7b7a-7e8f-4e0f-9a7c-1c5d0e6b2b7a");
    assert_eq!(s.meta.agent, Agent::Codelia);
    assert_eq!(s.meta.model.model.as_deref(), Some("gpt-4.1-mini"));
    assert_eq!(s.meta.model.thinking_level.as_deref(), Some("medium"));
    assert_eq!(s.meta.title.as_deref(), Some("list files"));
    let recs: Vec<&Entry> = records(s).collect();
    let kinds: Vec<&str> = recs.iter().map(|e| e.kind_name()).collect();
    assert_eq!(
        kinds,
        [
            "run_start",
            "llm_request",
            "llm_response",
            "event",
            "tool_output",
            "event",
            "run_status",
            "run_end"
        ]
    );
    match &recs[2].kind {
        EntryKind::LlmResponse { seq, usage, .. } => {
            assert_eq!(*seq, 1);
            let u = usage.as_ref().unwrap();
            assert_eq!((u.input, u.output, u.total), (120, 15, Some(135)));
        }
        k => panic!("{k:?}"),
    }
    match &recs[4].kind {
        EntryKind::ToolOutput {
            output,
            tool_call_id,
            ..
        } => {
            assert_eq!(output, "AGENTS.md\nRULES.md\npackages\n");
            assert_eq!(tool_call_id, "call_1");
        }
        k => panic!("{k:?}"),
    }
    assert!(matches!(
        &recs[7].kind,
        EntryKind::RunEnd {
            outcome: RunOutcome::Completed,
            ..
        }
    ));
    // Each record is the child of the entry before it (the run.start's
    // prompt message sits between the first two records).
    assert_eq!(recs[1].parent_id.as_deref(), Some(s.entries[1].id.as_str()));
    assert_eq!(s.entries[1].parent_id.as_deref(), Some(recs[0].id.as_str()));
    assert_eq!(recs[1].line, Some(3));
}

#[test]
fn reads_the_state_snapshot_as_messages() {
    let path = fixture("session-state-spec-example.json");
    let head = std::fs::read(&path).unwrap();
    assert_eq!(
        registry::detect_bytes(&path, &head).unwrap().name(),
        "codelia"
    );
    let r = FORMAT.read_path(&path).unwrap();
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert_eq!(r.session.meta.id, "f6d2c6d5-4a12-4cc4-bbc9-9a0c0d2b5af1");
    assert_eq!(r.session.message_count(), 3);
    assert_eq!(r.session.first_prompt().as_deref(), Some("list files"));
}

#[test]
fn detects_run_logs() {
    let path = fixture("session-store-spec-example.jsonl");
    let head = std::fs::read(&path).unwrap();
    assert_eq!(
        registry::detect_bytes(&path, &head).unwrap().name(),
        "codelia"
    );
    assert_eq!(
        FORMAT.detect(
            Path::new("x.jsonl"),
            b"{\"type\":\"session\",\"id\":\"a\"}\n"
        ),
        0
    );
}

#[test]
fn tolerates_crashes_unknown_records_values_and_versions() {
    let text = concat!(
        "{\"type\":\"header\",\"schema_version\":7,\"run_id\":\"r1\",\"started_at\":\"2026-02-03T12:00:00.000Z\",\"future\":{\"a\":1}}\n",
        "{\"type\":\"run.start\",\"run_id\":\"r1\",\"ts\":\"2026-02-03T12:00:00.100Z\",\"input\":{\"type\":\"text\",\"text\":\"hi\"},\"new_field\":true}\n",
        "{\"type\":\"run.status\",\"run_id\":\"r1\",\"ts\":\"2026-02-03T12:00:00.200Z\",\"status\":\"paused_for_coffee\"}\n",
        "{\"type\":\"x.acme.audit\",\"ts\":\"2026-02-03T12:00:00.300Z\",\"who\":\"me\"}\n",
        "{\"type\":\"run.telemetry\",\"run_id\":\"r1\",\"ts\":\"2026-02-03T12:00:00.400Z\"}\n",
        "{\"type\":\"run.context\",\"run_id\":\"r1\",\"ts\":\"2026-02-03T12:00:00.500Z\",\"context_left_percent\":\"lots\"}\n",
        "not json\n",
        "{\"type\":\"run.context\",\"run_id\":\"r1\",\"ts\":\"2026-02-03T12:00:00.600Z\",\"context_left_percent\":42.5}\n",
        "{\"type\":\"agent.event\",\"run_id\":\"r1\",\"ts\":\"2026-02-03T12:00:00.700Z\",\"seq\":0,\"event\":{\"type\":\"text\",\"content\":\"x\"}}\n",
        "{\"type\":\"agent.ev",
    );
    let r = read("r1.jsonl", text.as_bytes());
    let codes: Vec<(Option<u64>, &str)> = r.diagnostics.iter().map(|d| (d.line, d.code)).collect();
    assert!(
        codes.contains(&(Some(1), "unsupported-schema-version")),
        "{codes:?}"
    );
    assert!(codes.contains(&(Some(3), "unknown-value")), "{codes:?}");
    assert!(codes.contains(&(Some(4), "extension-record")), "{codes:?}");
    assert!(codes.contains(&(Some(5), "unknown-type")), "{codes:?}");
    assert!(codes.contains(&(Some(6), "unmapped-record")), "{codes:?}");
    assert!(codes.contains(&(Some(7), "invalid-json")), "{codes:?}");
    assert!(codes.contains(&(Some(10), "torn-tail")), "{codes:?}");
    assert!(codes.contains(&(None, "no-run-end")), "{codes:?}");
    let schema = r
        .diagnostics
        .iter()
        .find(|d| d.code == "unsupported-schema-version")
        .unwrap();
    assert_eq!(schema.severity, Severity::Warning);
    let s = &r.session;
    let recs: Vec<&Entry> = records(s).collect();
    assert_eq!(recs.len(), 7);
    assert!(
        matches!(&recs[1].kind, EntryKind::RunStatus { status, .. } if status == "paused_for_coffee")
    );
    assert!(
        matches!(&recs[2].kind, EntryKind::Unknown { record_type: Some(t), .. } if t == "x.acme.audit")
    );
    assert!(
        matches!(&recs[5].kind, EntryKind::RunContext { context_left_percent, .. } if *context_left_percent == 42.5)
    );
    // Everything that was read is written back unchanged.
    let (out, _) = write(s);
    let good: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(lines_of(&out), good);
}

#[test]
fn a_log_without_a_header_is_still_read() {
    let text = "{\"type\":\"run.start\",\"run_id\":\"r9\",\"ts\":\"2026-01-01T00:00:00Z\",\"input\":{\"type\":\"text\",\"text\":\"go\"}}\n";
    let r = read("x.jsonl", text.as_bytes());
    assert_eq!(r.session.meta.id, "r9");
    assert!(r
        .diagnostics
        .iter()
        .any(|d| d.code == "missing-header" && d.line == Some(1)));
    assert_eq!(records(&r.session).count(), 1);
}

#[test]
fn reports_ordering_problems_in_files() {
    let text = concat!(
        "{\"type\":\"header\",\"schema_version\":1,\"run_id\":\"r\",\"started_at\":\"2026-02-03T12:00:00.000Z\"}\n",
        "{\"type\":\"agent.event\",\"run_id\":\"r\",\"ts\":\"t\",\"seq\":3,\"event\":{\"type\":\"a\"}}\n",
        "{\"type\":\"agent.event\",\"run_id\":\"r\",\"ts\":\"t\",\"seq\":2,\"event\":{\"type\":\"a\"}}\n",
        "{\"type\":\"llm.response\",\"run_id\":\"r\",\"ts\":\"t\",\"seq\":1,\"output\":{\"messages\":[]}}\n",
        "{\"type\":\"run.end\",\"run_id\":\"r\",\"ts\":\"t\",\"outcome\":\"timeout\"}\n",
        "{\"type\":\"run.status\",\"run_id\":\"r\",\"ts\":\"t\",\"status\":\"running\"}\n",
    );
    let r = read("r.jsonl", text.as_bytes());
    let lines: Vec<Option<u64>> = r
        .diagnostics
        .iter()
        .filter(|d| d.code == "out-of-order")
        .map(|d| d.line)
        .collect();
    assert_eq!(lines, [Some(3), Some(4), Some(6)]);
    assert!(r
        .diagnostics
        .iter()
        .any(|d| d.code == "unknown-value" && d.line == Some(5)));
    assert!(
        matches!(&r.session.entries[3].kind, EntryKind::RunEnd { outcome: RunOutcome::Other(o), .. } if o == "timeout")
    );
}

#[test]
fn other_formats_convert_with_a_fidelity_report_and_come_back() {
    let mut meta = SessionMeta::new("s-1", Agent::Pi);
    meta.format = Some("pi".into());
    meta.title = Some("t".into());
    let mut s = Session::new(meta);
    let mut m = Message::text(Role::Assistant, "answer");
    m.content.push(Block::thinking("hmm", Some("sig".into())));
    s.push(
        Entry::new(
            "a",
            None,
            EntryKind::Message(Message::text(Role::User, "q")),
        )
        .at(agentlog_model::Timestamp::Text(
            "2026-01-02T03:04:05.000Z".into(),
        )),
    );
    s.push(Entry::new("b", Some("a".into()), EntryKind::Message(m)));
    s.push(Entry::new(
        "c",
        Some("b".into()),
        EntryKind::RunEnd {
            run_id: "s-1".into(),
            outcome: RunOutcome::Completed,
            final_text: Some("answer".into()),
        },
    ));
    let (out, fid) = write(&s);
    let whats: Vec<&str> = fid.losses.iter().map(|l| l.what.as_str()).collect();
    assert!(whats.contains(&"session title"), "{whats:?}");
    assert!(
        whats.iter().any(|w| w.starts_with("message entries")),
        "{whats:?}"
    );
    let recs = lines_of(&out);
    assert_eq!(recs[0]["type"], "header");
    assert_eq!(recs[0]["run_id"], "s-1");
    assert_eq!(recs[0]["started_at"], "2026-01-02T03:04:05.000Z");
    assert_eq!(recs[1]["type"], codelia::ENTRY_RECORD);
    assert_eq!(
        recs[3],
        json!({"type":"run.end","run_id":"s-1","outcome":"completed","final":"answer"})
    );
    // Back through the reader: the messages, thinking included, return.
    let back = read("s.jsonl", &out);
    assert_eq!(back.session.entries[1].kind, s.entries[1].kind);
    assert_eq!(back.session.entries[1].id, "b");
    assert_eq!(back.session.message_count(), 2);
}

#[test]
fn discovers_run_logs_in_both_layouts() {
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join(".codelia/sessions/2026/02/03");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::write(day.join("r1.jsonl"), "{}\n").unwrap();
    std::fs::write(day.join("notes.txt"), "").unwrap();
    std::fs::create_dir_all(home.path().join(".codelia/sessions/state")).unwrap();
    std::fs::write(home.path().join(".codelia/sessions/state/s.json"), "{}").unwrap();
    let env = DiscoverEnv::with_home(home.path());
    assert_eq!(FORMAT.discover(&env), [day.join("r1.jsonl")]);

    let xdg = home.path().join("xdg-state/codelia/sessions/2026/03/04");
    std::fs::create_dir_all(&xdg).unwrap();
    std::fs::write(xdg.join("r2.jsonl"), "{}\n").unwrap();
    let mut env = DiscoverEnv::with_home(home.path());
    env.vars.insert("CODELIA_LAYOUT".into(), "xdg".into());
    env.vars.insert(
        "XDG_STATE_HOME".into(),
        home.path().join("xdg-state").display().to_string(),
    );
    assert_eq!(FORMAT.discover(&env), [xdg.join("r2.jsonl")]);
}

#[test]
fn survives_a_trip_through_the_unified_model_json() {
    for name in [
        "session-store-spec-example.jsonl",
        "session-state-spec-example.json",
    ] {
        let path = fixture(name);
        let r = FORMAT.read_path(&path).unwrap();
        let mut model_json = Vec::new();
        agentlog_formats::json::FORMAT
            .write(&r.session, &mut model_json)
            .unwrap();
        let back = agentlog_formats::json::FORMAT
            .read_bytes(Path::new("s.json"), &model_json)
            .unwrap();
        assert_eq!(back.session, r.session, "{name}");
        let (a, _) = write(&back.session);
        let (b, _) = write(&r.session);
        assert_eq!(a, b, "{name}");
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            (-1.0e6f64..1.0e6).prop_map(Value::from),
            "[a-z\\n\"\\\\]{0,6}".prop_map(Value::from),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(2, 12, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                prop::collection::btree_map("[a-z_]{1,6}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    const TYPES: [&str; 12] = [
        "run.start",
        "run.context",
        "agent.event",
        "tool.output",
        "llm.request",
        "llm.response",
        "run.status",
        "run.error",
        "run.end",
        "x.acme.thing",
        "something.new",
        "header",
    ];
    const KEYS: [&str; 16] = [
        "run_id",
        "ts",
        "seq",
        "input",
        "event",
        "tool",
        "tool_call_id",
        "result_raw",
        "is_error",
        "output",
        "status",
        "message",
        "error",
        "outcome",
        "final",
        "context_left_percent",
    ];

    fn record() -> impl Strategy<Value = Value> {
        (
            0..TYPES.len(),
            prop::collection::vec((0..KEYS.len(), value()), 0..8),
            "[a-z]{1,4}",
            value(),
        )
            .prop_map(|(t, fields, extra_key, extra_val)| {
                let mut m = serde_json::Map::new();
                m.insert("type".into(), Value::from(TYPES[t]));
                for (k, v) in fields {
                    m.insert(KEYS[k].into(), v);
                }
                m.insert(format!("x_{extra_key}"), extra_val);
                Value::Object(m)
            })
    }

    proptest! {
        #[test]
        fn any_records_read_and_write_back_unchanged(recs in prop::collection::vec(record(), 0..12)) {
            let mut text = String::from("{\"type\":\"header\",\"schema_version\":1,\"run_id\":\"r\",\"started_at\":\"2026-01-01T00:00:00Z\"}\n");
            for r in &recs {
                text.push_str(&serde_json::to_string(r).unwrap());
                text.push('\n');
            }
            let read = FORMAT.read_bytes(Path::new("r.jsonl"), text.as_bytes()).unwrap();
            let (out, _) = write(&read.session);
            prop_assert_eq!(lines_of(&out), lines_of(text.as_bytes()));
        }
    }
}

/// The entries read from records (not the conversation read out of them).
fn records(s: &agentlog_model::Session) -> impl Iterator<Item = &Entry> {
    s.entries.iter().filter(|e| {
        !e.extra
            .contains_key(agentlog_formats::codelia::DERIVED_FROM)
    })
}

#[test]
fn a_run_log_reads_as_a_conversation_and_still_round_trips() {
    use agentlog_model::{BlockKind, Role};
    let path = fixture("session-store-spec-example.jsonl");
    let r = FORMAT.read_path(&path).unwrap();
    let s = &r.session;
    let mut seen = Vec::new();
    for e in s.active_branch() {
        let EntryKind::Message(m) = &e.kind else {
            continue;
        };
        for b in &m.content {
            seen.push(match (&m.role, &b.kind) {
                (Role::User, BlockKind::Text { text }) => format!("user {text}"),
                (Role::Assistant, BlockKind::Text { text }) => format!("assistant {text}"),
                (_, BlockKind::ToolCall { name, input, .. }) => format!("call {name} {input}"),
                (
                    _,
                    BlockKind::ToolResult {
                        tool_call_id,
                        content,
                        ..
                    },
                ) => format!(
                    "result {} {}",
                    tool_call_id.as_deref().unwrap_or(""),
                    content
                        .iter()
                        .filter_map(|c| c.plain_text())
                        .collect::<String>()
                ),
                (r, k) => format!("{r:?} {k:?}"),
            });
        }
    }
    assert_eq!(seen[0], "user list files");
    assert!(seen[1].starts_with("call exec_command"), "{seen:?}");
    assert_eq!(seen[2], "result call_1 AGENTS.md\nRULES.md\npackages\n");
    assert!(seen.len() >= 3);
    assert!(s.message_count() >= 2, "{}", s.message_count());
    // The records, not the messages read out of them, are written back.
    let bytes = std::fs::read(&path).unwrap();
    let (out, _) = write(s);
    let want: Vec<Value> = String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines_of(&out), want);
    // Converted to Claude, the run is a conversation.
    let mut claude = Vec::new();
    agentlog_formats::registry::by_name("claude")
        .unwrap()
        .write(s, &mut claude)
        .unwrap();
    let text = String::from_utf8(claude).unwrap();
    assert!(
        text.contains("list files") && text.contains("tool_result") && text.contains("RULES.md")
    );
}
