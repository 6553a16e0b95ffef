//! The catalog: every indexed session with its metadata and counts.

use crate::error::SqlContext;
use crate::{Index, IndexError};
use agentlog_model::SessionKind;
use rusqlite::params;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// The columns of a catalog row, as [`info_row`] reads them.
const INFO_COLUMNS: &str = "id, session_id, agent, format, path, project, title, first_prompt,
     created_ms, updated_ms, entries, messages, user_messages, assistant_messages, tool_calls, kind";

/// [`INFO_COLUMNS`] without the title and the first prompt.
const BARE_COLUMNS: &str = "id, session_id, agent, format, path, project, NULL, NULL,
     created_ms, updated_ms, entries, messages, user_messages, assistant_messages, tool_calls, kind";

/// From this many paths on, [`Index::sessions_at`] reads the whole catalog
/// once rather than looking each path up.
const BULK_LOOKUPS: usize = 256;

/// Which sessions to list.
#[derive(Clone, Debug, Default)]
pub struct ListParams {
    /// Only these agents.
    pub agents: Vec<String>,
    /// Only projects containing one of these.
    pub projects: Vec<String>,
    /// Only sessions read as one of these formats (empty: all). A backend
    /// may give others too: the caller filters them out.
    pub formats: Vec<String>,
    /// Only sessions updated at or after this time.
    pub since_ms: Option<i64>,
    /// At most this many (0: all).
    pub limit: usize,
    /// Skip this many first (for pages).
    pub offset: usize,
    /// Which time orders the list (newest first).
    pub order: SessionOrder,
    /// Leave each session's `tokens` empty: listing every session of a
    /// large index is then a read of the catalog alone (see
    /// [`crate::Backend::sessions_at`] for the rows kept).
    pub without_tokens: bool,
    /// Only what filtering and sorting need, for a caller that filters,
    /// sorts and cuts the whole catalog itself and then reads the rows it
    /// keeps ([`crate::Backend::sessions_at`]): no tokens, no title or first
    /// prompt, in no particular order (a backend may still give more).
    pub bare: bool,
    /// Every column, in no particular order: for a caller that sorts the
    /// rows itself (a backend may still order them).
    pub unordered: bool,
    /// Only what a session list shows: `title` is the listed title
    /// ([`crate::title::listed_title`]) and `first_prompt` is left out;
    /// `tokens` is one row, every model's tokens summed, with no model
    /// name. A backend may give the whole row instead.
    pub brief: bool,
}

/// Which time orders a session list; newest first either way, sessions
/// without the time last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionOrder {
    /// The last change.
    #[default]
    Updated,
    /// The start: the creation time, or the last change for a session
    /// whose start is not known.
    Created,
}

/// Every session's tokens, in session order: each session's rows are
/// found by binary search and taken out (a hash map of them was a tenth of
/// listing every session).
struct TokensBySession {
    rows: Vec<(i64, Option<SessionTokens>)>,
    /// Where the last session taken ended: the catalog is mostly read in
    /// session order, and then the next session's rows start here.
    next: usize,
}

impl TokensBySession {
    /// Takes the tokens of session `id` (empty when it has none, or they
    /// were taken already).
    fn take(&mut self, id: i64) -> Vec<SessionTokens> {
        let after_last = self.next == 0 || self.rows[self.next - 1].0 < id;
        let start = match self.rows.get(self.next) {
            Some((s, _)) if *s == id => self.next,
            // A session without tokens between the last one and the next.
            Some((s, _)) if *s > id && after_last => return Vec::new(),
            None if after_last => return Vec::new(),
            _ => self.rows.partition_point(|(s, _)| *s < id),
        };
        let len = self.rows[start..].partition_point(|(s, _)| *s == id);
        self.next = start + len;
        self.rows[start..start + len]
            .iter_mut()
            .filter_map(|(_, t)| t.take())
            .collect()
    }
}

/// Tokens of one model in one session.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SessionTokens {
    /// The model (`unknown` when the file does not say).
    pub model: String,
    /// Responses.
    pub responses: u64,
    /// Input tokens not from cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache reads.
    pub cache_read: u64,
    /// Cache writes.
    pub cache_write: u64,
}

