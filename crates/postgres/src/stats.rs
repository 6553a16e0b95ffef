//! Token counts and cost on the server, grouped in SQL.
//!
//! The same rules as the SQLite index ([`agentlog_index::Stats`]): each
//! response counted once (a response id seen in several files counts at its
//! first row), UTC days, cost from the recorded cost or the price table.

use crate::{PgError, PgIndex};
use agentlog_index::prices;
use agentlog_index::{GroupBy, StatRow, Stats, StatsParams};
use std::collections::BTreeMap;

fn key_sql(by: GroupBy) -> &'static str {
    match by {
        GroupBy::Day => {
            "coalesce(to_char(to_timestamp(u.ts_ms / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD'), 'unknown')"
        }
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
        let sql = format!(
            "SELECT {key} AS k, u.model, u.cost_usd IS NOT NULL, count(*),
                    sum(u.input)::bigint, sum(u.output)::bigint, sum(u.cache_read)::bigint,
                    sum(u.cache_write)::bigint, sum(u.reasoning)::bigint, sum(u.cost_usd),
                    (u.input + u.cache_read + u.cache_write) > {tier}
             FROM usage u JOIN sessions s ON s.id = u.session
             WHERE (u.response_id IS NULL OR NOT EXISTS (
                    SELECT 1 FROM usage w WHERE w.response_id = u.response_id AND w.id < u.id))
               AND ($1::bigint IS NULL OR u.ts_ms >= $1)
               AND ($2::bigint IS NULL OR u.ts_ms < $2)
               AND (cardinality($3::text[]) = 0 OR lower(s.agent) = ANY($3))
               AND (cardinality($4::text[]) = 0 OR EXISTS (
                    SELECT 1 FROM unnest($4::text[]) n WHERE strpos(lower(s.project), n) > 0))
             GROUP BY 1, 2, 3, 11",
            key = key_sql(p.by),
            tier = prices::TIER_TOKENS
        );
        let rows = self
            .db()
            .query(&sql, &[&p.since_ms, &p.until_ms, &agents, &projects])
            .map_err(|e| self.err("counting tokens", &e))?;
        let mut groups: BTreeMap<String, StatRow> = BTreeMap::new();
        for r in rows {
            let key: String = r.get(0);
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
            add(
                g,
                &StatRow {
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
                },
            );
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
            add(&mut total, r);
        }
        Ok(Stats {
            by: p.by,
            rows,
            total,
        })
    }
}

fn add(a: &mut StatRow, o: &StatRow) {
    a.responses += o.responses;
    a.input += o.input;
    a.output += o.output;
    a.cache_read += o.cache_read;
    a.cache_write += o.cache_write;
    a.reasoning += o.reasoning;
    a.total += o.total;
    a.unpriced_responses += o.unpriced_responses;
    a.cost_usd = match (a.cost_usd, o.cost_usd) {
        (Some(x), Some(y)) => Some(x + y),
        (x, y) => x.or(y),
    };
}
