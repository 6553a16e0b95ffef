//! Conformance with the real pi (npm `@mariozechner/pi-coding-agent`
//! 0.73.1): pi opens files agentlog wrote and builds the same context at
//! every entry, and agentlog does the same for files pi wrote. The package
//! is installed once into `target/peers/pi` (npm, `--ignore-scripts`); when
//! node or npm is not available the tests fail in CI (`CI` set) and
//! elsewhere print why and pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_store::pi::{CompactionParams, SessionContext, SessionInitParams, SessionManager};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const PI_VERSION: &str = "0.73.1";
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Returns the path of pi's session-manager module, installing pi first
/// when needed (once per test run); `None` (with a printed reason) when
/// that is not possible.
fn peer() -> Option<PathBuf> {
    static PEER: OnceLock<Option<PathBuf>> = OnceLock::new();
    let p = PEER.get_or_init(install_peer).clone();
    if p.is_none() {
        // In CI the peer is part of the test: missing it is a failure.
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        assert!(
            !ci,
            "CI is set and the pi peer (npm @mariozechner/pi-coding-agent@{PI_VERSION}) could not be installed"
        );
        println!("skipped: the pi peer (npm @mariozechner/pi-coding-agent@{PI_VERSION}) is not available");
    }
    p
}

fn install_peer() -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(repo().join("scripts/install-pi-peer.sh"))
        .arg(PI_VERSION)
        .stderr(std::process::Stdio::inherit())
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !path.trim().is_empty()).then(|| PathBuf::from(path.trim()))
}

