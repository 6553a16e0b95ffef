use crate::fresh::{refreshed, IndexLocation};
use crate::out;
use agentlog_index::time::{now_ms, parse_time};
use agentlog_index::{ExplainRow, GroupBy, PriceUsed, StatRow, StatsParams};
use std::process::ExitCode;

/// Count tokens and estimated cost by day, model, project and agent.
///
/// Every model response is counted once (a response replayed by a forked or
/// resumed session is not counted again). Input excludes cached tokens,
/// which are shown apart (cache read, cache write). Cost is taken from the
/// session when it recorded one, else estimated from LiteLLM's public price
/// list (a dated snapshot is built in; `agentlog prices update` refreshes
/// it, --prices FILE overrides it); models not in the list are counted with
/// cost unknown. --explain lists every counted response with its tokens and
/// the price row used. Days are UTC.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Group by day, model, project or agent.
    #[arg(long, value_name = "GROUP", default_value = "model", value_parser = ["day", "model", "project", "agent"])]
    pub by: String,
    /// Only responses since a date (2026-01-31), a time (RFC 3339) or a span
    /// ago (30m, 12h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only responses before this time (same forms as --since).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Only these agents (repeat or separate with commas).
    #[arg(long, value_name = "AGENT", value_delimiter = ',')]
    pub agent: Vec<String>,
    /// Only sessions whose project directory contains this text.
    #[arg(long, value_name = "TEXT")]
    pub project: Vec<String>,
    /// List every counted response (time, session, line, model, tokens, the
    /// price row used, cost) instead of the totals.
    #[arg(long)]
    pub explain: bool,
    /// Price tokens with this price list (LiteLLM's
    /// model_prices_and_context_window.json, or a snapshot written by
    /// `agentlog prices update`).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<std::path::PathBuf>,
    /// Print the table as JSON.
    #[arg(long)]
    pub json: bool,
    /// Read from the team database instead of this machine:
    /// postgres://USER:PASSWORD@HOST:PORT/DATABASE.
    #[arg(long, value_name = "URL", env = "AGENTLOG_DB", hide_env_values = true)]
    pub db: Option<String>,
    #[command(flatten)]
    pub loc: IndexLocation,
}

