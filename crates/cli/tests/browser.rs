//! `agentlog serve` and `agentlog export --to html` in a real headless
//! Chromium, as a person uses them: the list loads and filters, search finds
//! a planted word and its link lands on the message, a branch is switched,
//! a long session pages, live tail shows an appended message, the export
//! opens from file:// with the same messages, and a corpus of hostile text
//! in every field runs no script anywhere. Screenshots of the main pages
//! are written to $AGENTLOG_SCREENSHOTS (default: the target's tmp dir).
//!
//! Needs Debian's chromium and the npm package playwright-core, which
//! `scripts/install-chromium.sh` installs; under CI their absence fails the
//! test, elsewhere it skips with a message.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use agentlog_formats::discover::DiscoverEnv;
use agentlog_formats::registry;
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp,
    Usage,
};
use common::TestEnv;
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const WORD: &str = "zanzibarquux";
const TAIL_WORD: &str = "tailpinecone";
const ALPHA: &str = "alphabranchmarker";
const BETA: &str = "betabranchmarker";
const HOSTILE_WORD: &str = "hostilemarker";

/// Every payload sets the title to XSS and a global; none may run.
const PAYLOADS: &[&str] = &[
    "<script>window.__pwned=1;document.title='XSS'</script>",
    "<img src=x onerror=\"window.__pwned=1;document.title='XSS'\">",
    "<svg onload=\"window.__pwned=1;document.title='XSS'\"><script>window.__pwned=1</script></svg>",
    "[click me](javascript:window.__pwned=1;document.title='XSS')",
    "![pic](javascript:window.__pwned=1)",
    "![pic](x\" onerror=\"window.__pwned=1)",
    "<a href=\"javascript:window.__pwned=1\">link</a>",
    "\"><script>window.__pwned=1</script>",
    "'><img src=x onerror=window.__pwned=1>",
    "</pre></details></main><script>window.__pwned=1</script>",
    "<iframe srcdoc=\"<script>parent.__pwned=1</script>\"></iframe>",
    "<math><mtext><table><mglyph><style><img src=x onerror=window.__pwned=1>",
    "[x](data:text/html;base64,PHNjcmlwdD5wYXJlbnQuX19wd25lZD0xPC9zY3JpcHQ+)",
    "<details open ontoggle=window.__pwned=1>",
    "javascript:window.__pwned=1",
];

fn hostile() -> String {
    format!("{HOSTILE_WORD} {}", PAYLOADS.join(" \n"))
}

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn ts(k: i64) -> Timestamp {
    Timestamp::Millis(1_767_000_000_000 + k * 1000)
}

fn msg(id: &str, parent: Option<&str>, k: i64, m: Message) -> Entry {
    Entry::new(id, parent.map(str::to_string), EntryKind::Message(m)).at(ts(k))
}

fn assistant(blocks: Vec<Block>, model: &str) -> Message {
    let mut m = Message::new(Role::Assistant);
    m.content = blocks;
    m.model = Some(model.into());
    m.provider = Some("anthropic".into());
    m.usage = Some(Usage {
        input: 1200,
        output: 340,
        cache_read: 5000,
        ..Default::default()
    });
    m
}

/// Writes `session` in `format` where that agent keeps its sessions.
fn place(home: &Path, format: &str, session: &Session) -> PathBuf {
    let f = registry::by_name(format).unwrap();
    let plan = f
        .resume_plan(session, &DiscoverEnv::with_home(home))
        .unwrap();
    std::fs::create_dir_all(plan.path.parent().unwrap()).unwrap();
    let mut bytes = Vec::new();
    f.write(session, &mut bytes).unwrap();
    std::fs::write(&plan.path, bytes).unwrap();
    plan.path
}

fn pi_session(id: &str, cwd: &str, title: &str) -> Session {
    let mut meta = SessionMeta::new(id, Agent::Pi);
    meta.cwd = Some(cwd.into());
    meta.title = Some(title.into());
    meta.created_at = Some(ts(0));
    Session::new(meta)
}

