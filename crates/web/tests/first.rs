//! The first page of a session read from the file's first lines
//! (`agentlog_web::first`) is the page read from the whole file, byte for
//! byte, on every sample file of the agents it is used for and on long
//! generated sessions of each; and those agents' readers give the entries
//! of a file's first lines exactly as they give them from the whole file.
#![allow(clippy::unwrap_used)]

use agentlog_formats::{registry, Format};
use agentlog_index::shape::by_line;
use agentlog_index::shape::Shape;
use agentlog_model::Session;
use agentlog_web::first::{first_page, prefix_lines};
use agentlog_web::pages::{session_body, PAGE};
use agentlog_web::render::{keep_shown, keep_shown_entry, Subagent, Target, View};
use std::path::{Path, PathBuf};

mod common;

use common::{files, FIXTURES};

/// The sample files the shortcut is used for, with their format.
fn samples() -> Vec<(PathBuf, &'static dyn Format)> {
    let mut all = Vec::new();
    files(Path::new(FIXTURES), &mut all);
    all.sort();
    all.into_iter()
        .filter_map(|p| {
            let f = registry::detect(&p).ok()?;
            by_line(f.name(), &p).then_some((p, f))
        })
        .collect()
}

/// The first `lines` lines of `bytes`.
fn first_lines(bytes: &[u8], lines: u64) -> &[u8] {
    let mut end = 0;
    for _ in 0..lines {
        match memchr(b'\n', &bytes[end..]) {
            Some(i) => end += i + 1,
            None => return bytes,
        }
    }
    &bytes[..end]
}

fn memchr(b: u8, s: &[u8]) -> Option<usize> {
    s.iter().position(|&c| c == b)
}

