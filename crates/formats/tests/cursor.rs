#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The Cursor reader against the fixtures and against chat stores built
//! here (the store.db fixture has no blobs).

use agentlog_formats::discover::{discover_report, DiscoverEnv};
use agentlog_formats::{registry, Format};
use agentlog_model::{BlockKind, EntryKind, Role, RunOutcome, Session, Timestamp};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn fixture(rel: &str) -> PathBuf {
    Path::new(FIXTURES).join("native/cursor").join(rel)
}

/// The plain-text transcript fixture (written here after real files: see
/// `tests/fixtures/PROVENANCE.md`).
fn text_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cursor-txt/projects/home-alice-src-demo/agent-transcripts/9b2f3c1e-5d4a-4e6b-8c7d-1a2b3c4d5e6f.txt")
}

fn cursor() -> &'static dyn Format {
    registry::by_name("cursor").unwrap()
}

fn messages(s: &Session) -> Vec<&agentlog_model::Message> {
    s.entries.iter().filter_map(|e| e.message()).collect()
}

#[test]
fn every_cursor_fixture_is_detected_and_read_without_errors() {
    for rel in [
        "as-test-session.jsonl",
        "as-subagent-session.jsonl",
        "as-stage0/small.jsonl",
        "as-stage0/large.jsonl",
        "as-stage0/schema_drift.jsonl",
        "as-stage0/subagent/parent.jsonl",
        "as-stage0/subagent/subagents/child.jsonl",
        "as-test-store.db",
    ] {
        let p = fixture(rel);
        assert_eq!(registry::detect(&p).unwrap().name(), "cursor", "{rel}");
        let read = cursor().read_path(&p).unwrap();
        assert!(
            read.diagnostics
                .iter()
                .all(|d| d.severity != agentlog_formats::Severity::Error),
            "{rel}: {:?}",
            read.diagnostics
        );
        assert_eq!(read.session.meta.agent, agentlog_model::Agent::Cursor);
    }
}

#[test]
fn transcript_prompts_lose_their_wrapper_and_keep_tools() {
    let read = cursor()
        .read_path(&fixture("as-test-session.jsonl"))
        .unwrap();
    let s = &read.session;
    assert_eq!(s.meta.id, "as-test-session");
    let msgs = messages(s);
    assert_eq!(msgs.len(), 6);
    assert_eq!(s.first_prompt().as_deref(), Some("run ls command"));
    assert_eq!(msgs[3].text_content(), "now show me the git status");
    assert_eq!(
        msgs[3].content[0].extra["wrapper"]["kind"],
        json!("user_query")
    );
    let calls: Vec<&str> = msgs
        .iter()
        .flat_map(|m| m.tool_calls())
        .map(|c| c.1)
        .collect();
    assert_eq!(calls, ["Shell", "Shell"]);
    assert_eq!(msgs[4].text_content(), "[REDACTED]");
    // One linear branch, ending at the last line.
    assert_eq!(s.active_branch().len(), 6);
    assert_eq!(s.leaf_id.as_deref(), Some("l6"));
}

#[test]
fn transcript_thinking_results_and_turn_ends() {
    let large = cursor()
        .read_path(&fixture("as-stage0/large.jsonl"))
        .unwrap()
        .session;
    let msgs = messages(&large);
    assert!(
        matches!(&msgs[1].content[0].kind, BlockKind::Thinking { text, .. } if text == "Let me check the directory.")
    );
    let BlockKind::ToolResult {
        tool_call_id,
        content,
        ..
    } = &msgs[2].content[0].kind
    else {
        panic!("expected a tool result, got {:?}", msgs[2].content[0]);
    };
    assert_eq!(tool_call_id.as_deref(), Some("t1"));
    assert_eq!(
        content[0].plain_text().as_deref(),
        Some("file1.txt\nfile2.txt")
    );
    assert_eq!(
        large.first_prompt().as_deref(),
        Some("What files are here?")
    );

    let small = cursor()
        .read_path(&fixture("as-stage0/small.jsonl"))
        .unwrap()
        .session;
    let last = small.entries.last().unwrap();
    assert!(matches!(
        &last.kind,
        EntryKind::RunEnd { outcome: RunOutcome::Completed, run_id, .. } if run_id == "turn-1"
    ));
    assert_eq!(small.message_count(), 4);
}

