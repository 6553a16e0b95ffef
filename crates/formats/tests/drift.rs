#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The drift report (`agentlog_formats::drift::report`, what `validate
//! --drift` and the index's drift alarm say) and what a session is
//! (`Format::session_kind`), on files the real CLIs wrote and on the same
//! files as a later version might write them.

use agentlog_formats::drift::{report, DriftKind, LAYOUT};
use agentlog_formats::{registry, Format};
use agentlog_model::SessionKind;
use std::path::{Path, PathBuf};

/// Files the real CLIs wrote against the mock model (crates/harness).
const HARNESS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../harness/fixtures");

fn format(name: &str) -> &'static dyn Format {
    registry::by_name(name).unwrap()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(HARNESS).join(name)
}

/// The drift items of `bytes` read as `name` at `path`, as (kind, name).
fn drift_of(name: &str, path: &Path, bytes: &[u8]) -> Vec<(DriftKind, String)> {
    let f = format(name);
    let read = f.read_bytes(path, bytes).unwrap();
    report(f, &read)
        .into_iter()
        .map(|d| (d.kind, d.name))
        .collect()
}

/// Each JSON line of fixture `name` changed by `edit`.
fn edited(name: &str, edit: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let mut out = String::new();
    for l in std::fs::read_to_string(fixture(name)).unwrap().lines() {
        let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
        edit(&mut v);
        out.push_str(&serde_json::to_string(&v).unwrap());
        out.push('\n');
    }
    out.into_bytes()
}

#[test]
fn the_files_the_real_clis_wrote_hold_nothing_unknown() {
    for (name, fmt) in [
        ("claude-2.1.330.jsonl", "claude"),
        ("compacted-claude-2.1.330.jsonl", "claude"),
        ("codex-0.169.0.jsonl", "codex"),
        ("compacted-codex-0.169.0.jsonl", "codex"),
        ("subagent-codex-0.169.0.jsonl", "codex"),
        ("gemini-0.61.0.jsonl", "gemini"),
        ("compacted-gemini-0.61.0.jsonl", "gemini"),
        ("subagent-gemini-0.61.0.jsonl", "gemini"),
        ("pi-0.73.1.jsonl", "pi"),
        ("compacted-pi-0.73.1.jsonl", "pi"),
    ] {
        let p = fixture(name);
        assert_eq!(
            drift_of(fmt, &p, &std::fs::read(&p).unwrap()),
            vec![],
            "{name}"
        );
    }
}

#[test]
fn a_new_record_type_a_renamed_field_and_a_new_layout_are_named() {
    use DriftKind::{Field, Layout, RecordType};
    let p = Path::new("/s/6215620c-6219-453f-a09e-7ac5800146b1.jsonl");
    // Claude Code: `cwd` renamed, `mode` records renamed.
    let claude = edited("claude-2.1.330.jsonl", |v| {
        if let Some(cwd) = v.as_object_mut().unwrap().remove("cwd") {
            v["workDir"] = cwd;
        }
        if v["type"] == "mode" {
            v["type"] = "session-mode".into();
        }
    });
    assert_eq!(
        drift_of("claude", p, &claude),
        vec![
            (RecordType, "session-mode".to_string()),
            (Field, "assistant.workDir".to_string()),
            (Field, "user.workDir".to_string()),
        ]
    );
    // Codex: a line type and a response item of a later version.
    let mut codex = std::fs::read(fixture("codex-0.169.0.jsonl")).unwrap();
    codex.extend_from_slice(
        b"{\"timestamp\":\"2026-11-23T21:39:40.000Z\",\"type\":\"world_event\",\"payload\":{}}\n\
          {\"timestamp\":\"2026-11-23T21:39:41.000Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"hologram\"}}\n",
    );
    assert_eq!(
        drift_of("codex", p, &codex),
        vec![
            (RecordType, "response_item.hologram".to_string()),
            (RecordType, "world_event".to_string()),
        ]
    );
    // Gemini CLI: a header field renamed.
    let gemini = edited("gemini-0.61.0.jsonl", |v| {
        if let Some(h) = v.as_object_mut().unwrap().remove("projectHash") {
            v["projectId"] = h;
        }
    });
    assert_eq!(
        drift_of("gemini", Path::new("/s/session-1.jsonl"), &gemini),
        vec![(Field, "session.projectId".to_string())]
    );
    // A top-level layout no reader knows, in each format: the layout is
    // named (with what else is unknown).
    let layout = |fmt: &str, path: &str, bytes: &[u8]| {
        let d = drift_of(fmt, Path::new(path), bytes);
        assert!(d.contains(&(Layout, LAYOUT.to_string())), "{fmt}: {d:?}");
        d
    };
    layout(
        "claude",
        "/s/a.jsonl",
        b"{\"schema\":3,\"conversation\":{\"turns\":[]}}\n",
    );
    layout(
        "codex",
        "/s/rollout-x.jsonl",
        b"{\"v\":2,\"thread\":{\"items\":[]}}\n",
    );
    let g = layout(
        "gemini",
        "/s/session-2.jsonl",
        b"{\"format\":\"chat-v2\",\"conversation\":{}}\n",
    );
    assert!(
        g.contains(&(Field, "session.conversation".to_string())),
        "{g:?}"
    );
    layout(
        "pi",
        "/s/p.jsonl",
        b"{\"kind\":\"pi-session\",\"v\":4,\"items\":[]}\n",
    );
    // Lines that are not JSON at all, where the reader goes on.
    layout(
        "claude",
        "/s/b.jsonl",
        b"PK\x03\x04 not a transcript\nmore\n",
    );
    // An empty file is no layout.
    assert_eq!(drift_of("claude", Path::new("/s/c.jsonl"), b""), vec![]);
}

