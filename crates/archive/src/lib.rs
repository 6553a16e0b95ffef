//! agentlog's archive: every state of every session file agentlog saw,
//! kept so that a session outlives the agent that deletes or rewrites it.
//!
//! # Design
//!
//! One SQLite database (`archive.sqlite`, in a 0700 folder, 0600 files)
//! holds three things:
//!
//! - **chunks**: the bytes of session files cut at content-defined
//!   boundaries (FastCDC, 16–64–256 KiB), each named by its BLAKE3 hash and
//!   stored once, compressed with zstd. Unchanged parts of a rewritten file
//!   (Gemini CLI's JSON after a compression, a Cline task rewritten) are the
//!   same chunks and cost nothing again.
//! - **sources**: each file, by the path its agent wrote it at, with its
//!   format and when agentlog noticed it was gone.
//! - **versions**: each state of a source that agentlog saw, as its list of
//!   chunks (**parts**). A file that only grew (an agent's JSON Lines
//!   transcript) keeps one version that grows with it: the chunks before
//!   the last one are kept, the rest is cut again from there, so an append
//!   costs its new bytes (an earlier state is a prefix of the later). A
//!   file that changed otherwise gets a new version; the old one stays.
//!
//! Why SQLite rather than pack files or a backup tool's repository: the
//! archive must never be half written, whatever kills agentlog, and several
//! agentlog processes (a hook, `index --watch`, a command) capture the same
//! home at once. SQLite's transactions give both (WAL, `synchronous=FULL`,
//! writers serialized by its lock), `secure_delete` makes a scrubbed
//! secret's pages zeros instead of free space, and it is already linked in
//! for the index. Chunks a crash left without a version are swept by
//! [`Archive::sweep`].
//!
//! A capture reads the file through one open descriptor (never through a
//! symbolic link, never a FIFO or device), and keeps the state only when
//! the file did not change while it was read; everything it stores goes in
//! in one transaction. [`Archive::verify`] decompresses every chunk and
//! checks its hash; reading a version checks each chunk it uses.
#![forbid(unsafe_code)]

mod capture;
mod database;
mod error;
mod kept;
mod read;
mod schema;

pub use capture::{CaptureReport, Captured, FileFailure};
pub use database::database_stat;
pub use error::ArchiveError;
pub use kept::attach;
pub use read::{ArchiveStats, VerifyReport};

use rusqlite::{Connection, OptionalExtension};
use std::path::{Path, PathBuf};

/// The smallest chunk, in bytes.
pub const MIN_CHUNK: u32 = 16 * 1024;
/// The average chunk the cut points aim at.
pub const AVG_CHUNK: u32 = 64 * 1024;
/// The largest chunk.
pub const MAX_CHUNK: u32 = 256 * 1024;
/// The zstd level chunks are compressed at.
pub const LEVEL: i32 = 3;

/// The name of the database inside the archive folder.
pub const DB_NAME: &str = "archive.sqlite";

/// The state of a file as `stat` tells it: what decides whether it changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
pub struct FileStat {
    /// Bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Inode number.
    pub inode: u64,
}

impl FileStat {
    /// The stat of `meta`.
    pub fn of(meta: &std::fs::Metadata) -> FileStat {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            FileStat {
                size: meta.len(),
                mtime_ns: meta.mtime().saturating_mul(1_000_000_000) + meta.mtime_nsec(),
                inode: meta.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            FileStat {
                size: meta.len(),
                mtime_ns: meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos() as i64),
                inode: 0,
            }
        }
    }
}

/// One kept state of a file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Version {
    /// The version's id in the archive.
    pub id: i64,
    /// Its number among its file's versions, from 1.
    pub number: u32,
    /// When agentlog last captured it (ms since the epoch).
    pub seen_ms: i64,
    /// The file's stat then.
    pub stat: FileStat,
    /// BLAKE3 of its chunks' hashes in order (hex): equal contents, equal
    /// digests.
    pub digest: String,
    /// How many times it was captured grown (appended to) in place.
    pub appends: u32,
    /// Its chunks.
    pub chunks: u32,
    /// True for a state the file grew from: the first `stat.size` bytes of
    /// the state after it (its digest is that state's).
    pub grew_into_next: bool,
}

