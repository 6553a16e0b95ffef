//! Session files that are gone from disk but kept elsewhere (agentlog's
//! archive): a process-wide list of sources that reading consults when a
//! file no longer exists.
//!
//! An agent deletes or rewrites its session files (Claude Code removes
//! transcripts older than `cleanupPeriodDays`); agentlog's archive keeps
//! every state it saw. Readers take their input through
//! [`crate::input::read_file`], which asks the sources registered here for
//! a path that is not on disk, so every front end reads a deleted session
//! the same way as a live one, under the path its agent wrote it at (the
//! readers derive projects and ids from that path).
//!
//! The list is process-wide because the path of a deleted file names it
//! completely: a source answers only for the paths it holds, and several
//! sources (tests with several homes in one process) never answer for the
//! same path.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

/// The state of a kept file: what its `stat` said when it was captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct KeptStat {
    /// Bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Inode number when it was captured.
    pub inode: u64,
}

/// A place that keeps files after they are gone.
pub trait Kept: Send + Sync {
    /// Where the source lives (two registrations of one place are one).
    fn location(&self) -> &Path;
    /// The latest kept state of the file at `path`, when this source
    /// holds it.
    fn stat(&self, path: &Path) -> Option<KeptStat>;
    /// The bytes of the latest kept state of `path`; `None` when this
    /// source does not hold it.
    fn read(&self, path: &Path) -> Option<std::io::Result<Vec<u8>>>;
    /// A file on disk holding the latest kept state of `path`, for a
    /// reader that needs a file (a database); `None` when this source does
    /// not hold it. The file is the source's own, read only.
    fn materialize(&self, path: &Path) -> Option<std::io::Result<PathBuf>>;
}

static SOURCES: RwLock<Vec<Arc<dyn Kept>>> = RwLock::new(Vec::new());

/// Adds `source` to the list (replacing one at the same location).
pub fn register(source: Arc<dyn Kept>) {
    let mut list = SOURCES.write().unwrap_or_else(PoisonError::into_inner);
    list.retain(|s| s.location() != source.location());
    list.push(source);
}

/// Removes the source at `location`, if any.
pub fn unregister(location: &Path) {
    SOURCES
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|s| s.location() != location);
}

/// The locations registered.
pub fn locations() -> Vec<PathBuf> {
    SOURCES
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|s| s.location().to_path_buf())
        .collect()
}

fn sources() -> Vec<Arc<dyn Kept>> {
    SOURCES
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// The kept state of `path` in the first source that holds it.
pub fn stat(path: &Path) -> Option<KeptStat> {
    sources().iter().find_map(|s| s.stat(path))
}

/// The kept bytes of `path` from the first source that holds it.
pub fn read(path: &Path) -> Option<std::io::Result<Vec<u8>>> {
    sources().iter().find_map(|s| s.read(path))
}

/// A file holding the kept state of `path`, from the first source that
/// holds it (see [`Kept::materialize`]).
pub fn materialize(path: &Path) -> Option<std::io::Result<PathBuf>> {
    sources().iter().find_map(|s| s.materialize(path))
}

/// True when `path` is not on disk but a source keeps it.
pub fn is_kept_only(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_err() && stat(path).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct One(PathBuf, Vec<u8>);
    impl Kept for One {
        fn location(&self) -> &Path {
            Path::new("/test/one")
        }
        fn stat(&self, path: &Path) -> Option<KeptStat> {
            (path == self.0).then_some(KeptStat {
                size: self.1.len() as u64,
                ..KeptStat::default()
            })
        }
        fn read(&self, path: &Path) -> Option<std::io::Result<Vec<u8>>> {
            (path == self.0).then(|| Ok(self.1.clone()))
        }
        fn materialize(&self, _: &Path) -> Option<std::io::Result<PathBuf>> {
            None
        }
    }

    #[test]
    fn a_missing_file_is_read_from_the_source_that_keeps_it() {
        let gone = PathBuf::from("/nonexistent/agentlog-archived-test/s.jsonl");
        register(Arc::new(One(gone.clone(), b"{}\n".to_vec())));
        let bytes = crate::input::read_file(&gone).unwrap();
        assert_eq!(bytes, b"{}\n");
        assert!(is_kept_only(&gone));
        let other = Path::new("/nonexistent/agentlog-archived-test/other.jsonl");
        assert!(crate::input::read_file(other).is_err());
        unregister(Path::new("/test/one"));
        assert!(crate::input::read_file(&gone).is_err());
    }
}
