//! The catalog's columns made from others: `listed`, the title a list
//! shows ([`listed_title`] of the title and the first prompt), and
//! `tokens`, every model's tokens of the session summed ([`summed`] of its
//! `session_tokens` rows). The writer stores both with what they are made
//! from; [`fill`] makes them again for every session, where an index
//! written by an older agentlog lacks them or may have left them stale.

use crate::title::listed_title;
use rusqlite::{params, Connection};
use std::collections::HashMap;

/// Input, output, cache-read and cache-write tokens summed, as the catalog
/// keeps them (saturating: a session's garbage counts never fail a write).
pub(crate) fn summed(input: i64, output: i64, cache_read: i64, cache_write: i64) -> i64 {
    input
        .saturating_add(output)
        .saturating_add(cache_read)
        .saturating_add(cache_write)
}

/// The index `sessions_listing`, which only an agentlog of schema version 8
/// makes (every update of this one drops it): present, it says such an
/// agentlog has written sessions without their `listed` and `tokens`.
pub(crate) fn older_writer_was_here(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'sessions_listing'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// Makes `listed` and `tokens` of every session again from what the
/// catalog holds, inside the caller's write transaction (two seconds at
/// 10 GB).
pub(crate) fn fill(conn: &Connection) -> rusqlite::Result<()> {
    let mut tokens: HashMap<i64, i64> = HashMap::new();
    {
        let mut read = conn.prepare(
            "SELECT session, input, output, cache_read, cache_write FROM session_tokens",
        )?;
        let mut rows = read.query([])?;
        while let Some(r) = rows.next()? {
            let t = summed(r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
            let total = tokens.entry(r.get(0)?).or_default();
            *total = total.saturating_add(t);
        }
    }
    let mut made = Vec::new();
    {
        let mut read = conn.prepare("SELECT id, title, first_prompt FROM sessions")?;
        let mut rows = read.query([])?;
        while let Some(r) = rows.next()? {
            let text = |i: usize| -> rusqlite::Result<Option<&str>> {
                Ok(r.get_ref(i)?.as_str_or_null()?)
            };
            let id: i64 = r.get(0)?;
            made.push((id, listed_title(text(1)?, text(2)?)));
        }
    }
    let mut write = conn.prepare("UPDATE sessions SET listed = ?2, tokens = ?3 WHERE id = ?1")?;
    for (id, listed) in made {
        write.execute(params![id, listed, tokens.get(&id).copied().unwrap_or(0)])?;
    }
    Ok(())
}
