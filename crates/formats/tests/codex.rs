//! Codex CLI rollouts: every fixture read, counted and written back, and the
//! reading rules (one source per text, tokens once, forks, rollbacks) on
//! hand-made rollouts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_formats::discover::{walk_files, DiscoverEnv};
use agentlog_formats::{registry, Format, Read};
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp,
    Usage,
};
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

fn codex() -> &'static dyn Format {
    registry::by_name("codex").unwrap()
}

fn read_fixture(name: &str) -> Read {
    let p = fixtures().join("codex").join(name);
    codex().read_path(&p).unwrap()
}

fn read_str(text: &str) -> Read {
    codex()
        .read_bytes(Path::new("rollout-test.jsonl"), text.as_bytes())
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
    codex().write(s, &mut out).unwrap();
    out
}

fn messages(s: &Session) -> Vec<&Message> {
    s.active_branch()
        .into_iter()
        .filter_map(Entry::message)
        .collect()
}

/// Real user turns: user messages that are not injected context.
fn prompts(s: &Session) -> Vec<String> {
    messages(s)
        .into_iter()
        .filter(|m| m.role == Role::User && m.injected.is_none())
        .map(Message::text_content)
        .collect()
}

/// Tool call ids mapped to whether a result with the same id exists.
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

fn codex_files() -> Vec<PathBuf> {
    walk_files(&fixtures().join("codex"), 3, &|p| {
        p.extension().is_some_and(|e| e == "jsonl")
    })
}

#[test]
fn real_rollout_has_one_copy_of_each_text() {
    let r = read_fixture("vct-test_conversation_oai.jsonl");
    let s = &r.session;
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert_eq!(s.meta.id, "01996135-afde-7911-97f0-d863511eca56");
    assert_eq!(s.meta.agent, Agent::Codex);
    assert_eq!(s.meta.agent_version.as_deref(), Some("0.39.0"));
    assert_eq!(
        s.meta.cwd.as_deref(),
        Some("/proj/ds906659/gai/claude-code")
    );
    assert_eq!(s.meta.model.model.as_deref(), Some("aide-gpt-5"));
    // One prompt; the environment context is injected, not a turn.
    let p = prompts(s);
    assert_eq!(p.len(), 1);
    assert!(p[0].starts_with("# Context from my IDE setup:"));
    let injected: Vec<_> = messages(s)
        .into_iter()
        .filter_map(|m| m.injected.clone())
        .collect();
    assert_eq!(injected, ["environment_context"]);
    // 9 assistant texts, 10 reasoning items, 18 calls; agent_message copies
    // stay hidden events.
    let assistant: Vec<_> = messages(s)
        .into_iter()
        .filter(|m| m.role == Role::Assistant)
        .collect();
    assert_eq!(assistant.len(), 37);
    let texts: Vec<String> = assistant
        .iter()
        .map(|m| m.text_content())
        .filter(|t| !t.is_empty())
        .collect();
    assert_eq!(texts.len(), 9);
    let mut unique = texts.clone();
    unique.dedup();
    assert_eq!(unique.len(), 9);
    assert!(assistant
        .iter()
        .all(|m| m.model.as_deref() == Some("aide-gpt-5")));
    assert_eq!(pairing(s), (18, 18));
    // Outputs written as JSON strings become their text, with the tool name.
    let tool: Vec<_> = messages(s)
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .collect();
    assert_eq!(tool.len(), 18);
    assert!(tool.iter().any(|m| m.tool_name.as_deref() == Some("shell")
        && m.content[0].plain_text().unwrap().starts_with("total 124")));
    // Tokens: the last token_count's totals, input without the cached part.
    let u = s.total_usage();
    assert_eq!(
        (u.input, u.cache_read, u.output, u.reasoning),
        (270_530 - 136_832, 136_832, 12_551, 9_536)
    );
    // A linear log.
    assert_eq!(s.tree().roots().len(), 1);
    assert!(s.tree().branch_points().is_empty());
    assert_eq!(s.active_branch().len(), s.entries.len());
}