/// One file the archive keeps.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Source {
    /// The source's id in the archive.
    pub id: i64,
    /// Where its agent wrote it.
    pub path: PathBuf,
    /// The format that reads it (a registry name).
    pub format: String,
    /// When agentlog first captured it (ms since the epoch).
    pub first_ms: i64,
    /// When agentlog noticed it was gone from disk (ms since the epoch).
    pub gone_ms: Option<i64>,
    /// How many versions it has.
    pub versions: u32,
    /// The latest version's stat.
    pub latest: FileStat,
}

/// The archive: a folder holding the database.
#[derive(Debug)]
pub struct Archive {
    conn: Connection,
    dir: PathBuf,
    db: PathBuf,
}

impl Archive {
    /// Opens the archive in `dir`, creating it (0700 folder, 0600 file)
    /// when missing.
    pub fn open(dir: &Path) -> Result<Archive, ArchiveError> {
        agentlog_store::snapshot::ensure_dir(dir).map_err(|e| ArchiveError::Store {
            path: dir.to_path_buf(),
            source: Box::new(e),
        })?;
        let db = dir.join(DB_NAME);
        let conn = schema::open(&db, false)?;
        database::remove_stale_copies(dir);
        Ok(Archive {
            conn,
            dir: dir.to_path_buf(),
            db,
        })
    }

    /// Opens the archive in `dir` for reading only; `None` when there is
    /// none.
    pub fn open_existing(dir: &Path) -> Result<Option<Archive>, ArchiveError> {
        let db = dir.join(DB_NAME);
        if !db.is_file() {
            return Ok(None);
        }
        let conn = schema::open(&db, true)?;
        Ok(Some(Archive {
            conn,
            dir: dir.to_path_buf(),
            db,
        }))
    }

    /// The archive's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The database file.
    pub fn db_path(&self) -> &Path {
        &self.db
    }

    fn sql<T>(&self, r: rusqlite::Result<T>) -> Result<T, ArchiveError> {
        r.map_err(|e| ArchiveError::sql(&self.db, e))
    }

    /// The source kept for `path`, if any.
    pub fn source(&self, path: &Path) -> Result<Option<Source>, ArchiveError> {
        let r = self
            .conn
            .prepare_cached(&format!("{SOURCE_SELECT} WHERE s.path = ?1"))
            .and_then(|mut st| st.query_row([path_text(path)], source_row).optional());
        self.sql(r)
    }

    /// Every source, by path.
    pub fn sources(&self) -> Result<Vec<Source>, ArchiveError> {
        let r = self
            .conn
            .prepare_cached(&format!("{SOURCE_SELECT} ORDER BY s.path"))
            .and_then(|mut st| st.query_map([], source_row)?.collect());
        self.sql(r)
    }

    /// The path and format of every source (lighter than
    /// [`Archive::sources`]).
    pub fn paths(&self) -> Result<Vec<(PathBuf, String)>, ArchiveError> {
        let r = self
            .conn
            .prepare_cached("SELECT path, format FROM sources")
            .and_then(|mut st| {
                st.query_map([], |r| {
                    Ok((
                        PathBuf::from(r.get::<_, String>(0)?),
                        r.get::<_, String>(1)?,
                    ))
                })?
                .collect()
            });
        self.sql(r)
    }

    /// The sources agentlog noticed are gone from disk.
    pub fn gone(&self) -> Result<Vec<Source>, ArchiveError> {
        let r = self
            .conn
            .prepare_cached(&format!(
                "{SOURCE_SELECT} WHERE s.gone_ns IS NOT NULL ORDER BY s.path"
            ))
            .and_then(|mut st| st.query_map([], source_row)?.collect());
        self.sql(r)
    }

