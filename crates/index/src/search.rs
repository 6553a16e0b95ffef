//! Full-text search with filters, ranking and highlighted snippets.
//!
//! Ranking: FTS5's BM25 (message text weighs most, then tool calls,
//! thinking, tool output) combined with recency: the score is
//! `-bm25 × (0.5 + 0.5 / (1 + age_days / 30))`, so a match from today counts
//! twice one from long ago at equal relevance. Only the newest
//! [`SearchParams::candidates`] matching entries (by index order, which
//! follows file age) are ranked, so a word found in a million entries is
//! answered in milliseconds while rarer words are ranked over every match.
//! BM25 weighs each phrase by how rare it is, which FTS5 learns by counting
//! every entry containing it; a word in more than 20,000 entries weighs
//! next to nothing, so it is left out of the weighing (it still has to
//! match), as are prefixes and phrases of several words (counting those
//! costs as much as the search). A query with nothing left to weigh lists
//! the newest matches first. A one-word prefix is searched as the words of
//! the index it starts (`expand_prefixes`, from the vocabulary the `texts`
//! module keeps); other prefixes make FTS5 gather the entries of every word
//! they start (the index keeps no prefix indexes: see the `schema` module).
//!
//! Filters (agent, project, role, tool, session) are terms of the same
//! full-text query (tags stored with each entry), so they narrow the match
//! inside the index; times filter on the entry's timestamp.

use crate::error::SqlContext;
use crate::query;
use crate::tags::{project_key, tag};
use crate::{Index, IndexError};
use rusqlite::params;
use serde::Serialize;

/// What to search for.
#[derive(Clone, Debug, Default)]
pub struct SearchParams {
    /// The query (see the `query` module: words, `"phrases"`, `prefix*`,
    /// `OR`, `-exclude`).
    pub query: String,
    /// Only these agents (short names).
    pub agents: Vec<String>,
    /// Only sessions whose project path contains one of these.
    pub projects: Vec<String>,
    /// Only entries with these roles (`user`, `assistant`, `tool`,
    /// `system`, `thinking`).
    pub roles: Vec<String>,
    /// Only entries calling or answering these tools.
    pub tools: Vec<String>,
    /// Only sessions whose id starts with one of these (or whose path is
    /// one of these).
    pub sessions: Vec<String>,
    /// Only entries at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Only entries before this time.
    pub until_ms: Option<i64>,
    /// At most this many hits (0: 20).
    pub limit: usize,
    /// How many of the newest matches are ranked (0: 2000).
    pub candidates: usize,
    /// "Now" for recency (default: the clock).
    pub now_ms: Option<i64>,
}

impl SearchParams {
    /// Returns parameters for `query` with no filters.
    pub fn new(query: impl Into<String>) -> SearchParams {
        SearchParams {
            query: query.into(),
            ..SearchParams::default()
        }
    }
}

/// Where a highlighted part of a snippet starts and ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Mark {
    /// Byte offset in [`Hit::text`] where the match starts.
    pub start: usize,
    /// Byte offset where it ends.
    pub end: usize,
}

/// A piece of a snippet: matched or not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// The text.
    pub text: String,
    /// True for a match.
    pub hit: bool,
}

/// One matching entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hit {
    /// The session id (what `agentlog show` takes).
    pub session_id: String,
    /// The entry id (what `agentlog show --at` takes).
    pub entry_id: String,
    /// The session file.
    pub path: String,
    /// The agent.
    pub agent: String,
    /// The session's project.
    pub project: Option<String>,
    /// The session's title or first prompt.
    pub title: Option<String>,
    /// The entry's role.
    pub role: Option<String>,
    /// Where the match is: `text`, `thinking`, `tools` or `output`.
    pub field: &'static str,
    /// The entry's time (ms since the epoch).
    pub ts_ms: Option<i64>,
    /// The line of the session file.
    pub line: Option<u64>,
    /// The ranking score (higher is better).
    pub score: f64,
    /// The snippet with matches between `«` and `»`.
    pub snippet: String,
    /// The snippet without markers.
    pub text: String,
    /// The matches in `text`.
    pub marks: Vec<Mark>,
    /// What the session is (search finds every kind; a front end marks
    /// the hits of headless runs and subagent transcripts).
    pub kind: agentlog_model::SessionKind,
}

