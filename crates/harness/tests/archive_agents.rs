//! The archive against the real agents: the real Claude Code deletes its own
//! old transcripts (`cleanupPeriodDays`), and agentlog still lists, shows,
//! searches and counts them, puts one back byte for byte, and the real
//! Claude Code resumes the restored session with its whole history; the
//! real Gemini CLI compresses a session (rewriting its file) and agentlog
//! keeps both states.
//!
//! With `CI` set a CLI that cannot be installed fails the test; elsewhere
//! the test prints that it skipped and why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn archived_paths(sb: &Sandbox) -> Vec<PathBuf> {
    json(&agentlog(sb, &["archive", "ls", "--json"]))
        .as_array()
        .unwrap()
        .iter()
        .map(|s| PathBuf::from(s["path"].as_str().unwrap()))
        .collect()
}

fn age(file: &Path, days: u64) {
    let t = SystemTime::now() - Duration::from_secs(days * 86_400);
    std::fs::File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

/// The bytes of state `n` the archive keeps of `file` (`archive cat`).
fn cat_state(sb: &Sandbox, file: &Path, n: usize) -> Vec<u8> {
    let mut c = std::process::Command::new(agentlog_bin());
    c.args([
        "archive",
        "cat",
        file.to_str().unwrap(),
        "--state",
        &n.to_string(),
    ]);
    c.env_clear();
    for (k, v) in sb.env() {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "archive cat: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn wait_gone(files: &[&Path], within: Duration) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if files.iter().all(|f| !f.exists()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    files.iter().all(|f| !f.exists())
}

#[test]
fn real_claude_deletes_its_old_sessions_and_agentlog_keeps_them() {
    run_or_skip(|| {
        cli("claude");
        let server = server(agentlog_harness::Script::default());
        let sb = Sandbox::new("claude", &server.url());
        // Claude Code sweeps old transcripts 5 s after it starts, in the
        // background: the run that should sweep stays up longer, in a
        // shell call.
        server.set_script(
            script_for("claude", &sb.project).rule(
                agentlog_harness::Rule::new("sweep claude")
                    .then(vec![agentlog_harness::tool_call(
                        "Bash",
                        serde_json::json!({"command": "sleep 12; echo swept", "description": "wait"}),
                    )])
                    .then(vec![agentlog_harness::text("sweep-answer")]),
            ),
        );

        // The first session is kept by agentlog's hook, as Claude Code
        // writes it (no index has run).
        agentlog(&sb, &["hooks", "install", "--agent", "claude", "--yes"]);
        sb.run(&sb.project, "alpha claude: list the files", None);
        let first = sb.newest_session();
        assert!(
            archived_paths(&sb).contains(&first),
            "Claude Code's Stop hook did not capture {} into the archive",
            first.display()
        );
        // The second by `agentlog index`.
        agentlog(&sb, &["hooks", "uninstall", "--agent", "claude", "--yes"]);
        sb.run(&sb.project, "gamma claude: say hello", None);
        let second = sb
            .session_files()
            .into_iter()
            .find(|f| *f != first)
            .expect("a second session file");
        agentlog(&sb, &["index"]);
        assert!(archived_paths(&sb).contains(&second));
        let bytes = std::fs::read(&first).unwrap();
        let stats_before = json(&agentlog(&sb, &["stats", "--json"]));

        // Old, and Claude Code is told to keep a day: at its next start it
        // deletes both.
        age(&first, 40);
        age(&second, 40);
        let settings = sb.home.join(".claude/settings.json");
        let mut v: Value = std::fs::read_to_string(&settings)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| serde_json::json!({}));
        v["cleanupPeriodDays"] = serde_json::json!(1);
        std::fs::write(&settings, v.to_string()).unwrap();
        // A sweep within the last day (by an earlier run) puts the next off.
        let _ = std::fs::remove_file(sb.home.join(".claude/.last-cleanup"));
        sb.run(&sb.project, "sweep claude: wait a little", None);
        assert!(
            wait_gone(&[&first, &second], Duration::from_secs(60)),
            "the real Claude Code did not delete the 40-day-old transcripts with cleanupPeriodDays = 1 (still there: {:?})",
            [&first, &second].iter().filter(|f| f.exists()).collect::<Vec<_>>()
        );

        // agentlog still has them.
        agentlog(&sb, &["index"]);
        let id = sb.resume_arg(&first);
        let deleted = json(&agentlog(&sb, &["ls", "--deleted", "--all", "--json"]));
        let ids: Vec<&str> = deleted
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&id.as_str()), "ls --deleted: {deleted}");
        assert_eq!(ids.len(), 2, "ls --deleted: {deleted}");
        let shown = agentlog(&sb, &["show", &id]);
        assert!(shown.contains("alpha-answer-claude"), "{shown}");
        let hits = agentlog(&sb, &["search", "alpha-answer-claude", "--json"]);
        assert!(hits.contains(&id), "{hits}");
        let stats_after = json(&agentlog(&sb, &["stats", "--json"]));
        // The deleted sessions still count; the third run's session adds
        // its own.
        let responses = |v: &Value| v["total"]["responses"].as_u64().unwrap_or(0);
        assert!(
            responses(&stats_after) >= responses(&stats_before),
            "before {stats_before}\nafter {stats_after}"
        );

        // Put back byte for byte, and the real Claude Code resumes it with
        // its whole history.
        agentlog(&sb, &["restore", &id]);
        assert_eq!(std::fs::read(&first).unwrap(), bytes);
        server.clear_requests();
        sb.run(&sb.project, "gamma claude: continue", Some(&id));
        let sent: Vec<String> = server.turns().iter().map(|r| r.body.to_string()).collect();
        assert!(
            sent.iter().any(|b| b.contains("alpha-answer-claude")),
            "the resumed session's history did not reach the model"
        );
        let text = std::fs::read_to_string(&first).unwrap();
        assert!(text.starts_with(&String::from_utf8_lossy(&bytes).to_string()));
        assert!(text.contains("gamma-answer"));
    });
}

