//! One writer per session file.
//!
//! The lock is an advisory exclusive lock (`flock`) on the session file
//! itself, taken by [`crate::AppendWriter::open`]. The kernel releases it
//! when the holder exits, however it exits, so a crashed writer never
//! leaves the file locked. Readers take no lock.
//!
//! Beside the locked file the holder writes a small JSON file,
//! `<file>.lock` (see [`holder_path`]), naming its pid, host and start
//! time, so that a refused writer (or `agentlog doctor`) can say who holds
//! the file. The holder file is only information: it is removed when the
//! writer closes, and one left behind by a crash is *stale* (the lock is
//! free) — [`probe`] tells the two apart and the next writer replaces it.
//!
//! The lock is on the session file and not on the holder file because the
//! holder file is removed on close: a lock on a file that can be unlinked
//! lets two writers each lock a different inode of the same name.

use crate::snapshot::parent_dir;
use crate::StoreError;
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Who holds (or held) the lock of a session file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockHolder {
    /// The holder's process id.
    pub pid: u32,
    /// The host the holder runs on.
    pub host: String,
    /// When the holder took the lock (RFC 3339, UTC).
    pub since: String,
    /// The holder's program name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

impl LockHolder {
    /// Returns the holder record of this process, now.
    pub fn current() -> LockHolder {
        LockHolder {
            pid: std::process::id(),
            host: hostname(),
            since: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            program: std::env::args_os().next().and_then(|a| {
                Path::new(&a)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            }),
        }
    }

    /// True when the holder is on this host and its process no longer runs
    /// (only checkable where `/proc` exists; otherwise false).
    pub fn is_dead_here(&self) -> bool {
        self.host == hostname()
            && Path::new("/proc/self").exists()
            && !Path::new(&format!("/proc/{}", self.pid)).exists()
    }
}

impl std::fmt::Display for LockHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} on host {} since {}",
            self.pid, self.host, self.since
        )?;
        if let Some(p) = &self.program {
            write!(f, " ({p})")?;
        }
        Ok(())
    }
}

/// The lock state of a session file, as seen by [`probe`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockState {
    /// No writer holds the file and no holder file is left.
    Free,
    /// A writer holds the file; its holder file, when readable.
    Held(Option<LockHolder>),
    /// No writer holds the file but a holder file was left behind by one
    /// that did not close (it crashed or was killed).
    Stale(Option<LockHolder>),
}

/// Returns the path of the holder file of `path`: `<file>.lock` beside it.
pub fn holder_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    parent_dir(path).join(format!("{name}.lock"))
}

/// Returns the holder recorded beside `path`, when there is a readable one.
pub fn read_holder(path: &Path) -> Option<LockHolder> {
    let bytes = fs::read(holder_path(path)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Tells whether a writer holds `path`, without disturbing it for longer
/// than a moment: a shared lock is tried and released at once. (A writer
/// opening the file in that moment with [`crate::LockMode::Fail`] is
/// refused as if the file were held.)
pub fn probe(path: &Path) -> Result<LockState, StoreError> {
    let file = File::open(path).map_err(|e| StoreError::io(path, "open", e))?;
    let holder_file = holder_path(path);
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            if holder_file.exists() {
                Ok(LockState::Stale(read_holder(path)))
            } else {
                Ok(LockState::Free)
            }
        }
        Err(TryLockError::WouldBlock) => Ok(LockState::Held(read_holder(path))),
        Err(TryLockError::Error(e)) => Err(StoreError::io(path, "lock", e)),
    }
}

/// Removes the holder file of `path` when it is stale (no writer holds
/// the file). Returns the removed holder record, if one was removed.
pub fn remove_stale(path: &Path) -> Result<Option<LockHolder>, StoreError> {
    let file = File::open(path).map_err(|e| StoreError::io(path, "open", e))?;
    match file.try_lock() {
        Ok(()) => {
            let holder = read_holder(path);
            let hp = holder_path(path);
            let removed = match fs::remove_file(&hp) {
                Ok(()) => true,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
                Err(e) => return Err(StoreError::io(hp, "remove", e)),
            };
            let _ = file.unlock();
            Ok(if removed {
                Some(holder.unwrap_or(LockHolder {
                    pid: 0,
                    host: "unknown".into(),
                    since: "unknown".into(),
                    program: None,
                }))
            } else {
                None
            })
        }
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(StoreError::io(path, "lock", e)),
    }
}

/// What to do when another writer holds the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// Fail at once with [`StoreError::Locked`] naming the holder.
    Fail,
    /// Block until the other writer is done. (Waiting for a writer of
    /// the same file in the same thread never ends.)
    Wait,
}

/// Takes the exclusive lock of the open session file `file` at `path` and
/// records this process as its holder.
pub(crate) fn acquire(file: &File, path: &Path, mode: LockMode) -> Result<(), StoreError> {
    match mode {
        LockMode::Wait => file.lock().map_err(|e| StoreError::io(path, "lock", e))?,
        LockMode::Fail => match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let holder = match read_holder(path) {
                    Some(h) => h.to_string(),
                    None => "holder unknown: it left no readable holder file".to_string(),
                };
                return Err(StoreError::Locked {
                    path: path.to_path_buf(),
                    holder,
                });
            }
            Err(TryLockError::Error(e)) => return Err(StoreError::io(path, "lock", e)),
        },
    }
    // The holder file is information only: failing to write it (a
    // read-only directory, say) does not stop the writer.
    let _ = write_holder(path, &LockHolder::current());
    Ok(())
}

/// Removes this process's holder file of `path` (called by the lock holder
/// before it releases the lock).
pub(crate) fn release(path: &Path) {
    let hp = holder_path(path);
    if read_holder(path).is_some_and(|h| h.pid == std::process::id() && h.host == hostname()) {
        let _ = fs::remove_file(hp);
    }
}

/// Writes the holder file via a temp file and a rename so that a reader
/// never sees half of it. It is not synced: after a power loss it is stale
/// anyway.
fn write_holder(path: &Path, holder: &LockHolder) -> Result<(), StoreError> {
    let hp = holder_path(path);
    let tmp = parent_dir(path).join(format!(
        ".{}.{}.tmp",
        hp.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let mut bytes = serde_json::to_vec(holder).map_err(|e| StoreError::Invalid(e.to_string()))?;
    bytes.push(b'\n');
    let mut o = OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let result = (|| {
        let mut f = o
            .open(&tmp)
            .map_err(|e| StoreError::io(&tmp, "create", e))?;
        f.write_all(&bytes)
            .map_err(|e| StoreError::io(&tmp, "write", e))?;
        drop(f);
        fs::rename(&tmp, &hp).map_err(|e| StoreError::io(&hp, "rename", e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Returns this machine's host name.
pub fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_is_written_read_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        fs::write(&p, b"").unwrap();
        assert_eq!(probe(&p).unwrap(), LockState::Free);
        let f = OpenOptions::new().read(true).append(true).open(&p).unwrap();
        acquire(&f, &p, LockMode::Fail).unwrap();
        let h = read_holder(&p).unwrap();
        assert_eq!(h.pid, std::process::id());
        assert!(matches!(probe(&p).unwrap(), LockState::Held(Some(_))));
        let f2 = File::open(&p).unwrap();
        let err = acquire(&f2, &p, LockMode::Fail).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        // Dropping the handle without release leaves a stale holder file.
        drop(f);
        assert!(matches!(probe(&p).unwrap(), LockState::Stale(Some(_))));
        assert!(remove_stale(&p).unwrap().is_some());
        assert_eq!(probe(&p).unwrap(), LockState::Free);
    }
}
