//! What OpenHands' event store is made of: its folder names and the usage
//! of a model response.

use crate::{Diagnostic, FormatError};
use agentlog_model::{Entry, EntryKind, Session, Timestamp};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The folder of a session's events.
pub(super) const EVENTS: &str = "events";

/// The number of an event file of the 0.x store (`<n>.json`).
pub(super) fn store_event_number(name: &str) -> Option<u64> {
    name.strip_suffix(".json")?.parse().ok()
}

/// The `events` folder `path` names: the folder itself, or the folder of
/// one of its event files (`<n>.json` in 0.x, `event-<n>-<uuid>.json` in
/// 1.x), or the folder of a 1.x conversation (with `base_state.json`).
pub(super) fn events_dir(path: &Path) -> Option<PathBuf> {
    if path.file_name().is_some_and(|n| n == EVENTS) {
        return Some(path.to_path_buf());
    }
    if path
        .file_name()
        .is_some_and(|n| n == super::conversation::BASE_STATE)
    {
        return Some(path.parent()?.join(EVENTS));
    }
    let numbered = path
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        || path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(super::conversation::event_number)
            .is_some();
    if let Some(parent) = path.parent() {
        if numbered && parent.file_name().is_some_and(|n| n == EVENTS) {
            return Some(parent.to_path_buf());
        }
    }
    // Last, as it asks the file system: a 1.x conversation's folder.
    let events = path.join(EVENTS);
    (path.join(super::conversation::BASE_STATE).is_file()
        || (events.is_dir() && super::conversation::is_conversation(&events)))
    .then_some(events)
}

pub(super) use crate::chat::openai_usage as usage_of;

/// The event files of `dir` whose names `number` gives a number, in their
/// numbers' order.
pub(super) fn event_files(
    dir: &Path,
    number: fn(&str) -> Option<u64>,
) -> Result<Vec<(u64, PathBuf)>, FormatError> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| FormatError::io(dir, e))? {
        let Ok(e) = e else { continue };
        let p = e.path();
        if let Some(n) = p.file_name().and_then(|n| n.to_str()).and_then(number) {
            files.push((n, p));
        }
    }
    files.sort();
    Ok(files)
}

/// One event file: its object, or (`Err`) a JSON value that is not an
/// object, which the caller keeps verbatim; `None`, said in `diags`, when
/// the file cannot be read or is not JSON.
pub(super) fn event_file(
    file: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Option<Result<Map<String, Value>, Value>> {
    let bytes = match crate::input::read_file(file) {
        Ok(b) => b,
        Err(e) => {
            diags.push(Diagnostic::warning(file, None, "unreadable", e.to_string()));
            return None;
        }
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(m)) => Some(Ok(m)),
        Ok(other) => {
            diags.push(Diagnostic::warning(
                file,
                None,
                "unknown-record",
                "not a JSON object; kept verbatim",
            ));
            Some(Err(other))
        }
        Err(e) => {
            diags.push(Diagnostic::warning(
                file,
                Some(e.line() as u64),
                "invalid-json",
                format!("not JSON: {e}"),
            ));
            None
        }
    }
}

/// Adds `e` to `session` after its current leaf.
pub(super) fn push(session: &mut Session, mut e: Entry) {
    e.parent_id = session.leaf_id.clone();
    session.push(e);
}

/// The entry of an event file that is not a JSON object, kept verbatim.
pub(super) fn unknown(n: u64, raw: Value) -> Entry {
    let mut e = Entry::new(
        format!("e{n}"),
        None,
        EntryKind::Unknown {
            record_type: None,
            raw,
        },
    );
    e.line = Some(n);
    e
}

/// An event's time, as written.
pub(super) fn event_time(ev: &Map<String, Value>) -> Option<Timestamp> {
    ev.get("timestamp")
        .and_then(Value::as_str)
        .map(|t| Timestamp::Text(t.to_string()))
}