impl SessionTokens {
    /// Every token counted: input, output and cache (reads and writes).
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

/// One session of the catalog.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SessionInfo {
    /// The session id.
    pub session_id: String,
    /// The agent.
    pub agent: String,
    /// The format it was read as.
    pub format: String,
    /// The session file.
    pub path: String,
    /// The project (cwd).
    pub project: Option<String>,
    /// The title.
    pub title: Option<String>,
    /// The first real user prompt.
    pub first_prompt: Option<String>,
    /// Start (ms since the epoch).
    pub created_ms: Option<i64>,
    /// Last change (ms since the epoch).
    pub updated_ms: Option<i64>,
    /// Entries.
    pub entries: u64,
    /// User, assistant and system messages.
    pub messages: u64,
    /// User messages (prompts, not tool results).
    pub user_messages: u64,
    /// Assistant messages.
    pub assistant_messages: u64,
    /// Tool calls.
    pub tool_calls: u64,
    /// Tokens by model.
    pub tokens: Vec<SessionTokens>,
    /// What the session is: a conversation, a headless run, a subagent's
    /// transcript.
    pub kind: SessionKind,
}

impl SessionInfo {
    /// The start, as listings order and filter by it: the creation time,
    /// or else the last change.
    pub fn started_ms(&self) -> Option<i64> {
        self.created_ms.or(self.updated_ms)
    }
}

impl Index {
    /// Returns the sessions, most recently updated first.
    pub fn sessions(&self, p: &ListParams) -> Result<Vec<SessionInfo>, IndexError> {
        let mut out = Vec::new();
        self.visit_sessions(p, &mut |info| out.push(info))?;
        Ok(out)
    }

    /// Gives `f` the sessions [`Index::sessions`] returns, as they are read.
    pub fn visit_sessions(
        &self,
        p: &ListParams,
        f: &mut dyn FnMut(SessionInfo),
    ) -> Result<(), IndexError> {
        let projects = if p.projects.is_empty() {
            None
        } else {
            Some(self.projects_matching(&p.projects)?)
        };
        // Bare: no title or first prompt. `?2` (the order) always appears,
        // so that every variant takes the same parameters.
        let columns = if p.bare { BARE_COLUMNS } else { INFO_COLUMNS };
        // Unordered: sorting the rows here costs more than reading them.
        let order = if p.bare || p.unordered {
            ""
        } else {
            // SQLite puts NULL last in a descending order; `sessions_listed`
            // (read backwards) and `sessions_recent` hold these orders, so a
            // limited list reads only the rows it gives.
            if p.order == SessionOrder::Created {
                "ORDER BY coalesce(created_ms, updated_ms) DESC, path"
            } else {
                "ORDER BY updated_ms DESC, path"
            }
        };
        // The rows of a few formats (a third of the catalog or less) are
        // found through `sessions_format`; more are read faster in one
        // pass over the catalog (through that index, every row of ten
        // agents took three times as long as reading them all).
        let by_index = !p.formats.is_empty() && order.is_empty() && {
            let since = ListParams {
                since_ms: p.since_ms,
                ..ListParams::default()
            };
            let some = self.count_sessions(&ListParams {
                formats: p.formats.clone(),
                ..since.clone()
            })?;
            some * 3 <= self.count_sessions(&since)?
        };
        let (by_format, formats) = if by_index {
            (
                "format IN (SELECT value FROM json_each(?3))",
                serde_json::to_string(&p.formats).unwrap_or_default(),
            )
        } else {
            (
                "(?3 = '' OR instr(?3, char(31) || format || char(31)) > 0)",
                formats_key(&p.formats),
            )
        };
        let sql = format!(
            "SELECT {columns} FROM sessions
             WHERE (?1 IS NULL OR updated_ms >= ?1) AND ?2 IS NOT NULL AND {by_format}
             {order}"
        );
        let brief = p.brief && !p.bare;
        // A read of the whole catalog, once.
        let _scan = if p.limit == 0 && order.is_empty() {
            Some(crate::schema::ScanCache::new(&self.conn, &self.path)?)
        } else {
            None
        };
        let mut stmt = self.conn.prepare_cached(&sql).at(&self.path)?;
        let rows = stmt
            .query_map(
                params![p.since_ms, p.order == SessionOrder::Created, formats],
                if brief { brief_row } else { info_row },
            )
            .at(&self.path)?;
        // Every session's tokens: read in one go when the whole catalog is
        // listed, instead of a lookup per session; summed in the database
        // for a brief list.
        let wants_tokens = !p.without_tokens && !p.bare;
        let mut all_tokens = match (wants_tokens && p.limit == 0, brief) {
            (true, true) => Some(self.all_session_totals(by_index.then_some(&formats))?),
            (true, false) => Some(self.all_session_tokens()?),
            (false, _) => None,
        };
        let mut given = 0;
        let mut skip = p.offset;
        for row in rows {
            let (id, mut info) = row.at(&self.path)?;
            if !p.agents.is_empty() && !p.agents.iter().any(|a| a.eq_ignore_ascii_case(&info.agent))
            {
                continue;
            }
            if let Some(ps) = &projects {
                if !info.project.as_ref().is_some_and(|x| ps.contains(x)) {
                    continue;
                }
            }
            if skip > 0 {
                skip -= 1;
                continue;
            }
            if wants_tokens {
                info.tokens = match &mut all_tokens {
                    Some(all) => all.take(id),
                    None if brief => summed(self.session_tokens(id)?),
                    None => self.session_tokens(id)?,
                };
            }
            f(info);
            given += 1;
            if p.limit > 0 && given >= p.limit {
                break;
            }
        }
        Ok(())
    }

