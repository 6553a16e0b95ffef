//! The core commands (show, export, convert, validate, tree, formats) on a
//! session in agentlog's own JSON format, run as a user would.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TestEnv;

const SESSION: &str = r#"{
  "meta": {"id": "demo-1", "agent": "agentlog", "cwd": "/work/demo", "created_at": "2026-01-02T03:04:05.000Z"},
  "entries": [
    {"id": "u1", "parent_id": null, "timestamp": "2026-01-02T03:04:05.000Z", "kind": "message", "role": "user",
     "content": [{"type": "text", "text": "list the files"}]},
    {"id": "a1", "parent_id": "u1", "kind": "message", "role": "assistant", "model": "demo-model",
     "content": [{"type": "thinking", "text": "use ls"}, {"type": "tool_call", "id": "c1", "name": "bash", "input": {"cmd": "ls"}}]},
    {"id": "t1", "parent_id": "a1", "kind": "message", "role": "tool", "tool_name": "bash", "tool_call_id": "c1",
     "content": [{"type": "text", "text": "README.md\nsrc"}]},
    {"id": "a2", "parent_id": "t1", "kind": "message", "role": "assistant", "content": [{"type": "text", "text": "Two entries."}]},
    {"id": "a3", "parent_id": "t1", "kind": "message", "role": "assistant", "content": [{"type": "text", "text": "A retry."}]},
    {"id": "l1", "parent_id": "a2", "kind": "label", "target_id": "u1", "label": "start"}
  ],
  "leaf_id": "l1"
}"#;

fn env_with_session() -> (TestEnv, String) {
    let env = TestEnv::new();
    let p = env.write("demo.json", SESSION.as_bytes());
    (env, p.display().to_string())
}

