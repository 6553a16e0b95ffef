//! Append-only JSONL files: one complete line per write, an fsync policy,
//! one writer per file, and torn-tail recovery on open.

use crate::snapshot::{ensure_dir, parent_dir, sync_dir};
use crate::StoreError;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// When appended lines are forced to stable storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncPolicy {
    /// fdatasync after every line: an append that returned `Ok` survives a
    /// crash or power loss.
    EveryEntry,
    /// fdatasync once `entries` lines are pending or `interval` has passed
    /// since the last sync (checked on append), and on [`AppendWriter::sync`]
    /// and drop.
    Grouped {
        /// Lines per sync.
        entries: usize,
        /// Longest time between syncs.
        interval: Duration,
    },
    /// Never sync explicitly; the OS writes back when it likes.
    None,
}

/// What to do when another writer holds the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// Fail at once with [`StoreError::Locked`].
    Fail,
    /// Block until the other writer is done.
    Wait,
}

/// How to open an append-only file.
#[derive(Clone, Copy, Debug)]
pub struct AppendOptions {
    /// The fsync policy.
    pub sync: SyncPolicy,
    /// What to do when the file is locked.
    pub lock: LockMode,
}

impl Default for AppendOptions {
    fn default() -> Self {
        AppendOptions { sync: SyncPolicy::EveryEntry, lock: LockMode::Fail }
    }
}

/// What opening the file had to repair.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Bytes cut off the end (an incomplete or invalid last line).
    pub torn_bytes: u64,
    /// Where the cut bytes were saved.
    pub sidecar: Option<PathBuf>,
}

impl Recovery {
    /// True when nothing had to be repaired.
    pub fn is_clean(&self) -> bool {
        self.torn_bytes == 0
    }
}

/// The single writer of an append-only JSONL file.
#[derive(Debug)]
pub struct AppendWriter {
    path: PathBuf,
    file: File,
    sync: SyncPolicy,
    pending: usize,
    last_sync: Instant,
    len: u64,
}

impl AppendWriter {
    /// Opens (creating, 0600 in a 0700 directory) `path` for appending,
    /// takes its lock, and cuts a torn tail off into a sidecar file.
    pub fn open(path: &Path, opts: AppendOptions) -> Result<(AppendWriter, Recovery), StoreError> {
        let dir = parent_dir(path);
        ensure_dir(&dir)?;
        let mut o = OpenOptions::new();
        o.read(true).append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        let existed = path.exists();
        let file = o.open(path).map_err(|e| StoreError::io(path, "open", e))?;
        match opts.lock {
            LockMode::Wait => file.lock().map_err(|e| StoreError::io(path, "lock", e))?,
            LockMode::Fail => match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(StoreError::Locked { path: path.to_path_buf(), holder: "another process or handle".into() })
                }
                Err(fs::TryLockError::Error(e)) => return Err(StoreError::io(path, "lock", e)),
            },
        }
        if !existed {
            sync_dir(&dir)?;
        }
        let mut w = AppendWriter { path: path.to_path_buf(), file, sync: opts.sync, pending: 0, last_sync: Instant::now(), len: 0 };
        let recovery = w.recover()?;
        w.len = w.file.metadata().map_err(|e| StoreError::io(path, "stat", e))?.len();
        Ok((w, recovery))
    }

    /// Returns the file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Returns the file's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `line` (which must not contain a newline) and a newline in one
    /// write, then syncs as the policy says.
    pub fn append_line(&mut self, line: &[u8]) -> Result<(), StoreError> {
        if memchr_newline(line) {
            return Err(StoreError::Invalid("a line to append contains a newline".into()));
        }
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line);
        buf.push(b'\n');
        self.write_buf(&buf, 1)
    }

    /// Appends `value` as one JSON line.
    pub fn append_json<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> Result<(), StoreError> {
        let mut buf = serde_json::to_vec(value).map_err(|e| StoreError::Invalid(format!("cannot serialize entry: {e}")))?;
        buf.push(b'\n');
        self.write_buf(&buf, 1)
    }

    fn write_buf(&mut self, buf: &[u8], lines: usize) -> Result<(), StoreError> {
        if let Err(e) = self.file.write_all(buf) {
            // Do not leave a partial line behind for the next append to glue onto.
            let _ = self.file.set_len(self.len);
            return Err(StoreError::io(&self.path, "append", e));
        }
        self.len += buf.len() as u64;
        self.pending += lines;
        match self.sync {
            SyncPolicy::EveryEntry => self.sync()?,
            SyncPolicy::Grouped { entries, interval } => {
                if self.pending >= entries.max(1) || self.last_sync.elapsed() >= interval {
                    self.sync()?;
                }
            }
            SyncPolicy::None => {}
        }
        Ok(())
    }

    /// Forces every appended line to stable storage.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        if self.pending > 0 {
            self.file.sync_data().map_err(|e| StoreError::io(&self.path, "fsync", e))?;
        }
        self.pending = 0;
        self.last_sync = Instant::now();
        Ok(())
    }

    /// Cuts an incomplete (no newline) or unparsable last line off the file
    /// and saves it beside the file.
    fn recover(&mut self) -> Result<Recovery, StoreError> {
        let len = self.file.metadata().map_err(|e| StoreError::io(&self.path, "stat", e))?.len();
        if len == 0 {
            return Ok(Recovery::default());
        }
        let keep = good_prefix_len(&mut self.file, len).map_err(|e| StoreError::io(&self.path, "read", e))?;
        if keep == len {
            return Ok(Recovery::default());
        }
        let mut torn = Vec::new();
        self.file.seek(SeekFrom::Start(keep)).map_err(|e| StoreError::io(&self.path, "seek", e))?;
        (&self.file).take(len - keep).read_to_end(&mut torn).map_err(|e| StoreError::io(&self.path, "read", e))?;
        let sidecar = sidecar_path(&self.path);
        crate::snapshot::write_atomic(&sidecar, &torn)?;
        self.file.set_len(keep).map_err(|e| StoreError::io(&self.path, "truncate", e))?;
        self.file.sync_all().map_err(|e| StoreError::io(&self.path, "fsync", e))?;
        Ok(Recovery { torn_bytes: len - keep, sidecar: Some(sidecar) })
    }
}

