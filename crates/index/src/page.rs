//! One page of the catalog with filters, a sort order, the total count and
//! the values each filter can take: what a session browser shows.
//!
//! Everything is done by SQLite over the `sessions` table and its indexes,
//! so a page of a 100,000-session catalog costs about what one of a
//! hundred does (no session file is read).

use crate::error::SqlContext;
use crate::{Index, IndexError, SessionInfo};
use rusqlite::types::Value as SqlValue;
use serde::Serialize;

/// The order of a catalog page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SortBy {
    /// Most recently updated first.
    #[default]
    Updated,
    /// Most recently started first.
    Created,
    /// Most messages first.
    Messages,
    /// Agent name, then most recent.
    Agent,
    /// Project, then most recent.
    Project,
}

impl SortBy {
    /// Parses `updated`, `created`, `messages`, `agent` or `project`.
    pub fn parse(s: &str) -> Option<SortBy> {
        match s {
            "updated" => Some(SortBy::Updated),
            "created" => Some(SortBy::Created),
            "messages" => Some(SortBy::Messages),
            "agent" => Some(SortBy::Agent),
            "project" => Some(SortBy::Project),
            _ => None,
        }
    }

    /// Returns the `ORDER BY` terms of this order over the catalog aliased
    /// `s` (the same on every backend), text compared with `collate` (`""`
    /// for SQLite's byte order; ` COLLATE "C"` gives PostgreSQL the same).
    pub fn order_by(self, ascending: bool, collate: &str) -> String {
        let dir = if ascending { "ASC" } else { "DESC" };
        let key = match self {
            SortBy::Updated => format!("s.updated_ms IS NULL, s.updated_ms {dir}"),
            SortBy::Created => format!("s.created_ms IS NULL, s.created_ms {dir}"),
            SortBy::Messages => format!("s.messages {dir}"),
            SortBy::Agent => format!("s.agent{collate} {dir}, s.updated_ms DESC"),
            SortBy::Project => {
                format!("s.project IS NULL, s.project{collate} {dir}, s.updated_ms DESC")
            }
        };
        format!("{key}, s.id DESC")
    }
}

/// Which page of which sessions.
#[derive(Clone, Debug, Default)]
pub struct PageParams {
    /// Only these agents (any of them).
    pub agents: Vec<String>,
    /// Only projects containing this text (case-insensitive).
    pub project: Option<String>,
    /// Only sessions with a response from this model.
    pub model: Option<String>,
    /// Only sessions updated at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Only sessions updated before this time (ms since the epoch).
    pub until_ms: Option<i64>,
    /// The order.
    pub sort: SortBy,
    /// Reverse the order (oldest, fewest, A to Z first).
    pub ascending: bool,
    /// Sessions skipped before the page.
    pub offset: usize,
    /// Sessions on the page (0: 50).
    pub limit: usize,
    /// Only conversations: no headless run, no subagent transcript
    /// ([`SessionPage::others`] counts them). A backend that does not know
    /// what its sessions are lists them all.
    pub conversations_only: bool,
}

/// One page of the catalog.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SessionPage {
    /// Sessions matching the filters, in all.
    pub total: u64,
    /// The sessions of this page (without per-model tokens).
    pub sessions: Vec<SessionInfo>,
    /// Sessions matching the filters left out for their kind (headless
    /// runs, subagent transcripts; [`PageParams::conversations_only`]).
    pub others: u64,
}

/// A filter value and how many sessions have it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Facet {
    /// The value.
    pub value: String,
    /// Sessions with it.
    pub count: u64,
}

/// `s` with the characters LIKE gives a meaning (`%`, `_` and the escape
/// `\`) escaped, to match as written.
fn like_escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

