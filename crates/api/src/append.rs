//! Appending JSON-lines entries to a session file from a stream
//! (`agentlog append`), through the durable store: the file is locked, a
//! torn tail left by a crash is cut first (into a sidecar), each line is
//! checked to be one JSON object, and an entry's id is acknowledged only
//! once it is on disk under the chosen sync policy.
//!
//! ```
//! use agentlog_api::append::{append_stream, AppendEvent, AppendParams};
//! # let dir = tempfile::tempdir()?;
//! let file = dir.path().join("s.jsonl");
//! let mut acked = Vec::new();
//! let done = append_stream(
//!     &file,
//!     &AppendParams::default(),
//!     Box::new(&b"{\"id\":\"a\"}\n{\"id\":\"b\"}\n"[..]),
//!     &mut |e| if let AppendEvent::Durable(id) = e { acked.push(id) },
//! )?;
//! assert_eq!((done.written, done.invalid), (2, 0));
//! assert_eq!(acked, ["a", "b"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::ApiError;
use agentlog_store::{AppendOptions, AppendWriter, LockMode, StoreError, SyncPolicy};
use serde_json::Value;
use std::io::BufRead;
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Instant;

/// How to append.
#[derive(Debug, Clone, Copy)]
pub struct AppendParams {
    /// When appended lines are synced to disk.
    pub sync: SyncPolicy,
    /// Wait for another writer holding the file instead of failing.
    pub wait: bool,
}

impl Default for AppendParams {
    fn default() -> AppendParams {
        AppendParams {
            sync: SyncPolicy::EveryEntry,
            wait: false,
        }
    }
}

/// What happens while appending, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendEvent {
    /// A torn tail was cut or a missing newline added before appending
    /// (what was done, in words).
    Recovered(String),
    /// Another writer holds the file; waiting for it (who).
    Waiting(String),
    /// An input line is not an entry and was not written.
    Invalid {
        /// The input line number.
        line: u64,
        /// Why.
        why: String,
    },
    /// The entry with this id is on disk.
    Durable(String),
}

/// What an append did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Appended {
    /// Entries written.
    pub written: u64,
    /// Input lines that were not entries.
    pub invalid: u64,
}

/// Appends each line of `input` that is a JSON object to `path` as one
/// entry, reporting through `events`. Blank lines are skipped; input is
/// read on its own thread, so a group under the grouped policy is synced
/// (and acknowledged) when its time is up even if no more input comes.
pub fn append_stream(
    path: &Path,
    params: &AppendParams,
    mut input: Box<dyn BufRead + Send>,
    events: &mut dyn FnMut(AppendEvent),
) -> Result<Appended, ApiError> {
    let (mut w, rec) = open(path, params, events)?;
    if !rec.is_clean() {
        events(AppendEvent::Recovered(rec.to_string()));
    }
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
    let mut done = Appended::default();
    loop {
        let next = match w.sync_deadline() {
            Some(deadline) => {
                match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(v) => Some(v),
                    Err(RecvTimeoutError::Timeout) => {
                        w.sync_if_due()?;
                        ack(&w, &mut unacked, events);
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => None,
                }
            }
            None => rx.recv().ok(),
        };
        let Some(line) = next else { break };
        let line = line.map_err(|e| ApiError::io("<stdin>", e))?;
        number += 1;
        let body = trim(&line);
        if body.is_empty() {
            continue;
        }
        match entry_id(body, number) {
            Ok(id) => {
                w.append_line(body)?;
                done.written += 1;
                unacked.push(id);
                ack(&w, &mut unacked, events);
            }
            Err(why) => {
                done.invalid += 1;
                events(AppendEvent::Invalid { line: number, why });
            }
        }
    }
    w.sync()?;
    ack(&w, &mut unacked, events);
    w.close()?;
    Ok(done)
}

fn open(
    path: &Path,
    params: &AppendParams,
    events: &mut dyn FnMut(AppendEvent),
) -> Result<(AppendWriter, agentlog_store::Recovery), ApiError> {
    let opts = AppendOptions {
        sync: params.sync,
        lock: LockMode::Fail,
    };
    match AppendWriter::open(path, opts) {
        Err(StoreError::Locked { holder, .. }) if params.wait => {
            events(AppendEvent::Waiting(holder));
            let opts = AppendOptions {
                sync: params.sync,
                lock: LockMode::Wait,
            };
            Ok(AppendWriter::open(path, opts)?)
        }
        r => Ok(r?),
    }
}

/// Acknowledges the ids whose lines are durable.
fn ack(w: &AppendWriter, unacked: &mut Vec<String>, events: &mut dyn FnMut(AppendEvent)) {
    if unacked.is_empty() || (w.pending() > 0 && w.policy() != SyncPolicy::None) {
        return;
    }
    for id in unacked.drain(..) {
        events(AppendEvent::Durable(id));
    }
}

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

/// The id of the entry on an input line: its `id`, else its `uuid`, else
/// the line number; an error when the line is not one JSON object.
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
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::time::Duration;

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

    fn run(p: &Path, sync: SyncPolicy, input: &'static [u8]) -> (Appended, Vec<AppendEvent>) {
        let mut events = Vec::new();
        let params = AppendParams { sync, wait: false };
        let done = append_stream(p, &params, Box::new(input), &mut |e| events.push(e)).unwrap();
        (done, events)
    }

    #[test]
    fn appends_valid_lines_acknowledges_ids_and_reports_bad_ones() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s/a.jsonl");
        let grouped = SyncPolicy::Grouped {
            entries: 2,
            interval: Duration::from_secs(3600),
        };
        for sync in [SyncPolicy::EveryEntry, grouped, SyncPolicy::None] {
            let _ = std::fs::remove_file(&p);
            let input =
                b"{\"id\":\"a\"}\n\nnot json\n{\"uuid\":\"b\"}\r\n[1]\n{\"x\":1}\n{\"id\":\"c\"}";
            let (done, events) = run(&p, sync, input);
            assert_eq!(
                done,
                Appended {
                    written: 4,
                    invalid: 2
                }
            );
            let acked: Vec<&str> = events
                .iter()
                .filter_map(|e| match e {
                    AppendEvent::Durable(id) => Some(id.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(acked, ["a", "b", "6", "c"], "{sync:?}");
            assert!(events.iter().any(|e| matches!(e,
                AppendEvent::Invalid { line: 3, why } if why.contains("not valid JSON"))));
            assert!(events.iter().any(|e| matches!(e,
                AppendEvent::Invalid { line: 5, why } if why.contains("not a JSON object"))));
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
        let (done, events) = run(&p, SyncPolicy::EveryEntry, b"{\"id\":\"c\"}\n");
        assert_eq!(done.written, 1);
        assert!(events.iter().any(|e| matches!(e,
            AppendEvent::Recovered(r) if r.contains("cut a torn last line of 8 bytes"))));
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\"id\":\"a\"}\n{\"id\":\"c\"}\n"
        );
        let (_held, _) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        let mut events = Vec::new();
        let e = append_stream(
            &p,
            &AppendParams::default(),
            Box::new(&b"{}\n"[..]),
            &mut |e| events.push(e),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("locked by another writer (pid"),
            "{e}"
        );
        assert!(events.is_empty());
    }
}
