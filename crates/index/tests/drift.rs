#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What the index keeps of each file beside its session: what the session
//! is (a conversation, a headless run, a subagent's transcript) and what
//! its reader did not know (the drift alarm's store), both found while the
//! update reads the file.

use agentlog_formats::discover::Found;
use agentlog_formats::drift::DriftKind;
use agentlog_index::{Index, ListParams, ListingQuery};
use agentlog_model::SessionKind;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Files the real CLIs wrote against the mock model (crates/harness).
const HARNESS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../harness/fixtures");

fn copy(dir: &Path, name: &str, to: &str) -> PathBuf {
    let p = dir.join(to);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::copy(Path::new(HARNESS).join(name), &p).unwrap();
    p
}

/// Rewrites each JSON line of `path` with `f`.
fn edit(path: &Path, f: impl Fn(usize, &mut serde_json::Value)) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        f(i, &mut v);
        out.push_str(&serde_json::to_string(&v).unwrap());
        out.push('\n');
    }
    std::fs::write(path, out).unwrap();
}

fn found(path: &Path, format: &'static str) -> Found {
    Found {
        path: path.to_path_buf(),
        format,
    }
}

#[test]
fn each_session_is_a_conversation_a_headless_run_or_a_subagents_from_what_its_file_says() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // `claude -p` (entrypoint sdk-cli), `codex exec` (source exec), a Codex
    // subagent (source {subagent}), a Gemini subagent (kind subagent), a
    // Gemini main chat, a pi session.
    let files = vec![
        found(&copy(d, "claude-2.1.330.jsonl", "c/p/1.jsonl"), "claude"),
        found(&copy(d, "codex-0.169.0.jsonl", "x/1.jsonl"), "codex"),
        found(
            &copy(d, "subagent-codex-0.169.0.jsonl", "x/2.jsonl"),
            "codex",
        ),
        found(
            &copy(d, "subagent-gemini-0.61.0.jsonl", "g/chats/p/2.jsonl"),
            "gemini",
        ),
        found(
            &copy(d, "gemini-0.61.0.jsonl", "g/chats/session-1.jsonl"),
            "gemini",
        ),
        found(&copy(d, "pi-0.73.1.jsonl", "pi/1.jsonl"), "pi"),
    ];
    // The same Claude transcript as a conversation (entrypoint cli), and
    // filed as a subagent's.
    let cli = copy(d, "claude-2.1.330.jsonl", "c/p/2.jsonl");
    edit(&cli, |_, v| {
        if v.get("entrypoint").is_some() {
            v["entrypoint"] = "cli".into();
        }
    });
    let sub = copy(d, "claude-2.1.330.jsonl", "c/p/3/subagents/agent-a1.jsonl");
    let mut files = files;
    files.push(found(&cli, "claude"));
    files.push(found(&sub, "claude"));
    let (mut ix, _) = Index::open(&d.join("ix.sqlite")).unwrap();
    ix.update(&files, &mut |_| {}).unwrap();
    let kinds: std::collections::BTreeMap<String, SessionKind> = ix
        .sessions(&ListParams::default())
        .unwrap()
        .into_iter()
        .map(|s| {
            (
                s.path
                    .strip_prefix(&*d.to_string_lossy())
                    .unwrap()
                    .to_string(),
                s.kind,
            )
        })
        .collect();
    use SessionKind::*;
    let want: std::collections::BTreeMap<String, SessionKind> = [
        ("/c/p/1.jsonl", Headless),
        ("/c/p/2.jsonl", Conversation),
        ("/c/p/3/subagents/agent-a1.jsonl", Subagent),
        ("/x/1.jsonl", Headless),
        ("/x/2.jsonl", Subagent),
        ("/g/chats/p/2.jsonl", Subagent),
        ("/g/chats/session-1.jsonl", Conversation),
        ("/pi/1.jsonl", Conversation),
    ]
    .into_iter()
    .map(|(p, k)| (p.to_string(), k))
    .collect();
    assert_eq!(kinds, want);

    // A listing of conversations leaves the others out, and counts them.
    let q = ListingQuery {
        formats: vec![
            "claude".into(),
            "codex".into(),
            "gemini".into(),
            "pi".into(),
        ],
        conversations_only: true,
        ..Default::default()
    };
    let mut listed = Vec::new();
    let n = ix
        .visit_listing(&q, &mut |l| listed.push(l.path.to_string()))
        .unwrap();
    assert_eq!((n, listed.len()), (3, 3), "{listed:?}");
    let limited = ix
        .visit_listing(
            &ListingQuery {
                limit: Some(1),
                ..q.clone()
            },
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(
        limited, 3,
        "counted beyond the limit among conversations only"
    );
    let every = ix
        .visit_listing(
            &ListingQuery {
                conversations_only: false,
                ..q
            },
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(every, 8);
    // A page of the browser too.
    let page = ix
        .session_page(&agentlog_index::PageParams {
            conversations_only: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!((page.total, page.others, page.sessions.len()), (3, 5, 3));
}

#[test]
fn what_a_reader_does_not_know_is_stored_per_file_and_told_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Claude Code "2.9.0": a new record type and a renamed field.
    let claude = copy(d, "claude-2.1.330.jsonl", "c/p/1.jsonl");
    edit(&claude, |i, v| {
        v["version"] = "2.9.0".into();
        if let Some(cwd) = v.as_object_mut().unwrap().remove("cwd") {
            v["workingDirectory"] = cwd;
        }
        if i == 2 {
            *v = serde_json::json!({"type": "future-event", "uuid": "f1", "sessionId": v["sessionId"], "version": "2.9.0"});
        }
    });
    let claude2 = copy(d, "claude-2.1.330.jsonl", "c/p/2.jsonl");
    edit(&claude2, |_, v| {
        v["version"] = "2.9.0".into();
        if let Some(cwd) = v.as_object_mut().unwrap().remove("cwd") {
            v["workingDirectory"] = cwd;
        }
    });
    // Codex: a new line type.
    let codex = copy(d, "codex-0.169.0.jsonl", "x/1.jsonl");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&codex)
        .unwrap();
    writeln!(
        f,
        r#"{{"timestamp":"2026-11-23T21:39:40.000Z","type":"world_event","payload":{{"x":1}}}}"#
    )
    .unwrap();
    drop(f);
    // Gemini and pi: a top-level layout the readers cannot read.
    let gemini = d.join("g/chats/session-9.jsonl");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    std::fs::write(
        &gemini,
        "{\"format\":\"chat-v2\",\"conversation\":{\"turns\":[]}}\n",
    )
    .unwrap();
    let pi = d.join("pi/9.jsonl");
    std::fs::create_dir_all(pi.parent().unwrap()).unwrap();
    std::fs::write(&pi, "{\"kind\":\"pi-session\",\"v\":4,\"items\":[]}\n").unwrap();
    // A file no reader can read at all.
    let broken = d.join("pi/broken.jsonl");
    std::fs::write(&broken, "PI SESSION v5\nbinary follows\n").unwrap();
    let files = vec![
        found(&claude, "claude"),
        found(&claude2, "claude"),
        found(&codex, "codex"),
        found(&gemini, "gemini"),
        found(&pi, "pi"),
        found(&broken, "pi"),
    ];
    let (mut ix, _) = Index::open(&d.join("ix.sqlite")).unwrap();
    let r = ix.update(&files, &mut |_| {}).unwrap();
    assert_eq!(r.failed, 1, "{r:?}");
    // The sessions are listed all the same (the unreadable file among the
    // failed files).
    assert_eq!(ix.sessions(&ListParams::default()).unwrap().len(), 5);
    let rows = ix.drift().unwrap();
    type Row = (String, Option<String>, DriftKind, String, u64);
    let got: std::collections::BTreeSet<Row> = rows
        .iter()
        .filter_map(|r| {
            Some((
                r.format.clone(),
                r.version.clone(),
                r.kind?,
                r.name.clone(),
                r.sessions,
            ))
        })
        .collect();
    let row = |f: &str, v: Option<&str>, k: DriftKind, n: &str, s: u64| -> Row {
        (f.into(), v.map(String::from), k, n.into(), s)
    };
    use agentlog_formats::drift::LAYOUT;
    use DriftKind::{Field, Layout, RecordType};
    let want: std::collections::BTreeSet<Row> = [
        row("claude", Some("2.9.0"), Field, "user.workingDirectory", 2),
        row(
            "claude",
            Some("2.9.0"),
            Field,
            "assistant.workingDirectory",
            2,
        ),
        row("claude", Some("2.9.0"), RecordType, "future-event", 1),
        row("codex", Some("0.169.0"), RecordType, "world_event", 1),
        row("gemini", None, Field, "session.conversation", 1),
        row("gemini", None, Field, "session.format", 1),
        row("gemini", None, Layout, LAYOUT, 1),
        row("pi", None, Layout, LAYOUT, 1),
        row("pi", None, RecordType, "agentlog:lines", 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
    let unreadable: Vec<&str> = rows
        .iter()
        .filter(|r| r.kind.is_none())
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(unreadable, vec![broken.to_str().unwrap()]);

    // Told once: everything the first time, nothing the next.
    let told = ix.drift_to_tell().unwrap();
    assert_eq!(told.len(), rows.len());
    assert!(ix.drift_to_tell().unwrap().is_empty());
    assert!(ix.drift().unwrap().iter().all(|r| r.said));
    // Nor after another update that reads the files again.
    for f in &files {
        let t = std::fs::read(&f.path).unwrap();
        std::fs::write(&f.path, [t.as_slice(), b"\n"].concat()).unwrap();
    }
    ix.update(&files, &mut |_| {}).unwrap();
    assert!(ix.drift_to_tell().unwrap().is_empty());

    // Appended lines add to what a file had; something new is told.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&codex)
        .unwrap();
    writeln!(
        f,
        r#"{{"timestamp":"2026-11-23T21:39:41.000Z","type":"world_event","payload":{{"x":2}}}}"#
    )
    .unwrap();
    writeln!(f, r#"{{"timestamp":"2026-11-23T21:39:42.000Z","type":"response_item","payload":{{"type":"hologram","data":1}}}}"#).unwrap();
    drop(f);
    let r = ix.update(&files, &mut |_| {}).unwrap();
    assert_eq!(r.appended, 1, "{r:?}");
    let told = ix.drift_to_tell().unwrap();
    let names: Vec<(&str, Option<&str>)> = told
        .iter()
        .map(|r| (r.name.as_str(), r.version.as_deref()))
        .collect();
    assert_eq!(names, vec![("response_item.hologram", Some("0.169.0"))]);
    let world = ix
        .drift()
        .unwrap()
        .into_iter()
        .find(|r| r.name == "world_event")
        .unwrap();
    assert!(world.count >= 2, "{world:?}");

    // A file read again in full without what was new has none left; a
    // removed file takes its drift with it.
    std::fs::copy(Path::new(HARNESS).join("claude-2.1.330.jsonl"), &claude2).unwrap();
    ix.update(&files[..5], &mut |_| {}).unwrap();
    let rows = ix.drift().unwrap();
    let claude_field = rows
        .iter()
        .find(|r| r.name == "user.workingDirectory")
        .unwrap();
    assert_eq!(claude_field.sessions, 1);
    assert!(
        rows.iter().all(|r| r.kind.is_some()),
        "the unreadable file is gone: {rows:?}"
    );
}