#[test]
fn zoo_of_every_line_type() {
    let r = read_fixture("as-stage0-small.jsonl");
    let s = &r.session;
    assert_eq!(s.meta.agent_version.as_deref(), Some("0.146.0"));
    assert_eq!(s.meta.model.provider.as_deref(), Some("openai"));
    // custom_tool_call -> array output, function_call -> object output.
    let (calls, paired) = pairing(s);
    assert!(calls >= 4 && paired >= 3, "{calls} {paired}");
    let outputs: Vec<String> = messages(s)
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.content[0].plain_text())
        .collect();
    assert!(outputs.contains(&"a.txt\n".to_string()));
    assert!(outputs.contains(&"a.txt\nb.txt\n".to_string()));
    // web_search_call is a tool call without an id.
    assert!(messages(s)
        .iter()
        .any(|m| m.tool_calls().any(|(_, n, _)| n == "web_search")));
    // The developer message is injected context.
    assert!(messages(s)
        .iter()
        .any(|m| m.role == Role::Developer && m.injected.as_deref() == Some("developer")));
    // Reasoning with only encrypted content is redacted thinking.
    assert!(messages(s).iter().any(|m| m
        .content
        .iter()
        .any(|b| matches!(&b.kind, BlockKind::Thinking { redacted: true, .. }))));
    let compactions = s
        .entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Compaction { .. }))
        .count();
    assert_eq!(compactions, 6);
    let u = s.total_usage();
    assert_eq!(
        (u.input, u.cache_read, u.output),
        (16_341 - 3_584, 3_584, 81)
    );
    // The user_message event copies of the first prompt are hidden.
    assert_eq!(
        prompts(s)
            .iter()
            .filter(|p| p.as_str() == "List the files")
            .count(),
        1
    );
}

#[test]
fn bare_era_rollout() {
    let r = read_fixture("ccl-legacy-sessions/rollout-44444444-4444-4444-8444-444444444444.jsonl");
    let s = &r.session;
    assert_eq!(s.meta.id, "44444444-4444-4444-8444-444444444444");
    assert_eq!(s.meta.format_version, Some(json!("bare")));
    assert_eq!(
        s.meta.created_at,
        Some(Timestamp::Text("2026-01-04T05:06:07.000Z".into()))
    );
    assert_eq!(prompts(s), ["Open the synthetic legacy session."]);
    let a: Vec<_> = messages(s)
        .into_iter()
        .filter(|m| m.role == Role::Assistant)
        .map(Message::text_content)
        .collect();
    assert_eq!(a, ["The synthetic legacy session is open."]);
}

#[test]
fn state_lines_and_environment_cwd_of_the_bare_era() {
    let text = concat!(
        r#"{"id":"5f0a7c3e-0000-4000-8000-000000000001","timestamp":"2025-08-01T10:00:00.000Z","instructions":null}"#,
        "\n",
        r#"{"record_type":"state"}"#,
        "\n",
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/home/me/app</cwd>\n</environment_context>"}]}"#,
        "\n",
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#,
        "\n",
        r#"{"record_type":"state"}"#,
        "\n",
    );
    let r = read_str(text);
    assert_eq!(r.session.meta.cwd.as_deref(), Some("/home/me/app"));
    assert_eq!(prompts(&r.session), ["hi"]);
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert_eq!(json_lines(&write(&r.session)), json_lines(text.as_bytes()));
}