#[test]
fn the_first_lines_of_a_file_give_their_entries_as_the_whole_file_does() {
    let mut checked = 0;
    for (path, format) in samples() {
        // Their entries may change for a later line (caught by the
        // fingerprints: the next test).
        if matches!(format.name(), "codex" | "gemini") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let Ok(full) = format.read_bytes_to_show(&path, &bytes) else {
            continue;
        };
        let by_line: std::collections::HashMap<(&str, Option<u64>), &agentlog_model::Entry> = full
            .session
            .entries
            .iter()
            .map(|e| ((e.id.as_str(), e.line), e))
            .collect();
        let mut starts: Vec<u64> = full.session.entries.iter().filter_map(|e| e.line).collect();
        starts.sort_unstable();
        starts.dedup();
        // Each line an entry starts at as the end of a page (of a long
        // file, some 50 of them).
        let step = (starts.len() / 50).max(1);
        for &end in starts.iter().step_by(step) {
            let Some(lines) = prefix_lines(&full.session, end, 1) else {
                continue;
            };
            let Ok(part) = format.read_bytes_to_show(&path, first_lines(&bytes, lines)) else {
                continue;
            };
            for e in part.session.entries.iter().filter(|e| e.line <= Some(end)) {
                let same = by_line.get(&(e.id.as_str(), e.line)).copied();
                assert!(
                    same == Some(e),
                    "{}: entry {} (line {:?}) read from the first {lines} lines differs from the whole file's:\n{same:#?}\n{e:#?}",
                    path.display(),
                    e.id,
                    e.line,
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 2000, "only {checked} entries were compared");
}

/// The served page of `view`'s first `page` entries, with `subagents`.
fn body(mut view: View<'_>, path: &str, subagents: &[(String, Session)], page: usize) -> String {
    let target = Target::Served {
        path: path.to_string(),
    };
    let rendered: Vec<Subagent> = subagents
        .iter()
        .map(|(p, s)| Subagent::of(s, p, &target))
        .collect();
    let unplaced = view.set_subagents(rendered);
    session_body(&view, None, (path, path), 0, page, &target, &unplaced)
}

/// Compares the first page of the file at `path` read both ways, for each
/// page size, as served and redacted as `serve --redact` serves it;
/// returns how many were shown from the first lines.
fn compare(path: &Path, format: &dyn Format, pages: &[usize]) -> usize {
    compare_both(path, format, pages).0
}

/// [`compare`], which also returns the pages shown from the first lines,
/// as served and redacted.
fn compare_both(path: &Path, format: &dyn Format, pages: &[usize]) -> (usize, String, String) {
    let plain = compare_as(path, format, pages, None);
    let redactor = agentlog_redact::Redactor::builtin().unwrap();
    let redacted = compare_as(path, format, pages, Some(redactor));
    assert_eq!(redacted.0, plain.0);
    (plain.0, plain.1, redacted.1)
}

fn compare_as(
    path: &Path,
    format: &dyn Format,
    pages: &[usize],
    redactor: Option<&agentlog_redact::Redactor>,
) -> (usize, String) {
    let bytes = std::fs::read(path).unwrap();
    let Ok(read) = format.read_bytes_to_show(path, &bytes) else {
        return (0, String::new());
    };
    let Some(shape) = Shape::of(&read.session) else {
        return (0, String::new());
    };
    let mut whole = read.session;
    keep_shown(&mut whole);
    let shown = path.to_string_lossy().into_owned();
    let mut subagents = agentlog_web::files::read_subagents(path, format.name());
    for (_, s) in &mut subagents {
        keep_shown(s);
    }
    if let Some(r) = redactor {
        r.session(&mut whole);
        for (_, s) in &mut subagents {
            r.session(s);
        }
    }
    let mut taken = 0;
    let mut shown_pages = String::new();
    for &page in pages {
        let Some(mut first) = first_page(&shape, path, format, &keep_shown_entry, page) else {
            continue;
        };
        if let Some(r) = redactor {
            first.redact(r);
        }
        assert!(
            first.session.entries.len() < whole.entries.len(),
            "{shown}: the whole file was read for {page} entries"
        );
        let fast = body(
            View::new(&first.session, None, None).with_whole(&first.whole),
            &shown,
            &subagents,
            page,
        );
        let slow = body(View::new(&whole, None, None), &shown, &subagents, page);
        if fast != slow {
            let at = fast
                .bytes()
                .zip(slow.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(fast.len().min(slow.len()));
            panic!(
                "{shown}: the first {page} entries differ from byte {at}:\n  first lines: {}\n  whole file:  {}",
                &fast[at.saturating_sub(80)..(at + 200).min(fast.len())],
                &slow[at.saturating_sub(80)..(at + 200).min(slow.len())]
            );
        }
        shown_pages.push_str(&fast);
        taken += 1;
    }
    (taken, shown_pages)
}

#[test]
fn a_first_page_from_the_first_lines_is_the_page_of_the_whole_file() {
    let mut taken = 0;
    let mut agents = std::collections::BTreeSet::new();
    for (path, format) in samples() {
        let n = compare(&path, format, &[1, 2, 3, 5, 8, 13, 21, 34, 55, 89, PAGE]);
        if n > 0 {
            agents.insert(format.name());
        }
        taken += n;
    }
    assert!(
        taken >= 100,
        "only {taken} first pages were shown from the first lines"
    );
    assert_eq!(
        agents.into_iter().collect::<Vec<_>>(),
        ["claude", "codex", "gemini", "pi"]
    );
}

#[test]
fn a_long_session_of_each_agent_shows_its_first_page_from_its_first_lines() {
    use agentlog_bench::secrets::{leaks, planted, planted_text};
    let home = tempfile::tempdir().unwrap();
    for agent in ["claude", "codex", "pi", "gemini"] {
        let mut c = agentlog_bench::gen::long_conv(3, 80);
        // Secrets in the first turns, for `serve --redact`.
        let secrets = planted_text(&planted(7));
        for t in &mut c.turns[..4] {
            t.user.push_str(&secrets);
            t.answer.push_str(&secrets);
            for s in &mut t.steps {
                s.output.push_str(&secrets);
            }
        }
        let path = agentlog_bench::gen::write_session(home.path(), agent, &c).unwrap();
        let format = registry::detect(&path).unwrap();
        let (taken, plain, redacted) = compare_both(&path, format, &[1, 7, PAGE]);
        assert_eq!(
            taken, 3,
            "{agent}: a first page was read from the whole file"
        );
        assert!(
            !leaks(&plain, 7).is_empty(),
            "{agent}: no secret on the pages"
        );
        assert_eq!(leaks(&redacted, 7), Vec::<String>::new(), "{agent}");
    }
}

#[test]
fn a_page_with_a_branch_that_starts_after_it_is_read_from_the_whole_file() {
    // `y` answers `a` again after the conversation went on from `b`: the
    // page of `a`, `b` shows `b` as one of two branches, which the lines
    // up to `b` do not know.
    let line = |kind: &str, id: &str, parent: Option<&str>, text: &str| {
        serde_json::json!({
            "type": kind, "uuid": id, "parentUuid": parent, "sessionId": "s",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": kind, "content": [{"type": "text", "text": text}]},
        })
        .to_string()
    };
    let lines = [
        line("user", "a", None, "one"),
        line("assistant", "b", Some("a"), "two"),
        line("user", "c", Some("b"), "three"),
        line("assistant", "d", Some("c"), "four"),
        line("user", "y", Some("a"), "one again"),
        line("assistant", "e", Some("d"), "five"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let format = registry::by_name("claude").unwrap();
    let read = format.read_path_to_show(&path).unwrap();
    let shape = Shape::of(&read.session).unwrap();
    let branch: Vec<&str> = View::new(&read.session, None, None)
        .path
        .iter()
        .map(|e| e.id.as_str())
        .collect();
    assert_eq!(branch, ["a", "b", "c", "d", "e"]);
    assert!(first_page(&shape, &path, format, &keep_shown_entry, 1).is_some());
    assert!(first_page(&shape, &path, format, &keep_shown_entry, 2).is_none());
    assert_eq!(compare(&path, format, &[1, 2, 3]), 1);
}

#[test]
fn a_first_prompt_is_redacted_on_a_first_page_as_on_the_whole_files() {
    // The first prompt names a page without a title: its first block is
    // JSON with a secret under a field name, redacted as a field.
    let secret = "Zx9Qw7Er5Ty3Ui1Op";
    let first = format!(
        "{{\"authorization\": \"{secret}\", \"t\": \"ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\"}}"
    );
    let mut lines = vec![serde_json::json!({
        "type": "user", "uuid": "u0", "parentUuid": null, "sessionId": "s",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": [
            {"type": "text", "text": first},
            {"type": "text", "text": "and what it says"},
        ]},
    })
    .to_string()];
    let mut parent = "u0".to_string();
    for i in 1..8 {
        let kind = if i % 2 == 1 { "assistant" } else { "user" };
        let id = format!("e{i}");
        lines.push(
            serde_json::json!({
                "type": kind, "uuid": id, "parentUuid": parent, "sessionId": "s",
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": kind, "content": [{"type": "text", "text": format!("turn {i}")}]},
            })
            .to_string(),
        );
        parent = id;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let format = registry::by_name("claude").unwrap();
    let (taken, plain, redacted) = compare_both(&path, format, &[1, 2, 3]);
    assert_eq!(taken, 3);
    assert!(plain.contains(secret));
    assert!(!redacted.contains(secret), "{redacted}");
}