#[test]
fn real_gemini_compresses_a_session_and_agentlog_keeps_both_states() {
    run_or_skip(|| {
        cli("gemini");
        let server = server(agentlog_harness::Script::default());
        let sb = Sandbox::new("gemini", &server.url());
        let summary = "COMPRESSED-SUMMARY-OF-THE-EARLIER-TURNS";
        let mut script = script_for("gemini", &sb.project);
        script.fallback = vec![agentlog_harness::text(summary)];
        server.set_script(script);
        sb.run(&sb.project, "alpha gemini: list the files", None);
        let file = sb.newest_session();
        agentlog(&sb, &["index"]);
        let before = std::fs::read(&file).unwrap();
        // Compression on from the next turn: Gemini CLI rewrites the chat.
        sb.enable_compaction();
        sb.run(
            &sb.project,
            "gamma gemini: go on",
            Some(&sb.resume_arg(&file)),
        );
        let after = std::fs::read(&file).unwrap();
        assert_ne!(before, after);
        agentlog(&sb, &["index"]);
        let versions = json(&agentlog(
            &sb,
            &["archive", "versions", file.to_str().unwrap(), "--json"],
        ));
        let n = versions["versions"].as_array().unwrap().len();
        assert!(n >= 2, "both states kept: {versions}");
        let cat = |k: usize| cat_state(&sb, &file, k);
        assert!(
            cat(n) == after,
            "the latest state is not the file byte for byte"
        );
        assert!(
            (1..n).any(|k| cat(k) == before),
            "the state before the compression byte for byte"
        );
        let diff = agentlog(
            &sb,
            &[
                "archive",
                "diff",
                file.to_str().unwrap(),
                "1",
                &n.to_string(),
            ],
        );
        assert!(diff.contains("alpha"), "{diff}");
    });
}

#[test]
fn real_codex_notify_captures_each_turn() {
    run_or_skip(|| {
        cli("codex");
        let server = server(agentlog_harness::Script::default());
        let sb = Sandbox::new("codex", &server.url());
        server.set_script(script_for("codex", &sb.project));
        let installed = agentlog(&sb, &["hooks", "install", "--agent", "codex", "--yes"]);
        assert!(installed.contains("config.toml"), "{installed}");
        sb.run(&sb.project, "gamma codex: say hello", None);
        let file = sb.newest_session();
        // Codex starts its notify program after the turn without waiting
        // for it: the capture lands shortly after.
        let until = Instant::now() + Duration::from_secs(60);
        while !archived_paths(&sb).contains(&file) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(500));
        }
        assert!(
            archived_paths(&sb).contains(&file),
            "Codex's notify program did not capture {}",
            file.display()
        );
        let kept = json(&agentlog(
            &sb,
            &["archive", "versions", file.to_str().unwrap(), "--json"],
        ));
        let n = kept["versions"].as_array().unwrap().len();
        let captured = cat_state(&sb, &file, n);
        let now = std::fs::read(&file).unwrap();
        assert!(
            now.starts_with(&captured) && !captured.is_empty(),
            "the captured state is the rollout as Codex wrote it (or its first part)"
        );
    });
}
