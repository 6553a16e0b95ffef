//! `agentlog mcp` through a real MCP client: the official Python SDK
//! (`mcp` on PyPI, installed by scripts/install-mcp-client.sh) lists the
//! tools and calls each one, with good and bad arguments, over standard
//! input and output and over streamable HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TestEnv;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SESSION: &str = "7a1c0ffe-5eed-4d1e-9b0b-5ec7e7000001";
const WORD: &str = "zephyrquokka";
const SECRET: &str = "AKIAQ7X3LMN4PZ2RT5WB";

/// The Python of the venv holding the MCP SDK, installed when missing;
/// `None` (outside CI) when it cannot be.
fn python() -> Option<PathBuf> {
    common::installed("install-mcp-client.sh", &[], "the Python MCP client")
}

fn client() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py")
}

/// A home with the planted session (a decision named by [`WORD`], the key
/// [`SECRET`], an edit of src/backoff.rs and `cargo test -p retry`).
fn planted() -> TestEnv {
    let env = TestEnv::new();
    let jsonl = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../mcp/tests/planted-claude.jsonl"),
    )
    .unwrap();
    env.write(
        &format!(".claude/projects/-home-dev-retry/{SESSION}.jsonl"),
        &jsonl,
    );
    env
}

/// Runs the client (`mode`: its arguments after the script) with `calls`;
/// returns its JSON report.
fn drive(env: &TestEnv, py: &Path, mode: &[&str], calls: &Value) -> Value {
    // The hermetic environment of `env` (HOME, PATH, no colours).
    let base = env.command(&[]);
    let mut c = Command::new(py);
    c.arg(client()).args(mode).env_clear();
    for (k, v) in base.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c.current_dir(env.home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(calls.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The answer of call `i` as JSON (it must have succeeded).
fn answer(report: &Value, i: usize) -> Value {
    let c = &report["calls"][i];
    assert_eq!(c["is_error"], json!(false), "call {i}: {c}");
    serde_json::from_str(c["text"].as_str().unwrap()).unwrap()
}

/// The message of call `i`, which must have failed as a tool error.
fn error(report: &Value, i: usize) -> String {
    let c = &report["calls"][i];
    assert_eq!(c["is_error"], json!(true), "call {i} should fail: {c}");
    c["text"].as_str().unwrap().to_string()
}

fn calls() -> Value {
    json!([
        {"tool": "search", "arguments": {"query": WORD}},
        {"tool": "search", "arguments": {"query": "backoff", "limit": 1}},
        {"tool": "list_sessions", "arguments": {"agent": "claude"}},
        {"tool": "read_session", "arguments": {"session": "7a1c", "tool_output": true}},
        {"tool": "read_session", "arguments": {"session": format!("claude:{SESSION}"), "at": "11111111-0000-4000-8000-000000000005", "max_messages": 1}},
        {"tool": "context", "arguments": {"session": "7a1c"}},
        {"tool": "sessions_touching", "arguments": {"path": "src/backoff.rs"}},
        {"tool": "sessions_touching", "arguments": {"command": "cargo test"}},
        {"tool": "stats", "arguments": {"by": "model"}},
        {"tool": "resume_command", "arguments": {"session": "7a1c", "agent": "codex"}},
        // Bad arguments, each said so that a model can act on it.
        {"tool": "search", "arguments": {}},
        {"tool": "read_session", "arguments": {"session": "abc"}},
        {"tool": "search", "arguments": {"query": WORD, "since": "last tuesday"}},
        {"tool": "stats", "arguments": {"by": "week"}},
        {"tool": "search", "arguments": {"query": WORD, "cursor": "page two"}},
        {"tool": "sessions_touching", "arguments": {}},
        {"tool": "resume_command", "arguments": {"session": "7a1c", "agent": "notepad"}},
        {"tool": "no_such_tool", "arguments": {}},
        {"tool": "list_sessions", "arguments": {"agent": "claude", "limit": 1, "surprise": true}},
        {"tool": "read_session", "arguments": {"session": "7a1c", "start": 99}},
    ])
}

#[test]
fn the_python_sdk_lists_and_calls_every_tool_over_stdio() {
    let Some(py) = python() else { return };
    let env = planted();
    let exe = env!("CARGO_BIN_EXE_agentlog");
    let r = drive(&env, &py, &["stdio", exe, "mcp"], &calls());
    let text = r.to_string();
    assert!(
        !text.contains(SECRET),
        "the planted key left the server: {text}"
    );

    let mut names: Vec<&str> = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "context",
            "list_sessions",
            "read_session",
            "resume_command",
            "search",
            "sessions_touching",
            "stats"
        ]
    );
    for t in r["tools"].as_array().unwrap() {
        assert!(t["description"].as_str().unwrap().len() > 80, "{t}");
        assert_eq!(t["input_schema"]["type"], "object", "{t}");
    }
    let search = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "search")
        .unwrap();
    assert_eq!(search["input_schema"]["required"], json!(["query"]));

    // search: the planted word, its session and message, the key redacted.
    let a = answer(&r, 0);
    let hits = a["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{a}");
    assert!(hits.iter().all(|h| h["session_id"] == SESSION), "{a}");
    assert!(hits.iter().any(|h| h["snippet"]
        .as_str()
        .unwrap()
        .contains(&format!("«{WORD}»"))));
    let decision = hits
        .iter()
        .find(|h| h["entry_id"] == "11111111-0000-4000-8000-000000000002")
        .unwrap_or_else(|| panic!("the decision's message is not a hit: {a}"));
    assert!(
        decision["snippet"]
            .as_str()
            .unwrap()
            .contains("[REDACTED:aws-access-key-id]"),
        "{decision}"
    );
    // One hit a page: the cursor and how many more.
    let a = answer(&r, 1);
    assert_eq!(a["hits"].as_array().unwrap().len(), 1, "{a}");
    assert_eq!(a["next_cursor"], "1", "{a}");
    assert!(a["more"].as_str().unwrap().contains("more hits"), "{a}");

    let a = answer(&r, 2);
    assert_eq!(a["sessions"][0]["session_id"], SESSION, "{a}");
    assert_eq!(a["sessions"][0]["project"], "/home/dev/retry", "{a}");
    assert_eq!(a["matching"], 1);

    // read_session: every message, tool outputs asked for.
    let a = answer(&r, 3);
    assert_eq!(a["session"]["messages_on_branch"], 6, "{a}");
    let msgs = a["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 6, "{a}");
    assert!(msgs[1]["text"].as_str().unwrap().contains(WORD));
    assert!(msgs[1]["text"]
        .as_str()
        .unwrap()
        .contains("[REDACTED:aws-access-key-id]"));
    assert!(
        msgs[4]["text"].as_str().unwrap().contains("12 passed"),
        "{a}"
    );
    // At an entry, by AGENT:ID: the message before it first, then paging.
    let a = answer(&r, 4);
    assert_eq!(a["messages"][0]["n"], 3, "{a}");
    assert_eq!(a["next_start"], 4, "{a}");
    assert!(
        a["more"].as_str().unwrap().starts_with("2 more messages"),
        "{a}"
    );

    let a = answer(&r, 5);
    assert_eq!(a["model"], "claude-sonnet-4-5", "{a}");
    assert_eq!(a["messages_in_context"], 6, "{a}");

    let a = answer(&r, 6);
    assert_eq!(a["sessions"][0]["session_id"], SESSION, "{a}");
    assert_eq!(
        a["sessions"][0]["last"]["entry_id"],
        "11111111-0000-4000-8000-000000000002"
    );
    let a = answer(&r, 7);
    assert_eq!(
        a["sessions"][0]["last"]["entry_id"], "11111111-0000-4000-8000-000000000004",
        "{a}"
    );
    assert!(
        a["sessions"][0]["example"]
            .as_str()
            .unwrap()
            .contains("«cargo test»"),
        "{a}"
    );

    let a = answer(&r, 8);
    assert_eq!(a["rows"][0]["key"], "claude-sonnet-4-5", "{a}");
    assert_eq!(a["total"]["responses"], 3, "{a}");
    assert_eq!(a["total"]["total"], 4015, "{a}");

    // resume_command: returned, nothing written or run.
    let a = answer(&r, 9);
    assert_eq!(a["agent"], "codex");
    assert!(
        a["command"]
            .as_str()
            .unwrap()
            .contains(&format!("codex resume {SESSION}")),
        "{a}"
    );
    assert_eq!(
        a["steps"][0],
        format!("agentlog resume claude:{SESSION} --in codex")
    );
    assert!(
        !env.home().join(".codex").exists(),
        "resume_command wrote a file"
    );

    assert!(error(&r, 10).contains("missing field `query`"));
    assert_eq!(
        error(&r, 11),
        "no session matches 'abc'; call list_sessions or search to find its id"
    );
    assert!(
        error(&r, 12).contains("expected a date"),
        "{}",
        error(&r, 12)
    );
    assert!(
        error(&r, 13).contains("unknown variant `week`"),
        "{}",
        error(&r, 13)
    );
    assert!(error(&r, 14).contains("next_cursor"));
    assert!(error(&r, 15).contains("give path"));
    assert!(
        error(&r, 16).contains("unknown format \"notepad\""),
        "{}",
        error(&r, 16)
    );
    // An unknown tool is the SDK's protocol error.
    let c = &r["calls"][17];
    assert_eq!(c["protocol_error"]["code"], -32602, "{c}");
    assert!(
        c["protocol_error"]["message"]
            .as_str()
            .unwrap()
            .contains("not found"),
        "{c}"
    );
    assert!(error(&r, 18).contains("unknown field `surprise`"));
    assert!(error(&r, 19).contains("past the end"), "{}", error(&r, 19));
}

#[test]
fn no_redact_returns_the_secret_and_a_small_budget_pages_a_session() {
    let Some(py) = python() else { return };
    let env = planted();
    let exe = env!("CARGO_BIN_EXE_agentlog");
    let calls = json!([
        {"tool": "read_session", "arguments": {"session": "7a1c", "max_chars": 500}},
    ]);
    let r = drive(&env, &py, &["stdio", exe, "mcp", "--no-redact"], &calls);
    let a = answer(&r, 0);
    let shown = a["messages"].as_array().unwrap().len();
    assert!((1..6).contains(&shown), "{a}");
    assert_eq!(a["next_start"], shown, "{a}");
    assert!(
        serde_json::to_string(&a["messages"]).unwrap().len() <= 700,
        "{a}"
    );
    let r = drive(
        &env,
        &py,
        &["stdio", exe, "mcp", "--no-redact"],
        &json!([
            {"tool": "search", "arguments": {"query": SECRET}},
        ]),
    );
    assert!(r.to_string().contains(SECRET), "{r}");
}

/// Starts `agentlog mcp --http 127.0.0.1:0` with `extra` arguments;
/// returns the process and the URL it printed.
fn http_server(env: &TestEnv, extra: &[&str]) -> (std::process::Child, String) {
    let mut args = vec!["mcp", "--http", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut child = env
        .command(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().expect("the server printed nothing").unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {first:?}"))
        .to_string();
    // Keep reading so that the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, url)
}

/// POSTs `body` to `url` with `headers`; returns the status code.
fn post(url: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut s = std::net::TcpStream::connect(host).unwrap();
    let mut req = format!(
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut status = String::new();
    BufReader::new(s).read_line(&mut status).unwrap();
    status.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn streamable_http_answers_on_loopback_and_checks_the_token_and_host() {
    let Some(py) = python() else { return };
    let env = planted();
    let calls = json!([{"tool": "search", "arguments": {"query": WORD}}]);

    let (mut server, url) = http_server(&env, &[]);
    assert!(url.ends_with("/mcp"), "{url}");
    let r = drive(&env, &py, &["http", &url], &calls);
    let a = answer(&r, 0);
    assert_eq!(a["hits"][0]["session_id"], SESSION, "{a}");
    assert!(!r.to_string().contains(SECRET), "{r}");
    assert_eq!(r["tools"].as_array().unwrap().len(), 7);
    // Another host name (DNS rebinding) is refused.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let rebound = url.replace("127.0.0.1", "attacker.example");
    let port_url = format!("http://{}", url.trim_start_matches("http://"));
    let status = {
        let rest = port_url.strip_prefix("http://").unwrap();
        let (host, _) = rest.split_once('/').unwrap();
        let mut s = std::net::TcpStream::connect(host).unwrap();
        let evil = rebound
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap();
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {evil}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{init}",
            init.len()
        );
        s.write_all(req.as_bytes()).unwrap();
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).unwrap();
        line
    };
    assert!(
        !status.contains(" 200 "),
        "a foreign Host was served: {status}"
    );
    server.kill().unwrap();
    server.wait().unwrap();

    // With a token, requests without it are refused, with it served.
    let token = "0123456789abcdef0123";
    let (mut server, url) = http_server(&env, &["--token", token]);
    assert_eq!(post(&url, &[], init), 401);
    assert_eq!(
        post(
            &url,
            &[("Authorization", "Bearer wrong-token-000000")],
            init
        ),
        401
    );
    assert_eq!(
        post(&url, &[("Authorization", &format!("Bearer {token}"))], init),
        200
    );
    let r = drive(&env, &py, &["http", &url, token], &calls);
    assert_eq!(answer(&r, 0)["hits"][0]["session_id"], SESSION);
    server.kill().unwrap();
    server.wait().unwrap();

    // Beyond loopback a token is required: a new one is made and printed.
    let (mut server, url) = http_server(&env, &[]);
    server.kill().unwrap();
    server.wait().unwrap();
    let mut child = env
        .command(&["mcp", "--http", "0.0.0.0:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let second = lines.next().unwrap().unwrap();
    let printed = second
        .rsplit_once("Bearer ")
        .unwrap_or_else(|| panic!("no token printed: {second:?}"))
        .1
        .trim()
        .to_string();
    assert_eq!(printed.len(), 32, "{second}");
    let port = first.rsplit_once(':').unwrap().1.trim_end_matches("/mcp");
    let any = format!("http://127.0.0.1:{port}/mcp");
    assert_ne!(any, url);
    assert_eq!(post(&any, &[], init), 401);
    assert_eq!(
        post(
            &any,
            &[("Authorization", &format!("Bearer {printed}"))],
            init
        ),
        200
    );
    child.kill().unwrap();
    child.wait().unwrap();

    // A short token is refused at start.
    let run = env.run(&["mcp", "--http", "127.0.0.1:0", "--token", "short"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stderr.contains("at least 16"), "{}", run.stderr);
}
