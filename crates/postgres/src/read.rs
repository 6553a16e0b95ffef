//! The catalog on the server, and the original bytes of its sessions.

use crate::{PgError, PgIndex};
use agentlog_index::{ListParams, SessionInfo, SessionTokens};
use std::io::Read;

/// The catalog columns [`info_of`] maps, after the row id (`id`).
pub(crate) const INFO_COLUMNS: &str = "id, session_id, agent, format, path, project, title,
    first_prompt, created_ms, updated_ms, entries, messages, user_messages,
    assistant_messages, tool_calls";

/// Maps a row of `id` and the columns of [`INFO_COLUMNS`] (tokens left
/// empty).
pub(crate) fn info_of(r: &postgres::Row) -> SessionInfo {
    SessionInfo {
        session_id: r.get(1),
        agent: r.get(2),
        format: r.get(3),
        path: r.get(4),
        project: r.get(5),
        title: r.get(6),
        first_prompt: r.get(7),
        created_ms: r.get(8),
        updated_ms: r.get(9),
        entries: r.get::<_, i64>(10) as u64,
        messages: r.get::<_, i64>(11) as u64,
        user_messages: r.get::<_, i64>(12) as u64,
        assistant_messages: r.get::<_, i64>(13) as u64,
        tool_calls: r.get::<_, i64>(14) as u64,
        tokens: Vec::new(),
        // The team database keeps no kind yet: every session is listed.
        kind: Default::default(),
    }
}

/// A session on the server, found by id.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ServerSession {
    /// The server's row id of the file.
    pub file_id: i64,
    /// The session id.
    pub session_id: String,
    /// The machine that pushed it.
    pub machine: String,
    /// The user it belongs to.
    pub user: String,
    /// The file's path on that machine.
    pub path: String,
    /// Its format.
    pub format: String,
    /// True when its original bytes are kept.
    pub has_original: bool,
}

impl PgIndex {
    /// Returns the sessions, most recently updated first (as
    /// [`agentlog_index::Index::sessions`]).
    pub fn sessions(&self, p: &ListParams) -> Result<Vec<SessionInfo>, PgError> {
        self.sessions_with(p, &[])
    }

    /// Returns how many sessions match `p` (as [`Self::sessions`] matches
    /// them), its `limit` and `offset` left aside.
    pub fn count_sessions(&self, p: &ListParams) -> Result<usize, PgError> {
        let agents: Vec<String> = p.agents.iter().map(|a| a.to_lowercase()).collect();
        let projects: Vec<String> = p.projects.iter().map(|x| x.to_lowercase()).collect();
        let row = self
            .db()?
            .query_one(
                "SELECT count(*) FROM sessions
                 WHERE ($1::bigint IS NULL OR updated_ms >= $1)
                   AND (cardinality($2::text[]) = 0 OR lower(agent) = ANY($2))
                   AND (cardinality($3::text[]) = 0 OR EXISTS (
                        SELECT 1 FROM unnest($3::text[]) n
                        WHERE strpos(lower(project), n) > 0))
                   AND (cardinality($4::text[]) = 0 OR format = ANY($4))",
                &[&p.since_ms, &agents, &projects, &p.formats],
            )
            .map_err(|e| self.err("counting sessions", &e))?;
        Ok(row.get::<_, i64>(0) as usize)
    }