impl Hit {
    /// Returns the snippet split into matched and unmatched segments.
    pub fn segments(&self) -> Vec<Segment> {
        let mut out = Vec::new();
        let mut pos = 0;
        for m in &self.marks {
            if m.start > pos {
                out.push(Segment {
                    text: self.text[pos..m.start].to_string(),
                    hit: false,
                });
            }
            out.push(Segment {
                text: self.text[m.start..m.end].to_string(),
                hit: true,
            });
            pos = m.end;
        }
        if pos < self.text.len() {
            out.push(Segment {
                text: self.text[pos..].to_string(),
                hit: false,
            });
        }
        out
    }
}

const FIELDS: [&str; 4] = ["text", "thinking", "tools", "output"];
/// Entries a phrase must be in to count as too common to weigh.
const COMMON: i64 = 20_000;
/// At most this many words a prefix starts are searched as words (see
/// `expand_prefixes`); a prefix of more is left to FTS5.
const PREFIX_WORDS: usize = 200;
const OPEN: char = '\u{2}';
const CLOSE: char = '\u{3}';

impl Index {
    /// Searches every indexed entry; returns the best hits first.
    pub fn search(&self, p: &SearchParams) -> Result<Vec<Hit>, IndexError> {
        let parsed = self.expand_prefixes(query::parse(&p.query)?)?;
        let Some(filters) = self.filter_expr(p)? else {
            return Ok(Vec::new());
        };
        let expr = format!("{}{filters}", parsed.expr());
        let limit = if p.limit == 0 { 20 } else { p.limit };
        let candidates = if p.candidates == 0 {
            2000
        } else {
            p.candidates
        }
        .max(limit);
        let now = p.now_ms.unwrap_or_else(crate::time::now_ms);
        // Phrases in very many entries carry almost no weight in BM25, and
        // FTS5 counts every entry of every phrase to weigh it: rank by the
        // selective phrases only (prefixes match but do not weigh).
        let mut selective = std::collections::HashSet::new();
        for ph in parsed.phrases() {
            if single_word(ph) && self.phrase_count(ph, COMMON)? < COMMON {
                selective.insert(ph.clone());
            }
        }
        let ranking = parsed.ranking_expr(&|ph: &str| selective.contains(ph));
        let Some(ranking) = ranking else {
            // Nothing to weigh: the newest matches, with their snippets, in
            // one pass.
            return self.newest(&expr, p, limit);
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT f.rowid, d.ts_ms FROM fts f JOIN docs d ON d.id = f.rowid
                 WHERE fts MATCH ?1
                   AND (?2 IS NULL OR d.ts_ms >= ?2)
                   AND (?3 IS NULL OR d.ts_ms < ?3)
                 ORDER BY f.rowid DESC LIMIT ?4",
            )
            .at(&self.path)?;
        let rows = stmt
            .query_map(
                params![expr, p.since_ms, p.until_ms, candidates as i64],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?)),
            )
            .map_err(|e| query_error(&self.path, &p.query, e))?;
        let mut times = std::collections::HashMap::new();
        for row in rows {
            let (id, ts) = row.map_err(|e| query_error(&self.path, &p.query, e))?;
            times.insert(id, ts);
        }
        let Some(&min) = times.keys().min() else {
            return Ok(Vec::new());
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT rowid, bm25(fts, 10.0, 3.0, 5.0, 2.0, 0.0) FROM fts
                 WHERE fts MATCH ?1 AND rowid >= ?2",
            )
            .at(&self.path)?;
        let rows = stmt
            .query_map(params![ranking, min], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
            })
            .map_err(|e| query_error(&self.path, &p.query, e))?;
        let mut scored = Vec::with_capacity(times.len());
        for row in rows {
            let (id, bm25) = row.map_err(|e| query_error(&self.path, &p.query, e))?;
            if let Some(ts) = times.get(&id) {
                scored.push((id, score(bm25, *ts, now)));
            }
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        scored.truncate(limit);
        let mut snippets = self.snippets(&expr, scored.iter().map(|s| s.0).collect())?;
        scored
            .into_iter()
            .map(|(id, s)| {
                let snip = snippets.remove(&id).unwrap_or_default();
                self.hit(id, s, snip)
            })
            .collect()
    }

    /// Searches only what the entries' tool calls were given and named
    /// (the `tools` field: tool names and every string of their inputs, so
    /// the paths they read or wrote and the commands they ran), with the
    /// filters of `p`; the newest matches first. What "which sessions
    /// touched this file, ran this command" asks. The newest hit of each
    /// session has its snippet; the others' are empty.
    pub fn search_tool_inputs(&self, p: &SearchParams) -> Result<Vec<Hit>, IndexError> {
        let parsed = self.expand_prefixes(query::parse(&p.query)?)?;
        let Some(filters) = self.filter_expr(p)? else {
            return Ok(Vec::new());
        };
        let expr = format!("{}{filters}", parsed.expr_in("{tools}"));
        let limit = if p.limit == 0 { 20 } else { p.limit };
        // The matches first, without snippets: cutting one means reading
        // the entry's text, and a caller grouping hits by session shows
        // one per session. The newest hit of each session gets its own.
        let now = p.now_ms.unwrap_or_else(crate::time::now_ms);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT f.rowid, d.ts_ms FROM fts f JOIN docs d ON d.id = f.rowid
                 WHERE fts MATCH ?1
                   AND (?2 IS NULL OR d.ts_ms >= ?2)
                   AND (?3 IS NULL OR d.ts_ms < ?3)
                 ORDER BY f.rowid DESC LIMIT ?4",
            )
            .at(&self.path)?;
        let rows = stmt
            .query_map(params![expr, p.since_ms, p.until_ms, limit as i64], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?))
            })
            .map_err(|e| query_error(&self.path, &p.query, e))?;
        let mut hits = Vec::new();
        let mut ids = Vec::new();
        for row in rows {
            let (id, ts) = row.map_err(|e| query_error(&self.path, &p.query, e))?;
            let mut hit = self.hit(id, score(-1.0, ts, now), Default::default())?;
            hit.field = "tools";
            ids.push(id);
            hits.push(hit);
        }
        let mut seen = std::collections::HashSet::new();
        let newest: Vec<i64> = ids
            .iter()
            .zip(&hits)
            .filter(|(_, h)| seen.insert(h.session_id.clone()))
            .map(|(id, _)| *id)
            .collect();
        let mut snippets = self.snippets(&expr, newest)?;
        for (id, hit) in ids.iter().zip(hits.iter_mut()) {
            if let Some(snips) = snippets.remove(id) {
                *hit = self.hit(*id, hit.score, snips)?;
            }
        }
        Ok(hits)
    }

    /// Returns how many entries match `phrase`, counting up to `cap`.
    /// Counts the entries that match `p` (its query and filters), stopping
    /// at `cap`: a total to show beside the best hits that stays cheap on
    /// common words.
    pub fn count_matches(&self, p: &SearchParams, cap: u64) -> Result<u64, IndexError> {
        let parsed = self.expand_prefixes(query::parse(&p.query)?)?;
        let Some(filters) = self.filter_expr(p)? else {
            return Ok(0);
        };
        let expr = format!("{}{filters}", parsed.expr());
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM (SELECT 1 FROM fts f JOIN docs d ON d.id = f.rowid
                 WHERE fts MATCH ?1
                   AND (?2 IS NULL OR d.ts_ms >= ?2)
                   AND (?3 IS NULL OR d.ts_ms < ?3)
                 LIMIT ?4)",
            )
            .at(&self.path)?;
        let cap = i64::try_from(cap).unwrap_or(i64::MAX);
        stmt.query_row(params![expr, p.since_ms, p.until_ms, cap], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n.max(0) as u64)
        .map_err(|e| query_error(&self.path, &p.query, e))
    }

    /// Replaces each one-word prefix (`"pars"*`) by the words of the index
    /// it starts (`("parse" OR "parser")`), read from the vocabulary the
    /// `texts` module keeps: FTS5 reads a few words' entries newest first
    /// and stops, where it gathers every entry of every such word for a
    /// prefix. Prefixes of other text, of no word, or of more than
    /// [`PREFIX_WORDS`] words are left to FTS5.
    fn expand_prefixes(&self, mut parsed: query::Parsed) -> Result<query::Parsed, IndexError> {
        for ph in parsed
            .required
            .iter_mut()
            .flatten()
            .chain(parsed.excluded.iter_mut())
        {
            let Some(word) = ph
                .strip_prefix('"')
                .and_then(|w| w.strip_suffix("\"*"))
                .filter(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric()))
            else {
                continue;
            };
            let low = word.to_ascii_lowercase();
            let mut high = low.clone().into_bytes();
            if let Some(last) = high.last_mut() {
                *last += 1; // an ASCII letter or digit: the next byte is ASCII too
            }
            let high = String::from_utf8(high).unwrap_or_default();
            let mut stmt = self
                .conn
                .prepare_cached(
                    "SELECT term FROM words_vocab WHERE term >= ?1 AND term < ?2 LIMIT ?3",
                )
                .at(&self.path)?;
            let words: Vec<String> = stmt
                .query_map(params![low, high, PREFIX_WORDS as i64 + 1], |r| r.get(0))
                .and_then(|rows| rows.collect())
                .at(&self.path)?;
            if words.is_empty() || words.len() > PREFIX_WORDS {
                continue;
            }
            let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
            *ph = if quoted.len() == 1 {
                quoted.concat()
            } else {
                format!("({})", quoted.join(" OR "))
            };
        }
        Ok(parsed)
    }

    fn phrase_count(&self, phrase: &str, cap: i64) -> Result<i64, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ?1 LIMIT ?2)")
            .at(&self.path)?;
        stmt.query_row(
            params![format!("{} : {phrase}", query::CONTENT_COLUMNS), cap],
            |r| r.get(0),
        )
        .map_err(|e| query_error(&self.path, phrase, e))
    }

    /// Returns the newest matches, ranked by recency alone.
    fn newest(&self, expr: &str, p: &SearchParams, limit: usize) -> Result<Vec<Hit>, IndexError> {
        let now = p.now_ms.unwrap_or_else(crate::time::now_ms);
        let open = OPEN.to_string();
        let close = CLOSE.to_string();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT f.rowid, d.ts_ms, snippet(fts, 0, ?5, ?6, '…', 24),
                        snippet(fts, 1, ?5, ?6, '…', 24), snippet(fts, 2, ?5, ?6, '…', 24),
                        snippet(fts, 3, ?5, ?6, '…', 24)
                 FROM fts f JOIN docs d ON d.id = f.rowid
                 WHERE fts MATCH ?1
                   AND (?2 IS NULL OR d.ts_ms >= ?2)
                   AND (?3 IS NULL OR d.ts_ms < ?3)
                 ORDER BY f.rowid DESC LIMIT ?4",
            )
            .at(&self.path)?;
        let rows = stmt
            .query_map(
                params![expr, p.since_ms, p.until_ms, limit as i64, open, close],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, Option<i64>>(1)?,
                        [r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?],
                    ))
                },
            )
            .map_err(|e| query_error(&self.path, &p.query, e))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, ts, snips) = row.map_err(|e| query_error(&self.path, &p.query, e))?;
            out.push(self.hit(id, score(-1.0, ts, now), snips)?);
        }
        Ok(out)
    }

    /// Returns the snippets of each field of the documents `ids`, in one
    /// pass over the matches (a lookup per hit would set the query up again
    /// for each).
    fn snippets(
        &self,
        expr: &str,
        ids: Vec<i64>,
    ) -> Result<std::collections::HashMap<i64, [String; 4]>, IndexError> {
        let mut out = std::collections::HashMap::with_capacity(ids.len());
        let Some(&min) = ids.iter().min() else {
            return Ok(out);
        };
        let list = format!(
            ",{},",
            ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
        );
        let open = OPEN.to_string();
        let close = CLOSE.to_string();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT rowid, snippet(fts, 0, ?3, ?4, '…', 24), snippet(fts, 1, ?3, ?4, '…', 24),
                        snippet(fts, 2, ?3, ?4, '…', 24), snippet(fts, 3, ?3, ?4, '…', 24)
                 FROM fts
                 WHERE fts MATCH ?1 AND rowid >= ?5 AND instr(?2, ',' || rowid || ',') > 0
                 ORDER BY rowid DESC",
            )
            .at(&self.path)?;
        let rows = stmt
            .query_map(params![expr, list, open, close, min], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    [r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?],
                ))
            })
            .at(&self.path)?;
        for r in rows {
            let (id, s) = r.at(&self.path)?;
            out.insert(id, s);
        }
        Ok(out)
    }

    /// Returns the filter terms to add to the query (empty without
    /// filters), or `None` when a filter matches nothing.
    fn filter_expr(&self, p: &SearchParams) -> Result<Option<String>, IndexError> {
        let mut expr = String::new();
        let mut add = |tags: Vec<String>| {
            let tags: Vec<String> = tags.into_iter().map(|t| format!("\"{t}\"")).collect();
            expr = format!("{expr} AND tags : ({})", tags.join(" OR "));
        };
        if !p.agents.is_empty() {
            add(p.agents.iter().map(|a| tag('a', a)).collect());
        }
        if !p.roles.is_empty() {
            add(p.roles.iter().map(|r| tag('r', r)).collect());
        }
        if !p.tools.is_empty() {
            add(p.tools.iter().map(|t| tag('t', t)).collect());
        }
        if !p.projects.is_empty() {
            let projects = self.projects_matching(&p.projects)?;
            if projects.is_empty() {
                return Ok(None);
            }
            add(projects.iter().map(|x| tag('p', project_key(x))).collect());
        }
        if !p.sessions.is_empty() {
            let ids = self.sessions_matching(&p.sessions)?;
            if ids.is_empty() {
                return Ok(None);
            }
            add(ids.iter().map(|id| tag('s', &id.to_string())).collect());
        }
        Ok(Some(expr))
    }

    /// Returns the distinct project paths containing one of `needles`.
    pub(crate) fn projects_matching(&self, needles: &[String]) -> Result<Vec<String>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT project FROM sessions
                 WHERE project IS NOT NULL AND instr(lower(project), lower(?1)) > 0",
            )
            .at(&self.path)?;
        let mut out = Vec::new();
        for n in needles {
            let rows = stmt
                .query_map([n], |r| r.get::<_, String>(0))
                .at(&self.path)?;
            for r in rows {
                out.push(r.at(&self.path)?);
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Returns the row ids of sessions whose id starts with (or whose path
    /// is) one of `ids`.
    pub(crate) fn sessions_matching(&self, ids: &[String]) -> Result<Vec<i64>, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id FROM sessions
                 WHERE substr(session_id, 1, length(?1)) = ?1 OR path = ?1",
            )
            .at(&self.path)?;
        let mut out = Vec::new();
        for n in ids.iter().filter(|n| !n.is_empty()) {
            let rows = stmt.query_map([n], |r| r.get::<_, i64>(0)).at(&self.path)?;
            for r in rows {
                out.push(r.at(&self.path)?);
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    fn hit(&self, id: i64, score: f64, snippets: [String; 4]) -> Result<Hit, IndexError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT s.session_id, d.entry_id, s.path, s.agent, s.project,
                        coalesce(s.title, s.first_prompt), d.role, d.ts_ms, d.line, s.kind
                 FROM docs d JOIN sessions s ON s.id = d.session WHERE d.id = ?1",
            )
            .at(&self.path)?;
        let mut hit = stmt
            .query_row([id], |r| {
                Ok(Hit {
                    session_id: r.get(0)?,
                    entry_id: r.get(1)?,
                    path: r.get(2)?,
                    agent: r.get(3)?,
                    project: r.get(4)?,
                    title: r.get(5)?,
                    role: r.get(6)?,
                    field: "text",
                    ts_ms: r.get(7)?,
                    line: r.get::<_, Option<i64>>(8)?.map(|l| l as u64),
                    score,
                    snippet: String::new(),
                    text: String::new(),
                    marks: Vec::new(),
                    kind: crate::catalog::kind_of(r.get_ref(9)?.as_str_or_null()?),
                })
            })
            .at(&self.path)?;
        // The field with the most matches; on a tie the first of text,
        // thinking, tools, output.
        let marks = |s: &str| s.matches(OPEN).count();
        let best = (0..4)
            .filter(|&i| marks(&snippets[i]) > 0)
            .max_by(|&a, &b| {
                marks(&snippets[a])
                    .cmp(&marks(&snippets[b]))
                    .then(b.cmp(&a))
            })
            .or_else(|| (0..4).find(|&i| !snippets[i].is_empty()))
            .unwrap_or(0);
        hit.field = FIELDS[best];
        let (text, marks) = split_marks(&snippets[best]);
        hit.snippet = snippets[best].replace(OPEN, "«").replace(CLOSE, "»");
        hit.text = text;
        hit.marks = marks;
        Ok(hit)
    }
}

/// True for a quoted phrase of one word without a prefix star: counting the
/// entries of a phrase of several words means checking word positions in
/// every entry holding all of them, which costs what the search itself
/// does; such phrases (and prefixes) match without being weighed.
fn single_word(phrase: &str) -> bool {
    if phrase.ends_with('*') {
        return false;
    }
    phrase
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .count()
        == 1
}

fn score(bm25: f64, ts: Option<i64>, now: i64) -> f64 {
    let relevance = -bm25;
    let age_days = ts.map_or(365.0, |t| ((now - t) as f64 / 86_400_000.0).max(0.0));
    relevance * (0.5 + 0.5 / (1.0 + age_days / 30.0))
}

/// Turns FTS5 match errors into query errors that say what to write.
fn query_error(path: &std::path::Path, query: &str, e: rusqlite::Error) -> IndexError {
    let text = e.to_string();
    if text.contains("fts5") || text.contains("syntax") {
        IndexError::Query {
            query: query.to_string(),
            message: format!("{text}; use words, \"phrases\", prefix* and -exclude"),
        }
    } else {
        IndexError::Sqlite {
            path: path.to_path_buf(),
            source: e,
        }
    }
}

/// Removes the match markers, returning the text and the marked ranges.
fn split_marks(s: &str) -> (String, Vec<Mark>) {
    let mut text = String::with_capacity(s.len());
    let mut marks = Vec::new();
    let mut start = None;
    for c in s.chars() {
        match c {
            OPEN => start = Some(text.len()),
            CLOSE => {
                if let Some(st) = start.take() {
                    marks.push(Mark {
                        start: st,
                        end: text.len(),
                    });
                }
            }
            _ => text.push(c),
        }
    }
    (text, marks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_snippet_markers() {
        let (t, m) = split_marks("a \u{2}bc\u{3} d \u{2}e\u{3}");
        assert_eq!(t, "a bc d e");
        assert_eq!(m, [Mark { start: 2, end: 4 }, Mark { start: 7, end: 8 }]);
    }

    #[test]
    fn only_single_words_are_weighed() {
        assert!(single_word("\"parser\""));
        assert!(!single_word("\"pars\"*"));
        assert!(!single_word("\"borrow checker\""));
        assert!(!single_word("\"parse_config\""));
    }

    #[test]
    fn newer_scores_higher_at_equal_relevance() {
        let now = 100 * 86_400_000;
        assert!(score(-2.0, Some(now), now) > score(-2.0, Some(0), now));
        assert!(score(-4.0, Some(0), now) > score(-2.0, Some(now), now));
    }
}
