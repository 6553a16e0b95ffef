//! Shared machinery of the real-agent conformance tests: installing the
//! pinned CLIs, sandboxes with their own HOME, running each CLI against the
//! mock model server, and reading sessions with the agentlog binary.
#![allow(dead_code)]

use agentlog_harness::{text, thinking, tool_call, Item, MockServer, Rule, Script};
use agentlog_model::{BlockKind, Entry, EntryKind, Role, Session};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The four agents of the matrix.
pub const AGENTS: [&str; 4] = ["claude", "codex", "gemini", "pi"];

/// The pinned versions (also in scripts/install-agent-clis.sh).
pub const VERSIONS: [(&str, &str); 6] = [
    ("claude", "@anthropic-ai/claude-code 2.1.330"),
    ("codex", "@openai/codex 0.169.0"),
    ("gemini", "@google/gemini-cli 0.61.0"),
    ("pi", "@mariozechner/pi-coding-agent 0.73.1"),
    ("node22", "node 22"),
    ("acpx", "acpx 0.19.1"),
];

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Skips (outside CI) or fails (in CI) when a component is missing.
pub fn missing(what: &str) -> ! {
    if in_ci() {
        panic!("CI is set and {what} is not available; the conformance harness must run in CI");
    }
    println!("skipped: {what} is not available (outside CI the harness skips)");
    std::panic::resume_unwind(Box::new(SkipMarker));
}

/// Carried by a skipping test's unwind; [`run_or_skip`] turns it into a pass.
pub struct SkipMarker;

/// Runs a test body; a [`missing`] component outside CI makes it pass after
/// printing why.
pub fn run_or_skip(f: impl FnOnce() + std::panic::UnwindSafe) {
    if let Err(e) = std::panic::catch_unwind(f) {
        if e.downcast_ref::<SkipMarker>().is_some() {
            return;
        }
        std::panic::resume_unwind(e);
    }
}

/// The installed CLIs: name -> executable. Installs them once per run.
pub fn clis() -> &'static BTreeMap<String, PathBuf> {
    static CLIS: OnceLock<BTreeMap<String, PathBuf>> = OnceLock::new();
    CLIS.get_or_init(|| {
        let out = Command::new("bash")
            .arg(repo().join("scripts/install-agent-clis.sh"))
            .stderr(Stdio::inherit())
            .output();
        let mut map = BTreeMap::new();
        if let Ok(out) = out {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if let Some((name, path)) = line.split_once(' ') {
                    map.insert(name.to_owned(), PathBuf::from(path));
                }
            }
        }
        map
    })
}

pub fn cli(name: &str) -> PathBuf {
    match clis().get(name) {
        Some(p) => p.clone(),
        None => missing(&format!(
            "the {name} CLI (scripts/install-agent-clis.sh, npm)"
        )),
    }
}

/// The agentlog binary built beside this test (`AGENTLOG_BIN` overrides).
///
/// It is built (or found up to date) by cargo once per test process: a
/// binary left from an older checkout would otherwise be tested instead of
/// the source (`cargo test -p agentlog-harness` alone builds no binary of
/// another package). Within `.ci/run` the workspace is built first and this
/// is cargo finding nothing to do.
pub fn agentlog_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("AGENTLOG_BIN") {
        return PathBuf::from(p);
    }
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap();
            let dir = exe.parent().unwrap().parent().unwrap();
            let mut build = Command::new(env!("CARGO"));
            build
                .args(["build", "-q", "-p", "agentlog", "--bin", "agentlog"])
                .current_dir(repo());
            // The profile this test was built with (its folder's name;
            // `debug` is cargo's `dev`), into the same target folder.
            if let (Some(profile), Some(target)) = (dir.file_name(), dir.parent()) {
                if profile != "debug" {
                    build.arg("--profile").arg(profile);
                }
                build.arg("--target-dir").arg(target);
            }
            let st = build.status().unwrap();
            assert!(st.success(), "could not build the agentlog binary");
            dir.join("agentlog")
        })
        .clone()
}

/// One agent's world: its own HOME (config and sessions) and a project dir.
pub struct Sandbox {
    pub agent: &'static str,
    pub _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
    pub url: String,
}

