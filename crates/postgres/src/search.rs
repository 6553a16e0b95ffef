//! Full-text search on the server.
//!
//! Matching is PostgreSQL's: each entry's words are a `tsvector` under a
//! GIN index, the query a `tsquery` of the same words ([`crate::words`]):
//! `&` for required terms, `|` for `OR`, `!` for `-excluded`, `<->` for the
//! words of a phrase, `:*` for a prefix. Filters are columns of the same
//! query (agent and project of the session; role, tools and time of the
//! entry). Ranking is `ts_rank` with the columns weighed as the SQLite
//! index weighs them (message text, then tool calls, thinking, tool output)
//! times the same recency factor; like the SQLite index, only the newest
//! [`SearchParams::candidates`] matches are ranked. Snippets are cut here
//! around the matched words, at most 24 words like FTS5's.
//!
//! Why not `pg_trgm`: trigrams find substrings (`pars` inside `sparse`),
//! which is not what the query language means, and would give other hits
//! than the SQLite index; a trigram index is also several times larger
//! than the word index for the same text.

use crate::typed::Typed;
use crate::words::{highlight_terms, tsquery, words};
use crate::{schema, PgError, PgIndex};
use agentlog_index::{Hit, Mark, SearchParams};
use postgres::types::Type;

const FIELDS: [&str; 4] = ["text", "thinking", "tools", "output"];
const SNIPPET_WORDS: usize = 24;

/// What a search matches: its query and its filters.
struct Matching {
    q: String,
    since: Option<i64>,
    until: Option<i64>,
    agents: Vec<String>,
    roles: Vec<String>,
    tools: Vec<String>,
    projects: Vec<String>,
    sessions: Vec<String>,
}

impl Matching {
    /// Returns the parameters of `p`, or `None` when its query can match
    /// nothing.
    fn of(p: &SearchParams) -> Result<Option<Matching>, PgError> {
        let terms = agentlog_index::terms(&p.query)?;
        let Some(q) = tsquery(&terms) else {
            return Ok(None);
        };
        let lower = |v: &[String]| -> Vec<String> {
            v.iter()
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty())
                .collect()
        };
        Ok(Some(Matching {
            q,
            since: p.since_ms,
            until: p.until_ms,
            agents: lower(&p.agents),
            roles: lower(&p.roles),
            tools: lower(&p.tools),
            projects: lower(&p.projects),
            sessions: p
                .sessions
                .iter()
                .filter(|s| !s.is_empty())
                .cloned()
                .collect(),
        }))
    }

    /// Writes `SELECT {columns} FROM …` of the entries matched, at most
    /// `limit`, the newest first when `newest` (a count needs no order):
    /// the words of each entry (`w`, a narrow table) with the query `q`,
    /// joined to the entry's other columns (`d`) and its session (`s`) only
    /// when a filter needs them.
    fn select(&self, columns: &str, limit: i64, newest: bool) -> Typed {
        let mut t = Typed::new();
        let q = t.arg(self.q.clone(), Type::TEXT);
        let mut from = String::from("doc_words w");
        let mut cond = String::from("w.words @@ q");
        if let Some(since) = self.since {
            cond.push_str(&format!(" AND w.ts_ms >= {}", t.arg(since, Type::INT8)));
        }
        if let Some(until) = self.until {
            cond.push_str(&format!(" AND w.ts_ms < {}", t.arg(until, Type::INT8)));
        }
        if !self.roles.is_empty() || !self.tools.is_empty() {
            from.push_str(" JOIN docs d ON d.id = w.id");
        }
        // Each list filter: its values as one array parameter, named in
        // its clause.
        let mut any_of = |values: &[String], clause: &dyn Fn(&str) -> String| {
            if !values.is_empty() {
                let a = t.arg(values.to_vec(), Type::TEXT_ARRAY);
                cond.push_str(&clause(&a));
            }
        };
        any_of(&self.roles, &|r| {
            format!(" AND (lower(trim(d.role)) = ANY({r}) OR ('thinking' = ANY({r}) AND d.thinking_present))")
        });
        any_of(&self.tools, &|a| {
            format!(" AND EXISTS (SELECT 1 FROM unnest(d.tool_names) n WHERE lower(trim(n)) = ANY({a}))")
        });
        any_of(&self.agents, &|a| {
            format!(" AND lower(trim(s.agent)) = ANY({a})")
        });
        any_of(&self.projects, &|a| {
            format!(" AND EXISTS (SELECT 1 FROM unnest({a}::text[]) n WHERE strpos(lower(s.project), n) > 0)")
        });
        any_of(&self.sessions, &|a| {
            format!(
                " AND EXISTS (SELECT 1 FROM unnest({a}::text[]) n
                             WHERE starts_with(s.session_id, n) OR s.path = n)"
            )
        });
        if !self.agents.is_empty() || !self.projects.is_empty() || !self.sessions.is_empty() {
            from.push_str(" JOIN sessions s ON s.id = w.session");
        }
        let limit = t.arg(limit, Type::INT8);
        t.sql = format!(
            "SELECT {columns} FROM {from}, CAST({q}::text AS tsquery) q
             WHERE {cond} {order} LIMIT {limit}",
            order = if newest { "ORDER BY w.id DESC" } else { "" }
        );
        t
    }
}

