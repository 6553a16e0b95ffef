//! The single writer: everything an update stores goes through here, in
//! large transactions with cached prepared statements.

use crate::error::SqlContext;
use crate::extract::Extracted;
use crate::files::FileState;
use crate::parsed::{FileDrift, Outcome, Parsed};
use crate::title::listed_title;
use crate::IndexError;
use agentlog_model::Counted;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;

/// The key of `agentlog_index` present while updates have added segments
/// that no merge has seen since.
pub(crate) const UNMERGED: &str = "unmerged";

/// The most deferred updates one full check merges for (see
/// [`Writer::merge_deferred`]).
const DEFERRED_AT_ONCE: u32 = 8;

/// The most pages of merging one ordinary update does (each about 4 kB
/// written; see [`Writer::merge`]).
const MERGE_PAGES: u32 = 64;

pub(crate) struct Writer<'c> {
    conn: &'c mut Connection,
    path: &'c Path,
    open: bool,
}

impl<'c> Writer<'c> {
    pub fn begin(conn: &'c mut Connection, path: &'c Path) -> Result<Writer<'c>, IndexError> {
        conn.execute_batch("BEGIN IMMEDIATE").at(path)?;
        // An agentlog of the version before wrote here (it can hold the
        // index open across an upgrade): the catalog's listed titles and
        // tokens are made again before that version's index is dropped.
        if crate::derived::older_writer_was_here(conn).at(path)? {
            crate::derived::fill(conn).at(path)?;
        }
        // Indexes added after the schema's version: an index made before
        // gets them at its next update (no rebuild, no write by readers).
        conn.execute_batch(crate::schema::LATER_INDEXES).at(path)?;
        conn.execute_batch(crate::shape::TABLE).at(path)?;
        Ok(Writer {
            conn,
            path,
            open: true,
        })
    }

    /// Commits what was written so far and starts a new transaction.
    pub fn checkpoint(&mut self) -> Result<(), IndexError> {
        self.conn
            .execute_batch("COMMIT; BEGIN IMMEDIATE")
            .at(self.path)
    }

    /// Merges the full-text tables' segments, within a bound, before an
    /// update commits. FTS5's own merging is off (`automerge` 0 in the
    /// schema): it merged a level whole once the level held 16 segments,
    /// and after a build one such merge took in the build's large segments
    /// (2 to 4 s and 150 MB more file, every few hundred small updates on
    /// 1 GB of sessions).
    ///
    /// An update that read at least half of everything indexed and 4 MiB
    /// or more (a first build, or catching up after a long time) merges
    /// everything into one segment per table, at a cost in proportion to
    /// what it wrote, and the index then counts as checked for damage (it
    /// was just written). Any other update does at most [`MERGE_PAGES`]
    /// pages of merging (FTS5's `merge` command: levels of 4 or more
    /// segments, continued by the next update where it stopped), so no
    /// update stalls and segments never pile up. An update of recent files
    /// that a command makes before it answers does not merge at all (it
    /// was 40 % of a search right after an append at 10 GB): it notes
    /// [`UNMERGED`], and the next full check merges, with files to read or
    /// without ([`crate::Index::merge_pending`]); FTS5 itself merges a
    /// level that reaches 64 segments (`crisismerge`) in between.
    pub fn merge(&mut self, bytes_read: u64) -> Result<(), IndexError> {
        // Below this FTS5's merges take milliseconds whatever it does.
        const AT_LEAST: u64 = 4 << 20;
        let most_is_new = bytes_read >= AT_LEAST && {
            let indexed: i64 = self
                .conn
                .query_row("SELECT coalesce(sum(indexed_to), 0) FROM files", [], |r| {
                    r.get(0)
                })
                .at(self.path)?;
            bytes_read.saturating_mul(2) >= indexed.max(0) as u64
        };
        if !most_is_new {
            return self.merge_pages(MERGE_PAGES);
        }
        self.conn
            .execute_batch(&format!(
                "INSERT INTO fts(fts) VALUES('optimize');
                 INSERT INTO words(words) VALUES('optimize');
                 DELETE FROM agentlog_index WHERE key = '{UNMERGED}';"
            ))
            .at(self.path)?;
        crate::schema::set_last_check(self.conn, self.path, chrono::Utc::now().timestamp())
    }

    /// Does FTS5's bounded `merge` of at most `pages` pages in both
    /// full-text tables; the updates that deferred merging are then
    /// merged for.
    fn merge_pages(&mut self, pages: u32) -> Result<(), IndexError> {
        self.conn
            .execute_batch(&format!(
                "INSERT INTO fts(fts, rank) VALUES('merge', {pages});
                 INSERT INTO words(words, rank) VALUES('merge', {pages});
                 DELETE FROM agentlog_index WHERE key = '{UNMERGED}';"
            ))
            .at(self.path)
    }

    /// Merges as [`Writer::merge`] does, or, with `defer` (an update of
    /// recent files a command makes before it answers), not at all: the
    /// update is counted under [`UNMERGED`] for the next full check (see
    /// [`crate::Index::merge_pending`]).
    pub fn merge_or_defer(&mut self, defer: bool, bytes_read: u64) -> Result<(), IndexError> {
        if !defer {
            return self.merge(bytes_read);
        }
        self.conn
            .execute_batch(&format!(
                "INSERT INTO agentlog_index(key, value) VALUES('{UNMERGED}', '1')
                 ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            ))
            .at(self.path)
    }

    /// Merges for `updates` updates that left their segments unmerged: the
    /// pages they would each have merged ([`MERGE_PAGES`]), for at most
    /// [`DEFERRED_AT_ONCE`] of them (a merge holds the index's write lock,
    /// which a command with an append to read waits for); the rest stay
    /// counted for the next full check.
    pub fn merge_deferred(&mut self, updates: u32) -> Result<(), IndexError> {
        let now = updates.clamp(1, DEFERRED_AT_ONCE);
        self.merge_pages(MERGE_PAGES * now)?;
        let left = updates.saturating_sub(now);
        if left > 0 {
            self.conn
                .execute(
                    "INSERT INTO agentlog_index(key, value) VALUES(?1, ?2)",
                    rusqlite::params![UNMERGED, left.to_string()],
                )
                .at(self.path)?;
        }
        Ok(())
    }

    pub fn commit(mut self) -> Result<(), IndexError> {
        self.open = false;
        self.conn.execute_batch("COMMIT").at(self.path)
    }

    /// Removes a file and everything indexed from it.
    pub fn remove_file(&mut self, id: i64) -> Result<(), IndexError> {
        self.clear_session(id, 0)?;
        self.conn
            .execute("DELETE FROM sessions WHERE id = ?1", [id])
            .at(self.path)?;
        self.conn
            .execute("DELETE FROM files WHERE id = ?1", [id])
            .at(self.path)?;
        self.set_drift(id, None)?;
        Ok(())
    }

    /// Stores what the reader did not know in file `id`: replaces what was
    /// stored (`Some` from a full read, `None` to remove it), or, with
    /// `add`, adds to it (a read of appended lines).
    fn set_drift(&mut self, id: i64, drift: Option<&FileDrift>) -> Result<(), IndexError> {
        self.conn
            .prepare_cached("DELETE FROM drift WHERE file = ?1")
            .and_then(|mut s| s.execute([id]))
            .at(self.path)?;
        match drift {
            Some(d) => self.add_drift(id, d),
            None => Ok(()),
        }
    }

    fn add_drift(&mut self, id: i64, d: &FileDrift) -> Result<(), IndexError> {
        if d.items.is_empty() {
            return Ok(());
        }
        // A read of appended lines of a format that names its version
        // once (at the start) keeps the version stored.
        let version: String = match &d.version {
            Some(v) => v.clone(),
            None => self
                .conn
                .prepare_cached("SELECT version FROM drift WHERE file = ?1 LIMIT 1")
                .and_then(|mut s| s.query_row([id], |r| r.get(0)).optional())
                .at(self.path)?
                .unwrap_or_default(),
        };
        let mut st = self
            .conn
            .prepare_cached(
                "INSERT INTO drift(file, version, kind, name, count, first_line)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(file, kind, name) DO UPDATE SET
                   count = count + excluded.count, version = excluded.version,
                   first_line = coalesce(first_line, excluded.first_line)",
            )
            .at(self.path)?;
        for i in &d.items {
            st.execute(params![
                id,
                version,
                i.kind.as_str(),
                i.name,
                i.count as i64,
                i.first_line.map(|l| l as i64)
            ])
            .at(self.path)?;
        }
        Ok(())
    }

    /// Removes the documents and usage of session `id` from line `from` on
    /// (everything when `from` is 0).
    fn clear_session(&mut self, id: i64, from: u64) -> Result<(), IndexError> {
        let from = from as i64;
        let c = &self.conn;
        // Out of the index first: FTS5 reads the words to remove through
        // `fts_text`, so the entries and their text blocks must still be
        // there. Only entries with a block were put into `fts`.
        c.prepare_cached(
            "DELETE FROM fts WHERE rowid IN
               (SELECT id FROM docs WHERE session = ?1 AND (?2 = 0 OR line >= ?2)
                  AND block IS NOT NULL)",
        )
        .and_then(|mut s| s.execute(params![id, from]))
        .at(self.path)?;
        let blocks: Vec<i64> = c
            .prepare_cached(
                "SELECT DISTINCT block FROM docs
                 WHERE session = ?1 AND (?2 = 0 OR line >= ?2) AND block IS NOT NULL",
            )
            .and_then(|mut s| {
                s.query_map(params![id, from], |r| r.get(0))?
                    .collect::<Result<_, _>>()
            })
            .at(self.path)?;
        c.prepare_cached("DELETE FROM docs WHERE session = ?1 AND (?2 = 0 OR line >= ?2)")
            .and_then(|mut s| s.execute(params![id, from]))
            .at(self.path)?;
        // A block shared with entries that stay (an update that read the
        // file from the middle of one) stays too.
        let mut drop_block = c
            .prepare_cached(
                "DELETE FROM texts WHERE id = ?2
                   AND NOT EXISTS (SELECT 1 FROM docs WHERE session = ?1 AND block = ?2)",
            )
            .at(self.path)?;
        let mut drop_words = c
            .prepare_cached("DELETE FROM words WHERE rowid = ?1")
            .at(self.path)?;
        for b in blocks {
            if drop_block.execute(params![id, b]).at(self.path)? > 0 {
                drop_words.execute([b]).at(self.path)?;
            }
        }
        c.prepare_cached("DELETE FROM usage WHERE session = ?1 AND (?2 = 0 OR line >= ?2)")
            .and_then(|mut s| s.execute(params![id, from]))
            .at(self.path)?;
        // Summed again by `recount` when the session stays.
        c.prepare_cached("DELETE FROM session_tokens WHERE session = ?1")
            .and_then(|mut s| s.execute([id]))
            .at(self.path)?;
        // Of the file as it was: a file read in full gets a new one.
        c.prepare_cached("DELETE FROM shapes WHERE file = ?1")
            .and_then(|mut s| s.execute([id]))
            .at(self.path)?;
        Ok(())
    }

    /// Stores one parsed file; returns (bytes read, diagnostics, entries,
    /// the file's id).
    pub fn write(&mut self, p: &Parsed) -> Result<(u64, u64, u64, i64), IndexError> {
        let path_text = p.job.path.to_string_lossy().into_owned();
        match &p.outcome {
            Outcome::Failed { message, state } => {
                let id = self.upsert_file(
                    p.job.state.as_ref().map(|s| s.id),
                    p.job.new_id,
                    &path_text,
                    state,
                    Some(message),
                    0,
                )?;
                self.clear_session(id, 0)?;
                self.conn
                    .execute("DELETE FROM sessions WHERE id = ?1", [id])
                    .at(self.path)?;
                self.set_drift(id, None)?;
                Ok((0, 0, 0, id))
            }
            Outcome::Full {
                extracted,
                blocks,
                state,
                diagnostics,
                bytes,
                shape,
                drift,
            } => {
                let old = p.job.state.as_ref().map(|s| s.id);
                let id =
                    self.upsert_file(old, p.job.new_id, &path_text, state, None, *diagnostics)?;
                if old.is_some() {
                    self.clear_session(id, 0)?;
                }
                let s = &extracted.session;
                // A delete and a plain insert rather than `INSERT OR
                // REPLACE`: a replace into a table with indexes runs in a
                // statement transaction, and each one makes FTS5 write out
                // its pending entries as a new segment (a segment per
                // session, merged over and over).
                self.conn
                    .prepare_cached("DELETE FROM sessions WHERE id = ?1")
                    .and_then(|mut st| st.execute([id]))
                    .at(self.path)?;
                self.conn
                    .prepare_cached(
                        "INSERT INTO sessions(id, session_id, agent, format, path, project,
                           title, first_prompt, created_ms, updated_ms, kind)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                    )
                    .and_then(|mut st| {
                        st.execute(params![
                            id,
                            s.session_id,
                            s.agent,
                            p.job.format,
                            path_text,
                            s.project,
                            s.title,
                            s.first_prompt,
                            s.created_ms,
                            s.updated_ms,
                            (!s.kind.is_conversation()).then_some(s.kind.as_str())
                        ])
                    })
                    .at(self.path)?;
                self.set_drift(id, Some(drift))?;
                let n = self.insert_docs(
                    id,
                    &s.agent,
                    s.project.as_deref(),
                    extracted,
                    blocks.as_ref(),
                )?;
                let listed = listed_title(s.title.as_deref(), s.first_prompt.as_deref());
                self.recount(id, listed.as_deref())?;
                if let Some(shape) = shape {
                    crate::shape::put(self.conn, self.path, id, &path_text, &state.stat, shape)?;
                }
                Ok((*bytes, *diagnostics, n, id))
            }
            Outcome::Tail {
                extracted,
                from_line,
                state,
                diagnostics,
                bytes,
                drift,
            } => {
                let id = state.id;
                self.upsert_file(Some(id), None, &path_text, state, None, *diagnostics)?;
                self.clear_session(id, *from_line)?;
                self.add_drift(id, drift)?;
                let s = &extracted.session;
                self.conn
                    .prepare_cached(
                        "UPDATE sessions SET
                           title = coalesce(?2, title),
                           project = coalesce(project, ?3),
                           first_prompt = coalesce(first_prompt, ?4),
                           created_ms = coalesce(created_ms, ?5),
                           updated_ms = CASE WHEN ?6 IS NULL THEN updated_ms
                                             WHEN updated_ms IS NULL OR ?6 > updated_ms THEN ?6
                                             ELSE updated_ms END
                         WHERE id = ?1",
                    )
                    .and_then(|mut st| {
                        st.execute(params![
                            id,
                            s.title,
                            s.project,
                            s.first_prompt,
                            s.created_ms,
                            s.updated_ms
                        ])
                    })
                    .at(self.path)?;
                // What the session is now, the lines before included.
                let (agent, project, listed) = self
                    .conn
                    .query_row(
                        "SELECT agent, project, title, first_prompt FROM sessions WHERE id = ?1",
                        [id],
                        |r| {
                            let text = |i: usize| -> rusqlite::Result<Option<&str>> {
                                Ok(r.get_ref(i)?.as_str_or_null()?)
                            };
                            Ok((
                                r.get::<_, String>(0)?,
                                r.get::<_, Option<String>>(1)?,
                                listed_title(text(2)?, text(3)?),
                            ))
                        },
                    )
                    .optional()
                    .at(self.path)?
                    .unwrap_or_else(|| {
                        (
                            s.agent.clone(),
                            s.project.clone(),
                            listed_title(s.title.as_deref(), s.first_prompt.as_deref()),
                        )
                    });
                let n = self.insert_docs(id, &agent, project.as_deref(), extracted, None)?;
                self.recount(id, listed.as_deref())?;
                Ok((*bytes, *diagnostics, n, id))
            }
        }
    }

    /// Updates the row of file `id`, or inserts one (as `new_id` when no
    /// other file has that id); returns the file's id.
    fn upsert_file(
        &mut self,
        id: Option<i64>,
        new_id: Option<i64>,
        path: &str,
        st: &FileState,
        error: Option<&String>,
        diagnostics: u64,
    ) -> Result<i64, IndexError> {
        // A new file's planned id, unless another file has it (an update
        // made without the update lock can meet one); else SQLite's next.
        let row_id = match (id, new_id) {
            (Some(id), _) => Some(id),
            (None, Some(n)) => {
                let taken = self
                    .conn
                    .prepare_cached("SELECT 1 FROM files WHERE id = ?1")
                    .and_then(|mut s| s.exists([n]))
                    .at(self.path)?;
                (!taken).then_some(n)
            }
            (None, None) => None,
        };
        let values = params![
            path,
            st.format,
            st.stat.size as i64,
            st.stat.mtime_ns,
            st.stat.inode as i64,
            st.indexed_to as i64,
            st.tail_offset as i64,
            st.tail_line as i64,
            st.head_hash,
            st.before_hash,
            error,
            diagnostics as i64,
            row_id,
        ];
        match id {
            Some(id) => {
                self.conn
                    .prepare_cached(
                        "UPDATE files SET path = ?1, format = ?2, size = ?3, mtime_ns = ?4, inode = ?5,
                           indexed_to = ?6, tail_offset = ?7, tail_line = ?8, head_hash = ?9,
                           before_hash = ?10, error = ?11, diagnostics = ?12 WHERE id = ?13",
                    )
                    .and_then(|mut s| s.execute(values))
                    .at(self.path)?;
                Ok(id)
            }
            None => {
                self.conn
                    .prepare_cached(
                        "INSERT INTO files(path, format, size, mtime_ns, inode, indexed_to,
                           tail_offset, tail_line, head_hash, before_hash, error, diagnostics, id)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                    )
                    .and_then(|mut s| s.execute(values))
                    .at(self.path)?;
                Ok(self.conn.last_insert_rowid())
            }
        }
    }

    /// Stores the entries of session `id` (`agent`, `project`) and their
    /// usage, in the blocks `prebuilt` holds when they were made for it.
    fn insert_docs(
        &mut self,
        id: i64,
        agent: &str,
        project: Option<&str>,
        x: &Extracted,
        prebuilt: Option<&crate::texts::Blocks>,
    ) -> Result<u64, IndexError> {
        // Made by the thread that read the session when it knew the id.
        let made;
        let b = match prebuilt {
            Some(b) if b.session == id && b.place.len() == x.docs.len() => b,
            _ => {
                made = crate::texts::blocks(id, agent, project, &x.docs)
                    .map_err(|e| IndexError::io(self.path, e))?;
                &made
            }
        };
        let mut block_ids = Vec::with_capacity(b.blocks.len());
        for (z, words) in &b.blocks {
            block_ids.push(self.write_block(z, words)?);
        }
        let c = &self.conn;
        let mut doc_stmt = c
            .prepare_cached(
                "INSERT INTO docs(session, block, slot, entry_id, line, ts_ms, role, kind,
                   is_message, tool_calls)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )
            .at(self.path)?;
        let mut fts_stmt = c
            .prepare_cached(
                "INSERT INTO fts(rowid, text, thinking, tools, output, tags)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .at(self.path)?;
        for ((d, at), t) in x.docs.iter().zip(&b.place).zip(&b.tags) {
            let at = at.map(|(block, slot)| (block_ids[block], slot));
            doc_stmt
                .execute(params![
                    id,
                    at.map(|(b, _)| b),
                    at.map(|(_, s)| s),
                    d.entry_id,
                    d.line.map(|l| l as i64),
                    d.ts_ms,
                    d.role,
                    d.kind,
                    counted_code(d.counted),
                    d.tool_calls
                ])
                .at(self.path)?;
            if at.is_none() {
                continue;
            }
            let rowid = c.last_insert_rowid();
            fts_stmt
                .execute(params![rowid, d.text, d.thinking, d.tools, d.output, t])
                .at(self.path)?;
        }
        let mut usage_stmt = c
            .prepare_cached(
                "INSERT INTO usage(session, entry_id, line, ts_ms, model, response_id, input, output,
                   cache_read, cache_write, reasoning, cost_usd)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )
            .at(self.path)?;
        for u in &x.usage {
            usage_stmt
                .execute(params![
                    id,
                    u.entry_id,
                    u.line.map(|l| l as i64),
                    u.ts_ms,
                    u.model,
                    u.response_id,
                    u.input as i64,
                    u.output as i64,
                    u.cache_read as i64,
                    u.cache_write as i64,
                    u.reasoning as i64,
                    u.cost_usd
                ])
                .at(self.path)?;
        }
        Ok(x.docs.len() as u64)
    }

    /// Stores one compressed block of texts and its words; returns its id.
    fn write_block(&mut self, z: &[u8], words: &str) -> Result<i64, IndexError> {
        self.conn
            .prepare_cached("INSERT INTO texts(z) VALUES (?1)")
            .and_then(|mut s| s.execute([z]))
            .at(self.path)?;
        let block = self.conn.last_insert_rowid();
        self.conn
            .prepare_cached("INSERT INTO words(rowid, w) VALUES (?1, ?2)")
            .and_then(|mut s| s.execute(params![block, words]))
            .at(self.path)?;
        Ok(block)
    }

    /// Counts what session `id` holds, sums its tokens (by model, and all
    /// of them for the catalog), and stores them with its `listed` title.
    fn recount(&mut self, id: i64, listed: Option<&str>) -> Result<(), IndexError> {
        // Summed here and inserted a row at a time: a statement inserting
        // several rows runs in a statement transaction, which makes FTS5
        // write its pending entries out as a segment for every session.
        let sums: Vec<(String, i64, i64, i64, i64, i64)> = self
            .conn
            .prepare_cached(
                "SELECT coalesce(model, 'unknown'), count(*), sum(input), sum(output),
                        sum(cache_read), sum(cache_write)
                 FROM usage WHERE session = ?1 GROUP BY 1",
            )
            .and_then(|mut s| {
                s.query_map([id], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                    ))
                })?
                .collect()
            })
            .at(self.path)?;
        let mut insert = self
            .conn
            .prepare_cached(
                "INSERT INTO session_tokens(session, model, responses, input, output, cache_read,
                   cache_write)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .at(self.path)?;
        let tokens: i64 = sums
            .iter()
            .map(|(_, _, i, o, r, w)| crate::derived::summed(*i, *o, *r, *w))
            .fold(0, i64::saturating_add);
        self.conn
            .prepare_cached(
                "UPDATE sessions SET (entries, messages, user_messages, assistant_messages, tool_calls) =
                   (SELECT count(*), coalesce(sum(is_message > 0), 0), coalesce(sum(is_message = 2), 0),
                           coalesce(sum(is_message = 3), 0), coalesce(sum(tool_calls), 0)
                    FROM docs WHERE session = ?1),
                   tokens = ?2, listed = ?3
                 WHERE id = ?1",
            )
            .and_then(|mut s| s.execute(params![id, tokens, listed]))
            .at(self.path)?;
        for (model, n, input, output, cache_read, cache_write) in sums {
            insert
                .execute(params![
                    id,
                    model,
                    n,
                    input,
                    output,
                    cache_read,
                    cache_write
                ])
                .at(self.path)?;
        }
        Ok(())
    }
}

