//! Capturing sessions kept inside an agent's SQLite database (OpenCode's,
//! Kilo's and Crush's stores): the file on disk is not a state of its own
//! (most of a live session sits in the write-ahead log beside it, and the
//! agent writes pages anywhere), so the archive keeps a consistent copy
//! made with SQLite's online backup, which reads the database as one
//! transaction, log included. A copy made twice of an unchanged database
//! is the same bytes, so its chunks are stored once.

use crate::capture::{base, prepare, store, Chunk, From, StoreFailure};
use crate::{schema, Archive, ArchiveError, Captured, FileStat};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a capture waits for an agent that holds its database locked.
const LOCK_WAIT: Duration = Duration::from_secs(5);

/// The files of the database at `path` whose changes change it: the file
/// and its write-ahead log.
fn files_of(path: &Path) -> [PathBuf; 2] {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    [path.to_path_buf(), PathBuf::from(wal)]
}

/// What decides whether the database at `path` changed: the newest time
/// of the file and its log, and the file's inode (the size is the copy's).
/// Refuses a link or anything but a regular file.
pub fn database_stat(path: &Path) -> Result<FileStat, ArchiveError> {
    let refused = |why: &str| ArchiveError::Refused {
        path: path.to_path_buf(),
        why: why.to_string(),
    };
    let meta = std::fs::symlink_metadata(path)
        .map_err(|e| ArchiveError::io(path, "look at the database", e))?;
    if meta.file_type().is_symlink() {
        return Err(refused(
            "is a symbolic link; the archive keeps only regular files",
        ));
    }
    if !meta.is_file() {
        return Err(refused("is not a regular file"));
    }
    let mut st = FileStat::of(&meta);
    let [_, wal] = files_of(path);
    if let Ok(m) = std::fs::symlink_metadata(&wal) {
        if m.is_file() {
            st.mtime_ns = st.mtime_ns.max(FileStat::of(&m).mtime_ns);
        }
    }
    Ok(st)
}

/// Copies the database at `path` into the new file `to` with SQLite's
/// online backup (one consistent state, the log's pages included), waiting
/// up to [`LOCK_WAIT`] for a writer that holds it locked.
fn snapshot(path: &Path, to: &Path) -> Result<(), ArchiveError> {
    let sql = |e: rusqlite::Error| ArchiveError::Refused {
        path: path.to_path_buf(),
        why: format!("could not copy the database: {e}"),
    };
    let src = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql)?;
    src.busy_timeout(Duration::from_millis(200)).map_err(sql)?;
    let mut dst = Connection::open(to).map_err(|e| ArchiveError::sql(to, e))?;
    let backup = rusqlite::backup::Backup::new(&src, &mut dst).map_err(sql)?;
    let deadline = Instant::now() + LOCK_WAIT;
    let done = loop {
        use rusqlite::backup::StepResult;
        match backup.step(-1).map_err(sql)? {
            StepResult::Done => break Ok(()),
            StepResult::More => {}
            _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                break Err(ArchiveError::Refused {
                    path: path.to_path_buf(),
                    why: format!(
                        "is locked by its agent (waited {} s); the archive keeps its last state and the next capture tries again",
                        LOCK_WAIT.as_secs()
                    ),
                })
            }
        }
    };
    drop(backup);
    drop(dst);
    done
}

/// Removes the files SQLite may leave beside a database `copy`.
fn remove_beside(copy: &Path) {
    for end in ["-wal", "-shm", "-journal"] {
        let mut p = copy.as_os_str().to_owned();
        p.push(end);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
}

/// Removes copies an interrupted capture left in the archive folder `dir`
/// (older than an hour: a capture running now may own a newer one).
pub(crate) fn remove_stale_copies(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let stale = e
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(3600));
        if name.to_string_lossy().starts_with(".copy-") && stale {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl Archive {
    /// Captures the SQLite database at `path` (an agent's store of many
    /// sessions, of `format`) as a consistent copy, when it changed since
    /// the state the archive holds. Stored and durable when this returns.
    pub fn capture_database(
        &mut self,
        path: &Path,
        format: &str,
    ) -> Result<Captured, ArchiveError> {
        let db = self.db.clone();
        let stat = database_stat(path)?;
        let latest = base(&self.conn, path).map_err(|e| ArchiveError::sql(&db, e))?;
        if latest
            .as_ref()
            .is_some_and(|b| (b.stat.mtime_ns, b.stat.inode) == (stat.mtime_ns, stat.inode))
        {
            return Ok(Captured::Unchanged);
        }
        let copy = tempfile::Builder::new()
            .prefix(".copy-")
            .suffix(".db")
            .tempfile_in(&self.dir)
            .map_err(|e| ArchiveError::io(&self.dir, "make a file for a database's copy", e))?;
        let copied = snapshot(path, copy.path());
        remove_beside(copy.path());
        copied?;
        for _ in 0..3 {
            let latest = base(&self.conn, path).map_err(|e| ArchiveError::sql(&db, e))?;
            let prepared = {
                let conn = &self.conn;
                let mut ahead = |chunks: Vec<Chunk>| {
                    crate::capture::store_ahead(conn, &chunks)
                        .map_err(|e| ArchiveError::sql(&db, e))
                };
                prepare(
                    path,
                    format,
                    latest.as_ref(),
                    From::Copy(copy.path(), stat),
                    &mut ahead,
                )?
            };
            let Some(p) = prepared else {
                return Ok(Captured::Unchanged);
            };
            let tx = schema::immediate(&mut self.conn).map_err(|e| ArchiveError::sql(&db, e))?;
            match store(&tx, &db, &p) {
                Ok(c) => {
                    tx.commit().map_err(|e| ArchiveError::sql(&db, e))?;
                    return Ok(c);
                }
                Err(StoreFailure::Moved) => continue,
                Err(StoreFailure::Err(e)) => return Err(e),
            }
        }
        Err(ArchiveError::Changed {
            path: path.to_path_buf(),
            tries: 3,
        })
    }
}
