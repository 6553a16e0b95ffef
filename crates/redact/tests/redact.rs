//! Redaction of planted secrets in text, sessions, every writable format and
//! raw files; false positives on the real fixtures.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use base64::Engine as _;

use agentlog_bench::secrets::{
    all_secrets, forms, leaks, planted, planted_session, planted_text, Planted,
};
use agentlog_formats::{registry, Format, Severity, Written};
use agentlog_model::{BlockKind, EntryKind, Session};
use agentlog_redact::{fingerprint, Redactor};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn redactor() -> &'static Redactor {
    Redactor::builtin().unwrap()
}

#[test]
fn every_planted_kind_is_found_exactly_in_text() {
    for seed in 0..20 {
        for p in planted(seed) {
            let mut text = p.text.clone();
            let report = redactor().text(&mut text, "t");
            let kinds: Vec<&str> = report.findings.iter().map(|f| f.kind.as_str()).collect();
            assert_eq!(kinds, [p.kind], "seed {seed}: {:?} in {:?}", kinds, p.text);
            assert_eq!(
                report.findings[0].fingerprint,
                fingerprint(&p.secret),
                "seed {seed} {}: the whole secret and only it is matched",
                p.kind
            );
            assert!(leaks(&text, seed).is_empty(), "{text}");
            assert!(text.contains(&format!("[REDACTED:{}]", p.kind)), "{text}");
        }
    }
}

#[test]
fn at_least_25_kinds_are_planted_and_detected() {
    let kinds: BTreeSet<&str> = planted(1).iter().map(|p| p.kind).collect();
    assert!(kinds.len() >= 25, "{}", kinds.len());
    let known: BTreeSet<String> = redactor().kinds().into_iter().map(|k| k.id).collect();
    for k in &kinds {
        assert!(known.contains(*k), "{k}");
    }
}

#[test]
fn the_report_never_holds_a_secret() {
    let mut s = planted_session(3);
    let report = redactor().session(&mut s);
    let json = serde_json::to_string(&report).unwrap();
    assert!(leaks(&json, 3).is_empty());
    assert!(leaks(&report.to_string(), 3).is_empty());
}

fn expected_kinds(seed: u64) -> BTreeSet<String> {
    all_secrets(seed).into_iter().map(|(k, _)| k).collect()
}

#[test]
fn a_session_is_redacted_in_every_field() {
    let seed = 5;
    let mut s = planted_session(seed);
    let before = serde_json::to_string(&s).unwrap();
    assert!(!leaks(&before, seed).is_empty());
    let report = redactor().session(&mut s);
    let after = serde_json::to_string_pretty(&s).unwrap();
    assert_eq!(leaks(&after, seed), Vec::<String>::new());
    let kinds: BTreeSet<String> = report.findings.iter().map(|f| f.kind.clone()).collect();
    assert_eq!(kinds, expected_kinds(seed));
    // Every field was reached: each location that held text reports every
    // text kind.
    let fields: BTreeSet<(Option<String>, String)> = report
        .findings
        .iter()
        .map(|f| (f.location.entry.clone(), f.location.field.clone()))
        .collect();
    for want in [
        (None, "meta.title"),
        (None, "meta.cwd"),
        (None, "meta.extra.note"),
        (None, "meta.todos[0].content"),
        (None, "meta.todos[0].active_form"),
        (Some("e0001"), "content[0].text"),
        (Some("e0001"), "extra.env.command"),
        (Some("e0001"), "extra.env.client_secret"),
        (Some("e0002"), "content[0].thinking"),
        (Some("e0002"), "content[1].text"),
        (Some("e0002"), "content[2].input.command"),
        (Some("e0002"), "content[2].input.SecretAccessKey"),
        (Some("e0002"), "content[3].input.command"),
        (Some("e0002"), "message_extra.note"),
        (Some("e0003"), "content[0].content[0].text"),
        (Some("e0004"), "content[0].content[0].text"),
        (Some("e0005"), "summary"),
        (Some("e0005"), "details.notes"),
        (Some("e0006"), "summary"),
        (Some("e0007"), "data.command"),
        (Some("e0008"), "output"),
        (Some("e0009"), "payload.text"),
        (Some("e0010"), "raw.body"),
    ] {
        assert!(
            fields.contains(&(want.0.map(str::to_string), want.1.to_string())),
            "{want:?} not in {fields:?}"
        );
    }
    // Tool arguments stay JSON: the object stays an object, the string form
    // stays a string that parses.
    let msg = s.entries[1].message().unwrap();
    match &msg.content[2].kind {
        BlockKind::ToolCall { input, .. } => {
            assert!(input.is_object());
            assert_eq!(input["client_secret"], "[REDACTED:secret-field]");
        }
        other => panic!("{other:?}"),
    }
    match &msg.content[3].kind {
        BlockKind::ToolCall {
            input: Value::String(text),
            ..
        } => {
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(v["SecretAccessKey"], "[REDACTED:aws-secret-access-key]");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(s.entries[9].kind, EntryKind::Unknown { .. }));
}

#[test]
fn redacting_twice_finds_nothing_the_second_time() {
    let mut s = planted_session(8);
    assert!(!redactor().session(&mut s).is_empty());
    let once = s.clone();
    let again = redactor().session(&mut s);
    assert!(again.is_empty(), "{again}");
    assert_eq!(s, once);
}

fn write(format: &dyn Format, s: &Session) -> Written {
    format.write_session(s).unwrap().0
}

/// The bytes of every file written.
fn all_bytes(w: &Written) -> Vec<u8> {
    w.files().iter().flat_map(|(_, b)| b.to_vec()).collect()
}

/// A new folder under `dir` to write a folder format's session into.
fn scratch(dir: &Path) -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.join(format!("folder-{n}"))
}

