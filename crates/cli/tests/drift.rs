#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The drift alarm and what `ls` shows first, through the binary: files of
//! agent versions that write what agentlog does not know (a new record
//! type, a renamed field, a new top-level layout, a file no reader can
//! read) are said once by `index` and by the refresh before `search`, and
//! listed by `doctor`; `ls` lists conversations and counts the headless
//! runs and subagent transcripts, which `--all` lists; `search` finds them
//! all and marks the others.

mod common;
use common::TestEnv;
use std::io::Write;
use std::path::Path;

/// Files the real CLIs wrote against the mock model (crates/harness).
const HARNESS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../harness/fixtures");

/// Writes the harness fixture `name` to `to` under HOME, each record
/// changed by `edit`.
fn put(env: &TestEnv, name: &str, to: &str, edit: impl Fn(&mut serde_json::Value)) {
    let text = std::fs::read_to_string(Path::new(HARNESS).join(name)).unwrap();
    let mut out = String::new();
    for l in text.lines() {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        edit(&mut v);
        out.push_str(&serde_json::to_string(&v).unwrap());
        out.push('\n');
    }
    env.write(to, out.as_bytes());
}

const CLAUDE: &str = ".claude/projects/-tmp-project";
const CODEX: &str = ".codex/sessions/2026/11/23";

fn planted() -> TestEnv {
    let env = TestEnv::new();
    // Claude Code "2.9.0", a conversation (entrypoint cli): `cwd` renamed
    // and a record type of its own.
    put(
        &env,
        "claude-2.1.330.jsonl",
        &format!("{CLAUDE}/6215620c-6219-453f-a09e-7ac5800146b1.jsonl"),
        |v| {
            v["version"] = "2.9.0".into();
            if v.get("entrypoint").is_some() {
                v["entrypoint"] = "cli".into();
            }
            if let Some(cwd) = v.as_object_mut().unwrap().remove("cwd") {
                v["workDir"] = cwd;
            }
            if v["type"] == "mode" {
                v["type"] = "session-mode".into();
            }
        },
    );
    // `claude -p` as 2.1.330 wrote it (entrypoint sdk-cli).
    put(
        &env,
        "claude-2.1.330.jsonl",
        &format!("{CLAUDE}/7215620c-6219-453f-a09e-7ac5800146b1.jsonl"),
        |_| {},
    );
    // `codex exec` and its subagent, as 0.169.0 wrote them; the first with
    // a line type of a later Codex.
    put(
        &env,
        "codex-0.169.0.jsonl",
        &format!("{CODEX}/rollout-2026-11-23T21-39-33-01a20a59-9840-78d0-b5e2-d115a1804321.jsonl"),
        |_| {},
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(env.home().join(format!(
            "{CODEX}/rollout-2026-11-23T21-39-33-01a20a59-9840-78d0-b5e2-d115a1804321.jsonl"
        )))
        .unwrap();
    writeln!(
        f,
        r#"{{"timestamp":"2026-11-23T21:39:40.000Z","type":"world_event","payload":{{"x":1}}}}"#
    )
    .unwrap();
    put(
        &env,
        "subagent-codex-0.169.0.jsonl",
        &format!("{CODEX}/rollout-2026-11-25T18-28-20-01a213f7-3f6c-7f83-a32e-0794ef5011d6.jsonl"),
        |_| {},
    );
    // Gemini CLI and pi files of a top-level layout no reader knows.
    env.write(
        ".gemini/tmp/0123abcd/chats/session-2026-11-23T21-39-aaaa1111.jsonl",
        b"{\"format\":\"chat-v2\",\"conversation\":{\"turns\":[{\"from\":\"user\",\"text\":\"hi\"}]}}\n",
    );
    env.write(
        ".pi/agent/sessions/--tmp-project--/2026-11-23T21-39-39-822Z_01a20a59-b0ae-7249-a6f5-a32560b7b299.jsonl",
        b"{\"kind\":\"pi-session\",\"v\":4,\"items\":[{\"role\":\"user\",\"text\":\"hi\"}]}\n",
    );
    // A pi file no reader can read at all.
    env.write(
        ".pi/agent/sessions/--tmp-project--/2026-11-24T10-00-00-000Z_01a20a59-b0ae-7249-a6f5-a32560b7b2aa.jsonl",
        b"PI SESSION v5\nbinary follows\n",
    );
    env
}

fn run(env: &TestEnv, args: &[&str]) -> common::Run {
    let out = env
        .command(args)
        .env("AGENTLOG_NO_BACKGROUND", "1")
        .output()
        .unwrap();
    common::Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn index_says_what_is_new_once_and_doctor_lists_it() {
    let env = planted();
    let first = run(&env, &["index"]);
    let said = env.redact(&first.stderr);
    let wanted = [
        "agentlog: Claude Code 2.9.0 writes what agentlog does not know, in 1 session (first [HOME]/.claude/projects/-tmp-project/6215620c-6219-453f-a09e-7ac5800146b1.jsonl): ",
        "field `user.workDir`",
        "field `assistant.workDir`",
        "record type `session-mode`",
        "the sessions are listed and kept as written, but what is new is not shown (said once; `agentlog doctor` lists it again)",
        "agentlog: Codex 0.169.0 writes what agentlog does not know, in 1 session",
        "record type `world_event`",
        "agentlog: Gemini CLI writes what agentlog does not know, in 1 session",
        "field `session.conversation`",
        "a file layout it cannot read; the sessions are listed (empty) and kept as written",
        "agentlog: pi writes what agentlog does not know, in 1 session",
        "agentlog: pi could not be read at all: [HOME]/.pi/agent/sessions/--tmp-project--/2026-11-24T10-00-00-000Z_01a20a59-b0ae-7249-a6f5-a32560b7b2aa.jsonl",
    ];
    for w in wanted {
        assert!(said.contains(w), "{w:?} not in:\n{said}");
    }
    assert_eq!(
        said.matches("does not know").count(),
        4,
        "one line per agent version:\n{said}"
    );
    // Once: the next index, and the refresh before a search, say nothing.
    let second = run(&env, &["index"]);
    assert!(
        !second.stderr.contains("does not know"),
        "{}",
        second.stderr
    );
    assert!(
        !second.stderr.contains("could not be read"),
        "{}",
        second.stderr
    );
    let search = run(&env, &["search", "alpha"]);
    assert_eq!(search.status, 0, "{}", search.stderr);
    assert!(
        !search.stderr.contains("does not know"),
        "{}",
        search.stderr
    );
    // Search finds every kind, and marks the hits outside conversations.
    let line = |id: &str| -> String {
        search
            .stdout
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("no hit in {id}: {}", search.stdout))
            .to_string()
    };
    assert!(
        line("7215620c").ends_with("[headless]"),
        "{}",
        search.stdout
    );
    assert!(line("01a20a59").contains("[headless]"), "{}", search.stdout);
    assert!(
        !line("6215620c").contains("[headless]"),
        "{}",
        search.stdout
    );

    // Something new in a file appended to: said by the refresh before the
    // next search, once.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(env.home().join(format!(
            "{CODEX}/rollout-2026-11-23T21-39-33-01a20a59-9840-78d0-b5e2-d115a1804321.jsonl"
        )))
        .unwrap();
    writeln!(f, r#"{{"timestamp":"2026-11-23T21:39:41.000Z","type":"response_item","payload":{{"type":"hologram","data":1}}}}"#).unwrap();
    drop(f);
    let search = run(&env, &["search", "alpha"]);
    let said = env.redact(&search.stderr);
    assert!(
        said.contains("agentlog: Codex 0.169.0 writes what agentlog does not know, in 1 session")
            && said.contains("record type `response_item.hologram`")
            && !said.contains("world_event"),
        "{said}"
    );
    let again = run(&env, &["search", "alpha"]);
    assert!(!again.stderr.contains("does not know"), "{}", again.stderr);

    // doctor lists all of it, said before or not.
    let doctor = run(&env, &["doctor"]);
    let listed = env.redact(&doctor.stdout);
    for w in [
        "drift: Claude Code 2.9.0 writes what agentlog does not know, in 1 session",
        "drift: Codex 0.169.0 writes what agentlog does not know, in 1 session",
        "record type `response_item.hologram`, record type `world_event`",
        "drift: Gemini CLI writes",
        "drift: pi writes",
        "drift: pi could not be read at all",
        "drift: `agentlog validate --drift` says where each is, by line",
    ] {
        assert!(listed.contains(w), "{w:?} not in:\n{listed}");
    }
}

