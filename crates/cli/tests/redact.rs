//! `--redact`, `scan` and `scrub` on sessions with planted secrets, run as a
//! user runs them.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use agentlog_bench::secrets::{all_secrets, leaks, planted_session};
use agentlog_formats::{registry, Severity};
use common::TestEnv;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const SEED: u64 = 21;

/// Writes the planted session as an agentlog JSON file under HOME.
fn planted_file(env: &TestEnv) -> PathBuf {
    let mut out = Vec::new();
    registry::by_name("json")
        .unwrap()
        .write(&planted_session(SEED), &mut out)
        .unwrap();
    env.write("planted.json", &out)
}

fn no_leaks(what: &str, text: &str) {
    assert_eq!(leaks(text, SEED), Vec::<String>::new(), "{what} leaks");
}

/// The text of the file at `path`, or of every file in the folder there
/// (a format whose sessions are folders).
fn text_of(path: &Path) -> String {
    if path.is_file() {
        return std::fs::read_to_string(path).unwrap();
    }
    let mut all = String::new();
    for e in std::fs::read_dir(path).unwrap() {
        all.push_str(&text_of(&e.unwrap().path()));
    }
    all
}

/// `agentlog resume FILE --from json --in AGENT --cwd /home/u/project
/// --json`, and `extra`.
fn resume_planted(env: &TestEnv, file: &Path, agent: &str, extra: &[&str]) -> common::Run {
    let mut args = vec![
        "resume",
        file.to_str().unwrap(),
        "--from",
        "json",
        "--in",
        agent,
        "--cwd",
        "/home/u/project",
        "--json",
    ];
    args.extend(extra);
    env.run(&args)
}

fn validates(path: &Path, format: Option<&str>) {
    let format = match format {
        Some(name) => registry::by_name(name).unwrap(),
        None => registry::detect(path).unwrap(),
    };
    let errors: Vec<String> = format
        .validate(path)
        .unwrap()
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}", path.display());
}

#[test]
fn redacted_output_of_every_kind_holds_no_secret_and_still_validates() {
    let env = TestEnv::new();
    let file = planted_file(&env);
    let file = file.to_str().unwrap();
    // (Its metadata is longer than the 4 KiB the json format's detection
    // reads, so the format is named.)
    // Without --redact the secrets are there (the check can fail).
    let plain = env.run(&["show", file, "--from", "json", "--full"]);
    assert_eq!(plain.status, 0, "{}", plain.stderr);
    assert!(!leaks(&plain.stdout, SEED).is_empty());
    for args in [
        &["show", file, "--from", "json", "--full", "--redact"][..],
        &["show", file, "--from", "json", "--json", "--redact"],
        &["show", file, "--from", "json", "--markdown", "--redact"],
    ] {
        let r = env.run(args);
        assert_eq!(r.status, 0, "{args:?}: {}", r.stderr);
        no_leaks(&format!("{args:?}"), &r.stdout);
        no_leaks(&format!("{args:?} stderr"), &r.stderr);
        assert!(r.stderr.contains("redacted "), "{}", r.stderr);
    }
    // (`json` is among the writable formats.)
    let mut targets = vec!["markdown", "text", "html"];
    targets.extend(
        registry::all()
            .iter()
            .filter(|f| f.can_write())
            .map(|f| f.name()),
    );
    for to in targets {
        for cmd in ["export", "convert"] {
            if cmd == "convert" && matches!(to, "markdown" | "text" | "html") {
                continue;
            }
            let ext = registry::by_name(to).map_or("txt", |f| f.extension());
            let out = env.home().join(format!("out-{cmd}-{to}.{ext}"));
            let mut args = vec![cmd, file, "--from", "json", "--to", to, "-o"];
            args.push(out.to_str().unwrap());
            // HTML export redacts by default; the others with --redact.
            if to != "html" {
                args.push("--redact");
            }
            let r = env.run(&args);
            assert_eq!(r.status, 0, "{cmd} {to}: {}", r.stderr);
            assert!(r.stderr.contains("redacted "), "{cmd} {to}: {}", r.stderr);
            let written = text_of(&out);
            assert!(!written.is_empty(), "{cmd} --to {to}");
            no_leaks(&format!("{cmd} --to {to}"), &written);
            no_leaks(&format!("{cmd} --to {to} stderr"), &r.stderr);
            if registry::by_name(to).is_some() {
                validates(&out, Some(to));
            }
        }
    }
}

