//! The pi format: lossless round-trip of every real pi file, entry kinds,
//! tree shape, conversion, and robustness against damaged files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_formats::{registry, Format, Severity};
use agentlog_model::{
    Agent, BlockKind, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn pi() -> &'static dyn Format {
    registry::by_name("pi").unwrap()
}

/// The JSON values of the lines that parse, in order.
fn values(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect()
}

fn write(session: &Session) -> (Vec<u8>, agentlog_formats::Fidelity) {
    let mut out = Vec::new();
    let f = pi().write(session, &mut out).unwrap();
    (out, f)
}

fn kinds(s: &Session) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for e in &s.entries {
        let k = match &e.kind {
            EntryKind::Message(msg) => format!("message:{}", msg.role),
            k => k.name().to_string(),
        };
        *m.entry(k).or_default() += 1;
    }
    m
}

#[test]
fn entry_kinds_are_counted_like_the_notes_say() {
    let p = Path::new(FIXTURES).join("seeds/pi-mono/before-compaction.jsonl");
    let read = pi().read_path(&p).unwrap();
    let k = kinds(&read.session);
    assert_eq!(k["message:assistant"], 484);
    assert_eq!(k["message:tool"], 448);
    assert_eq!(k["message:user"], 55);
    assert_eq!(k["message:bashExecution"], 3);
    assert_eq!(k["thinking_level_change"], 5);
    assert_eq!(k["model_change"], 5);
    assert_eq!(k["compaction"], 2);
    assert_eq!(read.session.entries.len(), 1002);
    assert!(read
        .diagnostics
        .iter()
        .any(|d| d.code == "v1" && d.severity == Severity::Info));
    // v1: derived ids, one linear chain.
    let e = &read.session.entries;
    assert_eq!(e[0].id, "line2");
    assert_eq!(e[0].parent_id, None);
    assert!(e
        .windows(2)
        .all(|w| w[1].parent_id.as_deref() == Some(w[0].id.as_str())));
    assert_eq!(read.session.meta.parent_session, None);
    assert_eq!(
        read.session.meta.model.model.as_deref(),
        Some("claude-opus-4-5")
    );

    let p = Path::new(FIXTURES).join("seeds/pi-mono/generated/v3-tree-all-entry-types.jsonl");
    let read = pi().read_path(&p).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    let k = kinds(&read.session);
    let want: BTreeMap<String, usize> = [
        ("model_change", 1),
        ("thinking_level_change", 1),
        ("message:user", 2),
        ("message:assistant", 4),
        ("message:tool", 1),
        ("label", 1),
        ("custom", 1),
        ("custom_message", 1),
        ("session_info", 1),
        ("compaction", 1),
        ("branch_summary", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(k, want);
}

#[test]
fn the_tree_has_the_shape_of_the_file() {
    let p = Path::new(FIXTURES).join("seeds/pi-mono/generated/v3-tree-all-entry-types.jsonl");
    let s = pi().read_path(&p).unwrap().session;
    assert_eq!(s.meta.format_version, Some(Value::from(3)));
    assert_eq!(s.leaf_id.as_deref(), Some("a1d66362"));
    let tree = s.tree();
    assert_eq!(tree.roots().len(), 1);
    let points: Vec<&str> = tree.branch_points().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(points, ["bb1761ff"]);
    let path: Vec<&str> = s.active_branch().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        path,
        ["20a7c36c", "1521c0af", "bb1761ff", "086c11f9", "a1d66362"]
    );
    let leaves: Vec<&str> = tree.leaves().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(leaves, ["f22d7964", "a1d66362"]);
    // Usage and content mapping.
    let m = s.entries[3].message().unwrap();
    assert_eq!(m.role, Role::Assistant);
    let u = m.usage.as_ref().unwrap();
    assert_eq!(
        (u.input, u.output, u.cache_read, u.total, u.cost_usd),
        (10, 5, 0, Some(15), Some(0.0))
    );
    assert!(matches!(&m.content[0].kind, BlockKind::ToolCall { name, .. } if name == "bash"));
    assert_eq!(m.timestamp, Some(Timestamp::Millis(2)));
    let user = s.entries[2].message().unwrap();
    assert!(user.content_is_text);
    assert_eq!(user.text_content(), "List the files");
    let tool = s.entries[4].message().unwrap();
    assert_eq!(tool.role, Role::Tool);
    assert_eq!(tool.tool_name.as_deref(), Some("bash"));
}

#[test]
fn omp_and_agentsview_shapes_read() {
    let p = Path::new(FIXTURES).join("native/secondary/pi/agentsview-session.jsonl");
    let read = pi().read_path(&p).unwrap();
    let codes: Vec<(Option<u64>, &str)> =
        read.diagnostics.iter().map(|d| (d.line, d.code)).collect();
    assert_eq!(
        codes,
        [(Some(10), "invalid-json"), (Some(11), "unknown-type")]
    );
    let last = read.session.entries.last().unwrap();
    assert!(
        matches!(&last.kind, EntryKind::Unknown { record_type: Some(t), .. } if t == "unknown_future_entry_type")
    );
    let thinking = &read.session.entries[1].message().unwrap().content[0];
    assert!(
        matches!(&thinking.kind, BlockKind::Thinking { signature: Some(s), redacted: false, .. } if s == "sig-abc")
    );
}

fn read_str(text: &[u8]) -> agentlog_formats::Read {
    pi().read_bytes(Path::new("t.jsonl"), text).unwrap()
}

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#;

fn msg_line(id: &str, parent: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-01-01T00:00:01Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

#[test]
fn a_torn_last_line_is_a_diagnostic_and_the_rest_reads() {
    let text = format!(
        "{HEADER}\n{}\n{}",
        msg_line("a", "null", "x"),
        &msg_line("b", "a", "y")[..40]
    );
    let r = read_str(text.as_bytes());
    assert_eq!(r.session.entries.len(), 1);
    let d = &r.diagnostics[0];
    assert_eq!((d.line, d.code), (Some(3), "torn-tail"));
}

#[test]
fn an_invalid_line_mid_file_is_skipped_with_its_line_number() {
    let text = format!(
        "{HEADER}\n{}\n{{oops\n{}\n",
        msg_line("a", "null", "x"),
        msg_line("b", "a", "y")
    );
    let r = read_str(text.as_bytes());
    assert_eq!(r.session.entries.len(), 2);
    assert_eq!(
        (r.diagnostics[0].line, r.diagnostics[0].code),
        (Some(3), "invalid-json")
    );
    assert_eq!(r.session.entries[1].parent_id.as_deref(), Some("a"));
}

#[test]
fn unknown_record_types_are_kept_verbatim() {
    let odd =
        r#"{"type":"future_thing","id":"z","parentId":"a","timestamp":"t","payload":{"k":[1,2]}}"#;
    let text = format!("{HEADER}\n{}\n{odd}\n", msg_line("a", "null", "x"));
    let r = read_str(text.as_bytes());
    assert_eq!(
        (r.diagnostics[0].line, r.diagnostics[0].code),
        (Some(3), "unknown-type")
    );
    assert_eq!(r.session.entries[1].id, "z");
    let (out, _) = write(&r.session);
    assert_eq!(values(&out)[2], serde_json::from_str::<Value>(odd).unwrap());
}

#[test]
fn an_unknown_version_is_read_as_the_newest() {
    let header = HEADER.replace("\"version\":3", "\"version\":99");
    let text = format!("{header}\n{}\n", msg_line("a", "null", "x"));
    let r = read_str(text.as_bytes());
    assert_eq!(
        (r.diagnostics[0].line, r.diagnostics[0].code),
        (Some(1), "unknown-version")
    );
    assert_eq!(r.session.entries.len(), 1);
    assert_eq!(r.session.entries[0].id, "a");
    let (out, _) = write(&r.session);
    assert_eq!(values(&out)[0]["version"], 99);
}

#[test]
fn invalid_utf8_is_a_diagnostic() {
    let mut text = format!("{HEADER}\n").into_bytes();
    text.extend_from_slice(b"{\"type\":\"message\",\"id\":\"q\",\"x\":\"\xff\xfe\"}\n");
    text.extend_from_slice(msg_line("a", "null", "x").as_bytes());
    text.push(b'\n');
    let r = read_str(&text);
    assert_eq!(
        (r.diagnostics[0].line, r.diagnostics[0].code),
        (Some(2), "invalid-utf8")
    );
    assert_eq!(r.session.entries.len(), 1);
}

#[test]
fn a_fifty_megabyte_line_reads() {
    let big = "x".repeat(50 * 1024 * 1024);
    let text = format!(
        "{HEADER}\n{}\n{}\n",
        msg_line("a", "null", &big),
        msg_line("b", "a", "after")
    );
    let r = read_str(text.as_bytes());
    assert!(r.diagnostics.is_empty());
    assert_eq!(
        r.session.entries[0].message().unwrap().text_content().len(),
        big.len()
    );
    assert_eq!(r.session.entries[1].id, "b");
    // Torn in the middle of the big line: a diagnostic, the rest still read.
    let text = format!(
        "{HEADER}\n{}\n{}",
        msg_line("b", "null", "before"),
        &msg_line("a", "b", &big)[..30_000_000]
    );
    let r = read_str(text.as_bytes());
    assert_eq!(r.session.entries.len(), 1);
    assert_eq!(
        (r.diagnostics[0].line, r.diagnostics[0].code),
        (Some(3), "torn-tail")
    );
}

#[test]
fn a_converted_session_is_written_as_version_3_with_a_fidelity_report() {
    let mut meta = SessionMeta::new("conv-1", Agent::Claude);
    meta.format = Some("claude".into());
    meta.cwd = Some("/work".into());
    meta.created_at = Some(Timestamp::Text("2025-02-02T10:00:00.000Z".into()));
    let mut s = Session::new(meta);
    s.push(
        Entry::new(
            "u1",
            None,
            EntryKind::Message(Message::text(Role::User, "run ls")),
        )
        .at(Timestamp::Text("2025-02-02T10:00:01.000Z".into())),
    );
    let mut a = Message::new(Role::Assistant);
    a.content.push(agentlog_model::Block::tool_call(
        Some("c1".into()),
        "bash",
        serde_json::json!({"command":"ls"}),
    ));
    a.id = Some("msg_1".into());
    s.push(Entry::new("a1", Some("u1".into()), EntryKind::Message(a)));
    let mut r = Message::new(Role::User);
    r.content.push(agentlog_model::Block::tool_result(
        Some("c1".into()),
        vec![agentlog_model::Block::text("a.txt")],
        false,
    ));
    r.content.push(agentlog_model::Block::tool_result(
        Some("c1".into()),
        vec![agentlog_model::Block::text("b.txt")],
        true,
    ));
    s.push(Entry::new("r1", Some("a1".into()), EntryKind::Message(r)));
    s.push(Entry::new(
        "n1",
        Some("r1".into()),
        EntryKind::Message(Message::text(Role::Assistant, "done")),
    ));
    s.push(Entry::new(
        "x1",
        Some("n1".into()),
        EntryKind::RunStart {
            run_id: "run".into(),
            input: Value::Null,
        },
    ));
    let (out, fidelity) = write(&s);
    let v = values(&out);
    assert_eq!(v[0]["type"], "session");
    assert_eq!(v[0]["version"], 3);
    assert_eq!(v[0]["cwd"], "/work");
    assert_eq!(v[3]["message"]["role"], "toolResult");
    assert_eq!(v[3]["id"], "r1");
    assert_eq!(v[3]["message"]["toolName"], "bash");
    assert_eq!(v[4]["id"], "r1-1");
    assert_eq!(v[4]["parentId"], "r1");
    assert_eq!(v[4]["message"]["isError"], true);
    assert_eq!(
        v[5]["parentId"], "r1-1",
        "the next entry hangs below the last result"
    );
    assert_eq!(v[6]["type"], "custom");
    assert_eq!(v[6]["customType"], "agentlog.run_start");
    let lost: Vec<&str> = fidelity.losses.iter().map(|l| l.what.as_str()).collect();
    assert!(lost.iter().any(|w| w.contains("run_start")), "{lost:?}");
    assert!(lost.iter().any(|w| w.contains("message ids")), "{lost:?}");
    // pi reads it back as a tree with one branch; the run start comes back.
    let back = pi().read_bytes(Path::new("c.jsonl"), &out).unwrap();
    assert!(back.diagnostics.is_empty(), "{:?}", back.diagnostics);
    assert_eq!(back.session.active_branch().len(), 6);
    let last = back.session.entries.last().unwrap();
    assert!(
        matches!(&last.kind, EntryKind::RunStart { run_id, .. } if run_id == "run"),
        "{last:?}"
    );
    let (again, f) = write(&back.session);
    assert!(f.is_lossless(), "{f}");
    assert_eq!(values(&again), v);
}

#[test]
fn discovery_and_resume_use_pis_locations() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".pi/agent/sessions/--p--");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.jsonl"), format!("{HEADER}\n")).unwrap();
    let omp = home.path().join(".omp/agent/sessions/--q--");
    std::fs::create_dir_all(&omp).unwrap();
    std::fs::write(omp.join("b.jsonl"), format!("{HEADER}\n")).unwrap();
    let mut env = agentlog_formats::discover::DiscoverEnv::with_home(home.path());
    assert_eq!(pi().discover(&env).len(), 2);
    let custom = home.path().join("custom");
    env.vars.insert(
        "PI_CODING_AGENT_DIR".into(),
        custom.to_string_lossy().into_owned(),
    );
    let s = read_str(format!("{HEADER}\n").as_bytes()).session;
    let plan = pi().resume_plan(&s, &env).unwrap();
    assert_eq!(
        plan.path,
        custom.join("sessions/--p--/2025-01-01T00-00-00-000Z_s1.jsonl")
    );
    assert!(plan.command.starts_with("pi --session "));
    assert_eq!(plan.cwd.as_deref(), Some(Path::new("/p")));
}