#[test]
fn typescript_era_document() {
    let doc = json!({
        "session": {"timestamp": "2025-04-20T10:00:00.000Z", "id": "3f1c2a4e-0000-4000-8000-00000000abcd", "instructions": ""},
        "items": [
            user_item("<environment_context>\n  <cwd>/home/me/ts</cwd>\n</environment_context>"),
            user_item("explain main.rs"),
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Reading the file"}]},
            {"type": "function_call", "id": "fc_1", "name": "shell", "arguments": "{\"command\":[\"cat\",\"main.rs\"]}", "call_id": "call_1"},
            {"type": "function_call_output", "call_id": "call_1", "output": "{\"output\":\"fn main() {}\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.0}}"},
            assistant_item("It does nothing."),
        ],
    });
    let bytes = serde_json::to_vec_pretty(&doc).unwrap();
    let r = codex()
        .read_bytes(Path::new("rollout-2025-04-20-3f1c2a4e.json"), &bytes)
        .unwrap();
    let s = &r.session;
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert_eq!(s.meta.id, "3f1c2a4e-0000-4000-8000-00000000abcd");
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/me/ts"));
    assert_eq!(prompts(s), ["explain main.rs"]);
    assert_eq!(pairing(s), (1, 1));
    let out = write(s);
    let back: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(back, doc);
}

#[test]
fn usage_only_rollouts_report_their_tokens() {
    let r = read_fixture("ccusage-session-alpha.jsonl");
    let d = r
        .diagnostics
        .iter()
        .find(|d| d.code == "usage-unattributed")
        .expect("a diagnostic");
    // 1000 + 2500 input of which 250 + 500 cached; 125 + 300 output.
    assert!(
        d.message.contains("2750 input, 750 cached, 425 output"),
        "{d}"
    );
    let r = read_fixture("vct-codex_session_rate_limits.jsonl");
    assert_eq!(r.session.total_usage().input, 200);
}

fn line(ts: &str, kind: &str, payload: Value) -> String {
    json!({"timestamp": ts, "type": kind, "payload": payload}).to_string() + "\n"
}

fn user_item(text: &str) -> Value {
    json!({"type":"message","role":"user","content":[{"type":"input_text","text":text}]})
}

fn assistant_item(text: &str) -> Value {
    json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":text}]})
}