#[test]
fn resume_redact_writes_no_secret_where_the_agent_looks() {
    let env = TestEnv::new();
    let file = planted_file(&env);
    for agent in ["claude", "codex", "gemini", "pi", "openhands"] {
        let r = resume_planted(&env, &file, agent, &["--redact"]);
        assert_eq!(r.status, 0, "{agent}: {}", r.stderr);
        let plan: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let path = PathBuf::from(plan["path"].as_str().unwrap());
        no_leaks(agent, &text_of(&path));
        validates(&path, None);
        // The report on stderr is JSON with --json, and names no secret.
        let report: serde_json::Value = serde_json::from_str(&r.stderr).unwrap();
        assert!(!report["findings"].as_array().unwrap().is_empty());
        no_leaks(agent, &r.stderr);
    }
}

/// Writes the planted session where each agent keeps its sessions and
/// returns the paths.
fn plant_everywhere(env: &TestEnv) -> Vec<PathBuf> {
    let file = planted_file(env);
    let mut paths = Vec::new();
    for agent in ["claude", "codex", "gemini", "pi"] {
        let r = resume_planted(env, &file, agent, &[]);
        assert_eq!(r.status, 0, "{agent}: {}", r.stderr);
        let plan: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        paths.push(PathBuf::from(plan["path"].as_str().unwrap()));
    }
    std::fs::remove_file(&file).unwrap();
    paths
}

#[test]
fn scan_finds_every_planted_kind_in_every_agents_sessions() {
    let env = TestEnv::new();
    let paths = plant_everywhere(&env);
    let r = env.run(&["scan", "--json"]);
    assert_eq!(r.status, 1, "secrets found: exit 1; {}", r.stderr);
    no_leaks("scan --json", &r.stdout);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&r.stdout).unwrap();
    let kinds: BTreeSet<String> = all_secrets(SEED).into_iter().map(|(k, _)| k).collect();
    assert!(kinds.len() >= 25);
    for p in &paths {
        let found: BTreeSet<String> = rows
            .iter()
            .filter(|row| Path::new(row["path"].as_str().unwrap()) == p)
            .map(|row| row["kind"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(found, kinds, "{}", p.display());
    }
    let fingerprints: BTreeSet<&str> = rows
        .iter()
        .map(|r| r["fingerprint"].as_str().unwrap())
        .collect();
    for (kind, secret) in all_secrets(SEED) {
        assert!(
            fingerprints.contains(agentlog_redact::fingerprint(&secret).as_str()),
            "{kind}"
        );
    }
    let text = env.run(&["scan"]);
    assert_eq!(text.status, 1);
    no_leaks("scan", &text.stdout);
    assert!(
        text.stdout.contains("distinct) in 4 of 4 sessions"),
        "{}",
        text.stdout
    );
    // Only the named session.
    let one = env.run(&["scan", paths[0].to_str().unwrap(), "--json"]);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&one.stdout).unwrap();
    assert!(rows.iter().all(|r| r["path"] == paths[0].to_str().unwrap()));
}

#[test]
fn scrub_rewrites_each_session_in_place_keeping_a_backup() {
    let env = TestEnv::new();
    for path in plant_everywhere(&env) {
        let original = std::fs::read(&path).unwrap();
        let format = registry::detect(&path).unwrap();
        let entries = format.read_path(&path).unwrap().session.entries.len();
        // --dry-run changes nothing.
        let dry = env.run(&["scrub", path.to_str().unwrap(), "--dry-run"]);
        assert_eq!(dry.status, 0, "{}", dry.stderr);
        assert_eq!(std::fs::read(&path).unwrap(), original);
        let r = env.run(&["scrub", path.to_str().unwrap(), "--json"]);
        assert_eq!(r.status, 0, "{}: {}", path.display(), r.stderr);
        no_leaks("scrub report", &r.stdout);
        let outcome: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(outcome["written"], true);
        assert_eq!(outcome["remaining"]["findings"], serde_json::json!([]));
        let backup = PathBuf::from(outcome["backup"].as_str().unwrap());
        assert_eq!(
            std::fs::read(&backup).unwrap(),
            original,
            "backup is the original"
        );
        let scrubbed = std::fs::read_to_string(&path).unwrap();
        no_leaks(&path.display().to_string(), &scrubbed);
        // Still the same format, read by its own reader, and valid.
        assert_eq!(registry::detect(&path).unwrap().name(), format.name());
        let back = format.read_path(&path).unwrap();
        assert_eq!(back.session.entries.len(), entries);
        validates(&path, None);
        // Scrubbing again finds nothing and writes nothing.
        let again = env.run(&["scrub", path.to_str().unwrap()]);
        assert_eq!(again.status, 0);
        assert!(again.stdout.contains("no secrets found; nothing changed"));
        let s = env.run(&["scan", path.to_str().unwrap()]);
        assert_eq!(s.status, 0, "{}", s.stdout);
    }
    // Backups are not sessions: scan finds none left anywhere.
    let all = env.run(&["scan", "--json"]);
    assert_eq!(all.status, 0, "{}", all.stdout);
}

