//! Reading agents' SQLite databases (OpenCode, Kilo Code, Crush, Cursor's
//! chat stores) safely: read-only, with the write-ahead log (where most of a
//! live session is), waiting briefly for a writer, the connection hardened
//! against a database made to attack its reader (one in a cloned
//! repository), only plain tables read, rows as JSON objects.

use crate::FormatError;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::{Map, Value};
use std::path::Path;
use std::time::Duration;

/// The first bytes of every SQLite database file.
pub(crate) const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// How long a read waits for a writer's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(3);

pub(crate) fn sql_err(path: &Path, what: &str, e: rusqlite::Error) -> FormatError {
    FormatError::invalid(path, None, format!("{what}: {e}"))
}

/// Returns `path` as a SQLite URI with `query`.
fn uri(path: &Path, query: &str) -> String {
    let mut s = String::from("file:");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.push('?');
    s.push_str(query);
    s
}

/// How long reading one database may take before it is interrupted.
const READ_LIMIT: Duration = Duration::from_secs(60);

/// Sets a connection to a database from outside up defensively: no
/// triggers, no views, nothing in the schema trusted, no writes, and every
/// statement interrupted once the connection has been reading for
/// [`READ_LIMIT`].
fn harden(c: &Connection) -> Result<(), rusqlite::Error> {
    use rusqlite::config::DbConfig;
    c.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    c.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    c.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)?;
    c.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false)?;
    c.execute_batch("PRAGMA trusted_schema = OFF; PRAGMA query_only = ON;")?;
    let deadline = std::time::Instant::now() + READ_LIMIT;
    c.progress_handler(10_000, Some(move || std::time::Instant::now() > deadline));
    Ok(())
}

/// Opens the database at `path` read-only with the URI `query` (`mode=ro`,
/// never `immutable` unless asked: that would skip the write-ahead log),
/// with a busy timeout, hardened, its schema read once.
pub(crate) fn connect(path: &Path, query: &str) -> Result<Connection, rusqlite::Error> {
    // A database its agent deleted, kept by agentlog's archive: its copy,
    // which nothing writes.
    if std::fs::symlink_metadata(path).is_err() {
        if let Some(copy) = crate::archived::materialize(path) {
            let copy = copy.map_err(|e| {
                rusqlite::Error::SqliteFailure(
                    rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
                    Some(format!("the archive's copy: {e}")),
                )
            })?;
            return open(&copy, "mode=ro&immutable=1");
        }
    }
    open(path, query)
}

fn open(path: &Path, query: &str) -> Result<Connection, rusqlite::Error> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let c = Connection::open_with_flags(uri(path, query), flags)?;
    c.busy_timeout(BUSY_TIMEOUT)?;
    harden(&c)?;
    c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
    Ok(c)
}

/// Checks that `table` is a plain table of the database at `path`: a view
/// or a virtual table could run anything, an endless recursive query among
/// them. `what` names the kind of database in the error ("a Cursor chat
/// store").
pub(crate) fn require_plain_table(
    c: &Connection,
    path: &Path,
    table: &str,
    what: &str,
) -> Result<(), FormatError> {
    let row: Option<(String, Option<String>)> = c
        .query_row(
            "SELECT type, sql FROM sqlite_master WHERE name = ?1 COLLATE NOCASE",
            [table],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(|e| sql_err(path, "reading the schema", e))?;
    let kind = row.as_ref().map(|(k, _)| k.as_str());
    let virtual_table = row
        .as_ref()
        .and_then(|(_, sql)| sql.as_deref())
        .is_some_and(|s| s.to_ascii_uppercase().contains("VIRTUAL"));
    if kind == Some("table") && !virtual_table {
        return Ok(());
    }
    Err(FormatError::invalid(
        path,
        None,
        format!(
            "not {what}: {table} is {}, and agentlog reads only plain tables",
            match kind {
                None => "missing".to_string(),
                Some("table") => "a virtual table".to_string(),
                Some(k) => format!("a {k}"),
            }
        ),
    ))
}

/// Opens the database at `path` read-only (see [`connect`]) and checks it
/// has `tables`, each a plain table; `what` names the kind of database in
/// the error ("an OpenCode database").
pub(crate) fn open_read_only(
    path: &Path,
    tables: &[&str],
    what: &str,
) -> Result<Connection, FormatError> {
    let c = connect(path, "mode=ro")
        .map_err(|e| sql_err(path, "cannot open as a read-only SQLite database", e))?;
    for table in tables {
        require_plain_table(&c, path, table, what)?;
    }
    Ok(c)
}

/// The first column of every row of `sql` (a list of ids).
pub(crate) fn ids(c: &Connection, path: &Path, sql: &str) -> Result<Vec<String>, FormatError> {
    let mut stmt = c
        .prepare(sql)
        .map_err(|e| sql_err(path, "listing sessions", e))?;
    let ids = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(|e| sql_err(path, "listing sessions", e))?
        .flatten()
        .collect();
    Ok(ids)
}

/// Returns a SQL value as JSON.
fn json_of(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::String(hex::encode(b)),
    }
}

/// Runs `sql` with one text parameter and returns each row as a JSON object.
pub(crate) fn rows(
    c: &Connection,
    path: &Path,
    sql: &str,
    param: &str,
) -> Result<Vec<Map<String, Value>>, FormatError> {
    let mut stmt = c
        .prepare(sql)
        .map_err(|e| sql_err(path, "reading sessions", e))?;
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let mut q = stmt
        .query([param])
        .map_err(|e| sql_err(path, "reading sessions", e))?;
    let mut out = Vec::new();
    while let Some(row) = q.next().map_err(|e| sql_err(path, "reading sessions", e))? {
        let mut obj = Map::new();
        for (i, n) in names.iter().enumerate() {
            if let Ok(v) = row.get_ref(i) {
                obj.insert(n.clone(), json_of(v));
            }
        }
        out.push(obj);
    }
    Ok(out)
}

/// [`crate::Format::read_bytes`] of a format kept in a database
/// (`file.db#<session id>`): the bytes are only a head to recognise; the
/// session is read from the database on disk by `read_path`, and bytes of
/// no file on disk are refused naming `what` ("a Crush database").
pub(crate) fn read_bytes_from_disk(
    path: &Path,
    bytes: &[u8],
    what: &str,
    read_path: impl FnOnce(&Path) -> Result<crate::Read, FormatError>,
) -> Result<crate::Read, FormatError> {
    let file = crate::member::split_member(path).map_or_else(|| path.to_path_buf(), |(f, _)| f);
    if bytes.starts_with(SQLITE_MAGIC) && (file.is_file() || crate::archived::is_kept_only(&file)) {
        return read_path(path);
    }
    Err(FormatError::invalid(
        path,
        None,
        format!("not {what}: a database can only be read from its file on disk"),
    ))
}
