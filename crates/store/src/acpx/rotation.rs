//! Rotation and retention of the event log segments.

use crate::StoreError;
use agentlog_formats::acpx::events::{rotated_segments, segment_path};
use std::fs;
use std::path::Path;

/// Rotates the segments of `id` in `dir`, keeping at most `max_segments`
/// segment files in all (the active one included):
///
/// 1. `.events.(n-1).ndjson` becomes `.events.n.ndjson`, from the highest
///    number down;
/// 2. the active `.events.ndjson` becomes `.events.1.ndjson`;
/// 3. (the caller opens a new, empty active segment);
/// 4. rotated segments numbered `max_segments` or more are deleted.
///
/// The active segment's writer must be closed while this runs.
pub fn rotate(dir: &Path, id: &str, max_segments: u64) -> Result<(), StoreError> {
    let keep_rotated = max_segments.saturating_sub(1);
    let existing = rotated_segments(dir, id);
    // Shift from the highest number down so nothing is overwritten.
    for &n in existing.iter().rev() {
        let from = segment_path(dir, id, n);
        if n + 1 > keep_rotated {
            remove(&from)?;
        } else {
            let to = segment_path(dir, id, n + 1);
            fs::rename(&from, &to).map_err(|e| StoreError::io(&from, "rename segment", e))?;
        }
    }
    let active = segment_path(dir, id, 0);
    if active.exists() {
        if keep_rotated >= 1 {
            let to = segment_path(dir, id, 1);
            fs::rename(&active, &to).map_err(|e| StoreError::io(&active, "rename segment", e))?;
        } else {
            remove(&active)?;
        }
    }
    // Anything still beyond the limit (left from a larger limit) goes too.
    for n in rotated_segments(dir, id) {
        if n > keep_rotated {
            remove(&segment_path(dir, id, n))?;
        }
    }
    crate::snapshot::sync_dir(dir)
}

fn remove(path: &Path) -> Result<(), StoreError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StoreError::io(path, "delete segment", e)),
    }
}

/// Returns how many segment files of `id` exist (the active one and the
/// rotated ones).
pub fn segment_count(dir: &Path, id: &str) -> u64 {
    let active = u64::from(segment_path(dir, id, 0).is_file());
    active + rotated_segments(dir, id).len() as u64
}
