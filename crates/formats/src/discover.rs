//! Finding session files on this machine.
//!
//! Each format knows where its agent keeps sessions ([`Format::discover`]).
//! Readers never look at environment variables themselves: the caller
//! captures them once in a [`DiscoverEnv`] and passes it in, so discovery is
//! hermetic in tests.
//!
//! Discovery never fails: a directory that cannot be listed is skipped and
//! reported as a [`Diagnostic`] (see [`discover_report`]), symlinked
//! directories are entered at most once (so a symlink loop cannot hang a
//! walk), and every walk has a depth limit.
//!
//! This module runs every format of the [`registry`]; what a single
//! format's discovery uses is in [`crate::env`], re-exported here.
//!
//! [`Format::discover`]: crate::Format::discover

pub use crate::env::*;
use crate::{registry, Diagnostic};

/// What discovery found, and the places it could not look.
#[derive(Clone, Debug, Default)]
pub struct Discovery {
    /// Sessions, ordered by format (registry order) then path.
    pub found: Vec<Found>,
    /// Directories that could not be listed, and similar problems.
    pub diagnostics: Vec<Diagnostic>,
    /// Every directory discovery looked in, with its modification time
    /// (nanoseconds) taken before it looked: while none of these times
    /// changes, no session file was added, removed or renamed where
    /// discovery looks (see [`crate::env::note_dir`]).
    pub dirs: Vec<(std::path::PathBuf, i64)>,
}

/// Returns every session of every format (or of `only`, by name) found in
/// `env`, ordered by format then path.
pub fn discover_all(env: &DiscoverEnv, only: Option<&[String]>) -> Vec<Found> {
    discover_report(env, only).found
}

/// Returns every session of every format (or of `only`, by name) found in
/// `env`, with a diagnostic for every directory that could not be listed.
/// A path claimed by two formats is listed once, for the first format in
/// registry order.
pub fn discover_report(env: &DiscoverEnv, only: Option<&[String]>) -> Discovery {
    let previous = crate::env::begin_problems();
    let previous_dirs = crate::env::begin_dirs();
    let mut found = Vec::new();
    // Paths as bytes: comparing and hashing a `Path` walks its components
    // (a sixth of an `agentlog index` that finds nothing new).
    let mut seen: foldhash::HashSet<Vec<u8>> = foldhash::HashSet::default();
    for f in registry::all() {
        if only.is_some_and(|names| !names.iter().any(|n| n == f.name())) {
            continue;
        }
        let mut paths = f.discover(env);
        crate::env::sort_paths(&mut paths);
        for path in paths {
            if seen.insert(path.as_os_str().as_encoded_bytes().to_vec()) {
                found.push(Found {
                    path,
                    format: f.name(),
                });
            }
        }
    }
    let dirs = crate::env::end_dirs(previous_dirs);
    let mut diagnostics = crate::env::end_problems(previous);
    diagnostics.sort_by(|a, b| a.path.cmp(&b.path));
    diagnostics.dedup();
    Discovery {
        found,
        diagnostics,
        dirs,
    }
}
