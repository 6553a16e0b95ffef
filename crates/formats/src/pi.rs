//! pi / oh-my-pi session tree (JSONL, versions 1-3).
//!
//! Placeholder: this module is being written.

use crate::{Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::Path;

/// The pi format.
pub struct PiFormat;

/// The registry entry.
pub static FORMAT: PiFormat = PiFormat;

impl Format for PiFormat {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn description(&self) -> &'static str {
        "pi / oh-my-pi session tree (JSONL, versions 1-3)"
    }

    fn agent(&self) -> Agent {
        Agent::Pi
    }

    fn detect(&self, _path: &Path, _head: &[u8]) -> u8 {
        0
    }

    fn read_bytes(&self, _path: &Path, _bytes: &[u8]) -> Result<Read, FormatError> {
        Err(FormatError::Unsupported {
            format: "pi",
            operation: "reading",
        })
    }
}
