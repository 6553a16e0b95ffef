//! Readers of the agents added beyond the first five, checked against files
//! their real CLIs wrote (see `tests/fixtures/PROVENANCE.md`): every turn,
//! tool call, thinking block and usage figure is read, and files that are
//! records round-trip exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_formats::{registry, Format};
use agentlog_model::{BlockKind, EntryKind, Role, Session};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")).join(rel)
}

fn shared(rel: &str) -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures/native"
    ))
    .join(rel)
}

fn json_lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or(Value::String(l.to_string())))
        .collect()
}

/// Reads `path` as `format`, writes it back and checks the lines are the
/// same JSON values.
fn round_trips(format: &dyn Format, path: &Path) -> Session {
    let read = format.read_path(path).unwrap();
    let mut out = Vec::new();
    let fidelity = format.write(&read.session, &mut out).unwrap();
    assert!(fidelity.is_lossless(), "{}: {fidelity:?}", path.display());
    let original = std::fs::read(path).unwrap();
    let (a, b) = (json_lines(&original), json_lines(&out));
    assert_eq!(a.len(), b.len(), "{}", path.display());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "{} line {}", path.display(), i + 1);
    }
    read.session
}

fn messages<'a>(s: &'a Session, role: &Role) -> Vec<&'a agentlog_model::Message> {
    s.entries
        .iter()
        .filter_map(|e| e.message())
        .filter(|m| &m.role == role)
        .collect()
}

fn tool_calls(s: &Session) -> Vec<(String, String)> {
    s.entries
        .iter()
        .filter_map(|e| e.message())
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match &b.kind {
            BlockKind::ToolCall { id, name, .. } => {
                Some((id.clone().unwrap_or_default(), name.clone()))
            }
            _ => None,
        })
        .collect()
}

fn results(s: &Session) -> Vec<(String, String)> {
    s.entries
        .iter()
        .filter_map(|e| e.message())
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match &b.kind {
            BlockKind::ToolResult { tool_call_id, .. } => Some((
                tool_call_id.clone().unwrap_or_default(),
                b.plain_text().unwrap_or_default(),
            )),
            _ => None,
        })
        .collect()
}

fn has_thinking(s: &Session, text: &str) -> bool {
    s.entries
        .iter()
        .filter_map(|e| e.message())
        .flat_map(|m| m.content.iter())
        .any(|b| matches!(&b.kind, BlockKind::Thinking { text: t, .. } if t == text))
}

// ---- GitHub Copilot CLI ----

const COPILOT_SESSION: &str =
    "copilot/1.0.102/session-state/b034d159-7f8a-4e2f-b736-4b964fdc4bb1/events.jsonl";

#[test]
fn copilot_real_file_reads_every_turn_call_and_usage() {
    let path = fixture(COPILOT_SESSION);
    assert_eq!(registry::detect(&path).unwrap().name(), "copilot");
    let s = round_trips(registry::by_name("copilot").unwrap(), &path);
    assert_eq!(s.meta.id, "b034d159-7f8a-4e2f-b736-4b964fdc4bb1");
    assert_eq!(s.meta.agent_version.as_deref(), Some("1.0.102"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/agmock/cp1/proj"));
    assert_eq!(s.meta.title.as_deref(), Some("What files are here?"));
    let users: Vec<String> = messages(&s, &Role::User)
        .iter()
        .map(|m| m.content[0].plain_text().unwrap())
        .collect();
    assert_eq!(users, ["What files are here?", "And now?"]);
    let assistants = messages(&s, &Role::Assistant);
    assert_eq!(assistants.len(), 3);
    assert!(has_thinking(&s, "I should check the files."));
    assert_eq!(tool_calls(&s), [("call_1".to_string(), "bash".to_string())]);
    let r = results(&s);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].0, "call_1");
    assert!(r[0].1.starts_with("README\n"));
    // Three model calls: 101/102/103 prompt tokens with 10 cached each,
    // 20 output of which 5 reasoning (what the mock server answered).
    let total = s.total_usage();
    assert_eq!(total.input, 306 - 30);
    assert_eq!(total.cache_read, 30);
    assert_eq!(total.output, 60);
    assert_eq!(total.reasoning, 15);
    let texts: Vec<String> = assistants
        .iter()
        .filter_map(|m| {
            m.content.iter().find_map(|b| match &b.kind {
                BlockKind::Text { text } => Some(text.clone()),
                _ => None,
            })
        })
        .collect();
    assert_eq!(
        texts,
        ["There is a README.", "Second turn answer from mock."]
    );
}

#[test]
fn copilot_public_samples_round_trip() {
    let f = registry::by_name("copilot").unwrap();
    for rel in [
        "secondary/copilot-cli/vct-copilot.jsonl",
        "secondary/copilot-cli/as-stage0-small.jsonl",
        "secondary/copilot-cli/session-state/aaaabbbb-1111-2222-3333-ccccddddeeee/events.jsonl",
    ] {
        let path = shared(rel);
        assert_eq!(registry::detect(&path).unwrap().name(), "copilot", "{rel}");
        let s = round_trips(f, &path);
        assert!(!messages(&s, &Role::User).is_empty(), "{rel}");
    }
    // The real 1.0.34 session: 11 tool requests, each with its result, and
    // 13 completions (two for calls its answers do not list).
    let s = f
        .read_path(&shared("secondary/copilot-cli/vct-copilot.jsonl"))
        .unwrap()
        .session;
    assert_eq!(s.meta.agent_version.as_deref(), Some("1.0.34"));
    let calls = tool_calls(&s);
    assert_eq!(calls.len(), 11);
    let res = results(&s);
    assert_eq!(res.len(), 13);
    for (id, _) in &calls {
        assert!(res.iter().any(|(r, _)| r == id), "no result for {id}");
    }
    assert!(s.total_usage().output > 0);
}

#[test]
fn copilot_unknown_and_broken_lines_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let text = concat!(
        r#"{"type":"session.start","data":{"sessionId":"s1","copilotVersion":"9.9.9","context":{"cwd":"/w"}},"id":"a","timestamp":"2026-01-01T00:00:00Z","parentId":null}"#,
        "\n",
        r#"{"type":"future.thing","data":{"x":1},"id":"b","timestamp":"2026-01-01T00:00:01Z","parentId":"a","newField":true}"#,
        "\n",
        r#"{"type":"user.message","data":{"content":"<b>hi</b>\u001b[31m"},"id":"b","parentId":"a"}"#,
        "\n",
        r#"[1,2,3]"#,
        "\n",
        r#"{"data":"not an object","id":"c"}"#,
        "\n",
    );
    std::fs::write(&path, text).unwrap();
    let f = registry::by_name("copilot").unwrap();
    let s = round_trips(f, &path);
    assert_eq!(s.meta.id, "s1");
    // The repeated id `b` gets a line id; nothing is dropped.
    assert_eq!(s.entries.len(), 5);
    assert_eq!(s.entries[2].id, "L3");
    assert!(matches!(s.entries[3].kind, EntryKind::Unknown { .. }));
}

// ---- OpenCode ----

/// Copies the fixture database (and its WAL) into a fresh directory, as the
/// agent left it: SQLite needs to write the shared-memory index beside it.
fn opencode_copy(version: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for f in ["opencode.db", "opencode.db-wal"] {
        std::fs::copy(
            fixture(&format!("opencode/{version}/{f}")),
            dir.path().join(f),
        )
        .unwrap();
    }
    let db = dir.path().join("opencode.db");
    (dir, db)
}