/// Runs `agentlog stats`.
pub fn cmd_stats(args: Args) -> anyhow::Result<ExitCode> {
    let now = now_ms();
    let params = StatsParams {
        by: GroupBy::parse(&args.by).unwrap_or_default(),
        since_ms: args
            .since
            .as_deref()
            .map(|s| parse_time("--since", s, now))
            .transpose()?,
        until_ms: args
            .until
            .as_deref()
            .map(|s| parse_time("--until", s, now))
            .transpose()?,
        agents: args.agent.clone(),
        projects: args.project.clone(),
    };
    let source = crate::commands::prices::use_prices(args.prices.as_deref())?;
    if let Some(url) = &args.db {
        if args.explain {
            anyhow::bail!("--explain reads the local index; leave out --db");
        }
        let stats = crate::commands::db::connect(url)?.stats(&params)?;
        if args.json {
            out::print_json(&stats)?;
        } else {
            let mut t = table(&args.by, &stats.rows, &stats.total);
            t.push_str(&source);
            t.push('\n');
            out::print(&t)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let index = refreshed(&args.loc)?;
    if args.explain {
        let rows = index.explain(&params)?;
        if args.json {
            out::print_json(&rows)?;
        } else {
            out::print(&explain_table(&rows, &source))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let stats = index.stats(&params)?;
    if args.json {
        out::print_json(&stats)?;
    } else {
        let mut t = table(&args.by, &stats.rows, &stats.total);
        t.push_str(&source);
        t.push('\n');
        out::print(&t)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn explain_table(rows: &[ExplainRow], source: &str) -> String {
    let head: Vec<String> = [
        "time (UTC)",
        "session",
        "line",
        "model",
        "input",
        "output",
        "cache read",
        "cache write",
        "price",
        "cost",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut body = vec![head];
    let mut total = 0.0;
    let mut unknown = 0usize;
    for r in rows {
        let time = r
            .ts_ms
            .and_then(chrono::DateTime::<chrono::Utc>::from_timestamp_millis)
            .map_or("unknown".to_string(), |t| {
                t.format("%Y-%m-%d %H:%M:%S").to_string()
            });
        let price = match &r.price {
            PriceUsed::Recorded => "recorded in the file".to_string(),
            PriceUsed::List(row) => row.clone(),
            PriceUsed::Unknown => "none".to_string(),
        };
        match r.cost_usd {
            Some(c) => total += c,
            None => unknown += 1,
        }
        body.push(vec![
            time,
            r.session_id.chars().take(8).collect(),
            r.line.map_or("-".to_string(), |l| l.to_string()),
            sanitize(r.model.as_deref().unwrap_or("unknown")),
            out::group(r.input),
            out::group(r.output),
            out::group(r.cache_read),
            out::group(r.cache_write),
            sanitize(&price),
            r.cost_usd.map_or("?".to_string(), |c| format!("${c:.6}")),
        ]);
    }
    let widths: Vec<usize> = (0..10)
        .map(|i| body.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut s = String::new();
    for r in &body {
        let cells: Vec<String> = (0..10)
            .map(|i| {
                if (4..8).contains(&i) || i == 9 {
                    format!("{:>w$}", r[i], w = widths[i])
                } else {
                    format!("{:<w$}", r[i], w = widths[i])
                }
            })
            .collect();
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    s.push_str(&format!(
        "{}, ${total:.2}{}\n{source}\n",
        out::count(rows.len() as u64, "response"),
        if unknown > 0 {
            format!(" + {unknown} of unknown cost")
        } else {
            String::new()
        }
    ));
    s
}

/// Model names come from session files: keep escape sequences out of the
/// terminal.
fn sanitize(s: &str) -> String {
    agentlog_formats::render::sanitize::sanitize_line(s).into_owned()
}

fn cost(r: &StatRow) -> String {
    match r.cost_usd {
        Some(c) if r.unpriced_responses > 0 => format!("${c:.2}+?"),
        Some(c) => format!("${c:.2}"),
        None => "?".to_string(),
    }
}

fn table(by: &str, rows: &[StatRow], total: &StatRow) -> String {
    let head = [
        by.to_string(),
        "responses".into(),
        "input".into(),
        "output".into(),
        "cache read".into(),
        "cache write".into(),
        "total".into(),
        "cost".into(),
    ];
    let line = |r: &StatRow| {
        [
            agentlog_formats::render::sanitize::sanitize_line(&r.key).into_owned(),
            out::group(r.responses),
            out::group(r.input),
            out::group(r.output),
            out::group(r.cache_read),
            out::group(r.cache_write),
            out::group(r.total),
            cost(r),
        ]
    };
    let mut body: Vec<[String; 8]> = vec![head];
    body.extend(rows.iter().map(line));
    body.push(line(total));
    let widths: Vec<usize> = (0..8)
        .map(|i| body.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut s = String::new();
    let n = body.len();
    for (k, r) in body.iter().enumerate() {
        if k == n - 1 {
            let w: usize = widths.iter().sum::<usize>() + 2 * 7;
            s.push_str(&"-".repeat(w));
            s.push('\n');
        }
        let mut cells = Vec::new();
        for i in 0..8 {
            if i == 0 {
                cells.push(format!("{:<w$}", r[i], w = widths[i]));
            } else {
                cells.push(format!("{:>w$}", r[i], w = widths[i]));
            }
        }
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    if total.unpriced_responses > 0 {
        s.push_str(&format!(
            "? = {} of models without a known price {} not in the cost\n",
            out::count(total.unpriced_responses, "response"),
            if total.unpriced_responses == 1 {
                "is"
            } else {
                "are"
            }
        ));
    }
    s
}
