#![allow(clippy::unwrap_used, clippy::expect_used)]
//! jido_code session files: fixtures round-trip, mapping to the model,
//! schema checks and conversion with fidelity reports.

use agentlog_formats::discover::DiscoverEnv;
use agentlog_formats::jido::{validate as schema, FORMAT};
use agentlog_formats::{registry, Format};
use agentlog_model::{
    Agent, Block, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn fixture() -> PathBuf {
    Path::new(FIXTURES).join("seeds/jido_code/persistence-format-example.json")
}

fn write(session: &Session) -> (Value, agentlog_formats::Fidelity) {
    let mut out = Vec::new();
    let fid = FORMAT.write(session, &mut out).unwrap();
    (serde_json::from_slice(&out).unwrap(), fid)
}

#[test]
fn every_fixture_round_trips() {
    let mut seen = 0;
    for entry in std::fs::read_dir(Path::new(FIXTURES).join("seeds/jido_code")).unwrap() {
        let path = entry.unwrap().path();
        let original: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let r = FORMAT.read_path(&path).unwrap();
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
        assert!(
            r.session.meta.extra.is_empty(),
            "everything mapped: {:?}",
            r.session.meta.extra
        );
        let (out, fid) = write(&r.session);
        assert!(fid.is_lossless(), "{fid}");
        assert_eq!(out, original, "{}", path.display());
        seen += 1;
    }
    assert_eq!(seen, 1);
}

#[test]
fn maps_the_fixture_to_the_model() {
    let path = fixture();
    let head = std::fs::read(&path).unwrap();
    assert_eq!(registry::detect_bytes(&path, &head).unwrap().name(), "jido");
    let s = FORMAT.read_path(&path).unwrap().session;
    assert_eq!(s.meta.id, "550e8400-e29b-41d4-a716-446655440000");
    assert_eq!(s.meta.agent, Agent::JidoCode);
    assert_eq!(s.meta.title.as_deref(), Some("my-project"));
    assert_eq!(
        s.meta.cwd.as_deref(),
        Some("/home/user/projects/my-project")
    );
    assert_eq!(s.meta.model.temperature, Some(0.7));
    assert_eq!(s.meta.model.max_tokens, Some(4096));
    assert_eq!(
        s.meta.closed_at,
        Some(Timestamp::Text("2025-12-16T16:00:00Z".into()))
    );
    assert_eq!(s.meta.todos[0].status, "in_progress");
    assert_eq!(
        s.meta.todos[0].active_form.as_deref(),
        Some("Implementing feature X")
    );
    assert_eq!(s.entries.len(), 2);
    assert_eq!(s.entries[1].id, "msg-002");
    assert_eq!(s.entries[1].parent_id.as_deref(), Some("msg-001"));
    assert_eq!(s.first_prompt().as_deref(), Some("Hello, can you help me?"));
    assert!(schema::validate(&serde_json::from_slice(&head).unwrap()).is_empty());
}

#[test]
fn keeps_unknown_fields_and_odd_messages_verbatim() {
    let doc = json!({
        "version": 1, "id": "s", "name": "n", "project_path": "/p",
        "config": {"provider": "anthropic", "model": "m", "top_p": 0.9},
        "created_at": "2025-12-16T10:30:00Z", "updated_at": "2025-12-16T10:30:00Z", "closed_at": "2025-12-16T10:30:00Z",
        "conversation": [
            {"id": "a", "role": "user", "content": "hi", "timestamp": "2025-12-16T10:30:00Z", "usage": {"input_tokens": 3}},
            {"id": "b", "role": "assistant", "content": ["not", "a", "string"], "timestamp": "2025-12-16T10:30:00Z"}
        ],
        "todos": [],
        "language": "elixir",
        "prompt_history": ["hi"],
        "signature": "c2ln"
    });
    let r = FORMAT
        .read_bytes(Path::new("s.json"), doc.to_string().as_bytes())
        .unwrap();
    assert!(r.diagnostics.iter().any(|d| d.code == "unmapped-message"));
    assert!(matches!(
        r.session.entries[1].kind,
        EntryKind::Unknown { .. }
    ));
    assert_eq!(r.session.meta.extra.get("language"), Some(&json!("elixir")));
    let (out, _) = write(&r.session);
    assert_eq!(out, doc);
}

#[test]
fn validation_reports_schema_problems_with_their_paths() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.json");
    std::fs::write(&p, r#"{"version":1,"id":"x","name":"n","project_path":"/p","config":{},"created_at":"nope","updated_at":"2025-12-16T10:30:00Z","closed_at":"2025-12-16T10:30:00Z","conversation":[{"id":"a","role":"robot","content":"x","timestamp":"2025-12-16T10:30:00Z"}],"todos":[]}"#).unwrap();
    let msgs: Vec<String> = FORMAT
        .validate(&p)
        .unwrap()
        .iter()
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(
        msgs,
        [
            "created_at: must be an ISO 8601 timestamp such as 2025-12-16T10:30:00Z, found \"nope\"",
            "conversation[0].role: must be one of user, assistant, system, tool, found \"robot\"",
        ]
    );
}

#[test]
fn converting_a_rich_session_reports_what_jido_cannot_hold() {
    let mut meta = SessionMeta::new("s-9", Agent::Claude);
    meta.format = Some("claude".into());
    meta.cwd = Some("/work/proj".into());
    let mut s = Session::new(meta);
    let t = |x: &str| Timestamp::Text(x.into());
    s.push(
        Entry::new(
            "u1",
            None,
            EntryKind::Message(Message::text(Role::User, "fix it")),
        )
        .at(t("2026-01-01T00:00:00Z")),
    );
    let mut a = Message::text(Role::Assistant, "on it");
    a.content
        .insert(0, Block::thinking("plan", Some("sig".into())));
    a.content.push(Block::tool_call(
        Some("c1".into()),
        "bash",
        json!({"cmd": "ls"}),
    ));
    s.push(
        Entry::new("a1", Some("u1".into()), EntryKind::Message(a)).at(t("2026-01-01T00:00:01Z")),
    );
    s.push(
        Entry::new(
            "x",
            Some("u1".into()),
            EntryKind::Message(Message::text(Role::Assistant, "abandoned")),
        )
        .at(t("2026-01-01T00:00:02Z")),
    );
    s.push(Entry::new(
        "lbl",
        Some("a1".into()),
        EntryKind::Label {
            target_id: "a1".into(),
            label: Some("ok".into()),
        },
    ));
    s.set_leaf(Some("lbl")).unwrap();
    let (out, fid) = write(&s);
    let whats: Vec<&str> = fid.losses.iter().map(|l| l.what.as_str()).collect();
    for w in [
        "thinking",
        "tool calls",
        "entries off the active branch",
        "label entries",
    ] {
        assert!(whats.contains(&w), "{w} missing from {whats:?}");
    }
    assert_eq!(out["name"], "proj");
    assert_eq!(out["conversation"].as_array().unwrap().len(), 2);
    assert_eq!(out["conversation"][1]["content"], "on it");
    assert_eq!(out["created_at"], "2026-01-01T00:00:00Z");
    assert!(
        schema::validate(&out).is_empty(),
        "{:?}",
        schema::validate(&out)
    );
    // And back: the text survives.
    let back = FORMAT
        .read_bytes(Path::new("s-9.json"), out.to_string().as_bytes())
        .unwrap();
    assert_eq!(back.session.first_prompt().as_deref(), Some("fix it"));
}

#[test]
fn discovers_session_files() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".jido_code/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.json"), "{}").unwrap();
    std::fs::write(dir.join(".a.json.1.tmp"), "{}").unwrap();
    std::fs::write(dir.join("notes.txt"), "").unwrap();
    assert_eq!(
        FORMAT.discover(&DiscoverEnv::with_home(home.path())),
        [dir.join("a.json")]
    );
}

