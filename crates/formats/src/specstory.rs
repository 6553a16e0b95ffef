//! SpecStory SessionData 1.0 (JSON).
//!
//! Placeholder: this module is being written.

use crate::{Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::Path;

/// The specstory format.
pub struct SpecStoryFormat;

/// The registry entry.
pub static FORMAT: SpecStoryFormat = SpecStoryFormat;

impl Format for SpecStoryFormat {
    fn name(&self) -> &'static str {
        "specstory"
    }

    fn description(&self) -> &'static str {
        "SpecStory SessionData 1.0 (JSON)"
    }

    fn agent(&self) -> Agent {
        Agent::SpecStory
    }

    fn detect(&self, _path: &Path, _head: &[u8]) -> u8 {
        0
    }

    fn read_bytes(&self, _path: &Path, _bytes: &[u8]) -> Result<Read, FormatError> {
        Err(FormatError::Unsupported {
            format: "specstory",
            operation: "reading",
        })
    }
}