    /// Returns how many sessions match `p`, its `limit` and `offset` left
    /// aside.
    pub fn count_sessions(&self, p: &ListParams) -> Result<usize, IndexError> {
        if !p.agents.is_empty() || !p.projects.is_empty() {
            // Matched as [`Index::sessions`] matches them.
            return crate::backend::count_listed(p, |all| self.sessions(all));
        }
        // The formats as a list SQLite looks up in `sessions_format`, which
        // holds the time too: the count reads that index alone (scanning
        // the catalog for them was 60 ms of `ls --limit 50` at 10 GB).
        let by_format = if p.formats.is_empty() {
            ""
        } else {
            "AND format IN (SELECT value FROM json_each(?2))"
        };
        let formats = serde_json::to_string(&p.formats).unwrap_or_default();
        let n: i64 = self
            .conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM sessions
                 WHERE (?1 IS NULL OR updated_ms >= ?1) AND ?2 IS NOT NULL {by_format}"
            ))
            .at(&self.path)?
            .query_row(params![p.since_ms, formats], |r| r.get(0))
            .at(&self.path)?;
        Ok(n as usize)
    }

    /// Returns the catalog row (tokens included) of the session of each
    /// file of `paths`, `None` for a path not in the catalog.
    pub fn sessions_at(&self, paths: &[String]) -> Result<Vec<Option<SessionInfo>>, IndexError> {
        // One read transaction for all the statements below, not one each
        // (each takes and drops the database's shared lock: a third of
        // listing every session). Inside a caller's transaction, that one.
        let _read = if self.conn.is_autocommit() {
            Some(self.conn.unchecked_transaction().at(&self.path)?)
        } else {
            None
        };
        if paths.len() >= BULK_LOOKUPS {
            return self.sessions_at_in_one_read(paths);
        }
        paths
            .iter()
            .map(|p| self.catalog_row_at(p))
            .collect::<Result<Vec<_>, _>>()
    }

    /// [`Index::sessions_at`] for many paths: the whole catalog and every
    /// session's tokens in one read each, instead of three lookups a path.
    fn sessions_at_in_one_read(
        &self,
        paths: &[String],
    ) -> Result<Vec<Option<SessionInfo>>, IndexError> {
        use std::collections::hash_map::Entry;
        let _scan = crate::schema::ScanCache::new(&self.conn, &self.path)?;
        let mut tokens = self.all_session_tokens()?;
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {INFO_COLUMNS} FROM sessions"))
            .at(&self.path)?;
        // Path -> its session; a path several sessions share (a database
        // holding many) is looked up on its own, as the single lookup does.
        let mut by_path: HashMap<String, (i64, SessionInfo)> = HashMap::new();
        let mut shared = HashSet::new();
        for row in stmt.query_map([], info_row).at(&self.path)? {
            let (id, mut info) = row.at(&self.path)?;
            match by_path.entry(std::mem::take(&mut info.path)) {
                Entry::Occupied(e) => {
                    shared.insert(e.key().clone());
                }
                Entry::Vacant(e) => {
                    e.insert((id, info));
                }
            }
        }
        let mut out = Vec::with_capacity(paths.len());
        let mut given = HashSet::new();
        for p in paths {
            if shared.contains(p) {
                out.push(self.catalog_row_at(p)?);
                continue;
            }
            match by_path.remove(p) {
                Some((id, mut info)) => {
                    info.path.clone_from(p);
                    info.tokens = tokens.take(id);
                    given.insert(p.as_str());
                    out.push(Some(info));
                }
                // Asked for a second time.
                None if given.contains(p.as_str()) => out.push(self.catalog_row_at(p)?),
                // Not in the catalog, which was read whole.
                None => out.push(None),
            }
        }
        Ok(out)
    }

    /// The catalog row (tokens included) of the session of the file `p`.
    fn catalog_row_at(&self, p: &str) -> Result<Option<SessionInfo>, IndexError> {
        use rusqlite::OptionalExtension;
        // By the file's row (its path is indexed; a session has its
        // file's id), else by the catalog's path.
        let mut row = self
            .conn
            .prepare_cached(&format!(
                "SELECT {INFO_COLUMNS} FROM sessions
                 WHERE id = (SELECT id FROM files WHERE path = ?1) AND path = ?1"
            ))
            .at(&self.path)?
            .query_row([p], info_row)
            .optional()
            .at(&self.path)?;
        if row.is_none() {
            row = self
                .conn
                .prepare_cached(&format!(
                    "SELECT {INFO_COLUMNS} FROM sessions WHERE path = ?1"
                ))
                .at(&self.path)?
                .query_row([p], info_row)
                .optional()
                .at(&self.path)?;
        }
        Ok(match row {
            Some((id, mut info)) => {
                info.tokens = self.session_tokens(id)?;
                Some(info)
            }
            None => None,
        })
    }

    /// Every session's tokens, by session.
    fn all_session_tokens(&self) -> Result<TokensBySession, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT session, model, responses, input, output, cache_read, cache_write
                 FROM session_tokens ORDER BY session, model",
            )
            .at(&self.path)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, Some(tokens_row(r, 1)?))))
            .at(&self.path)?;
        let rows = rows
            .map(|r| r.at(&self.path))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TokensBySession { rows, next: 0 })
    }

    /// Every session's tokens summed over its models, by session; only the
    /// sessions of `formats` (a JSON list) when it is given. Summed here:
    /// SQLite's `GROUP BY` took three times as long as reading the rows.
    fn all_session_totals(&self, formats: Option<&String>) -> Result<TokensBySession, IndexError> {
        let of_formats = if formats.is_some() {
            "WHERE session IN (SELECT id FROM sessions
                               WHERE format IN (SELECT value FROM json_each(?1)))"
        } else {
            "WHERE ?1 IS NULL"
        };
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT session, responses, input, output, cache_read, cache_write
                 FROM session_tokens {of_formats} ORDER BY session"
            ))
            .at(&self.path)?;
        let mut rows = stmt.query([formats]).at(&self.path)?;
        let mut out: Vec<(i64, Option<SessionTokens>)> = Vec::new();
        while let Some(r) = rows.next().at(&self.path)? {
            let session: i64 = r.get(0).at(&self.path)?;
            let n = |i: usize| r.get::<_, i64>(i).map(|v| v as u64).at(&self.path);
            let t = SessionTokens {
                model: String::new(),
                responses: n(1)?,
                input: n(2)?,
                output: n(3)?,
                cache_read: n(4)?,
                cache_write: n(5)?,
            };
            match out.last_mut() {
                Some((s, Some(all))) if *s == session => add_counts(all, &t),
                _ => out.push((session, Some(t))),
            }
        }
        Ok(TokensBySession { rows: out, next: 0 })
    }

    fn session_tokens(&self, id: i64) -> Result<Vec<SessionTokens>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT model, responses, input, output, cache_read, cache_write
                 FROM session_tokens WHERE session = ?1 ORDER BY model",
            )
            .at(&self.path)?;
        let rows = stmt.query_map([id], |r| tokens_row(r, 0)).at(&self.path)?;
        rows.map(|r| r.at(&self.path)).collect()
    }

    /// Returns the sessions whose id starts with `p.prefix`: the exact id
    /// first, then the most recently updated.
    pub fn resolve(
        &self,
        p: &crate::backend::ResolveParams,
    ) -> Result<Vec<crate::backend::SessionRef>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT session_id, agent, format, path, updated_ms FROM sessions
                 WHERE substr(session_id, 1, length(?1)) = ?1
                 ORDER BY session_id <> ?1, updated_ms IS NULL, updated_ms DESC, path
                 LIMIT ?2",
            )
            .at(&self.path)?;
        let limit = if p.limit == 0 { -1 } else { p.limit as i64 };
        let rows = stmt
            .query_map(params![p.prefix, limit], |r| {
                Ok(crate::backend::SessionRef {
                    session_id: r.get(0)?,
                    agent: r.get(1)?,
                    format: r.get(2)?,
                    path: r.get(3)?,
                    updated_ms: r.get(4)?,
                })
            })
            .at(&self.path)?;
        rows.map(|r| r.at(&self.path)).collect()
    }

    /// Returns (documents, sessions, files with errors) counts.
    pub fn counts(&self) -> Result<(u64, u64, u64), IndexError> {
        // The documents as the sessions count them: counting `docs` itself
        // reads its whole smallest index (19 MB at 1 GB, for every
        // `agentlog index`).
        self.conn
            .query_row(
                "SELECT (SELECT coalesce(sum(entries), 0) FROM sessions),
                        (SELECT count(*) FROM sessions),
                        (SELECT count(*) FROM files WHERE error IS NOT NULL)",
                [],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)? as u64,
                        r.get::<_, i64>(1)? as u64,
                        r.get::<_, i64>(2)? as u64,
                    ))
                },
            )
            .at(&self.path)
    }

    /// Returns the number of files the index knows (read or failed).
    pub fn file_state_count(&self) -> Result<u64, IndexError> {
        self.conn
            .query_row("SELECT count(*) FROM files", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .at(&self.path)
    }

    /// Returns the files whose last read failed, with the error.
    pub fn failed_files(&self) -> Result<Vec<(String, String)>, IndexError> {
        let mut stmt = self
            .conn
            // `+path`: ordered by the path index, SQLite would visit every
            // file's row; the partial index of failed files finds the few.
            .prepare_cached("SELECT path, error FROM files WHERE error IS NOT NULL ORDER BY +path")
            .at(&self.path)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .at(&self.path)?;
        rows.map(|r| r.at(&self.path)).collect()
    }

    /// Returns the entry ids indexed for the session file at `path`, in
    /// line order (for tests of incremental updates).
    pub fn entry_ids(&self, path: &str) -> Result<Vec<String>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT d.entry_id FROM docs d JOIN sessions s ON s.id = d.session
                 WHERE s.path = ?1 ORDER BY d.line, d.id",
            )
            .at(&self.path)?;
        let rows = stmt.query_map([path], |r| r.get(0)).at(&self.path)?;
        rows.map(|r| r.at(&self.path)).collect()
    }
}

