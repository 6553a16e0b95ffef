//! A file over the input cap is refused before it is read, with nothing
//! stored (its own test binary: the cap is process-wide).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_archive::Archive;

#[test]
fn a_two_gigabyte_file_over_the_cap_is_refused_unread_and_nothing_is_stored() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("huge.jsonl");
    // Sparse: 2 GiB that take no disk.
    let f = std::fs::File::create(&file).unwrap();
    f.set_len(2 << 30).unwrap();
    drop(f);
    agentlog_formats::input::set_max_bytes(1 << 30);
    let mut a = Archive::open(&home.path().join("archive")).unwrap();
    let err = a.capture(&file, "claude").unwrap_err().to_string();
    assert!(
        err.contains("huge.jsonl")
            && err.contains("2147483648 bytes")
            && err.contains("AGENTLOG_MAX_INPUT"),
        "{err}"
    );
    let report = a
        .capture_all(&[(file.clone(), "claude".to_string())], &mut |_, _| {})
        .unwrap();
    assert_eq!(report.failed.len(), 1);
    let stats = a.stats().unwrap();
    assert_eq!((stats.sources, stats.chunks), (0, 0));
}