#[test]
fn opencode_real_database_lists_and_reads_both_sessions() {
    let (dir, db) = opencode_copy("1.18.33");
    let f = registry::by_name("opencode").unwrap();
    let mut env = agentlog_formats::discover::DiscoverEnv::with_home(dir.path());
    env.vars
        .insert("OPENCODE_DATA_DIR".into(), dir.path().display().to_string());
    let found = f.discover(&env);
    assert_eq!(found.len(), 2, "{found:?}");
    for p in &found {
        assert_eq!(registry::detect(p).unwrap().name(), "opencode");
    }
    let parent = agentlog_formats::member::member_path(&db, "ses_df5decaf8ffeAqX67SjvHMne1P");
    let s = f.read_path(&parent).unwrap().session;
    assert_eq!(s.meta.agent_version.as_deref(), Some("1.18.33"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/agmock/oc2/proj"));
    assert_eq!(s.meta.title.as_deref(), Some("Mock title"));
    let users: Vec<String> = messages(&s, &Role::User)
        .iter()
        .map(|m| m.content[0].plain_text().unwrap())
        .collect();
    assert_eq!(
        users,
        [
            "\"What files are here?\"",
            "\"Ask a subagent to count them\""
        ]
    );
    assert_eq!(messages(&s, &Role::Assistant).len(), 4);
    assert!(has_thinking(&s, "The user wants a listing; I will run ls."));
    assert_eq!(
        tool_calls(&s),
        [
            ("call_1".to_string(), "bash".to_string()),
            ("call_3".to_string(), "task".to_string())
        ]
    );
    let r = results(&s);
    assert_eq!(r[0], ("call_1".to_string(), "opencode.json\n".to_string()));
    assert!(r[1].1.contains("ses_df5de65a0ffeqHrm9IYOzUiHuc"));
    // Four model calls: prompt 101+n with 10 cached, 20 out with 5 reasoning.
    let u = s.total_usage();
    assert_eq!(u.input, 91 + 92 + 93 + 95);
    assert_eq!(u.cache_read, 40);
    assert_eq!(u.output, 80);
    assert_eq!(u.reasoning, 20);
    // The subagent is a session of its own naming its parent.
    let child = agentlog_formats::member::member_path(&db, "ses_df5de65a0ffeqHrm9IYOzUiHuc");
    let c = f.read_path(&child).unwrap().session;
    assert_eq!(
        c.meta.parent_session.as_deref(),
        Some("ses_df5decaf8ffeAqX67SjvHMne1P")
    );
    assert_eq!(
        messages(&c, &Role::User)[0].content[0]
            .plain_text()
            .unwrap(),
        "Count the files in the project"
    );
    // The database alone is ambiguous: the error says how to name one.
    let err = f.read_path(&db).unwrap_err().to_string();
    assert!(err.contains("holds 2 sessions"), "{err}");
    // A missing session is an error naming it.
    let err = f
        .read_path(&agentlog_formats::member::member_path(&db, "ses_nope"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("ses_nope"), "{err}");
}

#[test]
fn opencode_corrupt_database_is_an_error_not_a_panic() {
    let (_dir, db) = opencode_copy("1.18.33");
    let f = registry::by_name("opencode").unwrap();
    let mut bytes = std::fs::read(&db).unwrap();
    for i in (100..bytes.len()).step_by(97) {
        bytes[i] ^= 0x5a;
    }
    std::fs::write(&db, &bytes).unwrap();
    let _ = f.read_path(&agentlog_formats::member::member_path(
        &db,
        "ses_df5decaf8ffeAqX67SjvHMne1P",
    ));
    let _ = f.discover(&agentlog_formats::discover::DiscoverEnv::with_home(
        db.parent().unwrap(),
    ));
    let _ = f.read_bytes(&db, b"SQLite format 3\0garbage");
}

#[test]
fn kilo_real_database_reads_with_the_opencode_reader() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["kilo.db", "kilo.db-wal"] {
        std::fs::copy(fixture(&format!("kilo/7.7.7/{f}")), dir.path().join(f)).unwrap();
    }
    let f = registry::by_name("kilo").unwrap();
    let mut env = agentlog_formats::discover::DiscoverEnv::with_home(dir.path());
    env.vars.insert(
        "XDG_DATA_HOME".into(),
        dir.path().parent().unwrap().display().to_string(),
    );
    env.vars
        .insert("KILO_DATA_DIR".into(), dir.path().display().to_string());
    let found = f.discover(&env);
    assert_eq!(found.len(), 2, "{found:?}");
    // The opencode format does not claim Kilo's database.
    assert_eq!(registry::detect(&found[0]).unwrap().name(), "kilo");
    let reads: Vec<_> = found.iter().map(|p| f.read_path(p).unwrap()).collect();
    let parent = reads
        .iter()
        .find(|r| r.session.meta.parent_session.is_none())
        .unwrap();
    let s = &parent.session;
    assert_eq!(s.meta.agent_version.as_deref(), Some("7.7.7"));
    assert_eq!(s.meta.agent.as_str(), "kilo");
    assert!(has_thinking(s, "The user wants a listing; I will run ls."));
    let calls: Vec<String> = tool_calls(s).into_iter().map(|(_, n)| n).collect();
    assert_eq!(calls, ["bash", "task"]);
    assert_eq!(results(s).len(), 2);
    assert_eq!(s.total_usage().output, 80);
    // Everything Kilo 7.7.7 wrote is known to the reader.
    for r in &reads {
        assert_eq!(f.drift(r), vec![], "{:?}", r.session.meta.id);
    }
}

#[test]
fn opencode_drift_names_unknown_part_types_and_fields() {
    let (_dir, db) = opencode_copy("1.18.33");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) \
             SELECT 'prt_zzz', message_id, session_id, time_created, time_updated, \
             '{\"type\":\"hologram\",\"beam\":1}' FROM part LIMIT 1",
            [],
        )
        .unwrap();
        c.execute(
            "UPDATE message SET data = json_set(data, '$.mood', 'calm') WHERE data LIKE '%\"role\":\"user\"%'",
            [],
        )
        .unwrap();
    }
    let f = registry::by_name("opencode").unwrap();
    let mut names: Vec<(String, u64)> = Vec::new();
    for p in f.discover(&agentlog_formats::discover::DiscoverEnv {
        roots: [("opencode".to_string(), vec![db.clone()])].into(),
        ..Default::default()
    }) {
        let r = f.read_path(&p).unwrap();
        for d in f.drift(&r) {
            match names.iter_mut().find(|(n, _)| *n == d.name) {
                Some(n) => n.1 += d.count,
                None => names.push((d.name, d.count)),
            }
        }
    }
    // Two prompts in the parent session, one in the subagent's.
    assert!(
        names.contains(&("message.user.mood".to_string(), 3)),
        "{names:?}"
    );
    assert!(names.iter().any(|(n, _)| n == "part.hologram"), "{names:?}");
}

// ---- Qwen Code ----

const QWEN_SESSION: &str =
    "qwen/0.24.4/projects/-tmp-agmock-qw1-proj/chats/feb0a428-4ff4-43a5-9a2b-f15eacffa88d.jsonl";

