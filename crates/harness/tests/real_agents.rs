//! Conformance with the real agent CLIs (pinned versions from npm, installed
//! by scripts/install-agent-clis.sh into target/agents), each run with its
//! own HOME against the mock model server on loopback:
//!
//! 1. every CLI writes a real session (thinking, a shell call, a file write,
//!    a second turn by resuming the session) that agentlog reads completely
//!    and writes back in its own format byte for byte (`convert`; the
//!    writer alone gives the same JSON values);
//! 2. the 4x4 matrix: every session continued in every agent through
//!    `agentlog resume --in T`, with the whole prior history reaching the
//!    model as structured items, T appending to the file agentlog wrote, and
//!    agentlog reading the appended file;
//! 3. the same through agentlog's unified JSON, with and without `--from`;
//! 4. every CLI compacts a real session (`real_agents_compact`), which
//!    agentlog reads with the turns before and after the compaction;
//! 5. the real acpx, driving Gemini CLI, writes sessions agentlog reads, and
//!    continues a session agentlog resumed in it
//!    (`real_acpx_sessions_both_ways`).
//!
//! With `CI` set a CLI that cannot be installed fails the test; elsewhere
//! the test prints that it skipped and why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One generated session.
struct Generated {
    agent: &'static str,
    sandbox: Sandbox,
    file: PathBuf,
}

