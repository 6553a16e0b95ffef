//! One conformance suite over every format in the registry.
//!
//! Each format lists where its real sample files are (`SAMPLES`); a format
//! without samples fails the suite, so a new format cannot land untested.
//! For every sample the suite checks the whole contract of
//! [`agentlog_formats::Format`]: discovery under a root, detection, reading
//! without errors, validation, the drift report, and for writable formats
//! that what the writer produces is detected and read back as the same
//! format with the same conversation (byte for byte where the format keeps
//! its records verbatim).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_formats::discover::DiscoverEnv;
use agentlog_formats::{registry, Format};
use std::path::{Path, PathBuf};

/// Where each format's sample files are: paths relative to the workspace
/// (`crates/…`) or to the shared fixtures (`shared/…`), files or folders;
/// `PATH as NAME` copies the sample under the name its agent gives files.
const SAMPLES: &[(&str, &[&str])] = &[
    (
        "pi",
        &[
            "crates/harness/fixtures/pi-0.73.1.jsonl",
            "shared/seeds/pi-mono",
            "shared/seeds/oh-my-pi",
            "shared/native/secondary/pi",
        ],
    ),
    (
        "claude",
        &[
            "crates/harness/fixtures/claude-2.1.330.jsonl",
            "shared/native/claude",
        ],
    ),
    (
        "codex",
        &[
            "crates/harness/fixtures/codex-0.169.0.jsonl as rollout-2026-11-23T21-39-34-0.jsonl",
            "shared/native/codex",
        ],
    ),
    (
        "gemini",
        &[
            "crates/harness/fixtures/gemini-0.61.0.jsonl as chats/session-2026-11-23T21-39-6c8242c4.jsonl",
            "crates/formats/tests/fixtures/gemini-0.61.0/session-resumed-set-parts.jsonl as chats/session-1.jsonl",
            "shared/native/gemini as chats",
        ],
    ),
    (
        "cursor",
        &[
            "shared/native/cursor",
        ],
    ),
    (
        "codelia",
        &["shared/seeds/codelia/session-store-spec-example.jsonl as 2026/01/02/run-1.jsonl"],
    ),
    ("jido", &["shared/seeds/jido_code/persistence-format-example.json"]),
    (
        "specstory",
        &[
            "shared/seeds/specstory/2026-05-20_09-00-00Z-list-the-workspace.md as history/2026-05-20_09-00-00Z-list-the-workspace.md",
            "shared/seeds/specstory/2026-02-23_23-01-52Z-all-provider-specific-token.md as history/2026-02-23_23-01-52Z-all-provider-specific-token.md",
        ],
    ),
    ("acpx", &["shared/seeds/acpx/record.json"]),
    ("json", &[]),
    (
        "copilot",
        &["crates/formats/tests/fixtures/copilot/1.0.102/session-state"],
    ),
    ("opencode", &["crates/formats/tests/fixtures/opencode/1.18.33"]),
    ("kilo", &["crates/formats/tests/fixtures/kilo/7.7.7"]),
    ("qwen", &["crates/formats/tests/fixtures/qwen/0.24.4/projects"]),
    ("cline", &["crates/formats/tests/fixtures/cline/3.0.65/sessions"]),
    ("aider", &["crates/formats/tests/fixtures/aider/0.86.2"]),
    (
        "droid",
        &[
            "crates/formats/tests/fixtures/droid/0.225.2/sessions",
            "shared/native/secondary/droid/as-session_store_small.jsonl",
            "shared/native/secondary/droid/as-stream_json_small.jsonl",
        ],
    ),
    (
        "vibe",
        &[
            "crates/formats/tests/fixtures/vibe/3.0.2/logs/session",
            "crates/formats/tests/fixtures/vibe/2.20.0/logs/session",
        ],
    ),
    ("kimi", &["crates/formats/tests/fixtures/kimi/1.51.0/sessions"]),
    (
        "continue",
        &["crates/formats/tests/fixtures/continue/1.5.47/sessions"],
    ),
    (
        "openhands",
        &[
            "crates/formats/tests/fixtures/openhands/0.62.0/sessions",
            "crates/formats/tests/fixtures/openhands/1.2.1/conversations",
        ],
    ),
    (
        "crush",
        &[
            "crates/formats/tests/fixtures/crush/mcpfier-2025-08",
            "crates/formats/tests/fixtures/crush/cisco-auto-2026-04",
        ],
    ),
    (
        "amp",
        &["crates/formats/tests/fixtures/amp/export-0.0.1785170481"],
    ),
    ("atif", &["crates/formats/tests/fixtures/atif/harbor-0.25.0/jobs"]),
];

