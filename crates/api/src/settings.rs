//! Where sessions are found and where the index lives: the process
//! environment, the configuration file and explicit roots, in one place.
//!
//! The file is `$AGENTLOG_CONFIG`, or `$XDG_CONFIG_HOME/agentlog/config.toml`
//! (`~/.config/agentlog/config.toml`). A missing file is an empty
//! configuration:
//!
//! ```toml
//! # Agents whose sessions are never searched.
//! exclude = ["jido"]
//!
//! # Where to look instead of an agent's default locations.
//! [roots]
//! claude = ["~/backup/claude", "/mnt/old/.claude"]
//! codex = "/srv/codex-home"
//! ```
//!
//! Roots given as `AGENT=PATH` replace the file's roots for that agent.

use crate::ApiError;
use agentlog_formats::discover::{is_agent_var, DiscoverEnv};
use agentlog_formats::registry;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One path or a list of paths.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// The configuration file's contents.
#[derive(Debug, Default, Deserialize)]
struct File {
    #[serde(default)]
    roots: BTreeMap<String, OneOrMany>,
    #[serde(default)]
    exclude: Vec<String>,
    /// How many days the archive keeps a state that is not a file's latest
    /// (and a file gone from disk); forever when unset.
    #[serde(default)]
    archive_keep_days: Option<u32>,
}

/// Where discovery looks, which agents it leaves out, and where the index
/// is.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The discovery environment (home, agent variables, roots).
    pub env: DiscoverEnv,
    /// Agents (format names) never searched.
    pub exclude: Vec<String>,
    /// The configuration file read, when there was one.
    pub config_path: Option<PathBuf>,
    /// The index file.
    pub index_path: PathBuf,
    /// Where the archive is (see [`Settings::archive_dir`]).
    pub archive: ArchivePlace,
    /// How many days the archive keeps a state that is not its file's
    /// latest, and a file gone from disk (`archive_keep_days` in the
    /// configuration file, `$AGENTLOG_ARCHIVE_KEEP_DAYS`); forever when
    /// `None`, the default.
    pub archive_keep_days: Option<u32>,
    /// Whether the caller runs the full check of the index a read finds
    /// due once it has answered (see [`crate::refresh::for_reading`]): true
    /// for this process unless `$AGENTLOG_NO_BACKGROUND` is set (a check
    /// started in the background runs with it, so that it starts no
    /// other); false for settings made without the process.
    pub background_checks: bool,
}

/// Where agentlog's archive of session files is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ArchivePlace {
    /// Beside the index (`archive/` next to `index.sqlite`).
    #[default]
    BesideIndex,
    /// Here.
    At(PathBuf),
    /// No archive: sessions are only read where their agents keep them.
    Off,
}

impl Settings {
    /// Returns settings for a home directory alone: the agents' default
    /// locations under `home`, no configuration file, the index under
    /// `home/.local/share/agentlog`.
    pub fn with_home(home: impl Into<PathBuf>) -> Settings {
        let env = DiscoverEnv::with_home(home);
        let index_path = default_index_path(&env);
        Settings {
            env,
            exclude: Vec::new(),
            config_path: None,
            index_path,
            archive: ArchivePlace::BesideIndex,
            archive_keep_days: None,
            background_checks: false,
        }
    }

    /// Returns the settings of this process: `HOME` and the variables
    /// agents honour, `$AGENTLOG_INDEX`, the configuration file, then
    /// `roots` (`AGENT=PATH`, replacing the file's roots for that agent).
    pub fn from_process(roots: &[String]) -> Result<Settings, ApiError> {
        let mut s = Settings::from_env(process_env(), roots)?;
        if let Some(p) = std::env::var_os("AGENTLOG_INDEX").filter(|v| !v.is_empty()) {
            s.index_path = PathBuf::from(p);
        }
        if let Some(p) = std::env::var_os("AGENTLOG_ARCHIVE").filter(|v| !v.is_empty()) {
            s.archive = if p == "off" {
                ArchivePlace::Off
            } else {
                ArchivePlace::At(PathBuf::from(p))
            };
        }
        if let Some(d) = std::env::var("AGENTLOG_ARCHIVE_KEEP_DAYS")
            .ok()
            .filter(|v| !v.is_empty())
        {
            s.archive_keep_days = match d.trim() {
                "forever" => None,
                n => Some(n.parse().map_err(|_| ApiError::Config {
                    path: PathBuf::from("AGENTLOG_ARCHIVE_KEEP_DAYS"),
                    line: None,
                    message: format!("{d:?}: a number of days, or forever"),
                })?),
            };
        }
        s.background_checks = std::env::var_os("AGENTLOG_NO_BACKGROUND").is_none();
        Ok(s)
    }