#[test]
fn scrub_refuses_a_binary_database_and_a_directory() {
    let env = TestEnv::new();
    let db = common::fixtures().join("native/cursor/as-test-store.db");
    let copy = env.write("store.db", &std::fs::read(&db).unwrap());
    let r = env.run(&["scrub", copy.to_str().unwrap()]);
    assert_eq!(r.status, 1);
    assert!(r.stderr.contains("binary file"), "{}", r.stderr);
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&db).unwrap());
    let r = env.run(&["scrub", env.home().to_str().unwrap()]);
    assert_eq!(r.status, 1);
    assert!(r.stderr.contains("not a session file"), "{}", r.stderr);
}

#[cfg(unix)]
#[test]
fn scrub_refuses_a_session_file_that_is_a_symbolic_link() {
    let env = TestEnv::new();
    let target = planted_file(&env);
    let original = std::fs::read(&target).unwrap();
    let link = env.home().join("sessions/link.json");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for extra in [&[][..], &["--dry-run"], &["--json"]] {
        let mut args = vec!["scrub", link.to_str().unwrap()];
        args.extend_from_slice(extra);
        let r = env.run(&args);
        assert_ne!(r.status, 0, "{extra:?}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(link.to_str().unwrap()) && r.stderr.contains("symbolic link"),
            "{extra:?}: {}",
            r.stderr
        );
        assert!(!r.stdout.contains("scrubbed"), "{extra:?}: {}", r.stdout);
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link was replaced"
        );
        assert_eq!(std::fs::read(&target).unwrap(), original);
    }
    // No backup or temp file beside the link.
    assert_eq!(
        std::fs::read_dir(link.parent().unwrap()).unwrap().count(),
        1
    );
}

