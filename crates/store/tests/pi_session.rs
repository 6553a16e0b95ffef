//! pi's session manager: context building, migration, the tree API and
//! durability, against real pi files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_model::EntryKind;
use agentlog_store::pi::{CompactionParams, SessionInitParams, SessionManager};
use agentlog_store::StoreError;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn fixture(rel: &str) -> PathBuf {
    Path::new(FIXTURES).join(rel)
}

fn copy_to(dir: &Path, rel: &str) -> PathBuf {
    let dst = dir.join(Path::new(rel).file_name().unwrap());
    std::fs::copy(fixture(rel), &dst).unwrap();
    dst
}

#[test]
fn context_of_the_generated_tree_matches_pi() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(
        dir.path(),
        "seeds/pi-mono/generated/v3-tree-all-entry-types.jsonl",
    );
    let before = std::fs::read(&p).unwrap();
    let sm = SessionManager::open(&p, None).unwrap();
    assert_eq!(
        std::fs::read(&p).unwrap(),
        before,
        "a v3 file is not rewritten"
    );
    let want: Value = serde_json::from_slice(
        &std::fs::read(fixture(
            "seeds/pi-mono/generated/v3-tree-all-entry-types.context.json",
        ))
        .unwrap(),
    )
    .unwrap();
    let ctx = sm.build_session_context();
    assert_eq!(sm.get_leaf_id(), want["leafId"].as_str());
    assert_eq!(ctx.thinking_level, Some(want["thinkingLevel"].clone()));
    assert_eq!(serde_json::to_value(&ctx.model).unwrap(), want["model"]);
    let roles: Vec<Value> = ctx.roles().into_iter().map(Value::from).collect();
    assert_eq!(Value::Array(roles), want["messageRoles"]);
    // The branch summary message as pi builds it.
    assert_eq!(
        ctx.message_values()[1],
        json!({"role":"branchSummary","summary":"Abandoned path: listed files and counted them.",
               "fromId":"bb1761ff","timestamp":1795373504084_i64})
    );
    // The other branch: compaction summary first, kept entries, then after.
    let other = sm.build_session_context_at(Some("f22d7964")).unwrap();
    assert_eq!(
        other.roles(),
        [
            "compactionSummary",
            "assistant",
            "custom",
            "user",
            "assistant"
        ]
    );
    assert_eq!(other.message_values()[0]["tokensBefore"], 1234);
    assert_eq!(other.message_values()[2]["content"], "Injected context");
    assert_eq!(sm.get_label("bb1761ff"), Some("start"));
    assert_eq!(sm.get_session_name().as_deref(), Some("demo session"));
    assert!(sm.build_session_context_at(Some("nope")).is_err());
    assert!(sm
        .build_session_context_at(None)
        .unwrap()
        .messages
        .is_empty());
}

/// Returns the records of a file, as JSON.
fn records(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Replaces the ids of `ours` by pi's (by position) and checks the rest.
fn assert_same_with_ids_mapped(ours: &[Value], theirs: &[Value]) {
    assert_eq!(ours.len(), theirs.len());
    let mut map: HashMap<String, String> = HashMap::new();
    for (o, t) in ours.iter().zip(theirs) {
        if let (Some(a), Some(b)) = (o.get("id"), t.get("id")) {
            if o["type"] != "session" {
                map.insert(a.as_str().unwrap().into(), b.as_str().unwrap().into());
            }
        }
    }
    for (i, (o, t)) in ours.iter().zip(theirs).enumerate() {
        let mut o = o.clone();
        for key in ["id", "parentId", "firstKeptEntryId"] {
            if let Some(Value::String(s)) = o.get(key) {
                if o["type"] != "session" {
                    let mapped = map
                        .get(s)
                        .cloned()
                        .unwrap_or_else(|| panic!("unmapped id {s}"));
                    o[key] = Value::String(mapped);
                }
            }
        }
        assert_eq!(&o, t, "record {}", i + 1);
        // Keys in the same order: pi appends the new ones at the end.
        let ok: Vec<&String> = o.as_object().unwrap().keys().collect();
        let tk: Vec<&String> = t.as_object().unwrap().keys().collect();
        assert_eq!(ok, tk, "key order of record {}", i + 1);
    }
}

/// Checks that `ours` is pi's migration of the large session: the same
/// records once ids are mapped, with unique 8-hex-digit ids.
fn assert_is_pis_migration(ours: &[Value]) {
    let theirs = records(&fixture(
        "seeds/pi-mono/generated/large-session.migrated-by-pi-0.73.1.jsonl",
    ));
    assert_same_with_ids_mapped(ours, &theirs);
    let ids: std::collections::HashSet<&str> = ours[1..]
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), ours.len() - 1);
    assert!(ids
        .iter()
        .all(|id| id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit())));
}