    /// Every state kept of `path`, oldest first: each version, preceded by
    /// the states it grew from.
    pub fn versions(&self, path: &Path) -> Result<Vec<Version>, ArchiveError> {
        let r = self
            .conn
            .prepare_cached(
                "SELECT v.id, v.seen_ns, v.size, v.mtime_ns, v.inode, v.digest, v.appends,
                        (SELECT count(*) FROM parts p WHERE p.version = v.id), 0
                 FROM versions v JOIN sources s ON s.id = v.source WHERE s.path = ?1
                 UNION ALL
                 SELECT v.id, g.seen_ns, g.size, g.mtime_ns, g.inode, v.digest, 0, 0, 1
                 FROM grown g JOIN versions v ON v.id = g.version
                 JOIN sources s ON s.id = v.source WHERE s.path = ?1
                 ORDER BY 1, 9 DESC, 3",
            )
            .and_then(|mut st| {
                let rows = st.query_map([path_text(path)], |r| {
                    Ok(Version {
                        id: r.get(0)?,
                        number: 0,
                        seen_ms: r.get::<_, i64>(1)? / 1_000_000,
                        stat: FileStat {
                            size: r.get::<_, i64>(2)? as u64,
                            mtime_ns: r.get(3)?,
                            inode: r.get::<_, i64>(4)? as u64,
                        },
                        digest: hex::encode(r.get::<_, Vec<u8>>(5)?),
                        appends: r.get(6)?,
                        chunks: r.get(7)?,
                        grew_into_next: r.get::<_, i64>(8)? == 1,
                    })
                })?;
                rows.collect::<rusqlite::Result<Vec<Version>>>()
            });
        let mut v = self.sql(r)?;
        for (i, x) in v.iter_mut().enumerate() {
            x.number = i as u32 + 1;
        }
        Ok(v)
    }