#[test]
fn qwen_real_file_reads_every_turn_call_and_usage() {
    let path = fixture(QWEN_SESSION);
    assert_eq!(registry::detect(&path).unwrap().name(), "qwen");
    let f = registry::by_name("qwen").unwrap();
    let s = round_trips(f, &path);
    assert_eq!(s.meta.id, "feb0a428-4ff4-43a5-9a2b-f15eacffa88d");
    assert_eq!(s.meta.agent_version.as_deref(), Some("0.24.4"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/agmock/qw1/proj"));
    let users: Vec<String> = messages(&s, &Role::User)
        .iter()
        .map(|m| m.content[0].plain_text().unwrap())
        .collect();
    assert_eq!(users, ["What files are here?", "And now?"]);
    assert!(has_thinking(&s, "Let me look at the files."));
    assert_eq!(
        tool_calls(&s),
        [("call_1".to_string(), "run_shell_command".to_string())]
    );
    let r = results(&s);
    assert_eq!(r.len(), 1);
    assert!(r[0].1.starts_with("Command: ls\n"), "{r:?}");
    let tools = messages(&s, &Role::Tool);
    assert_eq!(tools[0].tool_name.as_deref(), Some("run_shell_command"));
    assert_eq!(tools[0].is_error, Some(false));
    // Three answers recorded: 101/102/103 prompt tokens with 10 cached, 20
    // out (5 of them reasoning, counted in the candidates by this path).
    let u = s.total_usage();
    assert_eq!(u.input, 91 + 92 + 93);
    assert_eq!(u.cache_read, 30);
    assert_eq!(u.output, 60);
    assert_eq!(u.reasoning, 15);
    assert_eq!(f.drift(&f.read_path(&path).unwrap()), vec![]);
}

#[test]
fn qwen_other_formats_become_chats_it_resumes() {
    // A Copilot session written as a Qwen chat keeps the conversation, the
    // tool call and its result, in order and chained.
    let cp = registry::by_name("copilot").unwrap();
    let s = cp.read_path(&fixture(COPILOT_SESSION)).unwrap().session;
    let q = registry::by_name("qwen").unwrap();
    let mut out = Vec::new();
    q.write(&s, &mut out).unwrap();
    let lines = json_lines(&out);
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "user",
            "assistant",
            "tool_result",
            "assistant",
            "user",
            "assistant"
        ]
    );
    for w in lines.windows(2) {
        assert_eq!(w[1]["parentUuid"], w[0]["uuid"]);
    }
    assert_eq!(
        lines[1]["message"]["parts"][1]["functionCall"]["name"],
        "bash"
    );
    assert_eq!(lines[2]["toolCallResult"]["callId"], "call_1");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.jsonl");
    std::fs::write(&p, &out).unwrap();
    let back = q.read_path(&p).unwrap().session;
    assert_eq!(tool_calls(&back), tool_calls(&s));
    assert_eq!(back.total_usage().output, s.total_usage().output);
    let env = agentlog_formats::discover::DiscoverEnv::with_home("/home/u");
    let plan = q.resume_plan(&s, &env).unwrap();
    assert_eq!(
        plan.path,
        Path::new("/home/u/.qwen/projects/-tmp-agmock-cp1-proj/chats/b034d159-7f8a-4e2f-b736-4b964fdc4bb1.jsonl")
    );
    // The command holds no `cd`: the caller prints one for `plan.cwd`.
    assert_eq!(
        plan.command,
        "qwen --resume b034d159-7f8a-4e2f-b736-4b964fdc4bb1"
    );
    assert_eq!(plan.cwd.as_deref(), Some(Path::new("/tmp/agmock/cp1/proj")));
}

// ---- Aider ----

#[test]
fn aider_real_history_reads_runs_prompts_answers_and_tokens() {
    let path = fixture("aider/0.86.2/.aider.chat.history.md");
    assert_eq!(registry::detect(&path).unwrap().name(), "aider");
    let f = registry::by_name("aider").unwrap();
    let s = f.read_path(&path).unwrap().session;
    let users: Vec<String> = messages(&s, &Role::User)
        .iter()
        .map(|m| m.content[0].plain_text().unwrap())
        .collect();
    assert_eq!(
        users,
        ["Create hello.py that prints hello", "What does it print?"]
    );
    // The prompts get their times from .aider.input.history.
    let first = s
        .entries
        .iter()
        .find(|e| e.message().is_some_and(|m| m.role == Role::User))
        .unwrap();
    assert_eq!(
        first.timestamp.as_ref().unwrap().to_string(),
        "2026-11-23 21:16:18.461120"
    );
    let answers: Vec<String> = messages(&s, &Role::Assistant)
        .iter()
        .map(|m| m.content[0].plain_text().unwrap())
        .collect();
    assert_eq!(
        answers,
        [
            "Here is the change.\n\nhello.py\n```python\nprint('hello from mock')\n```",
            "The file prints a greeting."
        ]
    );
    // Aider's own token lines: 650 + 689 sent, 19 + 6 received.
    let u = s.total_usage();
    assert_eq!((u.input, u.output), (650 + 689, 19 + 6));
    // Two runs, each an event with its start time.
    let runs: Vec<_> = s
        .entries
        .iter()
        .filter(|e| matches!(&e.kind, EntryKind::Event { event_type, .. } if event_type == "chat_started"))
        .collect();
    assert_eq!(runs.len(), 2);
    assert_eq!(
        s.meta.created_at.as_ref().unwrap().to_string(),
        "2026-11-23 21:16:04"
    );
    // Aider's output (the applied edit) is kept, marked as its output.
    let outputs = messages(&s, &Role::System);
    assert!(outputs
        .iter()
        .any(|m| m.injected.as_deref() == Some("aider-output")
            && m.content[0]
                .plain_text()
                .unwrap()
                .contains("Applied edit to hello.py")));
}

#[test]
fn aider_is_found_in_projects_under_home() {
    let home = tempfile::tempdir().unwrap();
    let proj = home.path().join("src/proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::copy(
        fixture("aider/0.86.2/.aider.chat.history.md"),
        proj.join(".aider.chat.history.md"),
    )
    .unwrap();
    std::fs::create_dir_all(home.path().join(".cache/x")).unwrap();
    std::fs::write(
        home.path().join(".cache/x/.aider.chat.history.md"),
        "# aider chat started at 2026-01-01 00:00:00\n",
    )
    .unwrap();
    let f = registry::by_name("aider").unwrap();
    let found = f.discover(&agentlog_formats::discover::DiscoverEnv::with_home(
        home.path(),
    ));
    assert_eq!(found, [proj.join(".aider.chat.history.md")]);
    // Hostile text stays text: escapes and HTML are read verbatim.
    let p = home.path().join("h.md");
    std::fs::write(&p, "# aider chat started at 2026-01-01 00:00:00\n\n#### <script>x</script>\u{1b}[31m  \n\nok\n> Tokens: 1.5k sent, 2 received. Cost: $0.25 message, $0.25 session.  \n").unwrap();
    let s = f.read_path(&p).unwrap().session;
    assert_eq!(
        messages(&s, &Role::User)[0].content[0]
            .plain_text()
            .unwrap(),
        "<script>x</script>\u{1b}[31m"
    );
    assert_eq!(s.total_usage().input, 1500);
    assert_eq!(s.total_usage().cost_usd, Some(0.25));
}

// ---- Cline CLI ----

