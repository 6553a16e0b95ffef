//! Writes a document: the session, pretty-printed, nothing left out.

use crate::{Fidelity, FormatError};
use agentlog_model::Session;
use std::io::Write;

/// Writes `session` to `out`.
pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    serde_json::to_writer_pretty(&mut *out, session)
        .map_err(|e| FormatError::write("session JSON", std::io::Error::from(e)))?;
    out.write_all(b"\n")
        .map_err(|e| FormatError::write("session JSON", e))?;
    Ok(Fidelity::new("json"))
}