#[test]
fn migrating_the_large_session_gives_what_pi_gives() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), "seeds/pi-mono/large-session.jsonl");
    let mut sm = SessionManager::open(&p, None).unwrap();
    assert_eq!(sm.migrated_from(), Some(1));
    assert_eq!(sm.entry_count(), 1018);
    assert!(sm.needs_rewrite());
    sm.flush().unwrap();
    assert!(!sm.needs_rewrite());
    let leaf = sm.get_leaf_id().unwrap().to_string();
    drop(sm);
    let ours = records(&p);
    assert_is_pis_migration(&ours);
    // The ids handed out before the rewrite are the ones in the file.
    assert_eq!(ours.last().unwrap()["id"], leaf.as_str());
    // Reopening does not migrate again.
    let sm = SessionManager::open(&p, None).unwrap();
    assert_eq!(sm.migrated_from(), None);
    assert!(!sm.needs_rewrite());
}

#[test]
fn opening_a_v1_file_does_not_change_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), "seeds/pi-mono/large-session.jsonl");
    let before = std::fs::read(&p).unwrap();
    let sm = SessionManager::open(&p, None).unwrap();
    assert_eq!(sm.migrated_from(), Some(1));
    assert!(sm.needs_rewrite());
    // Reading works on the migrated entries while the file is untouched.
    assert_eq!(sm.build_session_context().messages.len(), 914);
    assert_eq!(sm.get_entries().len(), 1018);
    assert_eq!(std::fs::read(&p).unwrap(), before);
    // The file is locked all the same: the writer owns it from the open.
    assert!(matches!(
        SessionManager::open(&p, None),
        Err(StoreError::Locked { .. })
    ));
    drop(sm);
    assert_eq!(std::fs::read(&p).unwrap(), before);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["large-session.jsonl"], "no temp or lock files left");
}

#[test]
fn the_first_append_rewrites_a_v1_file_then_appends() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), "seeds/pi-mono/large-session.jsonl");
    let mut sm = SessionManager::open(&p, None).unwrap();
    let leaf = sm.get_leaf_id().unwrap().to_string();
    let id = sm
        .append_message_value(json!({"role":"user","content":"after the migration","timestamp":7}))
        .unwrap();
    assert!(!sm.needs_rewrite());
    let ours = records(&p);
    assert_eq!(ours.len(), 1 + 1018 + 1);
    assert_is_pis_migration(&ours[..ours.len() - 1]);
    let last = ours.last().unwrap();
    assert_eq!(last["id"], id.as_str());
    assert_eq!(last["parentId"], leaf.as_str());
    assert_eq!(last["message"]["content"], "after the migration");
    // The writer holds the new file: a second open is refused, and more
    // appends land in it.
    assert!(matches!(
        SessionManager::open(&p, None),
        Err(StoreError::Locked { .. })
    ));
    sm.append_message_value(json!({"role":"user","content":"and more","timestamp":8}))
        .unwrap();
    drop(sm);
    let again = SessionManager::open(&p, None).unwrap();
    assert_eq!(again.migrated_from(), None);
    assert_eq!(again.entry_count(), 1020);
    assert_eq!(
        again.get_entry(&id).unwrap().parent_id.as_deref(),
        Some(leaf.as_str())
    );
}

#[test]
fn dying_before_the_first_append_leaves_the_v1_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), "seeds/pi-mono/large-session.jsonl");
    let before = std::fs::read(&p).unwrap();
    // Opened and navigated (nothing that writes), then the process goes
    // away before its first append.
    let mut sm = SessionManager::open(&p, None).unwrap();
    let first = sm.get_entries()[0].id.clone();
    sm.branch(&first).unwrap();
    assert!(sm.needs_rewrite());
    drop(sm);
    assert_eq!(std::fs::read(&p).unwrap(), before);
    // The next open migrates again, from the intact original, and its
    // first append still gives pi's migration.
    let mut sm = SessionManager::open(&p, None).unwrap();
    assert_eq!(sm.migrated_from(), Some(1));
    assert_eq!(sm.entry_count(), 1018);
    sm.append_thinking_level_change("low").unwrap();
    drop(sm);
    let ours = records(&p);
    assert_is_pis_migration(&ours[..ours.len() - 1]);
}

