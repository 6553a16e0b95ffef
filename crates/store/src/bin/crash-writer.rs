//! A writer process for the store's crash tests: appends entries to a
//! session file and prints `ack <id>` on stdout after each append that
//! returned `Ok`, until it is killed.
//!
//! `crash-writer FILE RUN [--policy every|grouped|none] [--tear N] [--wait] [--count N]`
//!
//! - `RUN` goes into every id (`r<RUN>-<i>`), so ids are unique across runs.
//! - `--tear N`: after `N` acknowledged entries, write the first part of a
//!   line straight to the file (bypassing the writer), print `tear <bytes>`
//!   and abort, as a crash in the middle of a write would leave it.
//! - Under `grouped`, `ack` lines follow each sync instead; under `none`
//!   they follow each write.
//!
//! - `--count N`: stop after `N` entries, close and print `done`.
//!
//! It prints `open <torn_bytes> <newline_added>` once the file is open.

use agentlog_store::{AppendOptions, AppendWriter, LockMode, SyncPolicy};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("crash-writer: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(
        args.next()
            .ok_or("usage: crash-writer FILE RUN [--policy P] [--tear N] [--wait]")?,
    );
    let run: u64 = args.next().ok_or("missing RUN")?.parse()?;
    let mut sync = SyncPolicy::EveryEntry;
    let mut tear: Option<u64> = None;
    let mut lock = LockMode::Fail;
    let mut count = u64::MAX;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--policy" => {
                sync = match args.next().as_deref() {
                    Some("every") => SyncPolicy::EveryEntry,
                    Some("grouped") => SyncPolicy::Grouped {
                        entries: 8,
                        interval: std::time::Duration::from_millis(5),
                    },
                    Some("none") => SyncPolicy::None,
                    other => return Err(format!("unknown policy {other:?}").into()),
                }
            }
            "--tear" => tear = Some(args.next().ok_or("--tear needs a count")?.parse()?),
            "--wait" => lock = LockMode::Wait,
            "--count" => count = args.next().ok_or("--count needs a number")?.parse()?,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let (mut w, rec) = AppendWriter::open(&path, AppendOptions { sync, lock })?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "open {} {}", rec.torn_bytes, rec.newline_added)?;
    out.flush()?;
    let mut unacked: Vec<String> = Vec::new();
    let mut seed = run.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in 0..count {
        if tear == Some(i) {
            // Half of a line, written the way a crash mid-write leaves it.
            let line = entry(run, i, pad_len(&mut seed));
            let cut = (line.len() / 2).max(1);
            let mut raw = std::fs::OpenOptions::new().append(true).open(&path)?;
            raw.write_all(&line.as_bytes()[..cut])?;
            writeln!(out, "tear {cut}")?;
            out.flush()?;
            std::process::abort();
        }
        let id = format!("r{run}-{i}");
        w.append_line(entry(run, i, pad_len(&mut seed)).as_bytes())?;
        unacked.push(id);
        // Under `none` a line counts once written (it survives the
        // process, not a power loss); otherwise once synced.
        if w.pending() == 0 || w.policy() == SyncPolicy::None {
            for id in unacked.drain(..) {
                writeln!(out, "ack {id}")?;
            }
            out.flush()?;
        }
    }
    w.close()?;
    for id in unacked.drain(..) {
        writeln!(out, "ack {id}")?;
    }
    writeln!(out, "done")?;
    out.flush()?;
    Ok(())
}

/// Returns the next padding length: mostly small lines, some spanning
/// several pages (so that a kill can cut a write short).
fn pad_len(seed: &mut u64) -> usize {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    match *seed % 16 {
        0 => 8_000 + (*seed >> 8) as usize % 32_000,
        1..=3 => 2_000 + (*seed >> 8) as usize % 6_000,
        _ => 50 + (*seed >> 8) as usize % 1_500,
    }
}

fn entry(run: u64, i: u64, pad: usize) -> String {
    format!(
        "{{\"id\":\"r{run}-{i}\",\"type\":\"message\",\"n\":{i},\"pad\":\"{}\"}}",
        "x".repeat(pad)
    )
}