/// Formats whose writer gives back a file it read as the same JSON values,
/// record for record (key order and number spelling aside).
const EXACT_ROUND_TRIP: &[&str] = &[
    "pi",
    "claude",
    "codex",
    "gemini",
    "codelia",
    "json",
    "droid",
    "copilot",
    "qwen",
    "acpx",
    "jido",
    "specstory",
    "kimi",
    "continue",
    "cline",
    "openhands",
    "atif",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn resolve(rel: &str) -> PathBuf {
    match rel.strip_prefix("shared/") {
        Some(r) => workspace().join("../shared/fixtures").join(r),
        None => workspace().join(rel),
    }
}

/// Copies `src` (a file or a folder) into `dst`.
fn copy(src: &Path, dst: &Path) {
    if src.is_dir() {
        std::fs::create_dir_all(dst).unwrap();
        for e in std::fs::read_dir(src).unwrap() {
            let e = e.unwrap();
            copy(&e.path(), &dst.join(e.file_name()));
        }
    } else {
        std::fs::copy(src, dst).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    }
}

/// The samples of `format`, copied into `dir` (databases need a writable
/// folder), as its discovery finds them under those roots.
fn sessions(format: &dyn Format, dir: &Path) -> Vec<(PathBuf, bool)> {
    let rels = SAMPLES
        .iter()
        .find(|(n, _)| *n == format.name())
        .map(|(_, s)| *s)
        .unwrap_or_else(|| {
            panic!(
                "format {} has no entry in SAMPLES: add its real sample files",
                format.name()
            )
        });
    let mut roots = Vec::new();
    for (i, rel) in rels.iter().enumerate() {
        let (rel, name) = rel.split_once(" as ").unwrap_or((rel, ""));
        let src = resolve(rel);
        let name = if name.is_empty() {
            src.file_name().unwrap().to_os_string()
        } else {
            name.into()
        };
        let dst = dir.join(i.to_string()).join(&name);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        copy(&src, &dst);
        // A sample placed in folders of its agent's layout is found from
        // the top of that layout.
        roots.push(if name.to_string_lossy().contains('/') {
            dir.join(i.to_string())
        } else {
            dst
        });
    }
    if format.name() == "json" {
        // agentlog's own format has no agent to take samples from: write
        // one from every other format's first sample.
        return Vec::new();
    }
    let env = DiscoverEnv {
        roots: [(format.name().to_string(), roots.clone())].into(),
        ..DiscoverEnv::with_home(dir.join("home"))
    };
    let mut found = format.discover(&env);
    // Every format finds sessions under a root it is given; a sample saved
    // under another name than the agent gives its files (a fixture named
    // by version) is checked as it is.
    assert!(
        !found.is_empty(),
        "{}: discovery under the roots {roots:?} finds nothing",
        format.name()
    );
    for root in &roots {
        let prefix = root.to_string_lossy().into_owned();
        if !found
            .iter()
            .any(|f| f.to_string_lossy().starts_with(&prefix))
        {
            found.push(root.clone());
        }
    }
    // Formats whose every JSON (lines) file is one session: every sample
    // file is checked, whatever discovery makes of its name.
    let mut out: Vec<(PathBuf, bool)> = found.into_iter().map(|f| (f, true)).collect();
    if ONE_FILE_PER_SESSION.contains(&format.name()) {
        for root in &roots {
            for f in json_files(root) {
                if !out.iter().any(|(p, _)| *p == f) {
                    // Named for the test, not by the agent: detection may
                    // rest on the agent's names, so it is not asked of these.
                    out.push((f, false));
                }
            }
        }
        out.retain(|(f, _)| !f.is_dir());
    }
    out.sort();
    out
}

/// Formats whose sample folders hold nothing but their sessions (JSON or
/// JSON lines, one session per file).
const ONE_FILE_PER_SESSION: &[&str] = &["pi", "claude", "codex", "gemini", "cursor"];

/// The `.json` and `.jsonl` files under `root` (or `root` itself), but for
/// companions that are not sessions (`*.loglines.json`, pi's expected
/// `*.context.json`, Claude's subagent `*.meta.json`).
fn json_files(root: &Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if (name.ends_with(".jsonl") || name.ends_with(".json"))
                && !name.ends_with(".loglines.json")
                && !name.ends_with(".context.json")
                && !name.ends_with(".meta.json")
            {
                out.push(p);
            }
        }
    }
    out
}

