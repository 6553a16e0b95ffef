//! Catalog, full-text search and token statistics over every agent session.
//!
//! The index is one SQLite file (FTS5). It holds a catalog of every session
//! found on the machine (agent, format, path, id, project, title, first
//! prompt, times, message counts), one document per entry (message text,
//! thinking, tool names and inputs, tool output, with filter tags), and one
//! usage row per model response (tokens by model, for `agentlog stats`).
//! It is a cache: everything in it can be rebuilt from the session files,
//! and a damaged or outdated index file is replaced by a new one.
//!
//! Updates are incremental ([`files`] says how): unchanged files are skipped
//! by size, time and inode; append-only JSONL files are read from where the
//! last update stopped; rewritten and deleted files are read again or
//! removed. Files are parsed in parallel and written by one thread.
//!
//! ```no_run
//! use agentlog_formats::discover::{discover_all, DiscoverEnv};
//! use agentlog_index::{Index, SearchParams};
//!
//! let env = DiscoverEnv::with_home("/home/me");
//! let (mut index, _notice) = Index::open("/tmp/index.sqlite".as_ref())?;
//! index.update(&discover_all(&env, None), &mut |_| {})?;
//! let hits = index.search(&SearchParams::new("\"borrow checker\" lifetime*"))?;
//! for h in hits {
//!     println!("{} {} {}", h.session_id, h.entry_id, h.snippet);
//! }
//! # Ok::<(), agentlog_index::IndexError>(())
//! ```
#![forbid(unsafe_code)]

pub mod backend;
mod catalog;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
mod derived;
pub mod drift;
mod error;
pub mod extract;
pub mod files;
pub mod follow;
pub mod journal;
pub mod listing;
mod lockfile;
mod page;
mod parsed;
pub mod prices;
mod query;
mod schema;
mod search;
pub mod shape;
mod stats;
mod tags;
mod texts;
pub mod time;
pub mod title;
mod update;
mod writer;

pub use backend::Backend;
pub use catalog::{ListParams, SessionInfo, SessionOrder, SessionTokens};
pub use drift::DriftRow;
pub use error::IndexError;
pub use journal::Journal;
pub use listing::{Listed, ListingQuery};
pub use page::{Facet, PageParams, SessionPage, SortBy};
pub use query::{terms, to_fts, Term, Terms};
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
pub use search::{Hit, Mark, SearchParams, Segment};
pub use stats::{ExplainRow, GroupBy, PriceUsed, StatRow, Stats, StatsParams};
pub use update::{Plan, Progress, UpdateReport};

use error::SqlContext;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

/// An open index file.
pub struct Index {
    conn: Connection,
    path: PathBuf,
    /// The stored state of every file, as of `PRAGMA data_version` (the
    /// first field): updates plan from it without reading every row again.
    states: std::cell::RefCell<Option<StateCache>>,
    /// Whether planning an update takes the index's lock file (not for a
    /// file being built, which nobody else sees).
    lock_updates: bool,
}

type StateCache = (i64, files::States);

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index").field("path", &self.path).finish()
    }
}

impl Index {
    /// Opens the index at `path`, creating it (0600, in 0700 directories)
    /// when missing.
    ///
    /// Only a file that is positively an agentlog index (its SQLite
    /// application id [`APPLICATION_ID`] and marker table, or the tables of
    /// an index made before them) is ever replaced, and only when damaged
    /// or of another schema version (but the one before, which is brought
    /// up to date in place, under SQLite's write lock): it is renamed to
    /// `<file>.broken-<time>`, never deleted, and the returned notice says
    /// so (show it to the user; the next update fills the new index). Any
    /// other file is [`IndexError::NotAnIndex`]. An index another process
    /// holds locked is waited for (10 s), then [`IndexError::Busy`].
    pub fn open(path: &Path) -> Result<(Index, Option<String>), IndexError> {
        Index::open_waiting(path, schema::BUSY_TIMEOUT)
    }

    /// Like [`Index::open`], waiting at most `busy` for another process's
    /// lock.
    pub fn open_waiting(
        path: &Path,
        busy: std::time::Duration,
    ) -> Result<(Index, Option<String>), IndexError> {
        let (conn, notice) = match schema::open(path, busy)? {
            schema::Opened::Ready(c) => (c, None),
            schema::Opened::Reset(c, why) => (c, Some(why)),
        };
        Ok((
            Index {
                conn,
                path: path.to_path_buf(),
                states: std::cell::RefCell::new(None),
                lock_updates: true,
            },
            notice,
        ))
    }

