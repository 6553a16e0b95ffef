//! codelia run log (JSONL) and resume state.
//!
//! Placeholder: this module is being written.

use crate::{Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::Path;

/// The codelia format.
pub struct CodeliaFormat;

/// The registry entry.
pub static FORMAT: CodeliaFormat = CodeliaFormat;

impl Format for CodeliaFormat {
    fn name(&self) -> &'static str {
        "codelia"
    }

    fn description(&self) -> &'static str {
        "codelia run log (JSONL) and resume state"
    }

    fn agent(&self) -> Agent {
        Agent::Codelia
    }

    fn detect(&self, _path: &Path, _head: &[u8]) -> u8 {
        0
    }

    fn read_bytes(&self, _path: &Path, _bytes: &[u8]) -> Result<Read, FormatError> {
        Err(FormatError::Unsupported {
            format: "codelia",
            operation: "reading",
        })
    }
}
