//! Bringing the index up to date with the session files: plan by stat,
//! parse in parallel, write from one thread in few transactions.

use crate::error::SqlContext;
use crate::extract;
use crate::files::{self, FileStat, FileState};
use crate::parsed::{Job, Outcome, Parsed};
use crate::{writer, Index, IndexError};
use agentlog_formats::discover::Found;
use agentlog_formats::registry;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex, PoisonError};

/// What an update did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct UpdateReport {
    /// Files looked at.
    pub files: usize,
    /// Files unchanged since the last update.
    pub unchanged: usize,
    /// Files read in full (new or rewritten).
    pub read_full: usize,
    /// Files read from where the last update stopped.
    pub appended: usize,
    /// Files removed from the index because they are gone.
    pub removed: usize,
    /// Files that could not be read (kept in the index with their error).
    pub failed: usize,
    /// Entries written.
    pub entries: u64,
    /// Bytes of session files read.
    pub bytes_read: u64,
    /// Reader diagnostics (bad lines, unknown records) seen.
    pub diagnostics: u64,
}

/// Progress of an update, for a progress bar.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    /// Files done.
    pub done: usize,
    /// Files to read.
    pub total: usize,
    /// Bytes done.
    pub bytes_done: u64,
    /// Bytes to read.
    pub bytes_total: u64,
}

/// What an update would do, from a stat of every file only.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub(crate) jobs: Vec<Job>,
    pub(crate) removed: Vec<(i64, PathBuf)>,
    pub(crate) unchanged: usize,
    /// Bytes the update would read (at most).
    pub bytes: u64,
    /// The index lock, held from planning until the plan is carried out
    /// or dropped: two processes never plan from the same state.
    pub(crate) _lock: Option<std::sync::Arc<crate::lockfile::IndexLock>>,
    /// Carried out without merging the full-text segments: an update of
    /// the recently written files, on the way of a command the user waits
    /// for, leaves the merging to the next full check (see
    /// [`crate::writer::Writer::merge`]).
    pub(crate) no_merge: bool,
}

impl Plan {
    /// The files the plan reads (what the archive keeps before they are
    /// read).
    pub fn found(&self) -> Vec<Found> {
        self.jobs
            .iter()
            .map(|j| Found {
                path: j.path.clone(),
                format: j.format,
            })
            .collect()
    }

    /// Returns the number of files to read.
    pub fn files_to_read(&self) -> usize {
        self.jobs.len()
    }

    /// Returns the number of files to remove from the index.
    pub fn files_to_remove(&self) -> usize {
        self.removed.len()
    }

    /// True when the index is current.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty() && self.removed.is_empty()
    }
}

/// Up to this many files to read or remove, a full check plans again under
/// the update lock only for them; more (a build), for every file.
const REPLAN_FILES: usize = 256;

impl Index {
    /// Returns what an update over `found` would do, looking only at file
    /// sizes, times and inodes.
    pub fn plan(&self, found: &[Found]) -> Result<Plan, IndexError> {
        // Every file is `stat`ed without the update lock (0.5 s at 10 GB):
        // when nothing changed there is nothing to wait for, and a command
        // that has an append to read waits only for the few files another
        // process's full check found changed, not for its `stat` of every
        // file (a search's p99 right after an append, at 10 GB). What there
        // is to do is planned again under the lock.
        let peek = self.plan_with(found, None, true, false)?;
        if peek.is_empty() || !self.lock_updates {
            return Ok(peek);
        }
        if peek.jobs.len() + peek.removed.len() > REPLAN_FILES {
            return self.plan_with(found, None, true, true);
        }
        let lock = std::sync::Arc::new(crate::lockfile::IndexLock::acquire(&self.path)?);
        // The states of the files the peek would touch, read under the
        // lock: another process may have read them meanwhile.
        let touched: Vec<Found> = peek
            .jobs
            .iter()
            .map(|j| Found {
                path: j.path.clone(),
                format: j.format,
            })
            .collect();
        let mut stored = files::States::default();
        for p in touched
            .iter()
            .map(|f| &f.path)
            .chain(peek.removed.iter().map(|(_, p)| p))
        {
            if let Some(s) = self.file_state_of(p)? {
                stored.insert(path_key(p).into_owned(), s);
            }
        }
        let mut plan = self.plan_with(&touched, Some(&stored), true, false)?;
        plan.unchanged += peek.unchanged;
        plan._lock = Some(lock);
        Ok(plan)
    }

