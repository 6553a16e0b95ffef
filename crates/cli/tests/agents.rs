//! The commands on the agents read beyond the first five, with the files
//! their real CLIs wrote (crates/formats/tests/fixtures), laid out where each
//! agent keeps them in a temporary HOME.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TestEnv;
use std::path::{Path, PathBuf};

fn agent_fixtures() -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../formats/tests/fixtures"
    ))
    .to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), t).unwrap();
        }
    }
}

/// A HOME with the real Copilot and OpenCode sessions in their places.
fn home_with_agents() -> TestEnv {
    let env = TestEnv::new();
    copy_dir(
        &agent_fixtures().join("copilot/1.0.102/session-state"),
        &env.home().join(".copilot/session-state"),
    );
    copy_dir(
        &agent_fixtures().join("opencode/1.18.33"),
        &env.home().join(".local/share/opencode"),
    );
    copy_dir(
        &agent_fixtures().join("cline/3.0.65/sessions"),
        &env.home().join(".cline/data/sessions"),
    );
    copy_dir(
        &agent_fixtures().join("aider/0.86.2"),
        &env.home().join("projects/hello"),
    );
    // Mistral Vibe: a 3.x store session and two 2.x sessions, in one place.
    for version in ["3.0.2", "2.20.0"] {
        copy_dir(
            &agent_fixtures().join("vibe").join(version),
            &env.home().join(".vibe"),
        );
    }
    copy_dir(
        &agent_fixtures().join("kimi/1.51.0"),
        &env.home().join(".kimi"),
    );
    copy_dir(
        &agent_fixtures().join("continue/1.5.47/sessions"),
        &env.home().join(".continue/sessions"),
    );
    copy_dir(
        &agent_fixtures().join("openhands/0.62.0/sessions"),
        &env.home().join(".openhands/sessions"),
    );
    // A Crush project under the home directory.
    copy_dir(
        &agent_fixtures().join("crush/mcpfier-2025-08"),
        &env.home().join("mcpfier"),
    );
    // An Amp thread in Amp's store, and a Cursor plain-text transcript.
    copy_dir(
        &agent_fixtures().join("amp/export-0.0.1785170481"),
        &env.home().join(".local/share/amp/threads"),
    );
    copy_dir(
        &agent_fixtures().join("cursor-txt/projects"),
        &env.home().join(".cursor/projects"),
    );
    env
}

