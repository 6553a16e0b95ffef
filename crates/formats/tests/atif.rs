//! ATIF: Harbor's own trajectories read and written back exactly, a
//! session's subagents embedded and referred to from the call that started
//! them, Harbor's jobs layout discovered, and the reader and writer fuzzed
//! on trajectories changed at random places. (Validation of what the
//! writer writes by Harbor itself is in `crates/cli/tests/atif.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_formats::discover::DiscoverEnv;
use agentlog_formats::{atif, keep, registry, Format};
use agentlog_model::{Agent, Block, Entry, EntryKind, Message, Role, Session, SessionMeta, Usage};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/atif/harbor-0.25.0/jobs")
}

fn trajectories() -> Vec<PathBuf> {
    let env = DiscoverEnv {
        roots: [("atif".to_string(), vec![samples()])].into(),
        ..DiscoverEnv::with_home("/nonexistent")
    };
    atif::FORMAT.discover(&env)
}

#[test]
fn harbors_trajectories_are_written_back_as_the_same_json_and_bytes() {
    let found = trajectories();
    assert_eq!(found.len(), 4, "{found:?}");
    for p in found {
        let original = std::fs::read(&p).unwrap();
        let read = atif::FORMAT.read_path(&p).unwrap();
        assert!(
            read.diagnostics.is_empty(),
            "{}: {:?}",
            p.display(),
            read.diagnostics
        );
        let mut out = Vec::new();
        let fidelity = atif::FORMAT.write(&read.session, &mut out).unwrap();
        assert!(fidelity.is_lossless(), "{}: {fidelity}", p.display());
        let a: Value = serde_json::from_slice(&original).unwrap();
        let b: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(a, b, "{}", p.display());
        assert_eq!(keep::keep_unchanged(&out, &original), original);
        // Read again, the same session.
        let again = atif::FORMAT.read_bytes(&p, &out).unwrap().session;
        assert_eq!(again, read.session, "{}", p.display());
    }
}

#[test]
fn tokens_read_from_a_trajectory_are_its_metrics() {
    for p in trajectories() {
        let doc: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let s = atif::FORMAT.read_path(&p).unwrap().session;
        let t = s.total_usage();
        let sum = |k: &str| -> u64 {
            doc["steps"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|st| st["metrics"][k].as_u64())
                .sum()
        };
        assert_eq!(
            t.input + t.cache_read + t.cache_write,
            sum("prompt_tokens"),
            "{}",
            p.display()
        );
        assert_eq!(t.output, sum("completion_tokens"), "{}", p.display());
        assert_eq!(t.cache_read, sum("cached_tokens"), "{}", p.display());
        assert!(t.sum() > 0, "{}", p.display());
    }
}

#[test]
fn harbors_jobs_layout_is_discovered() {
    let dir = tempfile::tempdir().unwrap();
    let one = std::fs::read(&trajectories()[0]).unwrap();
    let put = |rel: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, &one).unwrap();
        p
    };
    let want = vec![
        put("jobs/j1/t1__abc/agent/trajectory.json"),
        put("jobs/j1/t1__abc/agent/trajectory.cont-1.json"),
        put("jobs/j2/t2__def/steps/build/agent/trajectory.json"),
        put("jobs/j2/t2__def/user-agent/trajectory.json"),
    ];
    put("jobs/j1/t1__abc/verifier/reward.json");
    put("jobs/j1/t1__abc/result.json");
    let env = DiscoverEnv {
        roots: [("atif".to_string(), vec![dir.path().join("jobs")])].into(),
        ..DiscoverEnv::with_home(dir.path())
    };
    let mut found = atif::FORMAT.discover(&env);
    found.sort();
    let mut want = want;
    want.sort();
    assert_eq!(found, want);
    // Without a root, nothing is looked for (Harbor has no default place).
    assert!(atif::FORMAT
        .discover(&DiscoverEnv::with_home(dir.path()))
        .is_empty());
    for p in &found {
        assert_eq!(registry::detect(p).unwrap().name(), "atif");
    }
}

fn msg(role: Role, blocks: Vec<Block>) -> EntryKind {
    let mut m = Message::new(role);
    m.content = blocks;
    EntryKind::Message(m)
}

/// A Claude Code-like session whose `Task` call started subagent `a1`.
fn parent_and_subagent() -> (Session, Session) {
    let mut s = Session::new(SessionMeta::new("parent", Agent::Claude));
    s.meta.agent_version = Some("2.1.0".into());
    s.push(Entry::new(
        "u1",
        None,
        msg(Role::User, vec![Block::text("count the files")]),
    ));
    let mut call = Message::new(Role::Assistant);
    call.content = vec![Block::tool_call(
        Some("toolu_1".into()),
        "Task",
        json!({"prompt": "count"}),
    )];
    call.usage = Some(Usage {
        input: 10,
        output: 3,
        cache_read: 100,
        cache_write: 7,
        ..Usage::default()
    });
    s.push(Entry::new(
        "a1",
        Some("u1".into()),
        EntryKind::Message(call),
    ));
    let mut result = Entry::new(
        "r1",
        Some("a1".into()),
        msg(
            Role::User,
            vec![Block::tool_result(
                Some("toolu_1".into()),
                vec![Block::text("3 files")],
                false,
            )],
        ),
    );
    result
        .extra
        .insert("toolUseResult".into(), json!({"agentId": "a1b2"}));
    s.push(result);
    let mut sub = Session::new(SessionMeta::new("agent-a1b2", Agent::Claude));
    sub.meta.extra.insert("agentId".into(), json!("a1b2"));
    sub.meta.parent_session = Some("parent".into());
    sub.push(Entry::new(
        "s1",
        None,
        msg(Role::User, vec![Block::text("count")]),
    ));
    let mut ans = Message::text(Role::Assistant, "3");
    ans.usage = Some(Usage {
        input: 5,
        output: 1,
        cost_usd: Some(0.25),
        ..Usage::default()
    });
    sub.push(Entry::new("s2", Some("s1".into()), EntryKind::Message(ans)));
    (s, sub)
}

