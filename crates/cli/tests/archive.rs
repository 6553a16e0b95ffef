//! The archive from the command line: a session its agent deleted stays,
//! is put back byte for byte, and the archive survives writers killed at
//! any moment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TestEnv;
use std::io::Write;
use std::path::{Path, PathBuf};

const SID: &str = "5e551011-aaaa-4bbb-8ccc-0123456789ab";

fn record(sid: &str, n: u32, text: &str) -> String {
    let parent = (n > 1).then(|| format!("{sid}-{}", n - 1));
    serde_json::json!({
        "type": if n % 2 == 1 { "user" } else { "assistant" },
        "uuid": format!("{sid}-{n}"),
        "parentUuid": parent,
        "sessionId": sid,
        "timestamp": "2026-11-30T10:00:00Z",
        "cwd": "/work/app",
        "message": {"role": if n % 2 == 1 { "user" } else { "assistant" }, "content": text},
    })
    .to_string()
        + "\n"
}

fn claude_session(env: &TestEnv, sid: &str, texts: &[&str]) -> PathBuf {
    let mut body = String::new();
    for (i, t) in texts.iter().enumerate() {
        body.push_str(&record(sid, i as u32 + 1, t));
    }
    env.write(
        &format!(".claude/projects/-work-app/{sid}.jsonl"),
        body.as_bytes(),
    )
}

