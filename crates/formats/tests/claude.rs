#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The Claude Code format against the real and synthetic fixtures.

use agentlog_formats::claude::{self, FORMAT};
use agentlog_formats::{Format, Read, Severity};
use agentlog_model::{BlockKind, EntryKind, Role, Session};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/native/claude"
);

fn fixture(rel: &str) -> PathBuf {
    Path::new(FIXTURES).join(rel)
}

fn read(rel: &str) -> Read {
    FORMAT.read_path(&fixture(rel)).unwrap()
}

fn all_fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from(FIXTURES)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    assert!(out.len() >= 21, "fixtures missing: {out:?}");
    out
}

/// The JSON values of every line that parses.
fn values(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
        .collect()
}

fn write(session: &Session) -> Vec<u8> {
    let mut out = Vec::new();
    FORMAT.write(session, &mut out).unwrap();
    out
}

fn messages(s: &Session) -> Vec<&agentlog_model::Message> {
    s.entries.iter().filter_map(|e| e.message()).collect()
}

fn count(s: &Session, role: Role) -> usize {
    messages(s).iter().filter(|m| m.role == role).count()
}

/// (file, user, assistant, tool-result) message counts.
const COUNTS: &[(&str, usize, usize, usize)] = &[
    ("agentsview-queued_system_messages.jsonl", 1, 0, 0),
    ("agentsview-tool_call_pending.jsonl", 1, 1, 0),
    ("agentsview-truncated.jsonl", 1, 1, 0),
    ("agentsview-valid_session.jsonl", 2, 2, 0),
    ("as-stage0-large.jsonl", 4, 5, 1),
    ("as-stage0-schema_drift.jsonl", 2, 1, 0),
    ("as-stage0-small.jsonl", 7, 9, 3),
    ("as-subagent-project/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl", 1, 1, 0),
    (
        "as-subagent-project/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f/subagents/agent-a0ad4f44468bdf20d.jsonl",
        1,
        1,
        1,
    ),
    ("ccl-dag_compact_after_rewind.jsonl", 6, 5, 0),
    ("ccl-edge_cases.jsonl", 8, 4, 1),
    ("ccl-representative_messages.jsonl", 4, 5, 2),
    ("ccl-session_b.jsonl", 2, 1, 0),
    ("ccl-todowrite_examples.jsonl", 2, 6, 3),
    ("ccusage-project-alpha-chat.jsonl", 0, 3, 0),
    ("ccv-sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl", 2, 7, 12),
    ("ccv-sample-project/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", 4, 20, 21),
    ("ccv-sample-project/agent-test-hash-123.jsonl", 1, 1, 0),
    ("ccv-sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", 8, 170, 167),
    ("sw-sample_session.jsonl", 2, 3, 2),
    ("vct-test_conversation.jsonl", 12, 31, 30),
];

#[test]
fn message_counts_of_every_fixture() {
    assert_eq!(COUNTS.len(), all_fixtures().len());
    for (file, user, assistant, tool) in COUNTS {
        let s = read(file).session;
        assert_eq!(
            (
                count(&s, Role::User),
                count(&s, Role::Assistant),
                count(&s, Role::Tool)
            ),
            (*user, *assistant, *tool),
            "{file}"
        );
    }
}

#[test]
fn tool_calls_pair_with_their_results() {
    for path in all_fixtures() {
        let s = FORMAT.read_path(&path).unwrap().session;
        let calls: HashMap<String, String> = messages(&s)
            .iter()
            .flat_map(|m| m.tool_calls())
            .filter_map(|(id, name, _)| id.clone().map(|id| (id, name.to_string())))
            .collect();
        for m in messages(&s).iter().filter(|m| m.role == Role::Tool) {
            for b in &m.content {
                if let BlockKind::ToolResult {
                    tool_call_id: Some(id),
                    ..
                } = &b.kind
                {
                    assert!(calls.contains_key(id), "{}: result {id}", path.display());
                }
            }
            if let Some(id) = &m.tool_call_id {
                assert_eq!(m.tool_name.as_ref(), calls.get(id), "{}", path.display());
            }
        }
    }
    let s = read("vct-test_conversation.jsonl").session;
    let paired = messages(&s)
        .iter()
        .filter(|m| m.role == Role::Tool && m.tool_name.is_some())
        .count();
    assert_eq!(paired, 30);
    let todo = messages(&s)
        .iter()
        .filter(|m| m.tool_name.as_deref() == Some("TodoWrite"))
        .count();
    assert!(todo > 0);
    // An interrupted turn: a call that never got a result.
    let s = read("agentsview-tool_call_pending.jsonl").session;
    let calls = messages(&s).iter().flat_map(|m| m.tool_calls()).count();
    assert_eq!(calls, 1);
    assert_eq!(count(&s, Role::Tool), 0);
}