/// A long session with the planted word far beyond the first page.
fn long_session() -> Session {
    let mut s = pi_session(
        "0199aaaa-0000-7000-8000-000000000001",
        "/home/dev/src/long-project",
        "A long session",
    );
    let mut parent: Option<String> = None;
    for i in 0..260 {
        let id = format!("long{i:04}");
        let m = if i % 2 == 0 {
            Message::text(Role::User, format!("Question number {i} about the parser."))
        } else if i == 181 {
            assistant(
                vec![Block::text(format!(
                    "The answer hides the word {WORD} in here."
                ))],
                "claude-sonnet-4-5",
            )
        } else {
            assistant(
                vec![Block::text(format!(
                    "Answer number {i}: the parser is fine."
                ))],
                "claude-sonnet-4-5",
            )
        };
        s.push(msg(&id, parent.as_deref(), i, m));
        parent = Some(id);
    }
    s
}

fn branch_session() -> Session {
    let mut s = pi_session(
        "0199aaaa-0000-7000-8000-000000000002",
        "/home/dev/src/branchy",
        "Two branches",
    );
    s.push(msg("b0", None, 1, Message::text(Role::User, "Pick a plan")));
    s.push(msg(
        "b1",
        Some("b0"),
        2,
        assistant(
            vec![Block::text(format!("Plan A: {ALPHA}"))],
            "claude-sonnet-4-5",
        ),
    ));
    s.push(msg(
        "b2",
        Some("b0"),
        3,
        assistant(
            vec![Block::text(format!("Plan B: {BETA}"))],
            "claude-sonnet-4-5",
        ),
    ));
    s
}

fn tail_session() -> Session {
    let mut s = pi_session(
        "0199aaaa-0000-7000-8000-000000000003",
        "/home/dev/src/live",
        "Being written",
    );
    s.push(msg("t0", None, 1, Message::text(Role::User, "Start")));
    s.push(msg(
        "t1",
        Some("t0"),
        2,
        assistant(vec![Block::text("Working on it.")], "claude-sonnet-4-5"),
    ));
    s
}

fn showcase_session() -> Session {
    let mut s = pi_session(
        "0199aaaa-0000-7000-8000-000000000004",
        "/home/dev/src/webapp",
        "Fix the retry loop in the fetcher",
    );
    s.push(msg("s0", None, 1, Message::text(Role::User, "The fetcher retries forever when the server answers **503**. Make it give up after `max_retries` and add a test.")));
    s.push(msg(
        "s1",
        Some("s0"),
        2,
        assistant(
            vec![
                Block::thinking("The loop in `fetch_with_retry` never compares the attempt count with the limit. I should read the file first.", None),
                Block::tool_call(Some("call_1".into()), "read", json!({"path": "src/fetch.rs"})),
            ],
            "claude-sonnet-4-5",
        ),
    ));
    let mut r = Message::new(Role::Tool);
    r.tool_call_id = Some("call_1".into());
    r.tool_name = Some("read".into());
    r.content = vec![Block::text("pub fn fetch_with_retry(url: &str, max_retries: u32) -> Result<Body> {\n    loop {\n        match get(url) {\n            Ok(b) => return Ok(b),\n            Err(e) if e.is_retryable() => sleep(backoff()),\n            Err(e) => return Err(e),\n        }\n    }\n}")];
    s.push(msg("s2", Some("s1"), 3, r));
    s.push(msg(
        "s3",
        Some("s2"),
        4,
        assistant(
            vec![Block::tool_call(
                Some("call_2".into()),
                "edit",
                json!({"path": "src/fetch.rs", "oldText": "    loop {\n        match get(url) {", "newText": "    for attempt in 0..=max_retries {\n        if attempt > 0 { sleep(backoff(attempt)); }\n        match get(url) {"}),
            )],
            "claude-sonnet-4-5",
        ),
    ));
    let mut r2 = Message::new(Role::Tool);
    r2.tool_call_id = Some("call_2".into());
    r2.tool_name = Some("edit".into());
    r2.content = vec![Block::text("Edited src/fetch.rs")];
    s.push(msg("s4", Some("s3"), 5, r2));
    s.push(msg(
        "s5",
        Some("s4"),
        6,
        assistant(
            vec![Block::text("The loop now stops after `max_retries` attempts:\n\n```rust\nfor attempt in 0..=max_retries {\n    if attempt > 0 { sleep(backoff(attempt)); }\n    // …\n}\n```\n\n| case | before | after |\n|---|---|---|\n| 503 forever | hangs | `Err(Exhausted)` after 3 tries |\n| 200 | ok | ok |")],
            "claude-sonnet-4-5",
        ),
    ));
    s
}