#[test]
fn records_outside_the_tree_keep_their_text_however_large_the_file() {
    // Large enough to be parsed on a second thread from bytes as from the
    // file; the records outside the tree are written with spaces no
    // serializer would write, and are kept as written (written back, they
    // are the same records).
    let odd = [
        r#"{ "note" : "kept as written" }"#,
        r#"{"x":1,  "y" : [ ]}"#,
    ];
    let mut text = format!("{HEADER}\n");
    let mut parent = "null".to_string();
    let mut n = 0;
    while text.len() < 10 << 20 {
        n += 1;
        let id = format!("m{n}");
        text += &msg_line(&id, &parent, &"w".repeat(500));
        text.push('\n');
        if n % 5000 == 0 {
            text += odd[(n / 5000) % 2];
            text.push('\n');
        }
        parent = id;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    std::fs::write(&path, &text).unwrap();
    for read in [
        pi().read_path(&path).unwrap(),
        pi().read_bytes(&path, text.as_bytes()).unwrap(),
    ] {
        let kept: Vec<&str> = read
            .session
            .entries
            .iter()
            .filter_map(|e| match &e.kind {
                EntryKind::Unknown {
                    raw: Value::String(s),
                    ..
                } => Some(s.as_str()),
                _ => None,
            })
            .collect();
        assert!(kept.len() >= 3, "{} records kept outside", kept.len());
        assert!(read.diagnostics.iter().all(|d| d.code == "outside-tree"));
        for (i, k) in kept.iter().enumerate() {
            assert_eq!(*k, odd[(i + 1) % 2]);
        }
        let (out, _) = write(&read.session);
        assert!(values(&out) == values(text.as_bytes()), "written back");
    }
}