/// Sums usage over assistant lines, each (message id, request id) once
/// (its last line), lines without a message id each once.
fn expected_usage(bytes: &[u8]) -> [u64; 4] {
    let mut by_key: HashMap<(String, String), [u64; 4]> = HashMap::new();
    let mut order = Vec::new();
    let mut loose = [0u64; 4];
    for v in values(bytes) {
        let Some(m) = v.get("message") else { continue };
        let Some(u) = m.get("usage").and_then(Value::as_object) else {
            continue;
        };
        let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
        let counts = [
            n("input_tokens"),
            n("output_tokens"),
            n("cache_read_input_tokens"),
            n("cache_creation_input_tokens"),
        ];
        match m.get("id").and_then(Value::as_str) {
            Some(id) => {
                let req = v.get("requestId").and_then(Value::as_str).unwrap_or("");
                let key = (id.to_string(), req.to_string());
                if !by_key.contains_key(&key) {
                    order.push(key.clone());
                }
                by_key.insert(key, counts);
            }
            None => (0..4).for_each(|i| loose[i] += counts[i]),
        }
    }
    for k in order {
        let c = by_key[&k];
        (0..4).for_each(|i| loose[i] += c[i]);
    }
    loose
}

#[test]
fn token_totals_count_each_response_once() {
    for path in all_fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let u = FORMAT
            .read_bytes(&path, &bytes)
            .unwrap()
            .session
            .total_usage();
        assert_eq!(
            [u.input, u.output, u.cache_read, u.cache_write],
            expected_usage(&bytes),
            "{}",
            path.display()
        );
    }
    let u = read("vct-test_conversation.jsonl").session.total_usage();
    assert_eq!(
        (u.input, u.output, u.cache_read, u.cache_write),
        (158, 3860, 1_093_509, 99_004)
    );
    let u = read("ccusage-project-alpha-chat.jsonl")
        .session
        .total_usage();
    assert_eq!((u.input, u.output), (600, 250));
    assert!((u.cost_usd.unwrap() - 1.02).abs() < 1e-9);
}

#[test]
fn streamed_chunks_merge_into_one_message() {
    let s = read("vct-test_conversation.jsonl").session;
    let tree = s.tree();
    let e = tree.get("11b4107d-7189-4bd2-b52d-19b51acd9d2b").unwrap();
    let m = e.message().unwrap();
    let kinds: Vec<&str> = m
        .content
        .iter()
        .map(|b| match &b.kind {
            BlockKind::Thinking { signature, .. } => {
                assert!(signature.as_deref().is_some_and(|s| !s.is_empty()));
                "thinking"
            }
            BlockKind::Text { .. } => "text",
            BlockKind::ToolCall { .. } => "tool_call",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["thinking", "text", "tool_call"]);
    // The chunks' own uuids are not entries; the result hangs under the
    // merged message.
    assert!(tree.get("e321c683-9a24-4cd3-ab92-3c0214bb3033").is_none());
    let result = tree.get("4f7e3d5a-7b8d-4040-a0de-de1be2a0aa42");
    let result = result.or_else(|| s.entries.iter().find(|e| e.id.starts_with("4f7e3d5a")));
    assert_eq!(result.unwrap().parent_id.as_deref(), Some(e.id.as_str()));
}

#[test]
fn tree_shapes_roots_forks_and_sidechains() {
    // A rewind: two children of a1; the compaction hangs under the last
    // message before it, and the active branch is the second attempt.
    let s = read("ccl-dag_compact_after_rewind.jsonl").session;
    let t = s.tree();
    assert_eq!(t.roots().len(), 1);
    let forks: Vec<&str> = t.branch_points().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(forks, ["a1"]);
    let kids: Vec<&str> = t.children("a1").iter().map(|e| e.id.as_str()).collect();
    assert_eq!(kids, ["b1u", "b2u"]);
    assert_eq!(t.leaves().len(), 2);
    let path: Vec<&str> = s.active_branch().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        path,
        ["u1", "a1", "b2u", "b2a", "b2u2", "b2a2", "cb", "cs", "p1u", "p1a"]
    );

    // 1.0.x inline sidechains hang under the message whose Task calls
    // spawned them; the main line stays one path.
    let s = read("ccv-sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl").session;
    let t = s.tree();
    assert_eq!(t.roots().len(), 2, "the summary line and the conversation");
    assert_eq!(t.branch_points().len(), 2);
    let mut sidechain_roots = 0;
    for e in &s.entries {
        let Some(m) = e.message() else { continue };
        let parent = e.parent_id.as_deref().and_then(|p| t.get(p));
        if m.sidechain
            && parent
                .and_then(|p| p.message())
                .is_some_and(|p| !p.sidechain)
        {
            sidechain_roots += 1;
            let spawner = parent.unwrap().message().unwrap();
            let text = m.text_content();
            assert!(spawner
                .tool_calls()
                .any(|(_, name, input)| name == "Task" && input["prompt"] == text.as_str()));
        }
    }
    assert_eq!(sidechain_roots, 5);
    let main: Vec<_> = s
        .active_branch()
        .into_iter()
        .filter(|e| e.message().is_some_and(|m| m.sidechain))
        .collect();
    assert!(
        main.is_empty(),
        "the active branch has no sidechain entries"
    );
    assert_eq!(messages(&s).iter().filter(|m| m.sidechain).count(), 322);

    // Curated files whose records are all roots stay that way.
    assert_eq!(read("ccl-session_b.jsonl").session.tree().roots().len(), 3);
}

