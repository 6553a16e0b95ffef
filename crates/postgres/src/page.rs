//! Pages of the team catalog for a session browser (`serve --db`): filters,
//! orders and totals in SQL, the values each filter can take, the subagent
//! files beside a session, and a session's bytes by path.

use crate::read::{info_of, INFO_COLUMNS};
use crate::{PgError, PgIndex};
use agentlog_index::{Facet, PageParams, SessionInfo, SessionPage};

impl PgIndex {
    /// Returns one page of the catalog (as
    /// [`agentlog_index::Index::session_page`]).
    pub fn session_page(&self, p: &PageParams) -> Result<SessionPage, PgError> {
        let agents: Vec<String> = p.agents.iter().map(|a| a.to_lowercase()).collect();
        let project: Option<String> = p
            .project
            .as_ref()
            .filter(|s| !s.is_empty())
            .map(|s| s.to_lowercase());
        let model: Option<String> = p.model.clone().filter(|s| !s.is_empty());
        let filter = "WHERE (cardinality($1::text[]) = 0 OR lower(s.agent) = ANY($1))
              AND ($2::text IS NULL OR strpos(lower(coalesce(s.project, '')), $2) > 0)
              AND ($3::text IS NULL OR EXISTS (
                   SELECT 1 FROM usage u WHERE u.session = s.id AND u.model = $3))
              AND ($4::bigint IS NULL OR s.updated_ms >= $4)
              AND ($5::bigint IS NULL OR s.updated_ms < $5)";
        let mut db = self.db()?;
        let total: i64 = db
            .query_one(
                &format!("SELECT count(*) FROM sessions s {filter}"),
                &[&agents, &project, &model, &p.since_ms, &p.until_ms],
            )
            .map_err(|e| self.err("counting the sessions of a page", &e))?
            .get(0);
        let limit = if p.limit == 0 { 50 } else { p.limit } as i64;
        let columns = INFO_COLUMNS
            .split(',')
            .map(|c| format!("s.{}", c.trim()))
            .collect::<Vec<_>>()
            .join(", ");
        let rows = db
            .query(
                &format!(
                    "SELECT {columns} FROM sessions s {filter}
                     ORDER BY {} LIMIT $6 OFFSET $7",
                    // Text sorts byte-wise, as SQLite's does.
                    p.sort.order_by(p.ascending, " COLLATE \"C\"")
                ),
                &[
                    &agents,
                    &project,
                    &model,
                    &p.since_ms,
                    &p.until_ms,
                    &limit,
                    &(p.offset as i64),
                ],
            )
            .map_err(|e| self.err("reading a page of sessions", &e))?;
        Ok(SessionPage {
            total: total as u64,
            sessions: rows.iter().map(info_of).collect(),
            // No kind on the server yet: every session is listed.
            others: 0,
        })
    }

    /// Returns the agents with their session counts, most first.
    pub fn agent_facets(&self) -> Result<Vec<Facet>, PgError> {
        self.facets(
            "SELECT agent, count(*) FROM sessions GROUP BY agent
             ORDER BY 2 DESC, agent COLLATE \"C\"",
            "counting sessions per agent",
        )
    }

    /// Returns the models that answered with the number of sessions each
    /// answered in, most first.
    pub fn model_facets(&self) -> Result<Vec<Facet>, PgError> {
        self.facets(
            "SELECT model, count(DISTINCT session) FROM usage WHERE model IS NOT NULL
             GROUP BY model ORDER BY 2 DESC, model COLLATE \"C\"",
            "counting sessions per model",
        )
    }

    fn facets(&self, sql: &str, what: &str) -> Result<Vec<Facet>, PgError> {
        let rows = self.db()?.query(sql, &[]).map_err(|e| self.err(what, &e))?;
        Ok(rows
            .iter()
            .map(|r| Facet {
                value: r.get(0),
                count: r.get::<_, i64>(1) as u64,
            })
            .collect())
    }

    /// Returns the sessions whose file lies under the folder `dir`, oldest
    /// first (as [`agentlog_index::Index::sessions_under`]).
    pub fn sessions_under(&self, dir: &str) -> Result<Vec<SessionInfo>, PgError> {
        let mut prefix = dir.trim_end_matches('/').to_string();
        prefix.push('/');
        let rows = self
            .db()?
            .query(
                &format!(
                    "SELECT {INFO_COLUMNS} FROM sessions WHERE starts_with(path, $1)
                     ORDER BY created_ms IS NULL, created_ms, path COLLATE \"C\" LIMIT 500"
                ),
                &[&prefix],
            )
            .map_err(|e| self.err("listing the sessions of a folder", &e))?;
        Ok(rows.iter().map(info_of).collect())
    }

    /// Returns the bytes pushed for the file at `path` (the most recently
    /// pushed when machines share the path).
    pub fn original_at(&self, path: &str) -> Result<Vec<u8>, PgError> {
        let row = self
            .db()?
            .query_opt(
                "SELECT id FROM files WHERE path = $1 ORDER BY pushed_at DESC, id DESC LIMIT 1",
                &[&path],
            )
            .map_err(|e| self.err("looking up a session file", &e))?;
        let Some(row) = row else {
            return Err(PgError::Data {
                url: self.url.clone(),
                message: format!("no session file {path} was pushed"),
            });
        };
        self.original(row.get(0))
    }
}
