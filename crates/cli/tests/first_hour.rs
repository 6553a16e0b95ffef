//! What a new user trips over in the first hour (issue 45), run as they
//! would run it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TestEnv;

const ID: &str = agentlog_api::example::SESSION_ID;

/// A home with the example Claude Code session resumed in Codex.
fn resumed() -> TestEnv {
    let env = TestEnv::new();
    agentlog_api::example::write_claude_session(env.home()).unwrap();
    let r = env.run(&["resume", &ID[..6], "--in", "codex"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    env
}

#[test]
fn a_session_resumed_in_another_agent_is_named_by_its_id_and_the_copies_are_listed() {
    let env = resumed();
    for arg in [&ID[..8], ID] {
        let r = env.run(&["show", arg]);
        assert_eq!(r.status, 0, "show {arg}: {}", r.stderr);
        assert!(r.stdout.contains("claude session"), "{}", r.stdout);
        assert!(r.stderr.contains("is in 2 files"), "{}", r.stderr);
        assert!(
            r.stderr.contains("reading the original: claude"),
            "{}",
            r.stderr
        );
        assert!(
            r.stderr.contains("also  codex") && r.stderr.contains("(resumed copy)"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn a_resumed_copy_is_named_by_agent_colon_id_agent_flag_or_newest() {
    let env = resumed();
    let prefix = &ID[..8];
    let named = format!("codex:{prefix}");
    for args in [
        vec!["show", named.as_str()],
        vec!["show", prefix, "--agent", "codex"],
        vec!["show", prefix, "--newest"],
        vec!["export", prefix, "--agent", "codex", "--to", "text"],
    ] {
        let r = env.run(&args);
        assert_eq!(r.status, 0, "{args:?}: {}", r.stderr);
        assert!(r.stdout.contains("codex session"), "{args:?}: {}", r.stdout);
    }
    let r = env.run(&["tree", &format!("claude:{ID}")]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stderr.is_empty(), "one agent named: {}", r.stderr);
}

#[test]
fn search_phrase_finds_the_words_in_order_and_help_says_how_to_quote() {
    let env = TestEnv::new();
    agentlog_api::example::write_claude_session(env.home()).unwrap();
    // What a shell passes for `search "input unicode"`: the words, found
    // anywhere.
    let words = env.run(&["search", "input unicode"]);
    assert_eq!(words.status, 0, "{}", words.stderr);
    let phrase = env.run(&["search", "--phrase", "input", "unicode"]);
    assert_eq!(phrase.status, 1, "not in this order: {}", phrase.stdout);
    let phrase = env.run(&["search", "--phrase", "unicode input"]);
    assert_eq!(phrase.status, 0, "{}", phrase.stderr);
    assert!(
        phrase.stdout.contains("«unicode input»"),
        "{}",
        phrase.stdout
    );
    let help = env.run(&["search", "--help"]);
    assert!(
        help.stdout.contains(r#"'"exact phrase"'"#),
        "{}",
        help.stdout
    );
}

#[test]
fn an_error_says_what_went_wrong_first_and_the_hint_after() {
    let env = TestEnv::new();
    agentlog_api::example::write_claude_session(env.home()).unwrap();
    let r = env.run(&["show", "zzzz"]);
    assert_eq!(r.status, 1);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert!(
        lines[0].starts_with("agentlog: error: zzzz: no such file"),
        "{}",
        r.stderr
    );
    assert_eq!(
        lines[1..],
        ["  hint: `agentlog ls` lists the sessions and their ids"],
        "{}",
        r.stderr
    );
    let r = env.run(&["ls", "--agent", "nope"]);
    assert_eq!(r.status, 2);
    let first = r.stderr.lines().next().unwrap();
    assert!(
        first.starts_with("agentlog: error: --agent: unknown agent \"nope\"; known agents: "),
        "{}",
        r.stderr
    );
    assert!(
        first.contains("claude") && !first.contains("json"),
        "{first}"
    );
    let r = env.run(&["convert", &ID[..6], "--to", "markdown"]);
    assert!(
        r.stderr
            .starts_with("agentlog: error: unknown format \"markdown\""),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("  hint: convert writes session formats"),
        "{}",
        r.stderr
    );
    let out = env.home().join("once.md");
    let o = out.to_str().unwrap();
    assert_eq!(
        env.run(&["export", &ID[..6], "--to", "md", "-o", o]).status,
        0
    );
    let r = env.run(&["export", &ID[..6], "--to", "md", "-o", o]);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert!(
        lines[0].starts_with("agentlog: error: writing "),
        "{}",
        r.stderr
    );
    assert_eq!(
        lines.last(),
        Some(&"  hint: --force replaces the file (atomically)"),
        "{}",
        r.stderr
    );
}

#[test]
fn export_to_an_unknown_target_lists_the_transcripts_too() {
    let env = TestEnv::new();
    agentlog_api::example::write_claude_session(env.home()).unwrap();
    let r = env.run(&["export", &ID[..6], "--to", "nope"]);
    assert_eq!(r.status, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("known formats: markdown, text, html, "),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("codex") && !r.stderr.contains("cursor"),
        "{}",
        r.stderr
    );
}

/// A codelia run log: its run input is a prompt, read as a message too.
const CODELIA: &str = r#"{"type":"header","schema_version":1,"run_id":"c0de11a0-0000-4000-8000-000000000001","started_at":"2026-12-01T15:52:11.846Z","client":{"name":"tui","version":"0.1.0"},"server":{"name":"runtime","version":"0.1.0"},"model":{"provider":"openai","name":"gpt-4.1-mini"},"prompts":{"system":"You are a coding assistant."},"runtime":{"cwd":"/home/dev/src/webapp"}}
{"type":"run.start","run_id":"c0de11a0-0000-4000-8000-000000000001","ts":"2026-12-01T15:52:20.765Z","input":{"type":"text","text":"The tokenizer panics on input with emoji."},"ui_context":{"cwd":"/home/dev/src/webapp"}}
"#;

#[test]
fn a_codelia_prompt_is_found_once_and_dated() {
    let env = TestEnv::new();
    env.write(
        ".codelia/sessions/2026/12/01/c0de11a0-0000-4000-8000-000000000001.jsonl",
        CODELIA.as_bytes(),
    );
    let r = env.run(&["search", "tokenizer", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let hits: Vec<serde_json::Value> = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(hits.len(), 1, "{}", r.stdout);
    assert_eq!(hits[0]["agent"], "codelia");
    assert!(hits[0]["ts_ms"].is_i64(), "{}", r.stdout);
    let text = env.run(&["search", "tokenizer"]);
    assert!(
        text.stdout.contains("codelia user 2026-12-01 15:52"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("    The «tokenizer» panics"),
        "no record JSON around the text: {}",
        text.stdout
    );
}

#[test]
fn export_to_a_file_says_what_it_wrote_and_html_leaves_out_the_local_path() {
    let env = TestEnv::new();
    agentlog_api::example::write_claude_session(env.home()).unwrap();
    let md = env.home().join("out.md");
    let r = env.run(&[
        "export",
        &ID[..6],
        "--to",
        "markdown",
        "-o",
        md.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let size = std::fs::metadata(&md).unwrap().len();
    assert_eq!(
        env.redact(&r.stderr),
        format!("agentlog: wrote [HOME]/out.md ({size} bytes)\n")
    );
    let html = env.home().join("out.html");
    let r = env.run(&[
        "export",
        &ID[..6],
        "--to",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(
        env.redact(&r.stderr)
            .contains("agentlog: wrote [HOME]/out.html (")
            && r.stderr.contains("no secrets found"),
        "{}",
        r.stderr
    );
    let page = std::fs::read_to_string(&html).unwrap();
    let home = env.home().display().to_string();
    assert!(!page.contains(&home), "the page names {home}");
    assert!(
        page.contains(&format!("{ID}.jsonl")),
        "the page names the file"
    );
    let r = env.run(&["export", &ID[..6], "--to", "text", "-o", "/dev/null"]);
    assert_eq!(
        (r.status, r.stderr.as_str()),
        (0, ""),
        "a stream is not a file"
    );
}

#[test]
fn an_html_page_cuts_a_long_title_at_a_word_and_says_so() {
    let env = TestEnv::new();
    let prompt = "Please find out why the tokenizer panics on emoji input, then fix it and add a regression test covering every character width";
    assert!(prompt.len() > 120);
    let session = serde_json::json!({
        "meta": {"id": "7171e000-0000-4000-8000-000000000001", "agent": "agentlog", "cwd": "/work/demo"},
        "entries": [{"id": "u1", "parent_id": null, "kind": "message", "role": "user",
                     "content": [{"type": "text", "text": prompt}]}],
        "leaf_id": "u1"
    });
    let p = env.write("long.json", session.to_string().as_bytes());
    let r = env.run(&["export", p.to_str().unwrap(), "--to", "html"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let title = r
        .stdout
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap();
    assert!(title.ends_with("…"), "{title}");
    let kept = title.trim_end_matches('…');
    assert!(prompt.starts_with(kept), "{title}");
    assert_eq!(
        prompt[kept.len()..].chars().next(),
        Some(' '),
        "cut at a word: {title}"
    );
}

#[test]
fn a_generated_home_is_dated_before_today_and_an_empty_list_says_which_filter_emptied_it() {
    let env = TestEnv::new();
    let now = agentlog_index::time::now_ms();
    let opts = agentlog_bench::gen::GenOptions::recent(now);
    let g = agentlog_bench::gen::generate_with(env.home(), 3_000_000, 7, &opts).unwrap();
    let r = env.run(&["ls", "--since", "30d", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let listed: Vec<serde_json::Value> = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        !listed.is_empty() && listed.len() < g.files.len(),
        "the last month's sessions of {}: {}",
        g.files.len(),
        listed.len()
    );
    let r = env.run(&["ls", "--since", "2100-01-01"]);
    assert_eq!(
        r.stdout,
        format!(
            "{} sessions found, none started since 2100-01-01 00:00 UTC (--since 2100-01-01)\n",
            g.files.len()
        )
    );
    let r = env.run(&["ls", "--project", "no-such-project"]);
    assert_eq!(
        r.stdout,
        format!(
            "{} sessions found, none with a project containing \"no-such-project\" (--project)\n",
            g.files.len()
        )
    );
}

#[test]
fn ls_cuts_a_long_title_at_a_word_with_an_ellipsis() {
    let env = TestEnv::new();
    let sid = "71e1e000-0000-4000-8000-000000000001";
    let prompt = "Please find out why the tokenizer panics on unusual emoji input, then fix it";
    let line = serde_json::json!({
        "type": "user", "uuid": "u1", "parentUuid": null, "sessionId": sid,
        "timestamp": "2026-01-01T10:00:00Z", "cwd": "/p",
        "message": {"role": "user", "content": prompt},
    });
    env.write(
        &format!(".claude/projects/-p/{sid}.jsonl"),
        format!("{line}\n").as_bytes(),
    );
    let r = env.run(&["ls"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let title = r
        .stdout
        .lines()
        .nth(1)
        .unwrap()
        .split("  ")
        .last()
        .unwrap()
        .trim();
    assert_eq!(
        title, "Please find out why the tokenizer panics on unusual emoji…",
        "{}",
        r.stdout
    );
}
