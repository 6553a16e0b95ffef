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

    fn materialize(&self, path: &Path) -> Option<std::io::Result<PathBuf>> {
        let mut a = self.archive.lock().unwrap_or_else(PoisonError::into_inner);
        if a.is_none() {
            *a = Archive::open_existing(&self.dir).ok().flatten();
        }
        let a = a.as_ref()?;
        let latest = a.versions(path).ok()?.pop()?;
        Some(copy_of(a, path, &latest))
    }
}

/// The folder of an archive's copies of kept files, for readers that need
/// a file on disk.
pub(crate) const COPIES: &str = "open";

/// The file in the archive's folder holding version `v` of `path`,
/// written when missing; the copies of `path`'s other versions are
/// removed.
fn copy_of(a: &Archive, path: &Path, v: &crate::Version) -> std::io::Result<PathBuf> {
    let dir = a.dir().join(COPIES);
    agentlog_store::snapshot::ensure_dir(&dir).map_err(std::io::Error::other)?;
    let stem = copy_stem(path);
    let stem = stem.as_str();
    let digest = v.digest.get(..16).unwrap_or(&v.digest);
    let copy = dir.join(format!("{stem}-{digest}"));
    if !copy.is_file() {
        let mut bytes = a.read_version(v.id).map_err(std::io::Error::other)?;
        bytes.truncate(usize::try_from(v.stat.size).unwrap_or(usize::MAX));
        agentlog_store::snapshot::write_atomic(&copy, &bytes).map_err(std::io::Error::other)?;
    }
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.flatten() {
            let n = e.file_name();
            let n = n.to_string_lossy();
            if n.starts_with(stem) && e.path() != copy {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    Ok(copy)
}

/// Makes the archive in `dir` where readers find the files it keeps that
/// are gone from disk (once per folder; again replaces the first).
pub fn attach(dir: &Path) {
    agentlog_formats::archived::register(Arc::new(View {
        dir: dir.to_path_buf(),
        archive: Mutex::new(None),
    }));
}

/// How the names of `path`'s copies begin.
fn copy_stem(path: &Path) -> String {
    blake3::hash(crate::path_text(path).as_bytes()).to_hex()[..16].to_string()
}

/// Removes every copy of `path` made for readers (after it is forgotten
/// or rewritten, a copy must not outlive it).
pub(crate) fn remove_copies(dir: &Path, path: &Path) {
    let stem = copy_stem(path);
    let Ok(rd) = std::fs::read_dir(dir.join(COPIES)) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_name().to_string_lossy().starts_with(&stem) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
