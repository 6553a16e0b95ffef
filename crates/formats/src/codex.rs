//! Codex CLI rollout (JSONL).
//!
//! Placeholder: this module is being written.

use crate::{Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::Path;

/// The codex format.
pub struct CodexFormat;

/// The registry entry.
pub static FORMAT: CodexFormat = CodexFormat;

impl Format for CodexFormat {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn description(&self) -> &'static str {
        "Codex CLI rollout (JSONL)"
    }

    fn agent(&self) -> Agent {
        Agent::Codex
    }

    fn detect(&self, _path: &Path, _head: &[u8]) -> u8 {
        0
    }

    fn read_bytes(&self, _path: &Path, _bytes: &[u8]) -> Result<Read, FormatError> {
        Err(FormatError::Unsupported {
            format: "codex",
            operation: "reading",
        })
    }
}
