//! Append-only JSONL files: one complete line per write, an fsync policy,
//! one writer per file, and torn-tail recovery on open.
//!
//! # Guarantees
//!
//! - Every line goes to the file in one `write` of the line and its newline
//!   to a file opened for append, so readers (see [`crate::read`]) see a
//!   prefix of whole lines plus at most one line still being written.
//!   Under [`SyncPolicy::Grouped`] the lines of a group wait in memory and
//!   are written together — whole lines in one `write` — just before the
//!   group's sync: readers see them when they become durable.
//! - Under [`SyncPolicy::EveryEntry`] an append that returned `Ok` is on
//!   stable storage (`fdatasync`) and survives a crash or power loss.
//!   Under [`SyncPolicy::Grouped`] a line is durable once
//!   [`AppendWriter::pending`] is back to zero.
//! - A failed append (disk full, quota, I/O error) truncates the file back
//!   to its length before the append: no partial line is left for the next
//!   append to glue onto, and every earlier line is intact.
//! - On open, a torn tail — a last line without a newline, or a last line
//!   that is not valid JSON — is cut off and saved in a sidecar file beside
//!   the session file ([`sidecar_path`]); the caller is told in
//!   [`Recovery`]. A last line that lacks only its newline but is a whole
//!   JSON object or array is kept, and the newline is added
//!   ([`Recovery::newline_added`]).
//! - New files are created 0600, missing directories 0700.
//! - One writer per file: see [`crate::lock`].
//!
//! # Example
//!
//! ```
//! use agentlog_store::{AppendOptions, AppendWriter};
//! # fn main() -> Result<(), agentlog_store::StoreError> {
//! # let dir = std::env::temp_dir().join(format!("agentlog-doc-{}", std::process::id()));
//! let path = dir.join("sessions/s.jsonl");
//! let (mut w, recovery) = AppendWriter::open(&path, AppendOptions::default())?;
//! if !recovery.is_clean() {
//!     eprintln!("{}: {recovery}", path.display());
//! }
//! w.append_json(&serde_json::json!({"type": "message", "text": "hello"}))?;
//! // Under the default every-entry policy the entry is durable here.
//! w.close()?;
//! let text = std::fs::read_to_string(&path).unwrap_or_default();
//! assert!(text.ends_with("\"hello\"}\n"));
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! ```
//!
//! # Symbolic links
//!
//! The session file itself must not be a symbolic link: opening one fails
//! with [`StoreError::Symlink`] (checked race-free with `O_NOFOLLOW`), so a
//! name inside a store can never redirect appends to a file elsewhere.
//! Links among the *directories* above it are followed (a store directory
//! may live on another disk). Other non-regular files (FIFOs, devices,
//! directories) are refused with [`StoreError::NotRegularFile`].

use crate::snapshot::{ensure_dir, parent_dir, sync_dir};
use crate::StoreError;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use crate::lock::LockMode;

/// When appended lines are forced to stable storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncPolicy {
    /// fdatasync after every line: an append that returned `Ok` survives a
    /// crash or power loss.
    EveryEntry,
    /// Write and fdatasync a group once `entries` lines are pending or
    /// `interval` has passed since the oldest pending line was appended
    /// (checked on append and by [`AppendWriter::sync_if_due`]), and on
    /// [`AppendWriter::sync`], [`AppendWriter::close`] and drop. Pending
    /// lines wait in memory (at most 1 MiB is held; more is written
    /// early): they are not acknowledged, and a crash loses them.
    Grouped {
        /// Lines per sync.
        entries: usize,
        /// Longest time a line waits for its sync.
        interval: Duration,
    },
    /// Never sync explicitly; the OS writes back when it likes (a clean
    /// close still syncs).
    None,
}

impl SyncPolicy {
    /// The grouped policy used when none is given: 1000 lines or 50 ms.
    pub const GROUPED_DEFAULT: SyncPolicy = SyncPolicy::Grouped {
        entries: 1000,
        interval: Duration::from_millis(50),
    };
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
        AppendOptions {
            sync: SyncPolicy::EveryEntry,
            lock: LockMode::Fail,
        }
    }
}

/// What opening the file had to repair.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Bytes cut off the end (an incomplete or invalid last line).
    pub torn_bytes: u64,
    /// Where the cut bytes were saved.
    pub sidecar: Option<PathBuf>,
    /// True when the last line was a whole JSON value lacking only its
    /// newline, and the newline was added.
    pub newline_added: bool,
}

impl Recovery {
    /// True when nothing had to be repaired.
    pub fn is_clean(&self) -> bool {
        self.torn_bytes == 0 && !self.newline_added
    }
}

impl std::fmt::Display for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.torn_bytes > 0 {
            write!(f, "cut a torn last line of {} bytes", self.torn_bytes)?;
            if let Some(s) = &self.sidecar {
                write!(f, " (kept in {})", s.display())?;
            }
        } else if self.newline_added {
            write!(f, "added the missing newline after the last line")?;
        } else {
            write!(f, "clean")?;
        }
        Ok(())
    }
}

/// The single writer of an append-only JSONL file.
#[derive(Debug)]
pub struct AppendWriter {
    path: PathBuf,
    file: File,
    sync: SyncPolicy,
    /// Lines written since the last sync.
    pending: usize,
    /// When the oldest pending line was written.
    pending_since: Option<Instant>,
    /// The file's length (everything written by this writer).
    len: u64,
    /// The length known to be on stable storage.
    synced_len: u64,
    /// Why the writer cannot be used any more.
    broken: Option<String>,
    buf: Vec<u8>,
    /// Lines of the current group (grouped policy), not yet written.
    batch: Vec<u8>,
}

/// Largest group of lines kept in memory before it is written.
const MAX_BATCH_BYTES: usize = 1 << 20;

impl AppendWriter {
    /// Opens (creating, 0600 in a 0700 directory) `path` for appending,
    /// takes its lock, and cuts a torn tail off into a sidecar file.
    pub fn open(path: &Path, opts: AppendOptions) -> Result<(AppendWriter, Recovery), StoreError> {
        let dir = parent_dir(path);
        ensure_dir(&dir)?;
        // A writer that waited for the lock may find the path replaced (an
        // atomic rewrite renamed a new file over it) when it gets the lock:
        // it would then hold, and append to, a file nobody reads. Reopen
        // until the locked file is the one the path names.
        let mut attempts = 0;
        let (file, created) = loop {
            let (file, created) = open_regular(path)?;
            crate::lock::acquire(&file, path, opts.lock)?;
            if same_file(&file, path) {
                break (file, created);
            }
            let _ = file.unlock();
            attempts += 1;
            if attempts >= 100 {
                return Err(StoreError::Invalid(format!(
                    "{}: the file kept being replaced while waiting for its lock",
                    path.display()
                )));
            }
        };
        let mut w = AppendWriter {
            path: path.to_path_buf(),
            file,
            sync: opts.sync,
            pending: 0,
            pending_since: None,
            len: 0,
            synced_len: 0,
            broken: None,
            buf: Vec::new(),
            batch: Vec::new(),
        };
        if created {
            sync_dir(&dir)?;
        }
        let recovery = w.recover()?;
        w.len = w
            .file
            .metadata()
            .map_err(|e| StoreError::io(path, "stat", e))?
            .len();
        w.synced_len = w.len;
        Ok((w, recovery))
    }

    /// Returns the file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Returns the file's length in bytes (every line appended so far,
    /// durable or not).
    pub fn len(&self) -> u64 {
        self.len + self.batch.len() as u64
    }

    /// True when the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Returns the fsync policy.
    pub fn policy(&self) -> SyncPolicy {
        self.sync
    }

    /// Returns how many appended lines are not yet known to be on stable
    /// storage (always 0 under [`SyncPolicy::EveryEntry`] after `Ok`).
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Returns the length of the file known to be on stable storage.
    pub fn durable_len(&self) -> u64 {
        self.synced_len
    }

    /// Appends `line` (which must not contain a newline) and a newline in one
    /// write, then syncs as the policy says.
    pub fn append_line(&mut self, line: &[u8]) -> Result<(), StoreError> {
        if line.contains(&b'\n') {
            return Err(StoreError::Invalid(format!(
                "{}: a line to append contains a newline",
                self.path.display()
            )));
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.extend_from_slice(line);
        buf.push(b'\n');
        let r = self.write_buf(&buf);
        self.buf = buf;
        r
    }

    /// Appends `value` as one JSON line.
    pub fn append_json<T: serde::Serialize + ?Sized>(
        &mut self,
        value: &T,
    ) -> Result<(), StoreError> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        if let Err(e) = serde_json::to_writer(&mut buf, value) {
            self.buf = buf;
            return Err(StoreError::Invalid(format!(
                "{}: cannot serialize entry: {e}",
                self.path.display()
            )));
        }
        buf.push(b'\n');
        let r = self.write_buf(&buf);
        self.buf = buf;
        r
    }

    fn check_usable(&self) -> Result<(), StoreError> {
        match &self.broken {
            Some(reason) => Err(StoreError::Unusable {
                path: self.path.clone(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    fn write_buf(&mut self, buf: &[u8]) -> Result<(), StoreError> {
        self.check_usable()?;
        if let SyncPolicy::Grouped { entries, .. } = self.sync {
            // Lines of a group are written together at the group's sync:
            // one write of whole lines instead of one per line.
            self.batch.extend_from_slice(buf);
            self.note_pending();
            if self.pending >= entries.max(1) {
                return self.sync();
            }
            if self.batch.len() >= MAX_BATCH_BYTES {
                self.flush_batch()?;
            }
            return self.sync_if_due();
        }
        self.write_now(buf)?;
        self.note_pending();
        match self.sync {
            SyncPolicy::EveryEntry => self.sync(),
            _ => Ok(()),
        }
    }

    fn note_pending(&mut self) {
        self.pending += 1;
        if self.pending_since.is_none() {
            self.pending_since = Some(Instant::now());
        }
    }

    /// Writes `buf` (whole lines) at the end of the file in one `write`,
    /// or rolls the file back to where it was.
    fn write_now(&mut self, buf: &[u8]) -> Result<(), StoreError> {
        if let Err(source) = self.file.write_all(buf) {
            let rolled_back = self.roll_back(buf.len());
            if !rolled_back {
                self.broken = Some(format!(
                    "a failed append could not be rolled back ({source})"
                ));
            }
            return Err(StoreError::Append {
                path: self.path.clone(),
                bytes: buf.len(),
                rolled_back,
                source,
            });
        }
        self.len += buf.len() as u64;
        Ok(())
    }

    /// Writes the lines of the grouped policy waiting in memory. When that
    /// fails they are dropped (none of them was acknowledged as durable)
    /// and the file is rolled back to its last whole line.
    fn flush_batch(&mut self) -> Result<(), StoreError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.batch);
        let r = self.write_now(&batch);
        self.batch = batch;
        self.batch.clear();
        if r.is_err() {
            // The lost lines were never durable; what is in the file is.
            self.pending = 0;
            self.pending_since = None;
        }
        r
    }

    /// Cuts the file back to its length before a failed append of `n`
    /// bytes. Returns false when that could not be done safely.
    fn roll_back(&mut self, n: usize) -> bool {
        let now = match self.file.metadata() {
            Ok(m) => m.len(),
            Err(_) => return false,
        };
        if now == self.len {
            return true;
        }
        // Only cut what this append can have written; anything else is not
        // ours to remove.
        if now < self.len || now > self.len + n as u64 {
            return false;
        }
        self.file.set_len(self.len).is_ok()
    }

    /// Returns when the pending lines must be synced under the grouped
    /// policy (`None` when nothing is pending or the policy is not grouped).
    pub fn sync_deadline(&self) -> Option<Instant> {
        match (self.sync, self.pending_since) {
            (SyncPolicy::Grouped { interval, .. }, Some(t)) if self.pending > 0 => {
                Some(t + interval)
            }
            _ => None,
        }
    }

    /// Syncs when the grouped policy's interval has passed for the oldest
    /// pending line. Call it from an idle loop so lines do not wait for the
    /// next append.
    pub fn sync_if_due(&mut self) -> Result<(), StoreError> {
        match self.sync_deadline() {
            Some(d) if Instant::now() >= d => self.sync(),
            _ => Ok(()),
        }
    }

    /// Forces every appended line to stable storage.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        self.check_usable()?;
        self.flush_batch()?;
        if self.pending > 0 {
            if let Err(e) = self.file.sync_data() {
                // After a failed fsync the kernel may have dropped the dirty
                // pages: nothing pending can be promised any more.
                self.broken = Some(format!("fsync failed: {e}"));
                return Err(StoreError::io(&self.path, "fsync", e));
            }
        }
        self.pending = 0;
        self.pending_since = None;
        self.synced_len = self.len;
        Ok(())
    }

    /// Syncs, releases the lock and closes the file, reporting a failure
    /// that dropping would swallow.
    pub fn close(mut self) -> Result<(), StoreError> {
        self.sync()
    }

    /// Cuts an incomplete (no newline) or unparsable last line off the file
    /// and saves it beside the file; adds a missing newline after a whole
    /// last value.
    fn recover(&mut self) -> Result<Recovery, StoreError> {
        let len = self
            .file
            .metadata()
            .map_err(|e| StoreError::io(&self.path, "stat", e))?
            .len();
        if len == 0 {
            return Ok(Recovery::default());
        }
        let tail =
            inspect_tail(&mut self.file, len).map_err(|e| StoreError::io(&self.path, "read", e))?;
        match tail {
            Tail::Clean => Ok(Recovery::default()),
            Tail::MissingNewline => {
                self.file
                    .write_all(b"\n")
                    .map_err(|e| StoreError::io(&self.path, "append", e))?;
                self.file
                    .sync_data()
                    .map_err(|e| StoreError::io(&self.path, "fsync", e))?;
                Ok(Recovery {
                    newline_added: true,
                    ..Recovery::default()
                })
            }
            Tail::Torn { keep } => {
                let mut torn = Vec::new();
                self.file
                    .seek(SeekFrom::Start(keep))
                    .map_err(|e| StoreError::io(&self.path, "seek", e))?;
                (&self.file)
                    .take(len - keep)
                    .read_to_end(&mut torn)
                    .map_err(|e| StoreError::io(&self.path, "read", e))?;
                // The cut bytes are made durable before they leave the file:
                // a crash in between leaves them in both places, never in none.
                let sidecar = sidecar_path(&self.path);
                crate::snapshot::write_atomic(&sidecar, &torn)?;
                self.file
                    .set_len(keep)
                    .map_err(|e| StoreError::io(&self.path, "truncate", e))?;
                self.file
                    .sync_all()
                    .map_err(|e| StoreError::io(&self.path, "fsync", e))?;
                Ok(Recovery {
                    torn_bytes: len - keep,
                    sidecar: Some(sidecar),
                    newline_added: false,
                })
            }
        }
    }
}

impl Drop for AppendWriter {
    fn drop(&mut self) {
        let _ = self.sync();
        // The holder file goes before the lock, so it never names a writer
        // that is gone while a new one holds the lock.
        crate::lock::release(&self.path);
        // Unlock explicitly rather than by closing: a child process being
        // spawned by another thread holds a copy of the descriptor until it
        // execs, and would keep the lock held that long.
        let _ = self.file.unlock();
    }
}

/// Opens `path` for reading and appending, creating it (0600) if missing,
/// refusing symbolic links and non-regular files. Returns whether it was
/// created.
/// True when `path` still names the open `file` (same device and inode).
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

fn open_regular(path: &Path) -> Result<(File, bool), StoreError> {
    let mut o = OpenOptions::new();
    o.read(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let mut created = false;
    let file = match o.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let mut c = o.clone();
            c.create_new(true);
            match c.open(path) {
                Ok(f) => {
                    created = true;
                    f
                }
                // Someone created it in between: open what is there.
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    o.open(path).map_err(|e| open_error(path, e))?
                }
                Err(e) => return Err(open_error(path, e)),
            }
        }
        Err(e) => return Err(open_error(path, e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| StoreError::io(path, "stat", e))?;
    if !meta.is_file() {
        return Err(StoreError::NotRegularFile {
            path: path.to_path_buf(),
        });
    }
    Ok((file, created))
}

fn open_error(path: &Path, e: std::io::Error) -> StoreError {
    #[cfg(unix)]
    let is_link = e.raw_os_error() == Some(libc::ELOOP);
    #[cfg(not(unix))]
    let is_link = false;
    if is_link
        || path
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    {
        StoreError::Symlink {
            path: path.to_path_buf(),
        }
    } else if path.is_dir() {
        StoreError::NotRegularFile {
            path: path.to_path_buf(),
        }
    } else {
        StoreError::io(path, "open", e)
    }
}

/// The state of the end of a JSONL file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    /// Ends with a newline after a whole line (or is empty).
    Clean,
    /// The last line is a whole JSON object or array without its newline.
    MissingNewline,
    /// The last line is incomplete or not valid JSON; the first `keep`
    /// bytes are whole lines.
    Torn {
        /// Length of the prefix of whole lines.
        keep: u64,
    },
}

/// Looks at the last line of `file` (of length `len`) and tells whether it
/// is whole.
pub fn inspect_tail(file: &mut File, len: u64) -> std::io::Result<Tail> {
    if len == 0 {
        return Ok(Tail::Clean);
    }
    // Read the tail in growing windows until the start of the last line is
    // found.
    let mut window = 64 * 1024u64;
    loop {
        let start = len.saturating_sub(window);
        let mut tail = Vec::with_capacity((len - start) as usize);
        file.seek(SeekFrom::Start(start))?;
        (&*file).take(len - start).read_to_end(&mut tail)?;
        if (tail.len() as u64) < len - start {
            // The file shrank while we looked; look again.
            return inspect_tail(file, start + tail.len() as u64);
        }
        let terminated = tail.last() == Some(&b'\n');
        let body = if terminated {
            &tail[..tail.len() - 1]
        } else {
            &tail[..]
        };
        let found = body.iter().rposition(|&b| b == b'\n');
        if found.is_none() && start > 0 {
            window = window.saturating_mul(4);
            continue;
        }
        let (line_start, last) = match found {
            Some(i) => (start + i as u64 + 1, &body[i + 1..]),
            None => (0, body),
        };
        return Ok(classify_last(last, terminated, line_start));
    }
}

fn classify_last(last: &[u8], terminated: bool, line_start: u64) -> Tail {
    let last = last.strip_suffix(b"\r").unwrap_or(last);
    if terminated {
        if line_ok(last) {
            Tail::Clean
        } else {
            Tail::Torn { keep: line_start }
        }
    } else if whole_record(last) {
        Tail::MissingNewline
    } else {
        Tail::Torn { keep: line_start }
    }
}

fn line_ok(line: &[u8]) -> bool {
    crate::read::is_blank(line) || serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok()
}

/// True for a whole JSON object or array: a cut-short write of one can
/// never parse, unlike a cut-short number.
fn whole_record(line: &[u8]) -> bool {
    let first = line.iter().find(|b| !b.is_ascii_whitespace());
    matches!(first, Some(b'{') | Some(b'['))
        && serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok()
}

/// Returns a fresh sidecar path for bytes cut from `path`:
/// `<file>.torn-<UTC time>` (with `-1`, `-2`, … when taken).
pub fn sidecar_path(path: &Path) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y-%m-%dT%H-%M-%S%.3fZ");
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = parent_dir(path);
    let base = dir.join(format!("{name}.torn-{stamp}"));
    if base.symlink_metadata().is_err() {
        return base;
    }
    (1u32..)
        .map(|i| dir.join(format!("{name}.torn-{stamp}-{i}")))
        .find(|p| p.symlink_metadata().is_err())
        .unwrap_or(base)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_waiting_writer_follows_a_file_renamed_over_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let (first, _) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        let p2 = p.clone();
        let waiter = std::thread::spawn(move || {
            let opts = AppendOptions {
                lock: LockMode::Wait,
                ..AppendOptions::default()
            };
            let (mut w, _) = AppendWriter::open(&p2, opts).unwrap();
            w.append_line(b"{\"n\":2}").unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        let replacement = dir.path().join("new.jsonl");
        std::fs::write(&replacement, b"{\"n\":1}\n").unwrap();
        std::fs::rename(&replacement, &p).unwrap();
        drop(first);
        waiter.join().unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\"n\":1}\n{\"n\":2}\n"
        );
    }

    use super::*;
    use std::fs;

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
        assert!(
            err.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
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

    #[test]
    fn a_whole_last_object_gets_its_newline() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        fs::write(&p, b"{\"a\":1}\n{\"b\":2}").unwrap();
        let (mut w, rec) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        assert!(rec.newline_added && rec.torn_bytes == 0 && !rec.is_clean());
        w.append_line(b"{\"c\":3}").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
    }

    #[test]
    fn a_torn_tail_longer_than_the_first_window_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let long = format!("{{\"x\":\"{}", "y".repeat(300_000));
        fs::write(&p, format!("{{\"a\":1}}\n{long}")).unwrap();
        let (_w, rec) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        assert_eq!(rec.torn_bytes, long.len() as u64);
        assert_eq!(fs::read(&p).unwrap(), b"{\"a\":1}\n");
    }

    #[test]
    fn a_file_of_one_torn_line_is_emptied() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        fs::write(&p, b"\0\0\0\0").unwrap();
        let (w, rec) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        assert_eq!(rec.torn_bytes, 4);
        assert!(w.is_empty());
    }

    #[test]
    fn sidecars_never_overwrite_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..5 {
            fs::write(&p, format!("{{\"n\":{i}")).unwrap();
            let (_w, rec) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
            let s = rec.sidecar.unwrap();
            assert_eq!(fs::read_to_string(&s).unwrap(), format!("{{\"n\":{i}"));
            assert!(seen.insert(s));
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_session_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere.jsonl");
        fs::write(&target, b"{\"a\":1}\n").unwrap();
        let link = dir.path().join("s.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = AppendWriter::open(&link, AppendOptions::default()).unwrap_err();
        assert!(matches!(err, StoreError::Symlink { .. }), "{err}");
        // A dangling link is refused too, and nothing is created through it.
        fs::remove_file(&target).unwrap();
        let err = AppendWriter::open(&link, AppendOptions::default()).unwrap_err();
        assert!(matches!(err, StoreError::Symlink { .. }), "{err}");
        assert!(!target.exists());
        // Links among the directories are followed.
        let real = dir.path().join("real");
        fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("via")).unwrap();
        let (mut w, _) =
            AppendWriter::open(&dir.path().join("via/s.jsonl"), AppendOptions::default()).unwrap();
        w.append_line(b"{}").unwrap();
        assert_eq!(fs::read(real.join("s.jsonl")).unwrap(), b"{}\n");
    }

    #[test]
    fn directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = AppendWriter::open(dir.path(), AppendOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::NotRegularFile { .. } | StoreError::Io { .. }
            ),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new/sub/s.jsonl");
        let (mut w, _) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        w.append_line(b"{}").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::metadata(p.parent().unwrap())
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o700
        );
        assert_eq!(
            fs::metadata(dir.path().join("new"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o700
        );
    }

    #[test]
    fn grouped_policy_syncs_by_count() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let sync = SyncPolicy::Grouped {
            entries: 3,
            interval: Duration::from_secs(3600),
        };
        let (mut w, _) = AppendWriter::open(
            &p,
            AppendOptions {
                sync,
                lock: LockMode::Fail,
            },
        )
        .unwrap();
        w.append_line(b"1").unwrap();
        w.append_line(b"2").unwrap();
        assert_eq!(w.pending(), 2);
        assert!(w.sync_deadline().is_some());
        assert_eq!(w.durable_len(), 0);
        w.append_line(b"3").unwrap();
        assert_eq!(w.pending(), 0);
        assert_eq!(w.durable_len(), 6);
        assert!(w.sync_deadline().is_none());
    }

    #[test]
    fn lines_with_newlines_are_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let (mut w, _) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        assert!(w.append_line(b"{}\n{}").is_err());
        assert!(w.is_empty());
        w.close().unwrap();
        assert!(!crate::lock::holder_path(&p).exists());
    }
}