    /// Returns the settings of this process (see
    /// [`Settings::from_process`]) with the index at `index` when the
    /// caller names one: an index given explicitly comes before
    /// `$AGENTLOG_INDEX` and the default.
    pub fn from_process_at(index: Option<&Path>, roots: &[String]) -> Result<Settings, ApiError> {
        let mut s = Settings::from_process(roots)?;
        if let Some(p) = index {
            s.index_path = p.to_path_buf();
        }
        Ok(s)
    }

    /// Like [`Settings::from_process`], for a given discovery environment
    /// (the configuration file is found from it and `$AGENTLOG_CONFIG`).
    pub fn from_env(env: DiscoverEnv, roots: &[String]) -> Result<Settings, ApiError> {
        let path = config_path(&env);
        let index_path = default_index_path(&env);
        let mut s = Settings {
            env,
            exclude: Vec::new(),
            config_path: None,
            index_path,
            archive: ArchivePlace::BesideIndex,
            archive_keep_days: None,
            background_checks: false,
        };
        apply_file(&mut s, &path)?;
        let flags = parse_roots(roots, &s.env.home)?;
        s.env.roots.extend(flags);
        Ok(s)
    }

    /// The archive's folder (`None` when it is off): `$AGENTLOG_ARCHIVE`
    /// (`off` turns it off), else `archive/` beside the index.
    pub fn archive_dir(&self) -> Option<PathBuf> {
        match &self.archive {
            ArchivePlace::BesideIndex => Some(agentlog_archive::dir_for_index(&self.index_path)),
            ArchivePlace::At(p) => Some(p.clone()),
            ArchivePlace::Off => None,
        }
    }

    /// Returns the format names discovery should search: `agents` (all
    /// formats when empty) minus the excluded ones. Unknown names are an
    /// error listing the known ones.
    pub fn formats(&self, agents: &[String]) -> Result<Vec<String>, ApiError> {
        for a in agents {
            check_name(a)?;
        }
        Ok(registry::all()
            .iter()
            .map(|f| f.name().to_string())
            .filter(|n| agents.is_empty() || agents.contains(n))
            .filter(|n| !self.exclude.contains(n))
            .collect())
    }
}

/// Returns an error unless `name` is a registry name.
pub fn check_name(name: &str) -> Result<(), ApiError> {
    if registry::by_name(name).is_none() {
        return Err(ApiError::UnknownAgent {
            name: name.to_string(),
            known: registry::agent_names(),
        });
    }
    Ok(())
}

/// Returns the index path for `env`: `$XDG_DATA_HOME/agentlog/index.sqlite`
/// (`~/.local/share/agentlog/index.sqlite`).
pub fn default_index_path(env: &DiscoverEnv) -> PathBuf {
    env.xdg_data_home().join("agentlog").join("index.sqlite")
}

/// Returns the discovery environment of this process: `HOME` and the
/// variables agents honour for their data locations.
pub fn process_env() -> DiscoverEnv {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(dirs::home_dir)
        .unwrap_or_default();
    let mut env = DiscoverEnv::with_home(home);
    for (name, value) in std::env::vars_os() {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        if is_agent_var(name) {
            env.vars.insert(name.to_string(), value.to_string());
        }
    }
    env
}

/// Returns the configuration file's path for `env`.
pub fn config_path(env: &DiscoverEnv) -> PathBuf {
    match std::env::var_os("AGENTLOG_CONFIG").filter(|v| !v.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => env.xdg_config_home().join("agentlog/config.toml"),
    }
}