#[test]
fn uuid_less_records_get_line_ids_and_join_the_chain() {
    let s = read("as-stage0-small.jsonl").session;
    let t = s.tree();
    let mode = t.get("line-3").unwrap();
    assert_eq!(mode.parent_id.as_deref(), Some("line-2"));
    assert_eq!(t.get("line-2").unwrap().parent_id.as_deref(), Some("sys1"));
    // The attachment whose native parent is sys1 comes after them.
    assert_eq!(
        t.get("att-stage0-small-001").unwrap().parent_id.as_deref(),
        Some("line-3")
    );
    let s = read("agentsview-valid_session.jsonl").session;
    let path: Vec<&str> = s.active_branch().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(path, ["line-1", "line-2", "line-3", "line-4"]);
}

#[test]
fn subagent_files_link_to_their_parent() {
    let parent = fixture("as-subagent-project/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl");
    let subs = claude::subagent_files(&parent);
    assert_eq!(subs.len(), 1);
    assert!(subs[0].ends_with("subagents/agent-a0ad4f44468bdf20d.jsonl"));
    let sub = FORMAT.read_path(&subs[0]).unwrap().session;
    assert_eq!(sub.meta.id, "agent-a0ad4f44468bdf20d");
    assert_eq!(
        sub.meta.parent_session.as_deref(),
        Some("0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f")
    );
    assert_eq!(sub.meta.extra["agentType"], "general-purpose");
    assert_eq!(sub.meta.extra["agentId"], "a0ad4f44468bdf20d");
    assert!(messages(&sub).iter().all(|m| m.sidechain));

    // 2.0.x: flat agent files beside the session, found by their sessionId.
    let parent = fixture("ccv-sample-project/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl");
    let subs = claude::subagent_files(&parent);
    assert_eq!(
        subs,
        [fixture("ccv-sample-project/agent-test-hash-123.jsonl")]
    );
    let sub = FORMAT.read_path(&subs[0]).unwrap().session;
    assert_eq!(
        sub.meta.parent_session.as_deref(),
        Some("5c0375b4-57a5-4f26-b12d-d022ee4e51b7")
    );
    let other = fixture("ccv-sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl");
    assert!(claude::subagent_files(&other).is_empty());
}

#[test]
fn compaction_boundaries_and_summaries() {
    let s = read("ccl-dag_compact_after_rewind.jsonl").session;
    let t = s.tree();
    let cb = t.get("cb").unwrap();
    assert_eq!(cb.parent_id.as_deref(), Some("b2a2"));
    match &cb.kind {
        EntryKind::Compaction {
            summary,
            tokens_before,
            ..
        } => {
            assert!(summary.starts_with("This session is being continued"));
            assert_eq!(*tokens_before, Some(150_000));
        }
        k => panic!("{k:?}"),
    }
    let cs = t.get("cs").unwrap().message().unwrap();
    assert_eq!(cs.injected.as_deref(), Some("compact-summary"));
    let s = read("as-stage0-small.jsonl").session;
    let kinds: Vec<_> = s
        .entries
        .iter()
        .filter(|e| e.kind_name() == "compaction")
        .map(|e| e.id.clone())
        .collect();
    assert_eq!(kinds.len(), 2);
    assert_eq!(s.meta.title.as_deref(), Some("Stage0 small fixture"));
}

