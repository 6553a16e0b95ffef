use agentlog_store::{AppendOptions, AppendWriter, LockMode, StoreError, SyncPolicy};
use anyhow::Context;
use serde_json::Value;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Append JSONL entries from standard input to a session file, durably.
///
/// Each input line must be one JSON object; it is appended as one whole
/// line. The entry's id (its `id`, else its `uuid`, else its input line
/// number) is printed on standard output once the entry is durable under
/// the sync policy, so a caller that reads an id back knows the entry
/// survives a crash. Invalid lines are reported on standard error with
/// their input line number and not written; the exit status is then 1.
///
/// The file is created (0600, in 0700 directories) if missing. A torn last
/// line left by a crashed writer is first moved to a sidecar file beside
/// it. Only one writer appends to a file at a time.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The session file to append to.
    pub file: PathBuf,
    /// When entries are forced to disk: `every` entry (an acknowledged
    /// entry survives a power loss), `grouped` (one sync per group of
    /// entries; ids are printed after their group's sync), or `none`
    /// (acknowledged once handed to the OS: survives the process, not a
    /// power loss).
    #[arg(long, value_enum, default_value_t = Sync::Every)]
    pub sync: Sync,
    /// Entries per sync under `--sync grouped`.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub group_entries: usize,
    /// Longest wait in milliseconds before a sync under `--sync grouped`.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    pub group_ms: u64,
    /// Wait for another writer of the file to finish instead of failing.
    #[arg(long)]
    pub wait: bool,
}

/// The `--sync` policies.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    /// fsync after every entry.
    Every,
    /// fsync per group of entries (see --group-entries, --group-ms).
    Grouped,
    /// Never fsync explicitly.
    None,
}

/// Runs `agentlog append`.
pub fn cmd_append(args: Args) -> anyhow::Result<ExitCode> {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    append_from(
        &args,
        Box::new(std::io::BufReader::new(std::io::stdin())),
        &mut stdout.lock(),
        &mut stderr.lock(),
    )
}