/// Expands a leading `~/` to the home directory.
fn expand(home: &Path, p: &str) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None if p == "~" => home.to_path_buf(),
        None => PathBuf::from(p),
    }
}

fn config_error(path: &Path, line: Option<usize>, message: impl Into<String>) -> ApiError {
    ApiError::Config {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// Reads the configuration at `path` into `settings`.
fn apply_file(settings: &mut Settings, path: &Path) -> Result<(), ApiError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(ApiError::io(path, e)),
    };
    let file: File = toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        config_error(path, line, e.message())
    })?;
    for (agent, roots) in file.roots {
        check_name(&agent).map_err(|e| config_error(path, None, format!("[roots]: {e}")))?;
        let list = match roots {
            OneOrMany::One(p) => vec![p],
            OneOrMany::Many(v) => v,
        };
        let home = settings.env.home.clone();
        settings
            .env
            .roots
            .insert(agent, list.iter().map(|p| expand(&home, p)).collect());
    }
    for agent in &file.exclude {
        check_name(agent).map_err(|e| config_error(path, None, format!("exclude: {e}")))?;
    }
    settings.exclude = file.exclude;
    settings.archive_keep_days = file.archive_keep_days;
    settings.config_path = Some(path.to_path_buf());
    Ok(())
}

/// Parses `AGENT=PATH` roots into roots by agent.
fn parse_roots(flags: &[String], home: &Path) -> Result<BTreeMap<String, Vec<PathBuf>>, ApiError> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for f in flags {
        let Some((agent, path)) = f
            .split_once('=')
            .filter(|(a, p)| !a.is_empty() && !p.is_empty())
        else {
            return Err(ApiError::BadRoot { value: f.clone() });
        };
        check_name(agent)?;
        out.entry(agent.to_string())
            .or_default()
            .push(expand(home, path));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_config(text: &str) -> Result<Settings, ApiError> {
        let tmp = tempfile::tempdir().map_err(|e| ApiError::io("tmp", e))?;
        let path = tmp.path().join("config.toml");
        std::fs::write(&path, text).map_err(|e| ApiError::io(&path, e))?;
        let mut s = Settings::with_home("/home/u");
        apply_file(&mut s, &path)?;
        Ok(s)
    }

    #[test]
    fn reads_roots_and_exclusions() {
        let s = with_config(
            "exclude = [\"jido\"]\n[roots]\nclaude = [\"~/c\", \"/x\"]\ncodex = \"/cx\"\n",
        );
        let s = s.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.env.roots_for("claude"),
            Some(&[PathBuf::from("/home/u/c"), PathBuf::from("/x")][..])
        );
        assert_eq!(s.env.roots_for("codex"), Some(&[PathBuf::from("/cx")][..]));
        assert!(!s
            .formats(&[])
            .unwrap_or_default()
            .contains(&"jido".to_string()));
    }

    #[test]
    fn bad_files_and_roots_say_where_without_naming_flags() {
        let err = with_config("[roots]\nclaude = 3\n")
            .err()
            .map(|e| e.to_string());
        assert!(
            err.as_deref().is_some_and(|e| e.contains("config.toml:2")),
            "{err:?}"
        );
        let err = with_config("exclude = [\"nope\"]\n")
            .err()
            .map(|e| e.to_string());
        assert!(
            err.as_deref()
                .is_some_and(|e| e.contains("unknown agent \"nope\"")),
            "{err:?}"
        );
        let bad = parse_roots(&["claude".into()], Path::new("/h")).err();
        assert!(bad.as_ref().is_some_and(ApiError::is_usage));
        assert!(bad.is_some_and(|e| !e.to_string().contains("--")));
        let r = parse_roots(&["pi=~/p".into()], Path::new("/h")).unwrap_or_default();
        assert_eq!(r["pi"], [PathBuf::from("/h/p")]);
        let unknown = Settings::with_home("/h").formats(&["claud".into()]).err();
        assert!(unknown.is_some_and(|e| e.is_usage() && e.to_string().contains("claud")));
    }
}