/// Runs the peer script with pi's agent directory inside `sandbox`.
fn node(module: &Path, sandbox: &Path, args: &[&str]) -> String {
    let out = Command::new("node")
        .arg(repo().join("scripts/pi-peer.mjs"))
        .arg(module)
        .args(args)
        .env("PI_CODING_AGENT_DIR", sandbox.join("agent"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pi peer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The part of a context pi's `buildSessionContext` returns.
fn pick(ctx: &SessionContext) -> Value {
    let mut v = serde_json::to_value(ctx).unwrap();
    let m = v.as_object_mut().unwrap();
    m.remove("models");
    m.remove("injectedTtsrRules");
    v
}

/// Checks that agentlog and pi agree on the leaf, the labels and the
/// context at every entry of `file`.
fn assert_same_contexts(module: &Path, sandbox: &Path, file: &Path) -> usize {
    let pi: Value = serde_json::from_str(&node(
        module,
        sandbox,
        &["contexts", file.to_str().unwrap()],
    ))
    .unwrap();
    let ours = SessionManager::open(file, None).unwrap();
    assert_eq!(pi["count"], ours.entry_count());
    assert_eq!(pi["leafId"].as_str(), ours.get_leaf_id());
    assert_eq!(
        pi["context"],
        pick(&ours.build_session_context()),
        "context at the leaf"
    );
    let at = pi["at"].as_object().unwrap();
    assert_eq!(at.len(), ours.entry_count());
    for (id, want) in at {
        let got = ours.build_session_context_at(Some(id)).unwrap();
        assert_eq!(&pick(&got), want, "context at {id}");
    }
    for e in ours.get_entries() {
        assert_eq!(
            pi["labels"].get(&e.id).and_then(Value::as_str),
            ours.get_label(&e.id),
            "label of {}",
            e.id
        );
    }
    at.len()
}

fn usage() -> Value {
    json!({"input":3,"output":4,"cacheRead":1,"cacheWrite":0,"totalTokens":8,
           "cost":{"input":0.001,"output":0.002,"cacheRead":0,"cacheWrite":0,"total":0.003}})
}

fn assistant(text: &str, t: i64) -> Value {
    json!({"role":"assistant","content":[{"type":"text","text":text}],"api":"anthropic-messages",
           "provider":"anthropic","model":"claude-sonnet-4-5","usage":usage(),"stopReason":"stop","timestamp":t})
}

#[test]
fn pi_reads_files_agentlog_wrote() {
    let Some(module) = peer() else { return };
    let sandbox = tempfile::tempdir().unwrap();
    let mut sm = SessionManager::create("/work/ours", Some(sandbox.path()));
    sm.append_model_change("anthropic/claude-sonnet-4-5", Some("default"))
        .unwrap();
    sm.append_thinking_level_change("medium").unwrap();
    let u1 = sm
        .append_message_value(json!({"role":"user","content":"Where is the bug?","timestamp":1}))
        .unwrap();
    let a1 = sm
        .append_message_value(json!({"role":"assistant","content":[
            {"type":"thinking","thinking":"look","thinkingSignature":"s"},
            {"type":"toolCall","id":"t1","name":"grep","arguments":{"pattern":"panic"}}],
            "api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",
            "usage":usage(),"stopReason":"toolUse","timestamp":2}))
        .unwrap();
    sm.append_message_value(
        json!({"role":"toolResult","toolCallId":"t1","toolName":"grep",
        "content":[{"type":"text","text":"src/main.rs:3"}],"isError":false,"timestamp":3}),
    )
    .unwrap();
    let a2 = sm
        .append_message_value(assistant("In main.rs line 3.", 4))
        .unwrap();
    sm.append_label_change(&u1, Some("question")).unwrap();
    sm.append_label_change(&a2, Some("answer")).unwrap();
    sm.append_label_change(&a2, None).unwrap();
    sm.append_custom_entry("ours.state", Some(json!({"k":[1,2]})))
        .unwrap();
    sm.append_custom_message_entry(
        "ours.note",
        json!("Injected note"),
        true,
        Some(json!({"d":1})),
    )
    .unwrap();
    sm.append_message_value(
        json!({"role":"bashExecution","command":"cargo test","output":"ok","exitCode":0,
        "cancelled":false,"truncated":false,"timestamp":5}),
    )
    .unwrap();
    sm.append_ttsr_injection(&["no-unwrap".into()]).unwrap();
    sm.append_compaction(CompactionParams {
        summary: "Found the bug in main.rs.".into(),
        short_summary: Some("bug".into()),
        first_kept_entry_id: a2.clone(),
        tokens_before: 5000,
        details: Some(json!({"readFiles":["src/main.rs"]})),
        from_extension: Some(false),
        preserve_data: None,
    })
    .unwrap();
    sm.append_message_value(
        json!({"role":"user","content":[{"type":"text","text":"Fix it"}],"timestamp":6}),
    )
    .unwrap();
    sm.append_message_value(assistant("Fixed.", 7)).unwrap();
    sm.append_session_info("our session").unwrap();
    sm.append_session_init(SessionInitParams {
        system_prompt: "You are a subagent.".into(),
        task: "t".into(),
        tools: vec!["bash".into()],
        output_schema: None,
    })
    .unwrap();
    sm.branch_with_summary(
        Some(&a1),
        "Tried another grep.",
        Some(json!({"n":2})),
        Some(true),
    )
    .unwrap();
    sm.append_model_change("openai/gpt-5", None).unwrap();
    sm.append_message_value(json!({"role":"user","content":"Other approach?","timestamp":8}))
        .unwrap();
    sm.branch(&u1).unwrap();
    sm.append_message_value(assistant("A second answer.", 9))
        .unwrap();
    sm.reset_leaf();
    sm.append_message_value(json!({"role":"user","content":"New root","timestamp":10}))
        .unwrap();
    sm.branch_with_summary(None, "From the root.", None, None)
        .unwrap();
    sm.append_message_value(assistant("After the root summary.", 11))
        .unwrap();
    let file = sm.get_session_file().unwrap().to_path_buf();
    drop(sm);
    let n = assert_same_contexts(&module, sandbox.path(), &file);
    assert!(n >= 25, "{n}");
}

#[test]
fn agentlog_reads_files_pi_wrote() {
    let Some(module) = peer() else { return };
    let sandbox = tempfile::tempdir().unwrap();
    let file = node(
        &module,
        sandbox.path(),
        &["create", sandbox.path().to_str().unwrap()],
    );
    let file = PathBuf::from(file.trim());
    assert!(file.exists());
    let n = assert_same_contexts(&module, sandbox.path(), &file);
    assert!(n >= 20, "{n}");
    // And the file reads losslessly through the format too.
    let read = agentlog_formats::registry::by_name("pi")
        .unwrap()
        .read_path(&file)
        .unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
}

#[test]
fn both_migrate_old_files_to_the_same_context() {
    let Some(module) = peer() else { return };
    for rel in [
        "seeds/pi-mono/before-compaction.jsonl",
        "seeds/pi-mono/large-session.jsonl",
        "native/secondary/pi/agentsview-session.jsonl",
    ] {
        let sandbox = tempfile::tempdir().unwrap();
        let src = Path::new(FIXTURES).join(rel);
        let theirs = sandbox.path().join("theirs.jsonl");
        let ours = sandbox.path().join("ours.jsonl");
        std::fs::copy(&src, &theirs).unwrap();
        std::fs::copy(&src, &ours).unwrap();
        let pi: Value = serde_json::from_str(&node(
            &module,
            sandbox.path(),
            &["contexts", theirs.to_str().unwrap(), "leaf"],
        ))
        .unwrap();
        let sm = SessionManager::open(&ours, None).unwrap();
        assert_eq!(pi["count"], sm.entry_count(), "{rel}");
        assert_eq!(pi["context"], pick(&sm.build_session_context()), "{rel}");
    }
}
