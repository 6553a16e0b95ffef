use crate::{config, out};
use agentlog_api::{EmptiedBy, ListOptions, ListOrder, Listing, SessionSummary, Source};
use agentlog_formats::render::sanitize;
use agentlog_model::Timestamp;
use anyhow::Context;
use chrono::{DateTime, Datelike, Local, TimeZone, Timelike, Utc};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

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
    /// Read the catalog of the search index (brought up to date first):
    /// what `ls` does whenever an index exists (see `agentlog index`);
    /// with this flag, one is built when there is none.
    #[arg(long, conflicts_with = "files")]
    pub cached: bool,
    /// Read every session file instead of the index (slower with many
    /// sessions; what `ls` does when there is no index yet).
    #[arg(long)]
    pub files: bool,
    /// List the sessions of the team database instead:
    /// postgres://USER:PASSWORD@HOST:PORT/DATABASE.
    #[arg(
        long,
        value_name = "URL",
        env = "AGENTLOG_DB",
        hide_env_values = true,
        conflicts_with = "cached"
    )]
    pub db: Option<String>,
    /// Print the sessions as a JSON array.
    #[arg(long)]
    pub json: bool,
}

/// Runs `agentlog ls`.
pub fn cmd_ls(args: Args) -> anyhow::Result<ExitCode> {
    let settings = config::settings(&args.roots)?;
    settings.formats(&args.agent).context("--agent")?;
    let loc = crate::commands::index::IndexLocation {
        index: std::env::var_os("AGENTLOG_INDEX")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        roots: args.roots.clone(),
    };
    let source = match (args.cached, args.files) {
        (true, _) => Source::Index,
        (_, true) => Source::Files,
        _ => Source::Auto,
    }
    .resolve(&loc.resolve()?);
    let cached = source == Source::Index;
    let opts = ListOptions {
        agents: args.agent.clone(),
        project: args.project.clone(),
        since_ms: args
            .since
            .as_deref()
            .map(|s| parse_since(s, Utc::now()))
            .transpose()?,
        limit: args.limit,
        order: ListOrder::Started,
        source,
    };
    let listing = if let Some(url) = &args.db {
        let db = crate::commands::db::connect(url)?;
        agentlog_api::list::list_in(&settings, &opts, &db)?
    } else if cached {
        // The index and its refresh, with the notices of `search`.
        let index = crate::commands::index::refreshed(&loc)?;
        agentlog_api::list::list_in(&loc.resolve()?, &opts, &index)?
    } else {
        let bar = progress_bar();
        let l = agentlog_api::list::list(&settings, &opts, &|done, total| {
            if let Some(b) = &bar {
                b.set_length(total as u64);
                b.set_position(done as u64);
            }
        })?;
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        l
    };
    for w in &listing.warnings {
        crate::eprintln_clean!("agentlog: warning: {w}");
    }
    if args.json {
        out::print_json(&listing.sessions)?;
    } else if listing.sessions.is_empty() {
        out::print(&nothing_found(&listing, &args))?;
    } else {
        // Every cell of the table is sanitized (the table is not again:
        // checking its 1.5 MB at 1 GB of sessions was 3% of `ls`).
        write_table(
            &listing.sessions,
            &settings.env.home,
            &mut std::io::stdout().lock(),
        )?;
        if listing.matched > listing.sessions.len() {
            crate::eprintln_clean!(
                "agentlog: showing {} of {} sessions (--limit)",
                out::group(listing.sessions.len() as u64),
                out::group(listing.matched as u64)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A progress bar on standard error while files are read, on a terminal.
fn progress_bar() -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let b = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{spinner} reading sessions {pos}/{len} {wide_bar}")
    {
        b.set_style(style);
    }
    Some(b)
}

/// Says which filter left nothing to list, and where agentlog looked.
fn nothing_found(listing: &Listing, args: &Args) -> String {
    let places: Vec<String> = listing
        .looked_in
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let places = places.join(", ");
    match &listing.emptied_by {
        Some(EmptiedBy::Project { project, sessions }) => format!(
            "no sessions found: {} found, none with a project containing {project:?} (--project)\n",
            out::count(*sessions as u64, "session")
        ),
        Some(EmptiedBy::Since { since_ms, sessions }) => format!(
            "no sessions found: {} found, none started since {} (--since {})\n",
            out::count(*sessions as u64, "session"),
            rfc3339(Some(*since_ms)).unwrap_or_default(),
            args.since.as_deref().unwrap_or_default()
        ),
        Some(EmptiedBy::Agents { agents }) if !agents.is_empty() => format!(
            "no sessions found: no {} sessions in the default locations under {places} (--agent {})\n",
            agents.join(" or "),
            agents.join(",")
        ),
        _ => format!(
            "no sessions found in the agents' default locations under {places}; `agentlog formats` lists the agents, --root AGENT=PATH looks elsewhere\n"
        ),
    }
}

fn rfc3339(ms: Option<i64>) -> Option<String> {
    ms.and_then(Timestamp::rfc3339_millis)
}

fn truncate(s: &str, max: usize) -> String {
    sanitize::truncate(s, max)
}

/// Keeps the end of a path, which names the project.
fn truncate_left(s: &str, max: usize) -> String {
    sanitize::truncate_start(s, max)
}

/// Writes the rows as an aligned table to `w`, line by line. The widths
/// are found in a first pass; the cells that are costly to make (the
/// start, the id and the project) are kept from it, the others made again
/// while writing (holding every cell of 120,000 rows was a fifth of `ls`).
fn write_table(
    rows: &[SessionSummary],
    home: &std::path::Path,
    w: &mut impl std::io::Write,
) -> std::io::Result<()> {
    use std::io::Write as _;
    let home = home.to_string_lossy();
    let header = [
        "STARTED", "AGENT", "MSGS", "TOKENS", "ID", "PROJECT", "TITLE",
    ];
    let mut widths = header.map(|h| h.chars().count());
    // The kept cells of every row, one after the other in one string, and
    // where each row's three end.
    let mut kept = String::with_capacity(rows.len() * 64);
    let mut ends: Vec<[usize; 3]> = Vec::with_capacity(rows.len());
    let mut started = String::with_capacity(16);
    for r in rows {
        started_cell(r.started_ms, &mut started);
        let project = project_cell(r.project.as_deref(), &home);
        let id = sanitize::head(&r.id, 8);
        let cells = [
            started.len(),
            sanitize::sanitize_line(&r.agent).chars().count(),
            grouped_len(r.messages),
            grouped_len(r.tokens),
            id.chars().count(),
            project.chars().count(),
        ];
        for (w, n) in widths.iter_mut().zip(cells) {
            *w = (*w).max(n);
        }
        kept.push_str(&started);
        let a = kept.len();
        kept.push_str(&id);
        let b = kept.len();
        kept.push_str(&project);
        ends.push([a, b, kept.len()]);
    }
    let mut line = String::with_capacity(256);
    let put = |line: &mut String, cols: [&str; 7], lens: [usize; 7]| {
        for (i, ((cell, n), w)) in cols.iter().zip(lens).zip(widths).enumerate() {
            let pad = w.saturating_sub(n);
            // Numbers right-aligned; the title, last, not padded.
            if i == 2 || i == 3 {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            } else if i == 6 {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad));
            }
            if i < 6 {
                line.push_str("  ");
            }
        }
        line.truncate(line.trim_end().len());
        line.push('\n');
    };
    put(&mut line, header, header.map(|h| h.chars().count()));
    let mut buf = std::io::BufWriter::with_capacity(64 * 1024, w);
    buf.write_all(line.as_bytes())?;
    let mut from = 0;
    for (r, [a, b, c]) in rows.iter().zip(&ends) {
        let (started, id, project) = (&kept[from..*a], &kept[*a..*b], &kept[*b..*c]);
        from = *c;
        let agent = sanitize::sanitize_line(&r.agent);
        let (messages, tokens) = (out::group(r.messages), out::group(r.tokens));
        let title = truncate(r.title.as_deref().unwrap_or("-"), 60);
        line.clear();
        put(
            &mut line,
            [started, &agent, &messages, &tokens, id, project, &title],
            [
                started.len(),
                agent.chars().count(),
                messages.len(),
                tokens.len(),
                id.chars().count(),
                project.chars().count(),
                0,
            ],
        );
        buf.write_all(line.as_bytes())?;
    }
    buf.flush()
}

/// Writes the start column of a session that started at `ms` into `cell`
/// (`-` when it is not known): the local date and time to the minute.
fn started_cell(ms: Option<i64>, cell: &mut String) {
    use std::fmt::Write as _;
    cell.clear();
    let Some(t) = ms.and_then(|ms| Local.timestamp_millis_opt(ms).single()) else {
        cell.push('-');
        return;
    };
    // Digit by digit: `write!` was two thirds of this.
    let digits = |n: u32, width: u32| {
        (0..width)
            .rev()
            .map(move |i| char::from(b'0' + (n / 10u32.pow(i) % 10) as u8))
    };
    match u32::try_from(t.year()) {
        Ok(year) if year <= 9999 => cell.extend(digits(year, 4)),
        // A year of more than four digits, or before year 0.
        _ => {
            let _ = write!(cell, "{:04}", t.year());
        }
    }
    cell.push('-');
    cell.extend(digits(t.month(), 2));
    cell.push('-');
    cell.extend(digits(t.day(), 2));
    cell.push(' ');
    cell.extend(digits(t.hour(), 2));
    cell.push(':');
    cell.extend(digits(t.minute(), 2));
}

/// The project column: the working directory, under the home directory as
/// `~/…`, cut at the start to 32 characters (the end names the project).
fn project_cell(project: Option<&str>, home: &str) -> String {
    match project {
        Some(p) => match p.strip_prefix(home) {
            Some(rest) if !home.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
                truncate_left(&format!("~{rest}"), 32)
            }
            _ => truncate_left(p, 32),
        },
        None => "-".into(),
    }
}

