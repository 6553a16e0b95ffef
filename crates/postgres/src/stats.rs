//! Token counts and cost on the server, grouped in SQL.
//!
//! The same rules as the SQLite index ([`agentlog_index::Stats`]): each
//! response counted once (a response id seen in several files counts at its
//! first row, which pushes mark: `usage.counted`, see [`crate::schema`];
//! a resumed copy's replayed responses, with the same session id, time and
//! tokens, count once), UTC days, cost from the recorded cost or the price
//! table.

use crate::typed::Typed;
use crate::{PgError, PgIndex};
use agentlog_index::prices;
use agentlog_index::{GroupBy, StatRow, Stats, StatsParams};
use postgres::types::Type;
use std::collections::BTreeMap;

fn key_sql(by: GroupBy) -> &'static str {
    match by {
        // The UTC day as a number (days since 1970, a column kept by the
        // server), named in Rust: cheaper than formatting a date per row.
        GroupBy::Day => "coalesce(u.day::text, 'unknown')",
        GroupBy::Model => "coalesce(u.model, 'unknown')",
        GroupBy::Project => "coalesce(s.project, 'unknown')",
        GroupBy::Agent => "s.agent",
    }
}

impl PgIndex {
    /// Counts tokens and cost (as [`agentlog_index::Index::stats`]).
    pub fn stats(&self, p: &StatsParams) -> Result<Stats, PgError> {
        let agents: Vec<String> = p.agents.iter().map(|a| a.to_lowercase()).collect();
        let projects: Vec<String> = p.projects.iter().map(|x| x.to_lowercase()).collect();
        // Sessions are joined only for what needs them (their agent or
        // project, as a key or a filter).
        let join = !agents.is_empty()
            || !projects.is_empty()
            || matches!(p.by, GroupBy::Project | GroupBy::Agent);
        let mut t = Typed::new();
        // A session resumed in another agent keeps its id there, and the
        // copy's responses, often without their ids, are the original's:
        // a row with the same session id, time and tokens as a row of
        // another file counts at the one with a response id, else at the
        // first (as the SQLite index counts them).
        let mut cond = String::from(
            "u.counted AND (u.ts_ms IS NULL OR NOT EXISTS (
               SELECT 1 FROM sessions us
                 JOIN sessions t ON t.session_id = us.session_id AND t.id <> us.id
                 JOIN usage v ON v.session = t.id
                WHERE us.id = u.session
                  AND v.ts_ms = u.ts_ms AND v.input = u.input AND v.output = u.output
                  AND v.cache_read = u.cache_read AND v.cache_write = u.cache_write
                  AND ((v.response_id IS NOT NULL AND u.response_id IS NULL)
                       OR ((v.response_id IS NULL) = (u.response_id IS NULL) AND v.id < u.id))))",
        );
        if let Some(since) = p.since_ms {
            cond.push_str(&format!(" AND u.ts_ms >= {}", t.arg(since, Type::INT8)));
        }
        if let Some(until) = p.until_ms {
            cond.push_str(&format!(" AND u.ts_ms < {}", t.arg(until, Type::INT8)));
        }
        if !agents.is_empty() {
            let a = t.arg(agents, Type::TEXT_ARRAY);
            cond.push_str(&format!(" AND lower(s.agent) = ANY({a})"));
        }
        if !projects.is_empty() {
            let a = t.arg(projects, Type::TEXT_ARRAY);
            cond.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM unnest({a}::text[]) n WHERE strpos(lower(s.project), n) > 0)"
            ));
        }
        t.sql = format!(
            "SELECT ({key})::text AS k, u.model, u.cost_usd IS NOT NULL, count(*),
                    sum(u.input)::bigint, sum(u.output)::bigint, sum(u.cache_read)::bigint,
                    sum(u.cache_write)::bigint, sum(u.reasoning)::bigint, sum(u.cost_usd),
                    (u.input + u.cache_read + u.cache_write) > {tier}
             FROM usage u {from}
             WHERE {cond}
             GROUP BY 1, 2, 3, 11",
            key = key_sql(p.by),
            tier = prices::TIER_TOKENS,
            from = if join {
                "JOIN sessions s ON s.id = u.session"
            } else {
                ""
            },
        );
        let rows = t
            .query(&mut *self.db()?)
            .map_err(|e| self.err("counting tokens", &e))?;
        let mut groups: BTreeMap<String, StatRow> = BTreeMap::new();
        for r in rows {
            let mut key: String = r.get(0);
            if p.by == GroupBy::Day {
                key = day_name(&key);
            }
            let model: Option<String> = r.get(1);
            let recorded: bool = r.get(2);
            let n = |i: usize| r.get::<_, Option<i64>>(i).unwrap_or(0).max(0) as u64;
            let (responses, input, output, cache_read, cache_write, reasoning) =
                (n(3), n(4), n(5), n(6), n(7), n(8));
            let cost: Option<f64> = r.get(9);
            // Prompts above the long-context tier are priced at its rates.
            let long: bool = r.get(10);
            let (cost_usd, unpriced) = if recorded {
                (cost, 0)
            } else {
                let tokens = [input, output, cache_read, cache_write];
                match model.as_deref().and_then(prices::price) {
                    Some(pr) => (Some(prices::cost_of(pr, tokens, long)), 0),
                    None => (None, responses),
                }
            };
            let g = groups.entry(key.clone()).or_insert_with(|| StatRow {
                key,
                ..StatRow::default()
            });
            g.add(&StatRow {
                key: String::new(),
                responses,
                input,
                output,
                cache_read,
                cache_write,
                reasoning,
                total: input + output + cache_read + cache_write,
                cost_usd,
                unpriced_responses: unpriced,
            });
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

/// Names the day `days` after 1970-01-01 (UTC) as `YYYY-MM-DD`; other
/// keys (`unknown`) stay.
fn day_name(days: &str) -> String {
    days.parse::<i64>()
        .ok()
        .and_then(|d| chrono::DateTime::from_timestamp(d.checked_mul(86_400)?, 0))
        .map_or_else(|| days.to_string(), |t| t.format("%Y-%m-%d").to_string())
}