fn token_count(total_input: u64) -> Value {
    json!({"type":"token_count","info":{"total_token_usage":{"input_tokens":total_input,"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0,"total_tokens":total_input}}})
}

#[test]
fn event_copies_are_hidden_and_lone_events_are_messages() {
    let t = "2025-10-01T00:00:00.000Z";
    let text = [
        line(
            t,
            "session_meta",
            json!({"id":"s1","timestamp":t,"cwd":"/w"}),
        ),
        line(
            t,
            "event_msg",
            json!({"type":"user_message","message":"first","images":[]}),
        ),
        line(t, "response_item", user_item("first")),
        line(t, "response_item", assistant_item("answer")),
        line(
            t,
            "event_msg",
            json!({"type":"agent_message","message":"answer"}),
        ),
        // No response item for these two: the events are the messages.
        line(
            t,
            "event_msg",
            json!({"type":"user_message","message":"second","kind":"plain"}),
        ),
        line(
            t,
            "event_msg",
            json!({"type":"agent_message","message":"reply"}),
        ),
    ]
    .concat();
    let r = read_str(&text);
    let s = &r.session;
    assert_eq!(prompts(s), ["first", "second"]);
    let a: Vec<_> = messages(s)
        .into_iter()
        .filter(|m| m.role == Role::Assistant)
        .map(Message::text_content)
        .collect();
    assert_eq!(a, ["answer", "reply"]);
    assert_eq!(json_lines(&write(s)), json_lines(text.as_bytes()));
}

#[test]
fn tool_outputs_in_all_three_shapes() {
    let t = "2025-10-01T00:00:00.000Z";
    let enc =
        json!({"output":"boom\n","metadata":{"exit_code":2,"duration_seconds":0.1}}).to_string();
    let text = [
        line(t, "session_meta", json!({"id":"s2","timestamp":t,"cwd":"/w"})),
        line(t, "response_item", json!({"type":"function_call","name":"shell","arguments":"{\"command\":[\"false\"]}","call_id":"c1"})),
        line(t, "response_item", json!({"type":"function_call_output","call_id":"c1","output":enc})),
        line(t, "response_item", json!({"type":"function_call","name":"update_plan","arguments":"{}","call_id":"c2"})),
        line(t, "response_item", json!({"type":"function_call_output","call_id":"c2","output":"Plan updated"})),
        line(t, "response_item", json!({"type":"local_shell_call","call_id":"c3","status":"completed","action":{"type":"exec","command":["ls"]}})),
        line(t, "response_item", json!({"type":"function_call_output","call_id":"c3","output":[{"type":"input_text","text":"x\n"},{"type":"input_image","image_url":"data:image/png;base64,AA"}]})),
    ]
    .concat();
    let r = read_str(&text);
    let s = &r.session;
    assert_eq!(pairing(s), (3, 3));
    let tool: Vec<&Message> = messages(s)
        .into_iter()
        .filter(|m| m.role == Role::Tool)
        .collect();
    assert_eq!(tool[0].is_error, Some(true));
    assert_eq!(tool[0].content[0].plain_text().as_deref(), Some("boom\n"));
    assert_eq!(
        tool[1].content[0].plain_text().as_deref(),
        Some("Plan updated")
    );
    assert_eq!(tool[2].tool_name.as_deref(), Some("local_shell"));
    let BlockKind::ToolResult { content, .. } = &tool[2].content[0].kind else {
        panic!("not a result")
    };
    assert!(matches!(content[1].kind, BlockKind::Image { .. }));
    assert_eq!(json_lines(&write(s)), json_lines(text.as_bytes()));
}

/// Returns a UUIDv7 minted at `ms`.
fn v7(ms: u64, tail: u16) -> String {
    let hex = format!("{ms:012x}");
    format!("{}-{}-7000-8000-{:012x}", &hex[..8], &hex[8..12], tail)
}

#[test]
fn fork_replay_is_marked_and_not_counted_again() {
    let fork_ms = 1_760_000_000_000u64;
    let fork_id = v7(fork_ms, 1);
    let parent_id = v7(fork_ms - 60_000, 2);
    let t = "2025-10-09T08:53:20.000Z";
    let text = [
        line(t, "session_meta", json!({"id":fork_id,"forked_from_id":parent_id,"timestamp":t,"cwd":"/w","source":"cli"})),
        // The parent's history, replayed.
        line(t, "session_meta", json!({"id":parent_id,"timestamp":t,"cwd":"/w"})),
        line(t, "turn_context", json!({"turn_id":v7(fork_ms - 50_000, 3),"cwd":"/w","model":"gpt-5"})),
        line(t, "response_item", user_item("parent prompt")),
        line(t, "response_item", assistant_item("parent answer")),
        line(t, "event_msg", token_count(1000)),
        // The fork's own turn.
        line(t, "turn_context", json!({"turn_id":v7(fork_ms + 5_000, 4),"cwd":"/w","model":"gpt-5"})),
        line(t, "response_item", user_item("fork prompt")),
        line(t, "event_msg", token_count(1300)),
        line(t, "response_item", assistant_item("fork answer")),
    ]
    .concat();
    let r = read_str(&text);
    let s = &r.session;
    assert_eq!(s.meta.id, fork_id);
    assert_eq!(s.meta.parent_session.as_deref(), Some(parent_id.as_str()));
    assert_eq!(prompts(s), ["fork prompt"]);
    let replayed = messages(s)
        .into_iter()
        .filter(|m| m.injected.as_deref() == Some("fork_replay"))
        .count();
    assert_eq!(replayed, 2);
    assert_eq!(s.total_usage().input, 300);
    assert_eq!(json_lines(&write(s)), json_lines(text.as_bytes()));
}

#[test]
fn subagent_rollout_names_its_parent_and_skips_the_replay() {
    let own_ms = 1_760_000_000_000u64;
    let own = v7(own_ms, 1);
    let parent = v7(own_ms - 10_000, 2);
    let t = "2025-10-09T08:53:20.000Z";
    let source = json!({"subagent":{"thread_spawn":{"parent_thread_id":parent,"depth":1}}});
    let text = [
        line(
            t,
            "session_meta",
            json!({"id":own,"timestamp":t,"cwd":"/w","source":source}),
        ),
        line(
            t,
            "session_meta",
            json!({"id":parent,"timestamp":t,"cwd":"/w","source":"cli"}),
        ),
        line(t, "response_item", user_item("parent prompt")),
        line(t, "event_msg", token_count(500)),
        line(
            t,
            "turn_context",
            json!({"turn_id":v7(own_ms + 1, 3),"cwd":"/w","model":"gpt-5"}),
        ),
        line(t, "response_item", user_item("task for the subagent")),
        line(t, "event_msg", token_count(800)),
        line(t, "response_item", assistant_item("done")),
    ]
    .concat();
    let s = read_str(&text).session;
    assert_eq!(s.meta.parent_session.as_deref(), Some(parent.as_str()));
    assert_eq!(prompts(&s), ["task for the subagent"]);
    assert_eq!(s.total_usage().input, 300);
}

#[test]
fn rollback_drops_turns_from_the_active_branch() {
    let t = "2025-10-01T00:00:00.000Z";
    let text = [
        line(
            t,
            "session_meta",
            json!({"id":"s3","timestamp":t,"cwd":"/w"}),
        ),
        line(t, "response_item", user_item("one")),
        line(t, "response_item", assistant_item("1")),
        line(t, "response_item", user_item("two")),
        line(t, "response_item", assistant_item("2")),
        line(t, "response_item", user_item("three")),
        line(t, "response_item", assistant_item("3")),
        line(
            t,
            "event_msg",
            json!({"type":"thread_rolled_back","num_turns":2}),
        ),
        line(t, "response_item", user_item("two again")),
        line(t, "response_item", assistant_item("2'")),
    ]
    .concat();
    let r = read_str(&text);
    let s = &r.session;
    assert_eq!(prompts(s), ["one", "two again"]);
    // The dropped turns stay in the tree as a side branch.
    assert_eq!(s.entries.len(), 10);
    assert_eq!(s.tree().branch_points().len(), 1);
    assert_eq!(s.tree().leaves().len(), 2);
    assert_eq!(json_lines(&write(s)), json_lines(text.as_bytes()));
}

#[test]
fn bad_lines_are_diagnostics_with_line_numbers() {
    let t = "2025-10-01T00:00:00.000Z";
    let text = [
        line(
            t,
            "session_meta",
            json!({"id":"s4","timestamp":t,"cwd":"/w"}),
        ),
        "not json\n".to_string(),
        line(t, "response_item", user_item("still read")),
        "{\"timestamp\":\"x\",\"type\":\"resp".to_string(),
    ]
    .concat();
    let r = read_str(&text);
    let codes: Vec<_> = r.diagnostics.iter().map(|d| (d.line, d.code)).collect();
    assert_eq!(codes, [(Some(2), "invalid-json"), (Some(4), "torn-tail")]);
    assert_eq!(prompts(&r.session), ["still read"]);
}

fn foreign_session() -> Session {
    let mut meta = SessionMeta::new("pi-session-1", Agent::Pi);
    meta.format = Some("pi".into());
    meta.cwd = Some("/home/me/my project".into());
    meta.created_at = Some(Timestamp::Text("2026-01-02T03:04:05.000Z".into()));
    meta.model.model = Some("claude-sonnet-4".into());
    let mut s = Session::new(meta);
    let mut push = |id: &str, m: Message| {
        let parent = s.leaf_id.clone();
        s.push(
            Entry::new(id, parent, EntryKind::Message(m))
                .at(Timestamp::Text("2026-01-02T03:04:06.000Z".into())),
        );
    };
    push("u1", Message::text(Role::User, "list the files"));
    let mut a = Message::new(Role::Assistant);
    a.content
        .push(Block::thinking("I should run ls", Some("sig".into())));
    a.content.push(Block::text("Running ls."));
    a.content.push(Block::tool_call(
        Some("t1".into()),
        "bash",
        json!({"command": "ls"}),
    ));
    a.usage = Some(Usage {
        input: 100,
        cache_read: 20,
        output: 30,
        ..Usage::default()
    });
    push("a1", a);
    let mut r = Message::new(Role::Tool);
    r.tool_call_id = Some("t1".into());
    r.content.push(Block::tool_result(
        Some("t1".into()),
        vec![Block::text("a.txt")],
        false,
    ));
    push("r1", r);
    let mut a2 = Message::text(Role::Assistant, "One file: a.txt.");
    a2.usage = Some(Usage {
        input: 10,
        output: 5,
        ..Usage::default()
    });
    push("a2", a2);
    s
}

/// What a conversation comparison looks at.
type Conversation = (
    Vec<String>,
    Vec<String>,
    Vec<String>,
    Vec<(String, Value)>,
    HashMap<String, String>,
);

/// The conversation as text: prompts, assistant texts, non-empty thinking,
/// tool calls with their normalized input and results by call id.
fn conversation(s: &Session) -> Conversation {
    let ms = messages(s);
    let assistant = ms
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| m.text_content())
        .filter(|t| !t.is_empty())
        .collect();
    let thinking = ms
        .iter()
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match &b.kind {
            BlockKind::Thinking { text, .. } if !text.is_empty() => Some(text.clone()),
            _ => None,
        })
        .collect();
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
    (prompts(s), assistant, thinking, calls, results)
}

#[test]
fn writes_a_resumable_rollout_for_a_foreign_session() {
    let s = foreign_session();
    let mut out = Vec::new();
    let fidelity = codex().write(&s, &mut out).unwrap();
    assert!(fidelity
        .losses
        .iter()
        .any(|l| l.what == "thinking signatures"));
    let lines = json_lines(&out);
    let meta = &lines[0];
    assert_eq!(meta["type"], "session_meta");
    let id = meta["payload"]["id"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok());
    assert_eq!(id, agentlog_formats::codex::rollout_id(&s));
    for k in ["timestamp", "cwd", "originator", "cli_version", "source"] {
        assert!(meta["payload"].get(k).is_some(), "session_meta lacks {k}");
    }
    assert!(meta["payload"].get("instructions").is_some());
    assert_eq!(lines[1]["type"], "turn_context");
    assert_eq!(lines[1]["payload"]["model"], "claude-sonnet-4");
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| {
            format!(
                "{}:{}",
                l["type"].as_str().unwrap(),
                l["payload"]["type"].as_str().unwrap_or("")
            )
        })
        .collect();
    for k in [
        "response_item:message",
        "event_msg:user_message",
        "event_msg:agent_message",
        "response_item:reasoning",
        "response_item:function_call",
        "response_item:function_call_output",
        "event_msg:token_count",
    ] {
        assert!(kinds.iter().any(|x| x == k), "no {k} in {kinds:?}");
    }
    let call = lines
        .iter()
        .find(|l| l["payload"]["type"] == "function_call")
        .unwrap();
    assert!(call["payload"]["arguments"].is_string());
    assert_eq!(call["payload"]["call_id"], "t1");
    // Read back: the same conversation, tokens counted once.
    let back = codex()
        .read_bytes(Path::new("rollout-x.jsonl"), &out)
        .unwrap();
    assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
    assert_eq!(conversation(&back.session), conversation(&s));
    let (u, v) = (back.session.total_usage(), s.total_usage());
    assert_eq!(
        (u.input, u.cache_read, u.output),
        (v.input, v.cache_read, v.output)
    );
    assert_eq!(back.session.meta.cwd, s.meta.cwd);
    assert_eq!(back.session.meta.id, id);
}

#[test]
fn gemini_sessions_convert_to_codex() {
    let p = fixtures().join("gemini/vct-test_conversation_gemini.2026-03.json");
    let gemini = registry::by_name("gemini").unwrap().read_path(&p).unwrap();
    let out = write(&gemini.session);
    let back = codex()
        .read_bytes(Path::new("rollout-x.jsonl"), &out)
        .unwrap();
    let (p1, a1, t1, c1, r1) = conversation(&gemini.session);
    let (p2, a2, t2, c2, r2) = conversation(&back.session);
    assert_eq!((p1, a1, t1), (p2, a2, t2));
    assert_eq!(c1, c2);
    assert_eq!(c2.len(), 7);
    assert_eq!(r1, r2);
}

#[test]
fn resume_plan_uses_codex_home_and_the_rollout_name() {
    let s = foreign_session();
    let mut env = DiscoverEnv::with_home("/home/me");
    let plan = codex().resume_plan(&s, &env).unwrap();
    let id = agentlog_formats::codex::rollout_id(&s);
    assert!(plan.path.starts_with("/home/me/.codex/sessions"));
    let name = plan
        .path
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("rollout-2026-01-0"), "{name}");
    assert!(name.ends_with(&format!("-{id}.jsonl")), "{name}");
    // rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl under YYYY/MM/DD.
    let stamp = &name["rollout-".len().."rollout-".len() + 19];
    let dirs: Vec<String> = plan
        .path
        .parent()
        .unwrap()
        .iter()
        .rev()
        .take(3)
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    assert_eq!(format!("{}-{}-{}", dirs[2], dirs[1], dirs[0]), stamp[..10]);
    assert_eq!(plan.command, format!("codex resume {id}"));
    assert_eq!(plan.cwd, Some(PathBuf::from("/home/me/my project")));
    env.vars.insert("CODEX_HOME".into(), "/srv/codex".into());
    let plan = codex().resume_plan(&s, &env).unwrap();
    assert!(plan.path.starts_with("/srv/codex/sessions"));
}