#[test]
fn v1_compactions_get_their_kept_entry_ids() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), "seeds/pi-mono/before-compaction.jsonl");
    let mut sm = SessionManager::open(&p, None).unwrap();
    sm.flush().unwrap();
    let recs = records(&p);
    let comps: Vec<&Value> = recs.iter().filter(|r| r["type"] == "compaction").collect();
    assert_eq!(comps.len(), 2);
    for c in &comps {
        assert!(c.get("firstKeptEntryIndex").is_none());
        let kept = c["firstKeptEntryId"].as_str().unwrap();
        assert!(sm.get_entry(kept).is_some());
    }
    // firstKeptEntryIndex 293 was line 294 of the v1 file (header = 0).
    assert_eq!(comps[0]["firstKeptEntryId"], recs[293]["id"]);
    let ctx = sm.build_session_context();
    assert_eq!(ctx.roles()[0], "compactionSummary");
    assert_eq!(ctx.message_values()[1], recs[551]["message"]);
}

#[test]
fn a_new_session_is_written_once_the_model_answers() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = SessionManager::create("/work/p", Some(dir.path()));
    let file = sm.get_session_file().unwrap().to_path_buf();
    assert!(file
        .file_name()
        .unwrap()
        .to_string_lossy()
        .ends_with(&format!("_{}.jsonl", sm.get_session_id())));
    sm.append_model_change("anthropic/claude-sonnet-4-5", Some("default"))
        .unwrap();
    sm.append_thinking_level_change("high").unwrap();
    let u = sm
        .append_message_value(json!({"role":"user","content":"hi","timestamp":1}))
        .unwrap();
    assert!(!file.exists(), "no file before an assistant message");
    let a = sm
        .append_message_value(
            json!({"role":"assistant","content":[{"type":"text","text":"yo"}],
            "provider":"anthropic","model":"claude-sonnet-4-5","timestamp":2}),
        )
        .unwrap();
    assert!(file.exists());
    assert_eq!(records(&file).len(), 5);
    sm.append_label_change(&u, Some("first")).unwrap();
    assert!(sm.append_label_change("missing", Some("x")).is_err());
    let s = sm
        .branch_with_summary(None, "left it", None, Some(false))
        .unwrap();
    let e = sm.get_entry(&s).unwrap();
    assert!(matches!(&e.kind, EntryKind::BranchSummary { from_id, .. } if from_id == "root"));
    assert_eq!(e.parent_id, None);
    sm.branch(&a).unwrap();
    sm.append_compaction(CompactionParams {
        summary: "sum".into(),
        first_kept_entry_id: u.clone(),
        tokens_before: 10,
        ..CompactionParams::default()
    })
    .unwrap();
    sm.append_custom_entry("ext", Some(json!({"n":1}))).unwrap();
    sm.append_custom_message_entry("ext", json!("note"), true, None)
        .unwrap();
    sm.append_ttsr_injection(&["r1".into(), "r2".into()])
        .unwrap();
    sm.append_ttsr_injection(&["r1".into()]).unwrap();
    sm.append_session_init(SessionInitParams {
        task: "t".into(),
        tools: vec!["bash".into()],
        ..Default::default()
    })
    .unwrap();
    sm.append_session_info("  named  ").unwrap();
    let ctx = sm.build_session_context();
    assert_eq!(
        ctx.roles(),
        ["compactionSummary", "user", "assistant", "custom"]
    );
    assert_eq!(ctx.thinking_level_str(), "high");
    assert_eq!(
        ctx.model.as_ref().unwrap().model_id.as_deref(),
        Some("claude-sonnet-4-5")
    );
    assert_eq!(ctx.models["default"], "anthropic/claude-sonnet-4-5");
    assert_eq!(ctx.injected_ttsr_rules, ["r1", "r2"]);
    assert_eq!(sm.get_children(&a).len(), 2);
    let tree = sm.get_tree();
    assert_eq!(tree.len(), 2, "the root branch summary is a second root");
    assert_eq!(tree[0].label.as_deref(), None);
    assert_eq!(
        tree[0].children[0].children[0].label.as_deref(),
        Some("first")
    );
    sm.reset_leaf();
    let root = sm
        .append_message_value(json!({"role":"user","content":"again","timestamp":3}))
        .unwrap();
    assert_eq!(sm.get_entry(&root).unwrap().parent_id, None);
    let ids: Vec<String> = sm.get_entries().iter().map(|e| e.id.clone()).collect();
    let unique: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len());
    drop(sm);
    // Everything is on disk and reads back the same.
    let again = SessionManager::open(&file, None).unwrap();
    assert_eq!(again.entry_count(), ids.len());
    assert_eq!(again.get_leaf_id(), Some(root.as_str()));
    assert_eq!(again.get_label(&u), Some("first"));
    assert_eq!(again.get_session_name().as_deref(), Some("named"));
    let recs = records(&file);
    assert_eq!(recs[0]["version"], 3);
    assert_eq!(recs[0]["cwd"], "/work/p");
}