#[test]
fn session_id_switch_mid_file() {
    let r = read("vct-test_conversation.jsonl");
    let s = &r.session;
    assert_eq!(s.meta.id, "b162b1ae-97bc-475f-9b5f-ffbf55ca5b3f");
    assert_eq!(
        s.meta.parent_session.as_deref(),
        Some("e9f146fa-3b20-48d0-9be4-d99ca901cae4")
    );
    assert_eq!(s.meta.extra["sessionIds"].as_array().unwrap().len(), 2);
    let t = s.tree();
    assert_eq!(t.roots().len(), 1);
    assert!(t.branch_points().is_empty(), "the replayed line is no fork");
    assert_eq!(s.active_branch().len(), s.entries.len());
    let dup: Vec<_> = r
        .diagnostics
        .iter()
        .filter(|d| d.code == "duplicate-uuid")
        .map(|d| d.line)
        .collect();
    assert_eq!(dup, [Some(49)]);
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/wei/repo/claude-code"));
    assert_eq!(s.meta.agent_version.as_deref(), Some("1.0.95"));
    assert_eq!(
        s.meta.model.model.as_deref(),
        Some("claude-sonnet-4-20250514")
    );
    assert_eq!(s.meta.extra["gitBranch"], "main");
    assert!(s.meta.created_at.is_some() && s.meta.updated_at.is_some());
}

#[test]
fn malformed_lines_are_reported_with_line_numbers_and_kept() {
    let r = read("ccl-edge_cases.jsonl");
    let mut got: Vec<(u64, &str)> = r
        .diagnostics
        .iter()
        .filter(|d| d.severity >= Severity::Warning || d.code == "duplicate-uuid")
        .map(|d| (d.line.unwrap(), d.code))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            (10, "no-content"),
            (11, "bad-message"),
            (13, "not-an-object"),
            (15, "not-an-object"),
            (16, "not-an-object"),
            (18, "duplicate-uuid"),
        ]
    );
    for d in &r.diagnostics {
        assert!(d.to_string().contains("ccl-edge_cases.jsonl:"), "{d}");
    }
    let unknown = r
        .session
        .entries
        .iter()
        .filter(|e| matches!(e.kind, EntryKind::Unknown { .. }))
        .count();
    assert_eq!(unknown, 5);
    assert_eq!(r.session.meta.id, "edge_cases");
}

#[test]
fn truncated_and_live_files_read_what_is_complete() {
    let r = read("agentsview-truncated.jsonl");
    assert_eq!(r.session.message_count(), 2);
    assert_eq!(
        r.diagnostics
            .iter()
            .map(|d| (d.line, d.code))
            .collect::<Vec<_>>(),
        [(Some(3), "invalid-json")]
    );
    // A file cut in the middle of its last line, as while being written.
    let bytes = std::fs::read(fixture("agentsview-valid_session.jsonl")).unwrap();
    let cut = &bytes[..bytes.len() - 40];
    let r = FORMAT.read_bytes(Path::new("live.jsonl"), cut).unwrap();
    assert_eq!(r.session.message_count(), 3);
    assert_eq!(r.diagnostics[0].code, "torn-tail");
    assert_eq!(r.diagnostics[0].line, Some(4));
    // Nothing at all is still a session.
    let r = FORMAT.read_bytes(Path::new("empty.jsonl"), b"").unwrap();
    assert!(r.session.entries.is_empty());
}

#[test]
fn injected_context_is_classified() {
    let s = read("vct-test_conversation.jsonl").session;
    let kinds: HashSet<&str> = messages(&s)
        .iter()
        .filter_map(|m| m.injected.as_deref())
        .collect();
    for k in [
        "command",
        "local-command-output",
        "local-command-caveat",
        "interrupted",
    ] {
        assert!(kinds.contains(k), "{k}");
    }
    let first = s.first_prompt().unwrap();
    assert!(!first.starts_with('<'), "{first}");
    let s = read("ccv-sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl").session;
    assert!(messages(&s)
        .iter()
        .any(|m| m.injected.as_deref() == Some("meta")));
}

