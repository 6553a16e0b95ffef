//! Tokens and estimated cost by day, model, project or agent.
//!
//! Each model response is counted once: readers give one message per API
//! response with its usage, and a response id seen in several files (a
//! forked or resumed session replays its parent) is counted at its first
//! row only, and so is a response a session resumed in another agent
//! replays without its id (the same session id, time and tokens). Input
//! tokens exclude cached ones (the model's `Usage.input`; the Codex reader
//! subtracts them). Days are UTC.

use crate::error::SqlContext;
use crate::prices;
use crate::{Index, IndexError};
use serde::Serialize;
use std::collections::BTreeMap;

/// What rows are grouped by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    /// The UTC day of the response.
    Day,
    /// The model.
    #[default]
    Model,
    /// The session's project.
    Project,
    /// The agent.
    Agent,
}

impl GroupBy {
    /// Parses `day`, `model`, `project` or `agent`.
    pub fn parse(s: &str) -> Option<GroupBy> {
        match s {
            "day" => Some(GroupBy::Day),
            "model" => Some(GroupBy::Model),
            "project" => Some(GroupBy::Project),
            "agent" => Some(GroupBy::Agent),
            _ => None,
        }
    }

    fn sql(self) -> &'static str {
        match self {
            GroupBy::Day => {
                "coalesce(strftime('%Y-%m-%d', u.ts_ms / 1000, 'unixepoch'), 'unknown')"
            }
            GroupBy::Model => "coalesce(u.model, 'unknown')",
            GroupBy::Project => "coalesce(s.project, 'unknown')",
            GroupBy::Agent => "s.agent",
        }
    }
}

/// Which usage to count.
#[derive(Clone, Debug, Default)]
pub struct StatsParams {
    /// How to group.
    pub by: GroupBy,
    /// Only responses at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Only responses before this time.
    pub until_ms: Option<i64>,
    /// Only these agents.
    pub agents: Vec<String>,
    /// Only projects containing one of these.
    pub projects: Vec<String>,
}

/// Token counts and cost of one group.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StatRow {
    /// The group (a day, a model, a project or an agent).
    pub key: String,
    /// Model responses counted.
    pub responses: u64,
    /// Input tokens not from cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from cache.
    pub cache_read: u64,
    /// Input tokens written to cache.
    pub cache_write: u64,
    /// Reasoning tokens (part of `output`).
    pub reasoning: u64,
    /// All tokens: input + output + cache read + cache write.
    pub total: u64,
    /// Estimated (or recorded) cost in US dollars of the responses whose
    /// model has a known price; `None` when none has.
    pub cost_usd: Option<f64>,
    /// Responses whose cost is unknown (model not in the price table).
    pub unpriced_responses: u64,
}

impl StatRow {
    /// Adds the counts and cost of `o` to this row (not its key); a cost
    /// known on either side stays known.
    pub fn add(&mut self, o: &StatRow) {
        self.responses += o.responses;
        self.input += o.input;
        self.output += o.output;
        self.cache_read += o.cache_read;
        self.cache_write += o.cache_write;
        self.reasoning += o.reasoning;
        self.total += o.total;
        self.unpriced_responses += o.unpriced_responses;
        self.cost_usd = match (self.cost_usd, o.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
}

/// The result of `agentlog stats`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// How rows are grouped.
    pub by: GroupBy,
    /// One row per group: days in order, others by total tokens, largest
    /// first.
    pub rows: Vec<StatRow>,
    /// The sum of all rows.
    pub total: StatRow,
}

/// The usage rows counted: each response once, within the time range
/// `?1`..`?2`. A response id seen in several files counts at its first
/// row. A session resumed in another agent keeps its id there, and the
/// copy's responses are the original's, often without their ids (the
/// target format has no place for them): a row of a file with the same
/// session id, time and tokens as a row of another file is the same
/// response, counted at the row that has a response id (the original's),
/// else at the first.
const COUNTED: &str = "(u.response_id IS NULL
                    OR u.id = (SELECT min(id) FROM usage WHERE response_id = u.response_id))
               AND (u.ts_ms IS NULL OR NOT EXISTS (
                    SELECT 1 FROM sessions t JOIN usage v ON v.session = t.id
                     WHERE t.session_id = s.session_id AND t.id <> u.session
                       AND v.ts_ms = u.ts_ms AND v.input = u.input AND v.output = u.output
                       AND v.cache_read = u.cache_read AND v.cache_write = u.cache_write
                       AND ((v.response_id IS NOT NULL AND u.response_id IS NULL)
                            OR ((v.response_id IS NULL) = (u.response_id IS NULL) AND v.id < u.id))))
               AND (?1 IS NULL OR u.ts_ms >= ?1)
               AND (?2 IS NULL OR u.ts_ms < ?2)";