#[test]
fn cline_real_session_reads_turns_calls_and_usage() {
    let path =
        fixture("cline/3.0.65/sessions/1795469985340_ufbdu/1795469985340_ufbdu.messages.json");
    assert_eq!(registry::detect(&path).unwrap().name(), "cline");
    let f = registry::by_name("cline").unwrap();
    let found = f.discover(&agentlog_formats::discover::DiscoverEnv {
        roots: [("cline".to_string(), vec![fixture("cline/3.0.65/sessions")])].into(),
        ..Default::default()
    });
    assert_eq!(found, std::slice::from_ref(&path));
    let s = f.read_path(&path).unwrap().session;
    assert_eq!(s.meta.id, "1795469985340_ufbdu");
    assert_eq!(s.meta.agent_version.as_deref(), Some("3.0.65"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/agmock/cl2/proj"));
    assert_eq!(s.meta.title.as_deref(), Some("What files are here?"));
    let users = messages(&s, &Role::User);
    assert!(users[0].content[0]
        .plain_text()
        .unwrap()
        .contains("What files are here?"));
    assert!(has_thinking(&s, "Let me list."));
    assert_eq!(
        tool_calls(&s),
        [("call_1".to_string(), "run_commands".to_string())]
    );
    let r = results(&s);
    assert_eq!(r.len(), 1);
    assert!(r[0].1.contains("README"), "{r:?}");
    // Two model calls: 101/102 prompt tokens with 10 cached, 20 out.
    let u = s.total_usage();
    assert_eq!((u.input, u.cache_read, u.output), (91 + 92, 20, 40));
}

// ---- Factory Droid ----

#[test]
fn droid_session_store_and_stream_read_turns_calls_and_results() {
    let f = registry::by_name("droid").unwrap();
    let store = shared("secondary/droid/as-session_store_small.jsonl");
    assert_eq!(registry::detect(&store).unwrap().name(), "droid");
    let s = f.read_path(&store).unwrap().session;
    assert_eq!(s.meta.id, "droid_s1");
    assert_eq!(s.meta.title.as_deref(), Some("Stage0 Droid Small"));
    assert_eq!(s.meta.agent_version.as_deref(), Some("0.81.0"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp"));
    assert_eq!(tool_calls(&s), [("tu1".to_string(), "Execute".to_string())]);
    let r = results(&s);
    assert_eq!(r.len(), 1);
    assert!(r[0].1.contains("No such file or directory"), "{r:?}");
    // The branch runs from the first message to the last.
    let branch: Vec<&str> = s.active_branch().iter().map(|e| e.id.as_str()).collect();
    assert!(branch.ends_with(&["m1", "m2", "m3"]), "{branch:?}");

    let stream = shared("secondary/droid/as-stream_json_small.jsonl");
    assert_eq!(registry::detect(&stream).unwrap().name(), "droid");
    let s = f.read_path(&stream).unwrap().session;
    assert_eq!(s.meta.id, "sid_stage0_small");
    assert_eq!(s.prompts(), ["Do thing"]);
    assert_eq!(tool_calls(&s), [("c1".to_string(), "Shell".to_string())]);
    assert_eq!(results(&s), [("c1".to_string(), "hi\n".to_string())]);
    let last = s
        .active_branch()
        .last()
        .unwrap()
        .message()
        .unwrap()
        .text_content();
    assert_eq!(last, "Done");
}

#[test]
fn droid_sessions_are_found_where_droid_keeps_them() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".factory/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        shared("secondary/droid/as-session_store_small.jsonl"),
        dir.join("droid_s1.jsonl"),
    )
    .unwrap();
    let env = agentlog_formats::discover::DiscoverEnv::with_home(home.path());
    let found = registry::by_name("droid").unwrap().discover(&env);
    assert_eq!(found, [dir.join("droid_s1.jsonl")]);
    // $DROID_SESSIONS_DIR moves them.
    let mut env = env;
    env.vars.insert(
        "DROID_SESSIONS_DIR".into(),
        home.path().join("elsewhere").display().to_string(),
    );
    assert!(registry::by_name("droid")
        .unwrap()
        .discover(&env)
        .is_empty());
}

#[test]
fn droid_real_session_reads_its_prompt_answer_and_injected_context() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".factory/sessions/-tmp-droid-proj");
    std::fs::create_dir_all(&dir).unwrap();
    let name = "48be4979-1406-4b8b-9be8-69751213e898.jsonl";
    for file in [name.to_string(), name.replace(".jsonl", ".settings.json")] {
        std::fs::copy(
            fixture(&format!("droid/0.225.2/sessions/-tmp-droid-proj/{file}")),
            dir.join(&file),
        )
        .unwrap();
    }
    let env = agentlog_formats::discover::DiscoverEnv::with_home(home.path());
    let f = registry::by_name("droid").unwrap();
    let found = f.discover(&env);
    assert_eq!(found, [dir.join(name)]);
    assert_eq!(registry::detect(&found[0]).unwrap().name(), "droid");
    let read = f.read_path(&found[0]).unwrap();
    let s = read.session;
    assert_eq!(s.meta.id, "48be4979-1406-4b8b-9be8-69751213e898");
    assert_eq!(s.meta.title.as_deref(), Some("hello there"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/droid/proj"));
    // Droid's own context message is injected, not a prompt.
    assert_eq!(s.prompts(), ["hello there"]);
    assert_eq!(s.message_count(), 2);
    let branch = s.active_branch();
    let last = branch.last().unwrap();
    assert!(
        matches!(last.kind, EntryKind::Unknown { .. }),
        "the turn outcome record"
    );
    let answer = s
        .active_branch()
        .iter()
        .rev()
        .find_map(|e| e.message().filter(|m| m.role == Role::Assistant))
        .unwrap()
        .text_content();
    assert_eq!(answer, "ok");
    // The session's token total, from the settings file beside it.
    let total = s.total_usage();
    assert_eq!((total.input, total.output), (10245, 2));
    assert_eq!(s.meta.model.model.as_deref(), Some("custom:Mock-0"));
    assert!(
        read.diagnostics.iter().all(|d| d.code != "unknown-type"),
        "{:?}",
        read.diagnostics
    );
}

// ---- Mistral Vibe ----

const VIBE3_DIR: &str = "vibe/3.0.2/logs/session/unified/2cd12d6f-ac43-862e-db7f-a994b201930f";

/// The answers' texts of `s`.
fn answers(s: &Session) -> Vec<String> {
    messages(s, &Role::Assistant)
        .iter()
        .map(|m| m.text_content())
        .filter(|t| !t.is_empty())
        .collect()
}

#[test]
fn vibe_3_store_reads_the_conversation_the_model_context_and_the_totals() {
    let path = fixture(&format!("{VIBE3_DIR}/meta.json"));
    assert_eq!(registry::detect(&path).unwrap().name(), "vibe");
    let f = registry::by_name("vibe").unwrap();
    let found = f.discover(&agentlog_formats::discover::DiscoverEnv {
        roots: [("vibe".to_string(), vec![fixture("vibe/3.0.2/logs/session")])].into(),
        ..Default::default()
    });
    assert_eq!(found, std::slice::from_ref(&path));
    let read = f.read_path(&path).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    let s = read.session;
    assert_eq!(s.meta.id, "2cd12d6f-ac43-862e-db7f-a994b201930f");
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/vb/proj"));
    assert_eq!(s.meta.model.model.as_deref(), Some("mock-model"));
    assert_eq!(s.prompts(), ["What files are here?", "Anything else?"]);
    assert!(has_thinking(&s, "I should look at the files first."));
    // The call's id and name are the model's, from the checkpoint's context
    // (the projection names the tool `file_system.bash`).
    assert_eq!(
        tool_calls(&s),
        [("call_mock_0_1".to_string(), "bash".to_string())]
    );
    // The result is the text the model was sent.
    assert_eq!(
        results(&s),
        [(
            "call_mock_0_1".to_string(),
            r#"{"command":"ls","returncode":0,"stderr":"","stdout":"README\n","timed_out":false,"was_truncated":false}"#
                .to_string()
        )]
    );
    assert_eq!(
        answers(&s),
        ["There is one file here: README.", "Nothing else to add."]
    );
    // Entries carry the projection's times.
    assert!(s.entries.iter().all(|e| e.timestamp.is_some()));
    // The session's totals (three model calls), on the last answer.
    let u = s.total_usage();
    assert_eq!((u.input, u.cache_read, u.output), (24323, 0, 31));
    let last = messages(&s, &Role::Assistant).last().unwrap().usage.clone();
    assert_eq!(last.map(|u| u.output), Some(31));
}

/// Copies the 3.x fixture session into a temporary directory.
fn vibe3_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("2cd12d6f-ac43-862e-db7f-a994b201930f");
    let from = fixture(VIBE3_DIR);
    for e in walk(&from) {
        let t = to.join(e.strip_prefix(&from).unwrap());
        std::fs::create_dir_all(t.parent().unwrap()).unwrap();
        std::fs::copy(&e, t).unwrap();
    }
    (dir, to)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn vibe_3_store_applies_the_journal_written_after_its_generation() {
    // A session interrupted mid-turn: its generation holds the first two
    // turns, the journal segment after it a third prompt, a replaced answer
    // and the envelope's new totals, and a record from before the
    // generation (which must not be applied again).
    let (_dir, session) = vibe3_copy();
    let delta = |seq: u64, ops: Value| {
        serde_json::json!({"type": "projection_delta", "sequence": seq,
            "payload": {"delta": ops, "watermark": seq}})
        .to_string()
    };
    let entry = |id: &str, role: &str, text: &str| {
        serde_json::json!({"id": id, "type": "message", "role": role,
            "createdAt": 1795678970000_i64, "content": [{"type": "text", "text": text}]})
    };
    let journal = [
        delta(
            29,
            serde_json::json!([{"op": "append_entry", "entry": entry("old", "user", "applied twice")}]),
        ),
        delta(
            31,
            serde_json::json!([
                {"op": "append_entry", "entry": entry("u3", "user", "And the third?")},
                {"op": "append_entry", "entry": entry("a3", "assistant", "draft")},
                {"op": "set_envelope", "state": {"session": {"tokenUsage":
                    {"inputTokens": 30000, "cachedInputTokens": 1000, "outputTokens": 40}}}}
            ]),
        ),
        delta(
            32,
            serde_json::json!([
                {"op": "replace_entry", "id": "a3", "entry": entry("a3", "assistant", "Third answer.")},
                {"op": "remove_entry", "id": "assistant-04ea40eb-3c7d-5233-a28f-ea12bbf11901"},
                {"op": "rewind", "to": 3}
            ]),
        ),
    ]
    .join("\n");
    std::fs::write(
        session.join("journal/0000000000000030.jsonl"),
        journal + "\n",
    )
    .unwrap();
    let f = registry::by_name("vibe").unwrap();
    let read = f.read_path(&session.join("meta.json")).unwrap();
    let s = read.session;
    assert_eq!(
        s.prompts(),
        ["What files are here?", "Anything else?", "And the third?"]
    );
    assert_eq!(
        answers(&s),
        ["There is one file here: README.", "Third answer."]
    );
    let u = s.total_usage();
    assert_eq!((u.input, u.cache_read, u.output), (29000, 1000, 40));
    // The op it does not know is reported with its line.
    let d: Vec<_> = read.diagnostics.iter().map(|d| (d.code, d.line)).collect();
    assert_eq!(d, [("unknown-delta", Some(3))]);
}

#[test]
fn vibe_3_store_reads_nothing_outside_the_session_directory() {
    // A manifest naming chunks and a journal by paths that leave the
    // session's directory, and a CURRENT naming a generation by a path:
    // none is followed; each is reported.
    let (dir, session) = vibe3_copy();
    std::fs::write(
        dir.path().join("secret.json"),
        r#"[{"id":"x","type":"message","role":"user","content":[{"type":"text","text":"SECRET"}]}]"#,
    )
    .unwrap();
    let manifest = session.join("generations/0000000000000029/manifest.json");
    let mut m: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    m["projection_state"]["chunks"] = serde_json::json!(["../../secret"]);
    m["recovery_journal_segment"]["path"] = Value::from("../secret.json");
    std::fs::write(&manifest, m.to_string()).unwrap();
    let f = registry::by_name("vibe").unwrap();
    let read = f.read_path(&session.join("meta.json")).unwrap();
    assert!(read.session.prompts().is_empty());
    let codes: Vec<&str> = read.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["bad-chunk", "bad-journal"]);

    let current = session.join("CURRENT");
    std::fs::write(&current, r#"{"generation":"../../x"}"#).unwrap();
    let read = f.read_path(&session.join("meta.json")).unwrap();
    let codes: Vec<&str> = read.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["bad-generation"]);
    assert_eq!(read.session.meta.cwd.as_deref(), Some("/tmp/vb/proj"));
}

#[test]
fn vibe_2_sessions_read_every_message_and_their_totals() {
    let root = fixture("vibe/2.20.0/logs/session");
    let f = registry::by_name("vibe").unwrap();
    let mut found = f.discover(&agentlog_formats::discover::DiscoverEnv {
        roots: [("vibe".to_string(), vec![root.clone()])].into(),
        ..Default::default()
    });
    found.sort();
    assert_eq!(
        found,
        [
            root.join("session_20261126_074431_60a7f5cd/messages.jsonl"),
            root.join("session_20261126_074433_b5f390ef/messages.jsonl"),
        ]
    );
    for p in &found {
        assert_eq!(registry::detect(p).unwrap().name(), "vibe");
    }
    for p in &found {
        round_trips(f, p);
    }
    let first = f.read_path(&found[0]).unwrap();
    assert!(first.diagnostics.is_empty(), "{:?}", first.diagnostics);
    let s = first.session;
    assert_eq!(s.meta.id, "60a7f5cd-b232-5dc0-c15f-4d298df9ae1f");
    assert_eq!(s.meta.title.as_deref(), Some("What files are here?"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/vb/proj"));
    assert_eq!(s.meta.model.model.as_deref(), Some("mock-model"));
    assert_eq!(s.prompts(), ["What files are here?"]);
    assert!(has_thinking(&s, "I should look at the files first."));
    assert_eq!(
        tool_calls(&s),
        [("call_mock_6_1".to_string(), "bash".to_string())]
    );
    assert_eq!(
        results(&s),
        [(
            "call_mock_6_1".to_string(),
            "command: ls\nstdout: README\n\nstderr: \nreturncode: 0".to_string()
        )]
    );
    let call = s.entries[1].message().unwrap();
    assert_eq!(
        call.tool_calls().next().map(|(_, _, input)| input.clone()),
        Some(serde_json::json!({"command": "ls"}))
    );
    assert_eq!(answers(&s), ["There is one file here: README."]);
    let u = s.total_usage();
    assert_eq!((u.input, u.output), (12045, 24));

    // The session `--continue` started holds the whole conversation and
    // the usage of its own run.
    let s = f.read_path(&found[1]).unwrap().session;
    assert_eq!(s.prompts(), ["What files are here?", "Anything else?"]);
    assert_eq!(
        answers(&s),
        ["There is one file here: README.", "Nothing else to add."]
    );
    let u = s.total_usage();
    assert_eq!((u.input, u.output), (6095, 7));
}

#[test]
fn vibe_2_lines_that_are_not_messages_are_kept_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("session_20260101_000000_abcdef12");
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("messages.jsonl");
    std::fs::write(
        &p,
        "{\"role\":\"user\",\"content\":\"hi\"}\n[1,2]\n{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"c1\",\"function\":{\"name\":\"bash\",\"arguments\":\"not json\"}}]}\n{\"role\":\"user\",\n",
    )
    .unwrap();
    let read = registry::by_name("vibe").unwrap().read_path(&p).unwrap();
    let s = &read.session;
    // No meta.json: the id is the directory's.
    assert_eq!(s.meta.id, "abcdef12");
    assert!(
        matches!(&s.entries[1].kind, EntryKind::Unknown { raw, .. } if raw == &serde_json::json!([1, 2]))
    );
    assert_eq!(
        s.entries[2]
            .message()
            .unwrap()
            .tool_calls()
            .next()
            .map(|(_, _, i)| i.clone()),
        Some(Value::from("not json"))
    );
    let mut d: Vec<_> = read.diagnostics.iter().map(|d| (d.line, d.code)).collect();
    d.sort();
    assert_eq!(
        d,
        [
            (None, "no-meta"),
            (Some(2), "unknown-record"),
            (Some(4), "invalid-json")
        ]
    );
}

#[test]
fn vibe_drift_names_unknown_entries_and_fields_and_nothing_in_the_real_files() {
    let f = registry::by_name("vibe").unwrap();
    for p in [
        fixture(&format!("{VIBE3_DIR}/meta.json")),
        fixture("vibe/2.20.0/logs/session/session_20261126_074431_60a7f5cd/messages.jsonl"),
        fixture("vibe/2.20.0/logs/session/session_20261126_074433_b5f390ef/messages.jsonl"),
    ] {
        let read = f.read_path(&p).unwrap();
        assert!(
            f.drift(&read).is_empty(),
            "{}: {:?}",
            p.display(),
            f.drift(&read)
        );
    }
    let (_dir, session) = vibe3_copy();
    let chunk = session
        .join("chunks/ab49e3706a066cf3ac2e0b8ae7b40ea777174833c396fa76848cb4831c5457ba.json");
    let mut entries: Value = serde_json::from_slice(&std::fs::read(&chunk).unwrap()).unwrap();
    entries[0]["voice"] = Value::Bool(true);
    entries
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"id": "n1", "type": "notice", "text": "hello"}));
    std::fs::write(&chunk, entries.to_string()).unwrap();
    let read = f.read_path(&session.join("meta.json")).unwrap();
    let names: Vec<String> = f.drift(&read).into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["notice", "message.voice"]);
}

