#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A session resumed in another agent keeps its id there: naming it still
//! works (the original is taken, a copy can be asked for), and its
//! responses are counted once.

use agentlog_api::resolve::{resolve_with, Prefer, ResolveOptions};
use agentlog_api::resume::{resume, ResumeParams};
use agentlog_api::{ApiError, Library, Settings};
use agentlog_index::StatsParams;
use agentlog_model::{Block, Entry, EntryKind, Message, Role, Timestamp, Usage};
use std::path::PathBuf;

const ID: &str = agentlog_api::example::SESSION_ID;

/// A Claude Code session (with one priced response) resumed in Codex:
/// the home, the library, the original's file and the copy's.
fn resumed() -> (tempfile::TempDir, Library, PathBuf, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let now = agentlog_index::time::now_ms();
    let mut s = agentlog_api::example::session(now);
    let mut m = Message::new(Role::Assistant);
    m.content.push(Block::text("And the docs are updated."));
    m.id = Some("msg_01".into());
    m.model = Some("claude-sonnet-4-5".into());
    m.usage = Some(Usage {
        input: 100,
        output: 50,
        cache_read: 1000,
        ..Usage::default()
    });
    let parent = s.entries.last().map(|e| e.id.clone());
    s.push(
        Entry::new(
            "00000009-0000-4000-8000-000000000000",
            parent,
            EntryKind::Message(m),
        )
        .at(Timestamp::Millis(now + 120_000)),
    );
    let dir = home.path().join(".claude/projects/-home-dev-parser");
    std::fs::create_dir_all(&dir).unwrap();
    let original = dir.join(format!("{ID}.jsonl"));
    let mut bytes = Vec::new();
    agentlog_formats::registry::by_name("claude")
        .unwrap()
        .write(&s, &mut bytes)
        .unwrap();
    std::fs::write(&original, bytes).unwrap();
    let lib = Library::new(Settings::with_home(home.path()));
    let read = lib.read(&original.display().to_string()).unwrap();
    let mut params = ResumeParams::new("codex");
    params.source = Some(original.clone());
    let copy = resume(&lib.settings, &read.session, &params).unwrap().path;
    (home, lib, original, copy)
}

#[test]
fn a_resumed_session_is_named_by_its_id_prefix_or_whole_id_and_the_original_is_taken() {
    let (_home, lib, original, copy) = resumed();
    for arg in [&ID[..8], ID] {
        let r = resolve_with(&lib.settings, arg, &ResolveOptions::default()).unwrap();
        assert_eq!(r.found.path, original, "{arg}");
        assert!(!r.chosen.copy);
        assert_eq!(r.others.len(), 1);
        assert_eq!(r.others[0].path, copy);
        assert_eq!(r.others[0].format, "codex");
        assert!(r.others[0].copy && r.others[0].modified.is_some());
        assert_eq!(lib.resolve(arg).unwrap().path, original);
    }
}

#[test]
fn a_resumed_copy_is_named_by_agent_prefix_agent_option_or_newest() {
    let (_home, lib, original, copy) = resumed();
    assert_eq!(
        lib.resolve(&format!("codex:{}", &ID[..6])).unwrap().path,
        copy
    );
    assert_eq!(lib.resolve(&format!("claude:{ID}")).unwrap().path, original);
    let codex = ResolveOptions {
        agent: Some("codex".into()),
        ..ResolveOptions::default()
    };
    let r = resolve_with(&lib.settings, &ID[..8], &codex).unwrap();
    assert_eq!(r.found.path, copy);
    assert!(r.others.is_empty());
    let newest = ResolveOptions {
        prefer: Prefer::Newest,
        ..ResolveOptions::default()
    };
    let r = resolve_with(&lib.settings, &ID[..8], &newest).unwrap();
    assert_eq!(r.found.path, copy);
    assert_eq!(r.others[0].path, original);
    let bad = ResolveOptions {
        agent: Some("nope".into()),
        ..ResolveOptions::default()
    };
    assert!(matches!(
        resolve_with(&lib.settings, ID, &bad),
        Err(ApiError::UnknownAgent { .. })
    ));
}

#[test]
fn a_copy_resume_did_not_record_is_told_from_its_original_by_when_it_was_made() {
    let (_home, lib, original, copy) = resumed();
    std::fs::remove_file(agentlog_api::copies::ledger_path(&lib.settings)).unwrap();
    let r = resolve_with(&lib.settings, ID, &ResolveOptions::default()).unwrap();
    assert_eq!(r.found.path, original);
    assert_eq!(r.others[0].path, copy);
}

#[test]
fn stats_count_a_resumed_sessions_responses_once() {
    let (_home, lib, _original, copy) = resumed();
    let all = lib.stats(&StatsParams::default()).unwrap();
    let priced = |s: &agentlog_index::Stats| {
        s.rows
            .iter()
            .filter(|r| r.key != "unknown")
            .map(|r| (r.responses, r.input))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    assert_eq!(priced(&all), (1, 100), "{all:?}");
    let by_agent = lib
        .stats(&StatsParams {
            by: agentlog_index::GroupBy::Agent,
            ..StatsParams::default()
        })
        .unwrap();
    let keys: Vec<&str> = by_agent.rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, ["claude"], "the original's agent counts it");
    // A response the copy added after the resume is its own.
    let mut text = std::fs::read_to_string(&copy).unwrap();
    let ts = "2030-01-01T00:00:00.000Z";
    let answer = serde_json::json!({"timestamp": ts, "type": "response_item", "payload":
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "More."}]}});
    let usage = serde_json::json!({"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 5,
        "reasoning_output_tokens": 0, "total_tokens": 15});
    let count = serde_json::json!({"timestamp": ts, "type": "event_msg", "payload":
        {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}});
    text.push_str(&format!("{count}\n{answer}\n"));
    std::fs::write(&copy, text).unwrap();
    let after = lib.stats(&StatsParams::default()).unwrap();
    assert_eq!(after.total.responses, all.total.responses + 1, "{after:?}");
    assert_eq!(after.total.input, 110, "{after:?}");
}
