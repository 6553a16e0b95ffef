//! Shapes of large session files (`agentlog_index::shape`): kept for a file
//! read in full, dropped when lines are appended, made again once the file
//! is quiet. Alone in its test binary: it sets `AGENTLOG_SHAPE_MIN` (every
//! file keeps a shape) before anything reads it.
#![allow(clippy::unwrap_used)]

use agentlog_formats::discover::Found;
use agentlog_index::Index;
use std::io::Write;
use std::time::{Duration, SystemTime};

#[test]
fn a_shape_is_kept_dropped_on_append_and_made_again_when_the_file_is_quiet() {
    std::env::set_var("AGENTLOG_SHAPE_MIN", "1");
    let dir = tempfile::tempdir().unwrap();
    let c = agentlog_bench::gen::long_conv(8, 2);
    let path = agentlog_bench::gen::write_session(dir.path(), "claude", &c).unwrap();
    let found = [Found {
        path: path.clone(),
        format: "claude",
    }];
    let db = dir.path().join("index.sqlite");
    let (mut index, _) = Index::open(&db).unwrap();
    // From another connection, as another process sees it.
    let shapes = || -> i64 {
        rusqlite::Connection::open(&db)
            .unwrap()
            .query_row("SELECT count(*) FROM shapes", [], |r| r.get(0))
            .unwrap()
    };
    index.update(&found, &mut |_| {}).unwrap();
    let p = path.to_str().unwrap();
    let shape = index
        .shape(p)
        .unwrap()
        .expect("a file read in full keeps its shape");
    assert_eq!(shapes(), 1);
    let whole = agentlog_formats::registry::by_name("claude")
        .unwrap()
        .read_path(&path)
        .unwrap()
        .session;
    assert_eq!(shape.ids.len(), whole.entries.len());
    assert_eq!(shape.usage, whole.total_usage());

    // Appended to: read from the end, the shape of the file before is gone
    // (and one of another state of the file is never returned).
    let text = std::fs::read_to_string(&path).unwrap();
    let last = text
        .lines()
        .last()
        .unwrap()
        .replace("\"uuid\":\"", "\"uuid\":\"more-");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(f, "{last}").unwrap();
    drop(f);
    index.update(&found, &mut |_| {}).unwrap();
    assert_eq!(shapes(), 0);
    assert!(index.shape(p).unwrap().is_none());

    // Not quiet yet: nothing made.
    assert_eq!(index.make_shapes(Duration::from_secs(600), 8).unwrap(), 0);
    // Quiet (changed ten minutes ago, and indexed so): made again, of the
    // file as it is.
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(900))
        .unwrap();
    drop(f);
    index.update(&found, &mut |_| {}).unwrap();
    let made = index.make_shapes(Duration::from_secs(600), 8).unwrap();
    assert_eq!((made, shapes()), (1, 1));
    let again = index.shape(p).unwrap().expect("made again");
    let now = agentlog_formats::registry::by_name("claude")
        .unwrap()
        .read_path(&path)
        .unwrap()
        .session;
    assert_eq!(again.ids.len(), now.entries.len());
    assert_eq!(again.leaf_id, now.leaf_id);
    // A file changed since is not shaped by what the index knew of it.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(f).unwrap();
    drop(f);
    assert!(index.shape(p).unwrap().is_none());

    // A last line without its newline: the update leaves it for later, but
    // a page would read it; no shape, read in full or made when quiet.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    write!(
        f,
        "{}",
        last.replace("\"uuid\":\"more-", "\"uuid\":\"half-")
    )
    .unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(900))
        .unwrap();
    drop(f);
    index.clear().unwrap();
    index.update(&found, &mut |_| {}).unwrap();
    assert!(index.shape(p).unwrap().is_none());
    assert_eq!(index.make_shapes(Duration::from_secs(600), 8).unwrap(), 0);
    assert_eq!(shapes(), 0);
}
