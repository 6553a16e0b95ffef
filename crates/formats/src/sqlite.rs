//! Reading agents' SQLite databases (OpenCode, Kilo Code, Crush) safely:
//! read-only, with the write-ahead log (where most of a live session is),
//! waiting briefly for a writer, rows as JSON objects.

use crate::FormatError;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
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

/// Opens the database at `path` read-only (never `immutable`: that would
/// skip the write-ahead log) and checks it has `tables`; `what` names the
/// kind of database in the error ("an OpenCode").
pub(crate) fn open_read_only(
    path: &Path,
    tables: &[&str],
    what: &str,
) -> Result<Connection, FormatError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let c = Connection::open_with_flags(uri(path, "mode=ro"), flags)
        .map_err(|e| sql_err(path, "cannot open as a read-only SQLite database", e))?;
    c.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| sql_err(path, "setting a busy timeout", e))?;
    for table in tables {
        let n: i64 = c
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |r| r.get(0),
            )
            .map_err(|e| sql_err(path, "reading the schema", e))?;
        if n == 0 {
            return Err(FormatError::invalid(
                path,
                None,
                format!("not {what} database: table `{table}` is missing"),
            ));
        }
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