impl PgIndex {
    /// Counts the entries matching `p`, stopping at `cap` (as
    /// [`agentlog_index::Index::count_matches`]).
    pub fn count_matches(&self, p: &SearchParams, cap: u64) -> Result<u64, PgError> {
        let Some(m) = Matching::of(p)? else {
            return Ok(0);
        };
        let cap = i64::try_from(cap).unwrap_or(i64::MAX);
        let mut t = m.select("1", cap, false);
        t.sql = format!("SELECT count(*) FROM ({}) m", t.sql);
        let rows = t
            .query(&mut *self.db()?)
            .map_err(|e| self.err(&format!("counting matches of {:?}", p.query), &e))?;
        Ok(rows.first().map_or(0, |r| r.get::<_, i64>(0).max(0) as u64))
    }

    /// Searches every entry on the server; returns the best hits first (as
    /// [`agentlog_index::Index::search`]).
    pub fn search(&self, p: &SearchParams) -> Result<Vec<Hit>, PgError> {
        Ok(self.search_window(p)?.0)
    }

    /// Searches and counts the matches up to `cap`: the newest matches
    /// ranked are every match when they do not fill the window, so the
    /// count needs no query of its own unless `cap` is beyond the window.
    pub fn search_and_count(&self, p: &SearchParams, cap: u64) -> Result<(Vec<Hit>, u64), PgError> {
        let (hits, window, candidates) = self.search_window(p)?;
        if cap <= candidates {
            return Ok((hits, window.min(cap)));
        }
        let n = self.count_matches(p, cap)?;
        Ok((hits, n))
    }

