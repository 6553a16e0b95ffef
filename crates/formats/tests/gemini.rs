//! Gemini CLI chats: every fixture read, counted and written back, and the
//! event-log rules (`$rewindTo`, `$set.messages`, re-appended ids) on
//! hand-made logs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_formats::discover::{walk_files, DiscoverEnv};
use agentlog_formats::gemini::{project_dir, project_slug, write_project_root};
use agentlog_formats::{registry, Format, Read};
use agentlog_model::{BlockKind, Entry, EntryKind, Message, Role, Session};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures/native"
    ))
    .to_path_buf()
}

fn gemini() -> &'static dyn Format {
    registry::by_name("gemini").unwrap()
}

fn read_fixture(name: &str) -> Read {
    gemini()
        .read_path(&fixtures().join("gemini").join(name))
        .unwrap()
}

fn read_lines(lines: &[Value]) -> Read {
    let text: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    gemini()
        .read_bytes(
            Path::new("session-2026-04-01T10-00-abcdef12.jsonl"),
            text.as_bytes(),
        )
        .unwrap()
}

fn json_lines(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

fn write(s: &Session) -> Vec<u8> {
    let mut out = Vec::new();
    gemini().write(s, &mut out).unwrap();
    out
}

fn messages(s: &Session) -> Vec<&Message> {
    s.active_branch()
        .into_iter()
        .filter_map(Entry::message)
        .collect()
}

fn texts(s: &Session) -> Vec<String> {
    messages(s).into_iter().map(Message::text_content).collect()
}

fn count(s: &Session, role: Role) -> usize {
    messages(s)
        .into_iter()
        .filter(|m| m.role == role && m.injected.is_none())
        .count()
}

/// (tool calls, calls with a result of the same id).
fn pairing(s: &Session) -> (usize, usize) {
    let mut calls = Vec::new();
    let mut results = HashMap::new();
    for m in messages(s) {
        for b in &m.content {
            match &b.kind {
                BlockKind::ToolCall { id: Some(id), .. } => calls.push(id.clone()),
                BlockKind::ToolResult {
                    tool_call_id: Some(id),
                    ..
                } => {
                    results.insert(id.clone(), ());
                }
                _ => {}
            }
        }
    }
    let paired = calls.iter().filter(|c| results.contains_key(*c)).count();
    (calls.len(), paired)
}

fn gemini_files() -> Vec<PathBuf> {
    walk_files(&fixtures().join("gemini"), 3, &|p| {
        p.extension().is_some_and(|e| e == "json" || e == "jsonl")
    })
}

#[test]
fn real_event_log_counts_each_message_once() {
    let r = read_fixture("vct-gemini.jsonl");
    let s = &r.session;
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert_eq!(s.meta.id, "0ab84937-9fe7-4284-986a-33c832af0b6a");
    assert_eq!(
        s.meta.model.model.as_deref(),
        Some("gemini-3.1-pro-preview")
    );
    assert_eq!(
        s.meta
            .updated_at
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("2026-04-23T12:58:35.591Z")
    );
    // The /init prompt and one real prompt; the "Please continue" nudge is
    // injected.
    assert_eq!(count(s, Role::User), 2);
    assert!(messages(s)
        .iter()
        .any(|m| m.injected.as_deref() == Some("continuation")));
    assert_eq!(count(s, Role::Assistant), 6);
    assert_eq!(count(s, Role::System), 2);
    assert_eq!(pairing(s), (12, 12));
    // Five ids were appended twice: the first versions are events.
    let superseded = s
        .entries
        .iter()
        .filter(|e| matches!(&e.kind, EntryKind::Event { event_type, .. } if event_type == "superseded"))
        .count();
    assert_eq!(superseded, 5);
    let mut ids: Vec<_> = messages(s)
        .iter()
        .filter_map(|m| m.extra.get("id").cloned().map(|v| v.to_string()))
        .collect();
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "a message shown twice");
    // Tokens of the last version of each id: input without cached (+ tool),
    // output with thoughts.
    let u = s.total_usage();
    assert_eq!(
        (u.input, u.cache_read, u.output, u.reasoning),
        (153_635, 48_951, 4_293, 2_141)
    );
    assert!(s.tree().branch_points().is_empty());
}