#[test]
fn schema_drift_is_kept_not_dropped() {
    let s = cursor()
        .read_path(&fixture("as-stage0/schema_drift.jsonl"))
        .unwrap()
        .session;
    let msgs = messages(&s);
    assert_eq!(
        s.entries[0].extra["metadata"]["requestId"],
        json!("cursor-drift-1")
    );
    assert_eq!(msgs[1].model.as_deref(), Some("cursor-auto"));
    assert_eq!(
        s.entries[1].extra["conversation"]["branchId"],
        json!("branch-stage0")
    );
    let call = &msgs[1].content[1];
    assert!(matches!(&call.kind, BlockKind::ToolCall { name, .. } if name == "read_file"));
    assert_eq!(call.extra["metadata"]["callKind"], json!("read"));
    assert!(
        matches!(&msgs[1].content[2].kind, BlockKind::Other { value } if value["type"] == "custom_block")
    );
    assert!(matches!(
        &msgs[2].content[0].kind,
        BlockKind::ToolResult { .. }
    ));
}

#[test]
fn subagent_transcripts_name_their_parent() {
    let s = cursor()
        .read_path(&fixture("as-stage0/subagent/subagents/child.jsonl"))
        .unwrap()
        .session;
    assert_eq!(s.meta.parent_session.as_deref(), Some("subagent"));
    assert_eq!(s.meta.id, "child");
}

#[test]
fn bad_lines_are_diagnostics_and_the_rest_is_read() {
    let bytes = b"{\"role\":\"user\",\"message\":{\"content\":\"hi\"}}\nnot json\n[1]\n{\"type\":\"mystery\"}\n{\"type\":\"turn_ended\",\"status\":\"aborted\",\"error\":\"x\"}\n{\"role\":\"assis";
    let read = cursor().read_bytes(Path::new("t.jsonl"), bytes).unwrap();
    let codes: Vec<(Option<u64>, &str)> =
        read.diagnostics.iter().map(|d| (d.line, d.code)).collect();
    assert_eq!(
        codes,
        [
            (Some(2), "invalid-json"),
            (Some(3), "not-an-object"),
            (Some(4), "unknown-type"),
            (Some(6), "torn-tail")
        ]
    );
    let kinds: Vec<&str> = read.session.entries.iter().map(|e| e.kind_name()).collect();
    assert_eq!(kinds, ["message", "unknown", "run_end"]);
    assert_eq!(read.session.entries[2].extra["error"], json!("x"));
    assert!(cursor()
        .read_bytes(Path::new("t.jsonl"), b"nope\n")
        .is_err());
}

#[test]
fn the_store_fixture_gives_metadata_and_reports_the_missing_root() {
    let read = cursor().read_path(&fixture("as-test-store.db")).unwrap();
    let m = &read.session.meta;
    assert_eq!(m.id, "a1b2c3d4-e5f6-7890-abcd-ef1234567890");
    assert_eq!(m.title.as_deref(), Some("Test Session"));
    assert_eq!(m.model.model.as_deref(), Some("claude-4-sonnet"));
    assert_eq!(m.created_at, Some(Timestamp::Millis(1_775_522_590_321)));
    assert!(read.session.entries.is_empty());
    assert!(read
        .diagnostics
        .iter()
        .any(|d| d.code == "missing-blob" && d.message.contains("deadbeef")));
}

// ---- chat stores built here -------------------------------------------

const KEY: &str = "c2VjcmV0LWtleS1uZXZlci1sb2c=";

fn sha(data: &[u8]) -> (String, [u8; 32]) {
    let d: [u8; 32] = Sha256::digest(data).into();
    (hex::encode(d), d)
}

fn field_bytes(out: &mut Vec<u8>, field: u8, bytes: &[u8]) {
    out.push(field << 3 | 2);
    let mut n = bytes.len();
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    }
    out.extend_from_slice(bytes);
}