#[test]
fn formats_lists_at_least_fifteen_agents() {
    let env = TestEnv::new();
    let r = env.run(&["formats"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    for name in [
        "copilot", "opencode", "kilo", "qwen", "cline", "aider", "vibe",
    ] {
        assert!(
            r.stdout.lines().any(|l| l.starts_with(name)),
            "{name}: {}",
            r.stdout
        );
    }
    let agents: std::collections::BTreeSet<String> = agentlog_formats::registry::all()
        .iter()
        .map(|f| f.agent().as_str().to_string())
        .collect();
    assert!(agents.len() >= 15, "{agents:?}");
}

#[test]
fn ls_show_search_stats_find_the_new_agents() {
    let env = home_with_agents();
    let ls = env.run(&["ls", "--json"]);
    assert_eq!(ls.status, 0, "{}", ls.stderr);
    for want in [
        "\"copilot\"",
        "\"opencode\"",
        "b034d159-7f8a-4e2f-b736-4b964fdc4bb1",
        "ses_df5decaf8ffeAqX67SjvHMne1P",
        "ses_df5de65a0ffeqHrm9IYOzUiHuc",
        "\"vibe\"",
        "2cd12d6f-ac43-862e-db7f-a994b201930f",
        "60a7f5cd-b232-5dc0-c15f-4d298df9ae1f",
        "b5f390ef-27ee-bd65-f490-eab616928679",
        "\"kimi\"",
        "37a91d42-cd7b-40eb-93cf-8db96f4297a4",
        "\"continue\"",
        "2affd20c-3f9d-4c27-ac2a-0f8167efecee",
        "\"openhands\"",
        "62b9a83c-90b6-44-31c975b237b53dc",
        "\"crush\"",
        "5ab22793-cccf-4152-bd86-0961dbffd0f6",
        "\"amp\"",
        "T-019fa4db-29cf-70c9-8d9b-81524df70e52",
        "9b2f3c1e-5d4a-4e6b-8c7d-1a2b3c4d5e6f",
    ] {
        assert!(
            ls.stdout.contains(want),
            "{want} missing from {}",
            ls.stdout
        );
    }
    let show = env.run(&["show", "ses_df5decaf8ffeAqX67SjvHMne1P"]);
    assert_eq!(show.status, 0, "{}", show.stderr);
    assert!(show
        .stdout
        .contains("The user wants a listing; I will run ls."));
    assert!(show.stdout.contains("The subagent counted 1 file."));
    let show = env.run(&["show", "b034d159"]);
    assert_eq!(show.status, 0, "{}", show.stderr);
    assert!(show.stdout.contains("Second turn answer from mock."));
    let show = env.run(&["show", "2cd12d6f"]);
    assert_eq!(show.status, 0, "{}", show.stderr);
    for want in [
        "thinking: I should look at the files first.",
        "→ bash",
        "Nothing else to add.",
    ] {
        assert!(show.stdout.contains(want), "{want}: {}", show.stdout);
    }
    let search = env.run(&["search", "README"]);
    assert_eq!(search.status, 0, "{}", search.stderr);
    assert!(search.stdout.contains("b034d159"), "{}", search.stdout);
    assert!(search.stdout.contains("2cd12d6f"), "{}", search.stdout);
    assert!(search.stdout.contains("37a91d42"), "{}", search.stdout);
    assert!(search.stdout.contains("2affd20c"), "{}", search.stdout);
    assert!(search.stdout.contains("62b9a83c"), "{}", search.stdout);
    assert!(search.stdout.contains("9b2f3c1e"), "{}", search.stdout);
    let search = env.run(&["search", "elicitation"]);
    assert!(search.stdout.contains("T-019fa4db"), "{}", search.stdout);
    let show = env.run(&["show", "T-019fa4db"]);
    assert_eq!(show.status, 0, "{}", show.stderr);
    for want in ["Filesystem tool exercise", "→ apply_patch", "→ Task"] {
        assert!(show.stdout.contains(want), "{want}: {}", show.stdout);
    }
    let stats = env.run(&["stats", "--json"]);
    assert_eq!(stats.status, 0, "{}", stats.stderr);
    let v: serde_json::Value = serde_json::from_str(&stats.stdout).unwrap();
    let text = v.to_string();
    // 3 Copilot responses and 4 + 1 OpenCode responses (parent and subagent).
    assert!(text.contains("mock-model"), "{text}");
}

#[test]
fn export_and_convert_the_new_agents() {
    let env = home_with_agents();
    let md = env.run(&[
        "export",
        "ses_df5decaf8ffeAqX67SjvHMne1P",
        "--to",
        "markdown",
    ]);
    assert_eq!(md.status, 0, "{}", md.stderr);
    assert!(md.stdout.contains("What files are here?"));
    let out = env.home().join("copied.jsonl");
    let conv = env.run(&[
        "convert",
        "ses_df5decaf8ffeAqX67SjvHMne1P",
        "--to",
        "copilot",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(conv.status, 0, "{}", conv.stderr);
    // What was written reads back with the same conversation.
    let show = env.run(&["show", out.to_str().unwrap()]);
    assert_eq!(show.status, 0, "{}", show.stderr);
    assert!(
        show.stdout.contains("The subagent counted 1 file."),
        "{}",
        show.stdout
    );
    assert!(show.stdout.contains("→ task"), "{}", show.stdout);
    let conv = env.run(&[
        "convert",
        "b034d159",
        "--to",
        "claude",
        "-o",
        env.home().join("c.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(conv.status, 0, "{}", conv.stderr);
    // A Vibe 3.x session, exported and converted to Claude Code.
    let md = env.run(&["export", "2cd12d6f", "--to", "markdown"]);
    assert_eq!(md.status, 0, "{}", md.stderr);
    assert!(md.stdout.contains("Nothing else to add."), "{}", md.stdout);
    let out = env.home().join("from-vibe.jsonl");
    let conv = env.run(&[
        "convert",
        "60a7f5cd",
        "--to",
        "claude",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(conv.status, 0, "{}", conv.stderr);
    let show = env.run(&["show", out.to_str().unwrap()]);
    assert_eq!(show.status, 0, "{}", show.stderr);
    for want in [
        "→ bash",
        "stdout: README",
        "There is one file here: README.",
    ] {
        assert!(show.stdout.contains(want), "{want}: {}", show.stdout);
    }
}

#[test]
fn validate_drift_names_an_unknown_record_type_and_field() {
    let env = TestEnv::new();
    let real =
        std::fs::read_to_string(agent_fixtures().join(
            "copilot/1.0.102/session-state/b034d159-7f8a-4e2f-b736-4b964fdc4bb1/events.jsonl",
        ))
        .unwrap();
    // A later version adds an event type and a field of user messages.
    let mut planted = real.replace(
        "\"copilotVersion\":\"1.0.102\"",
        "\"copilotVersion\":\"9.0.0\"",
    );
    planted = planted.replacen(
        "\"content\":\"What files are here?\"",
        "\"content\":\"What files are here?\",\"voiceInput\":true",
        1,
    );
    planted.push_str(r#"{"type":"session.hologram","data":{"x":1},"id":"zz","timestamp":"2026-11-23T20:40:00.000Z","parentId":null}"#);
    planted.push('\n');
    let path = env.write(".copilot/session-state/s1/events.jsonl", planted.as_bytes());
    let r = env.run(&["validate", "--drift", path.to_str().unwrap()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("copilot 9.0.0 (1 file): 2 unknown"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("unknown record type `session.hologram` x1"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("unknown field `user.message.voiceInput` x1"),
        "{}",
        r.stdout
    );
    // The real file of the verified version has nothing unknown.
    let real_path = env.write(".copilot/session-state/s2/events.jsonl", real.as_bytes());
    let r = env.run(&["validate", "--drift", real_path.to_str().unwrap()]);
    assert!(
        r.stdout
            .contains("copilot 1.0.102 (1 file): nothing unknown"),
        "{}",
        r.stdout
    );
    // With no file named, every session found is reported, per version.
    let r = env.run(&["validate", "--drift", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let versions: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["1.0.102", "9.0.0"]);
}

/// The files under `dir`, by path inside it.
fn files_in(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            let inner = files_in(&p);
            let name = PathBuf::from(p.file_name().unwrap());
            out.extend(inner.into_iter().map(|(q, b)| (name.join(q), b)));
        } else {
            out.push((
                PathBuf::from(p.file_name().unwrap()),
                std::fs::read(&p).unwrap(),
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn openhands_conversations_are_written_as_folders() {
    let env = home_with_agents();
    let conversations = env.home().join(".openhands/conversations");
    copy_dir(
        &agent_fixtures().join("openhands/1.2.1/conversations"),
        &conversations,
    );
    let source = conversations.join("7f23a88b3ea3474ba9742166c4f14431");
    let events = source.join("events");
    let events = events.to_str().unwrap();
    // `agentlog CMD SESSION --to openhands -o OUT`, and `extra`.
    let write = |cmd: &str, session: &str, out: &Path, extra: &[&str]| {
        let mut args = vec![
            cmd,
            session,
            "--to",
            "openhands",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        env.run(&args)
    };
    // A folder is not a stream.
    let r = env.run(&["convert", events, "--to", "openhands"]);
    assert_ne!(r.status, 0);
    assert!(
        r.stderr.contains("give the folder to write with -o DIR"),
        "{}",
        r.stderr
    );
    // Written back into its own format: the same files, byte for byte.
    let out = env.home().join("out/conv");
    let r = write("convert", events, &out, &[]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stderr.contains("everything carried over"), "{}", r.stderr);
    assert_eq!(files_in(&out), files_in(&source));
    // Never over a folder already there.
    let opencode = "ses_df5decaf8ffeAqX67SjvHMne1P";
    let r = write("convert", opencode, &out, &[]);
    assert_ne!(r.status, 0);
    assert!(
        r.stderr.contains("--force replaces the folder"),
        "{}",
        r.stderr
    );
    assert_eq!(files_in(&out), files_in(&source));
    // --force replaces a session's folder, never any other folder.
    let mine = env.write("src/main.rs", b"fn main() {}");
    let src = mine.parent().unwrap();
    let r = write("convert", opencode, src, &["--force"]);
    assert_ne!(r.status, 0);
    assert!(
        r.stderr.contains("not a openhands session folder"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&mine).unwrap(), b"fn main() {}");
    // Unless told to: then another agent's session, whole.
    let r = write("convert", opencode, &out, &["--force"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(!out.join("base_state.json").exists());
    assert_eq!(
        std::fs::read_dir(env.home().join("out")).unwrap().count(),
        1,
        "no folder left beside it"
    );
    let show = env.run(&["show", out.to_str().unwrap()]);
    assert_eq!(show.status, 0, "{}", show.stderr);
    for want in [
        "What files are here?",
        "→ task",
        "The subagent counted 1 file.",
    ] {
        assert!(show.stdout.contains(want), "{want}: {}", show.stdout);
    }
    // export writes the same folder.
    let exported = env.home().join("out/exported");
    let r = write("export", opencode, &exported, &[]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(files_in(&exported), files_in(&out));
}
