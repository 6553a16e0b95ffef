//! The configuration file and the discovery environment, built in one
//! place from the process environment.
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
//! `--root AGENT=PATH` flags replace the file's roots for that agent.

use agentlog_formats::discover::{is_agent_var, DiscoverEnv};
use agentlog_formats::registry;
use anyhow::{anyhow, bail, Context};
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
}

/// Where discovery looks, and which agents it leaves out.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The discovery environment (home, agent variables, roots).
    pub env: DiscoverEnv,
    /// Agents (format names) never searched.
    pub exclude: Vec<String>,
    /// The configuration file read, when there was one.
    pub config_path: Option<PathBuf>,
}

impl Settings {
    /// Returns the format names discovery should search: `agents` (all
    /// formats when empty) minus the excluded ones. Unknown names are an
    /// error listing the known ones.
    pub fn formats(&self, agents: &[String]) -> anyhow::Result<Vec<String>> {
        for a in agents {
            check_name(a).with_context(|| format!("--agent {a}"))?;
        }
        Ok(registry::all()
            .iter()
            .map(|f| f.name().to_string())
            .filter(|n| agents.is_empty() || agents.contains(n))
            .filter(|n| !self.exclude.contains(n))
            .collect())
    }
}

fn check_name(name: &str) -> anyhow::Result<()> {
    if registry::by_name(name).is_none() {
        bail!(
            "unknown agent {name:?}; known agents: {}",
            registry::names()
        );
    }
    Ok(())
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

/// Reads the configuration at `path` into `settings`.
fn apply_file(settings: &mut Settings, path: &Path) -> anyhow::Result<()> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let file: File = toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        let at = line.map(|l| format!(":{l}")).unwrap_or_default();
        anyhow!(
            "{}{at}: invalid configuration: {}",
            path.display(),
            e.message()
        )
    })?;
    for (agent, roots) in file.roots {
        check_name(&agent).with_context(|| format!("{}: [roots]", path.display()))?;
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
        check_name(agent).with_context(|| format!("{}: exclude", path.display()))?;
    }
    settings.exclude = file.exclude;
    settings.config_path = Some(path.to_path_buf());
    Ok(())
}

/// Parses `--root AGENT=PATH` flags into roots by agent.
fn parse_roots(flags: &[String], home: &Path) -> anyhow::Result<BTreeMap<String, Vec<PathBuf>>> {
    let mut out: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for f in flags {
        let Some((agent, path)) = f
            .split_once('=')
            .filter(|(a, p)| !a.is_empty() && !p.is_empty())
        else {
            bail!("--root {f}: expected AGENT=PATH, e.g. --root claude=/backup/.claude");
        };
        check_name(agent).with_context(|| format!("--root {f}"))?;
        out.entry(agent.to_string())
            .or_default()
            .push(expand(home, path));
    }
    Ok(out)
}

/// Returns the discovery settings: the process environment, the
/// configuration file, then `--root` flags (which replace the file's roots
/// for the agents they name).
pub fn settings(root_flags: &[String]) -> anyhow::Result<Settings> {
    settings_from(process_env(), root_flags)
}

/// Like [`settings`], for a given environment.
pub fn settings_from(env: DiscoverEnv, root_flags: &[String]) -> anyhow::Result<Settings> {
    let path = config_path(&env);
    let mut s = Settings {
        env,
        exclude: Vec::new(),
        config_path: None,
    };
    apply_file(&mut s, &path)?;
    let flags = parse_roots(root_flags, &s.env.home)?;
    s.env.roots.extend(flags);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_config(text: &str) -> anyhow::Result<Settings> {
        let tmp = tempfile::tempdir()?;
        let path = tmp.path().join("config.toml");
        std::fs::write(&path, text)?;
        let mut s = Settings {
            env: DiscoverEnv::with_home("/home/u"),
            exclude: Vec::new(),
            config_path: None,
        };
        apply_file(&mut s, &path)?;
        Ok(s)
    }

    #[test]
    fn reads_roots_and_exclusions() {
        let s = with_config(
            "exclude = [\"jido\"]\n[roots]\nclaude = [\"~/c\", \"/x\"]\ncodex = \"/cx\"\n",
        );
        let s = s.unwrap_or_else(|e| panic!("{e:#}"));
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
    fn bad_files_and_flags_say_where() {
        let err = with_config("[roots]\nclaude = 3\n")
            .err()
            .map(|e| format!("{e:#}"));
        assert!(
            err.as_deref().is_some_and(|e| e.contains("config.toml:2")),
            "{err:?}"
        );
        let err = with_config("exclude = [\"nope\"]\n")
            .err()
            .map(|e| format!("{e:#}"));
        assert!(
            err.as_deref()
                .is_some_and(|e| e.contains("unknown agent \"nope\"")),
            "{err:?}"
        );
        assert!(parse_roots(&["claude".into()], Path::new("/h")).is_err());
        let r = parse_roots(&["pi=~/p".into()], Path::new("/h")).unwrap_or_default();
        assert_eq!(r["pi"], [PathBuf::from("/h/p")]);
    }
}
