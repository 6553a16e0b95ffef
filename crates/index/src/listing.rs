//! A session listing, given in its order as it is read: what `ls` prints.
//!
//! The catalog's `sessions_listed` index holds, in the listing's order
//! (oldest start first, read backwards: newest first), every column a
//! listed session shows, its listed title and its tokens summed included
//! (the writer keeps both in the catalog, see `derived.rs`). Listing
//! every session is then one pass over that index: no row of the catalog is read, no list
//! is held and sorted, and a filter on the project or the start is applied
//! as the rows go by (at 10 GB, 122,000 rows).

use crate::catalog::{formats_key, SessionInfo, SessionOrder};
use crate::error::SqlContext;
use crate::{Index, IndexError, ListParams};
use rusqlite::types::Value;

/// What a session listing asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListingQuery {
    /// Only sessions read as one of these formats (none: no session).
    pub formats: Vec<String>,
    /// Only sessions whose working directory contains this text.
    pub project: Option<String>,
    /// Only sessions started at or after this time (ms since the epoch;
    /// the start is the creation time, or else the last change).
    pub started_since_ms: Option<i64>,
    /// At most this many (`None`: every one).
    pub limit: Option<usize>,
    /// Newest start (`Created`) or last change first; then by path.
    pub order: SessionOrder,
    /// Only conversations: no headless run, no subagent transcript
    /// ([`agentlog_model::SessionKind`]).
    pub conversations_only: bool,
}

/// One listed session, lent to the caller for the time of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listed<'a> {
    /// The session id.
    pub session_id: &'a str,
    /// The agent.
    pub agent: &'a str,
    /// The format it was read as.
    pub format: &'a str,
    /// The session file.
    pub path: &'a str,
    /// The project (cwd).
    pub project: Option<&'a str>,
    /// The listed title ([`crate::title::listed_title`]).
    pub title: Option<&'a str>,
    /// The start: the creation time, or else the last change.
    pub started_ms: Option<i64>,
    /// The last change.
    pub updated_ms: Option<i64>,
    /// User, assistant and system messages.
    pub messages: u64,
    /// Every model's tokens summed (input, output and cache).
    pub tokens: u64,
    /// What the session is.
    pub kind: agentlog_model::SessionKind,
}

impl ListingQuery {
    /// True when `info` is listed: its format, project and start match.
    pub fn matches(&self, info: &SessionInfo) -> bool {
        self.formats.contains(&info.format)
            && self.project.as_ref().is_none_or(|p| {
                info.project
                    .as_deref()
                    .is_some_and(|x| x.contains(p.as_str()))
            })
            && self
                .started_since_ms
                .is_none_or(|s| info.started_ms().is_some_and(|t| t >= s))
            && (!self.conversations_only || info.kind.is_conversation())
    }
}

/// A start as the catalog's listing index holds it.
const STARTED: &str = "coalesce(created_ms, updated_ms)";

/// The statement of a listing.
struct Sql {
    /// What a listed row matches, with parameters `?1`…
    filter: String,
    /// The parameters of the filter.
    args: Vec<Value>,
    /// The listing, its limit the parameter after those of the filter.
    select: String,
}

/// The statement of listing `q`; `every_format`: the catalog holds no
/// format but those of `q` (no row is then left out by its format).
fn sql(q: &ListingQuery, every_format: bool) -> Sql {
    let mut filter = String::from(if every_format {
        "?1 IS NOT NULL"
    } else {
        "instr(?1, char(31) || format || char(31)) > 0"
    });
    let mut args: Vec<Value> = vec![Value::Text(formats_key(&q.formats))];
    if let Some(p) = &q.project {
        args.push(Value::Text(p.clone()));
        filter.push_str(&format!(" AND instr(project, ?{}) > 0", args.len()));
    }
    if let Some(s) = q.started_since_ms {
        args.push(Value::Integer(s));
        filter.push_str(&format!(" AND {STARTED} >= ?{}", args.len()));
    }
    if q.conversations_only {
        filter.push_str(" AND kind IS NULL");
    }
    let order = match q.order {
        SessionOrder::Created => format!("{STARTED} DESC, path"),
        SessionOrder::Updated => "updated_ms DESC, path".to_string(),
    };
    let select = format!(
        "SELECT session_id, agent, format, path, project, messages, updated_ms, {STARTED},
                listed, tokens, kind
         FROM sessions WHERE {filter} ORDER BY {order} LIMIT ?{}",
        args.len() + 1
    );
    Sql {
        filter,
        args,
        select,
    }
}