    /// Returns the hits, how many matches were ranked (the newest, at most
    /// the candidates) and how many could have been.
    fn search_window(&self, p: &SearchParams) -> Result<(Vec<Hit>, u64, u64), PgError> {
        let Some(m) = Matching::of(p)? else {
            return Ok((Vec::new(), 0, 0));
        };
        let limit = if p.limit == 0 { 20 } else { p.limit };
        let candidates = if p.candidates == 0 {
            2000
        } else {
            p.candidates
        }
        .max(limit) as i64;
        let now = p.now_ms.unwrap_or_else(agentlog_index::time::now_ms);
        // One statement: the newest candidates, ranked as the scan finds
        // them (their words are not copied out), the best `limit` of them
        // (picked in the same floating-point steps as [`score`]) with their
        // entries and sessions, and how many were ranked.
        let mut t = m.select(
            "w.id, w.ts_ms, ts_rank('{0.2, 0.3, 0.5, 1.0}', w.words, q)::float8 AS rank",
            candidates,
            true,
        );
        let now_arg = t.arg(now, Type::INT8);
        let limit_arg = t.arg(limit as i64, Type::INT8);
        t.sql = format!(
            "WITH m AS MATERIALIZED ({select}),
             top AS (SELECT id, rank FROM m
                     ORDER BY rank * (0.5::float8 + 0.5::float8 / (1.0::float8 +
                       (CASE WHEN m.ts_ms IS NULL THEN 365.0::float8
                             ELSE greatest(({now_arg} - m.ts_ms)::float8 / 86400000.0::float8,
                                           0.0::float8) END) / 30.0::float8))
                              DESC, id DESC
                     LIMIT {limit_arg})
             SELECT h.*, (SELECT count(*) FROM m), v.version
             FROM (SELECT max(version) AS version FROM refinery_schema_history) v
             LEFT JOIN (
               SELECT d.id, s.session_id, d.entry_id, s.path, s.agent, s.project,
                      coalesce(s.title, s.first_prompt), d.role, d.ts_ms, d.line,
                      d.text, d.thinking, d.tools, d.output, top.rank
               FROM top JOIN docs d ON d.id = top.id JOIN sessions s ON s.id = d.session
             ) h ON true",
            select = t.sql
        );
        // The schema's version comes with the answer (a row even when
        // nothing matched): no statement of its own before the search.
        let result = t.query(&mut self.db_unchecked());
        let rows = match result {
            Ok(rows) => rows,
            Err(e) => {
                if !self.schema_checked() {
                    // Perhaps a server this agentlog cannot read: say so.
                    schema::ensure(&mut self.db_unchecked(), self.url(), false)?;
                }
                return Err(self.err(&format!("searching for {:?}", p.query), &e));
            }
        };
        self.schema_seen(rows.first().and_then(|r| r.get::<_, Option<i32>>(16)))?;
        let window = rows
            .first()
            .map_or(0, |r| r.get::<_, i64>(15).max(0) as u64);
        let hl = highlight_terms(&agentlog_index::terms(&p.query)?);
        let mut hits = Vec::with_capacity(rows.len());
        for r in rows {
            if r.get::<_, Option<i64>>(0).is_none() {
                continue;
            }
            let cols: [String; 4] = [r.get(10), r.get(11), r.get(12), r.get(13)];
            let snippets: Vec<Snip> = cols.iter().map(|c| snippet(c, &hl)).collect();
            let best = (0..4)
                .filter(|&i| !snippets[i].marks.is_empty())
                .max_by(|&a, &b| {
                    snippets[a]
                        .marks
                        .len()
                        .cmp(&snippets[b].marks.len())
                        .then(b.cmp(&a))
                })
                .or_else(|| (0..4).find(|&i| !snippets[i].text.is_empty()))
                .unwrap_or(0);
            let snip = &snippets[best];
            hits.push((
                r.get::<_, i64>(0),
                Hit {
                    session_id: r.get(1),
                    entry_id: r.get(2),
                    path: r.get(3),
                    agent: r.get(4),
                    project: r.get(5),
                    title: r.get(6),
                    role: r.get(7),
                    field: FIELDS[best],
                    ts_ms: r.get(8),
                    line: r.get::<_, Option<i64>>(9).map(|l| l as u64),
                    score: score(r.get(14), r.get(8), now),
                    snippet: snip.marked(),
                    text: snip.text.clone(),
                    marks: snip.marks.clone(),
                    // No kind on the server yet.
                    kind: Default::default(),
                },
            ));
        }
        hits.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(b.0.cmp(&a.0)));
        Ok((
            hits.into_iter().map(|(_, h)| h).collect(),
            window,
            candidates as u64,
        ))
    }
}