/// How `docs.is_message` stores what an entry counts as: 0 not a message,
/// 1 another message, 2 a user prompt, 3 a reply.
fn counted_code(c: Counted) -> i64 {
    match c {
        Counted::Not => 0,
        Counted::Other => 1,
        Counted::Prompt => 2,
        Counted::Reply => 3,
    }
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        if self.open {
            // An error left the transaction open: undo it, keeping the index
            // as it was before this update.
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::FileStat;
    use crate::parsed::Job;
    use agentlog_model::{Agent, Entry, EntryKind, Message, Role, Session, SessionMeta};

    fn parsed(path: &str, word: &str, new_id: i64) -> Parsed {
        let mut s = Session::new(SessionMeta::new(path, Agent::Claude));
        s.meta.cwd = Some("/home/u/proj".into());
        let m = Message::text(Role::User, format!("the {word} is broken"));
        s.push(Entry::new("u1", None, EntryKind::Message(m)));
        let extracted = crate::extract::extract(&s);
        // Blocks made for the planned id, as a reading thread makes them.
        let blocks =
            crate::texts::blocks(new_id, "claude", Some("/home/u/proj"), &extracted.docs).unwrap();
        Parsed {
            job: Job {
                path: path.into(),
                format: "claude",
                stat: FileStat::default(),
                state: None,
                try_tail: false,
                new_id: Some(new_id),
            },
            outcome: Outcome::Full {
                extracted,
                blocks: Some(blocks),
                state: FileState::default(),
                diagnostics: 0,
                bytes: 1,
                shape: None,
                drift: Default::default(),
            },
        }
    }

    #[test]
    fn a_planned_id_another_file_took_is_not_used_and_its_blocks_are_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.sqlite");
        let mut conn = Connection::open(&path).unwrap();
        crate::schema::create_schema(&conn, &path).unwrap();
        crate::schema::configure(&conn, &path).unwrap();
        let mut w = Writer::begin(&mut conn, &path).unwrap();
        // Two updates planned apart (one without the update lock) both
        // planned id 7 for their new file.
        let first = w.write(&parsed("/s/a.jsonl", "lexer", 7)).unwrap().3;
        let second = w.write(&parsed("/s/b.jsonl", "parser", 7)).unwrap().3;
        w.commit().unwrap();
        assert_eq!(first, 7);
        assert_ne!(second, 7);
        // Each file's entries carry their own session's tag, so a search
        // limited to one session finds its word and not the other's.
        let in_session = |id: i64, word: &str| -> i64 {
            let q = format!("{word} AND {}", crate::tags::tag('s', &id.to_string()));
            conn.query_row("SELECT count(*) FROM fts WHERE fts MATCH ?1", [q], |r| {
                r.get(0)
            })
            .unwrap()
        };
        assert_eq!(in_session(7, "lexer"), 1);
        assert_eq!(in_session(7, "parser"), 0);
        assert_eq!(in_session(second, "parser"), 1);
        assert_eq!(in_session(second, "lexer"), 0);
    }
}
