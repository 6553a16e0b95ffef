use crate::{config, out};
use agentlog_formats::discover::{discover_report, Found};
use agentlog_formats::{registry, Read};
use agentlog_model::Timestamp;
use anyhow::Context;
use chrono::{DateTime, Local, TimeZone, Utc};
use serde::Serialize;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

/// List the sessions of every agent on this machine, newest first.
///
/// Sessions are found where each agent keeps them (its default location,
/// its own environment overrides such as CLAUDE_CONFIG_DIR or CODEX_HOME,
/// the roots of ~/.config/agentlog/config.toml, or --root), read in
/// parallel, and listed with their agent, project, title (or first prompt),
/// start time, message count and tokens.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only these agents (repeat or separate with commas), e.g. claude,codex.
    #[arg(long, value_name = "AGENT", value_delimiter = ',')]
    pub agent: Vec<String>,
    /// Only sessions whose working directory contains this text.
    #[arg(long, value_name = "TEXT")]
    pub project: Option<String>,
    /// Only sessions started since a date (2026-01-31), a time (RFC 3339)
    /// or a span ago (30m, 12h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Show at most this many sessions.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Search PATH instead of AGENT's default locations (repeatable).
    #[arg(long = "root", value_name = "AGENT=PATH")]
    pub roots: Vec<String>,
    /// Read the catalog of the search index (brought up to date first when
    /// that is cheap) instead of every session file: fast on a machine with
    /// many sessions. See `agentlog index`.
    #[arg(long)]
    pub cached: bool,
    /// Print the sessions as a JSON array.
    #[arg(long)]
    pub json: bool,
}

/// One listed session.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The agent that wrote it.
    pub agent: String,
    /// The format that reads it.
    pub format: &'static str,
    /// The session id.
    pub id: String,
    /// The session file (or directory).
    pub path: PathBuf,
    /// The working directory.
    pub project: Option<String>,
    /// The title, or the first line of the first prompt.
    pub title: Option<String>,
    /// When it started (RFC 3339, UTC).
    pub started: Option<String>,
    /// When it last changed (RFC 3339, UTC).
    pub updated: Option<String>,
    /// Number of user, assistant and system messages (not tool results).
    pub messages: usize,
    /// Tokens used (input, output and cache).
    pub tokens: u64,
    #[serde(skip)]
    started_ms: Option<i64>,
}

/// What to list.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// Only these formats (all when empty).
    pub agents: Vec<String>,
    /// Substring of the working directory.
    pub project: Option<String>,
    /// Started at or after this time (epoch milliseconds).
    pub since_ms: Option<i64>,
    /// At most this many rows.
    pub limit: Option<usize>,
}