fn score(rank: f64, ts: Option<i64>, now: i64) -> f64 {
    let age_days = ts.map_or(365.0, |t| ((now - t) as f64 / 86_400_000.0).max(0.0));
    rank * (0.5 + 0.5 / (1.0 + age_days / 30.0))
}

/// A snippet: text and the matched ranges in it.
struct Snip {
    text: String,
    marks: Vec<Mark>,
}

impl Snip {
    fn marked(&self) -> String {
        let mut s = String::with_capacity(self.text.len() + 8);
        let mut pos = 0;
        for m in &self.marks {
            s.push_str(&self.text[pos..m.start]);
            s.push('«');
            s.push_str(&self.text[m.start..m.end]);
            s.push('»');
            pos = m.end;
        }
        s.push_str(&self.text[pos..]);
        s
    }
}

/// Cuts a snippet of at most 24 words of `col` around the most matches of
/// the query's terms.
fn snippet(col: &str, terms: &[(Vec<String>, bool)]) -> Snip {
    let ws = words(col);
    if ws.is_empty() {
        return Snip {
            text: String::new(),
            marks: Vec::new(),
        };
    }
    let mut hit = vec![false; ws.len()];
    for (tw, prefix) in terms {
        let n = tw.len();
        if n == 0 || n > ws.len() {
            continue;
        }
        for i in 0..=ws.len() - n {
            let ok = (0..n).all(|k| {
                let w = &ws[i + k].0;
                if *prefix && k + 1 == n {
                    w.starts_with(tw[k].as_str())
                } else {
                    *w == tw[k]
                }
            });
            if ok {
                hit[i..i + n].iter_mut().for_each(|h| *h = true);
            }
        }
    }
    // The window of 24 words holding the most matched words, starting a
    // little before its first match.
    let mut start = 0;
    if ws.len() > SNIPPET_WORDS {
        let mut best = (0usize, 0usize);
        for s in 0..=ws.len() - SNIPPET_WORDS {
            let n = hit[s..s + SNIPPET_WORDS].iter().filter(|h| **h).count();
            if n > best.0 {
                best = (n, s);
            }
        }
        if best.0 > 0 {
            let first = (best.1..best.1 + SNIPPET_WORDS)
                .find(|&i| hit[i])
                .unwrap_or(best.1);
            start = first.saturating_sub(3).min(ws.len() - SNIPPET_WORDS);
        }
    }
    let end = (start + SNIPPET_WORDS).min(ws.len());
    let from = if start == 0 { 0 } else { ws[start].1.start };
    let to = if end == ws.len() {
        col.len()
    } else {
        ws[end - 1].1.end
    };
    let mut text = String::new();
    if start > 0 {
        text.push('…');
    }
    let base = text.len();
    text.push_str(&col[from..to]);
    let mut marks: Vec<Mark> = Vec::new();
    for i in start..end {
        if !hit[i] {
            continue;
        }
        let r = &ws[i].1;
        let (s, e) = (base + r.start - from, base + r.end - from);
        match marks.last_mut() {
            Some(m) if i > start && hit[i - 1] => m.end = e,
            _ => marks.push(Mark { start: s, end: e }),
        }
    }
    if end < ws.len() {
        text.push('…');
    }
    Snip { text, marks }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_mark_words_phrases_and_prefixes() {
        let t = |q: &str| highlight_terms(&agentlog_index::terms(q).unwrap());
        let s = snippet(
            "The Borrow checker said: borrowed value",
            &t("\"borrow checker\" borrow*"),
        );
        assert_eq!(s.marked(), "The «Borrow checker» said: «borrowed» value");
        let long: String = (0..100).map(|i| format!("w{i} ")).collect();
        let s = snippet(&long, &t("w50"));
        assert!(
            s.marked().starts_with("…w47 w48 w49 «w50»"),
            "{}",
            s.marked()
        );
        assert!(s.text.ends_with('…'));
    }
}