impl Index {
    /// Returns one page of the catalog for `p`.
    pub fn session_page(&self, p: &PageParams) -> Result<SessionPage, IndexError> {
        let mut clauses = Vec::new();
        let mut args: Vec<SqlValue> = Vec::new();
        if !p.agents.is_empty() {
            let marks: Vec<&str> = p.agents.iter().map(|_| "?").collect();
            clauses.push(format!("s.agent IN ({})", marks.join(",")));
            args.extend(p.agents.iter().map(|a| SqlValue::Text(a.to_lowercase())));
        }
        if let Some(project) = p.project.as_ref().filter(|s| !s.is_empty()) {
            // Part of the path, ASCII case-insensitive: LIKE compares in
            // place, where lower() made a string of every row's path.
            clauses.push("s.project LIKE ? ESCAPE '\\'".into());
            args.push(SqlValue::Text(format!("%{}%", like_escaped(project))));
        }
        if let Some(model) = p.model.as_ref().filter(|s| !s.is_empty()) {
            clauses.push(
                "EXISTS (SELECT 1 FROM usage u WHERE u.session = s.id AND u.model = ?)".into(),
            );
            args.push(SqlValue::Text(model.clone()));
        }
        if let Some(t) = p.since_ms {
            clauses.push("s.updated_ms >= ?".into());
            args.push(SqlValue::Integer(t));
        }
        if let Some(t) = p.until_ms {
            clauses.push("s.updated_ms < ?".into());
            args.push(SqlValue::Integer(t));
        }
        let where_of = |clauses: &[String]| {
            if clauses.is_empty() {
                String::new()
            } else {
                format!("WHERE {}", clauses.join(" AND "))
            }
        };
        let count = |filter: &str| -> Result<i64, IndexError> {
            self.conn
                .prepare_cached(&format!("SELECT count(*) FROM sessions s {filter}"))
                .at(&self.path)?
                .query_row(rusqlite::params_from_iter(args.iter()), |r| r.get(0))
                .at(&self.path)
        };
        let every = where_of(&clauses);
        if p.conversations_only {
            clauses.push("s.kind IS NULL".into());
        }
        let filter = where_of(&clauses);
        let total = count(&filter)?;
        let others = if p.conversations_only {
            (count(&every)? - total).max(0) as u64
        } else {
            0
        };
        let limit = if p.limit == 0 { 50 } else { p.limit };
        // The page's ids first, then their rows: sorting every matching row
        // whole (paths, titles, prompts) to keep fifty took a filtered list
        // of 100,000 sessions 200 ms; sorting ids and keys takes a fraction.
        let order = p.sort.order_by(p.ascending, "");
        let sql = format!(
            "SELECT s.session_id, s.agent, s.format, s.path, s.project, s.title, s.first_prompt,
                    s.created_ms, s.updated_ms, s.entries, s.messages, s.user_messages,
                    s.assistant_messages, s.tool_calls, s.kind
             FROM sessions s
             WHERE s.id IN (SELECT s.id FROM sessions s {filter} ORDER BY {order}
                            LIMIT {limit} OFFSET {})
             ORDER BY {order}",
            p.offset
        );
        let mut stmt = self.conn.prepare_cached(&sql).at(&self.path)?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), row_info)
            .at(&self.path)?;
        let sessions = rows
            .map(|r| r.at(&self.path))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SessionPage {
            total: total as u64,
            sessions,
            others,
        })
    }

    /// Returns the agents, with their session counts, most sessions first.
    pub fn agent_facets(&self) -> Result<Vec<Facet>, IndexError> {
        self.facets("SELECT agent, count(*) FROM sessions GROUP BY agent ORDER BY 2 DESC, 1")
    }

    /// Returns the models that answered, with the number of sessions each
    /// answered in, most sessions first.
    pub fn model_facets(&self) -> Result<Vec<Facet>, IndexError> {
        self.facets(
            "SELECT model, count(DISTINCT session) FROM usage WHERE model IS NOT NULL
             GROUP BY model ORDER BY 2 DESC, 1",
        )
    }

    fn facets(&self, sql: &str) -> Result<Vec<Facet>, IndexError> {
        let mut stmt = self.conn.prepare_cached(sql).at(&self.path)?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Facet {
                    value: r.get(0)?,
                    count: r.get::<_, i64>(1)? as u64,
                })
            })
            .at(&self.path)?;
        rows.map(|r| r.at(&self.path)).collect()
    }

    /// Returns the session file rows whose session id is exactly `id`:
    /// (path, format).
    pub fn session_paths(&self, id: &str) -> Result<Vec<(String, String)>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT path, format FROM sessions WHERE session_id = ?1 ORDER BY updated_ms DESC",
            )
            .at(&self.path)?;
        let rows = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .at(&self.path)?;
        rows.map(|r| r.at(&self.path)).collect()
    }

    /// Returns the catalog row of the session file at `path`.
    pub fn session_at(&self, path: &str) -> Result<Option<SessionInfo>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT session_id, agent, format, path, project, title, first_prompt,
                        created_ms, updated_ms, entries, messages, user_messages,
                        assistant_messages, tool_calls, kind
                 FROM sessions WHERE path = ?1 LIMIT 1",
            )
            .at(&self.path)?;
        let mut rows = stmt.query_map([path], row_info).at(&self.path)?;
        rows.next().transpose().at(&self.path)
    }
}