#[test]
fn what_a_session_is_comes_from_its_file() {
    let kind = |fmt: &str, path: &Path, bytes: &[u8]| {
        let f = format(fmt);
        f.session_kind(path, &f.read_bytes(path, bytes).unwrap().session)
    };
    let read = |name: &str| std::fs::read(fixture(name)).unwrap();
    let p = Path::new("/h/.claude/projects/-p/6215620c-6219-453f-a09e-7ac5800146b1.jsonl");
    // `claude -p` writes entrypoint sdk-cli; the CLI at a terminal, cli.
    let claude = read("claude-2.1.330.jsonl");
    assert_eq!(kind("claude", p, &claude), SessionKind::Headless);
    let at_terminal = edited("claude-2.1.330.jsonl", |v| {
        if v.get("entrypoint").is_some() {
            v["entrypoint"] = "cli".into();
        }
    });
    assert_eq!(kind("claude", p, &at_terminal), SessionKind::Conversation);
    let sub = Path::new("/h/.claude/projects/-p/6215620c/subagents/agent-a1.jsonl");
    assert_eq!(kind("claude", sub, &at_terminal), SessionKind::Subagent);
    let flat = Path::new("/h/.claude/projects/-p/agent-a1b2c3d4.jsonl");
    assert_eq!(kind("claude", flat, &at_terminal), SessionKind::Subagent);
    // `codex exec`, and the subagent it spawned.
    let x = Path::new("/h/.codex/sessions/rollout-x.jsonl");
    assert_eq!(
        kind("codex", x, &read("codex-0.169.0.jsonl")),
        SessionKind::Headless
    );
    assert_eq!(
        kind("codex", x, &read("subagent-codex-0.169.0.jsonl")),
        SessionKind::Subagent
    );
    let interactive = edited("codex-0.169.0.jsonl", |v| {
        if v["type"] == "session_meta" {
            v["payload"]["source"] = "cli".into();
            v["payload"]["originator"] = "codex_cli_rs".into();
        }
    });
    assert_eq!(kind("codex", x, &interactive), SessionKind::Conversation);
    // Gemini CLI's subagent chats say so; its main chats are conversations.
    let g = Path::new("/h/.gemini/tmp/h/chats/session-1.jsonl");
    assert_eq!(
        kind("gemini", g, &read("subagent-gemini-0.61.0.jsonl")),
        SessionKind::Subagent
    );
    assert_eq!(
        kind("gemini", g, &read("gemini-0.61.0.jsonl")),
        SessionKind::Conversation
    );
    // pi writes nothing that tells a run apart.
    let pi = Path::new("/h/.pi/agent/sessions/--p--/x.jsonl");
    assert_eq!(
        kind("pi", pi, &read("pi-0.73.1.jsonl")),
        SessionKind::Conversation
    );
}