/// One session with hostile text in every field the page shows.
fn hostile_session(agent: Agent, id: &str) -> Session {
    let h = hostile();
    let mut meta = SessionMeta::new(id, agent);
    meta.cwd = Some(
        "/home/dev/<img src=x onerror=window.__pwned=1>/\"><script>window.__pwned=1</script>"
            .into(),
    );
    meta.title = Some(format!(
        "<script>window.__pwned=1;document.title='XSS'</script>{HOSTILE_WORD} title"
    ));
    meta.created_at = Some(ts(0));
    meta.model.model = Some("<img src=x onerror=window.__pwned=1>".into());
    let mut s = Session::new(meta);
    s.push(msg("h0", None, 1, Message::text(Role::User, h.clone())));
    let mut a = assistant(
        vec![
            Block::thinking(h.clone(), None),
            Block::text(h.clone()),
            Block::tool_call(
                Some("hc1".into()),
                "<img src=x onerror=window.__pwned=1>",
                json!({"command": h.clone(), "file_path": "<svg onload=window.__pwned=1>.rs", "old_string": h.clone(), "new_string": "x"}),
            ),
        ],
        "<script>window.__pwned=1</script>",
    );
    a.content.push(Block {
        kind: BlockKind::Image {
            media_type: Some("image/svg+xml".into()),
            data: Some("PHN2ZyBvbmxvYWQ9IndpbmRvdy5fX3B3bmVkPTEiLz4=".into()),
            url: None,
        },
        extra: Default::default(),
    });
    a.content.push(Block {
        kind: BlockKind::Image {
            media_type: Some("image/png\" onerror=\"window.__pwned=1".into()),
            data: Some("iVBORw0KGgo=\" onerror=\"window.__pwned=1".into()),
            url: Some("javascript:window.__pwned=1".into()),
        },
        extra: Default::default(),
    });
    s.push(msg("h1", Some("h0"), 2, a));
    let mut r = Message::new(Role::Tool);
    r.tool_call_id = Some("hc1".into());
    r.tool_name = Some("<img src=x onerror=window.__pwned=1>".into());
    r.content = vec![Block::tool_result(
        Some("hc1".into()),
        vec![Block::text(format!(
            "<html><body onload=window.__pwned=1>{h}</body></html>"
        ))],
        false,
    )];
    s.push(msg("h2", Some("h1"), 3, r));
    s.push(msg(
        "h3",
        Some("h2"),
        4,
        assistant(vec![Block::text(format!("Done. {h}"))], "claude-sonnet-4-5"),
    ));
    s
}

