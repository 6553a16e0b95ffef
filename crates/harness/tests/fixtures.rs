//! Sessions the real CLIs wrote in the conformance harness, kept in
//! `crates/harness/fixtures` (see PROVENANCE.md there), read by agentlog's
//! readers without the CLIs: every prompt, thinking block, tool call, tool
//! result and answer in order, the token usage, and the file written back
//! in its own format as the same JSON values, and (with the unchanged
//! records' own text) as the same bytes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use agentlog_formats::registry;
use common::{acpx_history, assert_compacted, assert_holds, json_values, session_items, Expect};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

fn check(agent: &'static str, file: &str, expect: Expect) {
    check_with(agent, file, |s| {
        assert_holds(&session_items(s), &expect, file);
    });
}

fn check_with(agent: &'static str, file: &str, holds: impl Fn(&agentlog_model::Session)) {
    let path = fixture(file);
    let format = registry::detect(&path).unwrap();
    assert_eq!(format.name(), agent, "{file} detected as {}", format.name());
    let read = format.read_path(&path).unwrap();
    holds(&read.session);
    let usage = read.session.total_usage();
    assert!(usage.input > 0 && usage.output > 0, "{file}: {usage:?}");
    let mut out = Vec::new();
    format.write(&read.session, &mut out).unwrap();
    let original = std::fs::read(&path).unwrap();
    assert_eq!(
        json_values(&out),
        json_values(&original),
        "{file}: written back in its own format"
    );
    assert!(
        agentlog_formats::keep::keep_unchanged(&out, &original) == original,
        "{file}: written back with the unchanged records' own text, not the same file"
    );
}

fn history(agent: &'static str) -> Expect {
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    vec![
        ("user", leak(format!("alpha {agent}"))),
        ("thinking", leak(format!("alpha-thinking-{agent}"))),
        ("tool_call", leak(format!("alpha-tool-output-{agent}"))),
        ("tool_result", leak(format!("alpha-tool-output-{agent}"))),
        ("assistant", leak(format!("alpha-answer-{agent}"))),
        ("user", leak(format!("beta {agent}"))),
        ("tool_call", leak(format!("beta-content-{agent}"))),
        ("tool_result", ""),
        ("assistant", leak(format!("beta-answer-{agent}"))),
    ]
}

#[test]
fn claude_code_2_1_330_session() {
    check("claude", "claude-2.1.330.jsonl", history("claude"));
}

#[test]
fn codex_0_169_0_session() {
    check("codex", "codex-0.169.0.jsonl", history("codex"));
}

#[test]
fn gemini_cli_0_61_0_session() {
    check("gemini", "gemini-0.61.0.jsonl", history("gemini"));
}

#[test]
fn pi_0_73_1_session() {
    check("pi", "pi-0.73.1.jsonl", history("pi"));
}

#[test]
fn claude_code_2_1_330_compacted_by_its_compact_command() {
    check_with("claude", "compacted-claude-2.1.330.jsonl", |s| {
        assert_compacted(s, "claude")
    });
}

#[test]
fn codex_0_169_0_compacted_on_its_own() {
    check_with("codex", "compacted-codex-0.169.0.jsonl", |s| {
        assert_compacted(s, "codex")
    });
}

#[test]
fn gemini_cli_0_61_0_compressed_on_its_own() {
    check_with("gemini", "compacted-gemini-0.61.0.jsonl", |s| {
        assert_compacted(s, "gemini")
    });
}

#[test]
fn pi_0_73_1_compacted_on_its_own() {
    check_with("pi", "compacted-pi-0.73.1.jsonl", |s| {
        assert_compacted(s, "pi")
    });
}

#[test]
fn acpx_0_19_1_record_and_its_event_log() {
    let file = "acpx-0.19.1/7e831bff-d809-4e39-a7b9-0dbed770325f.json";
    check("acpx", file, acpx_history());
    // The record holds no usage; its event log's turn results do, one per
    // prompt, on the prompt's last answer.
    let path = fixture(file);
    let read = registry::detect(&path).unwrap().read_path(&path).unwrap();
    let answers: Vec<u64> = read
        .session
        .entries
        .iter()
        .filter_map(|e| e.message())
        .filter_map(|m| m.usage.as_ref().map(|u| u.input))
        .collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
}

#[test]
fn codex_0_169_0_subagent_rollout() {
    check_with("codex", "subagent-codex-0.169.0.jsonl", |s| {
        assert_holds(
            &session_items(s),
            &vec![
                ("user", "subtask codex"),
                ("tool_call", "subagent-tool-output"),
                ("tool_result", "subagent-tool-output"),
                ("assistant", "subagent-final-answer"),
            ],
            "Codex subagent",
        );
        assert!(s.meta.parent_session.is_some(), "no parent thread");
    });
}

#[test]
fn gemini_cli_0_61_0_subagent_chat() {
    check(
        "gemini",
        "subagent-gemini-0.61.0.jsonl",
        vec![
            ("user", "subtask gemini"),
            ("tool_call", "subagent-tool-output"),
            ("tool_result", "subagent-tool-output"),
            ("tool_call", "subagent-final-answer"),
        ],
    );
}
