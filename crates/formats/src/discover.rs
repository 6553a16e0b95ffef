//! Finding session files on this machine.
//!
//! Each format knows where its agent keeps sessions ([`Format::discover`]).
//! Readers never look at environment variables themselves: the caller
//! captures them once in a [`DiscoverEnv`] and passes it in, so discovery is
//! hermetic in tests.

use crate::registry;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The inputs of discovery: the home directory, the environment variables
/// agents honour, and per-format root overrides.
#[derive(Clone, Debug, Default)]
pub struct DiscoverEnv {
    /// The user's home directory.
    pub home: PathBuf,
    /// Environment variables (only those agents honour need be present).
    pub vars: BTreeMap<String, String>,
    /// Roots to search instead of a format's defaults, by format name.
    pub roots: BTreeMap<String, Vec<PathBuf>>,
}

impl DiscoverEnv {
    /// Returns an environment with only a home directory.
    pub fn with_home(home: impl Into<PathBuf>) -> DiscoverEnv {
        DiscoverEnv { home: home.into(), ..DiscoverEnv::default() }
    }

    /// Returns the variable `name`, when set and not empty.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }

    /// Returns the override roots for `format`, when any were given.
    pub fn roots_for(&self, format: &str) -> Option<&[PathBuf]> {
        self.roots.get(format).map(Vec::as_slice)
    }

    /// Returns `home/rel`.
    pub fn home_join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.home.join(rel)
    }
}

/// A session found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The session file (or directory, for multi-file formats).
    pub path: PathBuf,
    /// The format that reads it.
    pub format: &'static str,
}

/// Returns every session of every format (or of `only`, by name) found in
/// `env`, ordered by format then path.
pub fn discover_all(env: &DiscoverEnv, only: Option<&[String]>) -> Vec<Found> {
    let mut out = Vec::new();
    for f in registry::all() {
        if only.is_some_and(|names| !names.iter().any(|n| n == f.name())) {
            continue;
        }
        let mut paths = f.discover(env);
        paths.sort();
        paths.dedup();
        out.extend(paths.into_iter().map(|path| Found { path, format: f.name() }));
    }
    out
}

/// Helper for formats: returns the files under `root` (recursively, not
/// following symlinks) whose names satisfy `keep`.
pub fn walk_files(root: &Path, max_depth: usize, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for entry in rd.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            let p = entry.path();
            if ft.is_dir() {
                if depth < max_depth {
                    stack.push((p, depth + 1));
                }
            } else if ft.is_file() && keep(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