    /// Returns what an update of the indexed files last seen modified at or
    /// after `since_ns` (and those whose last read failed) would do, plus
    /// the files of `more` (new ones included); other indexed files are
    /// neither looked at nor removed. Only those files' states are loaded.
    pub fn plan_recent(&self, since_ns: i64, more: &[Found]) -> Result<Plan, IndexError> {
        let mut stored = self.file_states(Some(since_ns), 0)?;
        let mut found: Vec<Found> = stored
            .iter()
            .filter_map(|(p, s)| {
                agentlog_formats::registry::by_name(&s.format).map(|f| Found {
                    path: std::path::PathBuf::from(p),
                    format: f.name(),
                })
            })
            .collect();
        for f in more {
            if let Some(s) = self.file_state_of(&f.path)? {
                stored.insert(path_key(&f.path).into_owned(), s);
            }
            found.push(f.clone());
        }
        // Looked at without the update lock first: when nothing changed
        // (most of the time) there is nothing to wait for, where waiting
        // for a full check running in another process (it holds the lock
        // while it stats every file, 1 s at 10 GB) was a search's p99.
        // What is there to read is planned again under the lock.
        let peek = self.plan_with(&found, Some(&stored), false, false)?;
        if peek.is_empty() {
            return Ok(peek);
        }
        let mut plan = self.plan_with(&found, Some(&stored), false, true)?;
        plan.no_merge = true;
        Ok(plan)
    }

    fn plan_with(
        &self,
        found: &[Found],
        only: Option<&files::States>,
        remove_missing: bool,
        lock: bool,
    ) -> Result<Plan, IndexError> {
        let lock = if lock && self.lock_updates {
            Some(std::sync::Arc::new(crate::lockfile::IndexLock::acquire(
                &self.path,
            )?))
        } else {
            None
        };
        // The stored states are read while other threads `stat` the files
        // (both took about as long: 0.1-0.15 s each at 122,000 files).
        let stats = match only {
            Some(_) => stat_all(found),
            None => {
                let (stats, loaded) = stat_all_while(found, || self.load_states(found.len()));
                loaded?;
                stats
            }
        };
        let cache = self.states.borrow();
        let empty = files::States::default();
        let stored = only.unwrap_or_else(|| cache.as_ref().map_or(&empty, |c| &c.1));
        // Paths as bytes: hashing a `Path` walks its components.
        let mut seen: foldhash::HashSet<&[u8]> =
            foldhash::HashSet::with_capacity_and_hasher(found.len(), Default::default());
        let mut plan = Plan {
            _lock: lock,
            ..Plan::default()
        };
        for (f, stat) in found.iter().zip(stats) {
            // A file that vanished since discovery is removed below.
            let Some(stat) = stat else {
                continue;
            };
            if !seen.insert(f.path.as_os_str().as_encoded_bytes()) {
                continue;
            }
            let job = match stored.get(path_key(&f.path).as_ref()) {
                // Unchanged; a file that failed and has not changed is not
                // retried either.
                Some(s) if s.stat.same_state(&stat) && s.format == f.format => {
                    plan.unchanged += 1;
                    continue;
                }
                Some(s) => {
                    let try_tail = files::incremental(f.format)
                        && s.format == f.format
                        && s.error.is_none()
                        && stat.is_file
                        && !stat.kept
                        && s.stat.inode == stat.inode
                        && stat.size >= s.indexed_to;
                    Job {
                        path: f.path.clone(),
                        format: f.format,
                        stat,
                        state: Some(s.clone()),
                        try_tail,
                        new_id: None,
                    }
                }
                None => Job {
                    path: f.path.clone(),
                    format: f.format,
                    stat,
                    state: None,
                    try_tail: false,
                    new_id: None,
                },
            };
            plan.bytes += job.bytes_to_read();
            plan.jobs.push(job);
        }
        for (path, s) in stored {
            let p = std::path::Path::new(path.as_str());
            if remove_missing && !seen.contains(path.as_bytes()) {
                plan.removed.push((s.id, p.to_path_buf()));
            }
        }
        plan.removed.sort();
        // Oldest first, so that newer sessions get higher document ids: the
        // search ranks its newest candidates first.
        plan.jobs.sort_by(|a, b| {
            a.stat
                .mtime_ns
                .cmp(&b.stat.mtime_ns)
                .then(a.path.cmp(&b.path))
        });
        // The files new to the index get their ids now, in the order they
        // will be stored (as SQLite would, but that the id of a file this
        // update removes is not given again), so that the threads reading
        // them can make their entries' blocks.
        if plan.jobs.iter().any(|j| j.state.is_none()) {
            let first: i64 = self
                .conn
                .query_row("SELECT coalesce(max(id), 0) + 1 FROM files", [], |r| {
                    r.get(0)
                })
                .at(&self.path)?;
            let new = plan.jobs.iter_mut().filter(|j| j.state.is_none());
            for (id, job) in (first..).zip(new) {
                job.new_id = Some(id);
            }
        }
        Ok(plan)
    }