#[test]
fn show_prints_the_active_branch() {
    let (env, p) = env_with_session();
    let r = env.run(&["show", &p]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    insta::assert_snapshot!(r.stdout);
}

#[test]
fn show_at_an_entry_follows_that_branch() {
    let (env, p) = env_with_session();
    let r = env.run(&["show", &p, "--at", "a3"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stdout.contains("A retry."));
    assert!(!r.stdout.contains("Two entries."));
    let bad = env.run(&["show", &p, "--at", "nope"]);
    assert_eq!(bad.status, 1);
    assert!(
        bad.stderr.contains("no entry with id \"nope\""),
        "{}",
        bad.stderr
    );
}

#[test]
fn show_json_is_the_unified_model() {
    let (env, p) = env_with_session();
    let r = env.run(&["show", &p, "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let expected: serde_json::Value = serde_json::from_str(SESSION).unwrap();
    assert_eq!(v, expected);
}

#[test]
fn export_markdown_to_a_file() {
    let (env, p) = env_with_session();
    let out = env.home().join("out/demo.md");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let r = env.run(&[
        "export",
        &p,
        "--to",
        "markdown",
        "-o",
        &out.display().to_string(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    insta::assert_snapshot!(std::fs::read_to_string(&out).unwrap());
}

#[test]
fn export_and_convert_with_dash_output_write_to_standard_output() {
    let (env, p) = env_with_session();
    let to_file = env.run(&["export", &p, "--to", "markdown"]);
    assert_eq!(to_file.status, 0, "{}", to_file.stderr);
    for args in [
        vec!["export", &p, "--to", "markdown", "-o", "-"],
        vec!["export", &p, "--to", "html", "-o", "-"],
        vec!["convert", &p, "--to", "json", "-o", "-"],
    ] {
        let r = env.run(&args);
        assert_eq!(r.status, 0, "{args:?}: {}", r.stderr);
        assert!(
            !env.home().join("-").exists(),
            "{args:?} wrote a file named '-'"
        );
        assert!(
            r.stdout.contains("list the files"),
            "{args:?}: {}",
            r.stdout
        );
    }
    let md = env.run(&["export", &p, "--to", "markdown", "-o", "-"]);
    assert_eq!(md.stdout, to_file.stdout);
    // `./-` still names a file.
    let r = env.run(&["export", &p, "--to", "markdown", "-o", "./-"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(env.home().join("-")).unwrap(),
        to_file.stdout
    );
}

#[test]
fn validate_of_a_folder_without_sessions_says_so_and_fails() {
    let env = TestEnv::new();
    let empty = env.home().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    env.write("notes/readme.txt", b"not a session\n");
    for dir in [empty, env.home().join("notes")] {
        let d = dir.display().to_string();
        let r = env.run(&["validate", &d]);
        assert_eq!(r.status, 1, "{d}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains(&d) && r.stdout.contains("holds no session file"),
            "{d}: {}",
            r.stdout
        );
        let j = env.run(&["validate", &d, "--json"]);
        assert_eq!(j.status, 1);
        let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
        assert_eq!(v[0]["ok"], false, "{v}");
    }
}

#[test]
fn export_to_an_unknown_target_names_the_known_ones() {
    let (env, p) = env_with_session();
    let r = env.run(&["export", &p, "--to", "yaml"]);
    // A usage error, like clap's own.
    assert_eq!(r.status, 2);
    assert!(
        r.stderr
            .contains("unknown format \"yaml\"; known formats: markdown, text, html, pi, claude"),
        "{}",
        r.stderr
    );
}

#[test]
fn convert_to_json_is_lossless() {
    let (env, p) = env_with_session();
    let r = env.run(&["convert", &p, "--to", "json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("json: everything carried over"),
        "{}",
        r.stderr
    );
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::from_str::<serde_json::Value>(SESSION).unwrap()
    );
}

#[test]
fn validate_reports_file_and_line() {
    let (env, p) = env_with_session();
    let ok = env.run(&["validate", &p]);
    assert_eq!(ok.status, 0, "{}", ok.stderr);
    assert!(
        ok.stdout
            .contains("demo.json: ok (json, 0 errors, 0 warnings)"),
        "{}",
        ok.stdout
    );
    let broken = env.write(
        "broken.json",
        b"{\"meta\": {\"id\": \"x\", \"agent\": \"agentlog\"},\n \"entries\": [\n  {\"id\": 5}\n]}",
    );
    let r = env.run(&["validate", "--from", "json", &broken.display().to_string()]);
    assert_eq!(r.status, 1);
    assert!(
        env.redact(&r.stdout)
            .contains("[HOME]/broken.json:3: error[invalid]: not an agentlog session JSON"),
        "{}",
        r.stdout
    );
}

#[test]
fn validate_json_report() {
    let (env, p) = env_with_session();
    let r = env.run(&["validate", "--json", &p, "missing.jsonl"]);
    assert_eq!(r.status, 1);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v[0]["ok"], true);
    assert_eq!(v[1]["ok"], false);
    assert_eq!(v[1]["diagnostics"][0]["code"], "unreadable");
}

#[test]
fn tree_marks_branches_labels_and_the_leaf() {
    let (env, p) = env_with_session();
    let r = env.run(&["tree", &p]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    insta::assert_snapshot!(r.stdout);
    let j = env.run(&["tree", &p, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(v["branch_points"], serde_json::json!(["t1"]));
    assert_eq!(v["leaf_id"], "l1");
}

#[test]
fn unknown_files_get_a_clear_error() {
    let env = TestEnv::new();
    let p = env.write("notes.txt", b"just some text\n");
    let r = env.run(&["show", &p.display().to_string()]);
    assert_eq!(r.status, 1);
    assert!(
        r.stderr.contains("not a session file agentlog recognises")
            && r.stderr
                .contains("hint: name the format with --from FORMAT"),
        "{}",
        r.stderr
    );
    let r = env.run(&["show", "/nonexistent/file.jsonl"]);
    assert_eq!(r.status, 1);
    assert!(r.stderr.contains("/nonexistent/file.jsonl"), "{}", r.stderr);
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    use std::io::Read;
    use std::process::Stdio;
    let env = TestEnv::new();
    let mut big = String::from("{\"meta\":{\"id\":\"b\",\"agent\":\"agentlog\"},\"entries\":[");
    for i in 0..20000 {
        if i > 0 {
            big.push(',');
        }
        big.push_str(&format!(
            "{{\"id\":\"e{i}\",\"parent_id\":{},\"kind\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"line {i}\"}}]}}",
            if i == 0 { "null".to_string() } else { format!("\"e{}\"", i - 1) }
        ));
    }
    big.push_str("]}");
    let p = env.write("big.json", big.as_bytes());
    let mut child = env
        .command(&["show", &p.display().to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn validate_a_directory_checks_the_sessions_below_it() {
    let env = TestEnv::new();
    env.write("sessions/a.json", SESSION.as_bytes());
    env.write("sessions/deep/b.json", SESSION.as_bytes());
    env.write("sessions/notes.txt", b"not a session\n");
    let r = env.run(&[
        "validate",
        &env.home().join("sessions").display().to_string(),
    ]);
    assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("2 files checked, 0 failed"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("notes.txt"), "{}", r.stdout);
}

#[test]
fn json_into_a_closed_pipe_exits_0_silently() {
    use std::io::Read;
    let env = TestEnv::new();
    let big = common::fixtures().join("seeds/pi-mono/large-session.jsonl");
    let big = big.display().to_string();
    for args in [
        vec!["show", big.as_str(), "--json"],
        vec!["convert", big.as_str(), "--to", "json"],
        vec!["export", big.as_str(), "--to", "json"],
    ] {
        let mut child = env
            .command(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Like `| head -c 10`: read a little, then close the pipe.
        let mut first = [0u8; 10];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
    }
}

#[cfg(unix)]
#[test]
fn doctor_summarizes_repeated_warnings_and_counts_files_one_way() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let src =
        std::fs::read(common::fixtures().join("native/claude/agentsview-valid_session.jsonl"))
            .unwrap();
    let torn =
        std::fs::read(common::fixtures().join("native/claude/agentsview-truncated.jsonl")).unwrap();
    for i in 0..6 {
        let p = env.write(&format!("s/{i}.jsonl"), &src);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let t = env.write("s/torn.jsonl", &torn);
    std::fs::set_permissions(&t, std::fs::Permissions::from_mode(0o600)).unwrap();
    let r = env.run(&["doctor", "s"]);
    assert_eq!(r.status, 1, "a torn tail fails: {}", r.stdout);
    assert_eq!(
        r.stdout.matches("warning[permissions]").count(),
        1,
        "one summary, not a line per file:\n{}",
        r.stdout
    );
    assert!(r.stdout.contains("permissions on 6 files"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("7 files checked: 0 ok, 6 with warnings, 1 to repair"),
        "{}",
        r.stdout
    );
    let one = env.run(&["doctor", "s/0.jsonl"]);
    assert_eq!(
        one.status, 0,
        "a warning is not a failure for one file either"
    );
    assert!(
        one.stdout.contains("1 file checked: 0 ok, 1 with warnings"),
        "{}",
        one.stdout
    );
    let fixed = env.run(&["doctor", "--repair", "s/torn.jsonl"]);
    assert_eq!(fixed.status, 0, "{}", fixed.stdout);
    assert!(
        !fixed.stdout.contains("earlier repair"),
        "the repair of this run is not an earlier one:\n{}",
        fixed.stdout
    );
    assert!(fixed.stdout.contains("1 repaired"), "{}", fixed.stdout);
}

#[test]
fn seed_specstory_ls_lists_a_projects_transcripts_newest_first() {
    let env = TestEnv::new();
    let hist = env.home().join("proj/.specstory/history");
    std::fs::create_dir_all(&hist).unwrap();
    let src = common::fixtures().join("seeds/specstory");
    for name in [
        "2026-05-20_09-00-00Z-list-the-workspace.md",
        "2026-05-23_09-00-00Z-run-the-linter.md",
        "2026-05-21_09-00-00Z-show-git-status.md",
    ] {
        std::fs::copy(src.join(name), hist.join(name)).unwrap();
    }
    std::fs::write(hist.join("broken.md"), b"not a transcript").unwrap();
    let proj = env.home().join("proj").display().to_string();
    let ls = env.run(&["seed", "specstory", "ls", "--dir", &proj]);
    assert_eq!(ls.status, 0, "{}", ls.stderr);
    let lines: Vec<&str> = ls.stdout.lines().collect();
    assert!(lines[0].starts_with("created "), "a header: {}", ls.stdout);
    assert_eq!(lines.len(), 4, "{}", ls.stdout);
    assert!(
        lines[1].starts_with("2026-05-23") && lines[3].starts_with("2026-05-20"),
        "newest first:\n{}",
        ls.stdout
    );
    assert!(
        ls.stderr.contains("broken.md") && ls.stderr.contains("skipped"),
        "{}",
        ls.stderr
    );
    let json = env.run(&["seed", "specstory", "ls", "--dir", &proj, "--json"]);
    assert_eq!(json.status, 0, "{}", json.stderr);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 3, "{v}");
    assert!(v[0]["exchanges"].as_u64().unwrap() > 0, "{v}");
    // The current directory by default; a project without SpecStory is empty.
    let mut c = env.command(&["seed", "specstory", "ls"]);
    let out = c.current_dir(env.home().join("proj")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), ls.stdout);
    let none = env.run(&["seed", "specstory", "ls"]);
    assert_eq!(none.status, 0, "{}", none.stderr);
    assert!(
        none.stderr.contains("no SpecStory sessions"),
        "{}",
        none.stderr
    );
}

#[test]
fn seed_commands_share_one_verb_set_and_take_id_prefixes() {
    let env = TestEnv::new();
    let src = std::fs::read_to_string(
        common::fixtures().join("seeds/jido_code/persistence-format-example.json"),
    )
    .unwrap();
    let dir = env.home().join("jido");
    let project = env.home().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    for (id, name) in [
        ("550e8400-e29b-41d4-a716-446655440000", "first"),
        ("550e8400-ffff-41d4-a716-446655440001", "second"),
        ("77aa0000-e29b-41d4-a716-446655440002", "third"),
    ] {
        let doc = src
            .replacen("550e8400-e29b-41d4-a716-446655440000", id, 1)
            .replacen("\"my-project\"", &format!("\"{name}\""), 1)
            .replace(
                "/home/user/projects/my-project",
                &project.display().to_string(),
            );
        env.write(&format!("jido/{id}.json"), doc.as_bytes());
    }
    let d = dir.display().to_string();
    let ls = env.run(&["seed", "jido", "ls", "--dir", &d]);
    assert_eq!(ls.status, 0, "{}", ls.stderr);
    let lines: Vec<&str> = ls.stdout.lines().collect();
    assert!(lines[0].starts_with("closed "), "a header: {}", ls.stdout);
    assert_eq!(lines.len(), 4, "{}", ls.stdout);
    let col = |l: &str| l.find("550e8400").or_else(|| l.find("77aa0000"));
    let ids: Vec<_> = lines[1..].iter().map(|l| col(l)).collect();
    assert!(
        ids.iter().all(|c| c.is_some() && *c == ids[0]),
        "ids in one column:\n{}",
        ls.stdout
    );
    // The old verb still works.
    assert_eq!(
        env.run(&["seed", "jido", "list", "--dir", &d]).stdout,
        ls.stdout
    );
    // A unique prefix names a session; an ambiguous one lists the candidates.
    let show = env.run(&["seed", "jido", "show", "77aa", "--dir", &d]);
    assert_eq!(show.status, 0, "{}", show.stderr);
    assert!(show.stdout.contains("third"), "{}", show.stdout);
    let amb = env.run(&["seed", "jido", "show", "550e8400", "--dir", &d]);
    assert_eq!(amb.status, 1);
    assert!(
        amb.stderr.contains("ambiguous") && amb.stderr.contains("550e8400-ffff"),
        "{}",
        amb.stderr
    );
    let rm = env.run(&["seed", "jido", "rm", "550e8400-f", "--dir", &d]);
    assert_eq!(rm.status, 0, "{}", rm.stderr);
    assert!(!dir
        .join("550e8400-ffff-41d4-a716-446655440001.json")
        .exists());
    assert!(dir
        .join("550e8400-e29b-41d4-a716-446655440000.json")
        .exists());
    // codelia and acpx list with `ls` too.
    for system in ["codelia", "acpx"] {
        let r = env.run(&["seed", system, "ls", "--dir", &d]);
        assert_eq!(r.status, 0, "{system}: {}", r.stderr);
    }
}

#[test]
fn append_writes_entries_from_standard_input_and_acknowledges_their_ids() {
    use std::io::Write as _;
    let env = TestEnv::new();
    let file = env.home().join("s/a.jsonl");
    let f = file.display().to_string();
    let mut child = env
        .command(&["append", &f])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"id\":\"a\"}\nnot json\n{\"uuid\":\"b\"}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "an invalid line fails the run");
    assert_eq!(stdout, "a\nb\n");
    assert!(stderr.contains("<stdin>:2: not valid JSON"), "{stderr}");
    assert!(
        stderr.contains("2 entries appended, 1 invalid input line not written"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\"id\":\"a\"}\n{\"uuid\":\"b\"}\n"
    );
}

#[test]
fn converting_to_a_transcript_points_at_export_and_is_a_usage_error() {
    let (env, path) = env_with_session();
    let r = env.run(&["convert", &path, "--to", "html"]);
    assert_eq!(r.status, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("agentlog export --to html"),
        "{}",
        r.stderr
    );
}

#[test]
fn an_error_says_each_cause_once() {
    let (env, p) = env_with_session();
    let out = env.write("taken.json", b"mine");
    let r = env.run(&["convert", &p, "--to", "json", "-o", out.to_str().unwrap()]);
    assert_eq!(r.status, 1, "{}", r.stderr);
    assert_eq!(
        r.stderr.matches("already exists").count(),
        1,
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("--force replaces the file"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"mine");
}
