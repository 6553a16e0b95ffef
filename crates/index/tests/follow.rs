//! A followed session file ([`agentlog_index::follow::Follow`]) read at
//! every append holds what a whole read of the file gives.
#![allow(clippy::unwrap_used)]

use agentlog_formats::Format;
use agentlog_index::follow::{Advance, Follow};
use agentlog_model::Session;
use std::io::Write;
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// A whole read of the whole lines of the file at `path`.
fn whole_read(format: &dyn Format, path: &Path) -> Session {
    let bytes = std::fs::read(path).unwrap();
    let end = agentlog_index::files::whole_lines(&bytes);
    format
        .read_bytes_to_show(path, &bytes[..end])
        .unwrap()
        .session
}

/// The entries of a whole read of the file at `path`, as JSON.
fn whole(format: &dyn Format, path: &Path) -> Vec<serde_json::Value> {
    entries(&whole_read(format, path))
}

/// The leaf of a whole read of the file at `path`.
fn whole_leaf(format: &dyn Format, path: &Path) -> Option<String> {
    whole_read(format, path).leaf_id
}

fn entries(s: &Session) -> Vec<serde_json::Value> {
    s.entries
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

/// Writes the first `cut` lines of `lines` to `path`, follows it, appends
/// the rest in `steps` writes (each in two halves, the first ending inside
/// a line), and checks the followed session against a whole read after
/// each half; returns how many appends were read from the boundary.
fn follow_in_steps(
    format: &'static dyn Format,
    path: &Path,
    lines: &[&[u8]],
    cut: usize,
    steps: usize,
) -> Result<usize, String> {
    std::fs::write(path, lines[..cut].concat()).unwrap();
    let mut f = Follow::start(path, format, &|_| ()).map_err(|e| e.to_string())?;
    let check = |f: &Follow, what: &str| {
        let read = whole_read(format, path);
        if f.session().leaf_id != read.leaf_id {
            return Err(format!(
                "{what}: leaf {:?}, a whole read's {:?}",
                f.session().leaf_id,
                read.leaf_id
            ));
        }
        let (got, want) = (entries(f.session()), entries(&read));
        if got != want {
            let k = got
                .iter()
                .zip(&want)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            return Err(format!(
                "{what}: the followed entries differ from a whole read at entry {k} of {} (whole read {}): {} against {}",
                got.len(),
                want.len(),
                got.get(k).map(|v| v.to_string()).unwrap_or_default().chars().take(400).collect::<String>(),
                want.get(k).map(|v| v.to_string()).unwrap_or_default().chars().take(400).collect::<String>(),
            ));
        }
        Ok(())
    };
    check(&f, &format!("first {cut} lines"))?;
    let rest = &lines[cut..];
    let per = rest.len().div_ceil(steps).max(1);
    let mut out = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    let mut appended = 0;
    for (k, chunk) in rest.chunks(per).enumerate() {
        let bytes = chunk.concat();
        // Half a line first: it waits for its newline.
        let half = bytes.len() / 2;
        out.write_all(&bytes[..half]).unwrap();
        out.flush().unwrap();
        f.advance(&|_| ()).map_err(|e| e.to_string())?;
        check(&f, &format!("after {cut} lines and half of step {k}"))?;
        out.write_all(&bytes[half..]).unwrap();
        out.flush().unwrap();
        let changed = f.advance(&|_| ()).map_err(|e| e.to_string())?;
        if !changed {
            return Err(format!("step {k}: the append was not seen"));
        }
        appended += usize::from(f.last() == Advance::Appended);
        check(&f, &format!("after {cut} lines and step {k}"))?;
        if f.advance(&|_| ()).map_err(|e| e.to_string())? {
            return Err(format!("step {k}: an unchanged file read again"));
        }
    }
    Ok(appended)
}

/// The JSON Lines files of the formats the index reads incrementally.
fn incremental_files() -> Vec<(PathBuf, &'static dyn Format)> {
    let mut all = Vec::new();
    files(Path::new(FIXTURES), &mut all);
    all.sort();
    let mut out = Vec::new();
    for p in all {
        if p.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let Ok(format) = agentlog_formats::registry::detect(&p) else {
            continue;
        };
        if agentlog_index::files::incremental(format.name()) && format.read_path(&p).is_ok() {
            out.push((p, format));
        }
    }
    out
}

#[test]
fn a_followed_sample_file_is_its_whole_read_after_every_append() {
    let samples = incremental_files();
    let formats: std::collections::BTreeSet<&str> = samples.iter().map(|(_, f)| f.name()).collect();
    assert_eq!(
        formats.into_iter().collect::<Vec<_>>(),
        ["claude", "codex", "pi"],
        "sample files of each format read incrementally"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut spliced = std::collections::BTreeMap::new();
    for (p, format) in &samples {
        let bytes = std::fs::read(p).unwrap();
        let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
        let copy = dir.path().join(p.file_name().unwrap());
        // Every cut of a short file; some 6 spread over a long one, in
        // one append or three.
        let step = if lines.len() <= 40 {
            1
        } else {
            lines.len() / 6
        };
        for (k, cut) in (1..lines.len()).step_by(step).enumerate() {
            let steps = if k % 2 == 0 { 1 } else { 3 };
            match follow_in_steps(*format, &copy, &lines, cut, steps) {
                Ok(n) => *spliced.entry(format.name()).or_insert(0) += n,
                Err(e) => failures.push(format!("{} ({}): {e}", p.display(), format.name())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Appends to pi and Claude Code files are read from the boundary (not
    // always whole, which would pass the checks above trivially).
    for f in ["pi", "claude"] {
        assert!(spliced.get(f).is_some_and(|&n| n >= 20), "{spliced:?}");
    }
}

#[test]
fn a_parent_a_whole_read_moves_is_not_taken_from_a_read_of_the_end() {
    // Records with no uuid of their own are chained after the entry before
    // them, and a later record naming that entry as its parent is moved
    // under the last of them; a read starting after that entry cannot know.
    let dir = tempfile::tempdir().unwrap();
    let sid = "0a1b2c3d-0000-4000-8000-00000000000c";
    let path = dir.path().join(format!("{sid}.jsonl"));
    let format = agentlog_formats::registry::by_name("claude").unwrap();
    let user = |uuid: &str, parent: Option<&str>, text: &str| serde_json::json!({"type":"user","uuid":uuid,"parentUuid":parent,"sessionId":sid,"timestamp":"2025-12-16T00:00:01.000Z","message":{"role":"user","content":text}});
    let reply = |uuid: &str, parent: &str, text: &str| serde_json::json!({"type":"assistant","uuid":uuid,"parentUuid":parent,"sessionId":sid,"timestamp":"2025-12-16T00:00:02.000Z","message":{"id":format!("msg_{uuid}"),"role":"assistant","model":"claude-x","content":[{"type":"text","text":text}]}});
    let mut lines = vec![
        user("u1", None, "first question"),
        reply("a1", "u1", "first answer"),
        user("u2", Some("a1"), "second question"),
        reply("a2", "u2", "second answer"),
        serde_json::json!({"type":"queue-operation","operation":"enqueue","content":"x","sessionId":sid,"timestamp":"2025-12-16T00:00:03.500Z"}),
        serde_json::json!({"type":"queue-operation","operation":"dequeue","sessionId":sid,"timestamp":"2025-12-16T00:00:03.600Z"}),
        serde_json::json!({"type":"file-history-snapshot","messageId":"a2","snapshot":{"messageId":"a2","trackedFileBackups":{},"timestamp":"2025-12-16T00:00:03.700Z"},"isSnapshotUpdate":false}),
        serde_json::json!({"type":"last-prompt","sessionId":sid,"lastPrompt":"second question","leafUuid":"a2"}),
        user("u3", Some("a2"), "third question"),
    ];
    let text = |lines: &[serde_json::Value]| -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    };
    std::fs::write(&path, text(&lines)).unwrap();
    let mut f = Follow::start(&path, format, &|_| ()).unwrap();
    lines.push(reply("a3", "u3", "third answer"));
    lines.push(user("u4", Some("a3"), "fourth question"));
    std::fs::write(&path, text(&lines)).unwrap();
    assert!(f.advance(&|_| ()).unwrap());
    assert_eq!(entries(f.session()), whole(format, &path));
    assert_eq!(f.session().leaf_id, whole_leaf(format, &path));
    // Plain turns after it: once the read's context is past the moved
    // parent, appends are read from the boundary.
    for k in 4..8 {
        lines.push(reply(&format!("a{k}"), &format!("u{k}"), "an answer"));
        lines.push(user(
            &format!("u{}", k + 1),
            Some(&format!("a{k}")),
            "a question",
        ));
        std::fs::write(&path, text(&lines)).unwrap();
        assert!(f.advance(&|_| ()).unwrap());
        assert_eq!(entries(f.session()), whole(format, &path), "turn {k}");
        assert_eq!(f.session().leaf_id, whole_leaf(format, &path));
    }
    assert_eq!(
        f.last(),
        Advance::Appended,
        "a plain append is read from the boundary"
    );
}

#[test]
fn a_followed_long_session_is_its_whole_read_after_every_turn() {
    let home = tempfile::tempdir().unwrap();
    for agent in ["claude", "codex", "pi"] {
        let c = agentlog_bench::gen::long_conv(5, 40);
        let path = agentlog_bench::gen::write_session(home.path(), agent, &c).unwrap();
        let format = agentlog_formats::registry::by_name(agent).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
        let copy = home.path().join(format!(
            "followed-{}",
            path.file_name().unwrap().to_string_lossy()
        ));
        for cut in [1, 2, lines.len() / 3, lines.len() - 1] {
            let steps = 7.min(lines.len() - cut);
            let appended = follow_in_steps(format, &copy, &lines, cut, steps)
                .unwrap_or_else(|e| panic!("{agent}, cut at {cut}: {e}"));
            // Once a turn was read, every append is read from its boundary
            // (Codex's always whole; the first two of a file that begins
            // with its first prompt have none).
            let want = match agent {
                "codex" => 0,
                _ if cut <= 2 => steps - 2,
                _ => steps,
            };
            assert!(
                appended >= want,
                "{agent}, cut at {cut}: {appended} of {steps} appends read from the boundary"
            );
        }
    }
}

#[test]
fn a_rewritten_file_is_read_whole_again() {
    let home = tempfile::tempdir().unwrap();
    let c = agentlog_bench::gen::long_conv(9, 12);
    let path = agentlog_bench::gen::write_session(home.path(), "pi", &c).unwrap();
    let format = agentlog_formats::registry::by_name("pi").unwrap();
    let mut f = Follow::start(&path, format, &|_| ()).unwrap();
    assert_eq!(entries(f.session()), whole(format, &path));
    // An earlier line changed (same length), then the file cut short, then
    // replaced by another session: each is read whole.
    let bytes = std::fs::read(&path).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let changed = lines[3].replacen('a', "b", 1);
    assert_ne!(changed, lines[3]);
    let mut edited = lines.clone();
    edited[3] = &changed;
    std::fs::write(&path, edited.concat()).unwrap();
    assert!(f.advance(&|_| ()).unwrap());
    assert_eq!(entries(f.session()), whole(format, &path));
    std::fs::write(&path, lines[..lines.len() / 2].concat()).unwrap();
    assert!(f.advance(&|_| ()).unwrap());
    assert_eq!(entries(f.session()), whole(format, &path));
    let other = agentlog_bench::gen::long_conv(10, 4);
    let other_path = agentlog_bench::gen::write_session(home.path(), "pi", &other).unwrap();
    std::fs::rename(&other_path, &path).unwrap();
    assert!(f.advance(&|_| ()).unwrap());
    assert_eq!(entries(f.session()), whole(format, &path));
    // The same bytes and more, in another file moved into its place: read
    // whole (another inode is another file).
    let bytes = std::fs::read(&path).unwrap();
    let now = String::from_utf8(bytes.clone()).unwrap();
    let mut extra: serde_json::Value = serde_json::from_str(now.lines().last().unwrap()).unwrap();
    extra["parentId"] = extra["id"].clone();
    extra["id"] = "moved-in".into();
    let extra = format!("{extra}\n");
    let moved = home.path().join("moved.jsonl");
    std::fs::write(&moved, [bytes, extra.into_bytes()].concat()).unwrap();
    std::fs::rename(&moved, &path).unwrap();
    assert!(f.advance(&|_| ()).unwrap());
    assert_eq!(f.last(), Advance::Whole);
    assert_eq!(entries(f.session()), whole(format, &path));
    // A file that is gone is an error naming it.
    std::fs::remove_file(&path).unwrap();
    let e = f.advance(&|_| ()).unwrap_err().to_string();
    assert!(e.contains(&path.display().to_string()), "{e}");
}

#[test]
fn what_is_appended_is_prepared_once_as_it_is_read() {
    let home = tempfile::tempdir().unwrap();
    let c = agentlog_bench::gen::long_conv(11, 10);
    let path = agentlog_bench::gen::write_session(home.path(), "claude", &c).unwrap();
    let format = agentlog_formats::registry::by_name("claude").unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    let half = lines.len() / 2;
    std::fs::write(&path, lines[..half].concat()).unwrap();
    // `prepare` marks each entry it sees; an entry marked twice was
    // prepared twice.
    let mark = |s: &mut Session| {
        for e in &mut s.entries {
            e.extra.insert(
                "prepared".into(),
                serde_json::json!(e.extra.get("prepared").is_some()),
            );
        }
    };
    let mut f = Follow::start(&path, format, &mark).unwrap();
    let mut out = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    out.write_all(&lines[half..].concat()).unwrap();
    assert!(f.advance(&mark).unwrap());
    assert_eq!(f.last(), Advance::Appended);
    let n = whole(format, &path).len();
    assert_eq!(f.session().entries.len(), n);
    for e in &f.session().entries {
        assert_eq!(
            e.extra.get("prepared"),
            Some(&serde_json::json!(false)),
            "{}",
            e.id
        );
    }
}
