//! The settings of this process (see [`agentlog_api::settings`]): the
//! environment, the configuration file and `--root` flags.

pub use agentlog_api::settings::process_env;
pub use agentlog_api::Settings;
use std::path::Path;

/// Returns the discovery settings: the process environment, the
/// configuration file, then `--root` flags (which replace the file's roots
/// for the agents they name).
pub fn settings(root_flags: &[String]) -> anyhow::Result<Settings> {
    settings_at(None, root_flags)
}

/// Like [`settings`], with the index at `index` when one is given
/// (`--index`).
pub fn settings_at(index: Option<&Path>, root_flags: &[String]) -> anyhow::Result<Settings> {
    Settings::from_process_at(index, root_flags).map_err(|e| match e {
        // Only the flags can hold these at the top level (the file's own
        // are reported as configuration errors with its path).
        agentlog_api::ApiError::BadRoot { .. } | agentlog_api::ApiError::UnknownAgent { .. } => {
            anyhow::Error::new(e).context("--root")
        }
        e => e.into(),
    })
}