/// What every generated session holds, in order.
fn own_history(agent: &'static str) -> Expect {
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

fn generate(sandbox: Sandbox) -> Generated {
    let agent = sandbox.agent;
    sandbox.run(
        &sandbox.project,
        &format!("alpha {agent}: list the files"),
        None,
    );
    let file = sandbox.newest_session();
    let arg = sandbox.resume_arg(&file);
    sandbox.run(
        &sandbox.project,
        &format!("beta {agent}: write notes.txt"),
        Some(&arg),
    );
    let listed = listed_sessions(&sandbox);
    assert_eq!(
        listed, 1,
        "{agent}: a continued session must be listed once by agentlog ls"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains(&format!("beta-answer-{agent}")),
        "{agent}: continuing must append to the same file"
    );
    // pi has no subagents.
    if agent != "pi" {
        check_subagent(&sandbox, &file);
    }
    keep(&file, &format!("generated/{agent}"));
    Generated {
        agent,
        sandbox,
        file,
    }
}

/// The agent runs a subagent on "delta <agent>": Claude Code through its
/// `Agent` tool, Codex through `spawn_agent` of its `multi_agent_v1` tools
/// (the parent waits in a shell call until the subagent's completion reaches
/// it as a notification), Gemini CLI through `invoke_agent` with its
/// `generalist` agent (which finishes with `complete_task`). agentlog reads
/// the subagent's own file to its final answer, the parent it names (Codex
/// and Gemini CLI; Claude Code's sits in the session's folder), and the
/// parent session's delegation and answer.
fn check_subagent(sandbox: &Sandbox, file: &Path) {
    let agent = sandbox.agent;
    let arg = sandbox.resume_arg(file);
    sandbox.run(
        &sandbox.project,
        &format!("delta {agent}: delegate a count"),
        Some(&arg),
    );
    let sub = subagent_file(sandbox, file, &arg);
    let session = read_session(sandbox, &sub);
    if agent != "claude" {
        assert_eq!(
            session.meta.parent_session.as_deref(),
            Some(arg.as_str()),
            "{agent}: the subagent's file must name its parent session"
        );
    }
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    // Gemini CLI's subagent answers through its `complete_task` call, whose
    // result is the parent's tool result.
    let (answer, result) = match agent {
        "gemini" => ("tool_call", "subagent-final-answer"),
        _ => ("assistant", ""),
    };
    assert_holds(
        &session_items(&session),
        &vec![
            ("user", leak(format!("subtask {agent}"))),
            ("tool_call", "subagent-tool-output"),
            ("tool_result", "subagent-tool-output"),
            (answer, "subagent-final-answer"),
        ],
        &format!("the {agent} subagent's file"),
    );
    keep(&sub, &format!("generated/{agent}-subagent"));
    assert_holds(
        &session_items(&read_session(sandbox, file)),
        &vec![
            ("user", leak(format!("delta {agent}"))),
            ("tool_call", leak(format!("subtask {agent}"))),
            ("tool_result", result),
            ("assistant", leak(format!("delta-answer-{agent}"))),
        ],
        &format!("the {agent} session that ran a subagent"),
    );
    check_atif(sandbox, file);
}

/// The real session that ran a subagent, exported with `agentlog export
/// --to atif`, is a trajectory Harbor's own validator and model accept
/// (`scripts/install-harbor.sh`; with `CI` set a missing Harbor fails),
/// with its subagent embedded (and for Claude Code referred to from the
/// call's result when the session names the subagent it started).
fn check_atif(sandbox: &Sandbox, file: &Path) {
    let agent = sandbox.agent;
    let out = std::process::Command::new("bash")
        .arg(repo().join("scripts/install-harbor.sh"))
        .output()
        .ok()
        .filter(|o| o.status.success());
    let Some(python) = out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()) else {
        missing("Harbor (scripts/install-harbor.sh)");
    };
    let trajectory = sandbox.home.join("trajectory.json");
    let t = trajectory.to_string_lossy().into_owned();
    agentlog(
        sandbox,
        &["export", &file.to_string_lossy(), "--to", "atif", "-o", &t],
    );
    let script = r#"
import json, os, sys
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from pathlib import Path
from harbor.models.trajectories import Trajectory
from harbor.utils.trajectory_validator import TrajectoryValidator
v = TrajectoryValidator()
if not v.validate(Path(sys.argv[1])):
    print(json.dumps({"errors": v.get_errors()})); sys.exit(0)
t = Trajectory.model_validate_json(Path(sys.argv[1]).read_text())
refs = [r.trajectory_id for s in t.steps if s.observation for o in s.observation.results for r in (o.subagent_trajectory_ref or [])]
print(json.dumps({"errors": [], "subagents": [s.trajectory_id for s in (t.subagent_trajectories or [])], "refs": refs}))
"#;
    let o = std::process::Command::new(&python)
        .args(["-c", script, &t])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{agent}: Harbor did not run: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["errors"],
        serde_json::json!([]),
        "{agent}: Harbor rejects the trajectory"
    );
    // Each agent's subagent, from the file it left beside the session.
    let subs = v["subagents"].as_array().unwrap();
    assert!(
        !subs.is_empty(),
        "{agent}: the subagent is not embedded: {v}"
    );
    if agent == "claude" {
        let named = read_session(sandbox, file)
            .entries
            .iter()
            .any(|e| !e.subagent_calls().is_empty());
        if named {
            let refs = v["refs"].as_array().unwrap();
            assert!(
                refs.iter().any(|r| subs.contains(r)),
                "claude: no result refers to the embedded subagent: {v}"
            );
        }
    }
}