/// A store with: a system message, a `<user_info>` context message, a
/// wrapped prompt, an assistant turn node (reasoning + tool call) with a
/// tool result, a final answer, an unreferenced old blob and a reference
/// to a blob that is not stored.
fn build_store(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let db = dir.join("store.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
         CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB);",
    )
    .unwrap();
    let put = |data: Vec<u8>| -> [u8; 32] {
        let (id, raw) = sha(&data);
        conn.execute(
            "INSERT OR REPLACE INTO blobs (id, data) VALUES (?1, ?2)",
            rusqlite::params![id, data],
        )
        .unwrap();
        raw
    };
    let msg = |v: Value| serde_json::to_vec(&v).unwrap();
    let system = put(msg(
        json!({"role":"system","content":"You are a coding agent."}),
    ));
    let info = put(msg(
        json!({"role":"user","content":"<user_info>\nOS: linux\nShell: bash\n</user_info>"}),
    ));
    let prompt = put(msg(
        json!({"role":"user","id":"u1","content":[{"type":"text","text":"<user_query>\nfix the build\n</user_query>"}]}),
    ));
    let think = put(msg(json!({"role":"assistant","id":"a1","content":[
        {"type":"reasoning","text":"Check the log first."},
        {"type":"tool-call","toolCallId":"c1","toolName":"Shell","args":{"command":"cargo build"}}
    ]})));
    let result = put(msg(json!({"role":"tool","content":[
        {"type":"tool-result","toolCallId":"c1","toolName":"Shell","result":"error[E0425]"}
    ]})));
    let answer = put(msg(
        json!({"role":"assistant","content":"Fixed the missing import."}),
    ));
    let _orphan = put(msg(json!({"role":"user","content":"an abandoned draft"})));
    let mut turn = Vec::new();
    field_bytes(&mut turn, 1, &think);
    field_bytes(&mut turn, 1, &result);
    field_bytes(&mut turn, 4, b"not json, not a ref");
    let turn = put(turn);
    let mut root = Vec::new();
    for child in [system, info, prompt, turn] {
        field_bytes(&mut root, 1, &child);
    }
    field_bytes(&mut root, 1, &[7u8; 32]); // not stored
    field_bytes(&mut root, 1, &answer);
    field_bytes(&mut root, 9, b"file:///work/my%20proj");
    root.extend_from_slice(&[0x10, 0x2a]); // a varint field
    let (root_id, _) = sha(&root);
    put(root);
    let meta = json!({
        "agentId": "9f0c6a2e-1111-4222-8333-444455556666",
        "latestRootBlobId": root_id,
        "name": "Fix the build",
        "mode": "agent",
        "createdAt": 1_775_522_590_321_i64,
        "lastUsedModel": "gpt-5",
        "blobEncryptionKey": KEY,
    });
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('0', ?1)",
        [hex::encode(serde_json::to_vec(&meta).unwrap())],
    )
    .unwrap();
    db
}

#[test]
fn a_built_store_is_walked_from_the_latest_root() {
    let tmp = tempfile::tempdir().unwrap();
    let db = build_store(&tmp.path().join("chat"));
    let read = cursor().read_path(&db).unwrap();
    let s = &read.session;
    assert_eq!(s.meta.id, "9f0c6a2e-1111-4222-8333-444455556666");
    assert_eq!(s.meta.title.as_deref(), Some("Fix the build"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/work/my proj"));
    assert_eq!(s.meta.model.model.as_deref(), Some("gpt-5"));
    let msgs = messages(s);
    let roles: Vec<&Role> = msgs.iter().map(|m| &m.role).collect();
    assert_eq!(
        roles,
        [
            &Role::System,
            &Role::User,
            &Role::User,
            &Role::Assistant,
            &Role::Tool,
            &Role::Assistant
        ]
    );
    assert_eq!(msgs[1].injected.as_deref(), Some("user_info"));
    assert_eq!(s.first_prompt().as_deref(), Some("fix the build"));
    assert_eq!(msgs[2].id.as_deref(), Some("u1"));
    assert!(
        matches!(&msgs[3].content[0].kind, BlockKind::Thinking { text, .. } if text == "Check the log first.")
    );
    assert!(
        matches!(&msgs[3].content[1].kind, BlockKind::ToolCall { id: Some(id), name, .. } if id == "c1" && name == "Shell")
    );
    assert_eq!(msgs[4].tool_call_id.as_deref(), Some("c1"));
    assert_eq!(msgs[5].text_content(), "Fixed the missing import.");
    assert!(msgs[5].content_is_text);
    // The abandoned draft is not reachable from the root.
    assert!(msgs
        .iter()
        .all(|m| m.text_content() != "an abandoned draft"));
    // The missing reference is reported with the blob id.
    let missing = hex::encode([7u8; 32]);
    assert!(read
        .diagnostics
        .iter()
        .any(|d| d.code == "missing-blob" && d.message.contains(&missing)));
    // A single branch, in walk order.
    assert_eq!(s.active_branch().len(), 6);
}

#[test]
fn the_blob_encryption_key_is_never_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let chat = tmp.path().join("chat");
    let db = build_store(&chat);
    std::fs::write(
        chat.join("meta.json"),
        json!({"title":"From meta.json","cwd":"/home/me/proj","blobEncryptionKey":KEY,"schemaVersion":2,"nested":{"blobEncryptionKey":KEY}}).to_string(),
    )
    .unwrap();
    let read = cursor().read_path(&db).unwrap();
    assert_eq!(read.session.meta.title.as_deref(), Some("From meta.json"));
    assert_eq!(read.session.meta.cwd.as_deref(), Some("/home/me/proj"));
    assert_eq!(read.session.meta.format_version, Some(json!(2)));
    let all = format!(
        "{}{:?}{:?}",
        serde_json::to_string(&read.session).unwrap(),
        read.session,
        read.diagnostics
    );
    assert!(!all.contains(KEY));
    assert!(!all.contains("blobEncryptionKey"));
    assert_eq!(
        read.session.meta.extra["store_meta"]["mode"],
        json!("agent")
    );
}

#[test]
fn a_database_that_is_not_a_chat_store_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("store.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE other (x);")
        .unwrap();
    let err = cursor().read_path(&db).unwrap_err().to_string();
    assert!(err.contains("not a Cursor chat store"), "{err}");
}

