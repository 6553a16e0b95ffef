#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The Amp reader against a real `amp threads export` (see
//! `tests/fixtures/PROVENANCE.md`), checked against the document itself,
//! and Amp's thread store found where Amp keeps it.

use agentlog_formats::discover::DiscoverEnv;
use agentlog_formats::{registry, Format};
use agentlog_model::{BlockKind, Entry, EntryKind, Message, Role};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const THREAD: &str = "T-019fa4db-29cf-70c9-8d9b-81524df70e52";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/amp/export-0.0.1785170481")
        .join(format!("{THREAD}.json"))
}

fn amp() -> &'static dyn Format {
    registry::by_name("amp").unwrap()
}

fn messages(entries: &[Entry]) -> Vec<&Message> {
    entries.iter().filter_map(Entry::message).collect()
}

#[test]
fn the_real_export_is_read_whole() {
    let p = fixture();
    assert_eq!(registry::detect(&p).unwrap().name(), "amp");
    let doc: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    let raw = doc["messages"].as_array().unwrap();
    let read = amp().read_path(&p).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    let s = &read.session;
    assert_eq!(s.meta.id, THREAD);
    assert_eq!(s.meta.title.as_deref(), Some("Filesystem tool exercise"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/amp-elicit"));
    assert_eq!(
        s.meta.agent_version.as_deref(),
        Some("0.0.1785170481-ga5b614")
    );
    assert_eq!(s.meta.model.model.as_deref(), Some("gpt-5.6-sol"));
    // One entry per message, ids Amp's, in order.
    assert_eq!(s.entries.len(), raw.len());
    for (e, m) in s.entries.iter().zip(raw) {
        assert_eq!(e.id, m["protocolMessageID"].as_str().unwrap());
    }
    let msgs = messages(&s.entries);
    // One prompt (the tool results come back in user messages, which are
    // not prompts), as many answers as assistant messages.
    assert_eq!(s.prompt_count(), 1);
    let answers = raw.iter().filter(|m| m["role"] == "assistant").count();
    assert_eq!(
        msgs.iter().filter(|m| m.role == Role::Assistant).count(),
        answers
    );
    // Every call of the document, with its input; every result answers
    // one, in the order Amp wrote them.
    let want_calls: Vec<(&str, &str, &Value)> = raw
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .filter(|b| b["type"] == "tool_use")
        .map(|b| {
            (
                b["id"].as_str().unwrap(),
                b["name"].as_str().unwrap(),
                &b["input"],
            )
        })
        .collect();
    let calls: Vec<(String, String, Value)> = msgs
        .iter()
        .flat_map(|m| m.tool_calls())
        .map(|(id, n, i)| (id.clone().unwrap(), n.to_string(), i.clone()))
        .collect();
    assert_eq!(calls.len(), want_calls.len());
    for (got, want) in calls.iter().zip(&want_calls) {
        assert_eq!((got.0.as_str(), got.1.as_str(), &got.2), *want);
    }
    let results: Vec<(&Option<String>, &Vec<agentlog_model::Block>, bool)> = msgs
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match &b.kind {
            BlockKind::ToolResult {
                tool_call_id,
                content,
                is_error,
            } => Some((tool_call_id, content, *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), calls.len());
    for (r, c) in results.iter().zip(&calls) {
        assert_eq!(r.0.as_deref(), Some(c.0.as_str()));
        assert!(!r.1.is_empty(), "result of {} has no content", c.1);
    }
    // The command that had to fail failed, although Amp marks its run done.
    let failed: Vec<&str> = results
        .iter()
        .zip(&calls)
        .filter(|(r, _)| r.2)
        .map(|(_, c)| c.2["command"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].contains("does-not-exist.txt"), "{failed:?}");
    // The subagent's answer is the Task's result.
    let task = calls.iter().position(|c| c.1 == "Task").unwrap();
    let text = results[task].1[0].plain_text().unwrap();
    assert!(!text.is_empty());
    // Token counts: each answer's, as the document gives them.
    let sum = |k: &str| -> u64 {
        raw.iter()
            .filter_map(|m| m["usage"][k].as_u64())
            .sum::<u64>()
    };
    let usages: Vec<&agentlog_model::Usage> =
        msgs.iter().filter_map(|m| m.usage.as_ref()).collect();
    assert_eq!(usages.len(), answers);
    assert_eq!(
        usages.iter().map(|u| u.input).sum::<u64>(),
        sum("inputTokens")
    );
    assert_eq!(
        usages.iter().map(|u| u.output).sum::<u64>(),
        sum("outputTokens")
    );
    assert_eq!(
        usages.iter().map(|u| u.cache_read).sum::<u64>(),
        sum("cacheReadInputTokens")
    );
    assert_eq!(
        usages.iter().map(|u| u.cache_write).sum::<u64>(),
        sum("cacheCreationInputTokens")
    );
    // Thinking with its signature, also where Amp kept no summary.
    let thinking = msgs
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| {
            matches!(
                &b.kind,
                BlockKind::Thinking {
                    signature: Some(_),
                    ..
                }
            )
        })
        .count();
    let want_thinking = raw
        .iter()
        .flat_map(|m| m["content"].as_array().unwrap())
        .filter(|b| b["type"] == "thinking")
        .count();
    assert_eq!(thinking, want_thinking);
    // Nothing unknown to the drift report; the thread's other fields kept.
    assert_eq!(amp().drift(&read), []);
    assert_eq!(s.meta.extra["thread"]["meta"], doc["meta"]);
    let v = amp().validate(&p).unwrap();
    assert!(v.is_empty(), "{v:?}");
}

#[test]
fn compaction_unknown_blocks_and_fields_are_kept_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir
        .path()
        .join("T-00000000-0000-4000-8000-000000000001.json");
    let doc = json!({
        "v": 3, "id": "T-00000000-0000-4000-8000-000000000001", "created": 1_770_000_000_000_i64,
        "brandNewField": 1,
        "env": {"initial": {"trees": [{"uri": "file:///home/me/my%20proj"}]}},
        "messages": [
            {"role": "user", "messageId": 0, "content": [{"type": "text", "text": "hello"}], "meta": {"sentAt": 1_770_000_000_500_i64}},
            {"role": "assistant", "messageId": 1, "content": [{"type": "hologram", "x": 1}, {"type": "text", "text": "hi"}],
             "state": {"type": "complete", "stopReason": "end_turn"}, "mood": "good",
             "usage": {"model": "claude-x", "inputTokens": 5, "outputTokens": 2, "cacheReadInputTokens": null, "cacheCreationInputTokens": 7, "totalInputTokens": 12, "maxInputTokens": 100}},
            {"role": "info", "messageId": 2, "content": [{"type": "summary", "summary": {"type": "message", "summary": "we said hello"}}]},
            {"role": "user", "messageId": 3, "content": [{"type": "tool_result", "toolUseID": "toolu_9", "run": {"status": "error", "error": {"message": "boom"}}}]}
        ]
    });
    std::fs::write(&p, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    assert_eq!(registry::detect(&p).unwrap().name(), "amp");
    let read = amp().read_path(&p).unwrap();
    let s = &read.session;
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/me/my proj"));
    assert!(
        matches!(&s.entries[2].kind, EntryKind::Compaction { summary, .. } if summary == "we said hello")
    );
    let answer = s.entries[1].message().unwrap();
    assert!(matches!(&answer.content[0].kind, BlockKind::Other { value } if value["x"] == 1));
    let u = answer.usage.as_ref().unwrap();
    assert_eq!(
        (u.input, u.output, u.cache_read, u.cache_write),
        (5, 2, 0, 7)
    );
    assert_eq!(u.extra["totalInputTokens"], 12);
    assert_eq!(answer.stop_reason.as_deref(), Some("end_turn"));
    let drift: Vec<String> = amp().drift(&read).into_iter().map(|d| d.name).collect();
    assert_eq!(
        drift,
        ["block hologram", "message.mood", "thread.brandNewField"]
    );
    // A result of no call is reported; its error is its content.
    let v = amp().validate(&p).unwrap();
    assert!(v.iter().any(|d| d.code == "orphan-result"), "{v:?}");
    let r = s.entries[3].message().unwrap();
    assert!(
        matches!(&r.content[0].kind, BlockKind::ToolResult { is_error: true, content, .. } if content[0].plain_text().as_deref() == Some("boom"))
    );
}

#[test]
fn bad_input_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("T-1.json");
    std::fs::write(
        &p,
        "{\n  \"v\": 1,\n  \"id\": \"T-1\",\n  \"messages\": [\n    {\"role\": }\n",
    )
    .unwrap();
    let e = amp().read_path(&p).unwrap_err().to_string();
    assert!(e.contains("T-1.json:5"), "{e}");
    std::fs::write(&p, "{\"id\": \"T-1\", \"v\": 1}").unwrap();
    let e = amp().read_path(&p).unwrap_err().to_string();
    assert!(e.contains("no `messages` array"), "{e}");
}

#[test]
fn threads_are_found_where_amp_keeps_them() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path();
    let store = home.join(".local/share/amp/threads");
    std::fs::create_dir_all(store.join("sub")).unwrap();
    std::fs::copy(fixture(), store.join(format!("{THREAD}.json"))).unwrap();
    // Being written (Amp renames it into place), and not at the top level:
    // neither is a thread yet.
    std::fs::copy(fixture(), store.join("T-2.json.amptmp")).unwrap();
    std::fs::copy(fixture(), store.join("sub/T-3.json")).unwrap();
    let legacy = home.join(".config/Code/User/globalStorage/sourcegraph.amp/threads3");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::copy(fixture(), legacy.join("T-4.json")).unwrap();
    let env = DiscoverEnv::with_home(home);
    let found = amp().discover(&env);
    assert_eq!(
        found,
        [
            legacy.join("T-4.json"),
            store.join(format!("{THREAD}.json"))
        ]
    );
    // XDG_DATA_HOME moves the store.
    let mut moved = DiscoverEnv::with_home(tmp.path().join("nowhere"));
    moved.vars.insert(
        "XDG_DATA_HOME".into(),
        home.join(".local/share").to_string_lossy().into_owned(),
    );
    assert_eq!(
        amp().discover(&moved),
        [store.join(format!("{THREAD}.json"))]
    );
}
