//! Gemini CLI chat (session-*.json or .jsonl).
//!
//! Placeholder: this module is being written.

use crate::{Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::Path;

/// The gemini format.
pub struct GeminiFormat;

/// The registry entry.
pub static FORMAT: GeminiFormat = GeminiFormat;

impl Format for GeminiFormat {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn description(&self) -> &'static str {
        "Gemini CLI chat (session-*.json or .jsonl)"
    }

    fn agent(&self) -> Agent {
        Agent::Gemini
    }

    fn detect(&self, _path: &Path, _head: &[u8]) -> u8 {
        0
    }

    fn read_bytes(&self, _path: &Path, _bytes: &[u8]) -> Result<Read, FormatError> {
        Err(FormatError::Unsupported {
            format: "gemini",
            operation: "reading",
        })
    }
}
