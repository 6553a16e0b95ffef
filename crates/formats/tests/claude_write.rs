#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Writing sessions from other formats as Claude Code transcripts, the
//! resume plan, discovery and persisted tool outputs.

use agentlog_formats::claude::{self, FORMAT};
use agentlog_formats::discover::DiscoverEnv;
use agentlog_formats::{registry, Format};
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp,
    Usage,
};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/native/claude"
);

fn msg_entry(id: &str, parent: Option<&str>, ts: &str, m: Message) -> Entry {
    Entry::new(id, parent.map(String::from), EntryKind::Message(m)).at(Timestamp::Text(ts.into()))
}

/// A session as another agent (pi) would give it.
fn foreign_session() -> Session {
    let mut meta = SessionMeta::new("pi-session-1", Agent::Pi);
    meta.format = Some("pi".into());
    meta.cwd = Some("/home/me/proj".into());
    meta.title = Some("Fix the parser".into());
    let mut s = Session::new(meta);
    s.push(msg_entry(
        "e1",
        None,
        "2025-01-01T10:00:00.000Z",
        Message::text(Role::User, "List the files"),
    ));
    let mut a = Message::new(Role::Assistant);
    a.model = Some("gpt-5".into());
    a.provider = Some("openai".into());
    a.content = vec![
        Block::thinking("I should run ls", Some("opaque-openai".into())),
        Block::text("Running ls."),
        Block::tool_call(Some("call|1".into()), "bash", json!({"command": "ls"})),
        Block::tool_call(Some("call|2".into()), "read", json!("{\"path\":\"a\"}")),
    ];
    a.usage = Some(Usage {
        input: 10,
        output: 5,
        ..Usage::default()
    });
    s.push(msg_entry("e2", Some("e1"), "2025-01-01T10:00:01.000Z", a));
    let mut r = Message::new(Role::Tool);
    r.tool_call_id = Some("call|1".into());
    r.content = vec![Block::text("a.txt\nb.txt")];
    s.push(msg_entry("e3", Some("e2"), "2025-01-01T10:00:02.000Z", r));
    let mut done = Message::text(Role::Assistant, "Two files.");
    done.model = Some("gpt-5".into());
    s.push(msg_entry(
        "e4",
        Some("e3"),
        "2025-01-01T10:00:03.000Z",
        done,
    ));
    s.push(Entry::new(
        "e5",
        Some("e4".into()),
        EntryKind::ModelChange {
            provider: None,
            model: "gpt-5-mini".into(),
            role: None,
        },
    ));
    s
}

fn write(s: &Session) -> (Vec<Value>, agentlog_formats::Fidelity, Vec<u8>) {
    let mut out = Vec::new();
    let f = FORMAT.write(s, &mut out).unwrap();
    let lines = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    (lines, f, out)
}

