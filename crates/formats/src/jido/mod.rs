//! jido_code persisted session (JSON).
//!
//! Placeholder: this module is being written.

use crate::{Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::Path;

/// The jido format.
pub struct JidoFormat;

/// The registry entry.
pub static FORMAT: JidoFormat = JidoFormat;

impl Format for JidoFormat {
    fn name(&self) -> &'static str {
        "jido"
    }

    fn description(&self) -> &'static str {
        "jido_code persisted session (JSON)"
    }

    fn agent(&self) -> Agent {
        Agent::JidoCode
    }

    fn detect(&self, _path: &Path, _head: &[u8]) -> u8 {
        0
    }

    fn read_bytes(&self, _path: &Path, _bytes: &[u8]) -> Result<Read, FormatError> {
        Err(FormatError::Unsupported {
            format: "jido",
            operation: "reading",
        })
    }
}