/// Programs an agent leaves running (acpx keeps a queue owner and its
/// agent process alive for minutes after a prompt) go with the sandbox:
/// every process whose environment has the sandbox's HOME is ended.
impl Drop for Sandbox {
    fn drop(&mut self) {
        self.end_programs();
        // acpx keeps its queue's sockets in `/tmp/acpx-<first 10 hex digits
        // of the SHA-256 of HOME>` whatever TMPDIR says: that folder goes
        // with the sandbox too.
        let digest = Sha256::digest(self.home.display().to_string().as_bytes());
        let sockets = format!("/tmp/acpx-{}", &hex::encode(digest)[..10]);
        let _ = std::fs::remove_dir_all(sockets);
    }
}

impl Sandbox {
    /// Ends every program whose environment has this sandbox's HOME.
    fn end_programs(&self) {
        let home = format!("HOME={}", self.home.display());
        let me = std::process::id().to_string();
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return;
        };
        for p in procs.flatten() {
            let pid = p.file_name().to_string_lossy().into_owned();
            if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(env) = std::fs::read(p.path().join("environ")) else {
                continue;
            };
            if env.split(|&b| b == 0).any(|v| v == home.as_bytes()) {
                let _ = Command::new("kill")
                    .args(["-9", &pid])
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }

    /// A sandbox for `agent`, configured to use the mock at `url`.
    pub fn new(agent: &'static str, url: &str) -> Sandbox {
        let dir = tempfile::Builder::new()
            .prefix(&format!("agentlog-harness-{agent}-"))
            .tempdir()
            .unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(home.join(".tmp")).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        let s = Sandbox {
            agent,
            _dir: dir,
            home,
            project,
            url: url.to_owned(),
        };
        s.configure();
        s
    }

    fn configure(&self) {
        match self.agent {
            "codex" => {
                let dir = self.home.join(".codex");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join("config.toml"),
                    format!(
                        "model = \"mock-model\"\nmodel_provider = \"mock\"\n\
                         [model_providers.mock]\nname = \"Mock\"\nbase_url = \"{}/v1\"\n\
                         wire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n",
                        self.url
                    ),
                )
                .unwrap();
            }
            "gemini" => {
                let dir = self.home.join(".gemini");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join("settings.json"),
                    json!({"security": {"auth": {"selectedType": "gemini-api-key"},
                                        "folderTrust": {"enabled": false}}})
                    .to_string(),
                )
                .unwrap();
            }
            "pi" => {
                let dir = self.home.join(".pi/agent");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join("models.json"),
                    json!({"providers": {"mock": {
                        "baseUrl": format!("{}/v1", self.url), "api": "openai-completions",
                        "apiKey": "mock-key", "compat": {"supportsDeveloperRole": false},
                        "models": [{"id": "mock-model", "reasoning": true}]}}})
                    .to_string(),
                )
                .unwrap();
            }
            _ => {}
        }
    }

    /// Makes the agent compact its context early: Codex, Gemini CLI and pi
    /// compact on their own when a conversation passes a token threshold,
    /// set here far below the size of one request; Claude Code is asked
    /// with `/compact` (see [`Sandbox::compact`]).
    pub fn enable_compaction(&self) {
        match self.agent {
            "codex" => {
                let path = self.home.join(".codex/config.toml");
                let config = std::fs::read_to_string(&path).unwrap();
                std::fs::write(
                    &path,
                    format!("model_auto_compact_token_limit = 3000\n{config}"),
                )
                .unwrap();
            }
            "gemini" => {
                let path = self.home.join(".gemini/settings.json");
                let mut v: Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                v["model"] = json!({"compressionThreshold": 0.0001});
                std::fs::write(&path, v.to_string()).unwrap();
            }
            "pi" => {
                let dir = self.home.join(".pi/agent");
                let path = dir.join("models.json");
                let mut v: Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                v["providers"]["mock"]["models"][0]["contextWindow"] = json!(1000);
                std::fs::write(&path, v.to_string()).unwrap();
                std::fs::write(
                    dir.join("settings.json"),
                    json!({"compaction": {"enabled": true, "reserveTokens": 100,
                                          "keepRecentTokens": 10}})
                    .to_string(),
                )
                .unwrap();
            }
            _ => {}
        }
    }

    /// Has the agent compact the session in `file` now where it can be
    /// asked to (Claude Code's `/compact`); the others compact on their own
    /// after [`Sandbox::enable_compaction`].
    pub fn compact(&self, file: &Path) {
        if self.agent == "claude" {
            self.run(&self.project, "/compact", Some(&self.resume_arg(file)));
        }
    }

    /// The environment every program runs with here (nothing inherited but
    /// PATH, so the developer's own agents and keys never leak in).
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ("HOME".into(), self.home.display().to_string()),
            // Their temporary files (Claude Code's `claude-<uid>` folder)
            // go with the sandbox.
            (
                "TMPDIR".into(),
                self.home.join(".tmp").display().to_string(),
            ),
            ("LANG".into(), "C.UTF-8".into()),
            ("TERM".into(), "dumb".into()),
            ("NO_COLOR".into(), "1".into()),
        ];
        match self.agent {
            "claude" => {
                env.push(("ANTHROPIC_BASE_URL".into(), self.url.clone()));
                env.push(("ANTHROPIC_API_KEY".into(), "mock-key".into()));
                env.push(("IS_SANDBOX".into(), "1".into()));
                env.push(("DISABLE_AUTOUPDATER".into(), "1".into()));
                env.push((
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                    "1".into(),
                ));
            }
            "codex" => {
                env.push((
                    "CODEX_HOME".into(),
                    self.home.join(".codex").display().to_string(),
                ));
                env.push(("MOCK_API_KEY".into(), "mock-key".into()));
            }
            "gemini" => {
                env.push(("GOOGLE_GEMINI_BASE_URL".into(), self.url.clone()));
                env.push(("GEMINI_API_KEY".into(), "mock-key".into()));
            }
            "pi" => {
                env.push((
                    "PI_CODING_AGENT_DIR".into(),
                    self.home.join(".pi/agent").display().to_string(),
                ));
            }
            _ => {}
        }
        env
    }

    /// Runs the agent on `prompt`: a new session, or (with `resume`) the
    /// session with that id or path. Returns stdout.
    pub fn run(&self, cwd: &Path, prompt: &str, resume: Option<&str>) -> String {
        let mut cmd = Command::new(cli(self.agent));
        match (self.agent, resume) {
            ("claude", r) => {
                cmd.args(["-p", prompt, "--dangerously-skip-permissions"]);
                cmd.args(["--output-format", "json"]);
                if let Some(id) = r {
                    cmd.args(["--resume", id]);
                }
            }
            ("codex", r) => {
                cmd.args(["exec", "--skip-git-repo-check"]);
                cmd.arg("--dangerously-bypass-approvals-and-sandbox");
                if let Some(id) = r {
                    cmd.args(["resume", id]);
                }
                cmd.arg(prompt);
            }
            ("gemini", r) => {
                cmd.args(["--yolo", "-p", prompt]);
                if let Some(id) = r {
                    cmd.args(["--resume", id]);
                }
            }
            ("pi", r) => {
                cmd.args(["-p", "--model", "mock/mock-model"]);
                if let Some(path) = r {
                    cmd.args(["--session", path]);
                }
                cmd.arg(prompt);
            }
            (other, _) => panic!("no runner for {other}"),
        }
        run_cmd(cmd, cwd, &self.env(), &format!("{} {prompt:?}", self.agent))
    }

    /// The agent's newest session file.
    pub fn newest_session(&self) -> PathBuf {
        let mut files = Vec::new();
        walk(&self.home, &mut files);
        files
            .into_iter()
            .filter(|p| is_session_file(self.agent, p))
            .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
            .unwrap_or_else(|| {
                panic!(
                    "{} wrote no session under {}",
                    self.agent,
                    self.home.display()
                )
            })
    }

    /// Every session file of the agent.
    pub fn session_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        walk(&self.home, &mut files);
        files.retain(|p| is_session_file(self.agent, p));
        files.sort();
        files
    }

    /// The argument that resumes the session in `file`.
    pub fn resume_arg(&self, file: &Path) -> String {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        match self.agent {
            "claude" => stem,
            "codex" => stem[stem.len().saturating_sub(36)..].to_owned(),
            "gemini" => {
                let text = std::fs::read_to_string(file).unwrap();
                let first: Value = serde_json::from_str(text.lines().next().unwrap_or("{}"))
                    .or_else(|_| serde_json::from_str(&text))
                    .unwrap();
                first["sessionId"].as_str().unwrap().to_owned()
            }
            _ => file.display().to_string(),
        }
    }
}