#[test]
fn content_blocks_thinking_images_and_unknown_kinds() {
    let s = read("as-stage0-small.jsonl").session;
    let blocks: Vec<_> = messages(&s).iter().flat_map(|m| m.content.iter()).collect();
    assert!(blocks.iter().any(|b| matches!(
        &b.kind,
        BlockKind::Image {
            media_type: Some(_),
            data: Some(_),
            ..
        }
    )));
    assert!(blocks
        .iter()
        .any(|b| matches!(&b.kind, BlockKind::Other { value } if value["type"] == "fallback")));
    let s = read("as-stage0-large.jsonl").session;
    let thinking = messages(&s)
        .iter()
        .flat_map(|m| m.content.iter())
        .find_map(|b| match &b.kind {
            BlockKind::Thinking {
                text, signature, ..
            } => Some((text.clone(), signature.clone())),
            _ => None,
        })
        .unwrap();
    assert!(thinking.0.starts_with("Plan") && thinking.1.is_none());
    // Every record type of the zoo is kept, none as unknown.
    let s = read("as-stage0-small.jsonl").session;
    assert!(!s.entries.iter().any(|e| e.kind_name() == "unknown"));
    let customs: HashSet<&str> = s
        .entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Custom { custom_type, .. } => Some(custom_type.as_str()),
            _ => None,
        })
        .collect();
    for t in [
        "last-prompt",
        "mode",
        "permission-mode",
        "pr-link",
        "worktree-state",
    ] {
        assert!(customs.contains(t), "{t}");
    }
    let events: HashSet<&str> = s
        .entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Event { event_type, .. } => Some(event_type.as_str()),
            _ => None,
        })
        .collect();
    for t in [
        "queue-operation:enqueue",
        "file-history-snapshot",
        "progress:hook_progress",
        "attachment:queued_command",
        "system:api_error",
    ] {
        assert!(events.contains(t), "{t}");
    }
}

/// Returns copies of `v` with one key removed, set to null, or turned into
/// a number, at the top level and inside `message` and its first block.
fn mutations(v: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    let Some(o) = v.as_object() else {
        return out;
    };
    let paths: Vec<Vec<String>> = o
        .keys()
        .map(|k| vec![k.clone()])
        .chain(
            v.get("message")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|m| m.keys().map(|k| vec!["message".to_string(), k.clone()])),
        )
        .chain(
            v.pointer("/message/content/0")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|b| {
                    b.keys()
                        .map(|k| vec!["message".into(), "content".into(), "0".into(), k.clone()])
                }),
        )
        .collect();
    for path in paths {
        for op in 0..3 {
            let mut m = v.clone();
            let mut cur = &mut m;
            for p in &path[..path.len() - 1] {
                cur = match cur {
                    Value::Array(a) => &mut a[p.parse::<usize>().unwrap()],
                    other => other.get_mut(p.as_str()).unwrap(),
                };
            }
            let obj = cur.as_object_mut().unwrap();
            let key = path.last().unwrap();
            match op {
                0 => {
                    obj.remove(key);
                }
                1 => {
                    obj.insert(key.clone(), Value::Null);
                }
                _ => {
                    obj.insert(key.clone(), Value::from(7));
                }
            }
            out.push(m);
        }
    }
    out
}

#[test]
fn mutated_records_still_round_trip() {
    for file in [
        "as-stage0-small.jsonl",
        "ccl-dag_compact_after_rewind.jsonl",
        "ccv-sample-project/agent-test-hash-123.jsonl",
        "sw-sample_session.jsonl",
    ] {
        let lines = values(&std::fs::read(fixture(file)).unwrap());
        for (i, line) in lines.iter().enumerate() {
            // The mutated line with its neighbours (merges, duplicates and
            // parents reach across lines).
            let from = i.saturating_sub(3);
            let to = (i + 3).min(lines.len());
            for m in mutations(line) {
                let mut window = lines[from..to].to_vec();
                window[i - from] = m;
                let text: String = window.iter().map(|l| format!("{l}\n")).collect();
                let r = FORMAT
                    .read_bytes(Path::new("m.jsonl"), text.as_bytes())
                    .unwrap();
                let got = values(&write(&r.session));
                assert_eq!(got.len(), window.len(), "{file} line {}", i + 1);
                for (g, w) in got.iter().zip(&window) {
                    assert_eq!(g, w, "{file} line {}", i + 1);
                }
            }
        }
    }
}