/// Which price a counted response was costed with.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PriceUsed {
    /// The cost the session file recorded.
    Recorded,
    /// A row of the price list (its name).
    List(String),
    /// No price: the model is not in the list (or not known).
    Unknown,
}

/// One counted model response, with its tokens and the price used: what
/// `agentlog stats --explain` lists so that a total can be audited.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExplainRow {
    /// The session id.
    pub session_id: String,
    /// The agent.
    pub agent: String,
    /// The session file.
    pub path: String,
    /// The entry that carries the usage.
    pub entry_id: String,
    /// Its line in the file.
    pub line: Option<u64>,
    /// Its time, ms since the epoch.
    pub ts_ms: Option<i64>,
    /// The model, when known.
    pub model: Option<String>,
    /// Input tokens not from cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from cache.
    pub cache_read: u64,
    /// Input tokens written to cache.
    pub cache_write: u64,
    /// Reasoning tokens (part of `output`).
    pub reasoning: u64,
    /// The price used.
    pub price: PriceUsed,
    /// The cost in US dollars, when known.
    pub cost_usd: Option<f64>,
}

impl Index {
    /// Lists every response [`Index::stats`] counts with the same
    /// parameters (grouping aside), oldest first, with its tokens, the price
    /// row used and its cost.
    pub fn explain(&self, p: &StatsParams) -> Result<Vec<ExplainRow>, IndexError> {
        let projects = if p.projects.is_empty() {
            None
        } else {
            Some(self.projects_matching(&p.projects)?)
        };
        let sql = format!(
            "SELECT s.session_id, s.agent, s.path, s.project, u.entry_id, u.line, u.ts_ms, u.model,
                    u.input, u.output, u.cache_read, u.cache_write, u.reasoning, u.cost_usd
             FROM usage u JOIN sessions s ON s.id = u.session
             WHERE {COUNTED}
             ORDER BY u.ts_ms, u.id"
        );
        let mut stmt = self.conn.prepare(&sql).at(&self.path)?;
        let rows = stmt
            .query_map(rusqlite::params![p.since_ms, p.until_ms], |r| {
                let n = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
                Ok((
                    r.get::<_, Option<String>>(3)?,
                    ExplainRow {
                        session_id: r.get(0)?,
                        agent: r.get(1)?,
                        path: r.get(2)?,
                        entry_id: r.get(4)?,
                        line: r.get::<_, Option<i64>>(5)?.map(|l| l.max(0) as u64),
                        ts_ms: r.get(6)?,
                        model: r.get(7)?,
                        input: n(8)?,
                        output: n(9)?,
                        cache_read: n(10)?,
                        cache_write: n(11)?,
                        reasoning: n(12)?,
                        price: PriceUsed::Unknown,
                        cost_usd: r.get(13)?,
                    },
                ))
            })
            .at(&self.path)?;
        let mut out = Vec::new();
        for row in rows {
            let (project, mut e) = row.at(&self.path)?;
            if !p.agents.is_empty() && !p.agents.iter().any(|a| a.eq_ignore_ascii_case(&e.agent)) {
                continue;
            }
            if let Some(ps) = &projects {
                if !project.as_ref().is_some_and(|x| ps.contains(x)) {
                    continue;
                }
            }
            if e.cost_usd.is_some() {
                e.price = PriceUsed::Recorded;
            } else if let Some(pr) = e.model.as_deref().and_then(prices::price) {
                e.cost_usd = Some(prices::cost(
                    pr,
                    e.input,
                    e.output,
                    e.cache_read,
                    e.cache_write,
                ));
                e.price = PriceUsed::List(pr.model.clone());
            }
            out.push(e);
        }
        Ok(out)
    }

