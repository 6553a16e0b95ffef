//! Real agents as clients of `agentlog mcp`: Claude Code (`--mcp-config`),
//! Codex (`mcp_servers` in its config.toml) and Gemini CLI (`mcpServers` in
//! its settings.json), each in its own sandbox HOME that already holds an
//! earlier session (crates/mcp/tests/planted-claude.jsonl: a decision named
//! by a made-up word, and an AWS key). The mock model asks for agentlog's
//! search tool by the name the agent declared it under; the test checks
//! that the agent called it and that the tool result the agent sent back to
//! the model holds the planted word and the key's redaction marker, and
//! that no request to the model holds the key.
//!
//! With `CI` set a CLI that cannot be installed fails the test; elsewhere
//! the test prints that it skipped and why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use agentlog_harness::{namespaced_tool_call, text, tool_call, Item, MockServer, Rule, Script};
use common::*;
use serde_json::{json, Value};
use std::process::Command;

const SESSION: &str = "7a1c0ffe-5eed-4d1e-9b0b-5ec7e7000001";
const WORD: &str = "zephyrquokka";
const SECRET: &str = "AKIAQ7X3LMN4PZ2RT5WB";

/// Plants the earlier session in the sandbox's HOME.
fn plant(sb: &Sandbox) {
    let dir = sb.home.join(".claude/projects/-home-dev-retry");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        repo().join("crates/mcp/tests/planted-claude.jsonl"),
        dir.join(format!("{SESSION}.jsonl")),
    )
    .unwrap();
}

/// The environment `agentlog mcp` runs with: the sandbox's HOME (where
/// the planted session and the index are) and nothing of the developer's.
fn server_env(sb: &Sandbox) -> Value {
    json!({
        "HOME": sb.home.display().to_string(),
        "PATH": std::env::var("PATH").unwrap_or_default(),
        "XDG_DATA_HOME": sb.home.join(".local/share").display().to_string(),
        "XDG_CONFIG_HOME": sb.home.join(".config").display().to_string(),
    })
}