    /// Runs SQLite's `quick_check` over the whole file and records when;
    /// returns the problems found (empty when the index is sound).
    pub fn check(&self) -> Result<Vec<String>, IndexError> {
        // No update runs meanwhile: FTS5's own check (part of quick_check)
        // reads its index in more than one step.
        let _lock = if self.lock_updates {
            Some(lockfile::IndexLock::acquire(&self.path)?)
        } else {
            None
        };
        // A connection of its own: nothing cached from before another
        // process's update.
        let fresh = Connection::open_with_flags(
            &self.path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .at(&self.path)?;
        fresh.busy_timeout(schema::BUSY_TIMEOUT).at(&self.path)?;
        texts::register(&fresh).at(&self.path)?;
        let problems = schema::quick_check(&fresh, &self.path)?;
        drop(fresh);
        if problems.is_empty() {
            let now = chrono::Utc::now().timestamp();
            schema::set_last_check(&self.conn, &self.path, now)?;
        }
        Ok(problems)
    }

    /// Runs [`Index::check`] when the last check is older than `every` (or
    /// never happened); a damaged index is [`IndexError::Damaged`], which
    /// says how to fix it. Returns whether a check ran.
    pub fn check_if_due(&self, every: std::time::Duration) -> Result<bool, IndexError> {
        let now = chrono::Utc::now().timestamp();
        let due = match schema::last_check(&self.conn, &self.path) {
            Ok(Some(t)) => {
                now.saturating_sub(t) >= i64::try_from(every.as_secs()).unwrap_or(i64::MAX)
            }
            Ok(None) => true,
            Err(IndexError::Damaged { .. }) => true,
            Err(e) => return Err(e),
        };
        if !due {
            return Ok(false);
        }
        let problems = self.check()?;
        if problems.is_empty() {
            Ok(true)
        } else {
            Err(IndexError::Damaged {
                path: self.path.clone(),
                problems: problems.join("; "),
            })
        }
    }

    /// Returns the index file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes everything from the index (the next update reads every file
    /// again).
    pub fn clear(&mut self) -> Result<(), IndexError> {
        self.states.replace(None);
        self.conn
            .execute_batch(
                "BEGIN IMMEDIATE; INSERT INTO fts(fts) VALUES('delete-all'); DELETE FROM texts;
                 INSERT INTO words(words) VALUES('delete-all');
                 DELETE FROM docs; DELETE FROM usage; DELETE FROM session_tokens;
                 DELETE FROM sessions; DELETE FROM files; DELETE FROM drift; DROP TABLE IF EXISTS shapes; COMMIT;",
            )
            .at(&self.path)
    }

    /// Builds a new index at `path` from `found`, in a private temporary
    /// file (`<file>.building-<pid>`) that replaces the old index only when
    /// complete; returns the new index. Holds the index lock meanwhile, so
    /// other processes wait. Refuses ([`IndexError::NotAnIndex`]) when the
    /// file at `path` is not an agentlog index.
    pub fn rebuild(
        path: &Path,
        found: &[agentlog_formats::discover::Found],
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(Index, UpdateReport), IndexError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            lockfile::ensure_private_dir(dir)?;
        }
        let report = {
            let _lock = lockfile::IndexLock::acquire(path)?;
            schema::replaceable(path)?;
            let tmp = schema::building_path(path);
            schema::remove_index_files(&tmp)?;
            let built = Index::build_at(&tmp, found, progress).and_then(|report| {
                std::fs::File::open(&tmp)
                    .and_then(|f| f.sync_all())
                    .map_err(|e| IndexError::io(&tmp, e))?;
                // The old index is ours (checked above): its WAL and
                // shared-memory files go with it.
                for suffix in ["-wal", "-shm", "-journal"] {
                    let mut p = path.as_os_str().to_owned();
                    p.push(suffix);
                    match std::fs::remove_file(&p) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(IndexError::io(PathBuf::from(p), e)),
                    }
                }
                std::fs::rename(&tmp, path).map_err(|e| IndexError::io(path, e))?;
                Ok(report)
            });
            schema::remove_index_files(&tmp)?;
            built?
        };
        let (index, _) = Index::open(path)?;
        Ok((index, report))
    }

    /// Creates a new index file at `tmp` and fills it from `found`.
    fn build_at(
        tmp: &Path,
        found: &[agentlog_formats::discover::Found],
        progress: &mut dyn FnMut(Progress),
    ) -> Result<UpdateReport, IndexError> {
        lockfile::create_private_file(tmp)?;
        let conn = Connection::open(tmp).at(tmp)?;
        schema::create_schema(&conn, tmp)?;
        schema::configure(&conn, tmp)?;
        let mut index = Index {
            conn,
            path: tmp.to_path_buf(),
            states: std::cell::RefCell::new(None),
            lock_updates: false,
        };
        // A file nobody reads yet: no journal, no syncs until the end.
        index
            .conn
            .execute_batch(
                "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536;",
            )
            .at(tmp)?;
        let report = index.update(found, progress)?;
        index
            .conn
            .execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
            .at(tmp)?;
        Ok(report)
    }

    /// Runs SQLite's `optimize` on the full-text index (merges its segments
    /// into one; worth it after a large build).
    pub fn optimize(&self) -> Result<(), IndexError> {
        self.conn
            .execute_batch("INSERT INTO fts(fts) VALUES('optimize'); PRAGMA optimize;")
            .at(&self.path)
    }
}

/// Registers on `conn` the SQL function an index's full-text table reads
/// its text through (see the `texts` module): what a connection of one's
/// own to an index file needs before it reads `fts`'s columns or snippets.
pub fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    texts::register(conn)
}

/// Returns the default index path: `$AGENTLOG_INDEX`, else
/// `$XDG_DATA_HOME/agentlog/index.sqlite`, else
/// `~/.local/share/agentlog/index.sqlite`.
pub fn default_path(vars: &dyn Fn(&str) -> Option<String>, home: &Path) -> PathBuf {
    if let Some(p) = vars("AGENTLOG_INDEX").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let data = vars("XDG_DATA_HOME")
        .filter(|p| !p.is_empty() && Path::new(p).is_absolute())
        .map_or_else(|| home.join(".local/share"), PathBuf::from);
    data.join("agentlog").join("index.sqlite")
}
