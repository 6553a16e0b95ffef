//! A session listing, given in its order as it is read: what `ls` prints.
//!
//! The catalog's `sessions_listing` index holds, in the listing's order
//! (newest start first), every column a listed session shows, the start
//! of its title and of its first prompt included. Listing every session is
//! then one pass over that index: no row of the catalog is read, no list
//! is held and sorted, and a filter on the project or the start is applied
//! as the rows go by (at 10 GB, 122,000 rows).

use crate::catalog::{formats_key, SessionInfo, SessionOrder};
use crate::error::SqlContext;
use crate::title::{listed_title, listed_title_of_prefixes, LISTED_PREFIX_CHARS};
use crate::{Index, IndexError, ListParams};
use rusqlite::types::Value;
use std::borrow::Cow;

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
    /// The listed title ([`listed_title`]).
    pub title: Option<&'a str>,
    /// The start: the creation time, or else the last change.
    pub started_ms: Option<i64>,
    /// The last change.
    pub updated_ms: Option<i64>,
    /// User, assistant and system messages.
    pub messages: u64,
    /// Every model's tokens summed (input, output and cache).
    pub tokens: u64,
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
                .is_none_or(|s| info.created_ms.or(info.updated_ms).is_some_and(|t| t >= s))
    }
}

/// A start as the catalog's listing index holds it.
const STARTED: &str = "coalesce(created_ms, updated_ms)";

/// From this many listed sessions on, every session's tokens are read in
/// one pass (13 ms at 10 GB) instead of looked up one by one (0.6 µs each).
const TOKENS_LOOKED_UP: usize = 4096;

/// The tokens of listed sessions: looked up one by one for a short
/// listing, then all read at once.
struct Tokens {
    /// Lookups left before every total is read.
    left: usize,
    /// Every session's total.
    all: Option<Totals>,
}

/// Every session's tokens summed.
enum Totals {
    /// At the session's id (ids are the catalog's row ids, mostly dense):
    /// no search per listed session, whose ids come in no order.
    ById(Vec<u64>),
    /// By session id, for ids too sparse to be places.
    Sorted(Vec<(i64, u64)>),
}

impl Totals {
    fn new(sorted: Vec<(i64, u64)>) -> Totals {
        let min = sorted.first().map_or(0, |(id, _)| *id);
        match sorted.last() {
            Some((max, _)) if min >= 0 && *max <= 4 * sorted.len() as i64 + 65_536 => {
                let mut by_id = vec![0; *max as usize + 1];
                for (id, n) in sorted {
                    by_id[id as usize] = n;
                }
                Totals::ById(by_id)
            }
            _ => Totals::Sorted(sorted),
        }
    }

    fn of(&self, id: i64) -> u64 {
        match self {
            Totals::ById(v) => usize::try_from(id)
                .ok()
                .and_then(|i| v.get(i))
                .copied()
                .unwrap_or(0),
            Totals::Sorted(v) => match v.binary_search_by_key(&id, |(s, _)| *s) {
                Ok(i) => v[i].1,
                Err(_) => 0,
            },
        }
    }
}

impl Tokens {
    fn of(&mut self, ix: &Index, id: i64) -> Result<u64, IndexError> {
        if self.all.is_none() && self.left == 0 {
            self.all = Some(Totals::new(all_totals(ix)?));
        }
        if let Some(all) = &self.all {
            return Ok(all.of(id));
        }
        self.left -= 1;
        let total: Option<i64> = ix
            .conn
            .prepare_cached(
                "SELECT sum(input + output + cache_read + cache_write)
                 FROM session_tokens WHERE session = ?1",
            )
            .at(&ix.path)?
            .query_row([id], |r| r.get(0))
            .at(&ix.path)?;
        Ok(total.unwrap_or(0) as u64)
    }
}

