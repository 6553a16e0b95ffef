//! The index's lock file, private files and directories.
//!
//! Creating, replacing and updating the index happen while holding an
//! exclusive advisory lock (`flock`) on `<index>.lock`: processes that start
//! together wait for each other instead of racing, and the kernel releases
//! the lock when its holder exits, however it exits. The lock file itself is
//! never removed (removing it would let two processes lock two different
//! files of the same name).

use crate::IndexError;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// An exclusive lock on an index, held until dropped.
#[derive(Debug)]
pub(crate) struct IndexLock {
    _file: File,
}

/// Returns `<index>.lock`.
pub(crate) fn lock_path(index: &Path) -> PathBuf {
    let mut name = index.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl IndexLock {
    /// Waits for and takes the lock of the index at `index`, then removes
    /// what dead builders left behind (`<index>.building-<pid>` files: no
    /// builder runs while the lock is free).
    pub(crate) fn acquire(index: &Path) -> Result<IndexLock, IndexError> {
        let path = lock_path(index);
        let mut o = OpenOptions::new();
        o.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
        }
        let file = o.open(&path).map_err(|e| IndexError::io(&path, e))?;
        file.lock().map_err(|e| IndexError::io(&path, e))?;
        remove_dead_builds(index);
        Ok(IndexLock { _file: file })
    }
}

/// Removes `<index>.building-<pid>` files (and their WAL and journal files)
/// whose process is gone. Called with the lock held.
fn remove_dead_builds(index: &Path) {
    let (Some(dir), Some(name)) = (index.parent(), index.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}.building-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file_name = e.file_name();
        let Some(rest) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let digits = rest
            .strip_suffix("-wal")
            .or_else(|| rest.strip_suffix("-shm"))
            .or_else(|| rest.strip_suffix("-journal"))
            .unwrap_or(rest);
        let Ok(pid) = digits.parse::<u32>() else {
            continue;
        };
        if pid != std::process::id() && process_alive(pid) {
            continue;
        }
        let is_file = e.file_type().map(|t| t.is_file()).unwrap_or(false);
        if is_file {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// True when a process with this id runs here (false where `/proc` is
/// missing and it cannot be told: the lock already says no builder runs).
fn process_alive(pid: u32) -> bool {
    Path::new("/proc/self").exists() && Path::new(&format!("/proc/{pid}")).exists()
}

/// Creates `dir` and its missing parents, the new ones 0700.
pub(crate) fn ensure_private_dir(dir: &Path) -> Result<(), IndexError> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir).map_err(|e| IndexError::io(dir, e))
}

/// Creates a new empty file readable by its owner only (0600); fails when
/// anything (a symbolic link included) is at `path`.
pub(crate) fn create_private_file(path: &Path) -> Result<File, IndexError> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path).map_err(|e| IndexError::io(path, e))
}

/// Takes group and other permissions off an index made by an older
/// agentlog (0644) and its WAL and shared-memory files.
pub(crate) fn make_private(index: &Path) {
    #[cfg(unix)]
    for suffix in ["", "-wal", "-shm"] {
        use std::os::unix::fs::PermissionsExt;
        let mut p = index.as_os_str().to_owned();
        p.push(suffix);
        let p = PathBuf::from(p);
        if let Ok(m) = std::fs::symlink_metadata(&p) {
            if m.is_file() && m.permissions().mode() & 0o077 != 0 {
                let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600));
            }
        }
    }
    #[cfg(not(unix))]
    let _ = index;
}
