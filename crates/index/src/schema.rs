//! The SQLite schema, its version, and opening an index file safely.

use crate::error::SqlContext;
use crate::IndexError;
use rusqlite::Connection;
use std::path::Path;

/// The schema version, kept in `PRAGMA user_version`. An index with another
/// version is rebuilt from the session files.
pub const SCHEMA_VERSION: i64 = 5;

/// The tables. `files` holds what was read of each session file (for
/// incremental updates); `sessions` is the catalog (same id as `files`);
/// `docs` has one row per entry; `fts` is the full-text index (rowid =
/// `docs.rowid`); `usage` has one row per model response.
///
/// `fts` keeps prefix indexes for prefixes of 2 to 4 characters: such a
/// prefix is read like a word, newest entries first, where without one
/// FTS5 gathers the entries of every word the prefix starts before
/// returning any (`pars*` took 20 ms on a 1 GB corpus, 0.4 ms with the
/// index). Longer prefixes start fewer words and are gathered (5 to 10 ms
/// there). On that corpus the prefix indexes take the build from 17 to
/// 28 s and the file from 0.92 to 1.35 GB; indexes for 5 and 6 characters
/// as well would make it 35 s and 1.53 GB.
const SCHEMA: &str = "
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  format TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  inode INTEGER NOT NULL,
  indexed_to INTEGER NOT NULL,
  tail_offset INTEGER NOT NULL,
  tail_line INTEGER NOT NULL,
  head_hash INTEGER NOT NULL,
  before_hash INTEGER NOT NULL,
  error TEXT,
  diagnostics INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE sessions(
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  agent TEXT NOT NULL,
  format TEXT NOT NULL,
  path TEXT NOT NULL,
  project TEXT,
  title TEXT,
  first_prompt TEXT,
  created_ms INTEGER,
  updated_ms INTEGER,
  entries INTEGER NOT NULL DEFAULT 0,
  messages INTEGER NOT NULL DEFAULT 0,
  user_messages INTEGER NOT NULL DEFAULT 0,
  assistant_messages INTEGER NOT NULL DEFAULT 0,
  tool_calls INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_session_id ON sessions(session_id);
CREATE INDEX sessions_updated ON sessions(updated_ms);
CREATE TABLE docs(
  id INTEGER PRIMARY KEY,
  session INTEGER NOT NULL,
  entry_id TEXT NOT NULL,
  line INTEGER,
  ts_ms INTEGER,
  role TEXT,
  kind TEXT NOT NULL,
  is_message INTEGER NOT NULL, -- 0 not a message, 1 other, 2 prompt, 3 reply
  tool_calls INTEGER NOT NULL
);
CREATE INDEX docs_session ON docs(session, line);
CREATE TABLE usage(
  id INTEGER PRIMARY KEY,
  session INTEGER NOT NULL,
  entry_id TEXT NOT NULL,
  line INTEGER,
  ts_ms INTEGER,
  model TEXT,
  response_id TEXT,
  input INTEGER NOT NULL,
  output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL,
  cache_write INTEGER NOT NULL,
  reasoning INTEGER NOT NULL,
  cost_usd REAL
);
CREATE INDEX usage_session ON usage(session, line);
CREATE INDEX usage_response ON usage(response_id);
CREATE VIRTUAL TABLE fts USING fts5(
  text, thinking, tools, output, tags,
  tokenize = 'unicode61 remove_diacritics 2',
  prefix = '2 3 4'
);
INSERT INTO fts(fts, rank) VALUES('pgsz', 4000);
INSERT INTO fts(fts, rank) VALUES('hashsize', 67108864);
";

/// How an index file was opened.
pub(crate) enum Opened {
    /// The file holds a current index (possibly empty).
    Ready(Connection),
    /// The file was unusable and was replaced by an empty index; the text
    /// says why.
    Reset(Connection, String),
}

/// Applies the pragmas every connection uses.
pub(crate) fn configure(conn: &Connection, path: &Path) -> Result<(), IndexError> {
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .at(path)?;
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY;
         PRAGMA cache_size=-32768; PRAGMA foreign_keys=OFF;",
    )
    .at(path)
}

/// Opens (creating if needed) the index at `path`. A file that is not a
/// SQLite database, is damaged, or has another schema version is removed
/// and replaced by an empty index; the reason is returned for the caller to
/// show.
pub(crate) fn open(path: &Path) -> Result<Opened, IndexError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| IndexError::io(dir, e))?;
    }
    match try_open(path) {
        Ok(conn) => Ok(Opened::Ready(conn)),
        Err(why) => {
            remove_index_files(path)?;
            let conn = try_open(path).map_err(|why2| IndexError::Backend {
                backend: "sqlite",
                message: format!(
                    "{}: could not create a new index after removing a bad one ({why}): {why2}",
                    path.display()
                ),
            })?;
            Ok(Opened::Reset(
                conn,
                format!(
                    "index {} was unusable ({why}); it was rebuilt from the session files",
                    path.display()
                ),
            ))
        }
    }
}

/// Opens `path` and checks (or creates) the schema; the error is a reason to
/// start over.
fn try_open(path: &Path) -> Result<Connection, String> {
    let conn = Connection::open(path).map_err(|e| e.to_string())?;
    configure(&conn, path).map_err(|e| e.to_string())?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    if tables == 0 {
        create(&conn).map_err(|e| e.to_string())?;
        return Ok(conn);
    }
    if version != SCHEMA_VERSION {
        return Err(format!(
            "schema version {version}, this agentlog uses {SCHEMA_VERSION}"
        ));
    }
    // A cheap probe of every table: a damaged file usually fails here.
    for table in ["files", "sessions", "docs", "usage", "fts"] {
        conn.query_row(
            &format!("SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT 1)"),
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(|e| format!("table {table}: {e}"))?;
    }
    Ok(conn)
}

fn create(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "BEGIN; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
    ))
}

/// Removes the index file and its WAL and shared-memory files.
pub(crate) fn remove_index_files(path: &Path) -> Result<(), IndexError> {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let p = std::path::PathBuf::from(p);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(IndexError::io(p, e)),
        }
    }
    Ok(())
}