/// Configures the agent of `sb` to start `agentlog mcp` as the MCP server
/// `agentlog`; returns the extra arguments its command line needs.
fn configure(sb: &Sandbox) -> Vec<String> {
    let bin = agentlog_bin().display().to_string();
    match sb.agent {
        "claude" => {
            let file = sb.home.join("mcp.json");
            let config = json!({"mcpServers": {"agentlog": {
                "type": "stdio", "command": bin, "args": ["mcp"], "env": server_env(sb)}}});
            std::fs::write(&file, config.to_string()).unwrap();
            vec![
                "--mcp-config".into(),
                file.display().to_string(),
                "--strict-mcp-config".into(),
            ]
        }
        "codex" => {
            let path = sb.home.join(".codex/config.toml");
            let mut config = std::fs::read_to_string(&path).unwrap();
            let env: Vec<String> = server_env(sb)
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| format!("{k} = {}", toml_string(v.as_str().unwrap())))
                .collect();
            config.push_str(&format!(
                "\n[mcp_servers.agentlog]\ncommand = {}\nargs = [\"mcp\"]\nstartup_timeout_sec = 120\ntool_timeout_sec = 120\nenv = {{ {} }}\n",
                toml_string(&bin),
                env.join(", ")
            ));
            std::fs::write(&path, config).unwrap();
            Vec::new()
        }
        "gemini" => {
            let path = sb.home.join(".gemini/settings.json");
            let mut v: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            v["mcpServers"] = json!({"agentlog": {
                "command": bin, "args": ["mcp"], "env": server_env(sb),
                "trust": true, "timeout": 120000}});
            std::fs::write(&path, v.to_string()).unwrap();
            Vec::new()
        }
        other => panic!("no MCP configuration for {other}"),
    }
}

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Runs the agent on `prompt` with `extra` arguments (Claude Code's MCP
/// configuration); the other agents read theirs from their settings.
fn run(sb: &Sandbox, prompt: &str, extra: &[String]) -> String {
    if sb.agent != "claude" {
        return sb.run(&sb.project, prompt, None);
    }
    let mut cmd = Command::new(cli("claude"));
    cmd.args(["-p", prompt, "--dangerously-skip-permissions"]);
    cmd.args(["--output-format", "json"]);
    cmd.args(extra);
    let mut env = sb.env();
    // Claude Code defers MCP tools behind its ToolSearch tool by default;
    // declared directly, the mock model can call agentlog's search at once.
    env.push(("ENABLE_TOOL_SEARCH".into(), "false".into()));
    run_cmd(cmd, &sb.project, &env, &format!("claude {prompt:?}"))
}

/// Every tool the requests declared: (namespace, name).
fn declared(server: &MockServer) -> Vec<(Option<String>, String)> {
    fn walk(v: &Value, ns: Option<&str>, out: &mut Vec<(Option<String>, String)>) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| walk(x, ns, out)),
            Value::Object(o) => {
                let name = o.get("name").and_then(Value::as_str);
                let inner = o.get("tools").or_else(|| o.get("functionDeclarations"));
                match (name, inner) {
                    // A namespace of tools (Codex's), or Gemini's list.
                    (n, Some(inner)) => walk(inner, n.or(ns), out),
                    (Some(n), None) => out.push((ns.map(str::to_string), n.to_string())),
                    (None, None) => {
                        if let Some(f) = o.get("function") {
                            walk(f, ns, out);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for r in server.requests() {
        if let Some(tools) = r.body.get("tools") {
            walk(tools, None, &mut out);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The call of agentlog's search tool as the agent declared it.
fn search_call(agent: &str, tools: &[(Option<String>, String)]) -> agentlog_harness::Part {
    let args = json!({"query": "decided backoff"});
    let is_ours = |ns: &Option<String>, n: &str| {
        let full = format!("{}{n}", ns.as_deref().unwrap_or(""));
        full.contains("agentlog") && n.ends_with("search")
    };
    let Some((ns, name)) = tools.iter().find(|(ns, n)| is_ours(ns, n)) else {
        panic!(
            "{agent} declared no search tool of the agentlog MCP server to the model; it declared: {tools:?} (load {})",
            load_average()
        );
    };
    println!("{agent} declares agentlog's search as {ns:?} {name:?}");
    match ns {
        Some(ns) => namespaced_tool_call(ns, name, args),
        None => tool_call(name, args),
    }
}

fn check(agent: &'static str) {
    let server = server(Script::default());
    let sb = Sandbox::new(agent, &server.url());
    plant(&sb);
    let extra = configure(&sb);
    // First the agent runs once to show which tools it declares (and so
    // under which name agentlog's search reaches the model).
    run(&sb, &format!("mcp-probe {agent}: say ok"), &extra);
    let tools = declared(&server);
    let call = search_call(agent, &tools);
    server.clear_requests();
    server.set_script(Script::with_rule(
        Rule::new("mcp-check")
            .then(vec![call])
            .then(vec![text(format!("mcp-answer-{agent}"))]),
    ));
    let out = run(
        &sb,
        &format!("mcp-check {agent}: what did we decide about the retry?"),
        &extra,
    );
    let requests = server.requests();
    let results: Vec<String> = requests
        .iter()
        .flat_map(|r| r.items())
        .filter_map(|i| match i {
            Item::ToolResult { output } => Some(output),
            _ => None,
        })
        .collect();
    let found = results.iter().find(|o| o.contains(WORD));
    let Some(found) = found else {
        panic!(
            "{agent}: no tool result sent to the model holds {WORD:?}; tool results: {results:#?}\nagent output: {out}\n(load {})",
            load_average()
        );
    };
    assert!(
        found.contains(SESSION) && found.contains("[REDACTED:aws-access-key-id]"),
        "{agent}: the search result lacks the session or the redaction marker: {found}"
    );
    for r in &requests {
        assert!(
            !r.body.to_string().contains(SECRET),
            "{agent}: the planted key reached the model in request {}",
            r.seq
        );
    }
    assert!(
        out.contains(&format!("mcp-answer-{agent}")),
        "{agent}: {out}"
    );
}

#[test]
fn real_claude_code_calls_agentlogs_search_over_mcp() {
    run_or_skip(|| check("claude"));
}

#[test]
fn real_codex_calls_agentlogs_search_over_mcp() {
    run_or_skip(|| check("codex"));
}

#[test]
fn real_gemini_cli_calls_agentlogs_search_over_mcp() {
    run_or_skip(|| check("gemini"));
}