/// Where the agent keeps the file of the subagent the session `file` (whose
/// resume argument is `arg`) ran: Claude Code in `<session>/subagents/`,
/// Gemini CLI in `chats/<session id>/`, Codex in a rollout naming the
/// parent's thread id.
fn subagent_file(sandbox: &Sandbox, file: &Path, arg: &str) -> PathBuf {
    let first_jsonl = |dir: PathBuf| {
        std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("no subagent file in {}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .unwrap_or_else(|| panic!("no subagent file in {}", dir.display()))
    };
    match sandbox.agent {
        "claude" => first_jsonl(file.with_extension("").join("subagents")),
        "gemini" => first_jsonl(file.with_file_name(arg)),
        _ => sandbox
            .session_files()
            .into_iter()
            .find(|p| {
                let text = std::fs::read_to_string(p).unwrap_or_default();
                let first: Value =
                    serde_json::from_str(text.lines().next().unwrap_or("{}")).unwrap_or_default();
                first["payload"]["parent_thread_id"].as_str() == Some(arg)
            })
            .unwrap_or_else(|| panic!("no subagent rollout names {arg} as its parent")),
    }
}

/// Keeps a copy of a file the agents wrote under target/harness-out, for
/// looking at after a run (and for refreshing the fixtures).
fn keep(file: &Path, name: &str) {
    let ext = file.extension().unwrap_or_default().to_string_lossy();
    let dest = repo()
        .join("target/harness-out")
        .join(format!("{name}.{ext}"));
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::copy(file, dest).unwrap();
}

/// How many sessions `agentlog ls` lists in the sandbox.
fn listed_sessions(sandbox: &Sandbox) -> usize {
    let out = agentlog(sandbox, &["ls", "--all", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    v.as_array()
        .map(|a| a.len())
        .or_else(|| v["sessions"].as_array().map(|a| a.len()))
        .unwrap()
}

/// Whether the agent sends the thinking of earlier turns back to the model
/// when it continues a session. Gemini CLI never does, not even for its
/// own sessions (the gemini -> gemini cell shows it): its chats keep the
/// thoughts, its requests leave them out. The appended file must still
/// hold them, which the cell checks.
fn resends_thinking(agent: &str) -> bool {
    agent != "gemini"
}

/// Checks that agentlog reads `g.file` completely and writes it back exactly.
fn check_read_completely(g: &Generated) {
    let session = read_session(&g.sandbox, &g.file);
    let items = session_items(&session);
    assert_holds(
        &items,
        &own_history(g.agent),
        &format!("{} session read by agentlog", g.agent),
    );
    let usage = session.total_usage();
    assert!(
        usage.input > 0 && usage.output > 0,
        "{}: the token usage the file records was not read: {usage:?}",
        g.agent
    );
    check_written_back(&g.sandbox, g.agent, &g.file);
}

/// Converts `file` to its own format with agentlog and compares.
fn check_written_back(sandbox: &Sandbox, agent: &str, file: &Path) {
    let back = sandbox.project.join(format!("roundtrip-{agent}"));
    agentlog(
        sandbox,
        &[
            "convert",
            &file.display().to_string(),
            "--to",
            agent,
            "-o",
            &back.display().to_string(),
        ],
    );
    // The writer itself gives back every record's value; `convert` into
    // the same format puts the file's own text back where nothing changed,
    // so the file comes back byte for byte.
    // On a difference, the first record that differs (whole values do not
    // fit in what CI prints).
    let (was, is) = (
        json_values(&std::fs::read(file).unwrap()),
        json_values(&std::fs::read(&back).unwrap()),
    );
    if let Some(i) = (0..was.len().max(is.len())).find(|&i| was.get(i) != is.get(i)) {
        let show = |v: Option<&Value>| {
            let t = v.map_or("(none)".into(), Value::to_string);
            t.chars().take(600).collect::<String>()
        };
        panic!(
            "{agent}: reading and writing back in its own format must give the same JSON values; \
             {} records, {} written back; record {i} was {} and is {}",
            was.len(),
            is.len(),
            show(was.get(i)),
            show(is.get(i)),
        );
    }
    assert!(
        std::fs::read(file).unwrap() == std::fs::read(&back).unwrap(),
        "{agent}: {} written back in its own format is not the same file",
        file.display()
    );
}

/// The outcome of one matrix cell.
struct Cell {
    source: &'static str,
    target: &'static str,
    via: &'static str,
    result: Result<String, String>,
}

/// Resumes `src` in `target` through agentlog, continues it with the real
/// target and checks what the model received and what the target wrote.
fn cell(
    src: &Generated,
    target: &'static str,
    url: &str,
    server: &agentlog_harness::MockServer,
    via: &'static str,
) -> Result<String, String> {
    let tsb = Sandbox::new(target, url);
    let mut input = src.file.clone();
    let mut from: Vec<&str> = Vec::new();
    if via != "native" {
        input = tsb.project.join(format!("{}.json", src.agent));
        agentlog(
            &tsb,
            &[
                "convert",
                &src.file.display().to_string(),
                "--to",
                "json",
                "-o",
                &input.display().to_string(),
            ],
        );
        if via == "json --from json" {
            from = vec!["--from", "json"];
        }
    }
    let input_s = input.display().to_string();
    let mut args = vec!["resume", input_s.as_str(), "--in", target, "--json"];
    args.extend(from);
    let report: Value = serde_json::from_str(&agentlog(&tsb, &args)).map_err(|e| e.to_string())?;
    let written = PathBuf::from(report["path"].as_str().ok_or("no path in the report")?);
    let losses: Vec<String> = report["fidelity"]["losses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["what"].as_str().map(str::to_owned))
        .collect();
    let before = std::fs::metadata(&written)
        .map_err(|e| e.to_string())?
        .len();
    let cwd = report["cwd"]
        .as_str()
        .map(PathBuf::from)
        .unwrap_or_else(|| src.sandbox.project.clone());
    let prompt = format!("gamma {}->{target} via {via}", src.agent);
    let arg = tsb.resume_arg(&written);
    tsb.run(&cwd, &prompt, Some(&arg));

    // What the model received on the continued turn.
    let turn = server
        .turns()
        .into_iter()
        .find(|r| r.prompt().contains(&prompt))
        .ok_or_else(|| format!("{target} sent no turn for {prompt:?}"))?;
    let mut expect = own_history(src.agent);
    // A loss of thinking blocks themselves (not of thinking-level changes).
    let thinking_loss = losses
        .iter()
        .find(|l| {
            l.contains("thinking")
                && !l.contains("thinking level")
                && !l.contains("thinking_level")
                // Only the signatures: the thinking itself is written.
                && !l.starts_with("thinking signatures")
        })
        .cloned();
    let thinking_lost = thinking_loss.is_some();
    let mut sent = expect.clone();
    if thinking_lost {
        expect.retain(|(k, _)| *k != "thinking");
    }
    if thinking_lost || !resends_thinking(target) {
        sent.retain(|(k, _)| *k != "thinking");
    }
    let leak: &'static str = Box::leak(prompt.clone().into_boxed_str());
    expect.push(("user", leak));
    sent.push(("user", leak));
    let missing = unmet(&turn.items(), &sent);
    if !missing.is_empty() {
        return Err(format!(
            "the model did not receive {missing:?} (fidelity report: {losses:?})"
        ));
    }
    // The target appended to the file agentlog wrote.
    let after = std::fs::metadata(&written)
        .map_err(|e| e.to_string())?
        .len();
    let text = std::fs::read_to_string(&written).map_err(|e| e.to_string())?;
    if after <= before || !text.contains("gamma-answer") {
        return Err(format!(
            "{target} did not append to {} ({before} -> {after} bytes)",
            written.display()
        ));
    }
    keep(
        &written,
        &format!("matrix/{}-{target}-{}", src.agent, via.replace(' ', "_")),
    );
    let listed = listed_sessions(&tsb);
    if listed != 1 {
        return Err(format!(
            "agentlog ls lists {listed} sessions after {target} continued one: {:?}",
            tsb.session_files()
        ));
    }
    // agentlog reads the appended file completely.
    let session = read_session(&tsb, &written);
    expect.push(("assistant", "gamma-answer"));
    let missing = unmet(&session_items(&session), &expect);
    if !missing.is_empty() {
        return Err(format!(
            "agentlog's reading of the continued file lacks {missing:?}"
        ));
    }
    Ok(if thinking_lost {
        format!(
            "full history; thinking not carried, as the fidelity report says ({:?})",
            thinking_loss.unwrap_or_default()
        )
    } else if !resends_thinking(target) {
        "full history; thinking kept in the file (the CLI never resends it)".to_owned()
    } else {
        "full history with thinking".to_owned()
    })
}

/// The four CLIs (installed), one mock server, and a sandbox for each
/// agent with its project folder.
fn every_agent() -> (
    agentlog_harness::MockServer,
    Vec<Sandbox>,
    Vec<(&'static str, PathBuf)>,
) {
    for a in AGENTS {
        cli(a);
    }
    let server = server(agentlog_harness::Script::default());
    let url = server.url();
    let sandboxes: Vec<Sandbox> = AGENTS.iter().map(|&a| Sandbox::new(a, &url)).collect();
    let projects = sandboxes
        .iter()
        .map(|s| (s.agent, s.project.clone()))
        .collect();
    (server, sandboxes, projects)
}

#[test]
fn real_agents_conformance_matrix() {
    run_or_skip(|| {
        // One server; each agent's prompts carry its name.
        let (server, sandboxes, projects) = every_agent();
        let url = server.url();
        server.set_script(shared_script(&projects));
        let generated: Vec<Generated> = std::thread::scope(|scope| {
            let handles: Vec<_> = sandboxes
                .into_iter()
                .map(|sb| scope.spawn(move || generate(sb)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut failures = Vec::new();
        for g in &generated {
            if let Err(e) =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_read_completely(g)))
            {
                failures.push(format!("{}: {}", g.agent, panic_text(&e)));
            }
        }

        let mut cells: Vec<Cell> = Vec::new();
        std::thread::scope(|scope| {
            let mut handles = Vec::new();
            for (ti, &target) in AGENTS.iter().enumerate() {
                let generated = &generated;
                let server = &server;
                let url = url.clone();
                handles.push(scope.spawn(move || {
                    let mut out = Vec::new();
                    for (si, src) in generated.iter().enumerate() {
                        let mut vias = vec!["native"];
                        if (si + 1) % 4 == ti {
                            vias.push("json");
                        }
                        if (si + 2) % 4 == ti {
                            vias.push("json --from json");
                        }
                        for via in vias {
                            let result =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    cell(src, target, &url, server, via)
                                }))
                                .unwrap_or_else(|e| Err(panic_text(&e)));
                            out.push(Cell {
                                source: src.agent,
                                target,
                                via,
                                result,
                            });
                        }
                    }
                    out
                }));
            }
            for h in handles {
                cells.extend(h.join().unwrap());
            }
        });
        println!("resume matrix (source -> target):");
        for c in &cells {
            match &c.result {
                Ok(what) => println!("  {} -> {} ({}): ok, {what}", c.source, c.target, c.via),
                Err(e) => {
                    println!("  {} -> {} ({}): FAILED", c.source, c.target, c.via);
                    failures.push(format!("{} -> {} ({}): {e}", c.source, c.target, c.via));
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} failures:\n{}",
            failures.len(),
            failures.join("\n\n")
        );
    });
}

/// Each agent compacts a real session (Claude Code by `/compact`, the
/// others on their own at a low threshold) between a turn with thinking and
/// a tool call and a later turn. agentlog must read the turn before, the
/// compaction with the summary the model wrote, and the turn after, in that
/// order on the active branch; list one session; show the compaction; and
/// write the file back in its own format byte for byte.
#[test]
fn real_agents_compact() {
    run_or_skip(|| {
        let (server, sandboxes, projects) = every_agent();
        let mut script = shared_script(&projects).rule(
            agentlog_harness::Rule::new("omega").then(vec![agentlog_harness::text("omega-answer")]),
        );
        // Claude Code's `/compact` asks for the summary beside the last tool
        // results (the latest prompt is still "alpha …"); the others'
        // summary requests match no rule and get the fallback.
        script.rules.insert(
            0,
            agentlog_harness::Rule::new("create a detailed summary")
                .any_request()
                .closing()
                .then(vec![agentlog_harness::text(SUMMARY)]),
        );
        script.fallback = vec![agentlog_harness::text(SUMMARY)];
        server.set_script(script);
        let failures: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = sandboxes
                .into_iter()
                .map(|sb| {
                    scope.spawn(move || {
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compacted(sb)))
                            .err()
                            .map(|e| panic_text(&e))
                    })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|h| h.join().unwrap())
                .collect()
        });
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    });
}

fn compacted(sandbox: Sandbox) {
    let agent = sandbox.agent;
    // pi compacts when a turn ends, Codex and Gemini CLI when the next one
    // starts (Codex also between the rounds of a turn): pi's threshold is
    // lowered before the first turn, theirs after it.
    if agent == "pi" {
        sandbox.enable_compaction();
    }
    sandbox.run(
        &sandbox.project,
        &format!("alpha {agent}: list the files"),
        None,
    );
    if agent != "pi" {
        sandbox.enable_compaction();
    }
    let file = sandbox.newest_session();
    sandbox.compact(&file);
    let arg = sandbox.resume_arg(&file);
    sandbox.run(
        &sandbox.project,
        &format!("omega {agent}: go on"),
        Some(&arg),
    );
    keep(&file, &format!("compacted/{agent}"));
    assert_eq!(
        listed_sessions(&sandbox),
        1,
        "{agent}: a compacted session must be listed once"
    );
    let session = read_session(&sandbox, &file);
    assert_compacted(&session, agent);
    let shown = agentlog(&sandbox, &["show", &file.display().to_string()]);
    assert!(
        shown.contains("compaction") && shown.contains(SUMMARY),
        "{agent}: show does not print the compaction:\n{shown}"
    );
    check_written_back(&sandbox, agent, &file);
}

fn panic_text(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "panic".to_owned())
}

/// How long acpx waits for Gemini CLI to answer ACP `initialize` (acpx's
/// own default, 15 s, is less than a Node CLI's start takes on a loaded
/// 2-core machine).
const GEMINI_ACP_STARTUP: Duration = Duration::from_secs(150);

/// How long acpx waits for the agent's answer to one request (its
/// `--timeout`; without it acpx waits forever). Below the harness's own
/// limit, so acpx reports a stall itself, naming what it waited for.
const ACPX_AGENT_TIMEOUT: Duration = Duration::from_secs(200);

/// Runs the real acpx (on Node 22) in the Gemini CLI sandbox `sandbox`:
/// acpx starts `gemini --acp`, which finds the mock through the sandbox's
/// environment. A failure says which of the two stalled and why.
fn acpx(sandbox: &Sandbox, args: &[&str], stdin: Option<&str>) -> String {
    let dirs: Vec<PathBuf> = ["node22", "gemini"]
        .iter()
        .map(|n| cli(n).parent().unwrap().to_path_buf())
        .collect();
    let mut env = sandbox.env();
    for (k, v) in env.iter_mut() {
        if k == "PATH" {
            let mut paths = dirs.clone();
            paths.extend(std::env::split_paths(v));
            *v = std::env::join_paths(paths)
                .unwrap()
                .to_string_lossy()
                .into_owned();
        }
    }
    env.push((
        "ACPX_GEMINI_ACP_STARTUP_TIMEOUT_MS".into(),
        GEMINI_ACP_STARTUP.as_millis().to_string(),
    ));
    let mut cmd = std::process::Command::new(cli("acpx"));
    cmd.arg("--approve-all")
        .args(["--timeout", &ACPX_AGENT_TIMEOUT.as_secs().to_string()])
        .args(args);
    if let Some(text) = stdin {
        let input = sandbox.project.join(".acpx-prompt");
        std::fs::write(&input, text).unwrap();
        cmd.args(["-f", &input.display().to_string()]);
    }
    let what = format!("acpx {args:?}");
    match run_cmd_outcome(cmd, &sandbox.project, &env, &what) {
        Outcome::Success(stdout) => stdout,
        Outcome::Failed {
            status,
            stdout,
            stderr,
        } => panic!(
            "{what} failed ({status}): {}\n(load average {})\nstdout:\n{stdout}\nstderr:\n{stderr}",
            acpx_diagnosis(status.code(), &stderr),
            load_average()
        ),
        Outcome::Stalled { stdout, stderr } => panic!(
            "{what} stalled: acpx itself did not exit in {:?} (its own limits are {:?} for Gemini CLI's start and {:?} per request), so acpx, not Gemini CLI, hung\n(load average {})\nstdout:\n{stdout}\nstderr:\n{stderr}",
            COMMAND_LIMIT,
            GEMINI_ACP_STARTUP,
            ACPX_AGENT_TIMEOUT,
            load_average()
        ),
    }
}

/// Which agent stalled, and why, from acpx's exit code and its error.
fn acpx_diagnosis(code: Option<i32>, stderr: &str) -> String {
    if stderr.contains("startup timed out before initialize") {
        format!(
            "Gemini CLI stalled: started by acpx as `gemini --acp`, it did not answer ACP initialize within {:?}",
            GEMINI_ACP_STARTUP
        )
    } else if code == Some(3) {
        format!(
            "Gemini CLI stalled: it did not answer an acpx request within acpx's --timeout of {:?}",
            ACPX_AGENT_TIMEOUT
        )
    } else if code == Some(4) {
        "acpx found no session for the request".to_owned()
    } else {
        "acpx or Gemini CLI failed (see acpx's error below)".to_owned()
    }
}

/// acpx, driving Gemini CLI against the mock model server, writes real
/// sessions that agentlog reads completely (the prompts, the thinking, the
/// tool call, the answers, and the token usage its event log records), and
/// writes back as the same JSON values. Then a Claude Code session is
/// resumed through agentlog in Gemini CLI and that chat in acpx: the real
/// acpx lists the record agentlog wrote, reads its history, and continues
/// it, with the whole prior conversation reaching the model (Gemini CLI
/// loads its chat), the new turn appended to the record, and agentlog
/// reading it.
#[test]
fn real_acpx_sessions_both_ways() {
    run_or_skip(|| {
        for a in ["gemini", "node22", "acpx"] {
            cli(a);
        }
        let server = server(agentlog_harness::Script::default());
        let sandbox = Sandbox::new("gemini", &server.url());
        let (text, thinking) = (agentlog_harness::text, agentlog_harness::thinking);
        let mut script = shared_script(&[("gemini", sandbox.project.clone())]);
        script.rules.insert(
            0,
            agentlog_harness::Rule::new("alpha acpx")
                .then(vec![
                    thinking("alpha-thinking-acpx"),
                    shell_call("gemini", "alpha-tool-output-acpx"),
                ])
                .then(vec![text("alpha-answer-acpx")]),
        );
        script.rules.insert(
            0,
            agentlog_harness::Rule::new("beta acpx").then(vec![text("beta-answer-acpx")]),
        );
        server.set_script(script);

        // acpx's own session.
        acpx(&sandbox, &["gemini", "sessions", "new"], None);
        acpx(
            &sandbox,
            &["gemini", "prompt", "alpha acpx: list the files"],
            None,
        );
        acpx(&sandbox, &["gemini", "prompt", "beta acpx: and then"], None);
        let dir = sandbox.home.join(".acpx/sessions");
        let records: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        assert_eq!(records.len(), 1, "acpx wrote {records:?}");
        let record = &records[0];
        // Kept under their own names: the reader finds the event log by the
        // record's id.
        for f in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            let dest = repo().join("target/harness-out/acpx").join(&name);
            std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
            std::fs::copy(f.path(), dest).unwrap();
        }
        let session = read_session(&sandbox, record);
        assert_holds(
            &session_items(&session),
            &acpx_history(),
            "the record acpx wrote",
        );
        let usage = session.total_usage();
        assert!(
            usage.input > 0 && usage.output > 0,
            "the token usage acpx's event log records was not read: {usage:?}"
        );
        check_written_back(&sandbox, "acpx", record);

        // A Claude Code session (the fixture the CLI wrote) continued
        // through acpx: agentlog resumes it in Gemini CLI, then that chat in
        // acpx. (The chat is named for the session's start, days ago:
        // Gemini CLI's ACP mode, asked to load a chat whose file name has the
        // current minute, appends a fresh start to that same file, and the
        // conversation is gone from its view.)
        let fixture = repo().join("crates/harness/fixtures/claude-2.1.330.jsonl");
        let project = sandbox.project.display().to_string();
        let resumed = |file: &Path, target: &str| -> Value {
            serde_json::from_str(&agentlog(
                &sandbox,
                &[
                    "resume",
                    &file.display().to_string(),
                    "--in",
                    target,
                    "--cwd",
                    &project,
                    "--json",
                ],
            ))
            .unwrap()
        };
        let chat = PathBuf::from(resumed(&fixture, "gemini")["path"].as_str().unwrap());
        let report = resumed(&chat, "acpx");
        let written = PathBuf::from(report["path"].as_str().unwrap());
        let command = report["command"].as_str().unwrap();
        let name = command
            .split_whitespace()
            .skip_while(|w| *w != "-s")
            .nth(1)
            .unwrap_or_else(|| panic!("no session name in {command:?}"))
            .to_owned();
        let listed = acpx(&sandbox, &["gemini", "sessions", "list"], None);
        assert!(
            listed.contains(&name),
            "acpx does not list the record agentlog wrote ({name}):\n{listed}"
        );
        let history = acpx(&sandbox, &["gemini", "sessions", "read", &name], None);
        assert!(
            history.contains("alpha claude") && history.contains("alpha-answer-claude"),
            "acpx does not read the history agentlog wrote:\n{history}"
        );
        let before = std::fs::metadata(&written).unwrap().len();
        acpx(
            &sandbox,
            &["gemini", "-s", &name],
            Some("gamma acpx: go on"),
        );
        let turn = server
            .turns()
            .into_iter()
            .find(|r| r.prompt().contains("gamma acpx"))
            .expect("acpx sent no turn for the continued session");
        let missing = unmet(
            &turn.items(),
            &vec![
                ("user", "alpha claude"),
                ("tool_call", "alpha-tool-output-claude"),
                ("tool_result", "alpha-tool-output-claude"),
                ("assistant", "alpha-answer-claude"),
                ("user", "beta claude"),
                ("tool_call", "beta-content-claude"),
                ("assistant", "beta-answer-claude"),
                ("user", "gamma acpx"),
            ],
        );
        assert!(
            missing.is_empty(),
            "the model did not receive {missing:?} when acpx continued the session; it got:\n{}",
            turn.items()
                .iter()
                .map(|i| format!(
                    "  {}: {}",
                    kind_of(i),
                    i.text().chars().take(80).collect::<String>()
                ))
                .collect::<Vec<_>>()
                .join("\n")
        );
        let text = std::fs::read_to_string(&written).unwrap();
        assert!(
            std::fs::metadata(&written).unwrap().len() > before && text.contains("gamma-answer"),
            "acpx did not append the new turn to {}",
            written.display()
        );
        keep(&written, "acpx/resumed");
        let continued = read_session(&sandbox, &written);
        assert_holds(
            &session_items(&continued),
            &vec![
                ("user", "alpha claude"),
                ("assistant", "alpha-answer-claude"),
                ("user", "beta claude"),
                ("assistant", "beta-answer-claude"),
                ("user", "gamma acpx"),
                ("assistant", "gamma-answer"),
            ],
            "the record acpx continued",
        );
    });
}