#[test]
fn discovery_prefers_sessions_over_archived_copies() {
    let home = tempfile::tempdir().unwrap();
    let codex_home = home.path().join(".codex");
    let day = codex_home.join("sessions/2025/10/01");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::create_dir_all(codex_home.join("archived_sessions")).unwrap();
    let a = "rollout-2025-10-01T10-00-00-aaaaaaaa-0000-4000-8000-000000000000.jsonl";
    let b = "rollout-2025-09-01T10-00-00-bbbbbbbb-0000-4000-8000-000000000000.jsonl";
    std::fs::write(day.join(a), "{}\n").unwrap();
    std::fs::write(codex_home.join("archived_sessions").join(a), "{}\n").unwrap();
    std::fs::write(codex_home.join("archived_sessions").join(b), "{}\n").unwrap();
    std::fs::write(day.join("notes.txt"), "x").unwrap();
    let env = DiscoverEnv::with_home(home.path());
    let mut found = codex().discover(&env);
    found.sort();
    let mut want = vec![day.join(a), codex_home.join("archived_sessions").join(b)];
    want.sort();
    assert_eq!(found, want);
    // CODEX_HOME replaces ~/.codex.
    let mut env = DiscoverEnv::with_home("/nowhere");
    env.vars.insert(
        "CODEX_HOME".into(),
        codex_home.to_string_lossy().into_owned(),
    );
    assert_eq!(codex().discover(&env).len(), 2);
}

#[test]
fn envelope_fixtures_are_detected_as_codex() {
    for p in codex_files() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.contains("schema_drift") || name.starts_with("as-codex_05") {
            continue;
        }
        let head = std::fs::read(&p).unwrap();
        let f = registry::detect_bytes(&p, &head).map(|f| f.name());
        if name.starts_with("vct-codex_session")
            || name.starts_with("ccusage")
            || name.starts_with("rollout-")
            || name.contains("stage0")
            || name.starts_with("agentsview")
            || name.starts_with("vct-test")
        {
            assert_eq!(f, Some("codex"), "{name}");
        }
    }
}

#[test]
fn sessions_survive_the_unified_json_format() {
    let json_format = registry::by_name("json").unwrap();
    for p in codex_files() {
        let s = codex().read_path(&p).unwrap().session;
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