#[test]
fn converted_sessions_have_the_current_claude_shape() {
    let s = foreign_session();
    let (lines, fidelity, _) = write(&s);
    let records: Vec<&Value> = lines.iter().filter(|v| v.get("uuid").is_some()).collect();
    // user, assistant, tool result, (added error result for call|2), assistant
    assert_eq!(records.len(), 5);
    let sid = records[0]["sessionId"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(sid).is_ok());
    let mut parent = Value::Null;
    for r in &records {
        for k in [
            "type",
            "uuid",
            "parentUuid",
            "sessionId",
            "timestamp",
            "cwd",
            "version",
            "userType",
            "isSidechain",
            "message",
        ] {
            assert!(r.get(k).is_some(), "{k} missing in {r}");
        }
        assert_eq!(r["parentUuid"], parent, "one linear chain");
        assert!(uuid::Uuid::parse_str(r["uuid"].as_str().unwrap()).is_ok());
        assert_eq!(r["sessionId"], sid);
        assert_eq!(r["userType"], "external");
        assert_eq!(r["isSidechain"], false);
        assert_eq!(r["cwd"], "/home/me/proj");
        parent = r["uuid"].clone();
        if r["type"] == "assistant" {
            let m = &r["message"];
            assert!(m["id"].as_str().unwrap().starts_with("msg_"));
            assert!(r["requestId"].as_str().unwrap().starts_with("req_"));
            assert_eq!(m["type"], "message");
            assert!(m["usage"]["input_tokens"].is_u64());
            assert!(m["model"].is_string());
        }
    }
    // Tool ids are valid for the API and results answer them.
    let call = &records[1]["message"]["content"];
    let ids: Vec<&str> = call
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_1", "call_2"]);
    assert_eq!(
        call[2]["input"],
        json!({"path": "a"}),
        "string input parsed"
    );
    assert_eq!(records[2]["message"]["content"][0]["tool_use_id"], "call_1");
    assert_eq!(records[3]["message"]["content"][0]["tool_use_id"], "call_2");
    assert_eq!(records[3]["message"]["content"][0]["is_error"], true);
    // The title is kept; what Claude cannot hold is reported.
    assert!(lines
        .iter()
        .any(|v| v["type"] == "custom-title" && v["customTitle"] == "Fix the parser"));
    let lost: Vec<&str> = fidelity.losses.iter().map(|l| l.what.as_str()).collect();
    assert!(lost.iter().any(|w| w.starts_with("thinking")), "{lost:?}");
    assert!(lost.contains(&"entry kind model_change"), "{lost:?}");
    assert!(lost
        .iter()
        .any(|w| w.starts_with("tool calls without a result")));
}

