//! Writers fed with sessions of other agents, from files the real CLIs wrote
//! (the conformance harness in `crates/harness` keeps them as fixtures):
//! what each target agent needs to open them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_formats::registry;
use agentlog_model::Session;
use serde_json::Value;
use std::path::Path;

const GEMINI_0_61: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/gemini-0.61.0/session-resumed-set-parts.jsonl"
);
const CLAUDE_2_1_330: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/claude-2.1.330/agent-a6e5e3d7d12151325.jsonl"
);

fn read(format: &str, path: &str) -> Session {
    registry::by_name(format)
        .unwrap()
        .read_path(Path::new(path))
        .unwrap()
        .session
}

fn write(format: &str, s: &Session) -> (Vec<Value>, agentlog_formats::Fidelity) {
    let mut out = Vec::new();
    let f = registry::by_name(format)
        .unwrap()
        .write(s, &mut out)
        .unwrap();
    let lines = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (lines, f)
}

#[test]
fn pi_messages_written_from_other_agents_have_array_content() {
    // pi crashes on an assistant message whose content is a string or is
    // missing ("content.flatMap is not a function").
    let mut s = read("gemini", GEMINI_0_61);
    s.meta.format = Some("gemini".into());
    let (lines, fidelity) = write("pi", &s);
    let mut assistants = 0;
    for l in &lines {
        if l["type"] == "message" {
            let m = &l["message"];
            if m["role"] == "assistant" || m["role"] == "toolResult" {
                assistants += 1;
                assert!(m["content"].is_array(), "{m}");
            }
        }
    }
    assert!(assistants >= 4);
    assert!(
        fidelity
            .losses
            .iter()
            .any(|l| l.what.contains("plain text")),
        "pi sends another model's thinking as plain text; the report must say so: {fidelity:?}"
    );
}

#[test]
fn codex_rollouts_written_from_other_agents_name_no_unconfigured_provider() {
    // Codex refuses to resume a rollout whose model provider its
    // config.toml does not define.
    let mut s = read("claude", CLAUDE_2_1_330);
    s.meta.model.provider = Some("anthropic".into());
    let (lines, fidelity) = write("codex", &s);
    let meta = lines
        .iter()
        .find(|l| l["type"] == "session_meta")
        .expect("session_meta");
    assert!(meta["payload"].get("model_provider").is_none(), "{meta}");
    assert!(fidelity
        .losses
        .iter()
        .any(|l| l.what.contains("model provider")));
}
