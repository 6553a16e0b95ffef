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
use crate::{registry, Diagnostic, Format};

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
    let formats: Vec<&dyn Format> = registry::all()
        .iter()
        .copied()
        .filter(|f| match only {
            Some(names) => names.iter().any(|n| n == f.name()),
            None => true,
        })
        .collect();
    // The formats' walks on two threads (each its own problems and folders,
    // gathered here in the formats' order): half the time of a discovery
    // that walks thousands of folders.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let walk = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(f) = formats.get(i) else {
                return done;
            };
            let previous = crate::env::begin_problems();
            let previous_dirs = crate::env::begin_dirs();
            let mut paths = f.discover(env);
            crate::env::sort_paths(&mut paths);
            let dirs = crate::env::end_dirs(previous_dirs);
            let problems = crate::env::end_problems(previous);
            done.push((i, paths, dirs, problems));
        }
    };
    let two = formats.len() > 1 && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let mut walked = if two {
        std::thread::scope(|scope| {
            let other = scope.spawn(walk);
            let mut mine = walk();
            // A walk that panicked panics here, as it would have on one
            // thread.
            mine.extend(
                other
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
            );
            mine
        })
    } else {
        walk()
    };
    walked.sort_by_key(|w| w.0);
    let mut lists = Vec::with_capacity(walked.len());
    let mut dirs = Vec::new();
    let mut diagnostics = Vec::new();
    for (i, paths, d, problems) in walked {
        lists.push((formats[i].name(), paths));
        dirs.extend(d);
        diagnostics.extend(problems);
    }
    // A path two formats found is the first one's. Paths as bytes, borrowed:
    // comparing and hashing a `Path` walks its components, and copying each
    // path's bytes was a tenth of finding every session.
    let total = lists.iter().map(|(_, paths)| paths.len()).sum();
    let mut keep = Vec::with_capacity(total);
    let mut seen: foldhash::HashSet<&[u8]> =
        foldhash::HashSet::with_capacity_and_hasher(total, Default::default());
    for (_, paths) in &lists {
        keep.extend(
            paths
                .iter()
                .map(|p| seen.insert(p.as_os_str().as_encoded_bytes())),
        );
    }
    drop(seen);
    let mut found = Vec::with_capacity(total);
    let mut keep = keep.into_iter();
    for (format, paths) in lists {
        for path in paths {
            if keep.next() == Some(true) {
                found.push(Found { path, format });
            }
        }
    }
    crate::env::settle_dirs(&mut dirs);
    diagnostics.sort_by(|a, b| a.path.cmp(&b.path));
    diagnostics.dedup();
    Discovery {
        found,
        diagnostics,
        dirs,
    }
}
