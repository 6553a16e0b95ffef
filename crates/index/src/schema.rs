//! The SQLite schema, its version, and opening an index file safely.

use crate::error::SqlContext;
use crate::IndexError;
use rusqlite::Connection;
use std::path::Path;

/// The schema version, kept in `PRAGMA user_version`. An index of version
/// 9 is brought to this one in place; one of any other version is rebuilt
/// from the session files.
pub const SCHEMA_VERSION: i64 = 10;

/// The one older schema version an index is brought to this one from in
/// place ([`migrate`]) instead of being rebuilt.
const MIGRATES_FROM: i64 = 9;

/// The tables. `files` holds what was read of each session file (for
/// incremental updates); `sessions` is the catalog (same id as `files`);
/// `docs` has one row per entry; `fts` is the full-text index (rowid =
/// `docs.rowid`) over the entries' text, which `texts` keeps compressed
/// (the `texts` module says how); `usage` has one row per model response,
/// and `session_tokens` their sums by session and model (what a listing
/// shows: summing the responses of 12,000 sessions took 0.4 s).
/// `sessions.kind` says what a session is ([`agentlog_model::SessionKind`]:
/// NULL for a conversation, the common case, so that it costs nothing).
/// `drift` holds, per file, what its reader did not know (record types,
/// fields, a layout: `agentlog_formats::drift`), computed while the update
/// reads the file; `drift_said` the (format, version, kind, name) the
/// drift alarm has told the user about, so that it says each once.
///
/// Two columns of the catalog are made from others by the writer, in the
/// transaction that writes those ([`crate::derived`]), for `ls`, which
/// reads them from one index ([`crate::listing`]): `listed`, the title a
/// list shows
/// ([`crate::title::listed_title`] of the title and the first prompt), and
/// `tokens`, the session's `session_tokens` summed. Reading the starts of
/// both texts and every session's sums instead was a third of listing
/// 122,000 sessions. (Not triggers: a trigger runs each write in a
/// statement transaction, which makes FTS5 write a segment per session.)
///
/// `fts` keeps no prefix indexes: each (2, 3 and 4 characters were kept
/// before) made the file larger by about 0.14x the corpus and the build
/// slower by a sixth. A one-word prefix (`pars*`) is searched as the words
/// it starts, listed by `words_vocab` (the `texts` module says how `words`
/// is kept); other prefixes make FTS5 gather the entries of every word the
/// prefix starts, which is exact and slower.
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
  tool_calls INTEGER NOT NULL DEFAULT 0,
  listed TEXT,
  tokens INTEGER NOT NULL DEFAULT 0,
  kind TEXT -- NULL: a conversation; else `headless` or `subagent`
);
CREATE INDEX sessions_session_id ON sessions(session_id);
CREATE INDEX sessions_updated ON sessions(updated_ms);
CREATE TABLE docs(
  id INTEGER PRIMARY KEY,
  session INTEGER NOT NULL,
  block INTEGER, -- texts.id; NULL when nothing of the entry is searchable
  slot INTEGER,
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
CREATE TABLE session_tokens(
  session INTEGER NOT NULL,
  model TEXT NOT NULL,
  responses INTEGER NOT NULL,
  input INTEGER NOT NULL,
  output INTEGER NOT NULL,
  cache_read INTEGER NOT NULL,
  cache_write INTEGER NOT NULL,
  PRIMARY KEY (session, model)
) WITHOUT ROWID;
CREATE TABLE texts(id INTEGER PRIMARY KEY, z BLOB NOT NULL);
CREATE VIEW fts_text(id, text, thinking, tools, output, tags) AS
  SELECT d.id, agentlog_text(t.z, d.slot, 0), agentlog_text(t.z, d.slot, 1),
         agentlog_text(t.z, d.slot, 2), agentlog_text(t.z, d.slot, 3),
         agentlog_text(t.z, d.slot, 4)
  FROM docs d JOIN texts t ON t.id = d.block;
CREATE VIRTUAL TABLE fts USING fts5(
  text, thinking, tools, output, tags,
  content = 'fts_text', content_rowid = 'id',
  tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE words USING fts5(
  w, content = '', contentless_delete = 1, detail = none,
  tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE words_vocab USING fts5vocab(words, row);
INSERT INTO fts(fts, rank) VALUES('pgsz', 4000);
INSERT INTO fts(fts, rank) VALUES('hashsize', 67108864);
INSERT INTO fts(fts, rank) VALUES('automerge', 0);
INSERT INTO fts(fts, rank) VALUES('crisismerge', 64);
INSERT INTO words(words, rank) VALUES('automerge', 0);
INSERT INTO words(words, rank) VALUES('crisismerge', 64);
";

/// Indexes that came after the schema's version, created (when missing)
/// by every update: the catalog's default order (newest first, sessions
/// without a time last), so the first page of a browser's list reads 50
/// rows, not every session; the order of a listing by last change (newest
/// first, then by path), so `ls --limit 50` reads 50 rows of 122,000; the
/// listing by start with every column it shows, the listed title and the
/// tokens included ([`crate::listing`]: `ls` of every session reads this
/// index alone, backwards: kept oldest first, the new sessions a build or
/// an update adds go at its end and fill its pages, where newest first
/// they split the first page again and again and left the index half
/// empty, 10 % slower to read; it replaced `sessions_listing`, which held
/// the starts of the title and of the first prompt instead, and
/// `sessions_started`, the order alone); the agent, project and sort keys
/// of every session, in which a filtered list finds, counts and orders its matches without
/// reading the catalog's rows (a list of 100,000 sessions filtered by agent
/// and project and sorted by messages: 200 → 18 ms); the format, last
/// change and entries of every session, in which a listing of some formats
/// counts and finds them (`ls --limit 50`: 70 → 10 ms at 10 GB) and
/// `agentlog index` sums the entries without reading the catalog; the files
/// by time and the failed ones, which the freshness check of every command
/// reads.
pub(crate) const LATER_INDEXES: &str = "
CREATE INDEX IF NOT EXISTS sessions_filters ON sessions(agent, project, messages, updated_ms, created_ms);
CREATE INDEX IF NOT EXISTS sessions_order ON sessions(updated_ms IS NULL, updated_ms DESC, id DESC);
DROP INDEX IF EXISTS sessions_started;
DROP INDEX IF EXISTS sessions_listing;
CREATE INDEX IF NOT EXISTS sessions_listed ON sessions(coalesce(created_ms, updated_ms), path DESC,
  format, agent, session_id, project, messages, updated_ms, listed, tokens, kind);
CREATE INDEX IF NOT EXISTS sessions_recent ON sessions(updated_ms DESC, path);
CREATE INDEX IF NOT EXISTS sessions_format ON sessions(format, updated_ms, entries);
CREATE INDEX IF NOT EXISTS files_mtime ON files(mtime_ns);
CREATE INDEX IF NOT EXISTS files_failed ON files(id) WHERE error IS NOT NULL;
";

/// True when the index on `conn` lacks one of the [`LATER_INDEXES`] or
/// still has one they drop.
pub(crate) fn later_indexes_missing(conn: &Connection, path: &Path) -> Result<bool, IndexError> {
    let mut stmt = conn
        .prepare_cached("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = ?1")
        .at(path)?;
    for statement in LATER_INDEXES.split(';') {
        let words: Vec<&str> = statement.split_whitespace().take(6).collect();
        let (name, wanted) = match words.as_slice() {
            ["CREATE", "INDEX", "IF", "NOT", "EXISTS", name] => (*name, true),
            ["DROP", "INDEX", "IF", "EXISTS", name, ..] => (*name, false),
            _ => continue,
        };
        let n: i64 = stmt.query_row([name], |r| r.get(0)).at(path)?;
        if (n > 0) != wanted {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The SQLite `application_id` of an agentlog index ("AGLX"): with the
/// marker table it is how agentlog knows a file is its own before it ever
/// replaces it.
pub const APPLICATION_ID: i32 = 0x4147_4c58;

/// The marker table (created with the schema) and its identifying row.
const MARKER: &str = "
CREATE TABLE IF NOT EXISTS agentlog_index(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO agentlog_index(key, value) VALUES('kind', 'agentlog index');
";

/// The tables every agentlog index of any version had: how an index made
/// before the application id was set is recognised.
const LEGACY_TABLES: [&str; 4] = ["files", "sessions", "docs", "fts"];

/// How an index file was opened.
pub(crate) enum Opened {
    /// The file holds a current index (possibly empty).
    Ready(Connection),
    /// An agentlog index that was damaged or of another version was renamed
    /// aside and a new one made; the text says so.
    Reset(Connection, String),
}

/// How long a connection waits for another one's lock.
pub(crate) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Applies the pragmas every connection uses.
pub(crate) fn configure(conn: &Connection, path: &Path) -> Result<(), IndexError> {
    configure_waiting(conn, path, BUSY_TIMEOUT)
}

fn configure_waiting(
    conn: &Connection,
    path: &Path,
    busy: std::time::Duration,
) -> Result<(), IndexError> {
    conn.busy_timeout(busy).at(path)?;
    crate::texts::register(conn).at(path)?;
    conn.execute_batch(&format!(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY;
         PRAGMA cache_size=-{CACHE_KIB}; PRAGMA foreign_keys=OFF;"
    ))
    .at(path)
}

/// The page cache of every connection, in KiB.
const CACHE_KIB: u32 = 32 * 1024;

/// The page cache while a connection reads a whole table once, in KiB.
const SCAN_CACHE_KIB: u32 = 2 * 1024;

/// A connection's page cache made small while it reads a whole table once
/// (which no cache speeds up), and made its usual size again when dropped:
/// filling 32 MB of cache was a third of reading the catalog of 120,000
/// sessions, and as much memory.
pub(crate) struct ScanCache<'c> {
    conn: &'c Connection,
    /// The cache size before (`PRAGMA cache_size`'s own value: pages, or
    /// KiB when negative), put back when dropped: a build sets a larger one.
    before: i64,
}

impl<'c> ScanCache<'c> {
    pub(crate) fn new(conn: &'c Connection, path: &Path) -> Result<Self, IndexError> {
        let before: i64 = conn
            .query_row("PRAGMA cache_size", [], |r| r.get(0))
            .at(path)?;
        conn.execute_batch(&format!("PRAGMA cache_size=-{SCAN_CACHE_KIB}"))
            .at(path)?;
        Ok(ScanCache { conn, before })
    }
}

impl Drop for ScanCache<'_> {
    fn drop(&mut self) {
        // Only a cache size: nothing is lost when this fails.
        let _ = self
            .conn
            .execute_batch(&format!("PRAGMA cache_size={}", self.before));
    }
}

/// What a file at the index path is, from its header and tables.
#[derive(Debug)]
enum Kind {
    Missing,
    /// Zero bytes: holds nothing, becomes an index in place.
    Empty,
    /// An agentlog index (application id and marker, or the tables of one
    /// made before the id was set) with this schema version.
    Ours {
        version: i64,
        legacy: bool,
    },
    /// Anything else: never touched.
    Foreign(String),
}

/// The index files this process found to be agentlog indexes.
fn known() -> &'static std::sync::Mutex<std::collections::HashSet<std::path::PathBuf>> {
    static KNOWN: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashSet<std::path::PathBuf>>,
    > = std::sync::OnceLock::new();
    KNOWN.get_or_init(Default::default)
}

/// Tells whether `path` is an agentlog index: by its header the first time
/// this process looks, and through SQLite after that. Never by opening the
/// file again once this process has connections to it: closing any
/// descriptor of a file drops every POSIX lock the process holds on it,
/// SQLite's included, and another process closing its last connection then
/// takes this one's write-ahead log away (a server's updates went on into
/// a deleted log, which no other process saw).
fn identify(path: &Path) -> Result<Kind, IndexError> {
    let seen = known().lock().is_ok_and(|k| k.contains(path));
    if seen {
        match identify_open(path) {
            Ok(Some(kind)) => return Ok(kind),
            // Busy is no reason to open the file itself.
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                ) =>
            {
                return Err(e).at(path)
            }
            _ => {}
        }
    }
    let kind = identify_by_header(path)?;
    if matches!(kind, Kind::Ours { legacy: false, .. }) {
        if let Ok(mut k) = known().lock() {
            k.insert(path.to_path_buf());
        }
    }
    Ok(kind)
}

/// The [`Kind`] of an index this process identified before, read through
/// SQLite (read-only): `None` when it is no longer one (its header is read
/// then).
fn identify_open(path: &Path) -> Result<Option<Kind>, rusqlite::Error> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let c = Connection::open_with_flags(path, flags)?;
    c.busy_timeout(BUSY_TIMEOUT)?;
    let app: i32 = c.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    Ok((app == APPLICATION_ID).then_some(Kind::Ours {
        version,
        legacy: false,
    }))
}

/// Reads the SQLite header of `path` (and its tables when the application
/// id is unset) to tell whether it is an agentlog index.
fn identify_by_header(path: &Path) -> Result<Kind, IndexError> {
    use std::io::Read;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Kind::Missing),
        Err(e) => return Err(IndexError::io(path, e)),
    };
    if meta.file_type().is_symlink() {
        // Follow it only to a regular file; the checks below apply to the target.
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => {}
            Ok(_) => {
                return Ok(Kind::Foreign(
                    "a link to something that is not a regular file".into(),
                ))
            }
            Err(_) => return Ok(Kind::Foreign("a dangling symbolic link".into())),
        }
    } else if !meta.is_file() {
        return Ok(Kind::Foreign("not a regular file".into()));
    }
    let mut head = [0u8; 100];
    let mut f = std::fs::File::open(path).map_err(|e| IndexError::io(path, e))?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(IndexError::io(path, e)),
        }
    }
    if n == 0 {
        return Ok(Kind::Empty);
    }
    if n < 100 || &head[..16] != b"SQLite format 3\0" {
        return Ok(Kind::Foreign("not a SQLite database".into()));
    }
    let be = |o: usize| i32::from_be_bytes([head[o], head[o + 1], head[o + 2], head[o + 3]]);
    let app = be(68);
    let version = i64::from(be(60));
    if app == APPLICATION_ID {
        return Ok(Kind::Ours {
            version,
            legacy: false,
        });
    }
    if app != 0 {
        return Ok(Kind::Foreign(format!(
            "a SQLite database of another application (application id {app:#x})"
        )));
    }
    // No application id: an index made before it was set, or someone
    // else's database. Look at its tables, read-only.
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let names: Result<Vec<String>, rusqlite::Error> = Connection::open_with_flags(path, flags)
        .and_then(|c| {
            c.busy_timeout(BUSY_TIMEOUT)?;
            let mut st = c.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
            let v = st
                .query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>();
            v
        });
    match names {
        Ok(names)
            if (1..=SCHEMA_VERSION).contains(&version)
                && LEGACY_TABLES.iter().all(|t| names.iter().any(|n| n == t)) =>
        {
            Ok(Kind::Ours {
                version,
                legacy: true,
            })
        }
        Ok(_) => Ok(Kind::Foreign("a SQLite database that is not an agentlog index".into())),
        Err(e) if is_busy(&e) => Err(busy(path, &e)),
        Err(e) => Ok(Kind::Foreign(format!(
            "a SQLite database agentlog cannot read ({e}), so it cannot tell whether it is its index"
        ))),
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

fn busy(path: &Path, e: &rusqlite::Error) -> IndexError {
    IndexError::Busy {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Why an opened index cannot be used as it is.
enum Unusable {
    /// Another process holds it: report, never replace.
    Busy(rusqlite::Error),
    /// Damaged or of another version: rename aside and start again.
    Replace(String),
    /// Any other failure: report.
    Error(IndexError),
}

/// Opens (creating if needed) the index at `path`.
///
/// Only a file that is positively an agentlog index (see [`identify`]) and
/// damaged or of another schema version is replaced, and it is renamed
/// aside (`<file>.broken-<time>`), never deleted. Anything else at `path`
/// is an error naming it. A busy index is waited for (`busy`), then
/// reported. Creating and replacing happen under the index's lock file, so
/// processes starting together make one index.
pub(crate) fn open(path: &Path, busy_wait: std::time::Duration) -> Result<Opened, IndexError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::lockfile::ensure_private_dir(dir)?;
    }
    let mut notice: Option<String> = None;
    // At most a few rounds: a file replaced by another process while we
    // looked is looked at again.
    for _ in 0..4 {
        match identify(path)? {
            Kind::Foreign(what) => {
                return Err(IndexError::NotAnIndex {
                    path: path.to_path_buf(),
                    what,
                })
            }
            Kind::Missing | Kind::Empty => {
                let _lock = crate::lockfile::IndexLock::acquire(path)?;
                match identify(path)? {
                    Kind::Missing => create_new(path)?,
                    Kind::Empty => {
                        let conn = Connection::open(path).at(path)?;
                        create(&conn, path)?;
                    }
                    _ => {} // another process made it meanwhile
                }
                continue;
            }
            Kind::Ours { version, legacy } => {
                crate::lockfile::make_private(path);
                match try_open(path, version, legacy, busy_wait) {
                    Ok(conn) => {
                        return Ok(match notice {
                            Some(n) => Opened::Reset(conn, n),
                            None => Opened::Ready(conn),
                        })
                    }
                    Err(Unusable::Busy(e)) => return Err(busy(path, &e)),
                    Err(Unusable::Error(e)) => return Err(e),
                    Err(Unusable::Replace(why)) => {
                        let _lock = crate::lockfile::IndexLock::acquire(path)?;
                        // Another process may have replaced it meanwhile.
                        if let Kind::Ours { version, legacy } = identify(path)? {
                            if let Err(Unusable::Replace(_)) =
                                try_open(path, version, legacy, busy_wait)
                            {
                                let aside = rename_aside(path)?;
                                create_new(path)?;
                                notice = Some(format!(
                                    "index {} was unusable ({why}); it was moved to {} and a new index is being built from the session files (delete the old one when you no longer need it)",
                                    path.display(),
                                    aside.display()
                                ));
                            }
                        }
                        continue;
                    }
                }
            }
        }
    }
    Err(IndexError::Backend {
        backend: "sqlite",
        message: format!(
            "{}: the index kept changing while it was opened; try again",
            path.display()
        ),
    })
}

/// Opens an agentlog index and checks its schema.
fn try_open(
    path: &Path,
    version: i64,
    legacy: bool,
    busy_wait: std::time::Duration,
) -> Result<Connection, Unusable> {
    if version != SCHEMA_VERSION && version != MIGRATES_FROM {
        return Err(Unusable::Replace(format!(
            "schema version {version}, this agentlog uses {SCHEMA_VERSION}"
        )));
    }
    let sql = |e: rusqlite::Error| {
        if is_busy(&e) {
            Unusable::Busy(e)
        } else if is_damage(&e) {
            Unusable::Replace(e.to_string())
        } else {
            Unusable::Error(IndexError::Sqlite {
                path: path.to_path_buf(),
                source: e,
            })
        }
    };
    let conn = Connection::open(path).map_err(sql)?;
    conn.busy_timeout(busy_wait).map_err(sql)?;
    match configure_waiting(&conn, path, busy_wait) {
        Ok(()) => {}
        Err(IndexError::Sqlite { source, .. }) => return Err(sql(source)),
        Err(e) => return Err(Unusable::Error(e)),
    }
    // A cheap probe of every table: a damaged file usually fails here.
    for table in ["files", "sessions", "docs", "usage", "fts"] {
        conn.query_row(
            &format!("SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT 1)"),
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(|e| match sql(e) {
            Unusable::Replace(why) => Unusable::Replace(format!("table {table}: {why}")),
            other => other,
        })?;
    }
    if legacy {
        // Made before the application id: mark it as ours, in place.
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; {MARKER} PRAGMA application_id = {APPLICATION_ID}; COMMIT;"
        ))
        .map_err(sql)?;
    }
    if version == MIGRATES_FROM {
        migrate(&conn).map_err(|e| {
            // An index whose tables are not what version 9's were is
            // replaced, as a damaged one is; a full disk, an I/O error or a
            // busy index is reported, and the index stays as it is.
            let schema = matches!(
                e.sqlite_error_code(),
                Some(
                    rusqlite::ErrorCode::Unknown
                        | rusqlite::ErrorCode::ConstraintViolation
                        | rusqlite::ErrorCode::TypeMismatch
                        | rusqlite::ErrorCode::SchemaChanged
                )
            );
            if schema && !is_busy(&e) {
                Unusable::Replace(format!(
                    "schema version {MIGRATES_FROM}, which could not be brought to {SCHEMA_VERSION}: {e}"
                ))
            } else {
                sql(e)
            }
        })?;
    }
    conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
    Ok(conn)
}