    /// Brings the index up to date with `found` (usually every discovered
    /// session): new and rewritten files are read in full, grown append-only
    /// files from where the last update stopped, vanished files removed.
    pub fn update(
        &mut self,
        found: &[Found],
        progress: &mut dyn FnMut(Progress),
    ) -> Result<UpdateReport, IndexError> {
        let plan = self.plan(found)?;
        self.apply(plan, progress)
    }

    /// Carries out a [`Plan`].
    pub fn apply(
        &mut self,
        plan: Plan,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<UpdateReport, IndexError> {
        let mut report = UpdateReport {
            files: plan.jobs.len() + plan.unchanged,
            unchanged: plan.unchanged,
            removed: plan.removed.len(),
            ..UpdateReport::default()
        };
        if plan.is_empty() {
            // Nothing to write, so no transaction: a full check that found
            // nothing changed (planned without the update lock) neither
            // waits for another process's update nor meets SQLite's busy
            // timeout. (The indexes added after the schema's version come
            // with the next update that writes.)
            return Ok(report);
        }
        let path = self.path.clone();
        // What the cache of file states learns once the update commits.
        let mut learned: Vec<(PathBuf, Option<FileState>)> = Vec::new();
        let mut cache = self.states.borrow_mut().take();
        let mut w = writer::Writer::begin(&mut self.conn, &path)?;
        for (id, p) in &plan.removed {
            w.remove_file(*id)?;
            learned.push((p.clone(), None));
        }
        let total = plan.jobs.len();
        let mut prog = Progress {
            done: 0,
            total,
            bytes_done: 0,
            bytes_total: plan.bytes,
        };
        progress(prog);
        if total == 0 {
            // Files removed only: merged (or not) as any update.
            w.merge_or_defer(plan.no_merge, 0)?;
            w.commit()?;
            if let Some(c) = cache.as_mut() {
                learn(&mut c.1, learned);
            }
            *self.states.borrow_mut() = cache;
            return Ok(report);
        }
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 8)
            .min(total);
        let next = AtomicUsize::new(0);
        let jobs = &plan.jobs;
        let window = Window::new(&plan.jobs);
        let result: Result<(), IndexError> = std::thread::scope(|scope| {
            // As many as the window lets the parsers have ready: the window
            // is what bounds them.
            let (tx, rx) = mpsc::sync_channel::<(usize, Parsed)>(AHEAD_FILES);
            for _ in 0..workers {
                let tx = tx.clone();
                let next = &next;
                let window = &window;
                scope.spawn(move || {
                    let _stop = StopOnDrop(window, true);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        if !window.admit(i) {
                            break;
                        }
                        let parsed = parse_job(job.clone());
                        if tx.send((i, parsed)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            // However the writing below ends, waiting parsers are released.
            let _stop = StopOnDrop(&window, false);
            // Files are stored in plan order (oldest first: newer sessions
            // get higher document ids, which the search ranks first),
            // whatever order they are parsed in.
            let mut pending = std::collections::BTreeMap::new();
            let mut expected = 0;
            let mut since_commit = 0u64;
            for (i, parsed) in rx {
                pending.insert(i, parsed);
                while let Some(parsed) = pending.remove(&expected) {
                    expected += 1;
                    window.advance(expected);
                    let (bytes, diags, entries, id) = w.write(&parsed)?;
                    let mut state = match &parsed.outcome {
                        Outcome::Full { state, .. } => {
                            report.read_full += 1;
                            state.clone()
                        }
                        Outcome::Tail { state, .. } => {
                            report.appended += 1;
                            state.clone()
                        }
                        Outcome::Failed { state, message } => {
                            report.failed += 1;
                            let mut s = state.clone();
                            s.error = Some(message.clone());
                            s
                        }
                    };
                    state.id = id;
                    learned.push((parsed.job.path.clone(), Some(state)));
                    report.bytes_read += bytes;
                    report.diagnostics += diags;
                    report.entries += entries;
                    since_commit += bytes;
                    prog.done += 1;
                    prog.bytes_done += bytes;
                    progress(prog);
                    if since_commit > 256 * 1024 * 1024 {
                        w.checkpoint()?;
                        since_commit = 0;
                    }
                }
            }
            Ok(())
        });
        result?;
        w.merge_or_defer(plan.no_merge, report.bytes_read)?;
        w.commit()?;
        if let Some(c) = cache.as_mut() {
            learn(&mut c.1, learned);
        }
        *self.states.borrow_mut() = cache;
        Ok(report)
    }

    /// Merges the full-text segments that updates of recent files added
    /// without merging (a command's update on the way to its answer; see
    /// [`Plan`]), within the bound an ordinary update merges in; what a
    /// full check with nothing to read does, which also makes the
    /// later indexes (`schema::LATER_INDEXES`) an index made before
    /// them lacks. Returns whether there was anything to do.
    pub fn merge_pending(&mut self) -> Result<bool, IndexError> {
        use rusqlite::OptionalExtension;
        let pending = || -> Result<Option<i64>, IndexError> {
            self.conn
                .query_row(
                    "SELECT CAST(value AS INTEGER) FROM agentlog_index WHERE key = ?1",
                    [writer::UNMERGED],
                    |r| r.get(0),
                )
                .optional()
                .at(&self.path)
        };
        // An index made before a later index came gets it here too (an
        // update with files to read makes it anyway).
        let missing = || crate::schema::later_indexes_missing(&self.conn, &self.path);
        if pending()?.is_none() && !missing()? {
            return Ok(false);
        }
        // Under the update lock, as any update: waiting for another
        // process's update rather than for SQLite's busy timeout.
        let _lock = if self.lock_updates {
            Some(crate::lockfile::IndexLock::acquire(&self.path)?)
        } else {
            None
        };
        let updates = pending()?;
        if updates.is_none() && !missing()? {
            return Ok(false);
        }
        let path = self.path.clone();
        // Beginning makes the later indexes.
        let mut w = writer::Writer::begin(&mut self.conn, &path)?;
        if let Some(updates) = updates {
            w.merge_deferred(u32::try_from(updates).unwrap_or(u32::MAX))?;
        }
        w.commit()?;
        Ok(true)
    }

    /// Fills the cache of file states from the index unless it is current
    /// (no other connection wrote since it was filled); `expected` is about
    /// how many there are.
    fn load_states(&self, expected: usize) -> Result<(), IndexError> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .at(&self.path)?;
        if self
            .states
            .borrow()
            .as_ref()
            .is_some_and(|c| c.0 == version)
        {
            return Ok(());
        }
        let states = self.file_states(None, expected)?;
        *self.states.borrow_mut() = Some((version, states));
        Ok(())
    }

    /// Returns the stored state of every file, by path.
    /// With `since_ns`, only of the files last seen modified at or after
    /// it and of those whose last read failed. `expected` is about how
    /// many there will be.
    pub(crate) fn file_states(
        &self,
        since_ns: Option<i64>,
        expected: usize,
    ) -> Result<files::States, IndexError> {
        // The recent files by the index on their time, the failed ones by
        // theirs (the `+` keeps SQLite off the time index there, which
        // would read nearly every row): a freshness check reads a few
        // pages, not the whole table (600 pages at 1 GB).
        let mut stmt = match since_ns {
            None => self.conn.prepare_cached(&format!(
                "SELECT {STATE_COLUMNS} FROM files WHERE ?1 IS NULL"
            )),
            Some(_) => self.conn.prepare_cached(&format!(
                "SELECT {STATE_COLUMNS} FROM files WHERE mtime_ns >= ?1
                 UNION ALL
                 SELECT {STATE_COLUMNS} FROM files
                   WHERE error IS NOT NULL AND +mtime_ns < ?1"
            )),
        }
        .at(&self.path)?;
        // Every file's state: the table read once, with a small cache.
        let _scan = match since_ns {
            None => Some(crate::schema::ScanCache::new(&self.conn, &self.path)?),
            Some(_) => None,
        };
        let rows = stmt.query_map([since_ns], state_row).at(&self.path)?;
        // Made as large as it will be: growing it rehashed every path
        // into fresh memory several times (a quarter of reading 122,000).
        let mut out = files::States::with_capacity_and_hasher(expected, Default::default());
        for row in rows {
            let (p, s) = row.at(&self.path)?;
            out.insert(p, s);
        }
        Ok(out)
    }

    /// Returns the stored state of the file at `path` (for tests and
    /// `agentlog doctor`).
    pub fn file_state(&self, path: &std::path::Path) -> Result<Option<FileState>, IndexError> {
        self.file_state_of(path)
    }

    fn file_state_of(&self, path: &std::path::Path) -> Result<Option<FileState>, IndexError> {
        use rusqlite::OptionalExtension;
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {STATE_COLUMNS} FROM files WHERE path = ?1"
            ))
            .at(&self.path)?;
        Ok(stmt
            .query_row([path_key(path).as_ref()], state_row)
            .optional()
            .at(&self.path)?
            .map(|(_, s)| s))
    }
}

/// Applies what an update wrote to the cache of file states.
fn learn(cache: &mut files::States, learned: Vec<(PathBuf, Option<FileState>)>) {
    for (p, s) in learned {
        let k = path_key(&p).into_owned();
        match s {
            Some(s) => {
                cache.insert(k, s);
            }
            None => {
                cache.remove(&k);
            }
        }
    }
}

/// Returns the text a path is stored under (hashing text is much cheaper
/// than hashing a path component by component).
fn path_key(p: &std::path::Path) -> std::borrow::Cow<'_, str> {
    p.to_string_lossy()
}