    /// Records which sources are gone: each of `missing` (paths not on disk
    /// any more) gets the time it was first noticed, and each of `present`
    /// loses it. Returns how many sources changed.
    pub fn note_presence(
        &mut self,
        missing: &[PathBuf],
        present: &[PathBuf],
    ) -> Result<usize, ArchiveError> {
        if missing.is_empty() && present.is_empty() {
            return Ok(0);
        }
        let now = now_ns();
        let db = self.db.clone();
        let sql = |e| ArchiveError::sql(&db, e);
        let tx = schema::immediate(&mut self.conn).map_err(sql)?;
        let mut n = 0;
        {
            let mut gone = tx
                .prepare_cached(
                    "UPDATE sources SET gone_ns = ?2 WHERE path = ?1 AND gone_ns IS NULL",
                )
                .map_err(sql)?;
            for p in missing {
                n += gone
                    .execute(rusqlite::params![path_text(p), now])
                    .map_err(sql)?;
            }
            let mut back = tx
                .prepare_cached(
                    "UPDATE sources SET gone_ns = NULL WHERE path = ?1 AND gone_ns IS NOT NULL",
                )
                .map_err(sql)?;
            for p in present {
                n += back.execute([path_text(p)]).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)?;
        Ok(n)
    }

    /// Removes `path` from the archive for good: its versions, and the
    /// chunks no other version uses (their pages overwritten with zeros).
    /// Returns whether it was kept.
    pub fn forget(&mut self, path: &Path) -> Result<bool, ArchiveError> {
        let db = self.db.clone();
        let sql = |e| ArchiveError::sql(&db, e);
        let tx = schema::immediate(&mut self.conn).map_err(sql)?;
        let id: Option<i64> = tx
            .query_row(
                "SELECT id FROM sources WHERE path = ?1",
                [path_text(path)],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
        let Some(id) = id else {
            return Ok(false);
        };
        schema::drop_source(&tx, id).map_err(sql)?;
        tx.commit().map_err(sql)?;
        kept::remove_copies(&self.dir, path);
        self.checkpoint()?;
        Ok(true)
    }

    /// Replaces every version of `path` by what `rewrite` makes of its
    /// bytes (`None`: unchanged), as one transaction; the chunks no version
    /// uses any more are removed and their pages overwritten. Returns how
    /// many versions changed. What `scrub` does to the archive.
    pub fn rewrite_versions(
        &mut self,
        path: &Path,
        rewrite: &mut dyn FnMut(&[u8]) -> Option<Vec<u8>>,
    ) -> Result<usize, ArchiveError> {
        let versions = self.versions(path)?;
        let mut changed = Vec::new();
        for v in &versions {
            let bytes = self.read_version(v.id)?;
            if let Some(new) = rewrite(&bytes) {
                if new != bytes {
                    changed.push((v.id, capture::cut(&new)));
                }
            }
        }
        if changed.is_empty() {
            return Ok(0);
        }
        let db = self.db.clone();
        let sql = |e| ArchiveError::sql(&db, e);
        let tx = schema::immediate(&mut self.conn).map_err(sql)?;
        for (id, cut) in &changed {
            // The states it grew through held what was scrubbed, and are
            // not prefixes of the scrubbed bytes: they go.
            tx.execute("DELETE FROM grown WHERE version = ?1", [id])
                .map_err(sql)?;
            let old = schema::chunk_ids(&tx, *id).map_err(sql)?;
            tx.execute("DELETE FROM parts WHERE version = ?1", [id])
                .map_err(sql)?;
            schema::write_parts(&tx, *id, 0, cut).map_err(sql)?;
            tx.execute(
                "UPDATE versions SET size = ?2, digest = ?3 WHERE id = ?1",
                rusqlite::params![id, cut.size as i64, cut.digest().as_slice()],
            )
            .map_err(sql)?;
            schema::drop_unused(&tx, &old).map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        kept::remove_copies(&self.dir, path);
        self.checkpoint()?;
        Ok(changed.len())
    }

    /// Moves what the write-ahead log holds into the database and empties
    /// it (after a forget or scrub, so that removed bytes do not live on
    /// in the log).
    fn checkpoint(&self) -> Result<(), ArchiveError> {
        self.sql(
            self.conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())),
        )
    }

    /// Drops what was last seen before `before_ms` (ms since the epoch):
    /// the states files grew through and the versions that are not their
    /// file's latest, and every state of a file gone from disk since before
    /// then. A file's latest state on disk is always kept. With `dry_run`,
    /// only counts. Returns (states dropped, files forgotten).
    pub fn prune(&mut self, before_ms: i64, dry_run: bool) -> Result<(usize, usize), ArchiveError> {
        let cutoff = before_ms.saturating_mul(1_000_000);
        let db = self.db.clone();
        let sql = |e| ArchiveError::sql(&db, e);
        let tx = schema::immediate(&mut self.conn).map_err(sql)?;
        let mut states = tx
            .execute("DELETE FROM grown WHERE seen_ns < ?1", [cutoff])
            .map_err(sql)?;
        let gone = schema::ids(
            &tx,
            "SELECT id FROM sources WHERE gone_ns IS NOT NULL AND gone_ns < ?1",
            cutoff,
        )
        .map_err(sql)?;
        let old = schema::ids(
            &tx,
            "SELECT v.id FROM versions v WHERE v.seen_ns < ?1
             AND v.id < (SELECT max(id) FROM versions w WHERE w.source = v.source)",
            cutoff,
        )
        .map_err(sql)?;
        for v in &old {
            schema::drop_version(&tx, *v).map_err(sql)?;
        }
        states += old.len();
        for s in &gone {
            schema::drop_source(&tx, *s).map_err(sql)?;
        }
        if dry_run {
            tx.rollback().map_err(sql)?;
        } else {
            tx.commit().map_err(sql)?;
            self.checkpoint()?;
        }
        Ok((states, gone.len()))
    }

    /// Removes chunks no version uses (left by a capture that was killed
    /// before it committed). Returns how many.
    pub fn sweep(&mut self) -> Result<usize, ArchiveError> {
        let n = self.sql(self.conn.execute(
            "DELETE FROM chunks WHERE NOT EXISTS (SELECT 1 FROM parts p WHERE p.chunk = chunks.id)",
            [],
        ))?;
        Ok(n)
    }
}

const SOURCE_SELECT: &str = "SELECT s.id, s.path, s.format, s.first_ns, s.gone_ns,
        (SELECT count(*) FROM versions v WHERE v.source = s.id),
        v.size, v.mtime_ns, v.inode
     FROM sources s
     JOIN versions v ON v.id = (SELECT max(id) FROM versions WHERE source = s.id)";

fn source_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Source> {
    Ok(Source {
        id: r.get(0)?,
        path: PathBuf::from(r.get::<_, String>(1)?),
        format: r.get(2)?,
        first_ms: r.get::<_, i64>(3)? / 1_000_000,
        gone_ms: r.get::<_, Option<i64>>(4)?.map(|n| n / 1_000_000),
        versions: r.get(5)?,
        latest: FileStat {
            size: r.get::<_, i64>(6)? as u64,
            mtime_ns: r.get(7)?,
            inode: r.get::<_, i64>(8)? as u64,
        },
    })
}

/// The text a path is stored under.
pub(crate) fn path_text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Nanoseconds since the epoch, now.
pub(crate) fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// The archive folder beside an index file: `index.sqlite` keeps its
/// archive in `archive/` next to it; any other name `NAME` in
/// `NAME.archive/`.
pub fn dir_for_index(index: &Path) -> PathBuf {
    let parent = index.parent().unwrap_or(Path::new("."));
    match index.file_name().and_then(|n| n.to_str()) {
        Some("index.sqlite") | None => parent.join("archive"),
        Some(name) => parent.join(format!("{name}.archive")),
    }
}
