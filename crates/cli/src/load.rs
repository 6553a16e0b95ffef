//! Finding and reading the session a command names.

use agentlog_formats::{registry, Format, Read};
use anyhow::{anyhow, Context};
use std::path::{Path, PathBuf};

/// Returns the format called `name`, or an error listing the known names.
pub fn format_named(name: &str) -> anyhow::Result<&'static dyn Format> {
    registry::by_name(name).ok_or_else(|| {
        anyhow!(
            "unknown format {name:?}; known formats: {}",
            registry::names()
        )
    })
}

/// Returns the path a session argument names: an existing path as is;
/// otherwise an id (or id prefix) looked up among discovered sessions.
pub fn resolve(arg: &str) -> anyhow::Result<PathBuf> {
    let p = Path::new(arg);
    if p.exists() {
        return Ok(p.to_path_buf());
    }
    Err(anyhow!(
        "{arg}: no such file, and no session with that id was found"
    ))
}

/// Reads the session at `arg` with format `from`, or the detected one.
pub fn read(arg: &str, from: Option<&str>) -> anyhow::Result<(PathBuf, &'static dyn Format, Read)> {
    let path = resolve(arg)?;
    let format = match from {
        Some(name) => format_named(name)?,
        None => registry::detect(&path)?,
    };
    let read = format
        .read_path(&path)
        .with_context(|| format!("reading {} as {}", path.display(), format.name()))?;
    Ok((path, format, read))
}