fn check_sample(format: &dyn Format, path: &Path, named: bool, scratch: &Path) {
    let name = format.name();
    if named {
        let detected = registry::detect(path)
            .unwrap_or_else(|e| panic!("{name}: {} is not detected: {e}", path.display()));
        assert_eq!(detected.name(), name, "{}", path.display());
    }
    let read = format
        .read_path(path)
        .unwrap_or_else(|e| panic!("{name}: {}: {e}", path.display()));
    assert!(
        !read.session.entries.is_empty() || !read.diagnostics.is_empty(),
        "{name}: {} reads as an empty session and says nothing about why",
        path.display()
    );
    format
        .validate(path)
        .unwrap_or_else(|e| panic!("{name}: validate {}: {e}", path.display()));
    let _ = format.drift(&read);
    if format.can_write() {
        written_back(format, &read.session, scratch, path, named);
        // Droid's stream-json output (`droid exec`) is read, and written as
        // its session store.
        let droid_stream = name == "droid"
            && std::fs::read(path).is_ok_and(|b| {
                !String::from_utf8_lossy(&b[..b.len().min(200)]).contains("session_start")
            });
        if EXACT_ROUND_TRIP.contains(&name) && format.writes_folder() {
            same_folder(format, &read, path);
        }
        if EXACT_ROUND_TRIP.contains(&name) && path.is_file() && !droid_stream {
            let mut out = Vec::new();
            let fidelity = format.write(&read.session, &mut out).unwrap();
            assert!(
                fidelity.is_lossless(),
                "{name}: {} loses something in its own format: {fidelity}",
                path.display()
            );
            let original = std::fs::read(path).unwrap();
            assert!(
                same_values(&original, &out),
                "{name}: {} is not written back as the same JSON values",
                path.display()
            );
            // With the unchanged records' own text put back, the same file
            // (unless the reader had to skip something it could not read).
            let clean = !read
                .diagnostics
                .iter()
                .any(|d| d.severity == agentlog_formats::Severity::Error)
                && is_json(&original);
            assert!(
                !clean || agentlog_formats::keep::keep_unchanged(&out, &original) == original,
                "{name}: {} is not written back as the same bytes",
                path.display()
            );
        }
    }
}

/// A session of a format stored as a folder, read from `path` (its
/// `events` folder) and written back: the same files, each the same JSON
/// value, and with unchanged records' text put back, the same bytes.
/// (Folders of the format's older layout, which it writes in the newer, are
/// compared by their messages in [`written_back`].)
fn same_folder(format: &dyn Format, read: &agentlog_formats::Read, path: &Path) {
    let name = format.name();
    if !read.session.meta.extra.contains_key("base_state") {
        return; // OpenHands' older event store
    }
    let (written, fidelity) = format.write_session(&read.session).unwrap();
    let agentlog_formats::Written::Folder(files) = written else {
        panic!("{name}: writes folders, but wrote one file");
    };
    let folder = path.parent().unwrap();
    let mut originals = Vec::new();
    for f in walk(folder) {
        originals.push(f.strip_prefix(folder).unwrap().to_path_buf());
    }
    originals.sort();
    let mut names: Vec<_> = files.iter().map(|(p, _)| p.clone()).collect();
    names.sort();
    assert_eq!(names, originals, "{name}: {}", path.display());
    assert!(
        fidelity.is_lossless(),
        "{name}: {} loses something in its own format: {fidelity}",
        path.display()
    );
    for (rel, bytes) in &files {
        let original = std::fs::read(folder.join(rel)).unwrap();
        assert!(
            same_values(&original, bytes),
            "{name}: {} is not written back as the same JSON value",
            rel.display()
        );
        assert!(
            agentlog_formats::keep::keep_unchanged(bytes, &original) == original,
            "{name}: {} is not written back as the same bytes",
            rel.display()
        );
    }
}

/// The files under `dir`, at any depth.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// True when the bytes are a JSON document or JSON lines (not, say, a
/// markdown transcript).
fn is_json(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes).is_ok()
        || bytes
            .split(|&c| c == b'\n')
            .find(|l| !l.trim_ascii().is_empty())
            .is_some_and(|l| serde_json::from_slice::<serde_json::Value>(l).is_ok())
}

/// True when `a` and `b` hold the same JSON values: a JSON document as a
/// whole, JSON lines line for line (lines that are not JSON, such as a torn
/// last line, are the reader's diagnostics and not compared).
fn same_values(a: &[u8], b: &[u8]) -> bool {
    use serde_json::Value;
    if let (Ok(x), Ok(y)) = (
        serde_json::from_slice::<Value>(a),
        serde_json::from_slice::<Value>(b),
    ) {
        return x == y;
    }
    let lines = |x: &[u8]| -> Vec<Value> {
        x.split(|&c| c == b'\n')
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect()
    };
    lines(a) == lines(b)
}

