//! What a jido_code session file is made of: the order of its top-level
//! fields, its timestamps and the pretty-printing jido_code writes.

use agentlog_model::Timestamp;
use serde_json::Value;

/// The order of the top-level fields in the seed.
pub(super) const ORDER: [&str; 10] = [
    "version",
    "id",
    "name",
    "project_path",
    "config",
    "created_at",
    "updated_at",
    "closed_at",
    "conversation",
    "todos",
];

/// Returns the document as jido_code lays it out (two-space indents).
pub fn to_pretty(doc: &Value) -> std::io::Result<Vec<u8>> {
    serde_json::to_vec_pretty(doc).map_err(std::io::Error::other)
}

pub(super) fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_string)
}

pub(super) fn ts(v: Option<&Value>) -> Option<Timestamp> {
    text(v).map(Timestamp::Text)
}

pub(super) fn ts_text(t: &Timestamp) -> String {
    match t {
        Timestamp::Text(s) => s.clone(),
        Timestamp::Millis(_) => t.to_rfc3339(),
    }
}