/// The conversation as (role, text, tool names, tool result ids) per
/// message on the active branch.
fn conversation(s: &Session) -> Vec<(Role, String, Vec<String>, usize)> {
    s.active_branch()
        .iter()
        .filter_map(|e| e.message())
        .filter(|m| !m.sidechain)
        .map(|m| {
            (
                m.role.clone(),
                m.text_content(),
                m.tool_calls().map(|(_, n, _)| n.to_string()).collect(),
                m.content
                    .iter()
                    .filter(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
                    .count(),
            )
        })
        .collect()
}

#[test]
fn written_output_reads_back_as_the_same_conversation() {
    let s = foreign_session();
    let (_, _, out) = write(&s);
    let back = FORMAT
        .read_bytes(Path::new("converted.jsonl"), &out)
        .unwrap();
    assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
    let got = conversation(&back.session);
    assert_eq!(got.len(), 5);
    assert_eq!(got[0], (Role::User, "List the files".into(), vec![], 0));
    assert_eq!(got[1].2, ["bash", "read"]);
    assert_eq!(got[4].1, "Two files.");
    assert_eq!(back.session.meta.title.as_deref(), Some("Fix the parser"));
    assert_eq!(back.session.meta.cwd.as_deref(), Some("/home/me/proj"));

    // Real Claude sessions converted afresh (as if from another format)
    // keep their conversation, thinking signatures included.
    for file in [
        "vct-test_conversation.jsonl",
        "ccv-sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        "ccl-dag_compact_after_rewind.jsonl",
    ] {
        let mut s = FORMAT
            .read_path(&Path::new(FIXTURES).join(file))
            .unwrap()
            .session;
        s.meta.format = None;
        let (_, fidelity, out) = write(&s);
        let back = FORMAT
            .read_bytes(Path::new("x.jsonl"), &out)
            .unwrap()
            .session;
        let want: Vec<_> = conversation(&s)
            .into_iter()
            .filter(|(r, t, c, n)| *r != Role::User || !t.is_empty() || !c.is_empty() || *n > 0)
            .collect();
        assert_eq!(conversation(&back), want, "{file}");
        assert!(
            !fidelity
                .losses
                .iter()
                .any(|l| l.what.starts_with("thinking")),
            "{file}: {fidelity}"
        );
        assert_eq!(
            back.total_usage().output,
            s.active_branch()
                .iter()
                .filter_map(|e| e.message())
                .filter_map(|m| m.usage.as_ref())
                .map(|u| u.output)
                .sum::<u64>(),
            "{file}"
        );
    }
}

#[test]
fn resume_plan_uses_the_project_directory_and_a_uuid() {
    let s = foreign_session();
    let env = DiscoverEnv::with_home("/home/me");
    let plan = FORMAT.resume_plan(&s, &env).unwrap();
    let (lines, _, _) = write(&s);
    let sid = lines[0]["sessionId"].as_str().unwrap();
    assert_eq!(
        plan.path,
        PathBuf::from(format!(
            "/home/me/.claude/projects/-home-me-proj/{sid}.jsonl"
        ))
    );
    assert_eq!(plan.command, format!("claude --resume {sid}"));
    assert_eq!(plan.cwd, Some(PathBuf::from("/home/me/proj")));

    let mut env = DiscoverEnv::with_home("/home/me");
    env.vars
        .insert("CLAUDE_CONFIG_DIR".into(), "/cfg/one,/cfg/two".into());
    let plan = FORMAT.resume_plan(&s, &env).unwrap();
    assert!(plan.path.starts_with("/cfg/one/projects/-home-me-proj"));

    let mut no_cwd = s.clone();
    no_cwd.meta.cwd = None;
    let err = FORMAT.resume_plan(&no_cwd, &env).unwrap_err();
    assert!(err.to_string().contains("working directory"));
    assert_eq!(
        claude::encode_project_dir("/Users/me/my_proj.v2"),
        "-Users-me-my-proj-v2"
    );
}

fn touch(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn discover_lists_sessions_but_not_subagent_files() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let line = "{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n";
    touch(&h.join(".claude/projects/-p/s1.jsonl"), line);
    touch(&h.join(".claude/projects/-p/agent-abc.jsonl"), line);
    touch(
        &h.join(".claude/projects/-p/s1/subagents/agent-x.jsonl"),
        line,
    );
    touch(&h.join(".claude/projects/-p/s1/tool-results/t.txt"), "x");
    touch(&h.join(".config/claude/projects/-q/s2.jsonl"), line);
    touch(&h.join(".claude/history.jsonl"), line);
    let env = DiscoverEnv::with_home(h);
    let found = FORMAT.discover(&env);
    assert_eq!(
        found,
        [
            h.join(".claude/projects/-p/s1.jsonl"),
            h.join(".config/claude/projects/-q/s2.jsonl"),
        ]
    );
    let mut env = DiscoverEnv::with_home(h);
    env.vars.insert(
        "CLAUDE_CONFIG_DIR".into(),
        format!(
            "{},{}",
            h.join(".config/claude").display(),
            h.join("none").display()
        ),
    );
    assert_eq!(
        FORMAT.discover(&env),
        [h.join(".config/claude/projects/-q/s2.jsonl")]
    );
}

#[test]
fn persisted_outputs_are_read_from_the_session_directory_only() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir
        .path()
        .join("proj/0a1b2c3d-0000-4000-8000-000000000001.jsonl");
    let results = dir
        .path()
        .join("proj/0a1b2c3d-0000-4000-8000-000000000001/tool-results");
    touch(&results.join("toolu_1.txt"), "FULL OUTPUT\nline 2\n");
    touch(&results.join("toolu_3.txt"), "THIRD OUTPUT\n");
    let outside = dir.path().join("secret.txt");
    touch(&outside, "SECRET");
    let preview = |p: &Path| {
        format!(
            "<persisted-output>\nOutput too large (20KB). Full output saved to: {}\n\nPreview (first 2KB):\nFULL\n</persisted-output>",
            p.display()
        )
    };
    let lines = [
        json!({"type":"assistant","uuid":"a1","parentUuid":null,"sessionId":"s","message":{"id":"msg_1","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}},{"type":"tool_use","id":"toolu_2","name":"Bash","input":{}},{"type":"tool_use","id":"toolu_3","name":"Bash","input":{}}]}}),
        json!({"type":"user","uuid":"u1","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":preview(&results.join("toolu_1.txt"))}]},"toolUseResult":{"persistedOutputPath":results.join("toolu_1.txt"),"persistedOutputSize":20000}}),
        json!({"type":"user","uuid":"u2","parentUuid":"u1","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":preview(&outside)}]}}),
        // The preview names no file; only the record's `toolUseResult` does.
        json!({"type":"user","uuid":"u3","parentUuid":"u2","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_3","content":"<persisted-output>\nPreview\n</persisted-output>"}]},"toolUseResult":{"persistedOutputPath":results.join("toolu_3.txt")}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    touch(&session, &text);
    let outputs = |s: &agentlog_model::Session| -> Vec<String> {
        s.entries
            .iter()
            .filter_map(|e| e.message())
            .filter(|m| m.role == Role::Tool)
            .map(|m| m.content[0].plain_text().unwrap())
            .collect()
    };
    let r = FORMAT.read_path(&session).unwrap();
    let results = outputs(&r.session);
    assert_eq!(results[0], "FULL OUTPUT\nline 2\n");
    assert!(
        results[1].contains("<persisted-output>"),
        "outside the dir: not read"
    );
    assert_eq!(results[2], "THIRD OUTPUT\n");
    // Read to show with every entry's native fields dropped as it is read:
    // the outputs are loaded before (`toolUseResult` names the third).
    let trimmed = FORMAT
        .read_path_to_show_with(&session, &|e| e.extra.clear())
        .unwrap();
    assert_eq!(outputs(&trimmed.session), results);
    // The file still writes back exactly as it was.
    let mut out = Vec::new();
    FORMAT.write(&r.session, &mut out).unwrap();
    let got: Vec<Value> = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(got, lines);
}

