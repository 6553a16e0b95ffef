//! agentlog's own format: the unified model as JSON. It holds everything
//! every other format can, so converting to it never loses anything.
//!
//! The module's files are those of every format module: `wire.rs` (the
//! document: the model's own serde form, `meta` first), `read.rs`,
//! `write.rs` and `validate.rs` (what a document must hold).

mod read;
mod validate;
mod wire;
mod write;

use crate::{Diagnostic, Fidelity, Format, FormatError, Read};
use agentlog_model::{Agent, Session};
use std::io::Write;
use std::path::Path;

/// The unified-model JSON format.
pub struct JsonFormat;

/// The registry entry.
pub static FORMAT: JsonFormat = JsonFormat;

impl Format for JsonFormat {
    fn name(&self) -> &'static str {
        "json"
    }

    fn description(&self) -> &'static str {
        "agentlog's unified session model as JSON (lossless for every format)"
    }

    fn agent(&self) -> Agent {
        Agent::Agentlog
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, _path: &Path, head: &[u8]) -> u8 {
        wire::detect(head)
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read(path, bytes)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }
}