/// The columns of a file's state, in the order [`state_row`] reads them.
const STATE_COLUMNS: &str = "id, path, format, size, mtime_ns, inode, indexed_to, tail_offset,
     tail_line, head_hash, before_hash, error";

/// Reads a row of [`STATE_COLUMNS`]: the file's path and state.
fn state_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(String, FileState)> {
    Ok((
        r.get::<_, String>(1)?,
        FileState {
            id: r.get(0)?,
            format: r.get(2)?,
            stat: FileStat {
                size: r.get::<_, i64>(3)? as u64,
                mtime_ns: r.get(4)?,
                inode: r.get::<_, i64>(5)? as u64,
                is_file: true,
                kept: false,
            },
            indexed_to: r.get::<_, i64>(6)? as u64,
            tail_offset: r.get::<_, i64>(7)? as u64,
            tail_line: r.get::<_, i64>(8)? as u64,
            head_hash: r.get(9)?,
            before_hash: r.get(10)?,
            error: r.get(11)?,
        },
    ))
}

/// Returns the stat of every file, on two threads (a stat is a system call
/// that waits on the file system more than on the processor).
fn stat_all(found: &[Found]) -> Vec<Option<FileStat>> {
    stat_all_while(found, || ()).0
}

/// Returns the stat of every file, on two threads besides this one, and
/// what `work` returns, done on this thread meanwhile (a few files are
/// simply `stat`ed after `work`).
fn stat_all_while<R>(found: &[Found], work: impl FnOnce() -> R) -> (Vec<Option<FileStat>>, R) {
    let stat = |part: &[Found]| {
        part.iter()
            .map(|f| files::stat(&f.path))
            .collect::<Vec<_>>()
    };
    if found.len() < 256 {
        let r = work();
        return (stat(found), r);
    }
    let (a, b) = found.split_at(found.len() / 2);
    std::thread::scope(|s| {
        let ha = s.spawn(|| stat(a));
        let hb = s.spawn(|| stat(b));
        let r = work();
        // A thread that panicked has its half done again here.
        let mut out = ha.join().unwrap_or_else(|_| stat(a));
        out.extend(hb.join().unwrap_or_else(|_| stat(b)));
        (out, r)
    })
}