/// A subagent file written by the real Claude Code 2.1.330 (against the
/// harness's mock model: `crates/harness`), with the record types that
/// version added (`api-request-shape`, `api-request-blob`, `api-request`).
const CLAUDE_2_1_330_SUBAGENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/claude-2.1.330/agent-a6e5e3d7d12151325.jsonl"
);

#[test]
fn claude_2_1_330_subagent_file_ends_on_its_final_answer() {
    let path = Path::new(CLAUDE_2_1_330_SUBAGENT);
    let r = FORMAT.read_path(path).unwrap();
    let unknown: Vec<_> = r
        .diagnostics
        .iter()
        .filter(|d| d.to_string().contains("unknown-type"))
        .collect();
    assert!(unknown.is_empty(), "{unknown:?}");
    let branch = r.session.active_branch();
    let last_message = branch
        .iter()
        .rev()
        .find_map(|e| e.message())
        .expect("a message on the branch");
    assert_eq!(last_message.text_content(), "subagent-final-answer");
    let texts: Vec<String> = branch
        .iter()
        .filter_map(|e| e.message())
        .map(|m| m.text_content())
        .collect();
    assert!(texts.iter().any(|t| t.contains("subtask: count the files")));
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(values(&write(&r.session)), values(&bytes));
}

/// Asserts that `shown` (read to show) has the entries, leaf and metadata
/// of `full` (a full read), the bookkeeping for writing back aside.
fn same_as_full_read(full: &Read, shown: &Read, what: &str) {
    // The same problems reported (a message without content among them).
    assert_eq!(full.diagnostics, shown.diagnostics, "{what}");
    let (full, shown) = (&full.session, &shown.session);
    let strip = |s: &Session| -> Vec<_> {
        s.entries
            .iter()
            .map(|e| {
                let mut e = e.clone();
                // The native lines' bookkeeping (only for writing back).
                e.extra.remove("agentlog:claude");
                (e.id, e.parent_id, e.kind, e.timestamp, e.extra, e.line)
            })
            .collect()
    };
    assert_eq!(strip(full), strip(shown), "{what}");
    assert_eq!(full.leaf_id, shown.leaf_id, "{what}");
    assert_eq!(full.meta, shown.meta, "{what}");
}

/// Read to be shown, every real file gives the same entries as a full read
/// (only the bookkeeping for writing lines back is left out).
#[test]
fn reading_to_show_gives_the_same_entries() {
    let mut merged = 0;
    for p in all_fixtures() {
        let full = FORMAT.read_path(&p).unwrap();
        let shown = FORMAT.read_path_to_show(&p).unwrap();
        merged += full
            .session
            .entries
            .iter()
            .filter(|e| {
                e.extra
                    .get("agentlog:claude")
                    .is_some_and(|b| b.to_string().contains("blocks"))
            })
            .count();
        same_as_full_read(&full, &shown, &p.display().to_string());
    }
    // Responses streamed over several lines, merged into one entry, are
    // among them.
    assert!(merged > 0);
}

