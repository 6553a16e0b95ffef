//! `--redact`: one call that redacts a session and reports it on stderr.

use agentlog_model::Session;
use agentlog_redact::Redactor;

/// Redacts `session` in place when `on` is set and prints the redaction
/// report on standard error (as JSON when `json`), beside the fidelity
/// report.
pub fn apply(session: &mut Session, on: bool, json: bool) -> anyhow::Result<()> {
    if !on {
        return Ok(());
    }
    let report = Redactor::builtin()?.session(session);
    if json {
        eprintln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        eprint!("{}", sanitized(&report.to_string()));
    }
    Ok(())
}

/// The report's text with session-controlled parts (entry ids, field
/// names from native keys) made safe for a terminal.
pub fn sanitized(text: &str) -> String {
    agentlog_formats::render::sanitize::sanitize(text).into_owned()
}