/// Writes `session` as `format`, then detects and reads the file back: the
/// same format, the same prompts and replies.
fn written_back(
    format: &dyn Format,
    session: &agentlog_model::Session,
    scratch: &Path,
    source: &Path,
    named: bool,
) {
    let name = format.name();
    let what = format!("{name} (from {})", source.display());
    let (out, _) = format
        .write_session(session)
        .unwrap_or_else(|e| panic!("{what}: writing: {e}"));
    // Named as the source was: some formats are told apart by their names
    // (legacy Codex rollouts, Gemini chats).
    let file_name = match source.file_name() {
        // A Vibe 3.x store (named by its meta.json) is written in the 2.x
        // layout, a messages.jsonl.
        Some(n) if name == "vibe" && n == "meta.json" => "messages.jsonl".into(),
        Some(n) if source.is_file() => n.to_os_string(),
        // A folder (an OpenHands conversation).
        _ if format.writes_folder() => "written".into(),
        _ => format!("written.{}", format.extension()).into(),
    };
    let p = scratch.join(file_name);
    out.write_plain(&p).unwrap();
    if named {
        let detected = registry::detect(&p)
            .unwrap_or_else(|e| panic!("{what}: its own output is not detected: {e}"));
        assert_eq!(
            detected.name(),
            name,
            "{what}: its own output is taken for another format"
        );
    }
    let back = format.read_path(&p).unwrap().session;
    // (Droid's model and usage come from the settings file beside the
    // session, Kimi's usage and response ids from the wire beside it, which
    // the scratch copy does not have; their lines are compared exactly in
    // tests/agents.rs.)
    // (OpenHands' older event store is written as a newer conversation.)
    let older_openhands = name == "openhands" && !session.meta.extra.contains_key("base_state");
    if EXACT_ROUND_TRIP.contains(&format.name())
        && !["droid", "kimi"].contains(&format.name())
        && !older_openhands
        && session.meta.format.as_deref() == Some(format.name())
    {
        // Its own files read back as the same tree of the same entries.
        let tree = |s: &agentlog_model::Session| -> Vec<_> {
            s.entries
                .iter()
                .map(|e| (e.id.clone(), e.parent_id.clone(), e.kind.clone()))
                .collect()
        };
        assert!(
            tree(&back) == tree(session),
            "{what}: the entries change when written and read back"
        );
    }
    assert_eq!(
        back.prompts(),
        session.prompts(),
        "{what}: the prompts change when written and read back"
    );
    assert_eq!(
        back.message_count(),
        session.message_count(),
        "{what}: the number of messages changes when written and read back"
    );
}

#[test]
fn every_format_meets_the_contract_on_its_real_samples() {
    let first_of_each = std::cell::RefCell::new(Vec::new());
    for format in registry::all() {
        let dir = tempfile::tempdir().unwrap();
        let found = sessions(*format, dir.path());
        if format.name() == "json" {
            continue;
        }
        assert!(!found.is_empty(), "{}: no samples found", format.name());
        for (path, named) in &found {
            let scratch = tempfile::tempdir().unwrap();
            check_sample(*format, path, *named, scratch.path());
        }
        let first = found
            .iter()
            .map(|(p, _)| format.read_path(p).unwrap().session)
            .find(|s| !s.entries.is_empty())
            .unwrap_or_else(|| panic!("{}: no sample has entries", format.name()));
        first_of_each.borrow_mut().push((format.name(), first));
    }
    // agentlog's own JSON holds a session of every other format.
    let json = registry::by_name("json").unwrap();
    for (from, s) in first_of_each.into_inner() {
        let scratch = tempfile::tempdir().unwrap();
        let mut out = Vec::new();
        json.write(&s, &mut out).unwrap();
        let p = scratch.path().join("s.json");
        std::fs::write(&p, &out).unwrap();
        assert_eq!(registry::detect(&p).unwrap().name(), "json", "from {from}");
        check_sample(json, &p, true, scratch.path());
    }
}

#[test]
fn a_json_schema_is_not_a_session() {
    let schema = resolve("shared/seeds/specstory/session-data-v1.json");
    let err = registry::detect(&schema).err().map(|e| e.to_string());
    let err = err.unwrap_or_else(|| panic!("{} is taken for a session", schema.display()));
    assert!(err.contains("not a session file"), "{err}");
    assert!(
        !err.contains("--"),
        "the library names no command-line flag: {err}"
    );
}

#[test]
fn every_registered_format_has_samples() {
    for format in registry::all() {
        assert!(
            SAMPLES.iter().any(|(n, _)| *n == format.name()),
            "format {} has no entry in SAMPLES",
            format.name()
        );
    }
}