#[test]
fn a_session_its_agent_deleted_is_listed_shown_searched_and_restored() {
    let env = TestEnv::new();
    let file = claude_session(
        &env,
        SID,
        &[
            "how do we rotate the flamingo keys?",
            "with the rotate script",
        ],
    );
    let bytes = std::fs::read(&file).unwrap();
    let r = env.run(&["index"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stdout.contains("archive: 1 file new"), "{}", r.stdout);
    std::fs::remove_file(&file).unwrap();
    assert_eq!(env.run(&["index"]).status, 0);

    let ls = env.run(&["ls", "--deleted", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&ls.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1, "{}", ls.stdout);
    assert_eq!(v[0]["id"], SID);
    assert!(v[0]["deleted"]["noticed"].is_string(), "{}", ls.stdout);
    let table = env.run(&["ls"]);
    assert!(
        table.stdout.contains("[deleted] how do we rotate"),
        "{}",
        table.stdout
    );

    let show = env.run(&["show", &SID[..8]]);
    assert_eq!(show.status, 0, "{}", show.stderr);
    assert!(show.stdout.contains("flamingo keys"), "{}", show.stdout);
    assert!(
        show.stderr.contains("gone from disk") && show.stderr.contains("agentlog restore"),
        "{}",
        show.stderr
    );
    let search = env.run(&["search", "flamingo"]);
    assert!(search.stdout.contains(&SID[..8]), "{}", search.stdout);
    let md = env.run(&["export", &SID[..8], "--to", "markdown"]);
    assert!(
        md.stdout.contains("flamingo"),
        "{} {}",
        md.stdout,
        md.stderr
    );

    let versions = env.run(&["archive", "versions", &SID[..8]]);
    assert!(
        versions.stdout.contains("deleted from disk"),
        "{}",
        versions.stdout
    );
    let restore = env.run(&["restore", &SID[..8]]);
    assert_eq!(restore.status, 0, "{}", restore.stderr);
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    let again = env.run(&["restore", &SID[..8]]);
    assert_ne!(again.status, 0);
    assert!(
        again.stderr.contains("already there") && again.stderr.contains("--force"),
        "{}",
        again.stderr
    );
    assert_eq!(env.run(&["archive", "verify"]).status, 0);
}

#[test]
fn forget_asks_first_then_removes_for_good() {
    let env = TestEnv::new();
    let file = claude_session(&env, SID, &["secret plans", "ok"]);
    env.run(&["index"]);
    std::fs::remove_file(&file).unwrap();
    env.run(&["index"]);
    let dry = env.run(&["forget", &SID[..8]]);
    assert!(
        dry.stdout.contains("would forget") && dry.stdout.contains("--yes"),
        "{}",
        dry.stdout
    );
    assert!(env.run(&["show", &SID[..8]]).status == 0);
    let done = env.run(&["forget", &SID[..8], "--yes"]);
    assert_eq!(done.status, 0, "{}", done.stderr);
    assert_ne!(env.run(&["show", &SID[..8]]).status, 0);
    assert!(env.run(&["ls", "--json"]).stdout.trim() == "[]");
}

/// Runs `agentlog capture --hook claude` (and `extra`) with `input` on
/// standard input, as Claude Code runs its hooks; returns its exit status
/// and standard error.
fn claude_hook(env: &TestEnv, extra: &[&str], input: &[u8]) -> (Option<i32>, String) {
    let mut args = vec!["capture", "--hook", "claude"];
    args.extend_from_slice(extra);
    let mut c = env.command(&args);
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn archived(env: &TestEnv) -> Vec<serde_json::Value> {
    let ls = env.run(&["archive", "ls", "--json"]);
    serde_json::from_str::<serde_json::Value>(&ls.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn the_claude_hook_captures_the_transcript_it_is_handed() {
    let env = TestEnv::new();
    let file = claude_session(&env, SID, &["hooked", "yes"]);
    let input = serde_json::json!({
        "session_id": SID, "transcript_path": file, "hook_event_name": "Stop", "cwd": "/work/app"
    });
    let (status, stderr) = claude_hook(&env, &["--verbose"], input.to_string().as_bytes());
    assert_eq!(status, Some(0));
    assert!(stderr.contains("kept (new)"), "{stderr}");
    assert_eq!(archived(&env)[0]["path"], file.display().to_string());
    // A path that is not a Claude Code session is not kept.
    let other = env.write(
        "notes/id_key",
        b"-----BEGIN PRIVATE KEY-----\nnot a session\n",
    );
    let input = serde_json::json!({"session_id": "x", "transcript_path": other});
    let (status, stderr) = claude_hook(&env, &[], input.to_string().as_bytes());
    assert_eq!(status, Some(0));
    assert!(stderr.contains("id_key"), "{stderr}");
    assert_eq!(archived(&env).len(), 1);
    // Bad input never fails the agent's hook.
    let (status, stderr) = claude_hook(&env, &[], b"not json");
    assert_eq!(status, Some(0));
    assert!(stderr.contains("not a JSON object"), "{stderr}");
}

#[test]
fn hooks_install_shows_first_merges_and_uninstall_takes_only_its_own() {
    let env = TestEnv::new();
    let user = r#"{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}"#;
    let settings = env.write(".claude/settings.json", user.as_bytes());
    env.write(".codex/config.toml", b"model = \"o3\"\n");
    let dry = env.run(&["hooks", "install"]);
    assert_eq!(dry.status, 0, "{}", dry.stderr);
    assert!(
        dry.stdout.contains("+") && dry.stdout.contains("--yes"),
        "{}",
        dry.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        user,
        "a dry run writes nothing"
    );
    let done = env.run(&["hooks", "install", "--yes"]);
    assert_eq!(done.status, 0, "{}", done.stderr);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v["model"], "opus");
    assert_eq!(
        v["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send done"
    );
    assert!(v["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .ends_with("capture --hook claude"));
    let codex = std::fs::read_to_string(env.home().join(".codex/config.toml")).unwrap();
    assert!(
        codex.contains("notify") && codex.contains("model = \"o3\""),
        "{codex}"
    );
    assert!(env
        .home()
        .join(".claude/settings.json.agentlog-backup")
        .is_file());
    assert!(env
        .run(&["hooks", "install", "--yes"])
        .stdout
        .contains("nothing to change"));
    assert_eq!(env.run(&["hooks", "uninstall", "--yes"]).status, 0);
    let back: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(
        back,
        serde_json::from_str::<serde_json::Value>(user).unwrap()
    );
}

/// States of one file that are not prefixes of each other (each is a new
/// version), large enough that a capture takes a while.
fn state(k: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..20_000 {
        writeln!(
            out,
            r#"{{"state":{k},"line":{i},"text":"payload {} {}"}}"#,
            i * 31 % 977,
            k
        )
        .unwrap();
    }
    out
}

fn capture_cmd(env: &TestEnv, file: &Path) -> std::process::Command {
    let mut c = env.command(&["capture", file.to_str().unwrap()]);
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    c
}

#[test]
fn captures_killed_at_random_moments_and_run_at_once_never_damage_the_archive() {
    use rand::{Rng, SeedableRng};
    let env = TestEnv::new();
    let file = claude_session(&env, SID, &["x"]);
    let mut rng = rand::rngs::StdRng::seed_from_u64(39);
    let mut acked: Vec<Vec<u8>> = Vec::new();
    let mut written: Vec<Vec<u8>> = Vec::new();
    let mut finished = 0;
    for k in 0..24 {
        let bytes = state(k);
        std::fs::write(&file, &bytes).unwrap();
        written.push(bytes.clone());
        // Two at once on the same state, one killed after a random wait.
        let mut a = capture_cmd(&env, &file).spawn().unwrap();
        let b = capture_cmd(&env, &file).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(rng.gen_range(0..60)));
        let _ = a.kill();
        let a = a.wait_with_output().unwrap();
        let b = b.wait_with_output().unwrap();
        for out in [a, b] {
            if out.status.code() == Some(0) && String::from_utf8_lossy(&out.stdout).contains("kept")
            {
                finished += 1;
                acked.push(bytes.clone());
            }
        }
    }
    assert!(
        finished >= 24,
        "the unkilled capture of each state finishes"
    );
    assert_eq!(env.run(&["archive", "verify"]).status, 0);
    let versions = env.run(&["archive", "versions", file.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&versions.stdout).unwrap();
    let numbers: Vec<u64> = v["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["number"].as_u64().unwrap())
        .collect();
    let mut kept = Vec::new();
    for n in numbers {
        let out = env
            .command(&[
                "archive",
                "cat",
                file.to_str().unwrap(),
                "--state",
                &n.to_string(),
            ])
            .output()
            .unwrap();
        assert!(out.status.success());
        // Every kept state is one the file really had, never a mix.
        assert!(
            written.contains(&out.stdout),
            "version {n} is not a state the file had"
        );
        kept.push(out.stdout);
    }
    for a in &acked {
        assert!(kept.contains(a), "an acknowledged capture is missing");
    }
}

#[test]
fn archive_keep_days_in_the_configuration_drops_old_states_at_each_index() {
    let env = TestEnv::new();
    let file = claude_session(&env, SID, &["first words", "ok"]);
    env.run(&["index"]);
    claude_session(&env, SID, &["rewritten words"]);
    env.run(&["index"]);
    let states = |env: &TestEnv| {
        let out = env.run(&["archive", "versions", &SID[..8], "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        v["versions"].as_array().unwrap().len()
    };
    assert_eq!(states(&env), 2);
    let dry = env.run(&["archive", "prune", "--older-than", "0"]);
    assert!(
        dry.stdout.contains("would drop 1 old state"),
        "{}",
        dry.stdout
    );
    assert_eq!(states(&env), 2);
    env.write(".config/agentlog/config.toml", b"archive_keep_days = 0\n");
    let r = env.run(&["index"]);
    assert!(r.stdout.contains("1 old state dropped"), "{}", r.stdout);
    assert_eq!(states(&env), 1);
    let cat = env
        .command(&["archive", "cat", &SID[..8]])
        .output()
        .unwrap();
    assert_eq!(cat.stdout, std::fs::read(&file).unwrap());
    assert!(env
        .run(&["doctor"])
        .stdout
        .contains("keeps old states and deleted files 0 days"));
}
