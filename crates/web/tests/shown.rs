//! `render::keep_shown` drops only what no page shows: on every sample
//! file of every agent, and on a generated session, the page of a session
//! after it is the page of the session before it.

use agentlog_formats::registry;
use agentlog_model::{Agent, Block, Entry, EntryKind, Message, Role, Session, SessionMeta};
use agentlog_web::pages::export_session_with;
use agentlog_web::render::keep_shown;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The page of `session` (with its subagents), and the page of both after
/// `keep_shown`.
fn pages(session: &Session, path: &str, subagents: &[(String, Session)]) -> (String, String) {
    let before = export_session_with(session, path, subagents);
    let mut pruned = session.clone();
    keep_shown(&mut pruned);
    let mut subs = subagents.to_vec();
    for (_, s) in &mut subs {
        keep_shown(s);
    }
    (before, export_session_with(&pruned, path, &subs))
}

#[test]
fn a_page_is_the_same_after_what_no_page_shows_is_dropped() {
    let mut all = Vec::new();
    files(Path::new(FIXTURES), &mut all);
    all.sort();
    let mut checked = 0;
    let mut dropped = 0;
    for path in &all {
        let Ok(format) = registry::detect(path) else {
            continue;
        };
        let Ok(read) = format.read_path(path) else {
            continue;
        };
        let shown = path.to_string_lossy().into_owned();
        let subagents = agentlog_web::files::read_subagents(path, format.name());
        let (before, after) = pages(&read.session, &shown, &subagents);
        assert!(before == after, "{shown}: the page changed");
        let mut pruned = read.session.clone();
        keep_shown(&mut pruned);
        if pruned != read.session {
            dropped += 1;
        }
        checked += 1;
    }
    // The sample files of every agent are there, and most of them keep
    // fields no page shows.
    assert!(checked >= 40, "only {checked} sample files were read");
    assert!(
        dropped * 2 >= checked,
        "{dropped} of {checked} lost anything"
    );
}

/// A Claude session whose tool result names the subagent its call started
/// (in `toolUseResult`, beside the tool's output), and that subagent.
fn with_subagent() -> (Session, Vec<(String, Session)>) {
    let mut s = Session::new(SessionMeta::new("s1", Agent::Claude));
    let mut call = Message::new(Role::Assistant);
    call.content.push(Block::tool_call(
        Some("toolu_1".into()),
        "Task",
        json!({"description": "find the TODOs"}),
    ));
    let mut e = Entry::new("a1", None, EntryKind::Message(call));
    e.extra.insert("cwd".into(), json!("/home/dev/src/app"));
    s.push(e);
    let mut result = Message::new(Role::User);
    result.content.push(Block::tool_result(
        Some("toolu_1".into()),
        vec![Block::text("found 3 TODOs")],
        false,
    ));
    let mut e = Entry::new("u1", Some("a1".into()), EntryKind::Message(result));
    e.extra.insert(
        "toolUseResult".into(),
        json!({"agentId": "abc123", "status": "completed", "content": "found 3 TODOs"}),
    );
    s.push(e);
    let mut sub = Session::new(SessionMeta::new("agent-abc123", Agent::Claude));
    sub.push(Entry::new(
        "c1",
        None,
        EntryKind::Message(Message::text(Role::User, "find the TODOs")),
    ));
    (s, vec![("/p/s1/subagents/agent-abc123.jsonl".into(), sub)])
}

#[test]
fn a_subagent_named_by_a_tool_result_is_still_shown_inside_its_call() {
    let (s, subagents) = with_subagent();
    let (before, after) = pages(&s, "/p/s1.jsonl", &subagents);
    assert!(before.contains("subagent: find the TODOs"), "{before}");
    assert!(before == after, "the page changed");
    let mut pruned = s.clone();
    keep_shown(&mut pruned);
    assert_eq!(
        Value::Object(pruned.entries[1].extra.clone()),
        json!({"toolUseResult": {"agentId": "abc123"}})
    );
    assert!(pruned.entries[0].extra.is_empty());
}
