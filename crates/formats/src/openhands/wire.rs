//! What OpenHands' event store is made of: its folder names and the usage
//! of a model response.

use std::path::{Path, PathBuf};

/// The folder of a session's events.
pub(super) const EVENTS: &str = "events";

/// The `events` folder `path` names: the folder itself, or the folder of
/// one of its event files (`<n>.json` in 0.x, `event-<n>-<uuid>.json` in
/// 1.x), or the folder of a 1.x conversation (with `base_state.json`).
pub(super) fn events_dir(path: &Path) -> Option<PathBuf> {
    if path.file_name().is_some_and(|n| n == EVENTS) {
        return Some(path.to_path_buf());
    }
    if path.join(super::conversation::BASE_STATE).is_file() {
        return Some(path.join(EVENTS));
    }
    if path
        .file_name()
        .is_some_and(|n| n == super::conversation::BASE_STATE)
    {
        return Some(path.parent()?.join(EVENTS));
    }
    let parent = path.parent()?;
    let numbered = path
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        || path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(super::conversation::event_number)
            .is_some();
    (numbered && parent.file_name().is_some_and(|n| n == EVENTS)).then(|| parent.to_path_buf())
}

pub(super) use crate::chat::openai_usage as usage_of;