impl Drop for AppendWriter {
    fn drop(&mut self) {
        let _ = self.sync();
    }
}

fn memchr_newline(b: &[u8]) -> bool {
    b.contains(&b'\n')
}

/// Returns the length of the longest prefix of whole lines, dropping a last
/// line that has no newline or is not valid JSON.
fn good_prefix_len(file: &mut File, len: u64) -> std::io::Result<u64> {
    // Read the tail in growing windows until the last two newlines are found.
    let mut window = 64 * 1024u64;
    loop {
        let start = len.saturating_sub(window);
        let mut tail = Vec::with_capacity((len - start) as usize);
        file.seek(SeekFrom::Start(start))?;
        (&*file).take(len - start).read_to_end(&mut tail)?;
        let ends_with_newline = tail.last() == Some(&b'\n');
        let body = if ends_with_newline { &tail[..tail.len() - 1] } else { &tail[..] };
        match body.iter().rposition(|&b| b == b'\n') {
            Some(i) => {
                let line_start = start + i as u64 + 1;
                let last = &body[i + 1..];
                return Ok(if ends_with_newline && line_ok(last) { len } else { line_start });
            }
            None if start == 0 => {
                return Ok(if ends_with_newline && line_ok(body) { len } else { 0 });
            }
            None => window *= 4,
        }
    }
}

fn line_ok(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace) || serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok()
}

/// Returns a fresh sidecar path for bytes cut from `path`.
pub fn sidecar_path(path: &Path) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y-%m-%dT%H-%M-%S%.3fZ");
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    parent_dir(path).join(format!("{name}.torn-{stamp}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_whole_lines_and_cuts_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        {
            let (mut w, rec) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
            assert!(rec.is_clean());
            w.append_json(&serde_json::json!({"a": 1})).unwrap();
        }
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"b\":").unwrap();
        drop(f);
        let (mut w, rec) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        assert_eq!(rec.torn_bytes, 5);
        assert_eq!(fs::read(rec.sidecar.unwrap()).unwrap(), b"{\"b\":");
        w.append_line(b"{\"c\":3}").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"c\":3}\n");
    }

    #[test]
    fn a_second_writer_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let (_w, _) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        let err = AppendWriter::open(&p, AppendOptions::default()).unwrap_err();
        assert!(matches!(err, StoreError::Locked { .. }), "{err}");
    }

    #[test]
    fn an_invalid_terminated_last_line_is_cut_too() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        fs::write(&p, b"{\"a\":1}\n{\"a\":\n").unwrap();
        let (_w, rec) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        assert_eq!(rec.torn_bytes, 6);
        assert_eq!(fs::read(&p).unwrap(), b"{\"a\":1}\n");
    }
}
