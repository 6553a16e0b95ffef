#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! `agentlog dataset` and `export --to openai-chat|sharegpt`, checked by
//! the library that consumes them: Hugging Face `datasets` loads the
//! output (`load_dataset("json", data_files=…)`) with the expected rows,
//! features and splits; no planted secret survives, in a message or a
//! tool's output; no project is on both sides of a split; two runs give
//! the same bytes; the filters, the subagent flag both ways, a compaction
//! and a retried branch, and a resumed copy are each counted once.
//!
//! `datasets` is installed by `scripts/install-hf-datasets.sh` into
//! target/peers. With `CI` set a missing `datasets` fails the test;
//! elsewhere the test says it skipped and why.

mod common;

use agentlog_bench::secrets::{leaks, planted};
use common::TestEnv;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const SEED: u64 = 41;

/// The python of the venv holding `datasets`, installing it when needed.
fn hf_python() -> Option<PathBuf> {
    common::installed("install-hf-datasets.sh", &[], "Hugging Face datasets")
}

const LOAD: &str = r#"
import json, sys
from datasets import load_dataset
ds = load_dataset("json", data_files=json.loads(sys.argv[1]))
out = {}
for name in ds:
    d = ds[name]
    out[name] = {
        "rows": d.num_rows,
        "columns": d.column_names,
        "features": str(d.features),
        "rows_json": [json.dumps(r, sort_keys=True, default=str) for r in d],
    }
print(json.dumps(out))
"#;

/// Loads the split files of `dir` with `datasets`, as a user does.
fn hf_load(py: &Path, dir: &Path, splits: &[&str]) -> Value {
    let files: serde_json::Map<String, Value> = splits
        .iter()
        .map(|s| {
            (
                s.to_string(),
                Value::String(dir.join(format!("{s}.jsonl")).display().to_string()),
            )
        })
        .collect();
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(py)
        .args(["-c", LOAD, &Value::Object(files).to_string()])
        .env("HF_HOME", cache.path())
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_DATASETS_OFFLINE", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "datasets could not load {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn line(v: Value) -> String {
    v.to_string() + "\n"
}

fn claude_rec(uuid: &str, parent: Option<&str>, cwd: &str, sid: &str, rest: Value) -> Value {
    let mut r = json!({
        "parentUuid": parent,
        "isSidechain": false,
        "userType": "external",
        "cwd": cwd,
        "sessionId": sid,
        "version": "2.1.0",
        "uuid": uuid,
        "timestamp": "2026-03-01T10:00:00.000Z",
    });
    for (k, v) in rest.as_object().unwrap() {
        r[k] = v.clone();
    }
    r
}

fn user(text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": text}})
}

fn assistant(id: &str, content: Value) -> Value {
    json!({"type": "assistant", "requestId": format!("req_{id}"), "message": {
        "id": format!("msg_{id}"), "role": "assistant", "model": "claude-sonnet-4-5",
        "content": content,
        "usage": {"input_tokens": 10, "output_tokens": 5}}})
}

fn result(call: &str, text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call, "content": text}]}})
}

const MAIN_ID: &str = "11111111-2222-4333-8444-555555555555";