// ---- Kimi Code CLI ----

#[test]
fn kimi_session_reads_turns_calls_usage_per_answer_and_its_work_dir() {
    let root = fixture("kimi/1.51.0/sessions");
    let path = root.join(
        "9dc6e0b349ae13d4ba240d4bd53100f2/37a91d42-cd7b-40eb-93cf-8db96f4297a4/context.jsonl",
    );
    assert_eq!(registry::detect(&path).unwrap().name(), "kimi");
    let f = registry::by_name("kimi").unwrap();
    let found = f.discover(&agentlog_formats::discover::DiscoverEnv {
        roots: [("kimi".to_string(), vec![root])].into(),
        ..Default::default()
    });
    assert_eq!(found, std::slice::from_ref(&path));
    let read = f.read_path(&path).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    assert!(f.drift(&read).is_empty(), "{:?}", f.drift(&read));
    round_trips(f, &path);
    let s = read.session;
    assert_eq!(s.meta.id, "37a91d42-cd7b-40eb-93cf-8db96f4297a4");
    // The folder is the MD5 of the work directory kimi.json names.
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/kproj"));
    assert_eq!(s.meta.title.as_deref(), Some("What files are here?"));
    assert_eq!(s.prompts(), ["What files are here?", "Anything else?"]);
    let system = messages(&s, &Role::System);
    assert_eq!(system.len(), 1);
    assert_eq!(system[0].injected.as_deref(), Some("system_prompt"));
    assert!(has_thinking(&s, "I should look at the files first."));
    assert_eq!(
        tool_calls(&s),
        [("call_mock_0_1".to_string(), "Shell".to_string())]
    );
    let r = results(&s);
    assert_eq!(r.len(), 1);
    assert!(r[0].1.contains("README"), "{r:?}");
    assert_eq!(
        answers(&s),
        ["There is one file here: README.", "Nothing else to add."]
    );
    // Each answer has its model call's usage and response id from the wire.
    let usage: Vec<(u64, u64, Option<String>)> = messages(&s, &Role::Assistant)
        .iter()
        .map(|m| {
            let u = m.usage.clone().unwrap();
            (u.input, u.output, m.id.clone())
        })
        .collect();
    assert_eq!(
        usage,
        [
            (12188, 15, Some("chatcmpl-mock-0".to_string())),
            (12282, 9, Some("chatcmpl-mock-1".to_string())),
            (12309, 7, Some("chatcmpl-mock-2".to_string())),
        ]
    );
    // Kimi's own records are kept as events.
    let events = s
        .entries
        .iter()
        .filter(|e| matches!(&e.kind, EntryKind::Event { event_type, .. } if event_type == "checkpoint" || event_type == "usage"))
        .count();
    assert_eq!(events, 11);
}