/// How many files the parsers may have read ahead of the writer, at most.
const AHEAD_FILES: usize = 64;

/// How many bytes the parsers may have read ahead of the file the writer
/// stores next, at most (besides the file after it, which is always let
/// through, whatever its size).
const AHEAD_BYTES: u64 = 16 * 1024 * 1024;

/// Keeps the parsers at most [`AHEAD_FILES`] files and [`AHEAD_BYTES`]
/// beyond the file the writer stores next (files are stored in plan
/// order): a large file parsed slowly holds back a bounded amount of
/// parsed files in memory. The next two files are always let through, so
/// two parsers keep working on a run of large files. The writer waited
/// for the parsers for a sixth of a cold build when they could be only
/// four files ahead each (files differ in size, and three threads share
/// two cores).
struct Window {
    /// Files written so far, and whether the writer stopped.
    state: Mutex<(usize, bool)>,
    moved: Condvar,
    /// The bytes to read ([`Job::bytes_to_read`]) of the files before each
    /// file of the plan, and of all.
    before: Vec<u64>,
}

impl Window {
    fn new(jobs: &[Job]) -> Window {
        let mut before = Vec::with_capacity(jobs.len() + 1);
        let mut sum = 0u64;
        before.push(0);
        for j in jobs {
            sum = sum.saturating_add(j.bytes_to_read());
            before.push(sum);
        }
        Window {
            state: Mutex::new((0, false)),
            moved: Condvar::new(),
            before,
        }
    }

