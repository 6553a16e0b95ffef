//! The agents read beyond the first five, generated live: each installable
//! CLI (installed by `scripts/install-more-agent-clis.sh` into
//! `target/agents/<name>`) runs non-interactively in a temporary HOME against
//! the mock model server, and agentlog must read every prompt, answer,
//! thinking block, tool call, tool result and usage figure of the files it
//! wrote, and write record files back exactly. Where the agent resumes from
//! its files, it is also given a session agentlog converted from another
//! agent and must send that conversation to the model.
//!
//! When `CI` is set a missing CLI fails the test; elsewhere the test says it
//! skipped and why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_formats::discover::DiscoverEnv;
use agentlog_formats::{registry, Format};
use agentlog_harness::{text, thinking, tool_call, Item, MockServer, Part, Recorded, Rule, Script};
use agentlog_model::{BlockKind, Role, Session};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The installed CLI `bin` of `name`, or `None` (after saying why) when it
/// is missing outside CI.
fn cli(name: &str, bin: &str) -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"));
    let path = target.join("agents").join(name).join(bin);
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "{} is not installed (bash scripts/install-more-agent-clis.sh {name})",
        path.display()
    );
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("skipped: {why}");
    None
}

/// Runs `cmd` (with a time limit) and returns its output, failing the test
/// with the agent's output when it fails.
fn run(mut cmd: Command, what: &str) -> String {
    let out = cmd.output().expect("starting the agent");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    stdout
}