#[test]
fn claude_files_are_detected_as_claude() {
    for file in [
        "vct-test_conversation.jsonl",
        "ccv-sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        "as-stage0-small.jsonl",
        "ccl-dag_compact_after_rewind.jsonl",
        "sw-sample_session.jsonl",
        "as-subagent-project/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl",
    ] {
        let f = registry::detect(&Path::new(FIXTURES).join(file)).unwrap();
        assert_eq!(f.name(), "claude", "{file}");
    }
    let others: HashSet<&str> = ["{\"type\":\"session\",\"version\":3,\"id\":\"x\"}\n"]
        .into_iter()
        .filter(|h| FORMAT.detect(Path::new("x.jsonl"), h.as_bytes()) > 0)
        .collect();
    assert!(others.is_empty());
}

#[test]
fn foreign_compactions_become_a_boundary_and_a_summary() {
    let mut s = foreign_session();
    s.entries.truncate(1);
    s.push(Entry::new(
        "c1",
        Some("e1".into()),
        EntryKind::Compaction {
            summary: "We listed files.".into(),
            short_summary: None,
            first_kept_entry_id: None,
            tokens_before: Some(1234),
            details: None,
            from_extension: None,
            preserve_data: None,
        },
    ));
    let (lines, _, out) = write(&s);
    assert_eq!(lines[1]["subtype"], "compact_boundary");
    assert_eq!(lines[1]["parentUuid"], Value::Null);
    assert_eq!(lines[1]["logicalParentUuid"], lines[0]["uuid"]);
    assert_eq!(lines[1]["compactMetadata"]["preTokens"], 1234);
    assert_eq!(lines[2]["isCompactSummary"], true);
    assert_eq!(lines[2]["parentUuid"], lines[1]["uuid"]);
    let back = FORMAT
        .read_bytes(Path::new("c.jsonl"), &out)
        .unwrap()
        .session;
    let summary = back.entries.iter().find_map(|e| match &e.kind {
        EntryKind::Compaction { summary, .. } => Some(summary.clone()),
        _ => None,
    });
    assert_eq!(summary.as_deref(), Some("We listed files."));
}