    /// Whether file `i` must wait while the first `written` are stored: it
    /// is neither of the next two to store, and it is too many files or
    /// bytes beyond the next.
    fn too_far(&self, i: usize, written: usize) -> bool {
        let bytes = |k: usize| self.before.get(k).copied().unwrap_or(u64::MAX);
        i > written + 1
            && (i > written + AHEAD_FILES
                || bytes(i + 1).saturating_sub(bytes(written + 1)) > AHEAD_BYTES)
    }

    /// Waits until file `i` may be parsed; false when the writer stopped.
    fn admit(&self, i: usize) -> bool {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while !s.1 && self.too_far(i, s.0) {
            s = self.moved.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        !s.1
    }

    /// Records that the first `written` files were stored.
    fn advance(&self, written: usize) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).0 = written;
        self.moved.notify_all();
    }

    fn stop(&self) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).1 = true;
        self.moved.notify_all();
    }
}

/// Stops the window when dropped (with `true`: only when the thread is
/// panicking, so that a parser that dies does not leave the others waiting
/// for a file that will never come).
struct StopOnDrop<'a>(&'a Window, bool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        if !self.1 || std::thread::panicking() {
            self.0.stop();
        }
    }
}

/// Reads one file (in a worker thread).
fn parse_job(job: Job) -> Parsed {
    let outcome = if job.try_tail {
        match job.state.as_ref().map(|s| read_tail(&job, s)) {
            Some(Ok(Some(o))) => o,
            Some(Err(message)) => failed(&job, message),
            _ => read_full(&job),
        }
    } else {
        read_full(&job)
    };
    Parsed { job, outcome }
}

