//! Sessions as OpenTelemetry traces, checked by the tools that consume
//! them: `export --to otel` parses with the official `opentelemetry-proto`
//! messages (Python, `json_format.Parse`, strict) for the real sample files
//! of every agent and for generated corpora; `push --otlp` to a real Arize
//! Phoenix (installed by `scripts/install-phoenix.sh`, started here on
//! loopback) gives one trace per session with its model calls, tool calls
//! and the token totals of `agentlog stats`, sends nothing the second time,
//! sends an appended turn as new spans, and no planted secret reaches it.
//! With `CI` set a missing Phoenix fails the tests; elsewhere they skip.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use agentlog_formats::registry;
use agentlog_model::{BlockKind, EntryKind, Session};
use common::TestEnv;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const SEED: u64 = 41;

/// The Python of `scripts/install-phoenix.sh`'s venv (Phoenix and
/// opentelemetry-proto), installed when missing; `None` (a skip, said)
/// outside CI when it cannot be.
fn python() -> Option<PathBuf> {
    common::installed(
        "install-phoenix.sh",
        &[],
        "Arize Phoenix and opentelemetry-proto",
    )
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/otel")
        .join(name)
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            // A session stored as a folder is found by detection too.
            if registry::detect(&p).is_ok_and(|f| f.is_session_folder(&p)) {
                out.push(p);
            } else {
                files(&p, out);
            }
        } else {
            out.push(p);
        }
    }
}

/// The tokens and spans a session's trace must hold: its tool calls, and
/// its model responses' tokens, each response id once (as `stats`).
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Expected {
    tools: u64,
    input: u64,
    output: u64,
}

fn expected(s: &Session) -> Expected {
    let mut e = Expected::default();
    let mut seen = HashSet::new();
    for entry in &s.entries {
        if let EntryKind::Message(m) = &entry.kind {
            if m.role == agentlog_model::Role::Assistant {
                e.tools += m
                    .content
                    .iter()
                    .filter(|b| matches!(b.kind, BlockKind::ToolCall { .. }))
                    .count() as u64;
            }
        }
        let rid = match &entry.kind {
            EntryKind::Message(m) => m.id.clone(),
            EntryKind::LlmResponse { output, .. } => {
                output.get("id").and_then(Value::as_str).map(String::from)
            }
            _ => None,
        };
        if let Some(u) = entry.response_usage() {
            if rid.is_none_or(|r| seen.insert(r)) {
                let cap = u32::MAX as u64;
                e.input += u.input.min(cap) + u.cache_read.min(cap) + u.cache_write.min(cap);
                e.output += u.output.min(cap);
            }
        }
    }
    e
}

/// Runs the strict parser over `paths`; one summary per file.
fn parse_all(py: &Path, paths: &[PathBuf]) -> Vec<Value> {
    let mut out = Vec::new();
    for chunk in paths.chunks(200) {
        let o = Command::new(py)
            .arg(script("parse_otlp.py"))
            .args(chunk)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "opentelemetry-proto refused an export: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            out.push(serde_json::from_str(line).unwrap());
        }
    }
    out
}