#[test]
fn kimi_drift_names_an_unknown_record_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("context.jsonl");
    std::fs::write(
        &p,
        "{\"role\":\"_checkpoint\",\"id\":0}\n{\"role\":\"_hologram\",\"x\":1}\n{\"role\":\"user\",\"content\":\"hi\",\"voice\":true}\n",
    )
    .unwrap();
    let f = registry::by_name("kimi").unwrap();
    let read = f.read_path(&p).unwrap();
    let names: Vec<String> = f.drift(&read).into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["hologram", "message.voice"]);
}

#[test]
fn kimi_context_lines_of_every_odd_shape_round_trip() {
    // Arguments written with spaces, not a string, or not JSON; a tool
    // result as parts and as a string; empty content and tool_calls; a
    // tool_calls item that is not a call; a message id; an own record.
    let lines = [
        r#"{"role":"_system_prompt","content":"be brief"}"#,
        r#"{"role":"_checkpoint","id":0}"#,
        r#"{"role":"user","content":"hi","message_id":"m1"}"#,
        r#"{"role":"assistant","content":[],"tool_calls":[{"type":"function","id":"c1","function":{"name":"Shell","arguments":"{\"command\": \"ls\"}"}},{"type":"function","id":"c2","function":{"name":"Read","arguments":{"path":"a"}}},{"type":"function","id":"c3","function":{"name":"X","arguments":"not json"}},"odd"]}"#,
        r#"{"role":"tool","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":"x"}],"tool_call_id":"c1"}"#,
        r#"{"role":"tool","content":"b","tool_call_id":"c2"}"#,
        r#"{"role":"assistant","content":[{"type":"think","think":"t","encrypted":"sig"},{"type":"text","text":"done"}],"tool_calls":[]}"#,
        r#"{"role":"assistant","content":""}"#,
        r#"{"role":"_future","x":[1]}"#,
        r#"[1,2]"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("context.jsonl");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let f = registry::by_name("kimi").unwrap();
    round_trips(f, &p);
}

// ---- Continue CLI ----

#[test]
fn continue_session_reads_turns_calls_results_and_usage_per_answer() {
    let root = fixture("continue/1.5.47/sessions");
    let path = root.join("2affd20c-3f9d-4c27-ac2a-0f8167efecee.json");
    assert_eq!(registry::detect(&path).unwrap().name(), "continue");
    let f = registry::by_name("continue").unwrap();
    // The index beside the sessions is not a session.
    let found = f.discover(&agentlog_formats::discover::DiscoverEnv {
        roots: [("continue".to_string(), vec![root])].into(),
        ..Default::default()
    });
    assert_eq!(found, std::slice::from_ref(&path));
    let read = f.read_path(&path).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    assert!(f.drift(&read).is_empty(), "{:?}", f.drift(&read));
    let s = read.session;
    assert_eq!(s.meta.id, "2affd20c-3f9d-4c27-ac2a-0f8167efecee");
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/cnp"));
    // "Untitled Session" is no title.
    assert_eq!(s.meta.title, None);
    assert_eq!(
        s.meta.created_at,
        Some(agentlog_model::Timestamp::Millis(1795681460561))
    );
    assert_eq!(s.prompts(), ["What files are here?", "Anything else?"]);
    assert_eq!(
        tool_calls(&s),
        [("call_mock_0_1".to_string(), "Bash".to_string())]
    );
    assert_eq!(
        results(&s),
        [("call_mock_0_1".to_string(), "README\n".to_string())]
    );
    assert_eq!(
        answers(&s),
        ["There is one file here: README.", "Nothing else to add."]
    );
    let usage: Vec<(u64, u64, u64)> = messages(&s, &Role::Assistant)
        .iter()
        .map(|m| {
            let u = m.usage.clone().unwrap();
            (u.input, u.output, u.reasoning)
        })
        .collect();
    assert_eq!(usage, [(1975, 15, 9), (2030, 9, 0), (2057, 7, 0)]);
    assert_eq!(
        messages(&s, &Role::Assistant)[0].model.as_deref(),
        Some("mock-model")
    );
}

// ---- OpenHands ----

#[test]
fn openhands_event_store_reads_the_prompt_calls_results_answer_and_usage() {
    let root = fixture("openhands/0.62.0/sessions");
    let f = registry::by_name("openhands").unwrap();
    let found = f.discover(&agentlog_formats::discover::DiscoverEnv {
        roots: [("openhands".to_string(), vec![root.clone()])].into(),
        ..Default::default()
    });
    assert_eq!(found.len(), 1, "{found:?}");
    let events = &found[0];
    assert!(events.ends_with("events"), "{events:?}");
    // The folder and any of its event files are detected as OpenHands'.
    assert_eq!(registry::detect(events).unwrap().name(), "openhands");
    assert_eq!(
        registry::detect(&events.join("5.json")).unwrap().name(),
        "openhands"
    );
    let read = f.read_path(events).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    let s = read.session;
    assert_eq!(s.meta.id, "62b9a83c-90b6-44-31c975b237b53dc");
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/ohp"));
    assert_eq!(s.meta.model.model.as_deref(), Some("mock-model"));
    assert_eq!(s.prompts(), ["What files are here?"]);
    assert_eq!(
        messages(&s, &Role::System)[0].injected.as_deref(),
        Some("system_prompt")
    );
    assert!(has_thinking(&s, "I should look at the files first."));
    assert_eq!(
        tool_calls(&s),
        [
            ("call_mock_0_1".to_string(), "execute_bash".to_string()),
            ("call_mock_1_0".to_string(), "finish".to_string())
        ]
    );
    assert_eq!(
        results(&s),
        [("call_mock_0_1".to_string(), "README\n".to_string())]
    );
    assert_eq!(answers(&s), ["There is one file here: README."]);
    let usage: Vec<(u64, u64, u64)> = messages(&s, &Role::Assistant)
        .iter()
        .filter_map(|m| m.usage.clone())
        .map(|u| (u.input, u.output, u.reasoning))
        .collect();
    assert_eq!(usage, [(7236, 20, 9), (7331, 13, 0)]);
    // The recall and the agent's state changes are kept as events.
    let events: Vec<&str> = s
        .entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Event { event_type, .. } => Some(event_type.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        events,
        [
            "recall",
            "agent_state_changed",
            "recall",
            "agent_state_changed"
        ]
    );
}

#[test]
fn openhands_cli_conversations_read_prompts_calls_results_answers_and_usage() {
    let root = fixture("openhands/1.2.1/conversations");
    let f = registry::by_name("openhands").unwrap();
    let found = f.discover(&agentlog_formats::discover::DiscoverEnv {
        roots: [("openhands".to_string(), vec![root.clone()])].into(),
        ..Default::default()
    });
    assert_eq!(found.len(), 1, "{found:?}");
    let events = &found[0];
    assert!(
        events.ends_with("7f23a88b3ea3474ba9742166c4f14431/events"),
        "{events:?}"
    );
    // The folder, the conversation's folder, its state and any event file
    // are detected as OpenHands', and read as the same session.
    let conv = events.parent().unwrap();
    let one = std::fs::read_dir(events)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for p in [
        events.clone(),
        conv.to_path_buf(),
        conv.join("base_state.json"),
        one,
    ] {
        assert_eq!(registry::detect(&p).unwrap().name(), "openhands", "{p:?}");
        assert_eq!(
            f.read_path(&p).unwrap().session.meta.id,
            "7f23a88b-3ea3-474b-a974-2166c4f14431"
        );
    }
    let read = f.read_path(events).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    assert!(f.drift(&read).is_empty(), "{:?}", f.drift(&read));
    let s = read.session;
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/oh1proj"));
    assert_eq!(s.meta.model.model.as_deref(), Some("openai/mock-model"));
    assert_eq!(s.prompts(), ["What files are here?", "Anything else?"]);
    assert_eq!(
        messages(&s, &Role::System)[0].injected.as_deref(),
        Some("system_prompt")
    );
    assert!(has_thinking(&s, "I should list the files."));
    assert_eq!(
        tool_calls(&s),
        [("call_mock_0_1".to_string(), "terminal".to_string())]
    );
    assert_eq!(
        results(&s),
        [("call_mock_0_1".to_string(), "README".to_string())]
    );
    assert_eq!(
        answers(&s),
        ["There is one file here: README.", "Nothing else to add."]
    );
    // The CLI kept the usage of the run after the resume only.
    let usage: Vec<(u64, u64, u64)> = messages(&s, &Role::Assistant)
        .iter()
        .filter_map(|m| m.usage.clone())
        .map(|u| (u.input, u.output, u.reasoning))
        .collect();
    assert_eq!(usage, [(6915, 7, 0)]);
}

// ---- Crush ----

#[test]
fn crush_databases_of_two_schema_versions_read_turns_calls_results_and_totals() {
    let f = registry::by_name("crush").unwrap();
    let root = fixture("crush");
    let mut found = f.discover(&agentlog_formats::discover::DiscoverEnv {
        roots: [("crush".to_string(), vec![root.clone()])].into(),
        ..Default::default()
    });
    found.sort();
    let old = root.join("mcpfier-2025-08/.crush/crush.db#5ab22793-cccf-4152-bd86-0961dbffd0f6");
    let new = root.join("cisco-auto-2026-04/.crush/crush.db#05193330-a419-4f38-a955-8ea6c72cccc2");
    assert_eq!(found, [new.clone(), old.clone()]);
    assert_eq!(registry::detect(&old).unwrap().name(), "crush");

    let read = f.read_path(&old).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    assert!(f.drift(&read).is_empty(), "{:?}", f.drift(&read));
    let s = read.session;
    assert_eq!(s.meta.cwd.as_deref(), root.join("mcpfier-2025-08").to_str());
    // "New Session" is Crush's placeholder, not a title.
    assert_eq!(s.meta.title, None);
    assert_eq!(
        s.meta.created_at,
        Some(agentlog_model::Timestamp::Millis(1754564779000))
    );
    assert_eq!(s.prompts().len(), 7);
    assert!(
        s.prompts()[0].starts_with("Help me build mcpfier"),
        "{:?}",
        s.prompts()
    );
    assert_eq!(s.prompts()[1], "I'd like to use Go");
    let calls = tool_calls(&s);
    assert_eq!(calls.len(), 9, "{calls:?}");
    let r = results(&s);
    assert_eq!(r.len(), 9);
    // Every result answers a call of the session.
    assert!(r.iter().all(|(id, _)| calls.iter().any(|(c, _)| c == id)));
    assert!(messages(&s, &Role::Assistant)
        .iter()
        .all(|m| m.model.as_deref() == Some("gpt-4o")));
    // The session's totals, on its last answer.
    let u = s.total_usage();
    assert_eq!((u.input, u.output), (15361, 146));
    assert!((u.cost_usd.unwrap() - 0.48076).abs() < 1e-9);

    let read = f.read_path(&new).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    assert!(f.drift(&read).is_empty(), "{:?}", f.drift(&read));
    let s = read.session;
    assert_eq!(tool_calls(&s).len(), 51);
    assert_eq!(results(&s).len(), 51);
    // The pasted file is kept as its part; the todos as JSON.
    let first = messages(&s, &Role::User)[0];
    assert!(first.content.iter().any(|b| matches!(&b.kind,
        BlockKind::Other { value } if value["type"] == "binary")));
    let row = &s.meta.extra["session_row"];
    assert!(
        row["todos"].as_array().is_some_and(|t| !t.is_empty()),
        "{row}"
    );
    assert_eq!(s.total_usage().output, 72);
}

#[test]
fn crush_projects_are_found_from_its_project_list_and_under_home() {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = |to: &Path| {
        std::fs::create_dir_all(to.join(".crush")).unwrap();
        std::fs::copy(
            fixture("crush/mcpfier-2025-08/.crush/crush.db"),
            to.join(".crush/crush.db"),
        )
        .unwrap();
    };
    // One project two levels under home, one outside it that Crush lists.
    copy(&home.path().join("src/a"));
    let b = elsewhere.path().join("b");
    copy(&b);
    let global = home.path().join(".local/share/crush");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(
        global.join("projects.json"),
        serde_json::json!({"projects": [{"path": b, "data_dir": b.join(".crush"),
            "last_accessed": "2026-01-01T00:00:00Z"}]})
        .to_string(),
    )
    .unwrap();
    // A hidden folder under home is not a project.
    copy(&home.path().join(".cache/c"));
    let f = registry::by_name("crush").unwrap();
    let found = f.discover(&agentlog_formats::discover::DiscoverEnv::with_home(
        home.path(),
    ));
    let dbs: Vec<PathBuf> = found
        .iter()
        .map(|p| agentlog_formats::member::split_member(p).unwrap().0)
        .collect();
    assert_eq!(dbs.len(), 2, "{found:?}");
    assert!(
        dbs.contains(&home.path().join("src/a/.crush/crush.db")),
        "{dbs:?}"
    );
    assert!(dbs.contains(&b.join(".crush/crush.db")), "{dbs:?}");
    // What discovery looked in includes a project with no database yet,
    // so that one Crush starts there later is found.
    std::fs::create_dir_all(home.path().join("src/plain")).unwrap();
    let report = agentlog_formats::discover::discover_report(
        &agentlog_formats::discover::DiscoverEnv::with_home(home.path()),
        Some(&["crush".to_string()]),
    );
    let looked: Vec<&Path> = report.dirs.iter().map(|(d, _)| d.as_path()).collect();
    for dir in ["src/plain", "src/a/.crush"] {
        assert!(
            looked.contains(&home.path().join(dir).as_path()),
            "{dir}: {looked:?}"
        );
    }
}

#[test]
fn a_crush_database_whose_messages_are_an_endless_view_is_refused() {
    // A database in a cloned repository is the reader's input: a view (or
    // a virtual table) in place of a table could run anything.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join(".crush/crush.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE sessions(id TEXT PRIMARY KEY, title TEXT, created_at INTEGER);
             INSERT INTO sessions VALUES ('s1', 't', 1);
             CREATE VIEW messages(id, session_id, role, parts, created_at) AS
               WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)
               SELECT x, 's1', 'user', '[]', x FROM n;",
        )
        .unwrap();
    }
    let f = registry::by_name("crush").unwrap();
    let member = PathBuf::from(format!("{}#s1", db.display()));
    let err = f.read_path(&member).unwrap_err().to_string();
    assert!(err.contains("messages is a view"), "{err}");
    assert!(err.contains("only plain tables"), "{err}");
    let found = f.discover(&agentlog_formats::discover::DiscoverEnv {
        roots: [("crush".to_string(), vec![dir.path().to_path_buf()])].into(),
        ..Default::default()
    });
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn an_opencode_database_with_a_virtual_table_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE VIRTUAL TABLE session USING fts5(id, time_created);
             CREATE TABLE message(id TEXT, session_id TEXT, data TEXT);
             CREATE TABLE part(id TEXT, message_id TEXT, data TEXT);",
        )
        .unwrap();
    }
    let f = registry::by_name("opencode").unwrap();
    let err = f.read_path(&db).unwrap_err().to_string();
    assert!(err.contains("session is a virtual table"), "{err}");
}