impl Index {
    /// Gives `f` the sessions `q` lists, in its order, as they are read;
    /// returns how many match (its limit aside).
    pub fn visit_listing(
        &self,
        q: &ListingQuery,
        f: &mut dyn FnMut(&Listed<'_>),
    ) -> Result<usize, IndexError> {
        if q.formats.is_empty() {
            // No format: no session (an empty `ListParams::formats`, which
            // counting below takes, is every one).
            return Ok(0);
        }
        // One read transaction for every statement below (the listing and
        // its count agree), unless inside a caller's.
        let _read = if self.conn.is_autocommit() {
            Some(self.conn.unchecked_transaction().at(&self.path)?)
        } else {
            None
        };
        // Matching each row's format against the list was a sixth of
        // reading the index when every format is listed.
        let every_format = !self.has_format_outside(&q.formats)?;
        let Sql {
            filter,
            args,
            select,
        } = sql(q, every_format);
        // A read of the whole listing index, once.
        let _scan = if q.limit.is_none() {
            Some(crate::schema::ScanCache::new(&self.conn, &self.path)?)
        } else {
            None
        };
        let mut given = 0;
        let limit = q.limit.map_or(-1, |n| n.min(i64::MAX as usize) as i64);
        let mut stmt = self.conn.prepare_cached(&select).at(&self.path)?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(
                args.iter().chain([&Value::Integer(limit)]),
            ))
            .at(&self.path)?;
        while let Some(r) = rows.next().at(&self.path)? {
            let text = |i: usize| -> Result<Option<&str>, IndexError> {
                r.get_ref(i)
                    .and_then(|v| Ok(v.as_str_or_null()?))
                    .at(&self.path)
            };
            let int = |i: usize| -> Result<Option<i64>, IndexError> { r.get(i).at(&self.path) };
            f(&Listed {
                session_id: text(0)?.unwrap_or_default(),
                agent: text(1)?.unwrap_or_default(),
                format: text(2)?.unwrap_or_default(),
                path: text(3)?.unwrap_or_default(),
                project: text(4)?,
                messages: int(5)?.unwrap_or_default() as u64,
                updated_ms: int(6)?,
                started_ms: int(7)?,
                title: text(8)?,
                tokens: int(9)?.unwrap_or_default() as u64,
                kind: crate::catalog::kind_of(text(10)?),
            });
            given += 1;
        }
        if q.limit.is_none_or(|n| given < n) {
            return Ok(given);
        }
        // Cut by the limit: the rest is counted, not read.
        if q.project.is_none() && q.started_since_ms.is_none() && !q.conversations_only {
            // Through the index of formats alone.
            return self.count_sessions(&ListParams {
                formats: q.formats.clone(),
                ..ListParams::default()
            });
        }
        let n: i64 = self
            .conn
            .prepare_cached(&format!("SELECT count(*) FROM sessions WHERE {filter}"))
            .at(&self.path)?
            .query_row(rusqlite::params_from_iter(args.iter()), |r| r.get(0))
            .at(&self.path)?;
        Ok(n as usize)
    }

    /// True when the catalog holds a session of a format not in `formats`
    /// (one lookup in the index of formats for each format it holds).
    fn has_format_outside(&self, formats: &[String]) -> Result<bool, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT min(format) FROM sessions WHERE format > ?1")
            .at(&self.path)?;
        let mut after = String::new();
        while let Some(format) = stmt
            .query_row([&after], |r| r.get::<_, Option<String>>(0))
            .at(&self.path)?
        {
            if !formats.contains(&format) {
                return Ok(true);
            }
            after = format;
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_made_before_the_listing_index_gets_it_at_the_next_full_check() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ix.sqlite");
        let (mut ix, _) = Index::open(&path).unwrap();
        let has = |ix: &Index, name: &str| -> bool {
            ix.conn
                .query_row(
                    "SELECT count(*) FROM sqlite_schema WHERE name = ?1",
                    [name],
                    |r| r.get::<_, i64>(0),
                )
                .unwrap()
                > 0
        };
        assert!(has(&ix, "sessions_listed"));
        assert!(!crate::schema::later_indexes_missing(&ix.conn, &path).unwrap());
        assert!(!ix.merge_pending().unwrap(), "nothing to do");
        // As an index of an earlier version was.
        ix.conn
            .execute_batch(
                "DROP INDEX sessions_listed;
                 CREATE INDEX sessions_started ON sessions(coalesce(created_ms, updated_ms) DESC, path);
                 CREATE INDEX sessions_listing ON sessions(coalesce(created_ms, updated_ms) DESC, path,
                   format, agent, session_id, project, messages, updated_ms,
                   substr(title, 1, 256), substr(first_prompt, 1, 256));",
            )
            .unwrap();
        assert!(crate::schema::later_indexes_missing(&ix.conn, &path).unwrap());
        assert!(ix.merge_pending().unwrap());
        assert!(has(&ix, "sessions_listed"));
        assert!(!has(&ix, "sessions_started"));
        assert!(!has(&ix, "sessions_listing"));
        assert!(!ix.merge_pending().unwrap(), "done once");
    }