fn failed(job: &Job, message: String) -> Outcome {
    Outcome::Failed {
        message,
        state: FileState {
            format: job.format.to_string(),
            stat: job.stat,
            error: None,
            ..FileState::default()
        },
    }
}

fn read_full(job: &Job) -> Outcome {
    let Some(format) = registry::by_name(job.format) else {
        return failed(job, format!("unknown format {}", job.format));
    };
    let incremental = files::incremental(job.format) && job.stat.is_file;
    let (read, bytes_len, state) = if job.stat.is_file {
        let bytes = match std::fs::read(&job.path) {
            Ok(b) => b,
            // A file that is gone but kept in agentlog's archive.
            Err(e) => match agentlog_formats::input::read_kept(&job.path) {
                Some(Ok(b)) => b,
                Some(Err(k)) => return failed(job, k.to_string()),
                None => return failed(job, format!("{}: {e}", job.path.display())),
            },
        };
        let end = if incremental {
            files::whole_lines(&bytes)
        } else {
            bytes.len()
        };
        let read = match format.read_bytes_to_show(&job.path, &bytes[..end]) {
            Ok(r) => r,
            Err(e) => return failed(job, e.to_string()),
        };
        let (head_hash, before_hash) = files::check_hashes(&bytes, end);
        let mut state = FileState {
            format: job.format.to_string(),
            stat: job.stat,
            indexed_to: end as u64,
            tail_offset: 0,
            tail_line: 1,
            head_hash,
            before_hash,
            ..FileState::default()
        };
        if incremental {
            (state.tail_line, state.tail_offset) =
                files::restart(&read.session, &bytes[..end], (1, 0)).unwrap_or((1, 0));
        }
        (read, bytes.len() as u64, state)
    } else {
        let read = match format.read_path_to_show(&job.path) {
            Ok(r) => r,
            Err(e) => return failed(job, e.to_string()),
        };
        let state = FileState {
            format: job.format.to_string(),
            stat: job.stat,
            indexed_to: job.stat.size,
            tail_line: 1,
            ..FileState::default()
        };
        (read, job.stat.size, state)
    };
    let mut extracted = extract::extract(&read.session);
    extracted.session.kind = format.session_kind(&job.path, &read.session);
    // What the reader did not know, from the read already made: the drift
    // alarm and `doctor` read it from the index.
    let drift = crate::parsed::FileDrift {
        version: read.session.meta.agent_version.clone(),
        items: agentlog_formats::drift::report(format, &read),
    };
    if extracted.session.session_id.is_empty() {
        extracted.session.session_id = job
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    // The entries' blocks, when the file's id is known (else the writer
    // makes them); a failure here is the writer's to report.
    let blocks = job.id().and_then(|id| {
        let s = &extracted.session;
        crate::texts::blocks(id, &s.agent, s.project.as_deref(), &extracted.docs).ok()
    });
    // Of a file read to its end only: a last line without its newline is
    // left for the next update, but a page reads it.
    let shape = (job.stat.is_file
        && state.indexed_to == bytes_len
        && crate::shape::shaped(job.format, &job.path, bytes_len))
    .then(|| crate::shape::Shape::of(&read.session).map(Box::new))
    .flatten();
    Outcome::Full {
        extracted,
        blocks,
        state,
        diagnostics: read.diagnostics.len() as u64,
        bytes: bytes_len,
        shape,
        drift,
    }
}

/// Returns `Ok(None)` when the file must be read in full after all.
fn read_tail(job: &Job, state: &FileState) -> Result<Option<Outcome>, String> {
    let Some(format) = registry::by_name(job.format) else {
        return Ok(None);
    };
    let (tail, read) = match files::read_tail_as(&job.path, state, format) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", job.path.display())),
    };
    // Of the lines read only (no layout: a tail may hold unknown records
    // alone in a file whose start the reader knows).
    let drift = crate::parsed::FileDrift {
        version: read.session.meta.agent_version.clone(),
        items: format.drift(&read),
    };
    let session = read.session;
    let tail_bytes = tail.bytes();
    let (tail_line, tail_offset) =
        files::restart(&session, tail_bytes, (tail.first_line, tail.first_offset))
            .unwrap_or((tail.first_line, tail.first_offset));
    let extracted = extract::extract(&session);
    Ok(Some(Outcome::Tail {
        extracted,
        from_line: tail.first_line,
        state: FileState {
            id: state.id,
            format: job.format.to_string(),
            stat: job.stat,
            indexed_to: tail.end,
            tail_offset,
            tail_line,
            head_hash: tail.hashes.0,
            before_hash: tail.hashes.1,
            error: None,
        },
        diagnostics: read.diagnostics.len() as u64,
        bytes: tail_bytes.len() as u64,
        drift,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(size: u64, grown_from: Option<u64>) -> Job {
        let state = grown_from.map(|offset| FileState {
            tail_offset: offset,
            ..FileState::default()
        });
        Job {
            path: "/s/x.jsonl".into(),
            format: "claude",
            stat: FileStat {
                size,
                ..FileStat::default()
            },
            state,
            try_tail: grown_from.is_some(),
            new_id: None,
        }
    }

    #[test]
    fn the_window_bounds_files_and_bytes_beyond_the_next_and_lets_two_through() {
        const MB: u64 = 1024 * 1024;
        // Two large files, then small ones.
        let mut jobs = vec![job(40 * MB, None), job(40 * MB, None)];
        jobs.extend((0..100).map(|_| job(MB / 2, None)));
        let w = Window::new(&jobs);
        // The next two are let through whatever their size.
        assert!(!w.too_far(0, 0) && !w.too_far(1, 0));
        // Beyond them, bytes count from the file after the next one.
        assert!(w.too_far(2, 0), "40 MB beyond the next");
        assert!(!w.too_far(2, 1));
        assert!(!w.too_far(2 + 31, 1), "32 small files: 16 MB");
        assert!(w.too_far(2 + 32, 1));
        // And never more than AHEAD_FILES beyond the next.
        let small: Vec<Job> = (0..200).map(|_| job(10, None)).collect();
        let w = Window::new(&small);
        assert!(!w.too_far(AHEAD_FILES, 0));
        assert!(w.too_far(AHEAD_FILES + 1, 0));
        // A file that grew by appends counts what it grew by.
        let grown: Vec<Job> = (0..50)
            .map(|_| job(100 * MB, Some(100 * MB - 1000)))
            .collect();
        let w = Window::new(&grown);
        assert!(!w.too_far(49, 0));
    }
}