fn read(format: &dyn Format, dir: &Path, w: &Written) -> Session {
    let read = match w {
        Written::File(bytes) => {
            let path = Path::new("planted").with_extension(format.extension());
            format.read_bytes(&path, bytes).unwrap()
        }
        Written::Folder(_) => {
            let path = scratch(dir);
            w.write_plain(&path).unwrap();
            format.read_path(&path).unwrap()
        }
    };
    let errors: Vec<String> = read
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}", format.name());
    read.session
}

fn validate(format: &dyn Format, dir: &Path, w: &Written) {
    let path = match w {
        Written::File(_) => dir.join(format!("session-redacted.{}", format.extension())),
        Written::Folder(_) => scratch(dir),
    };
    w.write_plain(&path).unwrap();
    let errors: Vec<String> = format
        .validate(&path)
        .unwrap()
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}", format.name());
}

/// The planted secrets whose text a format's file holds.
fn surviving(bytes: &[u8], seed: u64) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(bytes);
    all_secrets(seed)
        .into_iter()
        .filter(|(_, s)| forms(s)[..2].iter().any(|f| text.contains(f.as_str())))
        .collect()
}

#[test]
fn every_writable_format_is_scanned_and_redacted_and_still_validates() {
    let dir = tempfile::tempdir().unwrap();
    let seed = 11;
    let planted_s = planted_session(seed);
    for format in registry::all().iter().filter(|f| f.can_write()) {
        let name = format.name();
        // Written with its secrets, the file is scanned: every secret the
        // format kept is found.
        let written = write(*format, &planted_s);
        let bytes = all_bytes(&written);
        let kept = surviving(&bytes, seed);
        let kept_kinds: BTreeSet<&str> = kept.iter().map(|(k, _)| k.as_str()).collect();
        assert!(
            kept_kinds.len() >= 25,
            "{name} keeps only {} kinds: {kept_kinds:?}",
            kept_kinds.len()
        );
        let back = read(*format, dir.path(), &written);
        let found: BTreeSet<String> = redactor()
            .scan_session(&back)
            .findings
            .into_iter()
            .map(|f| f.fingerprint)
            .collect();
        for (kind, secret) in &kept {
            assert!(
                found.contains(&fingerprint(secret)),
                "{name}: scan missed the {kind} the file holds"
            );
        }
        // Redacted and written, nothing is left and the file validates.
        let mut red = planted_s.clone();
        redactor().session(&mut red);
        let out = write(*format, &red);
        assert_eq!(
            leaks(&String::from_utf8_lossy(&all_bytes(&out)), seed),
            Vec::<String>::new(),
            "{name}"
        );
        read(*format, dir.path(), &out);
        validate(*format, dir.path(), &out);
        // The file (each file) with secrets, scrubbed as bytes, keeps
        // nothing and still reads and validates.
        let mut found = 0;
        let mut scrub = |b: &[u8]| {
            let (scrubbed, report) = redactor().bytes(b).unwrap();
            found += report.len();
            scrubbed
        };
        let scrubbed = match &written {
            Written::File(b) => Written::File(scrub(b)),
            Written::Folder(files) => {
                Written::Folder(files.iter().map(|(p, b)| (p.clone(), scrub(b))).collect())
            }
        };
        assert!(found > 0, "{name}");
        assert_eq!(
            leaks(&String::from_utf8_lossy(&all_bytes(&scrubbed)), seed),
            Vec::<String>::new(),
            "{name} scrubbed"
        );
        let again = read(*format, dir.path(), &scrubbed);
        assert_eq!(again.entries.len(), back.entries.len(), "{name}");
        validate(*format, dir.path(), &scrubbed);
    }
}