#[test]
fn serve_and_export_in_chromium() {
    let ci = common::in_ci();
    let root = workspace();
    let modules = root.join("target/peers/browser");
    let (Some(chrome), true) = (
        chromium(),
        modules
            .join("node_modules/playwright-core/package.json")
            .exists(),
    ) else {
        let msg = "chromium or playwright-core is missing; run scripts/install-chromium.sh";
        assert!(!ci, "{msg}");
        eprintln!("skipped serve_and_export_in_chromium: {msg}");
        return;
    };
    let env = TestEnv::new();
    let home = env.home().to_path_buf();
    agentlog_bench::gen::generate(&home, 600_000, 7).unwrap();
    let long = place(&home, "pi", &long_session());
    let branch = place(&home, "pi", &branch_session());
    let tail = place(&home, "pi", &tail_session());
    // Its last line is on the page before its newline is written (the
    // page reads it; the tail waits for the newline): it shows once.
    let text = std::fs::read_to_string(&tail).unwrap();
    std::fs::write(&tail, text.strip_suffix('\n').unwrap()).unwrap();
    let showcase = place(&home, "pi", &showcase_session());
    // Sessions of more agents: the list's row of agents is long.
    for (k, format) in ["qwen", "copilot", "kimi", "droid", "continue"]
        .iter()
        .enumerate()
    {
        let mut s = pi_session(
            &format!("0199cccc-0000-7000-8000-00000000000{k}"),
            "/home/dev/src/other",
            &format!("A {format} session"),
        );
        s.push(msg(
            "o1",
            None,
            1,
            Message::text(Role::User, "Hello there."),
        ));
        place(&home, format, &s);
    }
    let mut hostile_paths = Vec::new();
    for (agent, fmt, id) in [
        (
            Agent::Claude,
            "claude",
            "7e0b3c4a-1111-4222-8333-444455556666",
        ),
        (
            Agent::Codex,
            "codex",
            "0199bbbb-1111-7222-8333-444455556666",
        ),
        (
            Agent::Gemini,
            "gemini",
            "6b1c2d3e-1111-4222-8333-444455556666",
        ),
        (Agent::Pi, "pi", "0199cccc-1111-7222-8333-444455556666"),
    ] {
        hostile_paths.push(place(&home, fmt, &hostile_session(agent, id)));
    }

    // The exports, through the real command.
    let out_dir = home.join("exports");
    std::fs::create_dir_all(&out_dir).unwrap();
    let export_html = |session: &Path, name: &str| -> PathBuf {
        let out = out_dir.join(name);
        let r = env.run(&[
            "export",
            session.to_str().unwrap(),
            "--to",
            "html",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(r.status, 0, "{}", r.stderr);
        out
    };
    let export = export_html(&long, "long.html");
    let branch_export = export_html(&branch, "branch.html");
    let showcase_export = export_html(&showcase, "showcase.html");
    let mut hostile_exports: Vec<PathBuf> = hostile_paths
        .iter()
        .enumerate()
        .map(|(i, p)| export_html(p, &format!("hostile-{i}.html")))
        .collect();
    let all = home.join("all-exports");
    let r = env.run(&[
        "export",
        "--all",
        "--to",
        "html",
        "-o",
        all.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let index = std::fs::read_to_string(all.join("index.html")).unwrap();
    let files = std::fs::read_dir(&all).unwrap().count();
    assert!(files > 10, "{files} files");
    assert_eq!(
        index.matches("<tr><td>").count(),
        files - 1,
        "one row per exported session"
    );
    hostile_exports.push(all.join("index.html"));

    // The server.
    let mut child = env
        .command(&["serve", "--port", "0", "--refresh", "1"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(home.join("serve.stderr")).unwrap())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let base = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    assert!(base.starts_with("http://127.0.0.1:"), "{first}");

    let shots = std::env::var_os("AGENTLOG_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("screenshots"));
    std::fs::create_dir_all(&shots).unwrap();
    let signal = home.join("tail-ready");
    let cfg = json!({
        "modules": modules,
        "chromium": chrome,
        "base": base,
        "word": WORD,
        "branchSession": branch,
        "branchA": ALPHA,
        "branchB": BETA,
        "longSession": long,
        "tailSession": tail,
        "tailWord": TAIL_WORD,
        "tailSignal": signal,
        "showcaseSession": showcase,
        "hostileSessions": hostile_paths,
        "hostileWord": HOSTILE_WORD,
        "hostileExports": hostile_exports,
        "exportFile": export,
        "branchExport": branch_export,
        "showcaseExport": showcase_export,
        "exportSource": long,
        "screenshots": shots,
    });
    let cfg_path = home.join("browser.json");
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    let driver = Command::new("node")
        .arg(root.join("crates/cli/tests/browser/drive.mjs"))
        .arg(&cfg_path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Append to the tailed session once the page is watching it.
    let tail_path = tail.clone();
    let appender = std::thread::spawn(move || {
        for _ in 0..1200 {
            if signal.exists() {
                let line = json!({"type":"message","id":"t2","parentId":"t1","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"user","content":format!("a new message: {TAIL_WORD}"),"timestamp":1_767_225_609_000u64}});
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&tail_path)
                    .unwrap();
                write!(f, "\n{line}\n").unwrap();
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        false
    });
    let out = driver.wait_with_output().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let r: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert!(
        r.get("error").is_none(),
        "the browser run failed: {}\nsteps: {}\nserve said: {}",
        r["error"],
        r["steps"],
        std::fs::read_to_string(home.join("serve.stderr")).unwrap_or_default()
    );
    assert!(appender.join().unwrap());
    assert_eq!(
        r["tailIds"],
        json!(["e-t0", "e-t1", "e-t2"]),
        "each entry of the tailed session once"
    );

    // The list.
    assert!(r["list"]["rows"].as_u64().unwrap() >= 10, "{}", r["list"]);
    assert_eq!(r["filtered"]["agents"], json!(["pi"]), "{}", r["filtered"]);
    // Search: the planted word, highlighted; the link lands on the message,
    // which is beyond the first page of the session.
    assert!(
        r["search"]["hits"].as_u64().unwrap() >= 1,
        "{}",
        r["search"]
    );
    assert!(
        r["search"]["marks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m.as_str().unwrap().eq_ignore_ascii_case(WORD)),
        "{}",
        r["search"]
    );
    assert_eq!(r["landing"]["found"], json!(true), "{}", r["landing"]);
    assert_eq!(
        r["landing"]["containsWord"],
        json!(true),
        "{}",
        r["landing"]
    );
    assert_eq!(r["landing"]["inView"], json!(true), "{}", r["landing"]);
    assert_eq!(r["landing"]["position"], json!(181), "{}", r["landing"]);
    // Branches.
    assert_eq!(r["branch"]["beforeHasB"], json!(true), "{}", r["branch"]);
    assert_eq!(r["branch"]["beforeHasA"], json!(false), "{}", r["branch"]);
    assert_eq!(r["branch"]["afterHasA"], json!(true), "{}", r["branch"]);
    assert_eq!(r["branch"]["afterHasB"], json!(false), "{}", r["branch"]);
    // The same in the exported file, without a server.
    let eb = &r["exportBranch"];
    assert_eq!(eb["beforeHasB"], json!(true), "{eb}");
    assert_eq!(eb["beforeHasA"], json!(false), "{eb}");
    assert_eq!(eb["afterHasA"], json!(true), "{eb}");
    assert_eq!(eb["afterHasB"], json!(false), "{eb}");
    // Paging.
    assert_eq!(r["paging"]["first"], json!(100), "{}", r["paging"]);
    assert!(
        r["paging"]["after"].as_u64().unwrap() > 100,
        "{}",
        r["paging"]
    );
    assert_eq!(r["tail"]["shown"], json!(true));
    assert_eq!(r["stats"]["charts"].as_u64().unwrap(), 5, "{}", r["stats"]);
    assert_ne!(
        r["dark"],
        json!("rgb(251, 251, 250)"),
        "dark mode keeps the light background"
    );
    assert!(
        r["phone"].as_u64().is_some_and(|w| w <= 390),
        "the list is {} px wide on a phone of 390",
        r["phone"]
    );
    // The export shows the same messages as the server.
    // Printed, what is collapsed on screen is there to read: every closed
    // block's content shows.
    let print = r["exportPrint"].as_array().unwrap();
    assert!(print.len() >= 4, "{print:?}");
    assert!(
        print.iter().all(|p| p["shown"] == true),
        "closed blocks not printed: {print:?}"
    );
    assert_eq!(r["export"]["ids"], r["served"]["ids"]);
    assert_eq!(r["export"]["ids"].as_array().unwrap().len(), 260);
    // Nothing hostile ran, anywhere; nothing left this machine.
    assert!(
        r["hostileSearchHits"].as_u64().unwrap() >= 4,
        "{}",
        r["hostileSearchHits"]
    );
    for (k, allowed_scripts) in [("hostileServed", 0), ("hostileExport", 1)] {
        let checks = r[k].as_array().unwrap();
        assert!(!checks.is_empty());
        for c in checks {
            assert_ne!(c["title"], json!("XSS"), "{k}: {c}");
            assert_ne!(c["titleAfterClicks"], json!("XSS"), "{k}: {c}");
            assert_eq!(c["pwned"], json!(false), "{k}: {c}");
            assert_eq!(c["pwnedAfterClicks"], json!(false), "{k}: {c}");
            assert_eq!(c["handlers"], json!(0), "{k}: {c}");
            assert_eq!(c["jsLinks"], json!(0), "{k}: {c}");
            assert_eq!(c["iframes"], json!(0), "{k}: {c}");
            assert_eq!(c["inlineScripts"], json!(allowed_scripts), "{k}: {c}");
        }
    }
    // The hostile text is shown, as text.
    assert!(
        r["hostileServed"][0]["planted"].as_bool().unwrap(),
        "{}",
        r["hostileServed"][0]
    );
    assert!(
        r["hostileExport"][0]["planted"].as_bool().unwrap(),
        "{}",
        r["hostileExport"][0]
    );
    assert_eq!(r["dialogs"], json!([]));
    assert_eq!(r["foreignRequests"], json!([]));
    assert_eq!(r["exportRequests"], json!([]));
    for f in [
        "list.png",
        "search.png",
        "session.png",
        "stats.png",
        "session-dark.png",
        "list-phone.png",
    ] {
        assert!(shots.join(f).exists(), "{f} missing");
    }
}