#[test]
fn survives_a_trip_through_the_unified_model_json() {
    let r = FORMAT.read_path(&fixture()).unwrap();
    let mut model_json = Vec::new();
    agentlog_formats::json::FORMAT
        .write(&r.session, &mut model_json)
        .unwrap();
    let back = agentlog_formats::json::FORMAT
        .read_bytes(Path::new("s.json"), &model_json)
        .unwrap();
    assert_eq!(back.session, r.session);
    let original: Value = serde_json::from_slice(&std::fs::read(fixture()).unwrap()).unwrap();
    assert_eq!(write(&back.session).0, original);
}

#[test]
fn a_codelia_run_converts_to_jido_with_a_report() {
    let p = Path::new(FIXTURES).join("seeds/codelia/session-store-spec-example.jsonl");
    let run = agentlog_formats::codelia::FORMAT.read_path(&p).unwrap();
    let (out, fid) = write(&run.session);
    let whats: Vec<&str> = fid.losses.iter().map(|l| l.what.as_str()).collect();
    for w in [
        "llm_request entries",
        "tool_output entries",
        "run_end entries (only the final answer kept, as an assistant message)",
    ] {
        assert!(whats.contains(&w), "{w} missing from {whats:?}");
    }
    assert!(!whats.contains(&"native fields of messages"), "{whats:?}");
    let conv = out["conversation"].as_array().unwrap();
    assert_eq!(conv.len(), 2);
    assert_eq!(conv[0]["role"], "user");
    assert_eq!(conv[0]["content"], "list files");
    assert_eq!(conv[0]["timestamp"], "2026-02-03T12:00:00.456Z");
    assert_eq!(
        conv[1]["content"],
        "Here are the files: AGENTS.md, RULES.md, packages."
    );
    assert_eq!(out["id"], "8f1d7b7a-7e8f-4e0f-9a7c-1c5d0e6b2b7a");
    assert_eq!(out["config"]["model"], "gpt-4.1-mini");
}
