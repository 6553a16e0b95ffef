#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Discovery across every registered format: hermetic, tolerant of
//! unreadable places, and safe from symlink loops.

use agentlog_formats::discover::{discover_all, discover_report, walk_files, DiscoverEnv};
use agentlog_formats::registry;
use std::path::Path;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn copy(from: &str, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(Path::new(FIXTURES).join(from), to).unwrap();
}

#[test]
fn an_empty_home_has_no_sessions_and_no_problems() {
    let tmp = tempfile::tempdir().unwrap();
    let report = discover_report(&DiscoverEnv::with_home(tmp.path()), None);
    assert!(report.found.is_empty(), "{:?}", report.found);
    assert!(report.diagnostics.is_empty(), "{:?}", report.diagnostics);
}

#[test]
fn found_sessions_are_ordered_by_registry_then_path_and_filtered_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join(".cursor/projects/p/agent-transcripts");
    copy("native/cursor/as-stage0/small.jsonl", &t.join("b.jsonl"));
    copy("native/cursor/as-stage0/large.jsonl", &t.join("a.jsonl"));
    let env = DiscoverEnv::with_home(tmp.path());
    let all = discover_all(&env, None);
    let cursor: Vec<_> = all.iter().filter(|f| f.format == "cursor").collect();
    assert_eq!(cursor.len(), 2);
    assert!(cursor[0].path < cursor[1].path);
    let order: Vec<usize> = all
        .iter()
        .map(|f| {
            registry::all()
                .iter()
                .position(|r| r.name() == f.format)
                .unwrap()
        })
        .collect();
    assert!(order.windows(2).all(|w| w[0] <= w[1]));
    assert!(discover_all(&env, Some(&["pi".to_string()]))
        .iter()
        .all(|f| f.format == "pi"));
}

#[cfg(unix)]
#[test]
fn symlink_loops_end_and_linked_sessions_are_found_once() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join(".cursor/projects/p/agent-transcripts");
    copy(
        "native/cursor/as-stage0/small.jsonl",
        &t.join("s1/s1.jsonl"),
    );
    // A loop back to the transcripts folder and to the whole home.
    std::os::unix::fs::symlink(&t, t.join("s1/again")).unwrap();
    std::os::unix::fs::symlink(tmp.path(), t.join("home")).unwrap();
    let env = DiscoverEnv::with_home(tmp.path());
    let found = discover_all(&env, Some(&["cursor".to_string()]));
    assert_eq!(found.len(), 1, "{found:?}");
    let all = walk_files(tmp.path(), 64, &|p| {
        p.extension().is_some_and(|e| e == "jsonl")
    });
    assert_eq!(all.len(), 1, "{all:?}");
}

#[test]
fn problems_are_reported_once_per_discovery() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join(".cursor")).unwrap();
    std::fs::write(
        tmp.path().join(".cursor/projects"),
        "a file, not a directory",
    )
    .unwrap();
    let env = DiscoverEnv::with_home(tmp.path());
    let first = discover_report(&env, Some(&["cursor".to_string()]));
    assert_eq!(first.diagnostics.len(), 1, "{:?}", first.diagnostics);
    assert_eq!(first.diagnostics[0].code, "unreadable-dir");
    assert!(first.diagnostics[0]
        .to_string()
        .contains(".cursor/projects"));
    std::fs::remove_file(tmp.path().join(".cursor/projects")).unwrap();
    let second = discover_report(&env, Some(&["cursor".to_string()]));
    assert!(second.diagnostics.is_empty(), "{:?}", second.diagnostics);
}