/// Appends the entries read from `input`, acknowledging ids on `out` and
/// reporting invalid lines on `err`.
fn append_from(
    args: &Args,
    mut input: Box<dyn BufRead + Send>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let sync = match args.sync {
        Sync::Every => SyncPolicy::EveryEntry,
        Sync::Grouped => SyncPolicy::Grouped {
            entries: args.group_entries.max(1),
            interval: Duration::from_millis(args.group_ms),
        },
        Sync::None => SyncPolicy::None,
    };
    let (mut w, rec) = open(args, sync, err)?;
    if !rec.is_clean() {
        writeln!(err, "agentlog: {}: {rec}", args.file.display())?;
    }

    // Standard input is read on its own thread so that, under the grouped
    // policy, a group is synced (and its ids printed) when its time is up
    // even if no further input comes.
    let (tx, rx) = mpsc::sync_channel::<std::io::Result<Vec<u8>>>(1024);
    std::thread::spawn(move || loop {
        let mut line = Vec::new();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                if tx.send(Ok(line)).is_err() {
                    break;
                }
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                break;
            }
        }
    });

    let mut unacked: Vec<String> = Vec::new();
    let mut number = 0u64;
    let mut invalid = 0u64;
    let mut written = 0u64;
    loop {
        let next = match w.sync_deadline() {
            Some(deadline) => {
                match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(v) => Some(v),
                    Err(RecvTimeoutError::Timeout) => {
                        w.sync_if_due().context("syncing appended entries")?;
                        ack(out, &w, &mut unacked)?;
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => None,
                }
            }
            None => rx.recv().ok(),
        };
        let Some(line) = next else { break };
        let line = line.context("reading standard input")?;
        number += 1;
        let body = trim(&line);
        if body.is_empty() {
            continue;
        }
        let id = match entry_id(body, number) {
            Ok(id) => id,
            Err(why) => {
                invalid += 1;
                writeln!(err, "agentlog: <stdin>:{number}: {why}; not written")?;
                continue;
            }
        };
        w.append_line(body)
            .with_context(|| format!("appending the entry of input line {number}"))?;
        written += 1;
        unacked.push(id);
        ack(out, &w, &mut unacked)?;
    }
    w.sync().context("syncing appended entries")?;
    ack(out, &w, &mut unacked)?;
    w.close().context("closing")?;
    if invalid > 0 {
        writeln!(
            err,
            "agentlog: {}: {written} entries appended, {invalid} invalid input lines not written",
            args.file.display()
        )?;
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Opens the writer; with `--wait`, says who is waited for.
fn open(
    args: &Args,
    sync: SyncPolicy,
    err: &mut dyn Write,
) -> anyhow::Result<(AppendWriter, agentlog_store::Recovery)> {
    let opts = AppendOptions {
        sync,
        lock: LockMode::Fail,
    };
    match AppendWriter::open(&args.file, opts) {
        Err(StoreError::Locked { holder, .. }) if args.wait => {
            writeln!(
                err,
                "agentlog: {}: waiting for the writer holding it ({holder})",
                args.file.display()
            )?;
            let opts = AppendOptions {
                sync,
                lock: LockMode::Wait,
            };
            Ok(AppendWriter::open(&args.file, opts)?)
        }
        r => Ok(r?),
    }
}

/// Prints the ids of entries that are now durable under the policy.
fn ack(out: &mut dyn Write, w: &AppendWriter, unacked: &mut Vec<String>) -> anyhow::Result<()> {
    if unacked.is_empty() || (w.pending() > 0 && w.policy() != SyncPolicy::None) {
        return Ok(());
    }
    for id in unacked.drain(..) {
        out.write_all(id.as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// Strips the newline, a `\r` before it and surrounding white space.
fn trim(line: &[u8]) -> &[u8] {
    let start = line
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &line[start..end]
}

/// Checks one input line and returns the id to acknowledge it by.
fn entry_id(body: &[u8], number: u64) -> Result<String, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        if std::str::from_utf8(body).is_err() {
            "not valid UTF-8".to_string()
        } else {
            format!("not valid JSON ({e})")
        }
    })?;
    let Value::Object(map) = &v else {
        return Err("not a JSON object (an entry is one object per line)".to_string());
    };
    let id = ["id", "uuid"].iter().find_map(|k| match map.get(*k) {
        Some(Value::String(s)) if !s.is_empty() && !s.contains(['\n', '\r']) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    });
    Ok(id.unwrap_or_else(|| number.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_from_id_then_uuid_then_the_line_number() {
        assert_eq!(entry_id(br#"{"id":"a","uuid":"b"}"#, 3).unwrap(), "a");
        assert_eq!(entry_id(br#"{"uuid":"b"}"#, 3).unwrap(), "b");
        assert_eq!(entry_id(br#"{"id":7}"#, 3).unwrap(), "7");
        assert_eq!(entry_id(br#"{"type":"x"}"#, 3).unwrap(), "3");
        assert!(entry_id(b"[1]", 1)
            .unwrap_err()
            .contains("not a JSON object"));
        assert!(entry_id(b"{\"a\":", 1)
            .unwrap_err()
            .contains("not valid JSON"));
        assert_eq!(trim(b"  {}\r\n"), b"{}");
        assert_eq!(trim(b" \n"), b"");
    }

    fn args(file: &std::path::Path, sync: Sync) -> Args {
        Args {
            file: file.to_path_buf(),
            sync,
            group_entries: 2,
            group_ms: 3_600_000,
            wait: false,
        }
    }

    fn run(a: &Args, input: &'static [u8]) -> (ExitCode, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = append_from(a, Box::new(input), &mut out, &mut err).unwrap();
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn appends_valid_lines_acknowledges_ids_and_reports_bad_ones() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s/a.jsonl");
        for sync in [Sync::Every, Sync::Grouped, Sync::None] {
            let _ = std::fs::remove_file(&p);
            let input =
                b"{\"id\":\"a\"}\n\nnot json\n{\"uuid\":\"b\"}\r\n[1]\n{\"x\":1}\n{\"id\":\"c\"}";
            let (code, out, err) = run(&args(&p, sync), input);
            assert_eq!(code, ExitCode::FAILURE);
            assert_eq!(out, "a\nb\n6\nc\n", "{sync:?}");
            assert!(err.contains("<stdin>:3: not valid JSON"), "{err}");
            assert!(err.contains("<stdin>:5: not a JSON object"), "{err}");
            assert_eq!(
                std::fs::read_to_string(&p).unwrap(),
                "{\"id\":\"a\"}\n{\"uuid\":\"b\"}\n{\"x\":1}\n{\"id\":\"c\"}\n"
            );
        }
    }

    #[test]
    fn a_torn_tail_is_cut_first_and_a_held_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.jsonl");
        std::fs::write(&p, b"{\"id\":\"a\"}\n{\"id\":\"b").unwrap();
        let (code, out, err) = run(&args(&p, Sync::Every), b"{\"id\":\"c\"}\n");
        assert_eq!(code, ExitCode::SUCCESS);
        assert_eq!(out, "c\n");
        assert!(err.contains("cut a torn last line of 8 bytes"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\"id\":\"a\"}\n{\"id\":\"c\"}\n"
        );

        let (_held, _) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        let mut sink = Vec::new();
        let e = append_from(
            &args(&p, Sync::Every),
            Box::new(&b"{}\n"[..]),
            &mut sink,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(
            format!("{e:#}").contains("locked by another writer (pid"),
            "{e:#}"
        );
        assert!(sink.is_empty());
    }
}