#[test]
fn legacy_object_with_tools_thoughts_and_tokens() {
    let r = read_fixture("vct-test_conversation_gemini.2026-03.json");
    let s = &r.session;
    assert_eq!(s.meta.format_version, Some(json!("json")));
    assert_eq!(s.meta.id, "8a20078e-2d5e-4f81-a640-9b879bbb7e6d");
    assert_eq!((count(s, Role::User), count(s, Role::Assistant)), (1, 3));
    assert_eq!(pairing(s), (7, 7));
    let thinking = messages(s)
        .iter()
        .flat_map(|m| m.content.iter())
        .filter(|b| matches!(&b.kind, BlockKind::Thinking { text, .. } if text.starts_with("**")))
        .count();
    assert!(thinking >= 3);
    let u = s.total_usage();
    assert!(u.input > 0 && u.cache_read > 0 && u.output > u.reasoning && u.reasoning > 0);
    // The 2025 file: no kind, thoughts and tokens on 13 answers.
    let old = read_fixture("vct-test_conversation_gemini.2025-10.json").session;
    assert_eq!(
        (count(&old, Role::User), count(&old, Role::Assistant)),
        (1, 13)
    );
    assert!(old.total_usage().output > 0);
}

#[test]
fn notices_and_tool_errors() {
    let s = read_fixture("agentsview-system_messages.json").session;
    let kinds: Vec<_> = messages(&s)
        .iter()
        .map(|m| {
            (
                m.role.clone(),
                m.extra["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(kinds.len(), 3);
    assert!(kinds.iter().all(|(r, _)| *r == Role::System));
    let s = read_fixture("as-stage0-jsonl_v040.jsonl").session;
    assert_eq!(pairing(&s), (1, 1));
    let r = messages(&s)
        .iter()
        .flat_map(|m| m.content.iter())
        .find_map(|b| match &b.kind {
            BlockKind::ToolResult { .. } => b.plain_text(),
            _ => None,
        })
        .unwrap();
    assert!(r.starts_with("Output: AgentSessions/"));
}

fn meta_line() -> Value {
    json!({"sessionId":"11111111-2222-4333-8444-555555555555","projectHash":"ab","startTime":"2026-04-01T10:00:00.000Z","lastUpdated":"2026-04-01T10:00:00.000Z","kind":"main"})
}

fn user(id: &str, text: &str) -> Value {
    json!({"id":id,"timestamp":"2026-04-01T10:00:01.000Z","type":"user","content":[{"text":text}]})
}

fn answer(id: &str, text: &str, input: u64) -> Value {
    json!({"id":id,"timestamp":"2026-04-01T10:00:02.000Z","type":"gemini","content":text,"thoughts":[],"tokens":{"input":input,"output":1,"cached":0,"thoughts":0,"tool":0,"total":input + 1},"model":"gemini-2.5-pro"})
}

#[test]
fn rewind_drops_the_message_and_everything_after() {
    let lines = [
        meta_line(),
        user("a", "A"),
        answer("a2", "A answer", 10),
        user("b", "B"),
        answer("b2", "B answer", 20),
        json!({"$rewindTo": "b"}),
        user("c", "C"),
    ];
    let r = read_lines(&lines);
    let s = &r.session;
    assert_eq!(texts(s), ["A", "A answer", "C"]);
    // The dropped part hangs off the last kept message as a side branch.
    let points: Vec<_> = s
        .tree()
        .branch_points()
        .iter()
        .map(|e| e.id.clone())
        .collect();
    assert_eq!(points.len(), 1);
    assert_eq!(s.tree().leaves().len(), 2);
    // Tokens were spent on the dropped answer too.
    assert_eq!(s.total_usage().input, 30);
    assert_eq!(json_lines(&write(s)), lines.to_vec());

    // An unknown id clears everything.
    let lines = [
        meta_line(),
        user("a", "A"),
        json!({"$rewindTo": "nope"}),
        user("d", "D"),
    ];
    let s = read_lines(&lines).session;
    assert_eq!(texts(&s), ["D"]);
    assert_eq!(json_lines(&write(&s)), lines.to_vec());
}

#[test]
fn set_messages_is_a_checkpoint() {
    let lines = [
        meta_line(),
        user("a", "A"),
        answer("a2", "A answer", 10),
        json!({"$set": {"messages": [user("s1", "summary of the talk"), answer("s2", "Got it.", 0)], "lastUpdated": "2026-04-01T11:00:00.000Z"}}),
        user("c", "C"),
        json!({"$set": {"summary": "A short talk"}}),
    ];
    let r = read_lines(&lines);
    let s = &r.session;
    assert_eq!(texts(s), ["summary of the talk", "Got it.", "C"]);
    assert_eq!(s.meta.title.as_deref(), Some("A short talk"));
    assert_eq!(
        s.meta
            .updated_at
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("2026-04-01T11:00:00.000Z")
    );
    // The old conversation is its own tree; the checkpoint starts another.
    assert_eq!(s.tree().roots().len(), 2);
    assert_eq!(json_lines(&write(s)), lines.to_vec());
}

#[test]
fn a_record_a_checkpoint_holds_twice_is_read_once_and_written_back_inside_it() {
    // Gemini CLI now and then repeats a record in the history it writes
    // when a chat is resumed (seen with a tool's response).
    let response = json!({"id":"g_response","timestamp":"2026-04-01T10:00:03.000Z","type":"user","content":[{"functionResponse":{"id":"call-1","name":"ls","response":{"output":"a.txt"}}}]});
    let lines = [
        meta_line(),
        json!({"$set": {"messages": [user("u", "Q"), answer("g", "", 10), response.clone(), response, answer("g2", "done", 20)]}}),
        user("u2", "next"),
        answer("g3", "fine", 30),
    ];
    let s = read_lines(&lines).session;
    // The call's answer and its response, once each.
    assert_eq!(texts(&s), ["Q", "", "", "done", "next", "fine"]);
    assert_eq!(s.total_usage().input, 60);
    assert_eq!(json_lines(&write(&s)), lines.to_vec());
}

/// A chat the real Gemini CLI wrote whose last resume repeated a record in
/// its `$set.messages` (see the fixtures' PROVENANCE.md).
#[test]
fn a_real_chat_whose_checkpoint_repeats_a_record_is_written_back_as_it_was() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gemini-0.61.0/session-checkpoint-repeats-a-record.jsonl");
    let bytes = std::fs::read(&path).unwrap();
    let repeated = json_lines(&bytes).iter().any(|v| {
        let ids: Vec<&str> = v["$set"]["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["id"].as_str())
            .collect();
        ids.iter()
            .enumerate()
            .any(|(i, id)| ids[i + 1..].contains(id) && id.ends_with("_response"))
    });
    assert!(repeated, "the fixture no longer repeats a record");
    let s = gemini().read_path(&path).unwrap().session;
    assert_eq!(json_lines(&write(&s)), json_lines(&bytes));
}

#[test]
fn reappended_ids_keep_their_first_place_and_count_once() {
    let lines = [
        meta_line(),
        user("u", "Q"),
        answer("g", "", 100),
        user("u2", "next"),
        // "g" updated after "u2" was appended: it stays before "u2".
        answer("g", "final answer", 100),
    ];
    let s = read_lines(&lines).session;
    assert_eq!(texts(&s), ["Q", "final answer", "next"]);
    assert_eq!(s.total_usage().input, 100);
    assert_eq!(json_lines(&write(&s)), lines.to_vec());
}

#[test]
fn session_context_is_injected_not_a_turn() {
    let lines = [
        meta_line(),
        user("ctx", "<session_context>\nOS: linux\n</session_context>"),
        user("u", "real prompt"),
    ];
    let s = read_lines(&lines).session;
    assert_eq!(count(&s, Role::User), 1);
    assert_eq!(s.first_prompt().as_deref(), Some("real prompt"));
}

#[test]
fn subagent_and_project_root_from_the_layout() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join(".gemini/tmp/my-app");
    let sub_dir = project.join("chats/parent-session-id");
    std::fs::create_dir_all(&sub_dir).unwrap();
    std::fs::write(project.join(".project_root"), "/home/me/my-app").unwrap();
    let main = project.join("chats/session-2026-04-01T10-00-11111111.jsonl");
    std::fs::write(&main, meta_line().to_string() + "\n").unwrap();
    let sub = sub_dir.join("child.jsonl");
    let sub_meta = json!({"sessionId":"child","projectHash":"ab","startTime":"2026-04-01T10:00:00.000Z","lastUpdated":"2026-04-01T10:00:00.000Z","kind":"subagent","directories":["/elsewhere"]});
    std::fs::write(&sub, sub_meta.to_string() + "\n").unwrap();
    let s = gemini().read_path(&sub).unwrap().session;
    assert_eq!(s.meta.parent_session.as_deref(), Some("parent-session-id"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/me/my-app"));
    let s = gemini().read_path(&main).unwrap().session;
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/me/my-app"));
    assert_eq!(s.meta.parent_session, None);

    // Discovery finds both, in slug and in sha256-named project dirs.
    let hashed = home
        .path()
        .join(".gemini/tmp")
        .join("9da8b3dfb8655182ac1f0e66601c367e34f8d18447a29759eeba4d7e45dc60ea/chats");
    std::fs::create_dir_all(&hashed).unwrap();
    std::fs::write(hashed.join("session-2025-10-01T10-00-22222222.json"), "{}").unwrap();
    std::fs::write(hashed.join("logs.json"), "[]").unwrap();
    let mut found = gemini().discover(&DiscoverEnv::with_home(home.path()));
    found.sort();
    assert_eq!(found.len(), 3, "{found:?}");
    // GEMINI_CLI_HOME replaces the home directory.
    let mut env = DiscoverEnv::with_home("/nowhere");
    env.vars.insert(
        "GEMINI_CLI_HOME".into(),
        home.path().to_string_lossy().into_owned(),
    );
    assert_eq!(gemini().discover(&env).len(), 3);
}

#[test]
fn slugs_and_project_dirs() {
    assert_eq!(project_slug("/home/me/My App_2"), "my-app-2");
    assert_eq!(project_slug("/"), "project");
    assert_eq!(project_slug("/x/--Weird..Name--"), "weird-name");
    let home = tempfile::tempdir().unwrap();
    let env = DiscoverEnv::with_home(home.path());
    let tmp = home.path().join(".gemini/tmp");
    // A new project gets its slug; a taken slug gets a suffix.
    assert_eq!(project_dir(&env, "/a/app"), tmp.join("app"));
    write_project_root(&tmp.join("app"), "/a/app").unwrap();
    assert_eq!(project_dir(&env, "/a/app"), tmp.join("app"));
    assert_eq!(project_dir(&env, "/b/app"), tmp.join("app-1"));
    // The marker is not overwritten.
    write_project_root(&tmp.join("app"), "/c/app").unwrap();
    assert_eq!(
        std::fs::read_to_string(tmp.join("app/.project_root")).unwrap(),
        "/a/app"
    );
}

fn codex_session() -> Session {
    let p = fixtures().join("codex/vct-test_conversation_oai.jsonl");
    registry::by_name("codex")
        .unwrap()
        .read_path(&p)
        .unwrap()
        .session
}

/// What a conversation comparison looks at.
type Conversation = (
    Vec<String>,
    Vec<String>,
    Vec<(String, Value)>,
    HashMap<String, String>,
);

/// Prompts, assistant texts, tool calls (name, input) and results by id.
fn conversation(s: &Session) -> Conversation {
    let ms = messages(s);
    let prompts = ms
        .iter()
        .filter(|m| m.role == Role::User && m.injected.is_none())
        .map(|m| m.text_content())
        .collect();
    let assistant = ms
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| m.text_content())
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut calls = Vec::new();
    let mut results = HashMap::new();
    for m in &ms {
        for b in &m.content {
            match &b.kind {
                BlockKind::ToolCall { name, input, .. } => {
                    let input = match input {
                        Value::String(s) => serde_json::from_str(s).unwrap_or(input.clone()),
                        v => v.clone(),
                    };
                    calls.push((name.clone(), input));
                }
                BlockKind::ToolResult { tool_call_id, .. } => {
                    results.insert(
                        tool_call_id.clone().unwrap_or_default(),
                        b.plain_text().unwrap_or_default(),
                    );
                }
                _ => {}
            }
        }
    }
    (prompts, vec![assistant], calls, results)
}

#[test]
fn codex_sessions_convert_to_a_gemini_log() {
    let s = codex_session();
    let mut out = Vec::new();
    let fidelity = gemini().write(&s, &mut out).unwrap();
    let lines = json_lines(&out);
    let meta = &lines[0];
    assert_eq!(meta["sessionId"], "01996135-afde-7911-97f0-d863511eca56");
    assert_eq!(meta["kind"], "main");
    assert_eq!(meta["projectHash"].as_str().unwrap().len(), 64);
    for l in &lines[1..] {
        assert!(l["id"].is_string() && l["timestamp"].is_string(), "{l}");
        assert!(
            matches!(l["type"].as_str(), Some("user" | "gemini" | "info")),
            "{l}"
        );
    }
    // The codex events and turn contexts cannot be held.
    assert!(fidelity.losses.iter().any(|l| l.what == "entry kind event"));
    let back = gemini()
        .read_bytes(Path::new("session-2025-09-19T09-02-01996135.jsonl"), &out)
        .unwrap();
    assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
    assert_eq!(conversation(&back.session), conversation(&s));
    assert_eq!(pairing(&back.session), (18, 18));
    let (u, v) = (back.session.total_usage(), s.total_usage());
    assert_eq!(
        (u.input, u.cache_read, u.output, u.reasoning),
        (v.input, v.cache_read, v.output, v.reasoning)
    );
    // The environment context stays out of the prompts, as a notice.
    assert!(messages(&back.session)
        .iter()
        .any(|m| m.role == Role::System));
}

#[test]
fn resume_plan_puts_the_log_in_the_project_dir() {
    let home = tempfile::tempdir().unwrap();
    let s = codex_session();
    let env = DiscoverEnv::with_home(home.path());
    let plan = gemini().resume_plan(&s, &env).unwrap();
    let dir = home.path().join(".gemini/tmp/claude-code/chats");
    assert_eq!(
        plan.path,
        dir.join("session-2025-09-19T09-02-01996135.jsonl")
    );
    assert_eq!(
        plan.command,
        "gemini --resume 01996135-afde-7911-97f0-d863511eca56"
    );
    // An existing project dir (found by its marker) is reused.
    let existing = home.path().join(".gemini/tmp/other-name");
    write_project_root(&existing, "/proj/ds906659/gai/claude-code").unwrap();
    let plan = gemini().resume_plan(&s, &env).unwrap();
    assert_eq!(plan.path.parent().unwrap(), existing.join("chats"));
    // GEMINI_CLI_HOME replaces the home directory.
    let mut env = DiscoverEnv::with_home("/nowhere");
    env.vars.insert("GEMINI_CLI_HOME".into(), "/data".into());
    let plan = gemini().resume_plan(&s, &env).unwrap();
    assert!(plan.path.starts_with("/data/.gemini/tmp"));
}

#[test]
fn fixtures_are_detected_as_gemini() {
    for p in gemini_files() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.contains("schema_drift") {
            continue;
        }
        let head = std::fs::read(&p).unwrap();
        assert_eq!(
            registry::detect_bytes(&p, &head).map(|f| f.name()),
            Some("gemini"),
            "{name}"
        );
    }
}

#[test]
fn sessions_survive_the_unified_json_format() {
    let json_format = registry::by_name("json").unwrap();
    for p in gemini_files() {
        let s = gemini().read_path(&p).unwrap().session;
        let mut out = Vec::new();
        json_format.write(&s, &mut out).unwrap();
        let back = json_format
            .read_bytes(Path::new("s.json"), &out)
            .unwrap()
            .session;
        // The model's serde moves message extras to the entry on this
        // trip; what matters is that the native file comes back.
        assert_eq!(back.entries.len(), s.entries.len(), "{}", p.display());
        assert_eq!(write(&back), write(&s), "{}", p.display());
    }
}

/// A chat the real Gemini CLI 0.61.0 wrote and then continued with
/// `--resume` (against the mock model of `crates/harness`): the resume
/// rewrites history with `$set.messages` holding raw API parts (`text` with
/// `thought`, `functionCall`, `functionResponse`).
const RESUMED_0_61: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/gemini-0.61.0/session-resumed-set-parts.jsonl"
);

#[test]
fn a_resumed_chat_keeps_thinking_tool_calls_and_results_of_raw_api_parts() {
    let path = Path::new(RESUMED_0_61);
    let r = gemini().read_path(path).unwrap();
    let mut kinds = Vec::new();
    for e in r.session.active_branch() {
        let EntryKind::Message(m) = &e.kind else {
            continue;
        };
        for b in &m.content {
            match &b.kind {
                BlockKind::Thinking { text, .. } => kinds.push(format!("thinking {text}")),
                BlockKind::ToolCall { name, input, .. } => {
                    kinds.push(format!("call {name} {}", input["command"]))
                }
                BlockKind::ToolResult {
                    content, is_error, ..
                } => {
                    let t: String = content.iter().filter_map(|c| c.plain_text()).collect();
                    assert!(!is_error, "{t}");
                    kinds.push(format!("result {}", t.contains("alpha-tool-output")))
                }
                BlockKind::Text { text } if m.role == Role::Assistant => {
                    kinds.push(format!("answer {text}"))
                }
                _ => {}
            }
        }
    }
    let at = |k: &str| {
        kinds
            .iter()
            .position(|x| x == k)
            .unwrap_or_else(|| panic!("{k} not in {kinds:?}"))
    };
    let order = [
        at("thinking alpha-thinking"),
        at("call run_shell_command \"echo alpha-tool-output\""),
        at("result true"),
        at("answer alpha-answer"),
        at("answer beta-answer"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{kinds:?}");
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(json_lines(&write(&r.session)), json_lines(&bytes));
    // Converted to Claude, the tool result is the real output, not an error.
    let claude = registry::by_name("claude").unwrap();
    let mut out = Vec::new();
    claude.write(&r.session, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("alpha-tool-output\\nProcess Group"), "{text}");
    assert!(!text.contains("No result was recorded"));
}

#[test]
fn agentlogs_unified_json_of_a_gemini_chat_is_not_taken_for_a_gemini_chat() {
    let r = gemini().read_path(Path::new(RESUMED_0_61)).unwrap();
    let json = registry::by_name("json").unwrap();
    let mut out = Vec::new();
    json.write(&r.session, &mut out).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("session.json");
    std::fs::write(&p, &out).unwrap();
    assert_eq!(registry::detect(&p).unwrap().name(), "json");
}

#[test]
fn a_header_only_sibling_left_by_a_later_resume_is_not_another_session() {
    let home = tempfile::tempdir().unwrap();
    let chats = home.path().join(".gemini/tmp/proj/chats");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::copy(
        RESUMED_0_61,
        chats.join("session-2026-11-23T21-15-76fe0636.jsonl"),
    )
    .unwrap();
    // What the real Gemini CLI 0.61.0 left beside a chat it continued in a
    // later minute: the metadata line and the injected session context.
    let sibling = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/gemini-0.61.0/sibling-left-by-resume.jsonl"
    );
    std::fs::copy(
        sibling,
        chats.join("session-2026-11-23T21-16-76fe0636.jsonl"),
    )
    .unwrap();
    // A header-only chat of another session stays listed.
    std::fs::copy(
        sibling,
        chats.join("session-2026-11-23T21-17-0000aaaa.jsonl"),
    )
    .unwrap();
    // So does a sibling that holds a conversation.
    std::fs::copy(
        RESUMED_0_61,
        chats.join("session-2026-11-23T21-18-76fe0636.jsonl"),
    )
    .unwrap();
    let env = DiscoverEnv::with_home(home.path());
    let mut found: Vec<String> = gemini()
        .discover(&env)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            "session-2026-11-23T21-15-76fe0636.jsonl",
            "session-2026-11-23T21-17-0000aaaa.jsonl",
            "session-2026-11-23T21-18-76fe0636.jsonl"
        ]
    );
}

#[test]
fn a_rewritten_history_reads_each_thought_and_call_once() {
    // Gemini CLI 0.61 resumed this session and rewrote its history with
    // `$set` of raw API parts, repeating each turn's thoughts and function
    // calls in `content` beside `thoughts` and `toolCalls`.
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../harness/fixtures/gemini-0.61.0.jsonl");
    let read = gemini().read_path(&p).unwrap();
    let s = &read.session;
    let mut calls = Vec::new();
    let mut thoughts = Vec::new();
    for e in s.active_branch() {
        let Some(m) = e.message() else { continue };
        for b in &m.content {
            match &b.kind {
                agentlog_model::BlockKind::ToolCall { id, .. } => calls.push(id.clone()),
                agentlog_model::BlockKind::Thinking { text, .. } => thoughts.push(text.clone()),
                _ => {}
            }
        }
    }
    let mut unique = calls.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(calls.len(), unique.len(), "a call read twice: {calls:?}");
    assert!(!calls.is_empty());
    let mut t = thoughts.clone();
    t.dedup();
    assert_eq!(t, thoughts, "a thought read twice: {thoughts:?}");
    // A result Gemini recorded as a user record's functionResponse is not
    // read a second time from the model turn's toolCalls.
    let results = |role: Role| -> Vec<String> {
        s.active_branch()
            .iter()
            .filter_map(|e| e.message())
            .filter(|m| m.role == role)
            .flat_map(|m| m.content.iter())
            .filter_map(|b| match &b.kind {
                agentlog_model::BlockKind::ToolResult { tool_call_id, .. } => tool_call_id.clone(),
                _ => None,
            })
            .collect()
    };
    let from_user = results(Role::User);
    assert!(!from_user.is_empty());
    for id in results(Role::Assistant) {
        assert!(!from_user.contains(&id), "result of {id} read twice");
    }
    // And the file is still written back as it was.
    let mut out = Vec::new();
    gemini().write(s, &mut out).unwrap();
    let lines = |b: &[u8]| -> Vec<Value> {
        b.split(|c| *c == b'\n')
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect()
    };
    assert_eq!(lines(&out), lines(&std::fs::read(&p).unwrap()));
}