#[test]
fn ls_lists_conversations_first_and_counts_the_others() {
    let env = planted();
    for source in [&["ls", "--files"][..], &["ls"]] {
        let r = run(&env, source);
        assert_eq!(r.status, 0, "{}", r.stderr);
        let rows: Vec<&str> = r.stdout.lines().skip(1).collect();
        // The Claude conversation and the two files of a layout no reader
        // knows (listed, empty); not `claude -p`, `codex exec` or the Codex
        // subagent.
        assert_eq!(rows.len(), 3, "{source:?}:\n{}", r.stdout);
        assert!(
            rows.iter()
                .any(|l| l.contains("6215620c") && l.contains("claude")),
            "{}",
            r.stdout
        );
        assert!(!rows.iter().any(|l| l.contains("codex")), "{}", r.stdout);
        assert!(
            r.stderr.contains(
                "agentlog: and 3 headless runs and subagent transcripts: --all lists them"
            ),
            "{source:?}: {}",
            r.stderr
        );
        let mut all_args = source.to_vec();
        all_args.push("--all");
        let all = run(&env, &all_args);
        assert_eq!(all.stdout.lines().count() - 1, 6, "{}", all.stdout);
        assert!(!all.stderr.contains("--all lists them"), "{}", all.stderr);
    }
    // The JSON says what each session is.
    let json = run(&env, &["ls", "--all", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let mut kinds: Vec<(String, String)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["agent"].as_str().unwrap().to_string(),
                s["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    kinds.sort();
    let want: Vec<(String, String)> = [
        ("claude", "conversation"),
        ("claude", "headless"),
        ("codex", "headless"),
        ("codex", "subagent"),
        ("gemini", "conversation"),
        ("pi", "conversation"),
    ]
    .iter()
    .map(|(a, k)| (a.to_string(), k.to_string()))
    .collect();
    assert_eq!(kinds, want);
    // Only headless runs and subagents of an agent: said so, not "no
    // sessions found".
    let codex = run(&env, &["ls", "--agent", "codex"]);
    assert_eq!(
        codex.stdout,
        "no conversations; 2 headless runs and subagent transcripts (--all lists them)\n"
    );
}
