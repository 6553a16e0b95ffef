//! Finding and reading the session a command names (through the library
//! API, adding what to do next to its errors).

use agentlog_api::ApiError;
use agentlog_formats::{Format, Read};
use std::path::PathBuf;

/// Returns the format called `name`, or an error listing the known names.
pub fn format_named(name: &str) -> anyhow::Result<&'static dyn Format> {
    Ok(agentlog_api::resolve::format_named(name)?)
}

/// Adds the command that lists sessions to a not-found error.
fn hint(e: ApiError) -> anyhow::Error {
    match e {
        ApiError::NotFound { .. } => {
            anyhow::Error::new(e).context("`agentlog ls` lists the sessions and their ids")
        }
        e => e.into(),
    }
}

/// Returns the path a session argument names: an existing path as is;
/// otherwise an id (or id prefix) looked up among discovered sessions.
pub fn resolve(arg: &str) -> anyhow::Result<PathBuf> {
    let settings = crate::config::settings(&[])?;
    agentlog_api::resolve::resolve_path(&settings, arg).map_err(hint)
}

/// Reads the session at `arg` with format `from`, or the detected one.
///
/// `-` reads standard input (up to the input size cap); any other path
/// must be a regular file (never a FIFO or a device).
pub fn read(arg: &str, from: Option<&str>) -> anyhow::Result<(PathBuf, &'static dyn Format, Read)> {
    use agentlog_formats::registry;
    use anyhow::Context;
    if arg == "-" {
        let path = PathBuf::from("<stdin>");
        let bytes = agentlog_formats::input::read_capped(&path, std::io::stdin().lock(), 0)?;
        let format = match from {
            Some(name) => registry::by_name(name)
                .ok_or_else(|| anyhow::anyhow!("unknown format {name:?}; known formats: {}", registry::names()))?,
            None => registry::detect_bytes(&path, &bytes).ok_or_else(|| {
                anyhow::anyhow!(
                    "standard input is not a session agentlog recognises; name its format with --from (known: {})",
                    registry::names()
                )
            })?,
        };
        let read = format
            .read_bytes(&path, &bytes)
            .with_context(|| format!("reading standard input as {}", format.name()))?;
        return Ok((path, format, read));
    }
    let settings = crate::config::settings(&[])?;
    agentlog_api::resolve::read(&settings, arg, from).map_err(hint)
}
