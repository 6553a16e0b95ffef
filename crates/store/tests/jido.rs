#![allow(clippy::unwrap_used, clippy::expect_used)]
//! jido_code persistence: save, list, restore (with migration and checks),
//! delete and clear_all in a temporary directory.

use agentlog_store::jido::{sanitize, JidoStore};
use agentlog_store::StoreError;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn fixture_doc() -> Value {
    let p = Path::new(FIXTURES).join("seeds/jido_code/persistence-format-example.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// The fixture pointing at an existing project directory.
fn doc(id: &str, project: &Path, closed_at: &str) -> Value {
    let mut d = fixture_doc();
    d["id"] = json!(id);
    d["project_path"] = json!(project.display().to_string());
    d["closed_at"] = json!(closed_at);
    d
}

struct Env {
    _tmp: tempfile::TempDir,
    store: JidoStore,
    project: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("my-project");
    std::fs::create_dir(&project).unwrap();
    let store = JidoStore::new(tmp.path().join("home/.jido_code/sessions"))
        .with_home(tmp.path().join("home"));
    Env {
        _tmp: tmp,
        store,
        project,
    }
}

#[test]
fn save_writes_the_fixture_privately_and_restore_reads_it_back() {
    let e = env();
    let d = doc(
        "550e8400-e29b-41d4-a716-446655440000",
        &e.project,
        "2025-12-16T16:00:00Z",
    );
    let path = e.store.save(&d).unwrap();
    assert_eq!(
        path,
        e.store
            .dir()
            .join("550e8400-e29b-41d4-a716-446655440000.json")
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            std::fs::metadata(e.store.dir())
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o700
        );
    }
    let on_disk: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(on_disk, d);
    let r = e
        .store
        .restore("550e8400-e29b-41d4-a716-446655440000")
        .unwrap();
    assert_eq!(r.document, d);
    assert_eq!(r.from_version, 1);
    assert!(r.migrations.is_empty());
    assert_eq!(r.project_dir, std::fs::canonicalize(&e.project).unwrap());
    assert_eq!(r.session.meta.title.as_deref(), Some("my-project"));
    assert_eq!(r.session.message_count(), 2);
    // Restoring leaves the file in place.
    assert!(path.exists());
}

#[test]
fn list_is_sorted_by_closed_at_and_names_the_files_it_skips() {
    let e = env();
    e.store
        .save(&doc("a", &e.project, "2025-12-16T16:00:00Z"))
        .unwrap();
    e.store
        .save(&doc("b", &e.project, "2025-12-17T09:00:00+02:00"))
        .unwrap();
    e.store
        .save(&doc("c", &e.project, "2025-12-15T00:00:00Z"))
        .unwrap();
    std::fs::write(e.store.dir().join("broken.json"), "{\"id\": ").unwrap();
    std::fs::write(e.store.dir().join("notes.txt"), "x").unwrap();
    std::fs::write(e.store.dir().join(".a.json.123.4.tmp"), "x").unwrap();
    let l = e.store.list_persisted().unwrap();
    let got: Vec<(&str, &str, &str)> = l
        .sessions
        .iter()
        .map(|s| (s.id.as_str(), s.name.as_str(), s.closed_at.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("b", "my-project", "2025-12-17T09:00:00+02:00"),
            ("a", "my-project", "2025-12-16T16:00:00Z"),
            ("c", "my-project", "2025-12-15T00:00:00Z"),
        ]
    );
    assert_eq!(l.skipped.len(), 1);
    assert!(l.skipped[0].1.contains("broken.json:1:"), "{:?}", l.skipped);
}

#[test]
fn delete_and_clear_all_remove_only_session_files() {
    let e = env();
    e.store
        .save(&doc("a", &e.project, "2025-12-16T16:00:00Z"))
        .unwrap();
    e.store
        .save(&doc("b", &e.project, "2025-12-16T16:00:00Z"))
        .unwrap();
    std::fs::write(e.store.dir().join("keep.txt"), "x").unwrap();
    assert!(e.store.delete("a").unwrap());
    assert!(!e.store.delete("a").unwrap());
    assert!(matches!(
        e.store.delete("../a"),
        Err(StoreError::InvalidName { .. })
    ));
    assert_eq!(e.store.clear_all().unwrap(), 1);
    assert!(e.store.list_persisted().unwrap().sessions.is_empty());
    assert!(e.store.dir().join("keep.txt").exists());
    assert_eq!(
        JidoStore::new(e.store.dir().join("absent"))
            .clear_all()
            .unwrap(),
        0
    );
}

#[test]
fn ids_are_checked_as_file_names() {
    let e = env();
    for bad in ["../escape", "a/b", "", ".hidden", ".."] {
        let mut d = doc("x", &e.project, "2025-12-16T16:00:00Z");
        d["id"] = json!(bad);
        assert!(e.store.save(&d).is_err(), "{bad:?} saved");
        assert!(e.store.restore(bad).is_err(), "{bad:?} restored");
    }
    // Not only UUIDs: the seed's own test id is accepted.
    e.store
        .save(&doc("test-session-id", &e.project, "2025-12-16T16:00:00Z"))
        .unwrap();
}

fn err_text(r: Result<impl std::fmt::Debug, StoreError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn validation_errors_name_the_field_and_the_problem() {
    let e = env();
    let mut d = doc("v", &e.project, "2025-12-16T16:00:00Z");
    d["conversation"][1]["role"] = json!("robot");
    d["conversation"][0]["timestamp"] = json!("last tuesday");
    d["todos"][0]["status"] = json!("done");
    d.as_object_mut().unwrap().remove("created_at");
    let msg = err_text(e.store.save(&d));
    assert!(
        msg.contains("not a valid jido session (4 problems)"),
        "{msg}"
    );
    for needle in [
        "created_at: required field is missing",
        "conversation[0].timestamp: must be an ISO 8601 timestamp such as 2025-12-16T10:30:00Z, found \"last tuesday\"",
        "conversation[1].role: must be one of user, assistant, system, tool, found \"robot\"",
        "todos[0].status: must be one of pending, in_progress, completed, found \"done\"",
    ] {
        assert!(msg.contains(needle), "{msg} lacks {needle}");
    }
    assert!(
        !e.store.dir().join("v.json").exists(),
        "an invalid session was written"
    );

    // The same checks on restore, for a file written by someone else.
    std::fs::create_dir_all(e.store.dir()).unwrap();
    std::fs::write(
        e.store.dir().join("v.json"),
        serde_json::to_vec(&d).unwrap(),
    )
    .unwrap();
    let msg = err_text(e.store.restore("v"));
    assert!(
        msg.contains("v.json: not a valid jido session (4 problems)"),
        "{msg}"
    );
    std::fs::write(e.store.dir().join("w.json"), b"{\n  \"id\": oops\n}").unwrap();
    let msg = err_text(e.store.restore("w"));
    assert!(msg.contains("w.json:2:"), "{msg}");
    let mut other = doc("someone-else", &e.project, "2025-12-16T16:00:00Z");
    other["id"] = json!("someone-else");
    std::fs::write(
        e.store.dir().join("x.json"),
        serde_json::to_vec(&other).unwrap(),
    )
    .unwrap();
    assert!(err_text(e.store.restore("x")).contains("does not match the file name"));
}

#[test]
fn restore_migrates_an_older_version_and_refuses_a_newer_one() {
    let e = env();
    std::fs::create_dir_all(e.store.dir()).unwrap();
    // Version 0: no version field, no config, todos or closed_at.
    let old = json!({
        "id": "old",
        "project_path": e.project.display().to_string(),
        "created_at": "2025-01-01T10:00:00Z",
        "updated_at": "2025-01-01T11:00:00Z",
        "conversation": [{"id": "m1", "role": "user", "content": "hi", "timestamp": "2025-01-01T10:00:01Z"}]
    });
    std::fs::write(
        e.store.dir().join("old.json"),
        serde_json::to_vec(&old).unwrap(),
    )
    .unwrap();
    let r = e.store.restore("old").unwrap();
    assert_eq!(r.from_version, 0);
    assert_eq!(r.migrations.len(), 1);
    assert_eq!(r.document["version"], 1);
    assert_eq!(r.document["name"], "my-project");
    assert_eq!(r.document["closed_at"], "2025-01-01T11:00:00Z");
    assert_eq!(r.document["todos"], json!([]));
    assert_eq!(r.document["config"]["provider"], "anthropic");
    assert_eq!(r.session.meta.model.max_tokens, Some(4096));
    // The file itself is not rewritten by a restore; saving writes version 1.
    let on_disk: Value =
        serde_json::from_slice(&std::fs::read(e.store.dir().join("old.json")).unwrap()).unwrap();
    assert_eq!(on_disk, old);
    e.store.save(&r.document).unwrap();
    assert_eq!(e.store.restore("old").unwrap().from_version, 1);

    let mut newer = doc("new", &e.project, "2025-12-16T16:00:00Z");
    newer["version"] = json!(2);
    std::fs::write(
        e.store.dir().join("new.json"),
        serde_json::to_vec(&newer).unwrap(),
    )
    .unwrap();
    let msg = err_text(e.store.restore("new"));
    assert!(
        msg.contains("new.json: version 2 is newer than this build supports (up to 1)"),
        "{msg}"
    );
}

#[test]
fn restore_checks_the_project_directory() {
    let e = env();
    let home = e
        .store
        .dir()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let file = e.project.join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let cases: Vec<(PathBuf, &str)> = vec![
        (e.project.join("gone"), "project directory no longer exists"),
        (file, "is not a directory"),
        (PathBuf::from("/etc"), "forbidden"),
        (PathBuf::from("/"), "forbidden"),
        (PathBuf::from("/usr"), "forbidden"),
        (home.clone(), "the home directory itself"),
    ];
    std::fs::create_dir_all(&home).unwrap();
    for (i, (project, needle)) in cases.iter().enumerate() {
        let id = format!("p{i}");
        let mut d = doc(&id, project, "2025-12-16T16:00:00Z");
        d["project_path"] = json!(project.display().to_string());
        e.store.save(&d).unwrap();
        let msg = err_text(e.store.restore(&id));
        assert!(
            msg.contains("project_path") && msg.contains(needle),
            "{}: {msg}",
            project.display()
        );
    }
    #[cfg(unix)]
    {
        // A link to a forbidden directory is resolved before the check.
        let link = e.project.join("etc-link");
        std::os::unix::fs::symlink("/etc", &link).unwrap();
        e.store
            .save(&doc("link", &link, "2025-12-16T16:00:00Z"))
            .unwrap();
        assert!(err_text(e.store.restore("link")).contains("inside /etc"));
    }
}

#[test]
fn save_trims_and_caps_user_text() {
    let e = env();
    let mut d = doc("s", &e.project, "2025-12-16T16:00:00Z");
    d["name"] = json!("  spaced name \n");
    d["conversation"][0]["content"] = json!(format!(
        "  {}  ",
        "x".repeat(sanitize::MAX_CONTENT_CHARS + 10)
    ));
    d["todos"][0]["active_form"] = json!("\tdoing it ");
    e.store.save(&d).unwrap();
    let r = e.store.restore("s").unwrap();
    assert_eq!(r.document["name"], "spaced name");
    assert_eq!(
        r.document["conversation"][0]["content"]
            .as_str()
            .unwrap()
            .chars()
            .count(),
        sanitize::MAX_CONTENT_CHARS
    );
    assert_eq!(r.document["todos"][0]["active_form"], "doing it");
}

#[test]
fn sessions_from_other_formats_save_with_a_fidelity_report() {
    use agentlog_model::{
        Agent, Block, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp,
    };
    let e = env();
    let mut meta = SessionMeta::new("conv-1", Agent::Codex);
    meta.format = Some("codex".into());
    meta.cwd = Some(e.project.display().to_string());
    let mut s = Session::new(meta);
    let mut a = Message::text(Role::Assistant, "done");
    a.content
        .push(Block::tool_call(Some("c".into()), "shell", json!({})));
    s.push(
        Entry::new(
            "u",
            None,
            EntryKind::Message(Message::text(Role::User, "go")),
        )
        .at(Timestamp::Text("2026-01-01T00:00:00Z".into())),
    );
    s.push(
        Entry::new("a", Some("u".into()), EntryKind::Message(a))
            .at(Timestamp::Text("2026-01-01T00:00:05Z".into())),
    );
    let (path, fid) = e.store.save_session(&s).unwrap();
    assert!(fid.losses.iter().any(|l| l.what == "tool calls"), "{fid}");
    assert!(path.ends_with("conv-1.json"));
    let r = e.store.restore("conv-1").unwrap();
    assert_eq!(r.session.first_prompt().as_deref(), Some("go"));
    assert_eq!(r.document["closed_at"], "2026-01-01T00:00:05Z");
}