    /// Returns the catalog row of the session of each file of `paths`
    /// (as [`agentlog_index::Index::sessions_at`]).
    pub fn sessions_at(&self, paths: &[String]) -> Result<Vec<Option<SessionInfo>>, PgError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let by_path: std::collections::HashMap<String, SessionInfo> = self
            .sessions_with(&ListParams::default(), paths)?
            .into_iter()
            .map(|s| (s.path.clone(), s))
            .collect();
        // A path asked for twice gets its row twice.
        Ok(paths.iter().map(|p| by_path.get(p).cloned()).collect())
    }

    /// The sessions of `p`, only those of `paths` when it is not empty.
    fn sessions_with(&self, p: &ListParams, paths: &[String]) -> Result<Vec<SessionInfo>, PgError> {
        let paths: Vec<String> = paths.to_vec();
        let agents: Vec<String> = p.agents.iter().map(|a| a.to_lowercase()).collect();
        let projects: Vec<String> = p.projects.iter().map(|x| x.to_lowercase()).collect();
        let limit: Option<i64> = (p.limit > 0).then_some(p.limit as i64);
        let rows = self
            .db()?
            .query(
                &format!(
                    "SELECT {INFO_COLUMNS}
                 FROM sessions
                 WHERE ($1::bigint IS NULL OR updated_ms >= $1)
                   AND (cardinality($2::text[]) = 0 OR lower(agent) = ANY($2))
                   AND (cardinality($3::text[]) = 0 OR EXISTS (
                        SELECT 1 FROM unnest($3::text[]) n
                        WHERE strpos(lower(project), n) > 0))
                   AND (cardinality($7::text[]) = 0 OR path = ANY($7))
                   AND (cardinality($8::text[]) = 0 OR format = ANY($8))
                 ORDER BY CASE WHEN $5 THEN coalesce(created_ms, updated_ms)
                               ELSE updated_ms END DESC NULLS LAST,
                          path COLLATE \"C\"
                 LIMIT $4 OFFSET $6"
                ),
                &[
                    &p.since_ms,
                    &agents,
                    &projects,
                    &limit,
                    &(p.order == agentlog_index::SessionOrder::Created),
                    &(p.offset as i64),
                    &paths,
                    &p.formats,
                ],
            )
            .map_err(|e| self.err("listing sessions", &e))?;
        let mut out = Vec::with_capacity(rows.len());
        let mut ids = Vec::with_capacity(rows.len());
        for r in rows {
            ids.push(r.get::<_, i64>(0));
            out.push(info_of(&r));
        }
        if p.without_tokens || p.bare {
            return Ok(out);
        }
        let rows = self.db()?
            .query(
                "SELECT session, coalesce(model, 'unknown') m, count(*), sum(input)::bigint,
                        sum(output)::bigint, sum(cache_read)::bigint, sum(cache_write)::bigint
                 FROM usage WHERE session = ANY($1) GROUP BY 1, 2 ORDER BY 1, coalesce(model, 'unknown') COLLATE \"C\"",
                &[&ids],
            )
            .map_err(|e| self.err("counting tokens of sessions", &e))?;
        let pos: std::collections::HashMap<i64, usize> =
            ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        for r in rows {
            if let Some(&i) = pos.get(&r.get::<_, i64>(0)) {
                out[i].tokens.push(SessionTokens {
                    model: r.get(1),
                    responses: r.get::<_, i64>(2) as u64,
                    input: r.get::<_, i64>(3) as u64,
                    output: r.get::<_, i64>(4) as u64,
                    cache_read: r.get::<_, i64>(5) as u64,
                    cache_write: r.get::<_, i64>(6) as u64,
                });
            }
        }
        Ok(out)
    }

    /// Returns the sessions whose id starts with `id` (or whose path is
    /// `id`), most recently updated first.
    pub fn find_session(&self, id: &str) -> Result<Vec<ServerSession>, PgError> {
        let rows = self
            .db()?
            .query(
                "SELECT s.id, s.session_id, s.machine, s.username, s.path, s.format,
                        EXISTS (SELECT 1 FROM chunks c WHERE c.file = s.id)
                 FROM sessions s
                 WHERE starts_with(s.session_id, $1) OR s.path = $1
                 ORDER BY s.updated_ms DESC NULLS LAST, s.id",
                &[&id],
            )
            .map_err(|e| self.err("looking up the session", &e))?;
        Ok(rows
            .into_iter()
            .map(|r| ServerSession {
                file_id: r.get(0),
                session_id: r.get(1),
                machine: r.get(2),
                user: r.get(3),
                path: r.get(4),
                format: r.get(5),
                has_original: r.get(6),
            })
            .collect())
    }

    /// Returns the original bytes of a pushed file, as sent (redacted
    /// unless pushed with `--no-redact`).
    pub fn original(&self, file_id: i64) -> Result<Vec<u8>, PgError> {
        let rows = self
            .db()?
            .query(
                "SELECT start_offset, end_offset, data FROM chunks WHERE file = $1
                 ORDER BY start_offset",
                &[&file_id],
            )
            .map_err(|e| self.err("reading the session's bytes", &e))?;
        if rows.is_empty() {
            return Err(PgError::Data {
                url: self.url.clone(),
                message: format!(
                    "the server keeps no original bytes of file {file_id} (a directory or a redacted SQLite store)"
                ),
            });
        }
        let mut out = Vec::new();
        let mut at = 0i64;
        for r in rows {
            let (start, end, data): (i64, i64, Vec<u8>) = (r.get(0), r.get(1), r.get(2));
            if start != at {
                return Err(PgError::Data {
                    url: self.url.clone(),
                    message: format!(
                        "the bytes of file {file_id} have a gap at offset {at} (next piece starts at {start})"
                    ),
                });
            }
            flate2::read::DeflateDecoder::new(&data[..])
                .read_to_end(&mut out)
                .map_err(|e| PgError::Data {
                    url: self.url.clone(),
                    message: format!(
                        "the bytes of file {file_id} at offset {start} do not inflate: {e}"
                    ),
                })?;
            at = end;
        }
        Ok(out)
    }

    /// Returns (entries, sessions, files) counts.
    pub fn counts(&self) -> Result<(u64, u64, u64), PgError> {
        let r = self
            .db()?
            .query_one(
                "SELECT (SELECT coalesce(sum(entries), 0)::bigint FROM sessions), (SELECT count(*) FROM sessions),
                        (SELECT count(*) FROM files)",
                &[],
            )
            .map_err(|e| self.err("counting", &e))?;
        Ok((
            r.get::<_, i64>(0) as u64,
            r.get::<_, i64>(1) as u64,
            r.get::<_, i64>(2) as u64,
        ))
    }

    /// Returns the machines that pushed, with their session counts.
    pub fn machines(&self) -> Result<Vec<(String, u64)>, PgError> {
        let rows = self
            .db()?
            .query(
                "SELECT machine, count(*) FROM sessions GROUP BY 1 ORDER BY 1",
                &[],
            )
            .map_err(|e| self.err("listing machines", &e))?;
        Ok(rows
            .into_iter()
            .map(|r| (r.get(0), r.get::<_, i64>(1) as u64))
            .collect())
    }
}
