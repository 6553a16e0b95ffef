//! The archive's tables, and the statements capture, scrub and forget
//! share.

use crate::capture::{Chunk, Cut};
use crate::ArchiveError;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use std::path::Path;

/// How long a writer waits for another process's transaction.
pub(crate) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS chunks(
  id INTEGER PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE,
  size INTEGER NOT NULL,
  z BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS sources(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  format TEXT NOT NULL,
  first_ns INTEGER NOT NULL,
  gone_ns INTEGER
);
CREATE TABLE IF NOT EXISTS versions(
  id INTEGER PRIMARY KEY,
  source INTEGER NOT NULL REFERENCES sources(id),
  seen_ns INTEGER NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  inode INTEGER NOT NULL,
  digest BLOB NOT NULL,
  appends INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sources_gone ON sources(gone_ns) WHERE gone_ns IS NOT NULL;
CREATE INDEX IF NOT EXISTS versions_source ON versions(source, id);
CREATE TABLE IF NOT EXISTS parts(
  version INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  chunk INTEGER NOT NULL REFERENCES chunks(id),
  offset INTEGER NOT NULL,
  size INTEGER NOT NULL,
  PRIMARY KEY(version, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS parts_chunk ON parts(chunk);
CREATE TABLE IF NOT EXISTS grown(
  version INTEGER NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  inode INTEGER NOT NULL,
  seen_ns INTEGER NOT NULL,
  PRIMARY KEY(version, size)
) WITHOUT ROWID;
";

/// The archive's layout version, in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

/// The archive's `application_id`: a database of another program is
/// refused rather than written into.
const APPLICATION_ID: i64 = 0x616c_6172; // "alar"

/// Opens (and, unless `read_only`, creates) the database at `db`.
pub(crate) fn open(db: &Path, read_only: bool) -> Result<Connection, ArchiveError> {
    let sql = |e| ArchiveError::sql(db, e);
    if !read_only && !db.exists() {
        // Created 0600 before SQLite opens it: its journal files take the
        // database's mode.
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        match o.open(db) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(ArchiveError::io(db, "create the archive", e)),
        }
    }
    let flags = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let conn = Connection::open_with_flags(db, flags).map_err(sql)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
    if read_only {
        return Ok(conn);
    }
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA secure_delete=ON;
         PRAGMA foreign_keys=ON;",
    )
    .map_err(sql)?;
    let app: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(sql)?;
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(sql)?;
    if app != APPLICATION_ID && (app != 0 || tables != 0) {
        return Err(ArchiveError::Damaged {
            path: db.to_path_buf(),
            what:
                "this is not an agentlog archive (another program's database); nothing was written"
                    .into(),
        });
    }
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sql)?;
    if version > SCHEMA_VERSION {
        return Err(ArchiveError::Damaged {
            path: db.to_path_buf(),
            what: format!(
                "made by a newer agentlog (archive version {version}, this one knows {SCHEMA_VERSION}); nothing was written"
            ),
        });
    }
    if app == 0 || version < SCHEMA_VERSION {
        // Every table is created if missing: an archive of an earlier
        // version gains the tables it lacks, and keeps what it holds.
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; {SCHEMA} PRAGMA application_id = {APPLICATION_ID};
             PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        ))
        .map_err(sql)?;
    }
    Ok(conn)
}

/// Starts a write transaction that holds the write lock from its start (so
/// that what it read stays true until it commits).
pub(crate) fn immediate(conn: &mut Connection) -> rusqlite::Result<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
}

/// The ids a query of one parameter selects.
pub(crate) fn ids(tx: &Connection, sql: &str, param: i64) -> rusqlite::Result<Vec<i64>> {
    let mut st = tx.prepare_cached(sql)?;
    let rows = st.query_map([param], |r| r.get(0))?;
    rows.collect()
}

/// Removes the source `id` and every version of it.
pub(crate) fn drop_source(tx: &Connection, id: i64) -> rusqlite::Result<()> {
    for v in ids(tx, "SELECT id FROM versions WHERE source = ?1", id)? {
        drop_version(tx, v)?;
    }
    tx.execute("DELETE FROM sources WHERE id = ?1", [id])?;
    Ok(())
}

/// The chunk ids `version` uses.
pub(crate) fn chunk_ids(tx: &Connection, version: i64) -> rusqlite::Result<Vec<i64>> {
    ids(tx, "SELECT chunk FROM parts WHERE version = ?1", version)
}

/// Removes `version` and the chunks only it used.
pub(crate) fn drop_version(tx: &Connection, version: i64) -> rusqlite::Result<()> {
    let ids = chunk_ids(tx, version)?;
    tx.execute("DELETE FROM parts WHERE version = ?1", [version])?;
    tx.execute("DELETE FROM grown WHERE version = ?1", [version])?;
    tx.execute("DELETE FROM versions WHERE id = ?1", [version])?;
    drop_unused(tx, &ids)
}

/// Removes those of `ids` that no part uses any more.
pub(crate) fn drop_unused(tx: &Connection, ids: &[i64]) -> rusqlite::Result<()> {
    let mut st = tx.prepare_cached(
        "DELETE FROM chunks WHERE id = ?1
         AND NOT EXISTS (SELECT 1 FROM parts WHERE chunk = ?1)",
    )?;
    for id in ids {
        st.execute([id])?;
    }
    Ok(())
}

/// Stores `c`'s bytes, when it carries them and no chunk of its hash is
/// stored yet.
pub(crate) fn insert_chunk(tx: &Connection, c: &Chunk) -> rusqlite::Result<()> {
    if let Some(z) = &c.z {
        tx.prepare_cached(
            "INSERT INTO chunks(hash, size, z) VALUES (?1, ?2, ?3) ON CONFLICT(hash) DO NOTHING",
        )?
        .execute(rusqlite::params![c.hash.as_slice(), c.size as i64, z])?;
    }
    Ok(())
}

/// Stores the chunks of `cut` not stored yet and the parts of `version`
/// from number `first_seq` on.
pub(crate) fn write_parts(
    tx: &Connection,
    version: i64,
    first_seq: i64,
    cut: &Cut,
) -> rusqlite::Result<()> {
    let mut find = tx.prepare_cached("SELECT id FROM chunks WHERE hash = ?1")?;
    let mut part = tx.prepare_cached(
        "INSERT INTO parts(version, seq, chunk, offset, size) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (i, c) in cut.chunks.iter().enumerate() {
        insert_chunk(tx, c)?;
        let id: i64 = find.query_row([c.hash.as_slice()], |r| r.get(0))?;
        part.execute(rusqlite::params![
            version,
            first_seq + i as i64,
            id,
            c.offset as i64,
            c.size as i64
        ])?;
    }
    Ok(())
}
