#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What a listing shows first (the user's conversations, the headless runs
//! and subagent transcripts counted) and the drift alarm, as every front
//! end gets them from the library.

use agentlog_api::{drift, list, refresh, ListOptions, Settings, Source};
use agentlog_model::SessionKind;
use std::path::{Path, PathBuf};

/// Files the real CLIs wrote against the mock model (crates/harness).
const HARNESS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../harness/fixtures");

fn put(home: &Path, fixture: &str, to: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let p = home.join(to);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let text = std::fs::read_to_string(Path::new(HARNESS).join(fixture)).unwrap();
    let mut out = String::new();
    for l in text.lines() {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        edit(&mut v);
        out.push_str(&serde_json::to_string(&v).unwrap());
        out.push('\n');
    }
    std::fs::write(&p, out).unwrap();
    p
}

/// A home with one Claude Code conversation, a `claude -p` run, a Claude
/// subagent transcript (shown on its parent's page, never listed), a
/// `codex exec` run and a Codex subagent.
fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let p = ".claude/projects/-tmp-project";
    put(
        h,
        "claude-2.1.330.jsonl",
        &format!("{p}/6215620c-6219-453f-a09e-7ac5800146b1.jsonl"),
        |v| {
            if v.get("entrypoint").is_some() {
                v["entrypoint"] = "cli".into();
            }
        },
    );
    put(
        h,
        "claude-2.1.330.jsonl",
        &format!("{p}/7215620c-6219-453f-a09e-7ac5800146b1.jsonl"),
        |_| {},
    );
    put(
        h,
        "claude-2.1.330.jsonl",
        &format!("{p}/6215620c-6219-453f-a09e-7ac5800146b1/subagents/agent-a1b2.jsonl"),
        |_| {},
    );
    let day = ".codex/sessions/2026/11/23";
    put(
        h,
        "codex-0.169.0.jsonl",
        &format!("{day}/rollout-2026-11-23T21-39-33-01a20a59-9840-78d0-b5e2-d115a1804321.jsonl"),
        |_| {},
    );
    put(
        h,
        "subagent-codex-0.169.0.jsonl",
        &format!("{day}/rollout-2026-11-25T18-28-20-01a213f7-3f6c-7f83-a32e-0794ef5011d6.jsonl"),
        |_| {},
    );
    home
}

fn settings(home: &Path) -> Settings {
    let mut s = Settings::with_home(home);
    s.index_path = home.join("index.sqlite");
    s
}

#[test]
fn a_listing_shows_conversations_and_counts_the_others_from_files_and_index() {
    let home = home();
    let settings = settings(home.path());
    for source in [Source::Files, Source::Index] {
        let opts = ListOptions {
            source,
            ..ListOptions::default()
        };
        let l = list::list(&settings, &opts, &|_, _| {}).unwrap();
        let kinds: Vec<SessionKind> = l.sessions.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, vec![SessionKind::Conversation], "{source:?}");
        assert_eq!((l.matched, l.hidden), (1, 3), "{source:?}");
        assert!(l.emptied_by.is_none());

        let all = list::list(
            &settings,
            &ListOptions {
                all_kinds: true,
                ..opts.clone()
            },
            &|_, _| {},
        )
        .unwrap();
        let mut kinds: Vec<SessionKind> = all.sessions.iter().map(|s| s.kind).collect();
        kinds.sort();
        use SessionKind::*;
        assert_eq!(
            kinds,
            vec![Conversation, Headless, Headless, Subagent],
            "{source:?}"
        );
        assert_eq!(all.hidden, 0);

        // Only the others of an agent are counted when it is asked for;
        // a limit cuts the conversations, not the count.
        let codex = list::list(
            &settings,
            &ListOptions {
                agents: vec!["codex".into()],
                ..opts.clone()
            },
            &|_, _| {},
        )
        .unwrap();
        assert_eq!(
            (codex.sessions.len(), codex.matched, codex.hidden),
            (0, 0, 2)
        );
        assert!(codex.emptied_by.is_none(), "not 'no sessions found'");
        let limited = list::list(
            &settings,
            &ListOptions {
                limit: Some(0),
                all_kinds: true,
                ..opts.clone()
            },
            &|_, _| {},
        )
        .unwrap();
        assert_eq!((limited.sessions.len(), limited.matched), (0, 4));
    }
}

#[test]
fn the_drift_alarm_is_given_once_and_doctor_lists_it_all() {
    let home = home();
    let settings = settings(home.path());
    // Claude Code "2.9.0" renamed `cwd` and writes a record type of its own.
    put(
        home.path(),
        "claude-2.1.330.jsonl",
        ".claude/projects/-tmp-project/8215620c-6219-453f-a09e-7ac5800146b1.jsonl",
        |v| {
            v["version"] = "2.9.0".into();
            if v["type"] == "mode" {
                v["type"] = "session-mode".into();
            }
            if let Some(cwd) = v.as_object_mut().unwrap().remove("cwd") {
                v["workDir"] = cwd;
            }
        },
    );
    let (mut index, _) = refresh::refreshed(&settings, &mut |_| {}).unwrap();
    let alarms = drift::tell(&mut index).unwrap();
    assert_eq!(alarms.len(), 1, "{alarms:?}");
    let a = &alarms[0];
    assert_eq!(
        (a.format.as_str(), a.version.as_deref(), a.sessions),
        ("claude", Some("2.9.0"), 1)
    );
    let m = a.message();
    for want in [
        "Claude Code 2.9.0",
        "1 session",
        "`user.workDir`",
        "record type `session-mode`",
        "listed and kept",
    ] {
        assert!(m.contains(want), "{want:?} in {m}");
    }
    // Said once: not again, neither now nor after the next refresh.
    assert!(drift::tell(&mut index).unwrap().is_empty());
    drop(index);
    let (mut index, _) = refresh::refreshed(&settings, &mut |_| {}).unwrap();
    assert!(drift::tell(&mut index).unwrap().is_empty());
    // The session is listed all the same (a headless run: with every kind).
    let l = list::list(
        &settings,
        &ListOptions {
            source: Source::Index,
            all_kinds: true,
            ..ListOptions::default()
        },
        &|_, _| {},
    )
    .unwrap();
    assert!(l.sessions.iter().any(|s| s.id.starts_with("8215620c")));
    // What doctor lists: all of it, told or not.
    let report = drift::report(&settings).unwrap();
    assert_eq!(report, alarms);
}