#[test]
fn one_writer_torn_tails_and_bad_headers() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), "native/secondary/pi/as-stage0-small.jsonl");
    let mut sm = SessionManager::open(&p, None).unwrap();
    assert!(matches!(
        SessionManager::open(&p, None),
        Err(StoreError::Locked { .. })
    ));
    sm.append_message_value(json!({"role":"user","content":"more","timestamp":9}))
        .unwrap();
    drop(sm);
    // A torn last line is cut into a sidecar, and the next append is whole.
    let mut bytes = std::fs::read(&p).unwrap();
    let n = records(&p).len();
    let torn = b"{\"type\":\"message\",\"id\":\"tor";
    bytes.extend_from_slice(torn);
    std::fs::write(&p, &bytes).unwrap();
    let mut sm = SessionManager::open(&p, None).unwrap();
    let rec = sm.recovery().unwrap();
    assert_eq!(rec.torn_bytes, torn.len() as u64);
    assert!(rec.sidecar.as_ref().unwrap().exists());
    assert!(sm.diagnostics().iter().any(|d| d.code == "torn-tail"));
    sm.append_message_value(json!({"role":"user","content":"after","timestamp":10}))
        .unwrap();
    drop(sm);
    assert_eq!(records(&p).len(), n + 1);
    // A file that does not start with a header is refused, not overwritten.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"type\":\"message\",\"id\":\"a\"}\n").unwrap();
    let err = SessionManager::open(&bad, None).unwrap_err();
    assert!(err.to_string().contains("not a pi session header"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&bad).unwrap(),
        "{\"type\":\"message\",\"id\":\"a\"}\n"
    );
}

#[test]
fn continue_recent_picks_the_newest_session() {
    let dir = tempfile::tempdir().unwrap();
    let p = copy_to(dir.path(), "native/secondary/pi/as-stage0-small.jsonl");
    std::fs::write(dir.path().join("junk.jsonl"), "not a session\n").unwrap();
    let sm = SessionManager::continue_recent("/x", Some(dir.path())).unwrap();
    assert_eq!(sm.get_session_file(), Some(p.as_path()));
    let empty = tempfile::tempdir().unwrap();
    let sm = SessionManager::continue_recent("/x", Some(empty.path())).unwrap();
    assert_eq!(sm.entry_count(), 0);
    assert_eq!(sm.get_leaf_id(), None);
}

#[test]
fn load_reads_old_files_without_touching_them() {
    let p = fixture("seeds/pi-mono/large-session.jsonl");
    let sm = SessionManager::load(&p).unwrap();
    assert_eq!(sm.migrated_from(), Some(1));
    assert_eq!(sm.entry_count(), 1018);
    let ctx = sm.build_session_context();
    assert_eq!(ctx.messages.len(), 914);
    // The ids are those the format reader derives from line numbers.
    let read = agentlog_formats::registry::by_name("pi")
        .unwrap()
        .read_path(&p)
        .unwrap();
    let theirs: Vec<String> = read.session.entries.iter().map(|e| e.id.clone()).collect();
    let ours: Vec<String> = sm.get_entries().iter().map(|e| e.id.clone()).collect();
    assert_eq!(ours, theirs);
    assert_eq!(sm.get_leaf_id(), read.session.leaf_id.as_deref());
    assert_eq!(ctx.thinking_level_str(), "off");
    let mut mem = SessionManager::in_memory("/m");
    mem.append_message(&agentlog_model::Message::text(
        agentlog_model::Role::User,
        "x",
    ))
    .unwrap();
    assert_eq!(mem.get_session_file(), None);
    assert_eq!(
        mem.build_session_context().message_values()[0]["content"],
        json!([{"type":"text","text":"x"}])
    );
}

#[test]
fn an_empty_or_torn_only_file_starts_a_new_session_there() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    let torn = "{\"type\":\"session\",\"vers";
    std::fs::write(&p, torn).unwrap();
    let mut sm = SessionManager::open(&p, None).unwrap();
    assert_eq!(sm.recovery().unwrap().torn_bytes, torn.len() as u64);
    assert_eq!(sm.entry_count(), 0);
    sm.append_message_value(json!({"role":"user","content":"a","timestamp":1}))
        .unwrap();
    sm.append_message_value(json!({"role":"assistant","content":[],"timestamp":2}))
        .unwrap();
    let id = sm.get_session_id().to_string();
    drop(sm);
    let recs = records(&p);
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[0]["id"], id.as_str());
    assert_eq!(recs[2]["parentId"], recs[1]["id"]);
    let holder = dir.path().join("s.jsonl.lock");
    assert!(!holder.exists(), "the lock record goes with the writer");
}
