//! The archive as the place readers find files that are gone (see
//! [`agentlog_formats::archived`]).

use crate::{Archive, ArchiveError};
use agentlog_formats::archived::{Kept, KeptStat};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// Readers' view of one archive: opened when first asked, read only.
struct View {
    dir: PathBuf,
    archive: Mutex<Option<Archive>>,
}

impl View {
    fn with<T>(&self, f: impl FnOnce(&Archive) -> Result<Option<T>, ArchiveError>) -> Option<T> {
        let mut a = self.archive.lock().unwrap_or_else(PoisonError::into_inner);
        if a.is_none() {
            *a = Archive::open_existing(&self.dir).ok().flatten();
        }
        f(a.as_ref()?).ok().flatten()
    }
}

impl Kept for View {
    fn location(&self) -> &Path {
        &self.dir
    }

    fn stat(&self, path: &Path) -> Option<KeptStat> {
        self.with(|a| {
            Ok(a.source(path)?.map(|s| KeptStat {
                size: s.latest.size,
                mtime_ns: s.latest.mtime_ns,
                inode: s.latest.inode,
            }))
        })
    }

    fn read(&self, path: &Path) -> Option<std::io::Result<Vec<u8>>> {
        let mut a = self.archive.lock().unwrap_or_else(PoisonError::into_inner);
        if a.is_none() {
            *a = Archive::open_existing(&self.dir).ok().flatten();
        }
        let a = a.as_ref()?;
        if !a.holds(path).unwrap_or(false) {
            return None;
        }
        Some(a.read(path, None).map_err(std::io::Error::other))
    }
}

/// Makes the archive in `dir` where readers find the files it keeps that
/// are gone from disk (once per folder; again replaces the first).
pub fn attach(dir: &Path) {
    agentlog_formats::archived::register(Arc::new(View {
        dir: dir.to_path_buf(),
        archive: Mutex::new(None),
    }));
}