#[test]
fn text_transcripts_are_read_turn_by_turn() {
    let p = text_fixture();
    assert_eq!(registry::detect(&p).unwrap().name(), "cursor");
    let read = cursor().read_path(&p).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    let s = &read.session;
    assert_eq!(s.meta.id, "9b2f3c1e-5d4a-4e6b-8c7d-1a2b3c4d5e6f");
    let msgs = messages(s);
    let prompts: Vec<String> = msgs
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.text_content())
        .collect();
    assert_eq!(prompts, ["fix the build error and add a README", "/review"]);
    // The attachments and the slash command stay beside the prompt.
    let wrapper = &msgs[0].content[0].extra["wrapper"]["before"];
    assert!(wrapper.as_str().unwrap().contains("<terminal_selection"));
    let calls: Vec<(String, String, Value)> = msgs
        .iter()
        .flat_map(|m| m.tool_calls())
        .map(|(id, name, input)| (id.clone().unwrap(), name.to_string(), input.clone()))
        .collect();
    let names: Vec<&str> = calls.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(
        names,
        [
            "Read",
            "Read",
            "StrReplace",
            "Shell",
            "TodoWrite",
            "Write",
            "Task"
        ]
    );
    // Multi-line values run on over unindented lines.
    assert_eq!(calls[2].2["old_string"], "    println!(\"hi\");\n}");
    assert_eq!(
        calls[2].2["new_string"],
        "    println!(\"hi\");\n    let x = 1;\n}"
    );
    assert_eq!(calls[3].2["timeout"], 120000);
    assert_eq!(calls[4].2["todos"][1]["status"], "in_progress");
    assert_eq!(calls[4].2["merge"], true);
    assert!(calls[5].2["contents"]
        .as_str()
        .unwrap()
        .ends_with("```bash\ncargo build\n```"));
    assert_eq!(
        calls[6].2["prompt"],
        "Review the working tree of /home/alice/src/demo. Report:\n1. What changed\n2. Risks"
    );
    assert_eq!(calls[6].2["model"], "fast");
    // Each result answers its call, in order; its output was never written.
    let results: Vec<(Option<String>, &Value)> = msgs
        .iter()
        .filter(|m| m.role == Role::Tool)
        .flat_map(|m| &m.content)
        .map(|b| match &b.kind {
            BlockKind::ToolResult {
                tool_call_id,
                content,
                ..
            } => {
                assert!(content.is_empty());
                (tool_call_id.clone(), &b.extra["name"])
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(results.len(), calls.len());
    for ((id, name), call) in results.iter().zip(&calls) {
        assert_eq!(id.as_deref(), Some(call.0.as_str()));
        assert_eq!(name.as_str(), Some(call.1.as_str()));
    }
    // One thinking line with words (the empty one is not a block); the
    // lines after it are the answer's text.
    let thinking: Vec<&str> = msgs
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match &b.kind {
            BlockKind::Thinking { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, ["**Inspecting the build error**"]);
    assert!(msgs[1].text_content().contains("I'll read the file first."));
    assert_eq!(
        msgs.last().unwrap().text_content(),
        "No risks found beyond the unused variable `x`."
    );
    let v = cursor().validate(&p).unwrap();
    assert!(
        v.iter()
            .all(|d| d.severity != agentlog_formats::Severity::Error),
        "{v:?}"
    );
}

// ---- discovery --------------------------------------------------------

fn md5_hex(s: &str) -> String {
    use md5::Digest as _;
    hex::encode(md5::Md5::digest(s.as_bytes()))
}

#[test]
fn discovers_both_stores_once_per_session() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let cursor_dir = home.join(".cursor");
    let cwd = "/home/me/proj";
    // A chat store alone, and a chat store that also has a transcript.
    let alone = cursor_dir
        .join("chats")
        .join(md5_hex(cwd))
        .join("9f0c6a2e-1111-4222-8333-444455556666");
    build_store(&alone);
    let both = cursor_dir.join("chats").join(md5_hex(cwd)).join("both-id");
    build_store(&both);
    std::fs::write(
        both.join("meta.json"),
        json!({"title":"Titled","cwd":cwd,"blobEncryptionKey":KEY}).to_string(),
    )
    .unwrap();
    let tdir = cursor_dir.join("projects/home-me-proj/agent-transcripts");
    std::fs::create_dir_all(tdir.join("both-id/subagents")).unwrap();
    std::fs::copy(
        fixture("as-test-session.jsonl"),
        tdir.join("both-id/both-id.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        fixture("as-subagent-session.jsonl"),
        tdir.join("both-id/subagents/child-id.jsonl"),
    )
    .unwrap();
    std::fs::copy(fixture("as-stage0/small.jsonl"), tdir.join("flat-id.jsonl")).unwrap();
    std::fs::write(tdir.join("notes.txt"), "user: hi\n").unwrap();
    // A text transcript (what Cursor wrote before JSON lines), one of a
    // session that also has JSON lines (not taken), and what Cursor keeps
    // beside the transcripts (terminal logs: never taken).
    let txt_id = "9b2f3c1e-5d4a-4e6b-8c7d-1a2b3c4d5e6f";
    std::fs::copy(text_fixture(), tdir.join(format!("{txt_id}.txt"))).unwrap();
    std::fs::copy(text_fixture(), tdir.join("both-id/both-id.txt")).unwrap();
    std::fs::create_dir_all(cursor_dir.join("projects/home-me-proj/terminals")).unwrap();
    std::fs::copy(
        text_fixture(),
        cursor_dir.join("projects/home-me-proj/terminals/0123abcd.txt"),
    )
    .unwrap();
    // A session run outside a workspace: `projects/agent-transcripts`.
    let loose = cursor_dir.join("projects/agent-transcripts/ab12cd34-0000-4000-8000-000000000001");
    std::fs::create_dir_all(&loose).unwrap();
    std::fs::copy(
        fixture("as-stage0/small.jsonl"),
        loose.join("ab12cd34-0000-4000-8000-000000000001.jsonl"),
    )
    .unwrap();

    let env = DiscoverEnv::with_home(home);
    let found = cursor().discover(&env);
    let rel: Vec<String> = found
        .iter()
        .map(|p| {
            p.strip_prefix(&cursor_dir)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut rel_sorted = rel.clone();
    rel_sorted.sort();
    let loose_rel = "projects/agent-transcripts/ab12cd34-0000-4000-8000-000000000001/ab12cd34-0000-4000-8000-000000000001.jsonl";
    let txt_rel = format!("projects/home-me-proj/agent-transcripts/{txt_id}.txt");
    assert!(rel.iter().any(|r| r == loose_rel), "{rel:#?}");
    assert!(rel.contains(&txt_rel), "{rel:#?}");
    // The workspace-less session has no project.
    let loose_read = cursor().read_path(&cursor_dir.join(loose_rel)).unwrap();
    assert_eq!(loose_read.session.meta.cwd, None);
    let rel: Vec<String> = rel
        .into_iter()
        .filter(|r| *r != loose_rel && *r != txt_rel)
        .collect();
    assert_eq!(
        rel,
        [
            "projects/home-me-proj/agent-transcripts/both-id/both-id.jsonl",
            "projects/home-me-proj/agent-transcripts/both-id/subagents/child-id.jsonl",
            "projects/home-me-proj/agent-transcripts/flat-id.jsonl",
            format!(
                "chats/{}/9f0c6a2e-1111-4222-8333-444455556666/store.db",
                md5_hex(cwd)
            )
            .as_str(),
        ]
    );
    // The transcript takes title, cwd and model from its chat directory.
    let found: Vec<PathBuf> = found
        .into_iter()
        .filter(|p| !p.ends_with(&txt_rel) && !p.ends_with(loose_rel))
        .collect();
    let read = cursor().read_path(&found[0]).unwrap();
    assert_eq!(read.session.meta.title.as_deref(), Some("Titled"));
    assert_eq!(read.session.meta.cwd.as_deref(), Some(cwd));
    assert_eq!(read.session.meta.model.model.as_deref(), Some("gpt-5"));
    assert!(!serde_json::to_string(&read.session).unwrap().contains(KEY));
    let child = cursor().read_path(&found[1]).unwrap();
    assert_eq!(
        child.session.meta.parent_session.as_deref(),
        Some("both-id")
    );

    // CURSOR_CONFIG_DIR relocates the root; --root replaces it.
    let mut moved = DiscoverEnv::with_home(tmp.path().join("elsewhere"));
    moved.vars.insert(
        "CURSOR_CONFIG_DIR".into(),
        cursor_dir.to_string_lossy().into_owned(),
    );
    assert_eq!(cursor().discover(&moved).len(), found.len() + 2);
    let mut rooted = DiscoverEnv::with_home(home);
    rooted.roots.insert("cursor".into(), vec![tdir.clone()]);
    assert_eq!(cursor().discover(&rooted).len(), 3);
}

#[test]
fn an_unlistable_chats_directory_is_reported_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let cursor_dir = tmp.path().join(".cursor");
    std::fs::create_dir_all(cursor_dir.join("projects/p/agent-transcripts")).unwrap();
    std::fs::copy(
        fixture("as-stage0/small.jsonl"),
        cursor_dir.join("projects/p/agent-transcripts/s.jsonl"),
    )
    .unwrap();
    // `chats` is a file, so it cannot be listed.
    std::fs::write(cursor_dir.join("chats"), "").unwrap();
    let env = DiscoverEnv::with_home(tmp.path());
    let report = discover_report(&env, Some(&["cursor".to_string()]));
    assert_eq!(report.found.len(), 1);
    assert!(report
        .diagnostics
        .iter()
        .any(|d| d.code == "unreadable-dir" && d.path == cursor_dir.join("chats")));
}

proptest::proptest! {
    #[test]
    fn arbitrary_transcript_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
        let _ = cursor().read_bytes(Path::new("x.jsonl"), &bytes);
    }

    #[test]
    fn arbitrary_json_lines_never_panic(lines in proptest::collection::vec("[ -~]{0,40}", 0..8)) {
        let text: String = lines.iter().map(|l| format!("{{\"role\":\"user\",\"message\":{{\"content\":{}}}}}\n", serde_json::to_string(l).unwrap())).collect();
        let read = cursor().read_bytes(Path::new("x.jsonl"), text.as_bytes());
        proptest::prop_assert!(read.is_ok() || lines.is_empty());
    }

    #[test]
    fn arbitrary_text_transcripts_never_panic(lines in proptest::collection::vec("(user:|assistant:|\\[Thinking\\] [ -~]{0,10}|\\[Tool call\\] [A-Za-z]{0,6}|\\[Tool result\\] [A-Za-z]{0,6}|  [a-z]{1,4}: [ -~]{0,10}|[ -~]{0,20})", 0..30)) {
        let text = lines.join("\n");
        let read = cursor().read_bytes(Path::new("agent-transcripts/x.txt"), text.as_bytes());
        if let Ok(r) = read {
            // Every call line of an assistant turn is one call.
            let mut in_assistant = false;
            let mut want = 0;
            for l in &lines {
                match l.as_str() {
                    "user:" => in_assistant = false,
                    "assistant:" => in_assistant = true,
                    l if in_assistant && l.starts_with("[Tool call] ") && !l[12..].trim().is_empty() => want += 1,
                    _ => {}
                }
            }
            let calls: usize = r.session.entries.iter().filter_map(|e| e.message()).map(|m| m.tool_calls().count()).sum();
            proptest::prop_assert_eq!(calls, want);
        }
    }
}
