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
pub fn read(arg: &str, from: Option<&str>) -> anyhow::Result<(PathBuf, &'static dyn Format, Read)> {
    let settings = crate::config::settings(&[])?;
    agentlog_api::resolve::read(&settings, arg, from).map_err(hint)
}