impl Index {
    /// Brings the index up to date with just these files (a session being
    /// watched), leaving every other file's rows as they are: a grown
    /// append-only file is read from where the last update stopped.
    pub fn update_files(
        &mut self,
        found: &[agentlog_formats::discover::Found],
    ) -> Result<crate::UpdateReport, IndexError> {
        let mut plan = self.plan(found)?;
        plan.removed.clear();
        self.apply(plan, &mut |_| {})
    }
}

impl Index {
    /// Returns the sessions whose file is under the directory `dir` (for
    /// the subagent files kept beside a session), oldest first.
    pub fn sessions_under(&self, dir: &str) -> Result<Vec<SessionInfo>, IndexError> {
        let mut prefix = dir.trim_end_matches('/').to_string();
        prefix.push('/');
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT session_id, agent, format, path, project, title, first_prompt,
                        created_ms, updated_ms, entries, messages, user_messages,
                        assistant_messages, tool_calls, kind
                 FROM sessions WHERE substr(path, 1, length(?1)) = ?1
                 ORDER BY created_ms IS NULL, created_ms, path LIMIT 500",
            )
            .at(&self.path)?;
        let rows = stmt.query_map([prefix], row_info).at(&self.path)?;
        rows.map(|r| r.at(&self.path)).collect()
    }
}

/// Maps a row of the columns `session_id, agent, format, path, project,
/// title, first_prompt, created_ms, updated_ms, entries, messages,
/// user_messages, assistant_messages, tool_calls, kind`.
fn row_info(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionInfo> {
    Ok(SessionInfo {
        session_id: r.get(0)?,
        agent: r.get(1)?,
        format: r.get(2)?,
        path: r.get(3)?,
        project: r.get(4)?,
        title: r.get(5)?,
        first_prompt: r.get(6)?,
        created_ms: r.get(7)?,
        updated_ms: r.get(8)?,
        entries: r.get::<_, i64>(9)? as u64,
        messages: r.get::<_, i64>(10)? as u64,
        user_messages: r.get::<_, i64>(11)? as u64,
        assistant_messages: r.get::<_, i64>(12)? as u64,
        tool_calls: r.get::<_, i64>(13)? as u64,
        tokens: Vec::new(),
        kind: crate::catalog::kind_of(r.get_ref(14)?.as_str_or_null()?),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_first_page_in_the_default_order_reads_an_index_not_every_session() {
        let dir = tempfile::tempdir().unwrap();
        let (mut ix, _) = Index::open(&dir.path().join("ix.sqlite")).unwrap();
        // Any update adds the indexes that came after the schema.
        ix.update(&[], &mut |_| {}).unwrap();
        let sql = format!(
            "EXPLAIN QUERY PLAN SELECT s.session_id FROM sessions s ORDER BY {} LIMIT 50",
            SortBy::Updated.order_by(false, "")
        );
        let plan: Vec<String> = ix
            .conn
            .prepare(&sql)
            .unwrap()
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            plan.iter()
                .any(|p| p.contains("USING INDEX sessions_order")),
            "{plan:?}"
        );
        assert!(!plan.iter().any(|p| p.contains("TEMP B-TREE")), "{plan:?}");
    }
}