/// Runs `agentlog ls`.
pub fn cmd_ls(args: Args) -> anyhow::Result<ExitCode> {
    let settings = config::settings(&args.roots)?;
    let filter = Filter {
        agents: args.agent.clone(),
        project: args.project.clone(),
        since_ms: args
            .since
            .as_deref()
            .map(|s| parse_since(s, Utc::now()))
            .transpose()?,
        limit: args.limit,
    };
    let listing = if args.cached {
        let loc = crate::commands::index::IndexLocation {
            index: std::env::var_os("AGENTLOG_INDEX")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            roots: args.roots.clone(),
        };
        list_cached(&loc, &settings, &filter)?
    } else {
        list(&settings, &filter, std::io::stderr().is_terminal())?
    };
    for w in &listing.warnings {
        eprintln!("agentlog: warning: {w}");
    }
    if args.json {
        out::print_json(&listing.rows)?;
    } else {
        out::print(&table(&listing.rows, &settings.env.home))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The sessions listed, and what could not be read.
#[derive(Debug, Default)]
pub struct Listing {
    /// The sessions, newest first.
    pub rows: Vec<Row>,
    /// Directories that could not be searched and files that could not be
    /// read, each naming the path.
    pub warnings: Vec<String>,
}

/// Returns the sessions matching `filter`, newest first.
///
/// This reads every discovered file (in parallel). When the index crate's
/// catalog is available, this is the one function to switch to it.
pub fn list(
    settings: &config::Settings,
    filter: &Filter,
    progress: bool,
) -> anyhow::Result<Listing> {
    let formats = settings.formats(&filter.agents)?;
    let report = discover_report(&settings.env, Some(&formats));
    let mut listing = Listing {
        warnings: report.diagnostics.iter().map(ToString::to_string).collect(),
        ..Listing::default()
    };
    let results = par_map(&report.found, progress, |found| {
        if let Some(since) = filter.since_ms {
            // A session that started after `since` was written after it.
            if mtime_ms(found).is_some_and(|m| m < since) {
                return None;
            }
        }
        Some(read_found(found).map(|read| row(found, &read)))
    });
    for (found, r) in report.found.iter().zip(results) {
        match r {
            Some(Some(Ok(row))) => listing.rows.push(row),
            Some(Some(Err(e))) => listing.warnings.push(format!("{e:#}")),
            Some(None) => {}
            None => listing.warnings.push(format!(
                "{}: the {} reader failed on this file; please report it",
                found.path.display(),
                found.format
            )),
        }
    }
    finish(&mut listing, filter);
    Ok(listing)
}

/// Returns the sessions matching `filter`, newest first, from the index's
/// catalog (refreshed first when that is cheap).
pub fn list_cached(
    loc: &crate::commands::index::IndexLocation,
    settings: &config::Settings,
    filter: &Filter,
) -> anyhow::Result<Listing> {
    let formats = settings.formats(&filter.agents)?;
    let index = crate::commands::index::refreshed(loc)?;
    let params = agentlog_index::ListParams {
        // A session started since `since` was updated since then too.
        since_ms: filter.since_ms,
        ..agentlog_index::ListParams::default()
    };
    let mut listing = Listing::default();
    for info in index.sessions(&params)? {
        if !formats.contains(&info.format) {
            continue;
        }
        let Some(format) = registry::by_name(&info.format) else {
            continue;
        };
        let started = info.created_ms.or(info.updated_ms);
        let title = info
            .title
            .clone()
            .filter(|t| !t.trim().is_empty())
            .or(info.first_prompt.clone())
            .and_then(|t| {
                t.lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .map(|l| truncate(l, 200))
            });
        listing.rows.push(Row {
            agent: info.agent.clone(),
            format: format.name(),
            id: info.session_id.clone(),
            path: PathBuf::from(&info.path),
            project: info.project.clone(),
            title,
            started: rfc3339(started),
            updated: rfc3339(info.updated_ms),
            messages: usize::try_from(info.messages).unwrap_or(usize::MAX),
            tokens: info
                .tokens
                .iter()
                .map(|t| t.input + t.output + t.cache_read + t.cache_write)
                .sum(),
            started_ms: started,
        });
    }
    finish(&mut listing, filter);
    Ok(listing)
}

/// Applies the filters the discovery could not, orders newest first and
/// cuts to the limit.
fn finish(listing: &mut Listing, filter: &Filter) {
    listing.rows.retain(|r| {
        filter
            .project
            .as_deref()
            .is_none_or(|p| r.project.as_deref().is_some_and(|c| c.contains(p)))
            && filter
                .since_ms
                .is_none_or(|s| r.started_ms.is_some_and(|t| t >= s))
    });
    listing.rows.sort_by(|a, b| {
        b.started_ms
            .cmp(&a.started_ms)
            .then_with(|| a.path.cmp(&b.path))
    });
    if let Some(n) = filter.limit {
        listing.rows.truncate(n);
    }
}

/// Reads one discovered session with the format that found it.
pub fn read_found(found: &Found) -> anyhow::Result<Read> {
    let format = registry::by_name(found.format)
        .with_context(|| format!("{}: unknown format {}", found.path.display(), found.format))?;
    format
        .read_path(&found.path)
        .with_context(|| format!("{}: reading as {}", found.path.display(), found.format))
}

/// Applies `f` to every item on a few threads, keeping the order; shows a
/// progress bar on standard error when `progress` is set. An item whose
/// `f` panicked gives `None`.
pub fn par_map<T, F>(items: &[Found], progress: bool, f: F) -> Vec<Option<T>>
where
    T: Send,
    F: Fn(&Found) -> T + Sync,
{
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8)
        .min(items.len().max(1));
    let bar = if progress && items.len() > 1 {
        let b = indicatif::ProgressBar::with_draw_target(
            Some(items.len() as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{spinner} reading sessions {pos}/{len} {wide_bar}",
        ) {
            b.set_style(style);
        }
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, Option<T>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        // A reader that panics must not take the listing
                        // down with it; the caller reports the file.
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(item)));
                        mine.push((i, r.ok()));
                        bar.inc(1);
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    bar.finish_and_clear();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

fn mtime_ms(found: &Found) -> Option<i64> {
    let m = std::fs::metadata(&found.path).ok()?.modified().ok()?;
    Some(DateTime::<Utc>::from(m).timestamp_millis())
}

fn rfc3339(ms: Option<i64>) -> Option<String> {
    ms.and_then(|ms| Timestamp::Millis(ms).to_utc())
        .map(|t| Timestamp::from_datetime(t).to_string())
}

/// Summarises a session for the listing.
fn row(found: &Found, read: &Read) -> Row {
    let s = &read.session;
    let first_time = s
        .entries
        .iter()
        .find_map(|e| e.timestamp.as_ref().and_then(Timestamp::millis));
    let last_time = s
        .entries
        .iter()
        .rev()
        .find_map(|e| e.timestamp.as_ref().and_then(Timestamp::millis));
    let mtime = mtime_ms(found);
    let started = s
        .meta
        .created_at
        .as_ref()
        .and_then(Timestamp::millis)
        .or(first_time)
        .or(mtime);
    let updated = s
        .meta
        .updated_at
        .as_ref()
        .and_then(Timestamp::millis)
        .or(last_time)
        .or(mtime);
    let title = s
        .meta
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| s.first_prompt())
        .and_then(|t| {
            t.lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(|l| truncate(l, 200))
        });
    Row {
        agent: s.meta.agent.as_str().to_string(),
        format: found.format,
        id: s.meta.id.clone(),
        path: found.path.clone(),
        project: s.meta.cwd.clone(),
        title,
        started: rfc3339(started),
        updated: rfc3339(updated),
        messages: s.message_count(),
        tokens: s.total_usage().sum(),
        started_ms: started,
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// Keeps the end of a path, which names the project.
fn truncate_left(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let tail: String = s.chars().skip(n - max.saturating_sub(1)).collect();
    format!("…{tail}")
}

/// Renders the rows as an aligned table.
fn table(rows: &[Row], home: &std::path::Path) -> String {
    if rows.is_empty() {
        return "no sessions found\n".to_string();
    }
    let home = home.to_string_lossy();
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            let started = r
                .started_ms
                .and_then(|ms| Local.timestamp_millis_opt(ms).single())
                .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_else(|| "-".into());
            let project = r
                .project
                .as_deref()
                .map(|p| match p.strip_prefix(&*home) {
                    Some(rest)
                        if !home.is_empty() && (rest.is_empty() || rest.starts_with('/')) =>
                    {
                        format!("~{rest}")
                    }
                    _ => p.to_string(),
                })
                .unwrap_or_else(|| "-".into());
            [
                started,
                r.agent.clone(),
                r.messages.to_string(),
                r.tokens.to_string(),
                r.id.chars().take(8).collect(),
                truncate_left(&project, 32),
                truncate(r.title.as_deref().unwrap_or("-"), 60),
            ]
        })
        .collect();
    let header = [
        "STARTED", "AGENT", "MSGS", "TOKENS", "ID", "PROJECT", "TITLE",
    ];
    let mut widths = header.map(|h| h.chars().count());
    for c in &cells {
        for (w, cell) in widths.iter_mut().zip(c) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cols: [&str; 7]| {
        let mut l = String::new();
        for (i, (cell, w)) in cols.iter().zip(widths).enumerate() {
            let pad = w.saturating_sub(cell.chars().count());
            if i == 2 || i == 3 {
                l.push_str(&" ".repeat(pad));
                l.push_str(cell);
            } else if i == 6 {
                l.push_str(cell);
            } else {
                l.push_str(cell);
                l.push_str(&" ".repeat(pad));
            }
            if i < 6 {
                l.push_str("  ");
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(header);
    for c in &cells {
        line([&c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6]].map(String::as_str));
    }
    out
}

/// Parses `--since` as every command does
/// ([`agentlog_index::time::parse_time`]: dates and `today` in UTC, like the
/// times agentlog prints).
pub fn parse_since(s: &str, now: DateTime<Utc>) -> anyhow::Result<i64> {
    Ok(agentlog_index::time::parse_time(
        "--since",
        s,
        now.timestamp_millis(),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_accepts_spans_dates_and_times() {
        let now = Utc
            .timestamp_millis_opt(1_800_000_000_000)
            .single()
            .unwrap_or_default();
        assert_eq!(
            parse_since("7d", now).ok(),
            Some(1_800_000_000_000 - 7 * 86_400_000)
        );
        assert_eq!(
            parse_since("30m", now).ok(),
            Some(1_800_000_000_000 - 1_800_000)
        );
        assert_eq!(
            parse_since("2026-01-31T00:00:00Z", now).ok(),
            Some(1_769_817_600_000)
        );
        assert!(parse_since("2026-01-31", now).is_ok());
        assert!(parse_since("soon", now).is_err());
        assert!(parse_since("5y", now).is_err());
    }

    #[test]
    fn long_cells_are_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate_left("/a/b/c/d", 5), "…/c/d");
    }
}
