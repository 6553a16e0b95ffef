#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Every trajectory `agentlog export --to atif` writes validates with
//! Harbor's own Pydantic models and validator (PyPI `harbor`), for sessions
//! of every agent agentlog reads: the real sample files (the harness's
//! real-CLI sessions, the shared fixtures, the fixtures of every further
//! agent) and a generated corpus (`agentlog-bench gen`). Each
//! trajectory's tokens, step by step and in its final metrics, are what
//! `agentlog stats --explain --json` counts for the same session; a
//! session's subagent transcripts are embedded; a trajectory read back
//! is counted by `stats` as the session was.
//!
//! Harbor is installed by `scripts/install-harbor.sh` into target/peers.
//! With `CI` set a missing Harbor fails the test; elsewhere the test says
//! it skipped and why.

mod common;

use common::{repo, TestEnv};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Returns the Python that has Harbor, installing it when needed.
fn harbor() -> Option<PathBuf> {
    common::installed("install-harbor.sh", &[], "Harbor")
}

/// Validates every `*.json` of the folder given with Harbor's
/// TrajectoryValidator and its Trajectory model, and prints for each file
/// its errors, its steps' metrics, its final metrics and its embedded
/// subagent trajectories, as Harbor's models read them.
const VALIDATE: &str = r#"
import json, os, sys
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from pathlib import Path
from harbor.models.trajectories import Trajectory
from harbor.utils.trajectory_validator import TrajectoryValidator
out = {}
for p in sorted(Path(sys.argv[1]).glob("*.json")):
    v = TrajectoryValidator()
    ok = v.validate(p)
    r = {"errors": v.get_errors()}
    if ok:
        t = Trajectory.model_validate_json(p.read_text())
        def metrics(t):
            return [None if s.metrics is None else
                    [s.metrics.prompt_tokens, s.metrics.completion_tokens,
                     s.metrics.cached_tokens, (s.metrics.extra or {}).get("cache_creation_input_tokens", 0)]
                    for s in t.steps]
        f = t.final_metrics
        r["notes"] = t.notes
        r["steps"] = metrics(t)
        r["final"] = [f.total_prompt_tokens, f.total_completion_tokens, f.total_cached_tokens,
                      (f.extra or {}).get("total_cache_creation_input_tokens", 0)] if f else None
        r["subagents"] = [{"id": s.trajectory_id, "steps": len(s.steps)} for s in (t.subagent_trajectories or [])]
        r["refs"] = [ref.trajectory_id for s in t.steps if s.observation
                     for res in s.observation.results for ref in (res.subagent_trajectory_ref or [])]
    out[p.name] = r
print(json.dumps(out))
"#;