/// The tokens of one model, from the row's columns `at..at + 6`.
fn tokens_row(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<SessionTokens> {
    Ok(SessionTokens {
        model: r.get(at)?,
        responses: r.get::<_, i64>(at + 1)? as u64,
        input: r.get::<_, i64>(at + 2)? as u64,
        output: r.get::<_, i64>(at + 3)? as u64,
        cache_read: r.get::<_, i64>(at + 4)? as u64,
        cache_write: r.get::<_, i64>(at + 5)? as u64,
    })
}

/// The tokens of every model of a session as one row without a model
/// name (none when there are none).
fn summed(tokens: Vec<SessionTokens>) -> Vec<SessionTokens> {
    if tokens.is_empty() {
        return tokens;
    }
    let mut all = SessionTokens::default();
    for t in &tokens {
        add_counts(&mut all, t);
    }
    vec![all]
}

/// Adds the counts of `t` to `all` (not its model).
fn add_counts(all: &mut SessionTokens, t: &SessionTokens) {
    all.responses += t.responses;
    all.input += t.input;
    all.output += t.output;
    all.cache_read += t.cache_read;
    all.cache_write += t.cache_write;
}

/// [`info_row`] as a brief list gives it ([`ListParams::brief`]): the
/// listed title, read from the row in place, and no first prompt.
fn brief_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, SessionInfo)> {
    let text = |i: usize| -> rusqlite::Result<Option<&str>> { Ok(r.get_ref(i)?.as_str_or_null()?) };
    let title = crate::title::listed_title(text(6)?, text(7)?);
    row_with(r, title, None)
}