fn is_session_file(agent: &str, p: &Path) -> bool {
    let s = p.to_string_lossy();
    let name = p.file_name().unwrap_or_default().to_string_lossy();
    match agent {
        "claude" => {
            s.contains("/.claude/projects/")
                && name.ends_with(".jsonl")
                && !s.contains("/subagents/")
        }
        "codex" => s.contains("/.codex/sessions/") && name.starts_with("rollout-"),
        "gemini" => s.contains("/chats/") && name.starts_with("session-"),
        "pi" => s.contains("/.pi/agent/sessions/") && name.ends_with(".jsonl"),
        _ => false,
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// How long any one command of the harness may take before it is killed.
/// Generous: a loaded 2-core machine runs a Node CLI's start many times
/// slower than an idle one.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(240);

/// How a command the harness ran ended.
pub enum Outcome {
    /// It exited 0; its standard output.
    Success(String),
    /// It exited otherwise.
    Failed {
        status: std::process::ExitStatus,
        stdout: String,
        stderr: String,
    },
    /// It was still running after [`COMMAND_LIMIT`] and was killed.
    Stalled { stdout: String, stderr: String },
}

/// Runs a command with a clean environment and a time limit, and says how
/// it ended.
pub fn run_cmd_outcome(
    mut cmd: Command,
    cwd: &Path,
    env: &[(String, String)],
    what: &str,
) -> Outcome {
    cmd.current_dir(cwd).env_clear();
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let out_pipe = child.stdout.take().unwrap();
    let err_pipe = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || std::io::read_to_string(out_pipe).unwrap_or_default());
    let err_t = std::thread::spawn(move || std::io::read_to_string(err_pipe).unwrap_or_default());
    let deadline = Instant::now() + COMMAND_LIMIT;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    match status {
        Some(st) if st.success() => Outcome::Success(stdout),
        Some(status) => Outcome::Failed {
            status,
            stdout,
            stderr,
        },
        None => Outcome::Stalled { stdout, stderr },
    }
}

/// Runs a command with a clean environment and a time limit; panics with
/// its output when it fails.
pub fn run_cmd(cmd: Command, cwd: &Path, env: &[(String, String)], what: &str) -> String {
    match run_cmd_outcome(cmd, cwd, env, what) {
        Outcome::Success(stdout) => stdout,
        Outcome::Failed {
            status,
            stdout,
            stderr,
        } => panic!("{what} failed ({status}):\nstdout:\n{stdout}\nstderr:\n{stderr}"),
        Outcome::Stalled { stdout, stderr } => panic!(
            "{what} did not finish in {} s:\nstdout:\n{stdout}\nstderr:\n{stderr}",
            COMMAND_LIMIT.as_secs()
        ),
    }
}

/// The machine's load averages (`/proc/loadavg`), for failure messages.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// Runs agentlog with `args` in the sandbox's environment.
pub fn agentlog(sandbox: &Sandbox, args: &[&str]) -> String {
    let mut cmd = Command::new(agentlog_bin());
    cmd.args(args);
    run_cmd(
        cmd,
        &sandbox.project,
        &sandbox.env(),
        &format!("agentlog {args:?}"),
    )
}

/// The session in `file` as agentlog reads it (`show --json`).
pub fn read_session(sandbox: &Sandbox, file: &Path) -> Session {
    let out = agentlog(sandbox, &["show", "--json", &file.display().to_string()]);
    serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("show --json of {}: {e}\n{out}", file.display()))
}