#[test]
fn otlp_json_of_every_agent_parses_with_the_official_protobuf_messages() {
    let Some(py) = python() else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let mut sources = Vec::new();
    files(&common::fixtures(), &mut sources);
    // The real sample files the formats' conformance suite lists beside
    // the checkout's own (recorded runs of the real agents).
    for dir in ["../harness/fixtures", "../formats/tests/fixtures"] {
        files(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join(dir),
            &mut sources,
        );
    }
    let generated = tempfile::tempdir().unwrap();
    for (i, seed) in [SEED, SEED + 1].into_iter().enumerate() {
        let g =
            agentlog_bench::gen::generate(&generated.path().join(i.to_string()), 1_500_000, seed)
                .unwrap();
        sources.extend(g.files.into_iter().map(|(p, _)| p));
    }
    // A file holding many sessions (OpenCode's database) is read through
    // its format's discovery, as agentlog finds them.
    let mut sessions: BTreeSet<(PathBuf, &'static str)> = BTreeSet::new();
    for src in &sources {
        let Ok(format) = registry::detect(src) else {
            continue;
        };
        let mut env = agentlog_formats::discover::DiscoverEnv::with_home("/nonexistent");
        let root = if src.is_dir() {
            src.clone()
        } else {
            src.parent().unwrap().to_path_buf()
        };
        env.roots.insert(format.name().to_string(), vec![root]);
        let found = format.discover(&env);
        if found.is_empty() || format.read_path(src).is_ok() {
            sessions.insert((src.clone(), format.name()));
        }
        if !found.contains(src) && format.read_path(src).is_err() {
            sessions.extend(found.into_iter().map(|p| (p, format.name())));
        }
    }
    let mut exported = Vec::new();
    let mut wanted = Vec::new();
    let mut formats = BTreeSet::new();
    for (src, name) in &sessions {
        let format = registry::by_name(name).unwrap();
        let Ok(read) = format.read_path(src) else {
            continue;
        };
        if read.session.entries.is_empty() {
            continue;
        }
        let (bytes, fidelity) = agentlog_api::otel::export(&read.session);
        assert_eq!(fidelity.target, "otel");
        // The same session gives the same bytes (the same trace and ids).
        assert_eq!(
            bytes,
            agentlog_api::otel::export(&read.session).0,
            "{}",
            src.display()
        );
        let path = out.path().join(format!("{}.json", exported.len()));
        std::fs::write(&path, &bytes).unwrap();
        exported.push(path);
        wanted.push((src.clone(), expected(&read.session)));
        formats.insert(format.name());
    }
    // Every agent agentlog reads, among the samples.
    // (`json` is agentlog's own model, not an agent's.)
    let readers: BTreeSet<&str> = registry::all()
        .iter()
        .map(|f| f.name())
        .filter(|n| *n != "json")
        .collect();
    let missing: Vec<&&str> = readers.difference(&formats).collect();
    assert!(missing.is_empty(), "no sample exported for {missing:?}");
    let parsed = parse_all(&py, &exported);
    assert_eq!(parsed.len(), exported.len());
    for (p, (src, want)) in parsed.iter().zip(&wanted) {
        let ops = &p["ops"];
        assert_eq!(p["traces"], 1, "{}: one trace", src.display());
        assert_eq!(ops["invoke_agent"], 1, "{}: one root", src.display());
        assert_eq!(
            ops["execute_tool"].as_u64().unwrap_or(0),
            want.tools,
            "{}: a span per tool call",
            src.display()
        );
        assert_eq!(
            (
                p["input_tokens"].as_u64().unwrap(),
                p["output_tokens"].as_u64().unwrap()
            ),
            (want.input, want.output),
            "{}: the tokens of every response, once",
            src.display()
        );
    }
    println!(
        "{} sessions of {} formats parsed",
        parsed.len(),
        formats.len()
    );
}

#[test]
fn export_and_convert_to_otel_redact_by_default_and_report_what_a_trace_cannot_hold() {
    let env = TestEnv::new();
    let mut bytes = Vec::new();
    registry::by_name("json")
        .unwrap()
        .write(&agentlog_bench::secrets::planted_session(SEED), &mut bytes)
        .unwrap();
    let file = env.write("planted.json", &bytes);
    let f = file.to_str().unwrap();
    let r = env.run(&["export", f, "--to", "otel"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(
        agentlog_bench::secrets::leaks(&r.stdout, SEED),
        Vec::<String>::new()
    );
    assert!(r.stderr.contains("redacted"), "{}", r.stderr);
    assert!(r.stderr.contains("otel cannot hold"), "{}", r.stderr);
    assert!(r.stderr.contains("the session's todo list"), "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"].is_string());
    let r = env.run(&["convert", f, "--to", "otel", "-o", "trace.json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let written = std::fs::read_to_string(env.home().join("trace.json")).unwrap();
    assert_eq!(
        agentlog_bench::secrets::leaks(&written, SEED),
        Vec::<String>::new()
    );
    let r = env.run(&["export", f, "--to", "otel", "--no-redact"]);
    assert!(
        !agentlog_bench::secrets::leaks(&r.stdout, SEED).is_empty(),
        "--no-redact keeps them"
    );
    let r = env.run(&["convert", f, "--to", "otel", "--strict"]);
    assert_ne!(
        r.status, 0,
        "a trace cannot hold everything: --strict refuses"
    );
}

/// A Phoenix started on loopback for one test, stopped when dropped.
struct Phoenix {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
    log: PathBuf,
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start_phoenix(py: &Path) -> Phoenix {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let log = dir.path().join("phoenix.log");
    let child = Command::new(py)
        .args(["-m", "phoenix.server.main", "serve"])
        .env("PHOENIX_WORKING_DIR", dir.path())
        .env("PHOENIX_HOST", "127.0.0.1")
        .env("PHOENIX_PORT", port.to_string())
        .env("PHOENIX_GRPC_PORT", free_port().to_string())
        .env("PHOENIX_TELEMETRY_ENABLED", "false")
        .current_dir(dir.path())
        .stdout(Stdio::from(std::fs::File::create(&log).unwrap()))
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("phoenix.err")).unwrap(),
        ))
        .spawn()
        .unwrap();
    let p = Phoenix {
        child,
        url: format!("http://127.0.0.1:{port}"),
        log,
        _dir: dir,
    };
    // Migrations and the first start take a while on a loaded machine.
    let o = Command::new(py)
        .arg(script("phoenix.py"))
        .args(["wait", &p.url, "600"])
        .output()
        .unwrap();
    if !o.status.success() {
        let err = std::fs::read_to_string(p.log.with_file_name("phoenix.err")).unwrap_or_default();
        let tail: String = err
            .chars()
            .rev()
            .take(3000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        panic!(
            "Phoenix did not start: {}\nits stderr ends:\n{tail}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    p
}

/// What Phoenix holds: every trace and every span.
fn dump(py: &Path, phoenix: &Phoenix) -> (Value, String) {
    let file = phoenix.log.with_file_name("dump.json");
    let o = Command::new(py)
        .arg(script("phoenix.py"))
        .args(["dump", &phoenix.url, file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&file).unwrap();
    (serde_json::from_str(&text).unwrap(), text)
}

/// Per trace id: (model calls, tool calls, agent spans, prompt, completion).
type Seen = BTreeMap<String, (u64, u64, u64, u64, u64)>;

fn traces(v: &Value) -> Seen {
    let mut out = Seen::new();
    for t in v["traces"].as_array().unwrap() {
        let kinds: Vec<&str> = t["kinds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap())
            .collect();
        let n = |k: &str| kinds.iter().filter(|x| **x == k).count() as u64;
        out.insert(
            t["trace_id"].as_str().unwrap().to_string(),
            (
                n("LLM"),
                n("TOOL"),
                n("AGENT"),
                t["prompt"].as_u64().unwrap(),
                t["completion"].as_u64().unwrap(),
            ),
        );
    }
    out
}

/// Polls Phoenix (it writes what it received in the background) until it
/// holds `want`, or fails saying what it holds.
fn wait_for(py: &Path, phoenix: &Phoenix, want: &Seen) -> (Value, String) {
    let mut last = Seen::new();
    for _ in 0..600 {
        let (v, text) = dump(py, phoenix);
        last = traces(&v);
        if &last == want {
            return (v, text);
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let diff: Vec<String> = want
        .iter()
        .filter(|(k, w)| last.get(*k) != Some(w))
        .map(|(k, w)| format!("{k}: want {w:?}, Phoenix has {:?}", last.get(k)))
        .take(10)
        .collect();
    panic!(
        "Phoenix does not hold the traces pushed ({} wanted, {} held):\n{}",
        want.len(),
        last.len(),
        diff.join("\n")
    );
}

/// What Phoenix must hold for the sessions of `env`: their traces, each
/// with its model calls, tool calls, root and tokens.
fn want(env: &TestEnv) -> Seen {
    let found = agentlog_formats::discover::discover_all(
        &agentlog_formats::discover::DiscoverEnv::with_home(env.home()),
        None,
    );
    let mut out = Seen::new();
    for f in found {
        let format = registry::by_name(f.format).unwrap();
        let read = format.read_path(&f.path).unwrap();
        let t = agentlog_api::otel::trace(&read.session);
        let e = expected(&read.session);
        let chats = t
            .spans
            .iter()
            .filter(|s| s.span.name.starts_with("chat"))
            .count() as u64;
        out.insert(
            hex::encode(&t.trace_id),
            (chats, e.tools, 1, e.input, e.output),
        );
    }
    out
}

/// The model calls Phoenix counted tokens for (LLM spans with its own
/// `llm.token_count.prompt`), and the sessions its spans name.
fn counted_calls(v: &Value) -> (u64, BTreeSet<String>) {
    let spans = v["spans"].as_array().unwrap();
    let calls = spans
        .iter()
        .filter(|s| s["span_kind"] == "LLM" && s["attributes"]["llm.token_count.prompt"].is_u64())
        .count() as u64;
    let sessions = spans
        .iter()
        .filter_map(|s| s["attributes"]["session.id"].as_str().map(String::from))
        .collect();
    (calls, sessions)
}

/// `agentlog stats --json`: responses counted, and their input (with
/// cached) and output tokens.
fn stats(env: &TestEnv) -> (u64, u64, u64) {
    // Bring the index up to date first (an append does not change the
    // folder's time, which a quick refresh looks at).
    let r = env.run(&["index"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let r = env.run(&["stats", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let t = &v["total"];
    let n = |k: &str| t[k].as_u64().unwrap_or(0);
    (
        n("responses"),
        n("input") + n("cache_read") + n("cache_write"),
        n("output"),
    )
}

fn stats_tokens(env: &TestEnv) -> (u64, u64) {
    let (_, input, output) = stats(env);
    (input, output)
}

fn push(env: &TestEnv, url: &str) -> Value {
    let r = env.run(&["push", "--otlp", url, "--json"]);
    assert_eq!(r.status, 0, "push --otlp failed: {}{}", r.stdout, r.stderr);
    serde_json::from_str::<Value>(&r.stdout).unwrap()["report"].clone()
}

/// Appends a prompt and a final answer (with its usage) to the Claude
/// Code session `file`; returns the answer's tokens (input, output).
fn append_turn(file: &Path) -> (u64, u64) {
    let text = std::fs::read_to_string(file).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let parent = last["uuid"].as_str().unwrap().to_string();
    let mut user = last.clone();
    user["type"] = json!("user");
    user["uuid"] = json!("0a0b0c0d-0000-4000-8000-0000000000a1");
    user["parentUuid"] = json!(parent);
    user["timestamp"] = json!("2030-01-01T00:00:00.000Z");
    user["message"] = json!({"role": "user", "content": "and now the summary, please"});
    for k in ["requestId", "toolUseResult"] {
        user.as_object_mut().unwrap().remove(k);
    }
    let mut answer = last.clone();
    answer["type"] = json!("assistant");
    answer["uuid"] = json!("0a0b0c0d-0000-4000-8000-0000000000a2");
    answer["parentUuid"] = json!("0a0b0c0d-0000-4000-8000-0000000000a1");
    answer["timestamp"] = json!("2030-01-01T00:00:05.000Z");
    answer["requestId"] = json!("req_appended_turn");
    answer.as_object_mut().unwrap().remove("toolUseResult");
    answer["message"] = json!({
        "id": "msg_appended_turn",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "Here is the summary."}],
        "stop_reason": "end_turn",
        "stop_sequence": null,
        "usage": {"input_tokens": 17, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 300, "output_tokens": 23}
    });
    let mut more = String::new();
    for v in [user, answer] {
        more.push_str(&serde_json::to_string(&v).unwrap());
        more.push('\n');
    }
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    std::io::Write::write_all(&mut f, more.as_bytes()).unwrap();
    (317, 23)
}

#[test]
fn phoenix_receives_each_session_once_and_appended_turns_as_new_spans() {
    let Some(py) = python() else {
        return;
    };
    let env = TestEnv::new();
    let g = agentlog_bench::gen::generate(env.home(), 600_000, SEED).unwrap();
    // A session full of secrets, where Claude Code keeps its sessions.
    let mut bytes = Vec::new();
    registry::by_name("json")
        .unwrap()
        .write(&agentlog_bench::secrets::planted_session(SEED), &mut bytes)
        .unwrap();
    let planted = env.write("planted.json", &bytes);
    let r = env.run(&[
        "resume",
        planted.to_str().unwrap(),
        "--from",
        "json",
        "--in",
        "claude",
        "--cwd",
        "/home/u/project",
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    std::fs::remove_file(&planted).unwrap();

    let phoenix = start_phoenix(&py);
    // Phoenix takes protobuf only: a refused push says what the endpoint
    // answered and marks nothing as sent.
    let r = env.run(&["push", "--otlp", &phoenix.url, "--encoding", "json"]);
    assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("/v1/traces: the endpoint answered 415"),
        "{}",
        r.stderr
    );
    // A session its agent deleted, kept in agentlog's archive, is sent too.
    let want1 = want(&env);
    let r = env.run(&["index"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let claude = g
        .files
        .iter()
        .find(|(_, a)| *a == "claude")
        .map(|(p, _)| p.clone())
        .expect("a generated Claude Code session");
    let deleted = g
        .files
        .iter()
        .map(|(p, _)| p.clone())
        .find(|p| *p != claude)
        .expect("another generated session");
    std::fs::remove_file(&deleted).unwrap();
    let first = push(&env, &phoenix.url);
    assert_eq!(
        first["new_traces"].as_u64().unwrap() as usize,
        want1.len(),
        "{first}"
    );
    assert_eq!(first["waiting"], 0, "{first}");
    let (v, text) = wait_for(&py, &phoenix, &want1);
    let held = traces(&v);
    let (prompt, completion) = held.values().fold((0, 0), |a, t| (a.0 + t.3, a.1 + t.4));
    assert_eq!(
        (prompt, completion),
        stats_tokens(&env),
        "Phoenix's tokens are stats'"
    );
    assert!(
        held.values().all(|t| t.0 > 0),
        "every session has model calls"
    );
    let (calls, sessions) = counted_calls(&v);
    assert_eq!(
        calls,
        stats(&env).0,
        "a model call per response stats counts"
    );
    assert_eq!(
        sessions.len(),
        want1.len(),
        "Phoenix groups each trace as its session"
    );
    assert!(
        held.values().map(|t| t.1).sum::<u64>() > 0,
        "tool spans arrived"
    );
    assert_eq!(
        agentlog_bench::secrets::leaks(&text, SEED),
        Vec::<String>::new(),
        "a secret reached Phoenix"
    );
    assert!(
        text.contains("[REDACTED:"),
        "the planted session arrived, redacted"
    );

    let second = push(&env, &phoenix.url);
    assert_eq!(second["spans"], 0, "a second push sends nothing: {second}");
    assert_eq!(second["unchanged"], second["files"], "{second}");

    let (input, output) = append_turn(&claude);
    let third = push(&env, &phoenix.url);
    assert_eq!(
        third["spans"], 1,
        "the appended turn is one new model call: {third}"
    );
    assert_eq!(third["new_traces"], 0, "{third}");
    let mut want3 = want1.clone();
    let read = registry::detect(&claude)
        .unwrap()
        .read_path(&claude)
        .unwrap();
    let id = hex::encode(agentlog_api::otel::trace(&read.session).trace_id);
    let t = want3.get_mut(&id).unwrap();
    t.0 += 1;
    t.3 += input;
    t.4 += output;
    let (v, _) = wait_for(&py, &phoenix, &want3);
    let held = traces(&v);
    let (prompt, completion) = held.values().fold((0, 0), |a, t| (a.0 + t.3, a.1 + t.4));
    assert_eq!(
        (prompt, completion),
        stats_tokens(&env),
        "after the append too"
    );
}