    #[test]
    fn sessions_written_oldest_first_leave_the_listing_index_packed() {
        // A build writes files oldest first, and new sessions come last: the
        // listing index, kept oldest first and read backwards, fills its
        // pages (newest first, each page split in two stayed half empty).
        let dir = tempfile::tempdir().unwrap();
        let (ix, _) = Index::open(&dir.path().join("ix.sqlite")).unwrap();
        ix.conn.execute_batch("BEGIN").unwrap();
        let mut insert = ix
            .conn
            .prepare(
                "INSERT INTO sessions(session_id, agent, format, path, project, created_ms,
                   updated_ms, messages, listed, tokens)
                 VALUES (?1, 'claude', 'claude', ?2, '/home/dev/src/project', ?3, ?3, 12, ?4, 1000)",
            )
            .unwrap();
        for i in 0..3000i64 {
            let id = format!("{i:08x}-0000-4000-8000-000000000000");
            let path = format!("/home/dev/.claude/projects/-home-dev-src-project/{id}.jsonl");
            let title = format!("{i} {}", "a title of some length ".repeat(4));
            insert
                .execute(rusqlite::params![
                    id,
                    path,
                    1_750_000_000_000 + i * 60_000,
                    title
                ])
                .unwrap();
        }
        drop(insert);
        ix.conn.execute_batch("COMMIT").unwrap();
        let unused: f64 = ix
            .conn
            .query_row(
                "SELECT 1.0 * sum(unused) / sum(pgsize) FROM dbstat WHERE name = 'sessions_listed'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(
            unused < 0.2,
            "{:.0} % of the listing index unused",
            unused * 100.0
        );
    }

    #[test]
    fn a_listing_by_start_reads_the_listing_index_alone_and_in_its_order() {
        let dir = tempfile::tempdir().unwrap();
        let (ix, _) = Index::open(&dir.path().join("ix.sqlite")).unwrap();
        let formats = vec!["claude".to_string(), "codex".to_string()];
        for (project, since, limit) in [
            (None, None, None),
            (Some("web"), None, None),
            (None, Some(1_700_000_000_000), Some(50)),
            (Some("web"), Some(1_700_000_000_000), Some(5)),
        ] {
            let q = ListingQuery {
                formats: formats.clone(),
                project: project.map(String::from),
                started_since_ms: since,
                limit,
                order: SessionOrder::Created,
                // The kind is in the listing index too.
                conversations_only: limit.is_some(),
            };
            let every_format = project.is_some();
            let Sql { args, select, .. } = sql(&q, every_format);
            let mut stmt = ix
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {select}"))
                .unwrap();
            let plan: Vec<String> = stmt
                .query_map(
                    rusqlite::params_from_iter(args.iter().chain([&Value::Integer(-1)])),
                    |r| r.get(3),
                )
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let plan = plan.join("; ");
            assert!(
                plan.contains("USING INDEX sessions_listed"),
                "{q:?}: {plan}"
            );
            assert!(!plan.contains("TEMP B-TREE"), "{q:?}: {plan}");
            // No column is read from the catalog's table: the opcodes that
            // open it and read from it.
            let table: i64 = ix
                .conn
                .query_row(
                    "SELECT rootpage FROM sqlite_schema WHERE name = 'sessions'",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            let mut stmt = ix.conn.prepare(&format!("EXPLAIN {select}")).unwrap();
            let ops: Vec<(String, i64, i64)> = stmt
                .query_map(
                    rusqlite::params_from_iter(args.iter().chain([&Value::Integer(-1)])),
                    |r| Ok((r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let cursors: Vec<i64> = ops
                .iter()
                .filter(|(op, _, root)| op == "OpenRead" && *root == table)
                .map(|(_, c, _)| *c)
                .collect();
            let reads = ops
                .iter()
                .filter(|(op, c, _)| op == "Column" && cursors.contains(c))
                .count();
            assert_eq!(reads, 0, "{q:?}: {ops:?}");
        }
    }
}