#[test]
fn scrub_rewrites_an_openhands_conversations_own_files_keeping_a_backup() {
    let env = TestEnv::new();
    let file = planted_file(&env);
    let r = resume_planted(&env, &file, "openhands", &[]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    std::fs::remove_file(&file).unwrap();
    let plan: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let folder = PathBuf::from(plan["path"].as_str().unwrap());
    let original = text_of(&folder);
    // A file of someone else's in the folder is not the session's: it is
    // neither read nor changed.
    let (_, secret) = &all_secrets(SEED)[0];
    let notes = folder.join("notes.txt");
    std::fs::write(&notes, format!("key {secret}\n")).unwrap();
    assert!(!leaks(&original, SEED).is_empty());
    let format = registry::by_name("openhands").unwrap();
    let entries = format.read_path(&folder).unwrap().session.entries.len();
    // Named by its events folder, as `ls` shows it.
    let events = folder.join("events");
    let r = env.run(&["scrub", events.to_str().unwrap(), "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    no_leaks("scrub report", &r.stdout);
    let outcome: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(outcome["written"], true);
    assert_eq!(outcome["path"], folder.to_str().unwrap());
    assert_eq!(outcome["remaining"]["findings"], serde_json::json!([]));
    let backup = PathBuf::from(outcome["backup"].as_str().unwrap());
    // The backup holds the originals of the files that changed.
    assert!(!leaks(&text_of(&backup), SEED).is_empty());
    for e in std::fs::read_dir(backup.join("events")).unwrap() {
        let e = e.unwrap();
        let now = std::fs::read(folder.join("events").join(e.file_name())).unwrap();
        assert_ne!(std::fs::read(e.path()).unwrap(), now);
    }
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        format!("key {secret}\n")
    );
    std::fs::remove_file(&notes).unwrap();
    no_leaks("scrubbed folder", &text_of(&folder));
    assert_ne!(text_of(&folder), original);
    let back = format.read_path(&folder).unwrap();
    assert_eq!(back.session.entries.len(), entries);
    validates(&folder, Some("openhands"));
    let again = env.run(&["scrub", folder.to_str().unwrap()]);
    assert_eq!(again.status, 0, "{}", again.stderr);
    assert!(again.stdout.contains("no secrets found; nothing changed"));
    // The backup is not a session: a scan of everything finds nothing.
    let all = env.run(&["scan", "--json"]);
    assert_eq!(all.status, 0, "{}", all.stdout);
    let siblings = std::fs::read_dir(folder.parent().unwrap()).unwrap().count();
    assert_eq!(siblings, 2, "the folder and its backup, nothing else");
}

#[test]
fn scrub_rewrites_the_tool_outputs_a_claude_session_reads_beside_it() {
    let env = TestEnv::new();
    let (_, secret) = &all_secrets(SEED)[0];
    let session = env
        .home()
        .join(".claude/projects/-p/0a1b2c3d-0000-4000-8000-000000000009.jsonl");
    let results = session.with_extension("").join("tool-results");
    std::fs::create_dir_all(&results).unwrap();
    let output = results.join("toolu_1.txt");
    let original = format!("the key is {secret}\n");
    std::fs::write(&output, &original).unwrap();
    let lines = [
        serde_json::json!({"type":"assistant","uuid":"a1","parentUuid":null,"sessionId":"s","message":{"id":"msg_1","role":"assistant","model":"claude-x","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]}}),
        serde_json::json!({"type":"user","uuid":"u1","parentUuid":"a1","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"<persisted-output>\nPreview\n</persisted-output>"}]},"toolUseResult":{"persistedOutputPath":output}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&session, &text).unwrap();
    // A dry run says what it would do, changes nothing, and counts nothing
    // as remaining that it would scrub.
    let r = env.run(&["scrub", session.to_str().unwrap(), "--dry-run"]);
    assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("would scrub"), "{}", r.stdout);
    assert_eq!(std::fs::read_to_string(&output).unwrap(), original);
    let r = env.run(&["scrub", session.to_str().unwrap(), "--json"]);
    assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    no_leaks("scrub's report", &r.stdout);
    let outcome: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(outcome["remaining"]["findings"], serde_json::json!([]));
    assert_eq!(outcome["beside"][0]["path"], output.to_str().unwrap());
    let backup = PathBuf::from(outcome["beside"][0]["backup"].as_str().unwrap());
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);
    no_leaks(
        "the scrubbed output",
        &std::fs::read_to_string(&output).unwrap(),
    );
    // The session file had no secret of its own: unchanged.
    assert_eq!(std::fs::read_to_string(&session).unwrap(), text);
    // Nothing is left for a scan, and the backup is not taken for an
    // output of the session.
    let r = env.run(&["scan", session.to_str().unwrap(), "--json"]);
    assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    let r = env.run(&["scrub", session.to_str().unwrap()]);
    assert_eq!(r.status, 0, "{}", r.stdout);
    assert!(r.stdout.contains("no secrets found"), "{}", r.stdout);

    // A tool-results folder that is a link elsewhere is not written
    // through: what the session shows from there remains, and scrub fails.
    let elsewhere = env.home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("toolu_1.txt"), &original).unwrap();
    std::fs::write(elsewhere.join("notes.txt"), &original).unwrap();
    std::fs::remove_dir_all(&results).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &results).unwrap();
    let r = env.run(&["scrub", session.to_str().unwrap()]);
    assert_eq!(r.status, 1, "{}", r.stdout);
    assert!(r.stdout.contains("1 secret remain"), "{}", r.stdout);
    no_leaks("scrub's report", &r.stdout);
    for f in ["toolu_1.txt", "notes.txt"] {
        assert_eq!(
            std::fs::read_to_string(elsewhere.join(f)).unwrap(),
            original
        );
    }
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        2,
        "no backup made there"
    );
}

#[test]
fn scan_finds_a_secret_only_a_subagent_saw() {
    let env = TestEnv::new();
    let (kind, secret) = &all_secrets(SEED)[0];
    let dir = env.home().join(".claude/projects/-p");
    let session = dir.join("0a1b2c3d-0000-4000-8000-00000000000a.jsonl");
    let subagents = session.with_extension("").join("subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    let line = |uuid: &str, text: &str, side: bool| {
        format!(
            "{}\n",
            serde_json::json!({"type":"user","uuid":uuid,"parentUuid":null,"isSidechain":side,"sessionId":"0a1b2c3d-0000-4000-8000-00000000000a","cwd":"/p","timestamp":"2025-12-16T00:00:00.000Z","message":{"role":"user","content":text}})
        )
    };
    std::fs::write(&session, line("m1", "look for the keys", false)).unwrap();
    let sub = subagents.join("agent-abc.jsonl");
    std::fs::write(&sub, line("s1", &format!("found {secret} in .env"), true)).unwrap();
    for args in [
        vec!["scan", "--json"],
        vec!["scan", session.to_str().unwrap(), "--json"],
    ] {
        let r = env.run(&args);
        assert_eq!(r.status, 1, "{args:?}: {}", r.stderr);
        no_leaks("scan", &r.stdout);
        let rows: Vec<serde_json::Value> = serde_json::from_str(&r.stdout).unwrap();
        assert!(
            rows.iter()
                .any(|row| row["path"] == sub.to_str().unwrap() && row["kind"] == kind.as_str()),
            "{args:?}: {}",
            r.stdout
        );
    }
}