#[test]
fn raw_json_lines_keep_every_untouched_byte() {
    let p: Vec<Planted> = planted(4);
    let line1 = r#"{"a": 1.50, "b": "caf\u00e9",   "c": [true, null]}"#;
    let line2 =
        serde_json::json!({"type": "x", "text": planted_text(&p), "password": "s3cr3t-v4lue"})
            .to_string();
    let line3 = "not json at all: export GITHUB_TOKEN=".to_string() + &p[4].secret;
    let input = format!("{line1}\n{line2}\n{line3}\n");
    let (out, report) = redactor().bytes(input.as_bytes()).unwrap();
    let out = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], line1, "untouched lines are byte-exact");
    let v: Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(v["password"], "[REDACTED:secret-field]");
    assert_eq!(v["type"], "x");
    assert!(lines[2].starts_with("not json at all: export GITHUB_TOKEN=[REDACTED:"));
    assert!(leaks(&out, 4).is_empty());
    assert!(report.findings.iter().any(|f| f.location.line == Some(3)));
    assert!(report
        .findings
        .iter()
        .any(|f| f.location.line == Some(2) && f.location.field == "password"));
}

#[test]
fn binary_and_non_utf8_files_are_refused() {
    assert!(redactor().bytes(b"SQLite format 3\0\0").is_err());
    let err = redactor().bytes(b"ok \xff\xfe").unwrap_err().to_string();
    assert!(err.contains("offset 3"), "{err}");
}

#[test]
fn hostile_text_does_not_confuse_the_redactor() {
    // Escape sequences, HTML, huge and tiny strings, a torn JSON line.
    let key = ["gh", "p_"].concat() + &"Ab1".repeat(12);
    let mut text = format!("\x1b[31m<script>{key}</script>\u{202e}") + &"x".repeat(1 << 20);
    let r = redactor().text(&mut text, "t");
    assert_eq!(r.len(), 1);
    assert!(!text.contains(&key));
    let torn = format!("{{\"a\":\"ok\"}}\n{{\"text\":\"{key}");
    let (out, r) = redactor().bytes(torn.as_bytes()).unwrap();
    assert_eq!(r.len(), 1);
    assert!(!String::from_utf8(out).unwrap().contains(&key));
    for tiny in ["", "a", "\"", "{", "[\"", "\\"] {
        redactor().bytes(tiny.as_bytes()).unwrap();
    }
}

fn fixture_files() -> Vec<std::path::PathBuf> {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures"
    ));
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(
        files.len() > 100,
        "fixtures not found under {}",
        root.display()
    );
    files
}

/// The findings on the real sample files: every one is a false positive
/// (they hold no real secret; their placeholders such as `sk-ant-...` and
/// `${{ secrets.GITHUB_TOKEN }}` are not reported).
const FIXTURE_FINDINGS: &[&str] = &[];