/// Brings an index of schema version [`MIGRATES_FROM`] to this one, in one
/// transaction (a process that finds it done leaves it): the catalog gets
/// its `kind` column (the listing index that reads it is made again by the
/// next update), the drift tables are made, and every file is marked to be
/// read again by the next update (an impossible inode): what a session is
/// and what its reader did not know come from reading its file. The index
/// answers meanwhile as it did, every session a conversation.
fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    // The file's header may still say the version before while the write
    // that changed it is in the write-ahead log: done, and no lock taken.
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let done = (|| {
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        match version {
            SCHEMA_VERSION => return Ok(()), // another process did it
            MIGRATES_FROM => {}
            // Replaced meanwhile by an agentlog of yet another version.
            _ => {
                return Err(rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
                    Some(format!("it became schema version {version} meanwhile")),
                ))
            }
        }
        conn.execute_batch(&format!(
            "ALTER TABLE sessions ADD COLUMN kind TEXT;
             DROP INDEX IF EXISTS sessions_listed;
             {DRIFT_TABLES}
             UPDATE files SET inode = -1;
             {LATER_INDEXES} PRAGMA user_version = {SCHEMA_VERSION};"
        ))
    })();
    match done {
        Ok(()) => {
            conn.execute_batch("COMMIT")?;
            // Into the file itself, so that every agentlog opening it next
            // reads the new version from its header (an older one then
            // rebuilds instead of writing rows without the new columns).
            // Only sooner than SQLite would: nothing is lost when it fails.
            let _ = conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE)");
            Ok(())
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// The drift tables (see [`SCHEMA`]), made with it and by [`migrate`].
const DRIFT_TABLES: &str = "
CREATE TABLE drift(
  file INTEGER NOT NULL,
  version TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  count INTEGER NOT NULL,
  first_line INTEGER,
  PRIMARY KEY (file, kind, name)
) WITHOUT ROWID;
CREATE TABLE drift_said(
  format TEXT NOT NULL,
  version TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (format, version, kind, name)
) WITHOUT ROWID;
";

/// Creates a new, empty index at `path` (which must not exist): built in a
/// private `<file>.building-<pid>` file and moved into place without
/// replacing anything. The caller holds the index lock.
pub(crate) fn create_new(path: &Path) -> Result<(), IndexError> {
    let tmp = building_path(path);
    remove_index_files(&tmp)?;
    crate::lockfile::create_private_file(&tmp)?;
    let result = (|| {
        let conn = Connection::open(&tmp).at(&tmp)?;
        create(&conn, &tmp)?;
        conn.execute_batch("PRAGMA journal_mode=WAL;").at(&tmp)?;
        drop(conn);
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| IndexError::io(&tmp, e))?;
        // A hard link never replaces an existing file.
        std::fs::hard_link(&tmp, path).map_err(|e| IndexError::io(path, e))
    })();
    remove_index_files(&tmp)?;
    result
}

