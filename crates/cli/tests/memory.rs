//! Memory stays proportional to what is kept: a pi header followed by a
//! million tiny records (`{}`) must not cost an entry, a diagnostic and a
//! parsed value per line. The figure checked is the peak resident memory
//! of the real `agentlog` process (this file holds one test, so the
//! children measured are its own).
#![allow(clippy::unwrap_used, clippy::expect_used, unsafe_code)]

mod common;

use common::TestEnv;

/// The largest peak resident set, in KiB, of the children waited for.
fn children_peak_kib() -> i64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; RUSAGE_CHILDREN is a
    // valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) };
    assert_eq!(rc, 0);
    // SAFETY: initialized by the successful call above.
    unsafe { usage.assume_init() }.ru_maxrss
}

#[test]
fn a_million_tiny_records_cost_their_bytes_not_an_entry_each() {
    let env = TestEnv::new();
    let mut text = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"11111111-2222-3333-4444-555555555555\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/tmp/x\"}\n",
    );
    text.push_str(&"{}\n".repeat(1_000_000));
    let f = env.write("tiny.jsonl", text.as_bytes());
    let f = f.display().to_string();
    for args in [
        vec!["validate", f.as_str()],
        vec!["show", f.as_str()],
        vec!["tree", f.as_str()],
        vec!["convert", f.as_str(), "--to", "json"],
    ] {
        let r = env.run(&args);
        assert_eq!(r.status, 0, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.lines().count() < 300,
            "{args:?}: diagnostics are capped and summarized"
        );
    }
    // 3 MB of input: well under 100 MB (it took about 700 MB when each line
    // was an entry).
    let peak_mib = children_peak_kib() / 1024;
    assert!(
        peak_mib < 100,
        "peak resident memory {peak_mib} MiB for 3 MB of input"
    );
}
