//! The PostgreSQL backend behind [`agentlog_index::Backend`].
//!
//! `update` is a push as this machine (see [`PgIndex::set_identity`])
//! followed by removing this machine's files that are no longer listed;
//! other machines' sessions are never touched.

use crate::{PgError, PgIndex, PushOptions};
use agentlog_index::backend::{BackendStatus, ResolveParams, SessionRef, UpdateParams};
use agentlog_index::{
    Backend, Facet, Hit, IndexError, ListParams, PageParams, Progress, SearchParams, SessionInfo,
    SessionPage, Stats, StatsParams, UpdateReport,
};

impl From<PgError> for IndexError {
    fn from(e: PgError) -> IndexError {
        match e {
            PgError::Index(e) => e,
            e => IndexError::Backend {
                backend: "postgres",
                message: e.to_string(),
            },
        }
    }
}

impl PgIndex {
    /// Returns the sessions whose id starts with `p.prefix`: an exact id
    /// first, then the most recently updated.
    pub fn resolve(&self, p: &ResolveParams) -> Result<Vec<SessionRef>, PgError> {
        let limit: Option<i64> = (p.limit > 0).then_some(p.limit as i64);
        let rows = self
            .db()?
            .query(
                "SELECT session_id, agent, format, path, updated_ms FROM sessions
                 WHERE starts_with(session_id, $1)
                 ORDER BY session_id <> $1, updated_ms IS NULL, updated_ms DESC,
                          path COLLATE \"C\"
                 LIMIT $2",
                &[&p.prefix, &limit],
            )
            .map_err(|e| self.err("resolving a session id", &e))?;
        Ok(rows
            .into_iter()
            .map(|r| SessionRef {
                session_id: r.get(0),
                agent: r.get(1),
                format: r.get(2),
                path: r.get(3),
                updated_ms: r.get(4),
            })
            .collect())
    }

    /// Removes this machine's files (with their sessions, entries, usage
    /// and bytes) whose paths are not in `keep`; returns how many.
    pub fn remove_missing(&self, machine: &str, keep: &[String]) -> Result<usize, PgError> {
        let mut conn = self.db()?;
        let mut tx = conn
            .transaction()
            .map_err(|e| self.err("starting the transaction", &e))?;
        // Their responses may be counted elsewhere once they are gone.
        let recount: Vec<String> = tx
            .query_one(
                "SELECT coalesce(array_agg(DISTINCT u.response_id), '{}')
                 FROM usage u JOIN files f ON f.id = u.session
                 WHERE f.machine = $1 AND NOT (f.path = ANY($2)) AND u.response_id IS NOT NULL",
                &[&machine, &keep],
            )
            .map_err(|e| self.err("reading the responses of files that are gone", &e))?
            .get(0);
        if !recount.is_empty() {
            // Before deleting (see agentlog_lock_responses).
            tx.execute("SELECT agentlog_lock_responses($1)", &[&recount])
                .map_err(|e| self.err("waiting for the responses of files that are gone", &e))?;
        }
        let n = tx
            .execute(
                "DELETE FROM files WHERE machine = $1 AND NOT (path = ANY($2))",
                &[&machine, &keep],
            )
            .map_err(|e| self.err("removing files that are gone", &e))?;
        if !recount.is_empty() {
            tx.execute("SELECT agentlog_recount($1)", &[&recount])
                .map_err(|e| self.err("counting the responses left", &e))?;
        }
        tx.commit()
            .map_err(|e| self.err("committing the removal", &e))?;
        Ok(n as usize)
    }
}

impl Backend for PgIndex {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn status(&self) -> Result<BackendStatus, IndexError> {
        let (entries, sessions, files) = self.counts()?;
        Ok(BackendStatus {
            sessions,
            entries,
            files,
            failed_files: 0,
        })
    }

    fn list_sessions(&self, p: &ListParams) -> Result<Vec<SessionInfo>, IndexError> {
        Ok(self.sessions(p)?)
    }

    fn count_sessions(&self, p: &ListParams) -> Result<usize, IndexError> {
        Ok(PgIndex::count_sessions(self, p)?)
    }

    fn resolve_session(&self, p: &ResolveParams) -> Result<Vec<SessionRef>, IndexError> {
        Ok(self.resolve(p)?)
    }

    fn update(
        &mut self,
        p: &UpdateParams,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<UpdateReport, IndexError> {
        let opts = PushOptions {
            machine: self.machine.clone(),
            user: self.user.clone(),
            redact: false,
        };
        let r = self.push(&p.found, &opts, &mut |pp| {
            progress(Progress {
                done: pp.done,
                total: pp.total,
                ..Progress::default()
            })
        })?;
        let keep: Vec<String> = p
            .found
            .iter()
            .map(|f| f.path.to_string_lossy().into_owned())
            .collect();
        let removed = self.remove_missing(&opts.machine, &keep)?;
        Ok(UpdateReport {
            files: r.files,
            unchanged: r.unchanged,
            read_full: r.sent_whole,
            appended: r.appended,
            removed,
            failed: r.skipped.len(),
            entries: r.entries,
            bytes_read: r.bytes,
            diagnostics: 0,
        })
    }

    fn search(&self, p: &SearchParams) -> Result<Vec<Hit>, IndexError> {
        Ok(PgIndex::search(self, p)?)
    }

    fn count_matches(&self, p: &SearchParams, cap: u64) -> Result<u64, IndexError> {
        Ok(PgIndex::count_matches(self, p, cap)?)
    }

    fn search_and_count(
        &self,
        p: &SearchParams,
        cap: u64,
    ) -> Result<(Vec<Hit>, Option<u64>), IndexError> {
        let (hits, n) = PgIndex::search_and_count(self, p, cap)?;
        Ok((hits, Some(n)))
    }

    fn sessions_at(&self, paths: &[String]) -> Result<Vec<Option<SessionInfo>>, IndexError> {
        Ok(PgIndex::sessions_at(self, paths)?)
    }

    fn session_page(&self, p: &PageParams) -> Result<SessionPage, IndexError> {
        Ok(PgIndex::session_page(self, p)?)
    }

    fn agent_facets(&self) -> Result<Vec<Facet>, IndexError> {
        Ok(PgIndex::agent_facets(self)?)
    }

    fn model_facets(&self) -> Result<Vec<Facet>, IndexError> {
        Ok(PgIndex::model_facets(self)?)
    }

    fn sessions_under(&self, dir: &str) -> Result<Vec<SessionInfo>, IndexError> {
        Ok(PgIndex::sessions_under(self, dir)?)
    }

    /// The bytes pushed (the server never reads its own disk for a
    /// session).
    fn original(&self, path: &str) -> Result<Option<Vec<u8>>, IndexError> {
        Ok(Some(PgIndex::original_at(self, path)?))
    }

    fn stats(&self, p: &StatsParams) -> Result<Stats, IndexError> {
        Ok(PgIndex::stats(self, p)?)
    }

    fn failed_files(&self) -> Result<Vec<(String, String)>, IndexError> {
        Ok(Vec::new())
    }
}