/// A command with a clean environment: HOME, PATH and no colours.
fn command(bin: &Path, home: &Path, cwd: &Path, extra_path: Option<&Path>) -> Command {
    // The agent's temporary files (OpenHands leaves its editor's history
    // there) go in the test's own folder, removed with it.
    let tmp = home.join(".tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut c = Command::new("timeout");
    c.arg("240").arg(bin);
    let mut path = std::env::var("PATH").unwrap_or_default();
    if let Some(p) = extra_path {
        path = format!("{}:{path}", p.display());
    }
    c.env_clear()
        .env("HOME", home)
        .env("TMPDIR", tmp)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .current_dir(cwd);
    c
}

/// The token counts the mock server reports for `reply` (its documented
/// rule: a quarter of the text's bytes plus one per part, plus one).
fn reply_tokens(reply: &[Part]) -> (u64, u64) {
    let mut output = 1;
    let mut thinking = 0;
    for p in reply {
        match p {
            Part::Text(t) => output += (t.len() / 4) as u64 + 1,
            Part::Thinking(t) => thinking += (t.len() / 4) as u64 + 1,
            Part::ToolCall(c) => output += (c.arguments.to_string().len() / 4) as u64 + 1,
        }
    }
    (output, thinking)
}

/// The input tokens the mock server reported for a request.
fn request_tokens(r: &Recorded) -> u64 {
    (r.body.to_string().len() / 4) as u64 + 1
}

fn texts(s: &Session, role: &Role) -> Vec<String> {
    s.entries
        .iter()
        .filter_map(|e| e.message())
        .filter(|m| &m.role == role)
        .filter(|m| m.injected.is_none())
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match &b.kind {
            BlockKind::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn thinking_texts(s: &Session) -> Vec<String> {
    s.entries
        .iter()
        .filter_map(|e| e.message())
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match &b.kind {
            BlockKind::Thinking { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn calls(s: &Session) -> Vec<(String, Value)> {
    s.entries
        .iter()
        .filter_map(|e| e.message())
        .flat_map(|m| m.content.iter())
        .filter_map(|b| match &b.kind {
            BlockKind::ToolCall { name, input, .. } => Some((name.clone(), input.clone())),
            _ => None,
        })
        .collect()
}

fn results(s: &Session) -> Vec<String> {
    s.entries
        .iter()
        .filter_map(|e| e.message())
        .flat_map(|m| m.content.iter())
        .filter(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
        .map(|b| b.plain_text().unwrap_or_default())
        .collect()
}

/// Reads the file back through its format and checks that writing it gives
/// the same JSON values line by line.
fn assert_round_trip(format: &dyn Format, path: &Path) {
    let read = format.read_path(path).unwrap();
    let mut out = Vec::new();
    let fidelity = format.write(&read.session, &mut out).unwrap();
    assert!(fidelity.is_lossless(), "{fidelity:?}");
    let lines = |b: &[u8]| -> Vec<Value> {
        String::from_utf8_lossy(b)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    assert_eq!(
        lines(&std::fs::read(path).unwrap()),
        lines(&out),
        "{}",
        path.display()
    );
}

/// The conversation every agent is given: a listing with thinking and a
/// shell call, then a second prompt (on resume or continue).
fn listing_script(shell: &str, args: Value) -> (Script, Vec<Vec<Part>>) {
    let first = vec![
        thinking("I should look at the files first."),
        tool_call(shell, args),
    ];
    let second = vec![text("There is one file here: README.")];
    let third = vec![text("Nothing else to add.")];
    let script = Script::default()
        .rule(
            Rule::new("What files are here")
                .then(first.clone())
                .then(second.clone()),
        )
        .rule(Rule::new("Anything else").then(third.clone()));
    (script, vec![first, second, third])
}

/// The sessions `format` finds under `home` (with `vars` set).
fn sessions(format: &dyn Format, home: &Path, vars: &[(&str, &Path)]) -> Vec<PathBuf> {
    let mut env = DiscoverEnv::with_home(home);
    for (k, v) in vars {
        env.vars.insert(k.to_string(), v.display().to_string());
    }
    format.discover(&env)
}

/// Checks a session generated with [`listing_script`]: prompts, thinking,
/// the call and its result, the answers, and the usage of every turn.
fn check_listing(s: &Session, server: &MockServer, replies: &[Vec<Part>], shell: &str) {
    check_listing_as(s, server, replies, shell, Keeps::All);
}

/// What an agent keeps of the model's reasoning.
#[derive(Clone, Copy, PartialEq)]
enum Keeps {
    /// The text, and its tokens apart from the output's.
    All,
    /// The text; its tokens only within the output's (Kimi).
    TextNotTokens,
    /// Its tokens, not the text (Continue CLI).
    TokensNotText,
}

/// As [`check_listing`], for an agent that keeps `keeps` of the reasoning
/// (the mock reports its tokens apart and within the output).
fn check_listing_as(
    s: &Session,
    server: &MockServer,
    replies: &[Vec<Part>],
    shell: &str,
    keeps: Keeps,
) {
    let users = texts(s, &Role::User);
    assert!(
        users.iter().any(|u| u.contains("What files are here?")),
        "{users:?}"
    );
    assert!(
        users.iter().any(|u| u.contains("Anything else?")),
        "{users:?}"
    );
    assert_eq!(
        thinking_texts(s).contains(&"I should look at the files first.".to_string()),
        keeps != Keeps::TokensNotText,
        "{:?}",
        thinking_texts(s)
    );
    let c = calls(s);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].0, shell);
    let r = results(s);
    assert_eq!(r.len(), 1, "{r:?}");
    // The result is what the agent sent back to the model (whatever the
    // shell printed on this machine).
    let sent: Vec<String> = server
        .requests()
        .iter()
        .flat_map(|q| q.items())
        .filter_map(|i| match i {
            Item::ToolResult { output } => Some(output),
            _ => None,
        })
        .collect();
    let got = r[0].trim();
    assert!(
        !got.is_empty()
            && sent
                .iter()
                .any(|o| o.contains(got) || got.contains(o.trim())),
        "result {got:?} is not what the model received: {sent:?}"
    );
    let answers = texts(s, &Role::Assistant);
    assert!(
        answers.contains(&"There is one file here: README.".to_string()),
        "{answers:?}"
    );
    assert!(
        answers.contains(&"Nothing else to add.".to_string()),
        "{answers:?}"
    );
    // Usage: each answer carries the figures the mock reported for the
    // model turn that produced it (agents may make further tool-declaring
    // requests of their own, e.g. a next-speaker check, that are not turns
    // of the conversation).
    let turn_inputs: Vec<u64> = server.turns().iter().map(request_tokens).collect();
    let reply_outputs: Vec<u64> = replies
        .iter()
        .map(|r| {
            let (o, t) = reply_tokens(r);
            o + t
        })
        .collect();
    let usages: Vec<agentlog_model::Usage> = s
        .entries
        .iter()
        .filter_map(|e| e.message())
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| m.usage.clone())
        .collect();
    assert_eq!(
        usages.len(),
        replies.len(),
        "answers with usage: {usages:?}"
    );
    for u in &usages {
        assert!(
            reply_outputs.contains(&u.output),
            "output {u:?} not in {reply_outputs:?}"
        );
        assert!(
            turn_inputs.contains(&(u.input + u.cache_read)),
            "input {u:?} not in {turn_inputs:?}"
        );
    }
    assert_eq!(
        usages.iter().map(|u| u.output).sum::<u64>(),
        reply_outputs.iter().sum::<u64>(),
        "output tokens"
    );
    let think: u64 = replies.iter().map(|r| reply_tokens(r).1).sum();
    assert_eq!(
        usages.iter().map(|u| u.reasoning).sum::<u64>(),
        if keeps == Keeps::TextNotTokens {
            0
        } else {
            think
        },
        "reasoning tokens"
    );
}

/// Checks that the answers of `s` with usage have, in order, the usage the
/// mock reported for each model call (`replies` in order): its input, and
/// its output with the reasoning in it. Returns those usages.
fn check_usage_per_call(
    s: &Session,
    server: &MockServer,
    replies: &[Vec<Part>],
) -> Vec<agentlog_model::Usage> {
    let usages: Vec<agentlog_model::Usage> = s
        .entries
        .iter()
        .filter_map(|e| e.message())
        .filter_map(|m| m.usage.clone())
        .collect();
    let inputs: Vec<u64> = server.turns().iter().map(request_tokens).collect();
    assert_eq!(
        usages
            .iter()
            .map(|u| u.input + u.cache_read)
            .collect::<Vec<_>>(),
        inputs
    );
    let outputs: Vec<u64> = replies
        .iter()
        .map(|r| {
            let (o, t) = reply_tokens(r);
            o + t
        })
        .collect();
    assert_eq!(usages.iter().map(|u| u.output).collect::<Vec<_>>(), outputs);
    usages
}

/// The real Copilot CLI session (with a tool call and its result) that the
/// resume tests continue in another agent.
const COPILOT_FIXTURE: &str = "crates/formats/tests/fixtures/copilot/1.0.102/session-state/b034d159-7f8a-4e2f-b736-4b964fdc4bb1/events.jsonl";

/// Does what `agentlog resume --in <target>` does with the Copilot fixture
/// set in `cwd`: plans where `target`'s agent looks under `home`, writes
/// the converted session there and registers it. Returns the session and
/// the plan.
fn place_converted_copilot(
    target: &str,
    home: &Path,
    cwd: &Path,
) -> (Session, agentlog_formats::ResumePlan) {
    let copilot = registry::by_name("copilot").unwrap();
    let mut s = copilot
        .read_path(&workspace().join(COPILOT_FIXTURE))
        .unwrap()
        .session;
    s.meta.cwd = Some(cwd.display().to_string());
    let f = registry::by_name(target).unwrap();
    let env = DiscoverEnv::with_home(home);
    let plan = f.resume_plan(&s, &env).unwrap();
    std::fs::create_dir_all(plan.path.parent().unwrap()).unwrap();
    let (written, _) = f.write_resumable(&s, &plan).unwrap();
    written.write_plain(&plan.path).unwrap();
    f.register_resumed(&s, &plan, &env).unwrap();
    (s, plan)
}

/// Checks that `s` holds one tool result, and that it is what the model
/// received as the result of its call.
fn check_one_result_sent(s: &Session, server: &MockServer) {
    let r = results(s);
    assert_eq!(r.len(), 1, "{r:?}");
    let sent = sent_results(server);
    assert!(
        sent.iter().any(|o| o.contains(r[0].trim())),
        "result {:?} is not what the model received: {sent:?}",
        r[0],
    );
}

/// Checks a continued session converted from the Copilot fixture: the
/// model received the new prompt, the converted history and the call's
/// result as a tool result, and the file the agent continued (`path`)
/// reads back from the first prompt to the new one.
fn check_converted_continued(server: &MockServer, format: &str, path: &Path, prompt: &str) {
    assert!(model_saw(server, prompt));
    assert!(
        model_saw(server, "What files are here?"),
        "the converted history was not sent"
    );
    let sent = sent_results(server);
    assert!(sent.iter().any(|o| o.contains("README")), "{sent:?}");
    check_read_back(format, path, prompt);
}

/// Checks that the session the agent continued at `path` reads back from
/// the converted Copilot session's first prompt to the new `prompt`.
fn check_read_back(format: &str, path: &Path, prompt: &str) {
    let back = registry::by_name(format)
        .unwrap()
        .read_path(path)
        .unwrap()
        .session;
    let prompts = back.prompts();
    assert_eq!(
        prompts.first().map(String::as_str),
        Some("What files are here?")
    );
    assert_eq!(prompts.last().map(String::as_str), Some(prompt));
}

/// True when some model request carried `needle` in a user item.
fn model_saw(server: &MockServer, needle: &str) -> bool {
    server.requests().iter().any(|r| {
        r.items()
            .iter()
            .any(|i| matches!(i, Item::User { text } if text.contains(needle)))
    })
}

fn project(dir: &Path) -> PathBuf {
    let p = dir.join("proj");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("README"), "hello\n").unwrap();
    p
}

// ---- GitHub Copilot CLI ----

fn copilot_cmd(bin: &Path, home: &Path, cwd: &Path, url: &str) -> Command {
    let mut c = command(bin, home, cwd, None);
    c.env("COPILOT_PROVIDER_BASE_URL", format!("{url}/v1"))
        .env("COPILOT_PROVIDER_TYPE", "openai")
        .env("COPILOT_PROVIDER_API_KEY", "sk-mock")
        .env("COPILOT_OFFLINE", "true");
    c
}

#[test]
fn copilot_sessions_are_read_completely_and_round_trip() {
    let Some(bin) = cli("copilot", "node_modules/.bin/copilot") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let (script, replies) = listing_script(
        "bash",
        json!({"command": "ls", "description": "List files"}),
    );
    let server = MockServer::start(script).unwrap();
    let mut c = copilot_cmd(&bin, &home, &cwd, &server.url());
    c.args([
        "-p",
        "What files are here?",
        "--allow-all-tools",
        "--model",
        "mock-model",
    ]);
    run(c, "copilot -p");
    let f = registry::by_name("copilot").unwrap();
    let found = sessions(f, &home, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    let id = f.read_path(&found[0]).unwrap().session.meta.id;
    let mut c = copilot_cmd(&bin, &home, &cwd, &server.url());
    c.args([
        &format!("--resume={id}"),
        "-p",
        "Anything else?",
        "--allow-all-tools",
        "--model",
        "mock-model",
    ]);
    run(c, "copilot --resume");
    let s = f.read_path(&found[0]).unwrap().session;
    check_listing(&s, &server, &replies, "bash");
    assert_round_trip(f, &found[0]);
    assert_eq!(f.drift(&f.read_path(&found[0]).unwrap()), vec![], "drift");
}

#[test]
fn copilot_resumes_a_session_agentlog_converted() {
    let Some(bin) = cli("copilot", "node_modules/.bin/copilot") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let server =
        MockServer::start(Script::default().rule(Rule::new("").then(vec![text("ok")]))).unwrap();
    // A Qwen Code chat (written by the real Qwen Code) continued in Copilot.
    let qwen = registry::by_name("qwen").unwrap();
    let src = workspace().join(
        "crates/formats/tests/fixtures/qwen/0.24.4/projects/-tmp-agmock-qw1-proj/chats/feb0a428-4ff4-43a5-9a2b-f15eacffa88d.jsonl",
    );
    let mut s = qwen.read_path(&src).unwrap().session;
    s.meta.cwd = Some(cwd.display().to_string());
    let f = registry::by_name("copilot").unwrap();
    let plan = f.resume_plan(&s, &DiscoverEnv::with_home(&home)).unwrap();
    std::fs::create_dir_all(plan.path.parent().unwrap()).unwrap();
    let mut out = Vec::new();
    f.write(&s, &mut out).unwrap();
    std::fs::write(&plan.path, out).unwrap();
    let id = plan
        .path
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let mut c = copilot_cmd(&bin, &home, &cwd, &server.url());
    c.args([
        &format!("--resume={id}"),
        "-p",
        "Continue please",
        "--allow-all-tools",
        "--model",
        "mock-model",
    ]);
    run(c, "copilot --resume of a converted session");
    assert!(model_saw(&server, "Continue please"));
    assert!(
        model_saw(&server, "What files are here?"),
        "the converted history was not sent"
    );
    // And what Copilot appended still reads.
    let s2 = f.read_path(&plan.path).unwrap().session;
    assert!(texts(&s2, &Role::Assistant).contains(&"ok".to_string()));
}

// ---- OpenCode and Kilo Code ----

fn opencode_like(name: &str, bin: &str, config: &str) {
    let Some(bin) = cli(name, bin) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let (script, replies) = listing_script(
        "bash",
        json!({"command": "ls", "description": "List files"}),
    );
    let server = MockServer::start(script).unwrap();
    let cfg = json!({
        "provider": {"mock": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Mock",
            "options": {"baseURL": format!("{}/v1", server.url()), "apiKey": "sk-mock"},
            "models": {"mock-model": {"name": "Mock Model"}}
        }},
        "model": "mock/mock-model",
        "small_model": "mock/mock-model",
        "autoupdate": false,
        "share": "disabled"
    });
    std::fs::write(cwd.join(config), cfg.to_string()).unwrap();
    let mut c = command(&bin, &home, &cwd, None);
    c.args(["run", "What files are here?"]);
    run(c, &format!("{name} run"));
    let mut c = command(&bin, &home, &cwd, None);
    c.args(["run", "--continue", "Anything else?"]);
    run(c, &format!("{name} run --continue"));
    let f = registry::by_name(name).unwrap();
    let found = sessions(f, &home, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(registry::detect(&found[0]).unwrap().name(), name);
    let read = f.read_path(&found[0]).unwrap();
    assert_eq!(f.drift(&read), vec![], "drift");
    check_listing(&read.session, &server, &replies, "bash");
}

#[test]
fn opencode_sessions_are_read_completely() {
    opencode_like("opencode", "node_modules/.bin/opencode", "opencode.json");
}

#[test]
fn kilo_sessions_are_read_completely() {
    opencode_like("kilo", "node_modules/.bin/kilo", "kilo.json");
}

// ---- Qwen Code ----

fn qwen_cmd(bin: &Path, home: &Path, cwd: &Path, url: &str) -> Command {
    // Qwen Code needs Node 22, installed beside it (npm `node@22`).
    let node = bin.parent().unwrap().to_path_buf();
    let mut c = command(bin, home, cwd, Some(&node));
    c.env("OPENAI_BASE_URL", format!("{url}/v1"))
        .env("OPENAI_API_KEY", "sk-mock")
        .env("OPENAI_MODEL", "mock-model")
        .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1");
    c
}

#[test]
fn qwen_sessions_are_read_completely_and_round_trip() {
    let Some(bin) = cli("qwen", "node_modules/.bin/qwen") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let (script, replies) = listing_script(
        "run_shell_command",
        json!({"command": "ls", "description": "List files"}),
    );
    let server = MockServer::start(script).unwrap();
    let mut c = qwen_cmd(&bin, &home, &cwd, &server.url());
    c.args([
        "-p",
        "What files are here?",
        "--yolo",
        "--auth-type",
        "openai",
    ]);
    run(c, "qwen -p");
    let mut c = qwen_cmd(&bin, &home, &cwd, &server.url());
    c.args([
        "--continue",
        "-p",
        "Anything else?",
        "--yolo",
        "--auth-type",
        "openai",
    ]);
    run(c, "qwen --continue");
    let f = registry::by_name("qwen").unwrap();
    let found = sessions(f, &home, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    let read = f.read_path(&found[0]).unwrap();
    check_listing(&read.session, &server, &replies, "run_shell_command");
    assert_round_trip(f, &found[0]);
}

#[test]
fn qwen_resumes_a_session_agentlog_converted() {
    let Some(bin) = cli("qwen", "node_modules/.bin/qwen") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let server =
        MockServer::start(Script::default().rule(Rule::new("").then(vec![text("ok")]))).unwrap();
    // A Copilot session (written by the real Copilot CLI) continued in Qwen.
    let (s, _) = place_converted_copilot("qwen", &home, &cwd);
    let mut c = qwen_cmd(&bin, &home, &cwd, &server.url());
    c.args([
        "--resume",
        &s.meta.id,
        "-p",
        "Continue please",
        "--yolo",
        "--auth-type",
        "openai",
    ]);
    run(c, "qwen --resume of a converted session");
    assert!(model_saw(&server, "Continue please"));
    assert!(
        model_saw(&server, "What files are here?"),
        "the converted history was not sent"
    );
}

/// A Factory Droid command whose custom model is the mock server (no login:
/// `~/.factory/settings.json` names an OpenAI-compatible endpoint).
fn droid_cmd(bin: &Path, home: &Path, cwd: &Path, url: &str) -> Command {
    let settings = json!({"customModels": [{
        "model": "mock-model",
        "displayName": "Mock",
        "baseUrl": format!("{url}/v1"),
        "apiKey": "sk-mock",
        "provider": "generic-chat-completion-api",
        "maxOutputTokens": 4096,
    }]});
    std::fs::create_dir_all(home.join(".factory")).unwrap();
    std::fs::write(home.join(".factory/settings.json"), settings.to_string()).unwrap();
    let mut c = command(bin, home, cwd, None);
    // Droid asks Factory's API about a session before continuing it; the
    // mock answers those requests with errors, and Droid then continues
    // from its local file (nothing leaves the machine).
    c.env("FACTORY_API_BASE_URL", url);
    c
}

#[test]
fn droid_sessions_are_read_completely() {
    let Some(bin) = cli("droid", "node_modules/.bin/droid") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let (script, replies) = listing_script(
        "Execute",
        json!({"command": "ls", "summary": "List the files here", "riskLevel": "low",
               "riskLevelReason": "It only lists files"}),
    );
    let server = MockServer::start(script).unwrap();
    let mut c = droid_cmd(&bin, &home, &cwd, &server.url());
    c.args([
        "exec",
        "-m",
        "mock-model",
        "--auto",
        "low",
        "What files are here?",
    ]);
    run(c, "droid exec");
    let f = registry::by_name("droid").unwrap();
    let found = sessions(f, &home, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    let id = f.read_path(&found[0]).unwrap().session.meta.id;
    // Continued in a second run, by its id.
    let mut c = droid_cmd(&bin, &home, &cwd, &server.url());
    c.args([
        "exec",
        "-m",
        "mock-model",
        "--auto",
        "low",
        "-s",
        &id,
        "Anything else?",
    ]);
    run(c, "droid exec -s");
    let found = sessions(f, &home, &[]);
    assert_eq!(found.len(), 1, "one session, continued: {found:?}");
    let read = f.read_path(&found[0]).unwrap();
    let s = &read.session;
    assert_eq!(s.meta.id, id);
    assert_eq!(s.meta.cwd.as_deref(), Some(cwd.to_str().unwrap()));
    assert_eq!(s.prompts(), ["What files are here?", "Anything else?"]);
    let c = calls(s);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].0, "Execute");
    assert_eq!(c[0].1["command"], "ls");
    let r = results(s);
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(r[0].contains("README"), "the listing: {r:?}");
    let answers = texts(s, &Role::Assistant);
    for a in ["There is one file here: README.", "Nothing else to add."] {
        assert!(answers.iter().any(|x| x.contains(a)), "{answers:?}");
    }
    // Droid keeps the session's token total, not each reply's: it is what
    // the mock reported over every turn.
    let total = s.total_usage();
    let outputs: u64 = replies
        .iter()
        .map(|r| {
            let (o, t) = reply_tokens(r);
            o + t
        })
        .sum();
    assert!(total.output > 0, "{total:?}");
    assert!(
        total.output <= outputs + 16,
        "output {} against {outputs} replied",
        total.output
    );
    assert!(total.input > 0, "{total:?}");
    assert!(
        read.diagnostics
            .iter()
            .all(|d| d.severity != agentlog_formats::Severity::Error),
        "{:?}",
        read.diagnostics
    );
    assert!(
        f.validate(&found[0])
            .unwrap()
            .iter()
            .all(|d| d.severity != agentlog_formats::Severity::Error),
        "validate"
    );
}

#[test]
fn droid_resumes_a_session_agentlog_converted() {
    let Some(bin) = cli("droid", "node_modules/.bin/droid") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let server =
        MockServer::start(Script::default().rule(Rule::new("").then(vec![text("ok")]))).unwrap();
    // A Copilot session (written by the real Copilot CLI, with a tool call
    // and its result) continued in Droid.
    let (_, plan) = place_converted_copilot("droid", &home, &cwd);
    let f = registry::by_name("droid").unwrap();
    assert!(
        plan.command.starts_with("droid --resume "),
        "{}",
        plan.command
    );
    let id = f.read_path(&plan.path).unwrap().session.meta.id;
    let mut c = droid_cmd(&bin, &home, &cwd, &server.url());
    c.args([
        "exec",
        "-m",
        "mock-model",
        "--auto",
        "low",
        "-s",
        &id,
        "Continue please",
    ]);
    run(c, "droid exec -s of a converted session");
    assert!(model_saw(&server, "Continue please"));
    assert!(
        model_saw(&server, "What files are here?"),
        "the converted history was not sent"
    );
    // The call and its result reached the model as a call and a result.
    let sent: Vec<Item> = server.requests().iter().flat_map(|q| q.items()).collect();
    assert!(
        sent.iter().any(|i| matches!(i, Item::ToolResult { .. })),
        "no tool result in {sent:?}"
    );
    // Droid continued the file agentlog wrote, and agentlog reads it all.
    let found = sessions(f, &home, &[]);
    assert_eq!(found, std::slice::from_ref(&plan.path));
    let back = f.read_path(&plan.path).unwrap().session;
    let prompts = back.prompts();
    assert!(
        prompts
            .first()
            .is_some_and(|p| p.contains("What files are here?"))
            && prompts.last().is_some_and(|p| p == "Continue please"),
        "{prompts:?}"
    );
}

// ---- Mistral Vibe ----

/// A Vibe command whose one provider is the mock server (`config.toml` in
/// `~/.vibe`), with telemetry, update checks and experiments off.
fn vibe_cmd(bin: &Path, home: &Path, cwd: &Path, url: &str) -> Command {
    let config = format!(
        "active_model = \"mock\"\nenable_telemetry = false\nenable_update_checks = false\n\
         [experiments]\nenable = false\n\
         [[providers]]\nname = \"mock\"\napi_base = \"{url}/v1\"\napi_key_env_var = \"MOCK_API_KEY\"\n\
         [[models]]\nname = \"mock-model\"\nprovider = \"mock\"\nalias = \"mock\"\n"
    );
    std::fs::create_dir_all(home.join(".vibe")).unwrap();
    std::fs::write(home.join(".vibe/config.toml"), config).unwrap();
    let mut c = command(bin, home, cwd, None);
    c.env("MOCK_API_KEY", "sk-mock");
    c
}

/// Runs the listing conversation in Vibe (`extra` are the version's flags)
/// and returns the mock server, the replies and the sessions found.
fn vibe_listing(
    name: &str,
    extra: &[&str],
    home: &Path,
    cwd: &Path,
) -> Option<(MockServer, Vec<Vec<Part>>, Vec<PathBuf>)> {
    let bin = cli(name, "venv/bin/vibe")?;
    let (script, replies) = listing_script("bash", json!({"command": "ls"}));
    let server = MockServer::start(script).unwrap();
    let mut c = vibe_cmd(&bin, home, cwd, &server.url());
    c.args(["-p", "What files are here?", "--auto-approve"])
        .args(extra);
    run(c, "vibe -p");
    let mut c = vibe_cmd(&bin, home, cwd, &server.url());
    c.args(["-c", "-p", "Anything else?", "--auto-approve"])
        .args(extra);
    run(c, "vibe -c -p");
    let f = registry::by_name("vibe").unwrap();
    let mut found = sessions(f, home, &[]);
    found.sort();
    Some((server, replies, found))
}

/// The tool results the model received.
fn sent_results(server: &MockServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .flat_map(|q| q.items())
        .filter_map(|i| match i {
            Item::ToolResult { output } => Some(output),
            _ => None,
        })
        .collect()
}

/// Checks what both Vibe layouts must give of the listing conversation in
/// `s`: the prompts, thinking, the call, its result as the model received
/// it and the answers.
fn check_vibe_conversation(s: &Session, server: &MockServer) {
    assert_eq!(
        texts(s, &Role::User),
        ["What files are here?", "Anything else?"]
    );
    assert_eq!(thinking_texts(s), ["I should look at the files first."]);
    assert_eq!(calls(s), [("bash".to_string(), json!({"command": "ls"}))]);
    let r = results(s);
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(
        sent_results(server).contains(&r[0]),
        "result {:?} is not what the model received: {:?}",
        r[0],
        sent_results(server)
    );
    assert_eq!(
        texts(s, &Role::Assistant),
        ["There is one file here: README.", "Nothing else to add."]
    );
}

/// The tokens the mock reported for `replies`: (input of every model call,
/// output with reasoning).
fn reported(server: &MockServer, replies: &[Vec<Part>]) -> (u64, u64) {
    let input = server.turns().iter().map(request_tokens).sum();
    let output = replies
        .iter()
        .map(|r| {
            let (o, t) = reply_tokens(r);
            o + t
        })
        .sum();
    (input, output)
}

#[test]
fn vibe_3_sessions_are_read_completely() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let Some((server, replies, found)) = vibe_listing("vibe", &["--trust"], &home, &cwd) else {
        return;
    };
    // One session, continued: its store under unified/<id>/.
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("meta.json"), "{found:?}");
    let f = registry::by_name("vibe").unwrap();
    let read = f.read_path(&found[0]).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    assert!(f.drift(&read).is_empty(), "{:?}", f.drift(&read));
    let s = &read.session;
    assert_eq!(s.meta.cwd.as_deref(), Some(cwd.to_str().unwrap()));
    check_vibe_conversation(s, &server);
    // The session's totals are every model call's, as the mock reported.
    let u = s.total_usage();
    assert_eq!(
        (u.input + u.cache_read, u.output),
        reported(&server, &replies)
    );
}

#[test]
fn vibe_2_sessions_are_read_completely() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let Some((server, replies, found)) = vibe_listing("vibe2", &[], &home, &cwd) else {
        return;
    };
    // 2.x: `-c` starts a second session holding the whole conversation.
    assert_eq!(found.len(), 2, "{found:?}");
    let f = registry::by_name("vibe").unwrap();
    let reads: Vec<_> = found.iter().map(|p| f.read_path(p).unwrap()).collect();
    for r in &reads {
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
        assert!(f.drift(r).is_empty(), "{:?}", f.drift(r));
        assert_eq!(r.session.meta.cwd.as_deref(), Some(cwd.to_str().unwrap()));
    }
    let whole = reads
        .iter()
        .find(|r| r.session.prompts().len() == 2)
        .expect("the continued session");
    check_vibe_conversation(&whole.session, &server);
    // Each session has its own run's totals; together every model call's.
    let (input, output) = reads.iter().fold((0, 0), |(i, o), r| {
        let u = r.session.total_usage();
        (i + u.input + u.cache_read, o + u.output)
    });
    assert_eq!((input, output), reported(&server, &replies));
}

#[test]
fn vibe_resumes_a_session_agentlog_converted() {
    let Some(bin) = cli("vibe", "venv/bin/vibe") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let server =
        MockServer::start(Script::default().rule(Rule::new("").then(vec![text("ok")]))).unwrap();
    // A Copilot session (written by the real Copilot CLI), written in Vibe's
    // 2.x layout, which Vibe 3 imports when it resumes it.
    let (s, _) = place_converted_copilot("vibe", &home, &cwd);
    let mut c = vibe_cmd(&bin, &home, &cwd, &server.url());
    c.args([
        "--resume",
        &s.meta.id,
        "-p",
        "Continue please",
        "--auto-approve",
        "--trust",
    ]);
    run(c, "vibe --resume of a converted session");
    assert!(model_saw(&server, "Continue please"));
    assert!(
        model_saw(&server, "What files are here?"),
        "the converted history was not sent"
    );
    let sent = sent_results(&server);
    assert!(sent.iter().any(|o| o.contains("README")), "{sent:?}");
}

// ---- Kimi Code CLI ----

/// A Kimi command whose one provider is the mock server (`config.toml` in
/// `~/.kimi`, telemetry off).
fn kimi_cmd(bin: &Path, home: &Path, cwd: &Path, url: &str) -> Command {
    let config = format!(
        "default_model = \"mock\"\ntelemetry = false\n\
         [providers.mock]\ntype = \"openai_legacy\"\nbase_url = \"{url}/v1\"\napi_key = \"sk-mock\"\n\
         [models.mock]\nprovider = \"mock\"\nmodel = \"mock-model\"\nmax_context_size = 100000\n"
    );
    std::fs::create_dir_all(home.join(".kimi")).unwrap();
    std::fs::write(home.join(".kimi/config.toml"), config).unwrap();
    command(bin, home, cwd, None)
}

#[test]
fn kimi_sessions_are_read_completely() {
    let Some(bin) = cli("kimi", "venv/bin/kimi") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let (script, replies) = listing_script("Shell", json!({"command": "ls"}));
    let server = MockServer::start(script).unwrap();
    let mut c = kimi_cmd(&bin, &home, &cwd, &server.url());
    c.args(["--print", "-p", "What files are here?", "--yolo"]);
    run(c, "kimi --print");
    let mut c = kimi_cmd(&bin, &home, &cwd, &server.url());
    c.args(["--print", "-C", "-p", "Anything else?", "--yolo"]);
    run(c, "kimi --print -C");
    let f = registry::by_name("kimi").unwrap();
    let found = sessions(f, &home, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    let read = f.read_path(&found[0]).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    assert!(f.drift(&read).is_empty(), "{:?}", f.drift(&read));
    let s = &read.session;
    assert_eq!(s.meta.cwd.as_deref(), Some(cwd.to_str().unwrap()));
    // Kimi keeps the output tokens with the reasoning in them, unsplit.
    check_listing_as(s, &server, &replies, "Shell", Keeps::TextNotTokens);
    assert_round_trip(f, &found[0]);
}

#[test]
fn kimi_resumes_a_session_agentlog_converted() {
    let Some(bin) = cli("kimi", "venv/bin/kimi") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let server =
        MockServer::start(Script::default().rule(Rule::new("").then(vec![text("ok")]))).unwrap();
    // A Copilot session (written by the real Copilot CLI) continued in Kimi.
    // Kimi continues only sessions of the work directories it lists
    // (agentlog adds this one).
    let (s, plan) = place_converted_copilot("kimi", &home, &cwd);
    let mut c = kimi_cmd(&bin, &home, &cwd, &server.url());
    c.args([
        "--print",
        "-r",
        &s.meta.id,
        "-p",
        "Continue please",
        "--yolo",
    ]);
    run(c, "kimi -r of a converted session");
    // Kimi appended to the file agentlog wrote.
    check_converted_continued(&server, "kimi", &plan.path, "Continue please");
}

// ---- Continue CLI ----

/// A Continue CLI command whose one model is the mock server (a local
/// `config.yaml`, so no hub is asked).
fn continue_cmd(bin: &Path, home: &Path, cwd: &Path, url: &str) -> Command {
    let config = home.join("config.yaml");
    std::fs::create_dir_all(home).unwrap();
    std::fs::write(
        &config,
        format!(
            "name: Mock\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: mock\n    provider: openai\n    model: mock-model\n    apiBase: {url}/v1\n    apiKey: sk-mock\n    roles: [chat, edit, apply]\n"
        ),
    )
    .unwrap();
    let mut c = command(bin, home, cwd, None);
    c.arg("--config").arg(config).arg("--auto");
    // No telemetry or metrics (nothing leaves the machine).
    c.env("CONTINUE_CLI_ENABLE_TELEMETRY", "0")
        .env("CONTINUE_METRICS_ENABLED", "0");
    c
}

#[test]
fn continue_sessions_are_read_completely() {
    let Some(bin) = cli("continue", "node_modules/.bin/cn") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let (script, replies) = listing_script("Bash", json!({"command": "ls"}));
    let server = MockServer::start(script).unwrap();
    let mut c = continue_cmd(&bin, &home, &cwd, &server.url());
    c.args(["-p", "What files are here?"]);
    run(c, "cn -p");
    let mut c = continue_cmd(&bin, &home, &cwd, &server.url());
    c.args(["-p", "Anything else?", "--resume"]);
    run(c, "cn -p --resume");
    let f = registry::by_name("continue").unwrap();
    let found = sessions(f, &home, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    let read = f.read_path(&found[0]).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    assert!(f.drift(&read).is_empty(), "{:?}", f.drift(&read));
    let s = &read.session;
    assert_eq!(s.meta.cwd.as_deref(), Some(cwd.to_str().unwrap()));
    // Continue keeps the reasoning's tokens, not its text.
    check_listing_as(s, &server, &replies, "Bash", Keeps::TokensNotText);
}

#[test]
fn continue_resumes_a_session_agentlog_converted() {
    let Some(bin) = cli("continue", "node_modules/.bin/cn") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let server =
        MockServer::start(Script::default().rule(Rule::new("").then(vec![text("ok")]))).unwrap();
    // A Copilot session (written by the real Copilot CLI) continued in
    // Continue: `cn --resume` takes the newest session file.
    let (_, plan) = place_converted_copilot("continue", &home, &cwd);
    assert_eq!(plan.command, "cn --resume");
    let mut c = continue_cmd(&bin, &home, &cwd, &server.url());
    c.args(["-p", "Continue please", "--resume"]);
    run(c, "cn --resume of a converted session");
    // Continue wrote its turn into the file agentlog wrote.
    check_converted_continued(&server, "continue", &plan.path, "Continue please");
}

// ---- OpenHands ----

#[test]
fn openhands_sessions_are_read_completely() {
    let Some(main) = cli(
        "openhands",
        "venv/lib/python3.13/site-packages/openhands/core/main.py",
    ) else {
        return;
    };
    let python = main.ancestors().nth(6).unwrap().join("bin/python");
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    // OpenHands sends the prompt, then the workspace's context as the last
    // user message: the rule answers that one. Headless runs end with
    // `finish`.
    let first = vec![
        thinking("I should look at the files first."),
        tool_call(
            "execute_bash",
            json!({"command": "ls", "security_risk": "LOW"}),
        ),
    ];
    let second = vec![tool_call(
        "finish",
        json!({"message": "There is one file here: README."}),
    )];
    let script = Script::default().rule(
        Rule::new("RUNTIME_INFORMATION")
            .then(first.clone())
            .then(second.clone()),
    );
    let server = MockServer::start(script).unwrap();
    let mut c = command(&python, &home, &cwd, None);
    c.args(["-m", "openhands.core.main", "-t", "What files are here?"])
        .env("RUNTIME", "cli")
        // The project is the workspace (else a new temporary folder is).
        .env(
            "SANDBOX_VOLUMES",
            format!("{}:/workspace:rw", cwd.display()),
        )
        .env("LLM_MODEL", "openai/mock-model")
        .env("LLM_BASE_URL", format!("{}/v1", server.url()))
        .env("LLM_API_KEY", "sk-mock")
        .env("LLM_NATIVE_TOOL_CALLING", "true")
        .env("FILE_STORE", "local")
        .env("FILE_STORE_PATH", home.join(".openhands"))
        .env("LOG_LEVEL", "WARNING");
    run(c, "openhands headless");
    let f = registry::by_name("openhands").unwrap();
    let found = sessions(f, &home, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    let read = f.read_path(&found[0]).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    let s = &read.session;
    assert_eq!(s.meta.cwd.as_deref(), Some(cwd.to_str().unwrap()));
    assert_eq!(texts(s, &Role::User), ["What files are here?"]);
    assert_eq!(thinking_texts(s), ["I should look at the files first."]);
    let c = calls(s);
    assert_eq!(
        c[0],
        (
            "execute_bash".to_string(),
            json!({"command": "ls", "security_risk": "LOW"})
        )
    );
    assert_eq!(c[1].0, "finish");
    check_one_result_sent(s, &server);
    assert_eq!(
        texts(s, &Role::Assistant),
        ["There is one file here: README."]
    );
    let usages = check_usage_per_call(s, &server, &[first.clone(), second]);
    let think = reply_tokens(&first).1;
    assert_eq!(
        usages.iter().map(|u| u.reasoning).collect::<Vec<_>>(),
        [think, 0]
    );
}

/// Runs the terminal program `bin` with `args` in a pseudo-terminal,
/// answering it as `steps` say (see `crates/harness/scripts/pty_drive.py`).
fn run_in_terminal(
    bin: &Path,
    args: &[&str],
    home: &Path,
    cwd: &Path,
    steps: Value,
    what: &str,
) -> String {
    let driver = workspace().join("crates/harness/scripts/pty_drive.py");
    let mut c = command(Path::new("python3"), home, cwd, None);
    c.arg(driver).arg(steps.to_string()).arg(bin).args(args);
    // A terminal that draws prompts, and no attempt to fetch the model
    // price list from the network.
    c.env("TERM", "xterm")
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True");
    run(c, what)
}

/// The OpenHands CLI's settings in `home`: the agent with the mock as its
/// model (the settings screen writes this file on a first start).
fn openhands_settings(home: &Path, server: &MockServer) {
    let settings = json!({
        "kind": "Agent",
        "llm": {"model": "openai/mock-model", "api_key": "sk-mock",
                "base_url": format!("{}/v1", server.url()), "usage_id": "agent"},
        "tools": []
    });
    std::fs::create_dir_all(home.join(".openhands")).unwrap();
    std::fs::write(
        home.join(".openhands/agent_settings.json"),
        settings.to_string(),
    )
    .unwrap();
}

/// What a person does in the OpenHands CLI: a prompt, the confirmation of
/// the tool call (`confirm`), waiting for the answer, `/exit`.
fn openhands_steps(prompt: &str, answer: &str, confirm: bool) -> Value {
    let mut s = vec![
        json!(["expect", "> "]),
        json!(["send", format!("{prompt}\r")]),
    ];
    if confirm {
        s.push(json!(["expect", "Choose an option"]));
        s.push(json!(["send", "\r"]));
    }
    s.extend([
        json!(["expect", answer]),
        json!(["expect", "> "]),
        json!(["send", "/exit\r"]),
        json!(["expect", "Terminate session"]),
        json!(["send", "\r"]),
    ]);
    Value::Array(s)
}

#[test]
fn openhands_resumes_a_session_agentlog_converted() {
    let Some(bin) = cli("openhands1", "venv/bin/openhands") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let server = MockServer::start(
        Script::default().rule(Rule::new("").then(vec![text("Continued from the history.")])),
    )
    .unwrap();
    openhands_settings(&home, &server);
    // A Copilot session (written by the real Copilot CLI) continued in
    // OpenHands from the conversation folder agentlog wrote.
    let (s, plan) = place_converted_copilot("openhands", &home, &cwd);
    let id = plan.command.strip_prefix("openhands --resume ").unwrap();
    assert_eq!(plan.path, home.join(".openhands/conversations").join(id));
    run_in_terminal(
        &bin,
        &["--resume", id],
        &home,
        &cwd,
        openhands_steps("Continue please", "Continued from the history", false),
        "openhands --resume of a converted session",
    );
    // OpenHands took the conversation as its own: it wrote its state and
    // its events after agentlog's.
    assert!(plan.path.join("base_state.json").is_file());
    check_converted_continued(&server, "openhands", &plan.path, "Continue please");
    let back = registry::by_name("openhands")
        .unwrap()
        .read_path(&plan.path)
        .unwrap();
    assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
    let back = back.session;
    assert_eq!(back.meta.cwd.as_deref(), Some(cwd.to_str().unwrap()));
    assert_eq!(calls(&back), calls(&s));
    assert_eq!(
        texts(&back, &Role::Assistant).last().map(String::as_str),
        Some("Continued from the history.")
    );
}

/// The session the OpenHands loader test writes: a system prompt, a
/// prompt with an image, an answer with thinking, text, an image and two
/// calls, their results (one in a tool message of two parts, an error),
/// the last answer.
fn rich_session() -> Session {
    use agentlog_model::{Block, Entry, EntryKind, Message, SessionMeta};
    let mut s = Session::new(SessionMeta::new("rich-1", agentlog_model::Agent::Claude));
    s.meta.format = Some("claude".into());
    let mut push = |id: &str, m: Message| {
        let mut e = Entry::new(id, s.leaf_id.clone(), EntryKind::Message(m));
        e.timestamp = Some(agentlog_model::Timestamp::Text(
            "2026-11-26T10:00:00.000Z".into(),
        ));
        s.push(e);
    };
    let png = || Block {
        kind: BlockKind::Image {
            media_type: Some("image/png".into()),
            data: Some("iVBORw0KGgo=".into()),
            url: None,
        },
        extra: Default::default(),
    };
    let mut system = Message::text(Role::System, "You are a careful agent.");
    system.injected = Some("system_prompt".into());
    push("e0", system);
    let mut prompt = Message::text(Role::User, "Look at this");
    prompt.content.push(png());
    push("e1", prompt);
    let mut answer = Message::new(Role::Assistant);
    answer.content = vec![
        Block::thinking("Two at once.", None),
        Block::text("I will run two commands."),
        png(),
        Block::tool_call(Some("c1".into()), "bash", json!({"command": "ls"})),
        Block::tool_call(Some("c2".into()), "bash", json!({"command": "false"})),
    ];
    push("e2", answer);
    let mut results = Message::new(Role::User);
    results.content = vec![Block::tool_result(
        Some("c1".into()),
        vec![Block::text("README")],
        false,
    )];
    push("e3", results);
    let mut failed = Message::new(Role::Tool);
    failed.tool_call_id = Some("c2".into());
    failed.is_error = Some(true);
    failed.content = vec![Block::text("exit 1"), Block::text(" (failed)")];
    push("e4", failed);
    push("e5", Message::text(Role::Assistant, "Done."));
    s
}

#[test]
fn openhands_loads_every_event_agentlog_writes() {
    let Some(bin) = cli("openhands1", "venv/bin/openhands") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("conversation");
    let f = registry::by_name("openhands").unwrap();
    let (written, fidelity) = f.write_session(&rich_session()).unwrap();
    written.write_plain(&folder).unwrap();
    assert_eq!(
        fidelity
            .losses
            .iter()
            .map(|l| l.what.as_str())
            .collect::<Vec<_>>(),
        [
            "system prompt (OpenHands continues another agent's session without one)",
            "image in an answer that calls a tool"
        ]
    );
    // OpenHands' own loader reads each event file, and its own conversion
    // gives the messages it would send the model.
    let script = r#"
import glob, json, os, sys
from openhands.sdk.event import Event
from openhands.sdk.event.base import LLMConvertibleEvent
files = sorted(glob.glob(os.path.join(sys.argv[1], "events", "event-*.json")))
events = [Event.model_validate_json(open(f).read()) for f in files]
llm = [e for e in events if isinstance(e, LLMConvertibleEvent)]
out = []
for m in LLMConvertibleEvent.events_to_messages(llm):
    out.append({
        "role": m.role,
        "text": "".join(c.text for c in m.content if getattr(c, "type", "") == "text"),
        "images": [u for c in m.content if getattr(c, "type", "") == "image" for u in c.image_urls],
        "calls": [[t.id, t.name, json.loads(t.arguments)] for t in (m.tool_calls or [])],
        "tool_call_id": m.tool_call_id,
        "reasoning": m.reasoning_content,
    })
print(json.dumps({"events": len(events), "messages": out}))
"#;
    let mut c = Command::new(bin.parent().unwrap().join("python"));
    c.args(["-c", script])
        .arg(&folder)
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True");
    let out = run(c, "the OpenHands loader");
    let got: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(got["events"], 6);
    let msg = |role: &str, text: &str| {
        json!({"role": role, "text": text, "images": [], "calls": [],
               "tool_call_id": null, "reasoning": null})
    };
    let mut prompt = msg("user", "Look at this");
    prompt["images"] = json!(["data:image/png;base64,iVBORw0KGgo="]);
    let mut calls = msg("assistant", "I will run two commands.");
    calls["calls"] = json!([["c1", "bash", {"command": "ls"}],
                            ["c2", "bash", {"command": "false"}]]);
    calls["reasoning"] = json!("Two at once.");
    let mut ok = msg("tool", "README");
    ok["tool_call_id"] = json!("c1");
    let mut failed = msg(
        "tool",
        "[An error occurred during execution.]\nexit 1 (failed)",
    );
    failed["tool_call_id"] = json!("c2");
    assert_eq!(
        got["messages"],
        json!([prompt, calls, ok, failed, msg("assistant", "Done.")])
    );
}

#[test]
fn openhands_cli_conversations_are_read_and_resumed() {
    let Some(bin) = cli("openhands1", "venv/bin/openhands") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let first = vec![
        thinking("I should look at the files first."),
        tool_call("terminal", json!({"command": "ls", "security_risk": "LOW"})),
    ];
    let second = vec![text("There is one file here: README.")];
    let third = vec![text("Nothing else to add.")];
    let script = Script::default()
        .rule(
            Rule::new("What files are here")
                .then(first.clone())
                .then(second.clone()),
        )
        .rule(Rule::new("Anything else").then(third.clone()));
    let server = MockServer::start(script).unwrap();
    openhands_settings(&home, &server);
    run_in_terminal(
        &bin,
        &[],
        &home,
        &cwd,
        openhands_steps("What files are here?", "one file here", true),
        "openhands",
    );
    // The conversation's folder is its id without dashes, which
    // `--resume` takes too.
    let conversations: Vec<String> = std::fs::read_dir(home.join(".openhands/conversations"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(conversations.len(), 1, "{conversations:?}");
    let id = conversations[0].clone();
    // Continued from its files.
    run_in_terminal(
        &bin,
        &["--resume", &id],
        &home,
        &cwd,
        openhands_steps("Anything else?", "Nothing else", false),
        "openhands --resume",
    );
    let f = registry::by_name("openhands").unwrap();
    let found = sessions(f, &home, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    let read = f.read_path(&found[0]).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    let s = &read.session;
    assert_eq!(s.meta.id.replace('-', ""), id);
    assert_eq!(s.meta.cwd.as_deref(), Some(cwd.to_str().unwrap()));
    assert_eq!(s.meta.model.model.as_deref(), Some("openai/mock-model"));
    assert_eq!(
        texts(s, &Role::User),
        ["What files are here?", "Anything else?"]
    );
    assert_eq!(thinking_texts(s), ["I should look at the files first."]);
    assert_eq!(
        calls(s),
        [(
            "terminal".to_string(),
            json!({"command": "ls", "security_risk": "LOW"})
        )]
    );
    check_one_result_sent(s, &server);
    assert_eq!(
        texts(s, &Role::Assistant),
        ["There is one file here: README.", "Nothing else to add."]
    );
    // OpenHands keeps the usage of the latest run's responses only (its
    // statistics start anew on resume): the third response's.
    let usages: Vec<&agentlog_model::Usage> = s
        .entries
        .iter()
        .filter_map(|e| e.message())
        .filter_map(|m| m.usage.as_ref())
        .collect();
    let turns = server.turns();
    assert_eq!(turns.len(), 3);
    assert_eq!(usages.len(), 1, "{usages:?}");
    assert_eq!(
        usages[0].input + usages[0].cache_read,
        request_tokens(&turns[2])
    );
    let (o, t) = reply_tokens(&third);
    assert_eq!(usages[0].output, o + t);
}

// ---- Cline CLI ----

#[test]
fn cline_sessions_are_read_completely() {
    let Some(bin) = cli("cline", "node_modules/.bin/cline") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    let first = vec![
        thinking("I should look at the files first."),
        tool_call("run_commands", json!({"commands": ["ls"]})),
    ];
    let second = vec![text("There is one file here: README.")];
    let script = Script::default().rule(
        Rule::new("What files are here")
            .then(first.clone())
            .then(second.clone()),
    );
    let server = MockServer::start(script).unwrap();
    // Local sessions only: Cline otherwise leaves a daemon running.
    let cline = |args: &[&str]| {
        let mut c = command(&bin, &home, &cwd, None);
        c.env("CLINE_SESSION_BACKEND_MODE", "local").args(args);
        c
    };
    let base = format!("{}/v1", server.url());
    run(
        cline(&[
            "auth",
            "-p",
            "openai",
            "-k",
            "sk-mock",
            "-m",
            "mock-model",
            "-b",
            &base,
        ]),
        "cline auth",
    );
    run(cline(&["What files are here?", "-t", "100"]), "cline");
    let f = registry::by_name("cline").unwrap();
    let found = sessions(f, &home, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    let read = f.read_path(&found[0]).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    assert!(f.drift(&read).is_empty(), "{:?}", f.drift(&read));
    let s = &read.session;
    assert_eq!(s.meta.cwd.as_deref(), Some(cwd.to_str().unwrap()));
    let users = texts(s, &Role::User);
    assert!(
        users.iter().any(|u| u.contains("What files are here?")),
        "{users:?}"
    );
    assert_eq!(thinking_texts(s), ["I should look at the files first."]);
    assert_eq!(
        calls(s),
        [("run_commands".to_string(), json!({"commands": ["ls"]}))]
    );
    let r = results(s);
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(r[0].contains("README"), "{r:?}");
    assert_eq!(
        texts(s, &Role::Assistant),
        ["There is one file here: README."]
    );
    check_usage_per_call(s, &server, &[first, second]);
}

// ---- Aider ----

/// An aider command whose model is the mock server, that asks nothing
/// and commits nothing.
fn aider_cmd(bin: &Path, home: &Path, cwd: &Path, server: &MockServer) -> Command {
    let mut c = command(bin, home, cwd, None);
    c.env("OPENAI_API_BASE", format!("{}/v1", server.url()))
        .env("OPENAI_API_KEY", "sk-mock")
        .args([
            "--model",
            "openai/mock-model",
            "--yes-always",
            "--no-check-update",
            "--no-show-model-warnings",
            "--no-analytics",
            "--no-auto-commits",
        ]);
    c
}

/// Makes `dir` a git repository, as aider wants the project it works in.
fn git_init(dir: &Path) {
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(git.success());
}

#[test]
fn aider_restores_a_history_agentlog_converted() {
    let Some(bin) = cli("aider", "venv/bin/aider") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cwd = project(dir.path());
    git_init(&cwd);
    let server = MockServer::start(
        Script::default().rule(Rule::new("").then(vec![text("ok")]).any_request()),
    )
    .unwrap();
    // A Copilot session (written by the real Copilot CLI) continued in
    // aider, which reads the history in its project back.
    let (_, plan) = place_converted_copilot("aider", &home, &cwd);
    assert_eq!(plan.path, cwd.join(".aider.chat.history.md"));
    let mut c = aider_cmd(&bin, &home, &cwd, &server);
    c.args(["--restore-chat-history", "--message", "Continue please"]);
    run(c, "aider --restore-chat-history of a converted session");
    assert!(model_saw(&server, "Continue please"));
    assert!(
        model_saw(&server, "What files are here?"),
        "the converted history was not sent"
    );
    // Aider appended its run to the history agentlog wrote, which reads
    // back from the first prompt to the new one.
    check_read_back("aider", &plan.path, "Continue please");
}

#[test]
fn aider_histories_are_read_completely() {
    let Some(bin) = cli("aider", "venv/bin/aider") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // Aider works in a git repository; its history is found in projects
    // under the home directory.
    let cwd = home.join("proj");
    std::fs::create_dir_all(&cwd).unwrap();
    git_init(&cwd);
    let edit = "Here is the change.\n\nhello.py\n```python\nprint('hello')\n```";
    // Aider declares no tools: the rules answer requests without them.
    let script = Script::default()
        .rule(
            Rule::new("Create hello.py")
                .then(vec![text(edit)])
                .any_request(),
        )
        .rule(
            Rule::new("What does it print")
                .then(vec![text("It prints hello.")])
                .any_request(),
        );
    let server = MockServer::start(script).unwrap();
    let aider = |extra: &[&str], message: &str| {
        let mut c = aider_cmd(&bin, &home, &cwd, &server);
        c.args(extra).args(["--message", message, "hello.py"]);
        c
    };
    run(aider(&[], "Create hello.py that prints hello"), "aider");
    run(
        aider(&["--restore-chat-history"], "What does it print?"),
        "aider --restore-chat-history",
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("hello.py")).unwrap(),
        "print('hello')\n",
        "aider applied the edit"
    );
    let f = registry::by_name("aider").unwrap();
    let found = sessions(f, &home, &[]);
    assert_eq!(found, [cwd.join(".aider.chat.history.md")]);
    let read = f.read_path(&found[0]).unwrap();
    let s = &read.session;
    assert_eq!(
        texts(s, &Role::User),
        ["Create hello.py that prints hello", "What does it print?"]
    );
    assert_eq!(texts(s, &Role::Assistant), [edit, "It prints hello."]);
    // Every answer has the usage of Aider's own token line after it.
    let history = std::fs::read_to_string(&found[0]).unwrap();
    let lines: Vec<(u64, u64)> = history
        .lines()
        .filter_map(|l| l.strip_prefix("> Tokens: "))
        .map(|l| {
            let n = |w: &str| {
                l.split(w)
                    .next()
                    .unwrap()
                    .rsplit(' ')
                    .next()
                    .unwrap()
                    .replace(',', "")
                    .parse::<u64>()
                    .unwrap()
            };
            (n(" sent"), n(" received"))
        })
        .collect();
    assert_eq!(lines.len(), 2, "{history}");
    let usages: Vec<(u64, u64)> = s
        .entries
        .iter()
        .filter_map(|e| e.message())
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| m.usage.as_ref().map(|u| (u.input + u.cache_read, u.output)))
        .collect();
    assert_eq!(usages, lines);
}