/// Every session's tokens summed, in session order.
fn all_totals(ix: &Index) -> Result<Vec<(i64, u64)>, IndexError> {
    let mut out = Vec::new();
    ix.visit_session_totals(None, &mut |session, t| out.push((session, t.total())))?;
    Ok(out)
}

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
    let order = match q.order {
        SessionOrder::Created => format!("{STARTED} DESC, path"),
        SessionOrder::Updated => "updated_ms DESC, path".to_string(),
    };
    let select = format!(
        "SELECT id, session_id, agent, format, path, project, messages, updated_ms, {STARTED},
                substr(title, 1, {LISTED_PREFIX_CHARS}),
                substr(first_prompt, 1, {LISTED_PREFIX_CHARS})
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
        self.visit_listing_with(q, f, TOKENS_LOOKED_UP)
    }

    /// [`Index::visit_listing`], reading every session's tokens at once
    /// after `looked_up` lookups.
    fn visit_listing_with(
        &self,
        q: &ListingQuery,
        f: &mut dyn FnMut(&Listed<'_>),
        looked_up: usize,
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
        let mut tokens = Tokens {
            left: looked_up,
            all: None,
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
            let id = int(0)?.unwrap_or_default();
            let title: Option<Cow<'_, str>> = match listed_title_of_prefixes(text(9)?, text(10)?) {
                Some(t) => t,
                // A blank start, or a first line that may go on: the
                // whole texts (rare).
                None => self.whole_listed_title(id)?.map(Cow::Owned),
            };
            f(&Listed {
                session_id: text(1)?.unwrap_or_default(),
                agent: text(2)?.unwrap_or_default(),
                format: text(3)?.unwrap_or_default(),
                path: text(4)?.unwrap_or_default(),
                project: text(5)?,
                title: title.as_deref(),
                messages: int(6)?.unwrap_or_default() as u64,
                updated_ms: int(7)?,
                started_ms: int(8)?,
                tokens: tokens.of(self, id)?,
            });
            given += 1;
        }
        if q.limit.is_none_or(|n| given < n) {
            return Ok(given);
        }
        // Cut by the limit: the rest is counted, not read.
        if q.project.is_none() && q.started_since_ms.is_none() {
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

    /// The listed title of session `id` from its whole title and first
    /// prompt.
    fn whole_listed_title(&self, id: i64) -> Result<Option<String>, IndexError> {
        self.conn
            .prepare_cached("SELECT title, first_prompt FROM sessions WHERE id = ?1")
            .at(&self.path)?
            .query_row([id], |r| {
                let text = |i: usize| -> rusqlite::Result<Option<&str>> {
                    Ok(r.get_ref(i)?.as_str_or_null()?)
                };
                Ok(listed_title(text(0)?, text(1)?))
            })
            .at(&self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_are_found_by_id_whether_ids_are_dense_or_sparse() {
        let sorted = vec![(1, 10), (2, 20), (5, 50)];
        let dense = Totals::new(sorted.clone());
        assert!(matches!(dense, Totals::ById(_)));
        let sparse = Totals::Sorted(sorted);
        for t in [dense, sparse] {
            let got: Vec<u64> = [-1, 0, 1, 2, 3, 5, 6, i64::MAX].map(|id| t.of(id)).to_vec();
            assert_eq!(got, [0, 0, 10, 20, 0, 50, 0, 0]);
        }
        assert!(matches!(
            Totals::new(vec![(1, 1), (1 << 40, 2)]),
            Totals::Sorted(_)
        ));
        assert!(matches!(Totals::new(vec![(-5, 1)]), Totals::Sorted(_)));
        let mixed = Totals::new(vec![(-5, 1), (3, 2)]);
        assert!(matches!(mixed, Totals::Sorted(_)));
        assert_eq!((mixed.of(-5), mixed.of(3)), (1, 2));
    }

    #[test]
    fn tokens_read_at_once_are_the_tokens_looked_up() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = crate::conformance::sessions(1_750_000_000_000);
        let found = crate::conformance::write(&dir.path().join("s"), &sessions);
        let (mut ix, _) = Index::open(&dir.path().join("ix.sqlite")).unwrap();
        let p = crate::backend::UpdateParams { found };
        crate::Backend::update(&mut ix, &p, &mut |_| {}).unwrap();
        let q = ListingQuery {
            formats: vec!["json".into()],
            order: SessionOrder::Created,
            ..ListingQuery::default()
        };
        let listed = |looked_up: usize| {
            let mut rows = Vec::new();
            let n = ix
                .visit_listing_with(
                    &q,
                    &mut |l| rows.push((l.session_id.to_string(), l.tokens)),
                    looked_up,
                )
                .unwrap();
            (rows, n)
        };
        let one_by_one = listed(usize::MAX);
        assert_eq!(one_by_one.1, sessions.len());
        assert!(one_by_one.0.iter().any(|(_, t)| *t > 0));
        // All at once from the start, and after three lookups.
        assert_eq!(listed(0), one_by_one);
        assert_eq!(listed(3), one_by_one);
    }

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
        assert!(has(&ix, "sessions_listing"));
        assert!(!crate::schema::later_indexes_missing(&ix.conn, &path).unwrap());
        assert!(!ix.merge_pending().unwrap(), "nothing to do");
        // As an index of the version before was.
        ix.conn
            .execute_batch(
                "DROP INDEX sessions_listing;
                 CREATE INDEX sessions_started ON sessions(coalesce(created_ms, updated_ms) DESC, path);",
            )
            .unwrap();
        assert!(crate::schema::later_indexes_missing(&ix.conn, &path).unwrap());
        assert!(ix.merge_pending().unwrap());
        assert!(has(&ix, "sessions_listing"));
        assert!(!has(&ix, "sessions_started"));
        assert!(!ix.merge_pending().unwrap(), "done once");
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
                plan.contains("USING INDEX sessions_listing"),
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
