//! What pi's session files are made of: the versions, the record types
//! the model maps, and the keys agentlog adds to keep a file exact.

use agentlog_model::{EntryKind, SessionMeta};
use serde_json::Value;

/// The newest session version pi writes.
pub const CURRENT_VERSION: u64 = 3;

/// The `extra` key listing keys the native record did not have.
pub const ABSENT_KEY: &str = "agentlog:absent";

/// The record type of an entry holding consecutive records that are not
/// part of the tree (no id, no type pi knows), as their lines of text.
pub const RAW_LINES: &str = "agentlog:lines";

/// True for an entry of [`RAW_LINES`].
pub fn is_raw_lines(e: &agentlog_model::Entry) -> bool {
    matches!(&e.kind, EntryKind::Unknown { record_type: Some(rt), .. } if rt == RAW_LINES)
}

/// The record types of pi and oh-my-pi entries the model maps.
pub const ENTRY_TYPES: &[&str] = &[
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "ttsr_injection",
    "session_init",
];

/// True for a version that has no tree (1, or the header has no version).
pub fn is_v1(version: u64) -> bool {
    version < 2
}

/// Returns the version a header declares: 1 when it has none; unreadable
/// values count as the current version.
pub fn header_version(v: Option<&Value>) -> u64 {
    match v {
        None | Some(Value::Null) => 1,
        Some(x) => x.as_u64().unwrap_or(CURRENT_VERSION),
    }
}

pub(crate) fn version_of_meta(meta: &SessionMeta) -> u64 {
    header_version(meta.format_version.as_ref())
}