    /// Counts tokens and cost.
    pub fn stats(&self, p: &StatsParams) -> Result<Stats, IndexError> {
        let projects = if p.projects.is_empty() {
            None
        } else {
            Some(self.projects_matching(&p.projects)?)
        };
        let sql = format!(
            "SELECT {key}, u.model, u.cost_usd IS NOT NULL, count(*), sum(u.input), sum(u.output),
                    sum(u.cache_read), sum(u.cache_write), sum(u.reasoning), sum(u.cost_usd),
                    s.agent, s.project, (u.input + u.cache_read + u.cache_write) > {t}
             FROM usage u JOIN sessions s ON s.id = u.session
             WHERE {counted}
             GROUP BY 1, 2, 3, s.agent, s.project, 13",
            key = p.by.sql(),
            t = prices::TIER_TOKENS,
            counted = COUNTED,
        );
        let mut stmt = self.conn.prepare(&sql).at(&self.path)?;
        let rows = stmt
            .query_map(rusqlite::params![p.since_ms, p.until_ms], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, bool>(2)?,
                    [
                        r.get::<_, i64>(3)?,
                        r.get::<_, i64>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, i64>(6)?,
                        r.get::<_, i64>(7)?,
                        r.get::<_, i64>(8)?,
                    ],
                    r.get::<_, Option<f64>>(9)?,
                    r.get::<_, String>(10)?,
                    r.get::<_, Option<String>>(11)?,
                    r.get::<_, bool>(12)?,
                ))
            })
            .at(&self.path)?;
        let mut groups: BTreeMap<String, StatRow> = BTreeMap::new();
        for row in rows {
            let (key, model, recorded, n, cost, agent, project, long) = row.at(&self.path)?;
            if !p.agents.is_empty() && !p.agents.iter().any(|a| a.eq_ignore_ascii_case(&agent)) {
                continue;
            }
            if let Some(ps) = &projects {
                if !project.as_ref().is_some_and(|x| ps.contains(x)) {
                    continue;
                }
            }
            let [responses, input, output, cache_read, cache_write, reasoning] =
                n.map(|v| v.max(0) as u64);
            let (cost_usd, unpriced) = if recorded {
                (cost, 0)
            } else {
                let tokens = [input, output, cache_read, cache_write];
                match model.as_deref().and_then(prices::price) {
                    Some(pr) => (Some(prices::cost_of(pr, tokens, long)), 0),
                    None => (None, responses),
                }
            };
            let part = StatRow {
                key: key.clone(),
                responses,
                input,
                output,
                cache_read,
                cache_write,
                reasoning,
                total: input + output + cache_read + cache_write,
                cost_usd,
                unpriced_responses: unpriced,
            };
            groups
                .entry(key.clone())
                .or_insert_with(|| StatRow {
                    key,
                    ..StatRow::default()
                })
                .add(&part);
        }
        let mut rows: Vec<StatRow> = groups.into_values().collect();
        if p.by != GroupBy::Day {
            rows.sort_by(|a, b| b.total.cmp(&a.total).then(a.key.cmp(&b.key)));
        }
        let mut total = StatRow {
            key: "total".to_string(),
            ..StatRow::default()
        };
        for r in &rows {
            total.add(r);
        }
        Ok(Stats {
            by: p.by,
            rows,
            total,
        })
    }
}
