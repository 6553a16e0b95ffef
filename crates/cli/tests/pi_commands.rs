//! A pi session rendered, exported, validated, walked and migrated through
//! the CLI, as a newcomer would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{fixtures, TestEnv};

fn tree_fixture() -> String {
    fixtures()
        .join("seeds/pi-mono/generated/v3-tree-all-entry-types.jsonl")
        .display()
        .to_string()
}

#[test]
fn show_renders_the_pi_session() {
    let env = TestEnv::new();
    let r = env.run(&["show", &tree_fixture()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    insta::assert_snapshot!(r.stdout);
}

#[test]
fn export_markdown_of_the_pi_session() {
    let env = TestEnv::new();
    let r = env.run(&["export", &tree_fixture(), "--to", "markdown"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    insta::assert_snapshot!(r.stdout);
}

#[test]
fn tree_of_the_pi_session() {
    let env = TestEnv::new();
    let r = env.run(&["tree", &tree_fixture()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    insta::assert_snapshot!(r.stdout);
}

#[test]
fn context_of_the_pi_session() {
    let env = TestEnv::new();
    let r = env.run(&["context", &tree_fixture(), "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            fixtures().join("seeds/pi-mono/generated/v3-tree-all-entry-types.context.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let roles: Vec<&str> = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    let expected_roles: Vec<&str> = expected["messageRoles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(roles, expected_roles, "{}", r.stdout);
    assert_eq!(v["thinkingLevel"], expected["thinkingLevel"]);
    assert_eq!(v["model"], expected["model"]);
}

#[test]
fn validate_real_pi_files() {
    let env = TestEnv::new();
    let large = fixtures()
        .join("seeds/pi-mono/large-session.jsonl")
        .display()
        .to_string();
    let r = env.run(&["validate", &tree_fixture(), &large]);
    assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("2 files checked, 0 failed"),
        "{}",
        r.stdout
    );
}

#[test]
fn validate_names_the_line_of_a_broken_record() {
    let env = TestEnv::new();
    let mut text = std::fs::read_to_string(tree_fixture()).unwrap();
    let third = text.match_indices('\n').nth(2).unwrap().0;
    text.insert_str(third + 1, "{\"type\":\"message\",\"id\":\n");
    text.push_str("{\"type\":\"message\",\"id\":\"torn");
    let p = env.write("broken.jsonl", text.as_bytes());
    let r = env.run(&["validate", &p.display().to_string()]);
    assert_eq!(r.status, 1, "{}", r.stdout);
    let out = env.redact(&r.stdout);
    assert!(
        out.contains("[HOME]/broken.jsonl:4: error[invalid-json]"),
        "{out}"
    );
    assert!(out.contains("warning[torn-tail]"), "{out}");
    assert!(out.contains("FAILED (pi, 1 error,"), "{out}");
}

#[test]
fn migrate_writes_a_version_3_file() {
    let env = TestEnv::new();
    let src = env.write(
        "old.jsonl",
        &std::fs::read(fixtures().join("seeds/pi-mono/large-session.jsonl")).unwrap(),
    );
    let out = env.home().join("new.jsonl");
    let r = env.run(&[
        "migrate",
        &src.display().to_string(),
        "-o",
        &out.display().to_string(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let first = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let header: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(header["version"], 3);
    let v = env.run(&["validate", &out.display().to_string()]);
    assert_eq!(v.status, 0, "{}", v.stdout);
}

#[test]
fn convert_pi_to_claude_and_back_keeps_the_conversation() {
    let env = TestEnv::new();
    let claude = env.home().join("s.claude.jsonl");
    let r = env.run(&[
        "convert",
        &tree_fixture(),
        "--to",
        "claude",
        "-o",
        &claude.display().to_string(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("claude cannot hold, so the converted session lacks:"),
        "{}",
        r.stderr
    );
    // Every user and assistant text of the active branch survives.
    let texts = |path: &str| -> Vec<String> {
        let r = env.run(&["show", path, "--json"]);
        assert_eq!(r.status, 0, "{}", r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let leaf = v["leaf_id"].as_str().unwrap_or_default().to_string();
        let entries = v["entries"].as_array().unwrap().clone();
        let mut path_ids = std::collections::HashSet::new();
        let mut cur = Some(leaf);
        while let Some(id) = cur.take() {
            let e = entries.iter().find(|e| e["id"] == id.as_str()).unwrap();
            path_ids.insert(id);
            cur = e["parent_id"].as_str().map(str::to_string);
        }
        entries
            .iter()
            .filter(|e| path_ids.contains(e["id"].as_str().unwrap()))
            .filter(|e| e["role"] == "user" || e["role"] == "assistant")
            .flat_map(|e| e["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "text")
            .map(|b| b["text"].as_str().unwrap().to_string())
            .collect()
    };
    let original = texts(&tree_fixture());
    assert!(original.len() >= 2, "{original:?}");
    assert_eq!(texts(&claude.display().to_string()), original);
}

#[test]
fn migrate_in_place_rewrites_the_file() {
    let env = TestEnv::new();
    let src = env.write(
        "old.jsonl",
        &std::fs::read(fixtures().join("seeds/pi-mono/large-session.jsonl")).unwrap(),
    );
    let r = env.run(&["migrate", "--in-place", &src.display().to_string()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("migrated from version 1 to 3"),
        "{}",
        r.stderr
    );
    let first = std::fs::read_to_string(&src)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let header: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(header["version"], 3);
    let again = env.run(&["migrate", "--in-place", &src.display().to_string()]);
    assert!(
        again.stderr.contains("already version 3"),
        "{}",
        again.stderr
    );
}