/// The conversation on a session's active branch as structured items.
pub fn session_items(s: &Session) -> Vec<Item> {
    s.active_branch()
        .into_iter()
        .flat_map(entry_items)
        .collect()
}

/// The conversation items of one entry (none for entries that are not
/// messages).
pub fn entry_items(e: &Entry) -> Vec<Item> {
    let mut out = Vec::new();
    let EntryKind::Message(m) = &e.kind else {
        return out;
    };
    for b in &m.content {
        match &b.kind {
            BlockKind::Text { text } => out.push(match m.role {
                Role::User => Item::User { text: text.clone() },
                Role::Assistant => Item::Assistant { text: text.clone() },
                Role::Tool => Item::ToolResult {
                    output: text.clone(),
                },
                _ => Item::System { text: text.clone() },
            }),
            BlockKind::Thinking { text, .. } => out.push(Item::Thinking { text: text.clone() }),
            BlockKind::ToolCall { name, input, .. } => out.push(Item::ToolCall {
                name: name.clone(),
                arguments: input.clone(),
            }),
            BlockKind::ToolResult { content, .. } => out.push(Item::ToolResult {
                output: content
                    .iter()
                    .filter_map(|c| match &c.kind {
                        BlockKind::Text { text } => Some(text.clone()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            }),
            _ => {}
        }
    }
    out
}

/// What a conversation must contain, in order: (kind, marker substring).
pub type Expect = Vec<(&'static str, &'static str)>;

pub fn kind_of(i: &Item) -> &'static str {
    match i {
        Item::System { .. } => "system",
        Item::User { .. } => "user",
        Item::Assistant { .. } => "assistant",
        Item::Thinking { .. } => "thinking",
        Item::ToolCall { .. } => "tool_call",
        Item::ToolResult { .. } => "tool_result",
    }
}

/// The expectations not met, in order, as a subsequence of `items`.
pub fn unmet(items: &[Item], expect: &Expect) -> Vec<String> {
    let outline: Vec<(&str, String)> = items.iter().map(|i| (kind_of(i), i.text())).collect();
    unmet_in(&outline, expect)
}

/// The expectations not met, in order, as a subsequence of (kind, text)
/// pairs.
pub fn unmet_in(outline: &[(&str, String)], expect: &Expect) -> Vec<String> {
    let mut missing = Vec::new();
    let mut pos = 0;
    for (kind, marker) in expect {
        match outline[pos..]
            .iter()
            .position(|(k, t)| k == kind && t.contains(marker))
        {
            Some(k) => pos += k + 1,
            None => missing.push(format!("{kind} containing {marker:?}")),
        }
    }
    missing
}

/// A JSON document, or JSON lines, as values.
pub fn json_values(bytes: &[u8]) -> Vec<Value> {
    if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
        return vec![v];
    }
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What the session acpx writes (driving Gemini CLI) holds, in order.
pub fn acpx_history() -> Expect {
    vec![
        ("user", "alpha acpx"),
        ("thinking", "alpha-thinking-acpx"),
        ("tool_call", "alpha-tool-output-acpx"),
        ("assistant", "alpha-answer-acpx"),
        ("user", "beta acpx"),
        ("assistant", "beta-answer-acpx"),
    ]
}

/// What the model answers when asked to summarize in the compaction tests
/// (every request no rule matches gets it).
pub const SUMMARY: &str = "compaction-summary-marker";

/// A session's active branch as (kind, text), compactions included.
pub fn branch_outline(s: &Session) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for e in s.active_branch() {
        if let EntryKind::Compaction { summary, .. } = &e.kind {
            out.push(("compaction", summary.clone()));
        }
        out.extend(entry_items(e).iter().map(|i| (kind_of(i), i.text())));
    }
    out
}

/// Asserts that a compacted session holds, in order on its active branch,
/// the turn before the compaction (prompt, thinking, shell call and result,
/// answer), the compaction with the model's summary, and the turn after.
pub fn assert_compacted(session: &Session, agent: &str) {
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let expect: Expect = vec![
        ("user", leak(format!("alpha {agent}"))),
        ("thinking", leak(format!("alpha-thinking-{agent}"))),
        ("tool_call", leak(format!("alpha-tool-output-{agent}"))),
        ("tool_result", leak(format!("alpha-tool-output-{agent}"))),
        ("assistant", leak(format!("alpha-answer-{agent}"))),
        ("compaction", SUMMARY),
        ("user", leak(format!("omega {agent}"))),
        ("assistant", "omega-answer"),
    ];
    let outline = branch_outline(session);
    let missing = unmet_in(&outline, &expect);
    assert!(
        missing.is_empty(),
        "{agent}: the compacted session lacks {missing:?} (in order); its active branch:\n{}",
        outline
            .iter()
            .map(|(k, t)| format!("  {k}: {}", t.chars().take(100).collect::<String>()))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Asserts that `items` hold `expect` in order.
pub fn assert_holds(items: &[Item], expect: &Expect, what: &str) {
    let missing = unmet(items, expect);
    if !missing.is_empty() {
        let dump: Vec<String> = items
            .iter()
            .map(|i| {
                let t = i.text();
                let t: String = t.chars().take(120).collect();
                format!("  {}: {}", kind_of(i), t.replace('\n', " "))
            })
            .collect();
        panic!("{what}: missing {missing:?}\nitems:\n{}", dump.join("\n"));
    }
}

/// The agent's shell tool call that prints `marker`.
pub fn shell_call(agent: &str, marker: &str) -> agentlog_harness::Part {
    let cmd = format!("echo {marker}");
    match agent {
        "claude" => tool_call(
            "Bash",
            json!({"command": cmd, "description": "print a marker"}),
        ),
        "codex" => tool_call("exec_command", json!({"cmd": cmd})),
        "gemini" => tool_call(
            "run_shell_command",
            json!({"command": cmd, "description": "print a marker"}),
        ),
        _ => tool_call("bash", json!({"command": cmd})),
    }
}

/// The agent's file-writing tool call.
pub fn write_call(agent: &str, file: &str, content: &str) -> agentlog_harness::Part {
    match agent {
        "claude" => tool_call("Write", json!({"file_path": file, "content": content})),
        "codex" => tool_call(
            "exec_command",
            json!({"cmd": format!("printf '%s' {content} > {file}")}),
        ),
        "gemini" => tool_call("write_file", json!({"file_path": file, "content": content})),
        _ => tool_call("write", json!({"path": file, "content": content})),
    }
}

/// The script every agent's first session follows: "alpha" (thinking, a
/// shell call, an answer), "beta" (a file write, an answer), and "gamma"
/// (an answer; used after a resume).
pub fn script_for(agent: &str, project: &Path) -> Script {
    let notes = project.join("notes.txt").display().to_string();
    Script::default()
        .rule(
            Rule::new("alpha")
                .then(vec![
                    thinking(format!("alpha-thinking-{agent}")),
                    shell_call(agent, &format!("alpha-tool-output-{agent}")),
                ])
                .then(vec![text(format!("alpha-answer-{agent}"))]),
        )
        .rule(
            Rule::new("beta")
                .then(vec![write_call(
                    agent,
                    &notes,
                    &format!("beta-content-{agent}"),
                )])
                .then(vec![text(format!("beta-answer-{agent}"))]),
        )
        .rule(Rule::new("gamma").then(vec![text("gamma-answer")]))
}

/// A mock server that serves each agent its own script, chosen by the
/// agent's name in the prompt.
pub fn shared_script(projects: &[(&str, PathBuf)]) -> Script {
    let mut s = Script::default();
    for (agent, project) in projects {
        for mut r in script_for(agent, project).rules {
            if r.when != "gamma" {
                r.when = format!("{} {agent}", r.when);
                s.rules.push(r);
            }
        }
    }
    s.rule(Rule::new("gamma").then(vec![text("gamma-answer")]))
        // Claude Code's subagent: the main agent delegates, the subagent
        // (whose own first prompt is the delegated one) runs a tool.
        .rule(
            Rule::new("delta claude")
                .then(vec![tool_call(
                    "Agent",
                    json!({"description": "count files", "prompt": "subtask claude: count the files",
                           "subagent_type": "general-purpose"}),
                )])
                .then(vec![text("delta-answer-claude")]),
        )
        // Codex's subagent: `spawn_agent` (in the `multi_agent_v1` tool
        // namespace) starts it; the parent waits in a shell call, and the
        // subagent's completion comes back as a notification message.
        .rule(
            Rule::new("delta codex")
                .then(vec![agentlog_harness::namespaced_tool_call(
                    "multi_agent_v1",
                    "spawn_agent",
                    json!({"message": "subtask codex: count the files"}),
                )])
                .then(vec![tool_call("exec_command", json!({"cmd": "sleep 5"}))])
                .then(vec![text("delta-answer-codex")]),
        )
        .rule(Rule::new("<subagent_notification>").then(vec![text("delta-answer-codex")]))
        .rule(
            Rule::new("subtask codex")
                .then(vec![shell_call("codex", "subagent-tool-output")])
                .then(vec![text("subagent-final-answer")]),
        )
        // Gemini CLI's subagent: `invoke_agent` runs the generalist agent,
        // which finishes by calling `complete_task`.
        .rule(
            Rule::new("delta gemini")
                .then(vec![tool_call(
                    "invoke_agent",
                    json!({"agent_name": "generalist", "prompt": "subtask gemini: count the files"}),
                )])
                .then(vec![text("delta-answer-gemini")]),
        )
        .rule(
            Rule::new("subtask gemini")
                .then(vec![shell_call("gemini", "subagent-tool-output")])
                .then(vec![tool_call(
                    "complete_task",
                    json!({"result": {"response": "subagent-final-answer"}}),
                )]),
        )
        .rule(
            Rule::new("subtask claude")
                .then(vec![shell_call("claude", "subagent-tool-output")])
                .then(vec![text("subagent-final-answer")]),
        )
}

/// A started server, or a failure that names why.
pub fn server(script: Script) -> MockServer {
    MockServer::start(script).unwrap()
}