#[test]
fn subagents_are_embedded_and_referred_to_from_the_call_that_started_them() {
    let (parent, sub) = parent_and_subagent();
    let mut out = Vec::new();
    atif::write_with_subagents(&parent, std::slice::from_ref(&sub), &mut out).unwrap();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    let embedded = doc["subagent_trajectories"].as_array().unwrap();
    assert_eq!(embedded.len(), 1);
    let id = embedded[0]["trajectory_id"].as_str().unwrap();
    assert_eq!(embedded[0]["steps"][1]["message"], "3");
    assert_eq!(embedded[0]["final_metrics"]["total_prompt_tokens"], 5);
    let step = &doc["steps"][1];
    assert_eq!(step["tool_calls"][0]["tool_call_id"], "toolu_1");
    let result = &step["observation"]["results"][0];
    assert_eq!(result["source_call_id"], "toolu_1");
    assert_eq!(result["content"], "3 files");
    assert_eq!(result["subagent_trajectory_ref"][0]["trajectory_id"], id);
    // Prompt tokens include the cached ones and those written to the cache.
    assert_eq!(step["metrics"]["prompt_tokens"], 117);
    assert_eq!(step["metrics"]["cached_tokens"], 100);
    assert_eq!(step["metrics"]["extra"]["cache_creation_input_tokens"], 7);
    assert_eq!(doc["final_metrics"]["total_prompt_tokens"], 117);
    assert_eq!(doc["final_metrics"]["total_cost_usd"], 0.25);
    assert_eq!(doc["agent"]["name"], "claude-code");
}

#[test]
fn what_a_trajectory_cannot_hold_is_reported() {
    let (mut s, _) = parent_and_subagent();
    // A branch left behind, a label and an inline image.
    s.entries.push(Entry::new(
        "old",
        Some("u1".into()),
        msg(Role::Assistant, vec![Block::text("abandoned")]),
    ));
    s.entries.push(Entry::new(
        "l1",
        Some("r1".into()),
        EntryKind::Label {
            target_id: "u1".into(),
            label: Some("start".into()),
        },
    ));
    let mut img = Message::new(Role::User);
    img.content = vec![Block {
        kind: agentlog_model::BlockKind::Image {
            media_type: Some("image/png".into()),
            data: Some("iVBORw0KGgo=".into()),
            url: None,
        },
        extra: Default::default(),
    }];
    s.push(Entry::new("i1", Some("l1".into()), EntryKind::Message(img)));
    let mut out = Vec::new();
    let f = atif::FORMAT.write(&s, &mut out).unwrap();
    let text = f.to_string();
    for want in [
        "messages on branches other than the one the session is on",
        "labels set on entries",
        "images held inside the session",
    ] {
        assert!(text.contains(want), "{text}");
    }
    assert!(!text.contains("entry kind"), "{text}");
}

/// A random JSON value, small.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z_ ]{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "user",
            "agent",
            "system",
            "text",
            "image",
            "ATIF-v1.8"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "step_id",
                    "source",
                    "message",
                    "tool_calls",
                    "observation",
                    "results",
                    "metrics",
                    "content",
                    "source_call_id",
                    "type",
                    "text",
                    "extra",
                    "x",
                ])
                .prop_map(str::to_string),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Replaces the value at the `at`th place (in a walk of `v`) by `new`.
fn replace(v: &mut Value, at: &mut usize, new: &Value) -> bool {
    if *at == 0 {
        *v = new.clone();
        return true;
    }
    *at -= 1;
    match v {
        Value::Array(a) => a.iter_mut().any(|x| replace(x, at, new)),
        Value::Object(o) => o.values_mut().any(|x| replace(x, at, new)),
        _ => false,
    }
}

#[test]
fn trajectories_changed_at_random_places_never_panic_the_reader_or_writer() {
    let docs: Vec<Value> = trajectories()
        .iter()
        .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
        .collect();
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(
            &(0..docs.len(), any::<usize>(), json_value()),
            |(d, at, new)| {
                let mut doc = docs[d].clone();
                let mut at = at % 400;
                replace(&mut doc, &mut at, &new);
                let bytes = serde_json::to_vec(&doc).unwrap();
                if let Ok(read) = atif::FORMAT.read_bytes(Path::new("trajectory.json"), &bytes) {
                    let mut out = Vec::new();
                    atif::FORMAT.write(&read.session, &mut out).unwrap();
                    // Whatever was read is written as JSON and read again.
                    let back: Value = serde_json::from_slice(&out).unwrap();
                    prop_assert!(back.get("steps").is_some());
                }
                Ok(())
            },
        )
        .unwrap();
}
