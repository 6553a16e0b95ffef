//! acpx session record (JSON) and audit log.
//!
//! Placeholder: this module is being written.

use crate::{Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::Path;

/// The acpx format.
pub struct AcpxFormat;

/// The registry entry.
pub static FORMAT: AcpxFormat = AcpxFormat;

impl Format for AcpxFormat {
    fn name(&self) -> &'static str {
        "acpx"
    }

    fn description(&self) -> &'static str {
        "acpx session record (JSON) and audit log"
    }

    fn agent(&self) -> Agent {
        Agent::Acpx
    }

    fn detect(&self, _path: &Path, _head: &[u8]) -> u8 {
        0
    }

    fn read_bytes(&self, _path: &Path, _bytes: &[u8]) -> Result<Read, FormatError> {
        Err(FormatError::Unsupported {
            format: "acpx",
            operation: "reading",
        })
    }
}