/// Returns `<file>.building-<pid>`, where this process builds an index.
pub(crate) fn building_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".building-{}", std::process::id()));
    path.with_file_name(name)
}

/// Renames the index at `path` and its WAL and shared-memory files to
/// `<file>.broken-<time>…`; returns the new name.
pub(crate) fn rename_aside(path: &Path) -> Result<std::path::PathBuf, IndexError> {
    let stamp = chrono::Utc::now().format("%Y-%m-%dT%H-%M-%S%.3fZ");
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".broken-{stamp}"));
    let aside = path.with_file_name(name);
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut from = path.as_os_str().to_owned();
        from.push(suffix);
        let mut to = aside.as_os_str().to_owned();
        to.push(suffix);
        match std::fs::rename(&from, &to) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(IndexError::io(std::path::PathBuf::from(from), e)),
        }
    }
    Ok(aside)
}

/// Creates the schema, the marker and the application id in an empty
/// database.
pub(crate) fn create_schema(conn: &Connection, path: &Path) -> Result<(), IndexError> {
    create(conn, path)
}

fn create(conn: &Connection, path: &Path) -> Result<(), IndexError> {
    conn.execute_batch(&format!(
        "BEGIN; {SCHEMA} {DRIFT_TABLES} {LATER_INDEXES} {shapes} {MARKER} PRAGMA user_version = {SCHEMA_VERSION}; PRAGMA application_id = {APPLICATION_ID}; COMMIT;",
        shapes = crate::shape::TABLE
    ))
    .at(path)
}