/// Reads a catalog row ([`INFO_COLUMNS`] or [`BARE_COLUMNS`]), tokens
/// left empty.
fn info_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, SessionInfo)> {
    row_with(r, r.get(6)?, r.get(7)?)
}

/// A catalog row with this title and first prompt.
fn row_with(
    r: &rusqlite::Row<'_>,
    title: Option<String>,
    first_prompt: Option<String>,
) -> rusqlite::Result<(i64, SessionInfo)> {
    Ok((
        r.get::<_, i64>(0)?,
        SessionInfo {
            session_id: r.get(1)?,
            agent: r.get(2)?,
            format: r.get(3)?,
            path: r.get(4)?,
            project: r.get(5)?,
            title,
            first_prompt,
            created_ms: r.get(8)?,
            updated_ms: r.get(9)?,
            entries: r.get::<_, i64>(10)? as u64,
            messages: r.get::<_, i64>(11)? as u64,
            user_messages: r.get::<_, i64>(12)? as u64,
            assistant_messages: r.get::<_, i64>(13)? as u64,
            tool_calls: r.get::<_, i64>(14)? as u64,
            tokens: Vec::new(),
            kind: kind_of(r.get_ref(15)?.as_str_or_null()?),
        },
    ))
}

/// The kind the catalog's `kind` column holds (NULL: a conversation).
pub(crate) fn kind_of(column: Option<&str>) -> SessionKind {
    column.and_then(SessionKind::parse).unwrap_or_default()
}