#[test]
fn false_positives_on_the_real_fixtures_are_exactly_these() {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures"
    ));
    let mut found = Vec::new();
    for f in fixture_files() {
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        if let Ok(format) = registry::detect(&f) {
            if let Ok(read) = format.read_path(&f) {
                for x in redactor().scan_session(&read.session).findings {
                    found.push(format!("{rel}: {} at {}", x.kind, x.location));
                }
            }
        }
        let bytes = std::fs::read(&f).unwrap();
        if let Ok((out, report)) = redactor().bytes(&bytes) {
            for x in &report.findings {
                found.push(format!("{rel} (raw): {} at {}", x.kind, x.location));
            }
            if report.is_empty() {
                assert!(out == bytes, "{rel}: nothing found, yet bytes changed");
            }
        }
    }
    assert_eq!(found, FIXTURE_FINDINGS);
}

/// A GitHub token built at run time (no secret in the source).
fn a_key() -> String {
    ["gh", "p_"].concat() + &"Ab1".repeat(12)
}

#[test]
fn disguised_secrets_are_found_in_text() {
    let key = a_key();
    let url_encoded: String = key
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if i % 3 == 0 {
                format!("%{:02X}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect();
    let fullwidth: String = key
        .chars()
        .map(|c| char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap())
        .collect();
    let (head, tail) = key.split_at(10);
    let disguised = [
        ("url-encoded", format!("GET /api?token={url_encoded}&x=1")),
        ("zero-width", format!("the key is {head}\u{200B}{tail} ok")),
        ("soft hyphen", format!("the key is {head}\u{00AD}{tail} ok")),
        ("fullwidth", format!("the key is {fullwidth} ok")),
        (
            "base64",
            format!(
                "Authorization: Basic {} ok",
                base64::engine::general_purpose::STANDARD.encode(format!("user:{key}"))
            ),
        ),
    ];
    for (what, text) in disguised {
        let mut t = text.clone();
        let r = redactor().text(&mut t, "t");
        assert_eq!(r.len(), 1, "{what}: {text:?} -> {t:?}");
        assert_eq!(t.matches("[REDACTED:").count(), 1, "{what}: {t:?}");
        // What surrounded the secret stays.
        assert!(t.ends_with(" ok") || t.ends_with("&x=1"), "{what}: {t:?}");
        assert!(!t.contains(tail) || what == "url-encoded", "{what}: {t:?}");
        if what == "base64" {
            assert!(
                !t.contains("Basic dXNlcj"),
                "{what}: the encoded run stays: {t:?}"
            );
        }
    }
    // Plain text with `%`, fullwidth and invisible characters but no
    // secret is left alone.
    for clean in [
        "100% done, 50%2 left, %zz",
        "ｆｕｌｌｗｉｄｔｈ text and\u{200B}zero width",
        "https://example.com/search?q=hello%20world&lang=en",
    ] {
        let mut t = clean.to_string();
        assert!(redactor().text(&mut t, "t").is_empty(), "{clean}");
        assert_eq!(t, clean);
    }
}

#[test]
fn a_secret_split_across_two_blocks_or_in_a_model_field_is_redacted() {
    use agentlog_model::{Block, Entry, Message, Role, SessionMeta};
    let key = a_key();
    let (head, tail) = key.split_at(15);
    let mut meta = SessionMeta::new("s", agentlog_model::Agent::Pi);
    meta.model.model = Some(key.clone());
    let mut s = Session::new(meta);
    let mut m = Message::text(Role::Assistant, format!("the token is {head}"));
    m.content.push(Block::text(format!("{tail} and more")));
    m.model = Some(key.clone());
    s.push(Entry::new("a1", None, EntryKind::Message(m)));
    s.push(Entry::new(
        "m1",
        Some("a1".into()),
        EntryKind::ModelChange {
            provider: None,
            model: key.clone(),
            role: None,
        },
    ));
    let report = redactor().session(&mut s);
    assert_eq!(report.len(), 4, "{report:?}");
    let json = serde_json::to_string(&s).unwrap();
    assert!(!json.contains(head) && !json.contains(tail), "{json}");
    let EntryKind::Message(m) = &s.entries[0].kind else {
        panic!()
    };
    assert_eq!(
        m.text_content(),
        "the token is [REDACTED:github-pat]\n\n[REDACTED:github-pat] and more"
    );
    assert!(redactor().scan_session(&s).is_empty());
}
