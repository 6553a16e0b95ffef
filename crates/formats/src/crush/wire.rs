//! What Crush's database is made of: its names, the part types of the
//! versions verified, and its times.

use agentlog_model::Timestamp;
use serde_json::Value;

/// The project's data folder.
pub(super) const DATA_DIR: &str = ".crush";
/// The database in it.
pub(super) const DB: &str = "crush.db";

/// The title Crush gives a session it has not named.
pub(super) const UNTITLED: &str = "New Session";

/// The part types the versions verified write.
pub(super) const KNOWN_PARTS: &[&str] = &[
    "text",
    "reasoning",
    "tool_call",
    "tool_result",
    "finish",
    "image_url",
    "binary",
    "shell_command",
];

/// A time column: Unix seconds (the schema's comments say milliseconds,
/// the code writes seconds).
pub(super) fn seconds(v: Option<&Value>) -> Option<Timestamp> {
    v.and_then(Value::as_i64)
        .filter(|s| *s > 0)
        .map(|s| Timestamp::Millis(s * 1000))
}