/// The length of `n` as [`out::group`] writes it (ASCII digits and commas).
fn grouped_len(n: u64) -> usize {
    let digits = n.checked_ilog10().unwrap_or(0) as usize + 1;
    digits + (digits - 1) / 3
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
    fn grouped_numbers_are_as_long_as_they_are_written() {
        for n in [
            0, 1, 9, 10, 99, 100, 999, 1_000, 9_999, 12_345, 999_999, 1_000_000,
        ]
        .into_iter()
        .chain([u64::MAX, u64::MAX / 7])
        {
            assert_eq!(grouped_len(n), out::group(n).len(), "{n}");
        }
    }

    #[test]
    fn start_times_are_written_digit_by_digit_as_formatted() {
        let mut cell = String::new();
        for ms in [
            0,
            1,
            -1,
            86_399_999,
            1_769_817_600_000,
            1_800_000_000_123,
            253_402_300_799_999,
            253_402_300_800_000,
            -62_167_219_200_001,
            i64::MAX,
        ] {
            started_cell(Some(ms), &mut cell);
            let want = Local
                .timestamp_millis_opt(ms)
                .single()
                .map(|t| {
                    format!(
                        "{:04}-{:02}-{:02} {:02}:{:02}",
                        t.year(),
                        t.month(),
                        t.day(),
                        t.hour(),
                        t.minute()
                    )
                })
                .unwrap_or_else(|| "-".into());
            assert_eq!(cell, want, "{ms}");
        }
        started_cell(None, &mut cell);
        assert_eq!(cell, "-");
    }

    #[test]
    fn long_cells_are_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate_left("/a/b/c/d", 5), "…/c/d");
    }
}
