//! Cursor CLI chat (store.db or agent transcript JSONL).
//!
//! Placeholder: this module is being written.

use crate::{Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::Path;

/// The cursor format.
pub struct CursorFormat;

/// The registry entry.
pub static FORMAT: CursorFormat = CursorFormat;

impl Format for CursorFormat {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn description(&self) -> &'static str {
        "Cursor CLI chat (store.db or agent transcript JSONL)"
    }

    fn agent(&self) -> Agent {
        Agent::Cursor
    }

    fn detect(&self, _path: &Path, _head: &[u8]) -> u8 {
        0
    }

    fn read_bytes(&self, _path: &Path, _bytes: &[u8]) -> Result<Read, FormatError> {
        Err(FormatError::Unsupported {
            format: "cursor",
            operation: "reading",
        })
    }
}
