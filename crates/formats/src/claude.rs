//! Claude Code project transcript (JSONL).
//!
//! Placeholder: this module is being written.

use crate::{Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::Path;

/// The claude format.
pub struct ClaudeFormat;

/// The registry entry.
pub static FORMAT: ClaudeFormat = ClaudeFormat;

impl Format for ClaudeFormat {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn description(&self) -> &'static str {
        "Claude Code project transcript (JSONL)"
    }

    fn agent(&self) -> Agent {
        Agent::Claude
    }

    fn detect(&self, _path: &Path, _head: &[u8]) -> u8 {
        0
    }

    fn read_bytes(&self, _path: &Path, _bytes: &[u8]) -> Result<Read, FormatError> {
        Err(FormatError::Unsupported {
            format: "claude",
            operation: "reading",
        })
    }
}