fn validate(python: &Path, dir: &Path) -> BTreeMap<String, Value> {
    let out = Command::new(python)
        .arg("-c")
        .arg(VALIDATE)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Harbor's validation did not run: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Where the real sample files of each agent are (as the conformance
/// suite lists them), with the name the agent gives its files.
const SAMPLES: &[(&str, &str)] = &[
    ("claude", "crates/harness/fixtures/claude-2.1.330.jsonl"),
    ("claude", "crates/harness/fixtures/compacted-claude-2.1.330.jsonl"),
    ("claude", "shared/native/claude"),
    ("codex", "crates/harness/fixtures/codex-0.169.0.jsonl as rollout-2026-11-23T21-39-34-0.jsonl"),
    ("codex", "crates/harness/fixtures/subagent-codex-0.169.0.jsonl as rollout-2026-11-25T18-28-20-1.jsonl"),
    ("codex", "crates/harness/fixtures/compacted-codex-0.169.0.jsonl as rollout-2026-11-25T18-28-20-2.jsonl"),
    ("codex", "shared/native/codex"),
    ("gemini", "crates/harness/fixtures/gemini-0.61.0.jsonl as chats/session-2026-11-23T21-39-6c8242c4.jsonl"),
    ("gemini", "crates/harness/fixtures/subagent-gemini-0.61.0.jsonl as chats/session-2026-11-25T18-28-1a2b3c4d.jsonl"),
    ("gemini", "shared/native/gemini as chats"),
    ("pi", "crates/harness/fixtures/pi-0.73.1.jsonl"),
    ("pi", "crates/harness/fixtures/compacted-pi-0.73.1.jsonl"),
    ("pi", "shared/seeds/pi-mono"),
    ("cursor", "shared/native/cursor"),
    ("codelia", "shared/seeds/codelia/session-store-spec-example.jsonl as 2026/01/02/run-1.jsonl"),
    ("jido", "shared/seeds/jido_code/persistence-format-example.json"),
    ("acpx", "shared/seeds/acpx/record.json"),
    (
        "specstory",
        "shared/seeds/specstory/2026-05-20_09-00-00Z-list-the-workspace.md as history/2026-05-20_09-00-00Z-list-the-workspace.md",
    ),
    ("copilot", "crates/formats/tests/fixtures/copilot/1.0.102/session-state"),
    ("opencode", "crates/formats/tests/fixtures/opencode/1.18.33"),
    ("kilo", "crates/formats/tests/fixtures/kilo/7.7.7"),
    ("qwen", "crates/formats/tests/fixtures/qwen/0.24.4/projects"),
    ("cline", "crates/formats/tests/fixtures/cline/3.0.65/sessions"),
    ("aider", "crates/formats/tests/fixtures/aider/0.86.2"),
    ("droid", "crates/formats/tests/fixtures/droid/0.225.2/sessions"),
    ("vibe", "crates/formats/tests/fixtures/vibe/3.0.2/logs/session"),
    ("vibe", "crates/formats/tests/fixtures/vibe/2.20.0/logs/session"),
    ("kimi", "crates/formats/tests/fixtures/kimi/1.51.0/sessions"),
    ("continue", "crates/formats/tests/fixtures/continue/1.5.47/sessions"),
    ("openhands", "crates/formats/tests/fixtures/openhands/0.62.0/sessions"),
    ("openhands", "crates/formats/tests/fixtures/openhands/1.2.1/conversations"),
    ("crush", "crates/formats/tests/fixtures/crush/mcpfier-2025-08"),
    ("amp", "crates/formats/tests/fixtures/amp/export-0.0.1785170481"),
    ("atif", "crates/formats/tests/fixtures/atif/harbor-0.25.0/jobs"),
];

/// Formats whose every session is one file of its own.
const ONE_FILE: &[&str] = &["claude", "codex", "gemini", "pi", "cursor"];

fn resolve(rel: &str) -> PathBuf {
    match rel.strip_prefix("shared/") {
        Some(r) => repo().join("../shared/fixtures").join(r),
        None => repo().join(rel),
    }
}

fn copy(src: &Path, dst: &Path) {
    if src.is_dir() {
        std::fs::create_dir_all(dst).unwrap();
        for e in std::fs::read_dir(src).unwrap() {
            let e = e.unwrap();
            copy(&e.path(), &dst.join(e.file_name()));
        }
    } else {
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(src, dst).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    }
}

/// A session to export: its file and its format.
struct Case {
    path: String,
    format: String,
}

/// The sessions `ls` lists with `args`.
fn listed(env: &TestEnv, args: &[&str]) -> Vec<(String, String)> {
    let mut a = vec!["ls", "--all", "--json", "--files", "--limit", "100000"];
    a.extend_from_slice(args);
    let r = env.run(&a);
    assert_eq!(r.status, 0, "ls {args:?}: {}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["format"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The tokens `stats --explain` counts, by session file: each response's
/// (input, output, cache read, cache write).
fn counted(env: &TestEnv, roots: &[String], index: &Path) -> BTreeMap<String, Vec<[u64; 4]>> {
    let mut a = vec!["stats", "--explain", "--json"];
    for r in roots {
        a.push("--root");
        a.push(r);
    }
    let index = index.to_string_lossy().into_owned();
    a.extend_from_slice(&["--index", &index]);
    let r = env.run(&a);
    assert_eq!(r.status, 0, "stats {roots:?}: {}", r.stderr);
    let rows: Vec<Value> = serde_json::from_str(&r.stdout).unwrap();
    let mut out: BTreeMap<String, Vec<[u64; 4]>> = BTreeMap::new();
    for row in rows {
        let n = |k: &str| row[k].as_u64().unwrap();
        out.entry(row["path"].as_str().unwrap().to_string())
            .or_default()
            .push([n("input"), n("output"), n("cache_read"), n("cache_write")]);
    }
    out
}

/// Exports every case, validates the trajectories with Harbor and checks
/// their tokens against `stats`; returns the validation of each.
fn export_and_check(
    python: &Path,
    env: &TestEnv,
    cases: &[Case],
    stats: &BTreeMap<String, Vec<[u64; 4]>>,
) -> BTreeMap<String, Value> {
    let out_dir = tempfile::tempdir().unwrap();
    let mut names = BTreeMap::new();
    for (i, c) in cases.iter().enumerate() {
        let name = format!("{i:03}-{}.json", c.format);
        let out = out_dir.path().join(&name);
        let r = env.run(&[
            "export",
            &c.path,
            "--from",
            &c.format,
            "--to",
            "atif",
            "-o",
            &out.to_string_lossy(),
        ]);
        assert_eq!(
            r.status, 0,
            "export {} ({}): {}",
            c.path, c.format, r.stderr
        );
        names.insert(name, c);
    }
    let checked = validate(python, out_dir.path());
    assert_eq!(checked.len(), cases.len());
    for (name, v) in &checked {
        let c = names[name];
        let what = format!("{} ({})", c.path, c.format);
        assert_eq!(
            v["errors"],
            Value::Array(vec![]),
            "{what}: Harbor says it is not a valid trajectory"
        );
        // Step by step: one step per counted response (a step that sums
        // several has `llm_call_count`; none here), with the same tokens.
        let mut steps: Vec<[u64; 4]> = v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| !m.is_null())
            .map(|m| {
                let n = |i: usize| m[i].as_u64().unwrap_or(0);
                [n(0) - n(2) - n(3), n(1), n(2), n(3)]
            })
            .collect();
        let mut want = stats.get(&c.path).cloned().unwrap_or_default();
        let f = &v["final"];
        let n = |i: usize| f[i].as_u64().unwrap_or(0);
        let sum = want.iter().fold([0u64; 4], |a, r| {
            [a[0] + r[0], a[1] + r[1], a[2] + r[2], a[3] + r[3]]
        });
        assert_eq!(
            [n(0), n(1), n(2), n(3)],
            [sum[0] + sum[2] + sum[3], sum[1], sum[2], sum[3]],
            "{what}: final metrics (prompt, completion, cached, cache written) vs agentlog stats"
        );
        steps.retain(|s| s.iter().any(|&x| x > 0));
        want.retain(|s| s.iter().any(|&x| x > 0));
        steps.sort();
        want.sort();
        if v["notes"].is_null() {
            assert_eq!(
                steps, want,
                "{what}: the steps' tokens vs the responses agentlog stats counts"
            );
        } else {
            // The steps follow the branch the session is on; the final
            // metrics (above) count every branch, as stats does, and the
            // notes say so.
            let mut rest = want.clone();
            for s in &steps {
                let i = rest.iter().position(|w| w == s);
                assert!(
                    i.is_some(),
                    "{what}: step tokens {s:?} are not a response agentlog stats counts"
                );
                rest.remove(i.unwrap());
            }
            assert!(
                !rest.is_empty(),
                "{what}: notes say branches are left out, but every response is in a step"
            );
        }
    }
    checked
}

#[test]
fn trajectories_of_every_agents_sessions_validate_with_harbor_and_count_what_stats_counts() {
    let Some(python) = harbor() else { return };
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    let mut stats = BTreeMap::new();
    let mut formats_seen = std::collections::BTreeSet::new();
    for (i, (format, rel)) in SAMPLES.iter().enumerate() {
        let (rel, name) = rel.split_once(" as ").unwrap_or((rel, ""));
        let src = resolve(rel);
        let name: PathBuf = if name.is_empty() {
            src.file_name().unwrap().into()
        } else {
            name.into()
        };
        let dst = dir.path().join(i.to_string()).join(&name);
        copy(&src, &dst);
        let root = if name.to_string_lossy().contains('/') {
            dir.path().join(i.to_string())
        } else {
            dst
        };
        let roots = vec![format!("{format}={}", root.display())];
        let index = dir.path().join(format!("{i}.sqlite"));
        stats.extend(counted(&env, &roots, &index));
        let found = listed(&env, &["--root", &roots[0]]);
        assert!(
            !found.is_empty(),
            "{format}: no session under {}",
            root.display()
        );
        for (path, f) in found {
            formats_seen.insert(f.clone());
            // A session file counted alone: stats counts a response that
            // another file of the folder replays (a fork, a copy) once,
            // at the first file, while each trajectory holds its own.
            if ONE_FILE.contains(&f.as_str()) && Path::new(&path).is_file() {
                let k = cases.len();
                let alone = dir.path().join("alone").join(k.to_string());
                let rel = Path::new(&path)
                    .strip_prefix(&root)
                    .unwrap_or(Path::new(&path));
                let (copy_to, root_alone) = if rel.as_os_str().is_empty() || rel.is_absolute() {
                    let to = alone.join(Path::new(&path).file_name().unwrap());
                    (to.clone(), to)
                } else {
                    // Under a folder of the root's own name (`chats`).
                    let top = alone.join(root.file_name().unwrap());
                    (top.join(rel), top)
                };
                copy(Path::new(&path), &copy_to);
                let r = vec![format!("{f}={}", root_alone.display())];
                let rows = counted(&env, &r, &alone.with_extension("sqlite"));
                let mine = rows.get(&copy_to.to_string_lossy().into_owned()).cloned();
                match mine {
                    Some(rows) => stats.insert(path.clone(), rows),
                    None => stats.remove(&path),
                };
            }
            cases.push(Case { path, format: f });
        }
    }
    let checked = export_and_check(&python, &env, &cases, &stats);
    // Every agent agentlog reads (the formats registry less its own json).
    let r = env.run(&["formats", "--json"]);
    let formats: Value = serde_json::from_str(&r.stdout).unwrap();
    let formats = formats.as_array().unwrap();
    assert!(formats.len() > 20, "{formats:?}");
    for f in formats {
        let name = f["name"].as_str().unwrap();
        if name != "json" {
            assert!(
                formats_seen.contains(name),
                "no sample session of {name} was exported"
            );
        }
    }
    // The Claude Code session with a subagent transcript has it embedded.
    let with_sub: Vec<&Value> = checked
        .values()
        .filter(|v| v["subagents"].as_array().is_some_and(|a| !a.is_empty()))
        .collect();
    assert!(!with_sub.is_empty(), "no trajectory embeds a subagent");
    for v in with_sub {
        for s in v["subagents"].as_array().unwrap() {
            assert!(s["steps"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn trajectories_of_a_generated_corpus_validate_with_harbor_and_count_what_stats_counts() {
    let Some(python) = harbor() else { return };
    let env = TestEnv::new();
    agentlog_bench::gen::generate(env.home(), 1_500_000, 41).unwrap();
    let index = env.home().join("idx.sqlite");
    let stats = counted(&env, &[], &index);
    let cases: Vec<Case> = listed(&env, &[])
        .into_iter()
        .map(|(path, format)| Case { path, format })
        .collect();
    let agents: std::collections::BTreeSet<&str> =
        cases.iter().map(|c| c.format.as_str()).collect();
    assert!(
        agents.len() >= 4,
        "the corpus has sessions of every generated agent: {agents:?}"
    );
    export_and_check(&python, &env, &cases, &stats);
}

#[test]
fn harbor_runs_are_shown_searched_and_counted_like_sessions() {
    let env = TestEnv::new();
    let jobs = repo().join("crates/formats/tests/fixtures/atif/harbor-0.25.0/jobs");
    let root = format!("atif={}", jobs.display());
    let found = listed(&env, &["--root", &root]);
    assert_eq!(found.len(), 4, "{found:?}");
    let index = env.home().join("idx.sqlite");
    let index_s = index.to_string_lossy().into_owned();
    let r = env.run(&[
        "search",
        "subagent-final-answer",
        "--root",
        &root,
        "--index",
        &index_s,
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    // The Codex subagent's trajectory (its session id).
    assert!(
        r.stdout.contains("01a213f7-3f6c-7f83-a32e-0794ef5011d6"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("1 hit"), "{}", r.stdout);
    let stats = counted(&env, std::slice::from_ref(&root), &index);
    for (path, _) in &found {
        let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let rows = &stats[path];
        let prompt: u64 = rows.iter().map(|r| r[0] + r[2] + r[3]).sum();
        let completion: u64 = rows.iter().map(|r| r[1]).sum();
        assert_eq!(
            (prompt, completion),
            (
                doc["final_metrics"]["total_prompt_tokens"]
                    .as_u64()
                    .unwrap(),
                doc["final_metrics"]["total_completion_tokens"]
                    .as_u64()
                    .unwrap()
            ),
            "{path}: stats vs the trajectory's own final metrics"
        );
        let r = env.run(&["show", path]);
        assert_eq!(r.status, 0, "{}", r.stderr);
        // Converted to ATIF again, the same bytes.
        let out = env.home().join("again.json");
        let r = env.run(&[
            "convert",
            path,
            "--to",
            "atif",
            "-o",
            &out.to_string_lossy(),
            "--force",
        ]);
        assert_eq!(r.status, 0, "{}", r.stderr);
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(path).unwrap(),
            "{path}"
        );
    }
}
