//! Every real sample file of every agent (the shared fixtures and the
//! harness's real-CLI sessions) written as training data: each is one
//! line of JSON in the target's shape, every tool result follows the call
//! it answers (as OpenAI's format requires), and the fidelity report names
//! the target.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_api::training::{example, Target};
use agentlog_formats::registry;
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn check_openai(line: &str, path: &Path) {
    let v: Value = serde_json::from_str(line).unwrap();
    let mut calls = HashSet::new();
    for m in v["messages"].as_array().unwrap() {
        let role = m["role"].as_str().unwrap();
        assert!(
            ["system", "user", "assistant", "tool"].contains(&role),
            "{}: role {role}",
            path.display()
        );
        if role == "assistant" {
            for c in m["tool_calls"].as_array().into_iter().flatten() {
                calls.insert(c["id"].as_str().unwrap().to_string());
                assert_eq!(c["type"], "function");
                // The arguments are a JSON string.
                assert!(c["function"]["arguments"].is_string());
                assert!(c["function"]["name"].is_string());
            }
        } else {
            assert!(m["content"].is_string(), "{}: {m}", path.display());
        }
        if role == "tool" {
            let id = m["tool_call_id"].as_str().unwrap();
            assert!(
                calls.contains(id),
                "{}: a tool result before its call {id}",
                path.display()
            );
        }
    }
}

fn check_sharegpt(line: &str, path: &Path) {
    let v: Value = serde_json::from_str(line).unwrap();
    assert!(v["system"].is_string() && v["tools"].is_string());
    for t in v["conversations"].as_array().unwrap() {
        let from = t["from"].as_str().unwrap();
        assert!(
            ["human", "gpt", "function_call", "observation"].contains(&from),
            "{}: from {from}",
            path.display()
        );
        let value = t["value"].as_str().unwrap();
        if from == "function_call" {
            let call: Value = serde_json::from_str(value).unwrap();
            assert!(call.is_object() || call.is_array());
        }
    }
}

#[test]
fn every_agents_samples_are_written_as_training_data() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    files_under(&root.join("../shared/fixtures"), &mut files);
    files_under(&root.join("crates/harness/fixtures"), &mut files);
    files.sort();
    let mut covered = BTreeSet::new();
    let mut with_tools = BTreeSet::new();
    for path in files {
        let Ok(format) = registry::detect(&path) else {
            continue;
        };
        let Ok(read) = format.read_path(&path) else {
            continue;
        };
        let s = &read.session;
        for target in [Target::OpenAiChat, Target::ShareGpt] {
            let (line, fidelity) = example(s, target);
            assert!(!line.contains('\n'), "{}", path.display());
            assert_eq!(fidelity.target, target.name());
            match target {
                Target::OpenAiChat => check_openai(&line, &path),
                Target::ShareGpt => check_sharegpt(&line, &path),
            }
            if line.contains("\"tool_calls\"") {
                with_tools.insert(format.name());
            }
        }
        covered.insert(format.name());
    }
    // The samples of the agents agentlog reads (not every one has a
    // sample agentlog detects from its bytes alone: folders and databases
    // are read from where their agent keeps them).
    for name in [
        "claude",
        "codex",
        "gemini",
        "pi",
        "cursor",
        "copilot",
        "droid",
        "aider",
        "acpx",
        "codelia",
        "jido",
        "specstory",
    ] {
        assert!(
            covered.contains(name),
            "no sample of {name} was written: {covered:?}"
        );
    }
    for name in ["claude", "codex", "gemini", "pi"] {
        assert!(
            with_tools.contains(name),
            "no tool call of {name}: {with_tools:?}"
        );
    }
    println!("written as training data: {covered:?}");
}