/// The formats as one string, each between two unit separators (`""` for
/// none), as the catalog's queries match them.
pub(crate) fn formats_key(formats: &[String]) -> String {
    if formats.is_empty() {
        return String::new();
    }
    let mut f = String::from('\u{1f}');
    for name in formats {
        f.push_str(name);
        f.push('\u{1f}');
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_taken_by_session_in_any_order() {
        let t = |model: &str, input| SessionTokens {
            model: model.into(),
            input,
            ..SessionTokens::default()
        };
        let rows = vec![
            (2, Some(t("a", 1))),
            (2, Some(t("b", 2))),
            (5, Some(t("a", 3))),
            (7, Some(t("a", 4))),
            (7, Some(t("c", 5))),
        ];
        let inputs = |v: Vec<SessionTokens>| v.iter().map(|t| t.input).collect::<Vec<_>>();
        // In order, with sessions without tokens before, between and after.
        let mut all = TokensBySession {
            rows: rows.clone(),
            next: 0,
        };
        let got: Vec<Vec<u64>> = (1..=9).map(|id| inputs(all.take(id))).collect();
        let want: Vec<Vec<u64>> = vec![
            vec![],
            vec![1, 2],
            vec![],
            vec![],
            vec![3],
            vec![],
            vec![4, 5],
            vec![],
            vec![],
        ];
        assert_eq!(got, want);
        // Out of order, and twice.
        let mut all = TokensBySession { rows, next: 0 };
        for (id, want) in [
            (7, vec![4, 5]),
            (2, vec![1, 2]),
            (6, vec![]),
            (5, vec![3]),
            (1, vec![]),
            (7, vec![]),
            (8, vec![]),
        ] {
            assert_eq!(inputs(all.take(id)), want, "{id}");
        }
    }
}