/// Read to be shown, records of every shape a block or message can take,
/// the odd ones too (content that is neither text nor blocks, a non-boolean
/// `is_error`, images of each source, blocks missing what they need), give
/// the entries a full read gives, and the model keeps the odd parts.
#[test]
fn reading_to_show_gives_the_same_entries_for_odd_shapes() {
    let blocks = [
        r#"{"type":"text","text":"plain"}"#,
        r#"{"type":"text","text":42}"#,
        r#"{"type":"thinking","thinking":"hmm","signature":"c2ln","extra":1}"#,
        r#"{"type":"thinking","thinking":"hmm","signature":7}"#,
        r#"{"type":"redacted_thinking","data":"xx"}"#,
        r#"{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"},"caller":"x"}"#,
        r#"{"type":"tool_use","id":3,"name":"Bash","input":{}}"#,
        r#"{"type":"tool_use","id":"t2","name":"Bash"}"#,
        r#"{"type":"tool_result","tool_use_id":"t1","content":"ok","is_error":"yes"}"#,
        r#"{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","url":"https://e.x/i.png"}}],"is_error":true}"#,
        r#"{"type":"tool_result","tool_use_id":"t1","content":{"odd":true}}"#,
        r#"{"type":"tool_result","tool_use_id":5,"content":"x"}"#,
        r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}"#,
        r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA==","more":1}}"#,
        r#"{"type":"image","source":"nope"}"#,
        r#"{"type":"fallback","from":{"model":"a"}}"#,
        r#""bare""#,
    ];
    let mut lines = Vec::new();
    let mut parent = "null".to_string();
    let mut n = 0;
    let mut record = |role: &str, content: &str, lines: &mut Vec<String>| {
        n += 1;
        let uuid = format!("00000000-0000-4000-8000-{n:012}");
        lines.push(format!(
            r#"{{"parentUuid":{parent},"isSidechain":false,"type":"{role}","uuid":"{uuid}","timestamp":"2025-01-01T00:00:{:02}Z","sessionId":"s","cwd":"/w","message":{{"role":"{role}","id":"msg_{n}","model":"m","content":{content},"stop_reason":null,"usage":{{"input_tokens":1,"output_tokens":2}},"kept":"x"}}}}"#,
            n % 60
        ));
        parent = format!(r#""{uuid}""#);
    };
    for b in blocks {
        record("assistant", &format!("[{b}]"), &mut lines);
        record("user", &format!("[{b}]"), &mut lines);
    }
    record("user", r#""text content""#, &mut lines);
    record("user", "17", &mut lines);
    record("assistant", "null", &mut lines);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("odd.jsonl");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let full = FORMAT.read_path(&p).unwrap();
    let shown = FORMAT.read_path_to_show(&p).unwrap();
    assert_eq!(full.session.entries.len(), lines.len());
    same_as_full_read(&full, &shown, "odd shapes");
    // And the full read still writes every line back as it was.
    let values = |b: &[u8]| -> Vec<Value> {
        String::from_utf8_lossy(b)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    assert_eq!(
        values(&write(&full.session)),
        values(lines.join("\n").as_bytes())
    );
    // What the model holds of the odd ones, read either way.
    for read in [&full, &shown] {
        let messages: Vec<_> = read
            .session
            .entries
            .iter()
            .filter_map(|e| e.message())
            .collect();
        // Content that is a number stays in the message's extra.
        let odd = messages
            .iter()
            .find(|m| m.id.as_deref() == Some("msg_36"))
            .unwrap();
        assert!(odd.content.is_empty());
        assert_eq!(odd.extra.get("content"), Some(&serde_json::json!(17)));
        assert_eq!(odd.extra.get("kept"), Some(&serde_json::json!("x")));
        let block = |i: usize| &messages[i].content[0];
        // A text block whose text is not a string is kept whole.
        assert!(matches!(&block(2).kind, BlockKind::Other { value } if value["text"] == 42));
        // A non-boolean is_error is kept in the block's extra.
        let b = block(16);
        assert!(
            matches!(
                &b.kind,
                BlockKind::ToolResult {
                    is_error: false,
                    ..
                }
            ),
            "{b:?}"
        );
        assert_eq!(b.extra.get("is_error"), Some(&serde_json::json!("yes")));
        // An image with a source of three keys is kept as an image, one
        // with more kept whole.
        assert!(matches!(&block(24).kind, BlockKind::Image { data: Some(d), .. } if d == "AA=="));
        assert!(matches!(&block(26).kind, BlockKind::Other { .. }));
        // A block's own extra keys stay with it.
        assert_eq!(block(4).extra.get("extra"), Some(&serde_json::json!(1)));
    }
}

/// A file of 8 MB or more is read to be shown as it is parsed, never whole
/// in memory: the same session and diagnostics as reading its bytes, with a
/// byte-order mark, CRLF and blank lines, a line that is not JSON and a
/// last line cut short, where the lines fall across the reader's buffers.
#[test]
fn a_large_file_read_to_show_as_it_is_parsed_reads_as_its_bytes_do() {
    let mut body = Vec::new();
    for p in all_fixtures() {
        body.extend(std::fs::read(&p).unwrap());
        if body.last() != Some(&b'\n') {
            body.push(b'\n');
        }
    }
    assert!(!body.is_empty());
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    let mut round = 0;
    while bytes.len() < agentlog_formats::jsonl::PIPELINE_MIN + (1 << 20) {
        bytes.extend_from_slice(&body);
        match round % 3 {
            0 => bytes.extend_from_slice(b"\r\n   \n"),
            1 => bytes.extend_from_slice(b"this line is not JSON\n"),
            _ => bytes.extend_from_slice(&body[..body.len() / 3].replace_newlines_crlf()),
        }
        round += 1;
    }
    bytes.extend_from_slice(br#"{"type":"user","message":{"role":"user","content":"cut sh"#);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("large.jsonl");
    std::fs::write(&p, &bytes).unwrap();
    let streamed = FORMAT.read_path_to_show(&p).unwrap();
    let whole = FORMAT.read_bytes_to_show(&p, &bytes).unwrap();
    assert!(streamed.session.entries.len() > 1000);
    assert_eq!(
        serde_json::to_value(&streamed.session).unwrap(),
        serde_json::to_value(&whole.session).unwrap()
    );
    let summarized = agentlog_formats::diag::summarize(whole.diagnostics, 100);
    let text =
        |d: &[agentlog_formats::Diagnostic]| d.iter().map(|d| d.to_string()).collect::<Vec<_>>();
    assert_eq!(text(&streamed.diagnostics), text(&summarized));
    assert!(
        text(&summarized)
            .iter()
            .any(|d| d.contains("not JSON") || d.contains("torn")),
        "{:?}",
        text(&summarized)
    );
}

/// Drops an entry's native fields and those of its message and blocks
/// (where Claude Code's records keep their `sessionId` and the second copy
/// of each tool output).
fn drop_native(e: &mut agentlog_model::Entry) {
    e.extra.clear();
    if let agentlog_model::EntryKind::Message(m) = &mut e.kind {
        m.extra.clear();
        for b in &mut m.content {
            b.extra.clear();
        }
    }
}

/// The session `read` gives with every entry trimmed after the read.
fn trimmed_after(mut read: agentlog_formats::Read) -> Value {
    read.session.entries.iter_mut().for_each(drop_native);
    serde_json::to_value(&read.session).unwrap()
}

#[test]
fn a_session_trimmed_as_it_is_read_is_the_session_trimmed_after_it() {
    // Every sample file (read whole), then all of them in one file past
    // the size read as it is parsed, ending in a leaf whose record has no
    // session id under one whose record has a new one, and a sidechain
    // after it with another (the last seen): the session is named after
    // the leaf's, which trimming dropped.
    let dir = tempfile::tempdir().unwrap();
    let large = dir.path().join("large.jsonl");
    let mut body = Vec::new();
    for p in all_fixtures() {
        body.extend(std::fs::read(&p).unwrap());
        if body.last() != Some(&b'\n') {
            body.push(b'\n');
        }
    }
    let mut bytes = Vec::new();
    while bytes.len() < agentlog_formats::jsonl::PIPELINE_MIN + (1 << 20) {
        bytes.extend_from_slice(&body);
    }
    for line in [
        r#"{"type":"user","uuid":"leaf-parent","sessionId":"the-leaf-session","message":{"role":"user","content":"almost"}}"#,
        r#"{"type":"user","uuid":"leaf","parentUuid":"leaf-parent","message":{"role":"user","content":"bye"}}"#,
        r#"{"type":"assistant","uuid":"aside","parentUuid":"leaf","isSidechain":true,"sessionId":"a-later-session","message":{"role":"assistant","content":[{"type":"text","text":"aside"}]}}"#,
    ] {
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
    }
    std::fs::write(&large, &bytes).unwrap();
    let mut checked = 0;
    for p in all_fixtures().iter().chain([&large]) {
        let after = trimmed_after(FORMAT.read_path_to_show(p).unwrap());
        let read = FORMAT.read_path_to_show_with(p, &drop_native).unwrap();
        assert_eq!(
            serde_json::to_value(&read.session).unwrap(),
            after,
            "{}",
            p.display()
        );
        checked += 1;
    }
    assert!(checked > 21);
    let read = FORMAT.read_path_to_show_with(&large, &drop_native).unwrap();
    assert_eq!(read.session.meta.id, "the-leaf-session");
}

trait Crlf {
    fn replace_newlines_crlf(&self) -> Vec<u8>;
}

impl Crlf for [u8] {
    fn replace_newlines_crlf(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len() + self.len() / 50);
        for &b in self {
            if b == b'\n' {
                out.push(b'\r');
            }
            out.push(b);
        }
        if out.last() != Some(&b'\n') {
            out.extend_from_slice(b"\r\n");
        }
        out
    }
}