#[test]
fn continue_creation_times_follow_a_rewritten_session_list() {
    let dir = tempfile::tempdir().unwrap();
    let from = fixture("continue/1.5.47/sessions");
    for name in ["2affd20c-3f9d-4c27-ac2a-0f8167efecee.json", "sessions.json"] {
        std::fs::copy(from.join(name), dir.path().join(name)).unwrap();
    }
    let f = registry::by_name("continue").unwrap();
    let path = dir.path().join("2affd20c-3f9d-4c27-ac2a-0f8167efecee.json");
    let created = |f: &dyn Format| f.read_path(&path).unwrap().session.meta.created_at;
    assert_eq!(
        created(f),
        Some(agentlog_model::Timestamp::Millis(1795681460561))
    );
    // Continue rewrites its list; the next read sees the new time (the
    // list is parsed once per version of it, not once per session).
    let list = dir.path().join("sessions.json");
    // (one byte longer too: two writes within the file system's time
    // resolution are told apart by size)
    let text = std::fs::read_to_string(&list)
        .unwrap()
        .replace("1795681460561", "1795681460999")
        .replacen('[', "[ ", 1);
    std::fs::write(&list, text).unwrap();
    assert_eq!(
        created(f),
        Some(agentlog_model::Timestamp::Millis(1795681460999))
    );
    std::fs::remove_file(&list).unwrap();
    assert_eq!(created(f), None);
}