/// A Claude Code session in /home/u/alpha with a retried answer, a tool
/// whose output holds a GitHub token, a subagent (its own file) and a
/// compaction; an AWS key in the first prompt.
fn write_main_session(env: &TestEnv, aws: &str, github: &str) -> PathBuf {
    let cwd = "/home/u/alpha";
    let rec = |uuid: &str, parent: Option<&str>, rest: Value| {
        line(claude_rec(uuid, parent, cwd, MAIN_ID, rest))
    };
    let mut text = String::new();
    text += &rec(
        "u1",
        None,
        user(&format!("Deploy it; the key is {aws} for now")),
    );
    text += &rec(
        "a1",
        Some("u1"),
        assistant(
            "1",
            json!([{"type": "text", "text": "ABANDONED-FIRST-TRY"}]),
        ),
    );
    text += &rec(
        "a1b",
        Some("u1"),
        assistant(
            "1b",
            json!([{"type": "text", "text": "Reading the settings."},
                   {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cat .env"}}]),
        ),
    );
    text += &rec(
        "r1",
        Some("a1b"),
        result(
            "toolu_1",
            &format!("GITHUB_TOKEN={github}\nREGION=eu-west-1"),
        ),
    );
    text += &rec(
        "a2",
        Some("r1"),
        assistant(
            "2",
            json!([{"type": "tool_use", "id": "toolu_2", "name": "Task",
                    "input": {"description": "find TODOs", "prompt": "Find the TODO comments"}}]),
        ),
    );
    let mut r2 = result("toolu_2", "One TODO, in a.txt.");
    r2["toolUseResult"] = json!({"agentId": "sub1", "status": "completed"});
    text += &rec("r2", Some("a2"), r2);
    text += &rec(
        "a3",
        Some("r2"),
        assistant(
            "3",
            json!([{"type": "text", "text": "The subagent found one TODO."}]),
        ),
    );
    text += &line(json!({
        "type": "system", "subtype": "compact_boundary", "parentUuid": null,
        "logicalParentUuid": "a3", "isSidechain": false, "userType": "external",
        "cwd": cwd, "sessionId": MAIN_ID, "version": "2.1.0", "uuid": "cb",
        "timestamp": "2026-03-01T10:30:00.000Z", "content": "Conversation compacted",
        "level": "info", "compactMetadata": {"trigger": "auto", "preTokens": 150000}}));
    let mut summary = user("SUMMARY-OF-EARLIER-TURNS: the user deployed and asked for TODOs.");
    summary["isCompactSummary"] = json!(true);
    summary["isVisibleInTranscriptOnly"] = json!(true);
    text += &rec("cs", Some("cb"), summary);
    text += &rec("u4", Some("cs"), user("Now fix that TODO"));
    text += &rec(
        "a4",
        Some("u4"),
        assistant("4", json!([{"type": "text", "text": "Fixed the TODO."}])),
    );
    let dir = env.home().join(".claude/projects/-home-u-alpha");
    let path = env.write(
        &format!(".claude/projects/-home-u-alpha/{MAIN_ID}.jsonl"),
        text.as_bytes(),
    );
    // The subagent's own transcript.
    let sub = |uuid: &str, parent: Option<&str>, rest: Value| {
        let mut r = claude_rec(uuid, parent, cwd, MAIN_ID, rest);
        r["isSidechain"] = json!(true);
        r["agentId"] = json!("sub1");
        line(r)
    };
    let mut s = String::new();
    s += &sub("s1", None, user("SUBAGENT-PROMPT: Find the TODO comments"));
    s += &sub(
        "s2",
        Some("s1"),
        assistant(
            "s2",
            json!([{"type": "text", "text": "SUBAGENT-ANSWER: a.txt:1 has one."}]),
        ),
    );
    std::fs::create_dir_all(dir.join(MAIN_ID).join("subagents")).unwrap();
    std::fs::write(
        dir.join(MAIN_ID).join("subagents/agent-sub1.jsonl"),
        s.as_bytes(),
    )
    .unwrap();
    // A subagent no call of the session names: never inlined, never lost.
    let lone = s
        .replace("sub1", "sub2")
        .replace("SUBAGENT-ANSWER", "LONE-SUBAGENT");
    std::fs::write(
        dir.join(MAIN_ID).join("subagents/agent-sub2.jsonl"),
        lone.as_bytes(),
    )
    .unwrap();
    path
}

/// A one-prompt Claude Code session without tools in `project`.
fn write_plain_session(env: &TestEnv, id: &str, project: &str, prompt: &str) -> PathBuf {
    let folder = project.replace('/', "-");
    let mut text = line(claude_rec("p1", None, project, id, user(prompt)));
    text += &line(claude_rec(
        "p2",
        Some("p1"),
        project,
        id,
        assistant(id, json!([{"type": "text", "text": "Sure."}])),
    ));
    env.write(
        &format!(".claude/projects/{folder}/{id}.jsonl"),
        text.as_bytes(),
    )
}

struct Setup {
    env: TestEnv,
    aws: String,
    github: String,
}

fn setup() -> Setup {
    let env = TestEnv::new();
    agentlog_bench::gen::generate(env.home(), 1_500_000, 7).unwrap();
    let secrets = planted(SEED);
    let find = |k: &str| secrets.iter().find(|p| p.kind == k).unwrap().secret.clone();
    let aws = find("aws-access-key-id");
    let github = find("github-pat");
    write_main_session(&env, &aws, &github);
    let beta = write_plain_session(
        &env,
        "22222222-2222-4333-8444-555555555555",
        "/home/u/beta",
        "BETA-PROMPT explain the build",
    );
    // A copy `resume` wrote of the beta session, recorded in its ledger.
    let copy = env
        .home()
        .join(".claude/projects/-home-u-copy/22222222-copy.jsonl");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    let text = std::fs::read_to_string(&beta)
        .unwrap()
        .replace("/home/u/beta", "/home/u/copy");
    std::fs::write(&copy, text).unwrap();
    let ledger = env.home().join(".local/share/agentlog/resumed.jsonl");
    std::fs::create_dir_all(ledger.parent().unwrap()).unwrap();
    std::fs::write(
        &ledger,
        line(
            json!({"id": "22222222-2222-4333-8444-555555555555", "agent": "claude",
                    "path": copy, "from": beta}),
        ),
    )
    .unwrap();
    Setup { env, aws, github }
}

fn dataset(env: &TestEnv, out: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["dataset", "-o", out.to_str().unwrap(), "--json"];
    args.extend(extra);
    let r = env.run(&args);
    assert_eq!(r.status, 0, "dataset {extra:?}: {}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn manifest(out: &Path) -> Value {
    serde_json::from_str(&read(&out.join("manifest.json"))).unwrap()
}

fn all_lines(out: &Path) -> String {
    ["train", "test"]
        .iter()
        .map(|s| out.join(format!("{s}.jsonl")))
        .filter(|p| p.exists())
        .map(|p| read(&p))
        .collect()
}

/// The projects of each split, from the manifest.
fn projects_by_split(m: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut train = BTreeSet::new();
    let mut test = BTreeSet::new();
    for e in m["examples"].as_array().unwrap() {
        let p = e["project"].as_str().unwrap().to_string();
        match e["split"].as_str().unwrap() {
            "train" => train.insert(p),
            _ => test.insert(p),
        };
    }
    (train, test)
}

#[test]
fn datasets_loads_both_formats_with_their_rows_features_and_splits() {
    let Some(py) = hf_python() else { return };
    let s = setup();
    let work = tempfile::tempdir().unwrap();
    for (to, column) in [("openai-chat", "messages"), ("sharegpt", "conversations")] {
        let out = work.path().join(to);
        let report = dataset(&s.env, &out, &["--to", to, "--test-fraction", "0.4"]);
        let m = manifest(&out);
        let loaded = hf_load(&py, &out, &["train", "test"]);
        for split in ["train", "test"] {
            let want = m["splits"][split]["examples"].as_u64().unwrap();
            assert!(want > 0, "{to}: the {split} split is empty: {m}");
            assert_eq!(report["splits"][split]["examples"], want);
            let lines = read(&out.join(format!("{split}.jsonl"))).lines().count() as u64;
            assert_eq!(lines, want, "{to} {split}");
            let got = &loaded[split];
            assert_eq!(got["rows"].as_u64().unwrap(), want, "{to} {split}: {got}");
            let columns: Vec<&str> = got["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect();
            assert!(columns.contains(&column), "{to}: {columns:?}");
            assert!(columns.contains(&"tools"), "{to}: {columns:?}");
            let features = got["features"].as_str().unwrap();
            assert!(
                features.contains(column) && features.contains("List"),
                "{features}"
            );
            if to == "sharegpt" {
                assert!(
                    features.contains("'from': Value('string')")
                        && features.contains("'value': Value('string')"),
                    "{features}"
                );
            }
        }
        // Every row as datasets gives it back is one the file holds.
        let rows: Vec<Value> = ["train", "test"]
            .iter()
            .flat_map(|sp| loaded[*sp]["rows_json"].as_array().unwrap().clone())
            .map(|r| serde_json::from_str(r.as_str().unwrap()).unwrap())
            .collect();
        let main = rows
            .iter()
            .find(|r| r.to_string().contains("Now fix that TODO"))
            .unwrap_or_else(|| panic!("{to}: the Claude session is not among the rows"));
        if to == "openai-chat" {
            let msgs = main["messages"].as_array().unwrap();
            let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
            assert_eq!(
                roles,
                [
                    "user",
                    "assistant",
                    "tool",
                    "assistant",
                    "tool",
                    "assistant",
                    "user",
                    "assistant"
                ],
                "{main}"
            );
            let call = &msgs[1]["tool_calls"][0];
            assert_eq!(call["id"], "toolu_1");
            assert_eq!(call["function"]["name"], "Bash");
            assert_eq!(call["function"]["arguments"], "{\"command\":\"cat .env\"}");
            assert_eq!(msgs[2]["tool_call_id"], "toolu_1");
        } else {
            let froms: Vec<&str> = main["conversations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["from"].as_str().unwrap())
                .collect();
            assert_eq!(
                froms,
                [
                    "human",
                    "gpt",
                    "function_call",
                    "observation",
                    "function_call",
                    "observation",
                    "gpt",
                    "human",
                    "gpt"
                ]
            );
        }
    }
}

#[test]
fn no_secret_survives_no_project_leaks_and_two_runs_are_the_same_bytes() {
    let s = setup();
    let work = tempfile::tempdir().unwrap();
    let a = work.path().join("a");
    let b = work.path().join("b");
    let report = dataset(&s.env, &a, &["--test-fraction", "0.4"]);
    dataset(&s.env, &b, &["--test-fraction", "0.4"]);
    for f in ["train.jsonl", "test.jsonl", "manifest.json"] {
        assert_eq!(
            read(&a.join(f)),
            read(&b.join(f)),
            "{f} differs between two runs"
        );
    }
    let source = s
        .env
        .home()
        .join(format!(".claude/projects/-home-u-alpha/{MAIN_ID}.jsonl"));
    assert!(read(&source).contains(&s.aws) && read(&source).contains(&s.github));
    let text = all_lines(&a) + &read(&a.join("manifest.json"));
    assert!(!text.contains(&s.aws), "the AWS key survived");
    assert!(!text.contains(&s.github), "the GitHub token survived");
    assert_eq!(leaks(&text, SEED), Vec::<String>::new());
    assert!(text.contains("[REDACTED:aws-access-key-id]"), "no marker");
    assert!(
        text.contains("[REDACTED:github-pat]"),
        "no marker in the tool output"
    );
    assert!(report["redacted"]["aws-access-key-id"].as_u64().unwrap() >= 1);
    assert!(report["redacted"]["github-pat"].as_u64().unwrap() >= 1);
    let m = manifest(&a);
    assert_eq!(m["redaction"]["always_on"], true);
    let (train, test) = projects_by_split(&m);
    assert!(!train.is_empty() && !test.is_empty(), "{train:?} {test:?}");
    assert!(
        train.is_disjoint(&test),
        "{:?}",
        train.intersection(&test).collect::<Vec<_>>()
    );
    assert_eq!(
        m["splits"]["train"]["projects"].as_u64().unwrap() as usize,
        train.len()
    );
    // Each input file with its hash.
    let main = m["examples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == MAIN_ID)
        .unwrap();
    let file = &main["files"][0];
    assert!(file["path"]
        .as_str()
        .unwrap()
        .ends_with(&format!("{MAIN_ID}.jsonl")));
    assert_eq!(file["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(m["agentlog_version"], env!("CARGO_PKG_VERSION"));
    assert!(m["run_time"].is_null());
    // A second run into the same folder needs --force.
    let r = s.env.run(&["dataset", "-o", a.to_str().unwrap()]);
    assert_ne!(r.status, 0);
    assert!(r.stderr.contains("already exists"), "{}", r.stderr);

    // By time: the test split has no project of the training split.
    // (At the middle start time.)
    let mut starts: Vec<String> = m["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["started"].as_str().unwrap().to_string())
        .collect();
    starts.sort();
    let middle = starts[starts.len() / 2].clone();
    let t = work.path().join("t");
    let r = dataset(&s.env, &t, &["--split", "time", "--test-since", &middle]);
    let (train, test) = projects_by_split(&manifest(&t));
    assert!(train.is_disjoint(&test), "{train:?} {test:?}");
    assert!(!train.is_empty(), "{r}");
    let dropped = r["skipped"]["after the split time, in a project of the training split"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        r["splits"]["test"]["examples"].as_u64().unwrap() + dropped > 0,
        "{r}"
    );
}

#[test]
fn context_is_not_duplicated_and_the_subagent_flag_works_both_ways() {
    let s = setup();
    let work = tempfile::tempdir().unwrap();
    let sep = work.path().join("sep");
    let report = dataset(&s.env, &sep, &["--split", "none", "--agent", "claude"]);
    let text = read(&sep.join("train.jsonl"));
    // The retried answer and the compaction's summary are left out; the
    // turns it summarized are there once.
    assert!(!text.contains("ABANDONED-FIRST-TRY"));
    assert!(!text.contains("SUMMARY-OF-EARLIER-TURNS"));
    assert_eq!(text.matches("Reading the settings.").count(), 1);
    // The resumed copy is counted once.
    assert_eq!(text.matches("BETA-PROMPT").count(), 1, "{text}");
    assert_eq!(
        report["skipped"]["resumed copies (their original is in)"],
        1
    );
    // Separate: the subagent is an example of its own, not inside its
    // parent's.
    let main_line = text
        .lines()
        .find(|l| l.contains("Now fix that TODO"))
        .unwrap();
    assert!(!main_line.contains("SUBAGENT-ANSWER"));
    assert_eq!(text.matches("SUBAGENT-ANSWER").count(), 1);
    assert_eq!(text.matches("LONE-SUBAGENT").count(), 1);
    let sep_examples = report["splits"]["train"]["examples"].as_u64().unwrap();

    let inl = work.path().join("inline");
    let report = dataset(
        &s.env,
        &inl,
        &[
            "--split",
            "none",
            "--agent",
            "claude",
            "--subagents",
            "inline",
        ],
    );
    let text = read(&inl.join("train.jsonl"));
    let main_line = text
        .lines()
        .find(|l| l.contains("Now fix that TODO"))
        .unwrap();
    assert!(main_line.contains("SUBAGENT-ANSWER"), "{main_line}");
    assert_eq!(text.matches("SUBAGENT-ANSWER").count(), 1);
    assert!(!main_line.contains("LONE-SUBAGENT"));
    assert_eq!(text.matches("LONE-SUBAGENT").count(), 1);
    assert_eq!(report["subagents_inlined"], 1);
    assert_eq!(
        report["splits"]["train"]["examples"].as_u64().unwrap(),
        sep_examples - 1
    );
    let m = manifest(&inl);
    let main = m["examples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == MAIN_ID)
        .unwrap();
    assert_eq!(main["files"].as_array().unwrap().len(), 2, "{main}");
}

#[test]
fn the_filters_pick_the_sessions_asked_for() {
    let s = setup();
    let work = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| -> Value {
        let out = work.path().join(name);
        let mut args = vec!["--split", "none"];
        args.extend(extra);
        dataset(&s.env, &out, &args);
        manifest(&out)
    };
    let ids = |m: &Value| -> BTreeSet<String> {
        m["examples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect()
    };
    let all = run("all", &[]);
    let n_all = ids(&all).len();
    let agents: BTreeSet<&str> = all["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["agent"].as_str().unwrap())
        .collect();
    // Every agent's sessions become examples.
    let ls = s.env.run(&["ls", "--json"]);
    let listed: BTreeSet<String> = serde_json::from_str::<Value>(&ls.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["agent"].as_str().unwrap().to_string())
        .collect();
    assert!(listed.len() >= 5, "{listed:?}");
    assert_eq!(
        agents
            .iter()
            .map(|a| a.to_string())
            .collect::<BTreeSet<_>>(),
        listed
    );

    let claude = run("claude", &["--agent", "claude"]);
    assert!(claude["examples"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["agent"] == "claude"));
    assert!(ids(&claude).len() < n_all);

    let alpha = run("alpha", &["--project", "/home/u/alpha"]);
    // The session and its subagent's transcript.
    assert_eq!(
        ids(&alpha),
        BTreeSet::from([
            MAIN_ID.to_string(),
            "agent-sub1".to_string(),
            "agent-sub2".to_string()
        ])
    );

    let tools = run("tools", &["--agent", "claude", "--with-tools"]);
    let tool_ids = ids(&tools);
    assert!(tool_ids.contains(MAIN_ID));
    assert!(!tool_ids.contains("22222222-2222-4333-8444-555555555555"));

    let turns = run("turns", &["--agent", "claude", "--min-turns", "2"]);
    assert!(ids(&turns).contains(MAIN_ID));
    assert!(!ids(&turns).contains("22222222-2222-4333-8444-555555555555"));
    assert!(turns["examples"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["prompts"].as_u64().unwrap() >= 2));

    let model = run("model", &["--model", "claude-sonnet-4-5"]);
    assert!(ids(&model).contains(MAIN_ID));
    let none = run("nomodel", &["--model", "no-such-model"]);
    assert!(ids(&none).is_empty());

    let dated = run("dated", &["--since", "2026-03-01", "--until", "2026-03-02"]);
    assert!(ids(&dated).contains(MAIN_ID));
    assert!(dated["examples"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["started"].as_str().unwrap().starts_with("2026-03-01")));
}

#[test]
fn export_and_convert_write_one_example_with_a_fidelity_report() {
    let s = setup();
    let path = s
        .env
        .home()
        .join(format!(".claude/projects/-home-u-alpha/{MAIN_ID}.jsonl"));
    let p = path.to_str().unwrap();
    for to in ["openai-chat", "sharegpt"] {
        let r = s.env.run(&["export", p, "--to", to]);
        assert_eq!(r.status, 0, "{}", r.stderr);
        let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
        assert_eq!(r.stdout.lines().count(), 1);
        assert!(v
            .get(if to == "sharegpt" {
                "conversations"
            } else {
                "messages"
            })
            .is_some());
        assert!(r.stderr.contains("cannot hold"), "{}", r.stderr);
        assert!(r.stderr.contains("other branches"), "{}", r.stderr);
        let c = s.env.run(&["convert", p, "--to", to]);
        assert_eq!(c.status, 0, "{}", c.stderr);
        assert_eq!(c.stdout, r.stdout);
    }
}
