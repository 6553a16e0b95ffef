#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Safe by default: files agentlog writes are private, never written
//! through a planted symbolic link, never overwritten unless asked; session
//! text never drives the terminal; paths from session content stay inside
//! their directory; inputs and resources are bounded.

mod common;

use common::{fixtures, TestEnv};
use std::path::{Path, PathBuf};

fn claude_fixture() -> PathBuf {
    fixtures().join("native/claude/ccv-sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
}

/// Makes a named pipe at `p`.
#[cfg(unix)]
fn mkfifo(p: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(ok.success(), "mkfifo {}", p.display());
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
#[test]
fn outputs_are_private_new_files_unless_forced() {
    let env = TestEnv::new();
    let src = claude_fixture();
    let src = src.to_str().unwrap();
    for (cmd, to) in [
        ("export", "markdown"),
        ("export", "text"),
        ("convert", "pi"),
    ] {
        let out = env.home().join(format!("new/dir/{cmd}-{to}.out"));
        let o = out.to_str().unwrap();
        let r = env.run(&[cmd, src, "--to", to, "-o", o]);
        assert_eq!(r.status, 0, "{cmd} {to}: {}", r.stderr);
        assert_eq!(mode(&out), 0o600, "{cmd} {to}");
        assert_eq!(mode(out.parent().unwrap()), 0o700);
        assert_eq!(mode(&env.home().join("new")), 0o700);
        // Again onto the existing file: refused, the file untouched.
        std::fs::write(&out, b"mine").unwrap();
        let r = env.run(&[cmd, src, "--to", to, "-o", o]);
        assert_eq!(r.status, 1, "{cmd} {to}");
        assert!(r.stderr.contains("already exists"), "{}", r.stderr);
        assert!(r.stderr.contains("--force"), "{}", r.stderr);
        assert_eq!(std::fs::read(&out).unwrap(), b"mine");
        // With --force it is replaced.
        let r = env.run(&[cmd, src, "--to", to, "-o", o, "--force"]);
        assert_eq!(r.status, 0, "{}", r.stderr);
        assert_ne!(std::fs::read(&out).unwrap(), b"mine");
        let left: Vec<_> = std::fs::read_dir(out.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with('.'))
            .collect();
        assert!(left.is_empty(), "temp files left: {left:?}");
    }
}

#[cfg(unix)]
#[test]
fn no_write_follows_a_planted_symlink() {
    let env = TestEnv::new();
    let victim = env.write("victim.txt", b"precious");
    let src = claude_fixture();
    let src = src.to_str().unwrap();
    // export/convert/migrate -o onto a planted link: refused; with --force
    // the link itself is replaced.
    for args in [
        vec!["export", src, "--to", "markdown", "-o"],
        vec!["convert", src, "--to", "codex", "-o"],
    ] {
        let link = env.home().join("out/link");
        let _ = std::fs::remove_file(&link);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let mut a = args.clone();
        a.push(link.to_str().unwrap());
        let r = env.run(&a);
        assert_eq!(r.status, 1, "{a:?}: {}", r.stderr);
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        a.push("--force");
        let r = env.run(&a);
        assert_eq!(r.status, 0, "{a:?}: {}", r.stderr);
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(!std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
    // The predictable SpecStory transcript name, planted as a link.
    let r = env.run(&["seed", "specstory", "name", src]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let name = r.stdout.trim();
    let hist = env.home().join("proj/.specstory/history");
    std::fs::create_dir_all(&hist).unwrap();
    std::os::unix::fs::symlink(&victim, hist.join(name)).unwrap();
    let proj = env.home().join("proj");
    let r = env.run(&[
        "seed",
        "specstory",
        "render",
        src,
        "-o",
        proj.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    let written = hist.join(name);
    assert!(!std::fs::symlink_metadata(&written)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&written)
        .unwrap()
        .contains("SpecStory"));
    assert_eq!(mode(&written), 0o600);
}

#[cfg(unix)]
#[test]
fn resumed_sessions_and_the_index_are_private() {
    let env = TestEnv::new();
    let src = claude_fixture();
    for agent in ["pi", "codex", "gemini", "claude"] {
        let r = env.run(&[
            "resume",
            src.to_str().unwrap(),
            "--in",
            agent,
            "--json",
            "--cwd",
            "/work/proj",
        ]);
        assert_eq!(r.status, 0, "{agent}: {}", r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let p = PathBuf::from(v["path"].as_str().unwrap());
        assert!(p.starts_with(env.home()), "{}", p.display());
        assert_eq!(mode(&p), 0o600, "{agent}");
        assert_eq!(mode(p.parent().unwrap()), 0o700, "{agent}");
    }
    let r = env.run(&["index"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let ix = env.home().join(".local/share/agentlog/index.sqlite");
    assert_eq!(mode(&ix), 0o600);
    assert_eq!(mode(ix.parent().unwrap()), 0o700);
    assert_eq!(mode(&env.home().join(".local/share")), 0o700);
}

/// Every sequence a terminal acts on: OSC title, clear screen, an OSC 8
/// hyperlink, CR overwrite, BEL, backspace, a one-byte C1 CSI, bidi
/// override and isolate.
const EVIL: &str = "\u{1b}]0;PWNED\u{7}\u{1b}[2J\r\u{8}\u{9b}31m\u{202e}\u{2066}\u{1b}]8;;file:///etc/passwd\u{1b}\\x\u{1b}]8;;\u{1b}\\";

fn evil(tag: &str) -> String {
    format!("{tag}{EVIL}{tag}")
}

/// A pi session with EVIL in its ids, cwd, title, model, tool names and
/// every kind of text.
fn hostile_pi_session() -> String {
    let j = |v: serde_json::Value| serde_json::to_string(&v).unwrap() + "\n";
    let id = |n: &str| format!("{n}{EVIL}");
    let mut s = String::new();
    s += &j(
        serde_json::json!({"type":"session","version":3,"id":evil("sid"),
        "timestamp":"2025-01-01T10:00:00.000Z","cwd":evil("/cwd")}),
    );
    s += &j(
        serde_json::json!({"type":"session_info","id":id("i0"),"parentId":null,
        "timestamp":"2025-01-01T10:00:00.500Z","name":evil("title")}),
    );
    s += &j(
        serde_json::json!({"type":"model_change","id":id("m0"),"parentId":id("i0"),
        "timestamp":"2025-01-01T10:00:00.600Z","provider":evil("prov"),"modelId":evil("model")}),
    );
    s += &j(
        serde_json::json!({"type":"message","id":id("u1"),"parentId":id("m0"),
        "timestamp":"2025-01-01T10:00:01.000Z",
        "message":{"role":"user","content":[{"type":"text","text":evil("usertext needle")}],"timestamp":1735725601000_i64}}),
    );
    s += &j(
        serde_json::json!({"type":"message","id":id("a1"),"parentId":id("u1"),
        "timestamp":"2025-01-01T10:00:02.000Z",
        "message":{"role":"assistant","provider":evil("prov"),"model":evil("model"),
            "content":[{"type":"thinking","thinking":evil("think")},
                       {"type":"text","text":evil("answer needle")},
                       {"type":"toolCall","id":id("tc1"),"name":evil("tool"),"arguments":{"path":evil("arg")}}],
            "usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,
                     "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},
            "stopReason":"toolUse","timestamp":1735725602000_i64}}),
    );
    s += &j(
        serde_json::json!({"type":"message","id":id("r1"),"parentId":id("a1"),
        "timestamp":"2025-01-01T10:00:03.000Z",
        "message":{"role":"toolResult","toolCallId":id("tc1"),"toolName":evil("tool"),
            "content":[{"type":"text","text":evil("output needle")}],"isError":false,"timestamp":1735725603000_i64}}),
    );
    s += &j(
        serde_json::json!({"type":"label","id":id("l1"),"parentId":id("r1"),
        "timestamp":"2025-01-01T10:00:04.000Z","targetId":id("a1"),"label":evil("label")}),
    );
    s += &j(
        serde_json::json!({"type":"compaction","id":id("c1"),"parentId":id("l1"),
        "timestamp":"2025-01-01T10:00:05.000Z","summary":evil("summary"),"firstKeptEntryId":id("u1"),"tokensBefore":100}),
    );
    s
}

/// Fails when `bytes` hold anything a terminal would act on.
fn assert_inert(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for (i, c) in text.char_indices() {
        let bad = (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}');
        assert!(
            !bad,
            "{what}: {c:?} at byte {i}: …{}…",
            text[i.saturating_sub(60)..(i + 20).min(text.len())].escape_debug()
        );
    }
}

#[test]
fn session_text_never_drives_the_terminal() {
    let env = TestEnv::new();
    let file = env.write(
        ".pi/agent/sessions/--cwd--/2025-01-01T10-00-00-000Z_evil.jsonl",
        hostile_pi_session().as_bytes(),
    );
    let f = file.to_str().unwrap();
    let mut runs: Vec<Vec<&str>> = vec![
        vec!["show", f],
        vec!["show", f, "--markdown"],
        vec!["tree", f],
        vec!["context", f],
        vec!["export", f, "--to", "text"],
        vec!["export", f, "--to", "markdown"],
        vec!["validate", f],
        vec!["doctor", f],
        vec!["ls"],
        vec!["ls", "--cached"],
        vec!["search", "needle"],
        vec!["stats", "--by", "model"],
        vec!["stats", "--by", "agent"],
        vec!["resume", f, "--in", "pi", "--dry-run"],
        vec!["resume", f, "--in", "claude", "--dry-run"],
        vec!["seed", "specstory", "render", f],
    ];
    // An id taken from the session: an error message quoting it.
    runs.push(vec!["show", "nosuch\u{1b}]0;x\u{7}"]);
    let mut seen = 0;
    for args in &runs {
        let out = env.command(args).output().unwrap();
        assert_inert(&format!("{args:?} stdout"), &out.stdout);
        assert_inert(&format!("{args:?} stderr"), &out.stderr);
        let text = String::from_utf8_lossy(&out.stdout);
        if text.contains("\\x1b") {
            seen += 1;
        }
    }
    // The sequences are shown, not dropped.
    assert!(seen >= 10, "only {seen} outputs showed the escapes visibly");
    // --json stays exact: the escapes are in the JSON strings.
    let out = env.command(&["show", f, "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v.to_string().contains("\\u001b]0;PWNED"),
        "{}",
        &v.to_string()[..200]
    );
}

/// Runs agentlog and fails (killing it) if it has not finished in `secs`:
/// a regression that blocks or spins cannot hang the suite.
fn run_within(env: &TestEnv, args: &[&str], secs: u64) -> common::Run {
    let mut child = env
        .command(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > std::time::Duration::from_secs(secs) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("{args:?} did not finish within {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    common::Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn pi_line(v: serde_json::Value) -> String {
    serde_json::to_string(&v).unwrap() + "\n"
}

#[test]
fn resumed_paths_stay_inside_the_agents_folder() {
    let env = TestEnv::new();
    for (n, (stamp, id, cwd)) in [
        ("/abs/dir/x", "../../../escape", "/work/p"),
        ("a/b", "x/../../y", "/../../../etc"),
        ("../../..", "..", ".."),
    ]
    .into_iter()
    .enumerate()
    {
        let mut text = pi_line(serde_json::json!({"type":"session","version":3,"id":id,
            "timestamp":stamp,"cwd":cwd}));
        text += &pi_line(
            serde_json::json!({"type":"message","id":"u1","parentId":null,
            "timestamp":stamp,"message":{"role":"user","content":[{"type":"text","text":"hi"}]}}),
        );
        let src = env.write(&format!("src/{n}.jsonl"), text.as_bytes());
        // Every agent agentlog can resume in.
        for agent in [
            "pi",
            "codex",
            "gemini",
            "claude",
            "copilot",
            "qwen",
            "droid",
            "openhands",
        ] {
            let r = env.run(&["resume", src.to_str().unwrap(), "--in", agent, "--json"]);
            if r.status != 0 {
                // Refusing is fine; writing outside is not.
                assert!(r.stderr.contains("error"), "{agent}: {}", r.stderr);
                continue;
            }
            let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
            let p = PathBuf::from(v["path"].as_str().unwrap());
            let root = env.home().join(match agent {
                "pi" => ".pi/agent/sessions",
                "codex" => ".codex/sessions",
                "gemini" => ".gemini/tmp",
                "copilot" => ".copilot/session-state",
                "qwen" => ".qwen/projects",
                "droid" => ".factory/sessions",
                "openhands" => ".openhands/conversations",
                _ => ".claude/projects",
            });
            let rest = p.strip_prefix(&root).unwrap_or_else(|_| {
                panic!(
                    "{agent} {stamp:?}: {} is outside {}",
                    p.display(),
                    root.display()
                )
            });
            assert!(
                rest.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_))),
                "{agent}: {}",
                p.display()
            );
            // (an OpenHands conversation is a folder)
            assert!(
                p.is_file() || (agent == "openhands" && p.is_dir()),
                "{}",
                p.display()
            );
        }
    }
    // Nothing was created outside HOME's agent folders.
    assert!(!Path::new("/abs/dir/x").exists());
    let top: Vec<String> = std::fs::read_dir(env.home())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for t in &top {
        assert!(
            [
                ".pi",
                ".codex",
                ".gemini",
                ".claude",
                ".copilot",
                ".qwen",
                ".factory",
                "src",
                ".local",
                ".config",
                ".openhands"
            ]
            .contains(&t.as_str()),
            "unexpected {t} in HOME: {top:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn fifos_devices_and_oversized_inputs_are_refused() {
    let env = TestEnv::new();
    let fifo = env.home().join("pipe.jsonl");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    for args in [
        vec!["show", f],
        vec!["show", "--from", "pi", f],
        vec!["validate", f],
        vec!["export", "--from", "claude", f, "--to", "text"],
        vec!["show", "--from", "pi", "/dev/zero"],
        vec!["convert", "--from", "codex", "/dev/zero", "--to", "pi"],
        vec!["seed", "codelia", "replay", f],
    ] {
        let r = run_within(&env, &args, 20);
        assert_ne!(r.status, 0, "{args:?}");
        assert!(
            r.stderr.contains("not a regular file") || r.stdout.contains("not a regular file"),
            "{args:?}: {} {}",
            r.stderr,
            r.stdout
        );
    }
    // The size cap, configurable.
    let src = claude_fixture();
    let mut c = env.command(&["show", src.to_str().unwrap()]);
    c.env("AGENTLOG_MAX_INPUT", "1k");
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("size cap of 1024 bytes"), "{stderr}");
    assert!(stderr.contains("AGENTLOG_MAX_INPUT"), "{stderr}");
    // Standard input is read when asked for with -.
    let mut c = env.command(&["show", "-", "--json"]);
    c.stdin(std::fs::File::open(&src).unwrap());
    let out = c.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `-o` naming a FIFO or a character device writes into it, with or
/// without --force; it is never replaced by a file (an export run as root
/// with `-o /dev/null --force` once put a regular file in its place). The
/// HTML export, whose pages are always files, refuses one.
#[cfg(unix)]
#[test]
fn output_into_a_fifo_or_a_device_is_written_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let env = TestEnv::new();
    let src = claude_fixture();
    let src = src.to_str().unwrap();
    let fifo = env.home().join("out.pipe");
    mkfifo(&fifo);
    for force in [false, true] {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(&fifo).unwrap())
        };
        let mut args = vec!["convert", src, "--to", "pi", "-o", fifo.to_str().unwrap()];
        if force {
            args.push("--force");
        }
        let r = run_within(&env, &args, 30);
        assert_eq!(r.status, 0, "{args:?}: {}", r.stderr);
        let got = reader.join().unwrap();
        assert!(
            String::from_utf8_lossy(&got).contains("\"type\":\"session\""),
            "{args:?}: the pi session did not come through the pipe"
        );
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo(),
            "{args:?}: the FIFO was replaced"
        );
    }
    for args in [
        vec!["convert", src, "--to", "pi", "-o", "/dev/null", "--force"],
        vec!["export", src, "--to", "markdown", "-o", "/dev/null"],
    ] {
        let r = env.run(&args);
        assert_eq!(r.status, 0, "{args:?}: {}", r.stderr);
        assert!(
            std::fs::symlink_metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device(),
            "{args:?} replaced /dev/null"
        );
    }
    let r = env.run(&["export", src, "--to", "html", "-o", fifo.to_str().unwrap()]);
    assert_ne!(r.status, 0, "{}", r.stdout);
    assert!(r.stderr.contains("not overwriting it"), "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn a_cursor_store_with_an_endless_view_is_refused() {
    let env = TestEnv::new();
    let db = env
        .home()
        .join(".cursor/chats/0123456789abcdef0123456789abcdef/c1/store.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE blobs(id TEXT PRIMARY KEY, data BLOB);
             CREATE VIEW meta(key, value) AS
               WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)
               SELECT CAST(x AS TEXT), x FROM n;",
        )
        .unwrap();
    }
    let d = db.to_str().unwrap();
    for args in [vec!["show", d], vec!["validate", d], vec!["ls"]] {
        let r = run_within(&env, &args, 60);
        if args[0] != "ls" {
            assert_eq!(r.status, 1, "{args:?}: {}", r.stderr);
            let all = format!("{}{}", r.stderr, r.stdout);
            assert!(all.contains("only plain tables"), "{args:?}: {all}");
        }
    }
}

#[test]
fn a_first_record_over_64_kib_is_still_detected() {
    let env = TestEnv::new();
    let text = std::fs::read_to_string(claude_fixture()).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut first: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    first["pastedImage"] = serde_json::Value::String("A".repeat(100_000));
    lines[0] = serde_json::to_string(&first).unwrap();
    let p = env.write("big-first-line.jsonl", (lines.join("\n") + "\n").as_bytes());
    let r = env.run(&["show", p.to_str().unwrap(), "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["meta"]["agent"],
        "claude",
        "{}",
        &r.stdout[..200.min(r.stdout.len())]
    );
}

#[test]
fn validate_reports_parent_cycles_and_self_parents() {
    let env = TestEnv::new();
    let mut text = pi_line(serde_json::json!({"type":"session","version":3,"id":"s",
        "timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}));
    for (id, parent) in [
        ("a", None),
        ("b", Some("c")),
        ("c", Some("b")),
        ("d", Some("d")),
    ] {
        text += &pi_line(
            serde_json::json!({"type":"message","id":id,"parentId":parent,
            "timestamp":"2025-01-01T00:00:01Z",
            "message":{"role":"user","content":[{"type":"text","text":id}]}}),
        );
    }
    let p = env.write("cycle.jsonl", text.as_bytes());
    let r = env.run(&["validate", p.to_str().unwrap()]);
    assert_eq!(r.status, 1, "{}", r.stdout);
    assert!(r.stdout.contains("parent-cycle"), "{}", r.stdout);
    assert!(
        r.stdout.contains("b -> c -> b") || r.stdout.contains("c -> b -> c"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("entry d is its own parent"),
        "{}",
        r.stdout
    );
}

#[test]
fn many_diagnostics_are_summarized() {
    let env = TestEnv::new();
    let mut text = pi_line(serde_json::json!({"type":"session","version":3,"id":"s",
        "timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}));
    text += &"{}\n".repeat(5000);
    let p = env.write("tiny.jsonl", text.as_bytes());
    let r = env.run(&["validate", p.to_str().unwrap()]);
    let lines = r.stdout.lines().count();
    assert!(lines < 500, "{lines} lines");
    assert!(r.stdout.contains("more like this"), "{}", r.stdout);
}

#[test]
fn a_missing_acpx_session_is_an_error() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home().join(".acpx/sessions")).unwrap();
    let r = env.run(&["seed", "acpx", "events", "no-such-id"]);
    assert_eq!(r.status, 1, "{} {}", r.stdout, r.stderr);
    assert!(r.stderr.contains("no-such-id"), "{}", r.stderr);
}

#[test]
fn bad_search_queries_are_usage_errors() {
    let env = TestEnv::new();
    for q in ["", "AND", "*"] {
        let r = env.run(&["search", q]);
        assert_eq!(r.status, 2, "{q:?}: {}", r.stderr);
        assert!(r.stderr.contains("search query"), "{q:?}: {}", r.stderr);
    }
    // No matches is 1.
    let r = env.run(&["search", "nothingmatchesthis"]);
    assert_eq!(r.status, 1, "{}", r.stderr);
}

/// Every other writer that names files after session content: the HTML
/// export of all sessions (file names from session ids) and SpecStory's
/// transcript (its name from the first prompt).
#[test]
fn writers_name_files_inside_the_folder_they_were_given() {
    let env = TestEnv::new();
    let hostile = [
        "../../../outside",
        "/abs/olute",
        "..",
        "a/b/../../c",
        "x\\..\\y",
    ];
    for (n, id) in hostile.iter().enumerate() {
        let mut text = pi_line(serde_json::json!({"type":"session","version":3,"id":id,
            "timestamp":"2026-01-02T03:04:05.000Z","cwd":"/work/p"}));
        text += &pi_line(
            serde_json::json!({"type":"message","id":"u1","parentId":null,
            "timestamp":"2026-01-02T03:04:05.000Z",
            "message":{"role":"user","content":[{"type":"text","text":format!("../../{n}/../../escape {id}")}]}}),
        );
        env.write(
            &format!(".pi/agent/sessions/--work-p--/2026-01-02T03-04-05-000Z_{n}.jsonl"),
            text.as_bytes(),
        );
    }
    let out = env.home().join("exports");
    let r = env.run(&[
        "export",
        "--all",
        "--to",
        "html",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), hostile.len() + 1, "{names:?}");
    for name in &names {
        assert!(
            !name.contains('/') && !name.starts_with('.') && name.ends_with(".html"),
            "{name}"
        );
    }
    // SpecStory: the transcript lands in the project's history folder.
    for n in 0..hostile.len() {
        let src = env.home().join(format!(
            ".pi/agent/sessions/--work-p--/2026-01-02T03-04-05-000Z_{n}.jsonl"
        ));
        let proj = env.home().join(format!("proj{n}"));
        let r = env.run(&[
            "seed",
            "specstory",
            "render",
            src.to_str().unwrap(),
            "-o",
            proj.to_str().unwrap(),
        ]);
        assert_eq!(r.status, 0, "{}", r.stderr);
        let hist = proj.join(".specstory/history");
        let written: Vec<_> = std::fs::read_dir(&hist).unwrap().collect();
        assert_eq!(written.len(), 1, "one transcript, in {}", hist.display());
    }
    // Nothing but what was asked for was created in HOME.
    let mut top: Vec<String> = std::fs::read_dir(env.home())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    let mut want: Vec<String> = [".pi", ".local", "exports"]
        .iter()
        .map(|s| s.to_string())
        .chain((0..hostile.len()).map(|n| format!("proj{n}")))
        .collect();
    want.sort();
    top.retain(|t| want.contains(t) || t != ".config");
    assert_eq!(top, want);
}

/// Token counts are numbers from a file: a session claiming counts past
/// what 64-bit sums hold (two responses of 9e18 input tokens, one of
/// u64::MAX output tokens) must not make the index, and with it every
/// command that reads it, fail.
#[test]
fn absurd_token_counts_do_not_break_the_index() {
    let env = TestEnv::new();
    let mut text = String::new();
    for i in 0..3 {
        let parent = if i == 0 {
            serde_json::Value::Null
        } else {
            format!("a{}", i - 1).into()
        };
        let user = serde_json::json!({"type":"user","uuid":format!("u{i}"),"parentUuid":parent,
            "sessionId":"s1","cwd":"/p","timestamp":format!("2025-01-01T10:0{i}:00Z"),
            "message":{"role":"user","content":"hi"}});
        let reply = serde_json::json!({"type":"assistant","uuid":format!("a{i}"),
            "parentUuid":format!("u{i}"),"sessionId":"s1","cwd":"/p",
            "timestamp":format!("2025-01-01T10:0{i}:01Z"),"requestId":format!("r{i}"),
            "message":{"id":format!("m{i}"),"role":"assistant","model":"claude-x",
                "content":[{"type":"text","text":"ok"}],
                "usage":{"input_tokens":9_000_000_000_000_000_000u64,"output_tokens":u64::MAX}}});
        text += &format!("{user}\n{reply}\n");
    }
    env.write(
        ".claude/projects/-p/0a1b2c3d-0000-4000-8000-000000000001.jsonl",
        text.as_bytes(),
    );
    let r = env.run(&["index"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let r = env.run(&["stats", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    // Each response counted at the cap: 3 × 4,294,967,295.
    let max = 3 * u64::from(u32::MAX);
    assert!(r.stdout.contains(&max.to_string()), "{}", r.stdout);
    for args in [&["ls"][..], &["ls", "--cached"], &["search", "ok"]] {
        let r = env.run(args);
        assert_eq!(r.status, 0, "{args:?}: {}", r.stderr);
    }
}

/// A cost a file records that no response could cost (here 1e308 dollars,
/// three times: an `inf` sum) is taken as not recorded.
#[test]
fn absurd_costs_are_taken_as_not_recorded() {
    let env = TestEnv::new();
    let mut text = pi_line(serde_json::json!({"type":"session","version":3,
        "id":"0a1b2c3d-0000-4000-8000-000000000003","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}));
    let mut prev = serde_json::Value::Null;
    for i in 0..3 {
        text += &pi_line(
            serde_json::json!({"type":"message","id":format!("u{i}"),"parentId":prev,
            "timestamp":format!("2025-01-01T00:0{i}:00.000Z"),
            "message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1735689600000u64}}),
        );
        text += &pi_line(
            serde_json::json!({"type":"message","id":format!("a{i}"),"parentId":format!("u{i}"),
            "timestamp":format!("2025-01-01T00:0{i}:01.000Z"),
            "message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"anthropic-messages",
                "provider":"anthropic","model":"no-such-model","stopReason":"stop","timestamp":1735689601000u64,
                "usage":{"input":3,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":4,
                    "cost":{"input":1e308,"output":1e308,"cacheRead":0,"cacheWrite":0,"total":1e308}}}}),
        );
        prev = format!("a{i}").into();
    }
    env.write(
        ".pi/agent/sessions/--p--/2025-01-01T00-00-00-000Z_0a1b2c3d-0000-4000-8000-000000000003.jsonl",
        text.as_bytes(),
    );
    let r = env.run(&["stats"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(
        !r.stdout.contains("inf") && !r.stdout.contains("NaN"),
        "{}",
        r.stdout
    );
    let r = env.run(&["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["total"]["unpriced_responses"], 3, "{v}");
}