/// Removes an index file this process made (a `.building-<pid>` file) and
/// its WAL, shared-memory and journal files.
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

/// Returns true when the file at `path` is an agentlog index (or nothing is
/// there): what `rebuild` may replace.
pub(crate) fn replaceable(path: &Path) -> Result<(), IndexError> {
    match identify(path)? {
        Kind::Foreign(what) => Err(IndexError::NotAnIndex {
            path: path.to_path_buf(),
            what,
        }),
        _ => Ok(()),
    }
}

/// Runs SQLite's `quick_check`; returns the problems found (empty when the
/// file is sound).
pub(crate) fn quick_check(conn: &Connection, path: &Path) -> Result<Vec<String>, IndexError> {
    let mut st = conn.prepare("PRAGMA quick_check(20)").at(path)?;
    let rows = st
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>());
    match rows {
        Ok(rows) => Ok(rows.into_iter().filter(|r| r != "ok").collect()),
        Err(e) if is_damage(&e) => Ok(vec![e.to_string()]),
        Err(e) => Err(IndexError::Sqlite {
            path: path.to_path_buf(),
            source: e,
        }),
    }
}

/// Records when the index was last checked (`agentlog_index.last_check`,
/// Unix seconds), and reads it back.
pub(crate) fn last_check(conn: &Connection, path: &Path) -> Result<Option<i64>, IndexError> {
    use rusqlite::OptionalExtension;
    let v: Option<String> = conn
        .query_row(
            "SELECT value FROM agentlog_index WHERE key = 'last_check'",
            [],
            |r| r.get(0),
        )
        .optional()
        .at(path)?;
    Ok(v.and_then(|v| v.parse().ok()))
}

/// Stores `now` as the time of the last check.
pub(crate) fn set_last_check(conn: &Connection, path: &Path, now: i64) -> Result<(), IndexError> {
    conn.execute(
        "INSERT OR REPLACE INTO agentlog_index(key, value) VALUES('last_check', ?1)",
        [now.to_string()],
    )
    .at(path)
    .map(|_| ())
}

#[cfg(test)]
mod scan_cache_tests {
    use super::*;

    #[test]
    fn a_scan_cache_puts_back_the_size_there_was() {
        let conn = Connection::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
        let size = |c: &Connection| -> i64 {
            c.query_row("PRAGMA cache_size", [], |r| r.get(0))
                .unwrap_or_else(|e| panic!("{e}"))
        };
        conn.execute_batch("PRAGMA cache_size=-65536")
            .unwrap_or_else(|e| panic!("{e}"));
        {
            let _scan = ScanCache::new(&conn, Path::new("test")).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(size(&conn), -i64::from(SCAN_CACHE_KIB));
        }
        assert_eq!(size(&conn), -65536);
    }
}
