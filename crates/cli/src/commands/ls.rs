use crate::{config, out};
use agentlog_api::{EmptiedBy, ListOptions, ListOrder, Listing, SessionSummary, Source};
use agentlog_formats::render::sanitize;
use anyhow::Context;
use chrono::{DateTime, Datelike, Local, Offset, TimeZone, Timelike, Utc};
use serde::Serialize as _;
use serde_json::ser::{Formatter as _, PrettyFormatter};
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
///
/// Only conversations are listed unless --all is given: headless runs
/// (`claude -p`, `codex exec`, SDK and CI runs) and subagent transcripts
/// are counted on a last line instead (each session's `kind` says which in
/// --json).
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
    /// Only sessions whose files their agents deleted, kept in agentlog's
    /// archive (they are listed with the others too, marked "deleted").
    #[arg(long)]
    pub deleted: bool,
    /// List every session: headless runs and subagent transcripts too, not
    /// only conversations.
    #[arg(long)]
    pub all: bool,
    /// Print the sessions as a JSON array.
    #[arg(long)]
    pub json: bool,
}

/// Runs `agentlog ls`.
pub fn cmd_ls(args: Args) -> anyhow::Result<ExitCode> {
    let settings = config::settings(&args.roots)?;
    settings.formats(&args.agent).context("--agent")?;
    let loc = crate::fresh::IndexLocation {
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
    .resolve(&settings);
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
        deleted_only: args.deleted,
        all_kinds: args.all,
    };
    // The rows go to the table or the JSON as they are read: a listing of
    // 120,000 sessions never holds them all (making and freeing them was
    // half of `ls` at 10 GB).
    let mut out = if args.json {
        Rows::Json(JsonArray::new(std::io::stdout().lock()))
    } else {
        Rows::Table(Table::new(&settings.env.home))
    };
    // The sessions of agents that delete their own (Claude Code, Gemini
    // CLI), to say when the archive does not hold them yet.
    let mut deletable = Vec::new();
    let mut push = |s: &SessionSummary| {
        if s.deleted.is_none() && matches!(s.format.as_str(), "claude" | "gemini") {
            if let Some(f) = agentlog_formats::registry::by_name(&s.format) {
                deletable.push(agentlog_formats::discover::Found {
                    path: s.path.clone(),
                    format: f.name(),
                });
            }
        }
        out.push(s)
    };
    let listing = if let Some(url) = &args.db {
        let db = crate::commands::db::connect(url)?;
        agentlog_api::list::visit_in(&settings, &opts, &db, &mut |s| out.push(s))?
    } else if cached {
        // The index and its refresh, with the notices of `search`.
        let index = crate::fresh::refreshed(&loc)?;
        agentlog_api::list::visit_in(&settings, &opts, &index, &mut push)?
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
        l.sessions.iter().for_each(&mut push);
        l
    };
    if !args.json && args.db.is_none() {
        // One line, from the sessions listed; `doctor` counts them all.
        if let Some(r) = agentlog_api::archive::retention(&settings, &deletable).first() {
            let name = crate::commands::doctor::agent_name(r.agent);
            crate::eprintln_clean!(
                "agentlog: {name} deletes {}; some of these sessions are not in agentlog's archive yet: run `agentlog index` (or `agentlog hooks install`)",
                r.deletes
            );
        }
    }
    for w in &listing.warnings {
        crate::eprintln_clean!("agentlog: warning: {w}");
    }
    let shown = match out {
        Rows::Json(json) => {
            json.finish()?;
            return Ok(ExitCode::SUCCESS);
        }
        Rows::Table(table) if table.is_empty() && listing.hidden == 0 => {
            out::print(&nothing_found(&listing, &args))?;
            return Ok(ExitCode::SUCCESS);
        }
        Rows::Table(table) if table.is_empty() => {
            out::print(&hidden_line(0, listing.hidden))?;
            return Ok(ExitCode::SUCCESS);
        }
        Rows::Table(table) => {
            // Every cell of the table is sanitized (the table is not again:
            // checking its 1.5 MB at 1 GB of sessions was 3% of `ls`).
            table.write(&mut std::io::stdout().lock())?
        }
    };
    if listing.matched > shown {
        crate::eprintln_clean!(
            "agentlog: showing {} of {} sessions (--limit)",
            out::group(shown as u64),
            out::group(listing.matched as u64)
        );
    }
    if listing.hidden > 0 {
        crate::eprintln_clean!(
            "agentlog: {}",
            hidden_line(listing.matched, listing.hidden).trim_end()
        );
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

/// The last line of a listing that left sessions out for their kind.
fn hidden_line(listed: usize, hidden: usize) -> String {
    let others = if hidden == 1 {
        "1 headless run or subagent transcript".to_string()
    } else {
        format!(
            "{} headless runs and subagent transcripts",
            out::group(hidden as u64)
        )
    };
    if listed == 0 {
        format!("no conversations; {others} (--all lists them)\n")
    } else {
        format!("and {others}: --all lists them\n")
    }
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
            "{} found, none with a project containing {project:?} (--project)\n",
            out::count(*sessions as u64, "session")
        ),
        Some(EmptiedBy::Since { since_ms, sessions }) => format!(
            "{} found{}, none started since {} (--since {})\n",
            out::count(*sessions as u64, "session"),
            args.project
                .as_ref()
                .map(|p| format!(" in a project containing {p:?}"))
                .unwrap_or_default(),
            chrono::DateTime::<chrono::Utc>::from_timestamp_millis(*since_ms)
                .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
                .unwrap_or_default(),
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

fn truncate(s: &str, max: usize) -> String {
    sanitize::truncate(s, max)
}

/// A title cell of at most `max` characters: whole, or cut at the last
/// space in its last third (within a word only when there is none) and
/// ended with `…`.
fn truncate_title(s: &str, max: usize) -> String {
    let t = truncate(s, max);
    let Some(kept) = t.strip_suffix('…') else {
        return t;
    };
    if s.get(kept.len()..)
        .is_some_and(|rest| rest.starts_with(' '))
    {
        return t;
    }
    match kept.rfind(' ') {
        Some(i) if kept[..i].chars().count() >= max * 2 / 3 => {
            format!("{}…", kept[..i].trim_end())
        }
        _ => t,
    }
}

/// Keeps the end of a path, which names the project.
fn truncate_left(s: &str, max: usize) -> String {
    sanitize::truncate_start(s, max)
}

/// Where listed sessions go, one at a time.
enum Rows<'h> {
    Table(Table<'h>),
    Json(JsonArray<std::io::StdoutLock<'static>>),
}

impl Rows<'_> {
    fn push(&mut self, s: &SessionSummary) {
        match self {
            Rows::Table(t) => t.push(s),
            Rows::Json(j) => j.push(s),
        }
    }
}

/// The cells of an aligned table, kept as rows come (the widths are known
/// only once all have come): every cell of a row, one after the other, in
/// the text of a chunk, and where each ends. Chunks of a fixed size are
/// filled, not one string grown: growing it copied it again and again and
/// touched twice its memory (a fifth of `ls` at 10 GB). Not a table
/// crate: laying out 100,000 rows of cells already made took comfy-table
/// 7.2 220–250 ms and tabled 0.20 74–80 ms against 8–17 ms here, and both
/// pad by display width (two columns for a CJK character) where this
/// table counts characters, which moves the columns after such a cell.
struct Table<'h> {
    home: std::borrow::Cow<'h, str>,
    chunks: Vec<Chunk>,
    widths: [usize; COLUMNS],
    rows: usize,
    clock: Clock<Local>,
}

struct Chunk {
    text: String,
    ends: Vec<[u32; COLUMNS]>,
}

/// The text of a chunk: about 7,000 rows.
const CHUNK: usize = 1 << 20;

const COLUMNS: usize = 7;
const HEADER: [&str; COLUMNS] = [
    "STARTED", "AGENT", "MSGS", "TOKENS", "ID", "PROJECT", "TITLE",
];

/// The width of a cell on a terminal, as the table counts it: characters.
fn width(cell: &str) -> usize {
    if cell.is_ascii() {
        cell.len()
    } else {
        cell.chars().count()
    }
}

impl<'h> Table<'h> {
    fn new(home: &'h std::path::Path) -> Table<'h> {
        Table {
            home: home.to_string_lossy(),
            chunks: Vec::new(),
            widths: HEADER.map(width),
            rows: 0,
            clock: Clock::new(Local),
        }
    }

    fn is_empty(&self) -> bool {
        self.rows == 0
    }

    fn push(&mut self, r: &SessionSummary) {
        let agent = sanitize::sanitize_line(&r.agent);
        let id = sanitize::head(&r.id, 8);
        let project = project_cell(r.project.as_deref(), &self.home);
        let mut title = truncate_title(r.title.as_deref().unwrap_or("-"), 60);
        if r.deleted.is_some() {
            // Its agent deleted the file; agentlog's archive keeps it.
            title.insert_str(0, "[deleted] ");
        }
        // The start (16), the numbers (at most 26 each) and the rest.
        let most = 16 + 2 * 26 + agent.len() + id.len() + project.len() + title.len();
        if self
            .chunks
            .last()
            .is_none_or(|c| c.text.capacity() - c.text.len() < most)
        {
            self.chunks.push(Chunk {
                text: String::with_capacity(CHUNK.max(most)),
                ends: Vec::with_capacity(CHUNK / 64),
            });
        }
        let Some(chunk) = self.chunks.last_mut() else {
            return;
        };
        let text = &mut chunk.text;
        let mut ends = [0u32; COLUMNS];
        let mut from = text.len();
        for (i, end) in ends.iter_mut().enumerate() {
            match i {
                0 => started_cell(r.started_ms, &mut self.clock, text),
                1 => text.push_str(&agent),
                2 => out::push_grouped(r.messages, text),
                3 => out::push_grouped(r.tokens, text),
                4 => text.push_str(&id),
                5 => text.push_str(&project),
                _ => text.push_str(&title),
            }
            // The title, last, is not padded.
            if i < COLUMNS - 1 {
                self.widths[i] = self.widths[i].max(width(&text[from..]));
            }
            from = text.len();
            // A chunk is far shorter than 4 GB.
            *end = u32::try_from(from).unwrap_or(u32::MAX);
        }
        chunk.ends.push(ends);
        self.rows += 1;
    }

    /// Writes the table to `w`, line by line; returns its rows.
    fn write(&self, w: &mut impl std::io::Write) -> std::io::Result<usize> {
        use std::io::Write as _;
        let mut buf = std::io::BufWriter::with_capacity(64 * 1024, w);
        let mut line = String::with_capacity(256);
        self.line(&mut line, HEADER);
        buf.write_all(line.as_bytes())?;
        for chunk in &self.chunks {
            let mut from = 0;
            for ends in &chunk.ends {
                let mut cells = [""; COLUMNS];
                for (cell, end) in cells.iter_mut().zip(ends) {
                    let end = *end as usize;
                    *cell = chunk.text.get(from..end).unwrap_or_default();
                    from = end;
                }
                line.clear();
                self.line(&mut line, cells);
                buf.write_all(line.as_bytes())?;
            }
        }
        buf.flush()?;
        Ok(self.rows)
    }

    /// One line of the table: cells padded to the widths, numbers
    /// right-aligned.
    fn line(&self, line: &mut String, cells: [&str; COLUMNS]) {
        for (i, (cell, w)) in cells.iter().zip(self.widths).enumerate() {
            if i == COLUMNS - 1 {
                line.push_str(cell);
                break;
            }
            let pad = w.saturating_sub(width(cell));
            if i == 2 || i == 3 {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad));
            }
            line.push_str("  ");
        }
        line.truncate(line.trim_end().len());
        line.push('\n');
    }
}

/// A JSON array written as its elements come, by serde_json's own
/// serializer: the bytes [`out::print_json`] writes for the whole array
/// (pretty, two spaces a level), without holding it. The array's
/// punctuation comes from the formatter's calls that
/// [`serde::ser::SerializeSeq`] makes, and each element is serialized in
/// place, one level in (a `SerializeSeq` itself would borrow the
/// serializer this owns). Nothing is written before the first element, so
/// a listing that fails before it leaves standard output empty. The first
/// error stops the writing and is given by [`JsonArray::finish`].
struct JsonArray<W: std::io::Write> {
    w: std::io::BufWriter<W>,
    /// Where the array is: its indentation, and whether it holds a value.
    pretty: PrettyFormatter<'static>,
    given: usize,
    error: Option<anyhow::Error>,
}

impl<W: std::io::Write> JsonArray<W> {
    fn new(w: W) -> JsonArray<W> {
        JsonArray {
            w: std::io::BufWriter::with_capacity(64 * 1024, w),
            pretty: PrettyFormatter::new(),
            given: 0,
            error: None,
        }
    }

    fn push(&mut self, s: &SessionSummary) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.write(s) {
            self.error = Some(e);
        }
    }

    fn write(&mut self, s: &SessionSummary) -> anyhow::Result<()> {
        let first = self.given == 0;
        if first {
            self.pretty.begin_array(&mut self.w)?;
        }
        self.pretty.begin_array_value(&mut self.w, first)?;
        // A formatter where the array's is (one level in) serializes the
        // element as the array's own would.
        let mut element = serde_json::Serializer::with_formatter(&mut self.w, self.pretty.clone());
        s.serialize(&mut element)?;
        self.pretty.end_array_value(&mut self.w)?;
        self.given += 1;
        Ok(())
    }

    fn finish(mut self) -> anyhow::Result<()> {
        use std::io::Write as _;
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.given == 0 {
            self.pretty.begin_array(&mut self.w)?;
        }
        self.pretty.end_array(&mut self.w)?;
        self.w.write_all(b"\n")?;
        self.w.flush()?;
        Ok(())
    }
}

/// Appends the start column of a session that started at `ms` to `cell`
/// (`-` when it is not known): the local date and time to the minute.
fn started_cell<Tz: TimeZone>(ms: Option<i64>, clock: &mut Clock<Tz>, cell: &mut String) {
    use std::fmt::Write as _;
    let Some(t) = ms.and_then(|ms| clock.at(ms)) else {
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

/// Times in a time zone, its offset from UTC found once an hour rather
/// than for every time (for the local zone, that was a third of making a
/// row of the table).
struct Clock<Tz: TimeZone> {
    tz: Tz,
    /// The hour (since the epoch) of the last time.
    hour: Option<i64>,
    /// The offset throughout that hour, when it has one.
    offset: Option<Tz::Offset>,
}

const HOUR_MS: i64 = 3_600_000;

impl<Tz: TimeZone> Clock<Tz> {
    fn new(tz: Tz) -> Clock<Tz> {
        Clock {
            tz,
            hour: None,
            offset: None,
        }
    }

    /// The time `ms` (since the epoch) in the zone; `None` out of range.
    fn at(&mut self, ms: i64) -> Option<DateTime<Tz>> {
        let utc = DateTime::from_timestamp_millis(ms)?.naive_utc();
        let hour = ms.div_euclid(HOUR_MS);
        if self.hour != Some(hour) {
            self.hour = Some(hour);
            // An hour that starts and ends at the same offset has it
            // throughout (zones change it at most once in an hour).
            let offset_at = |ms: Option<i64>| {
                let t = DateTime::from_timestamp_millis(ms?)?.naive_utc();
                Some(self.tz.offset_from_utc_datetime(&t))
            };
            let start = hour.checked_mul(HOUR_MS);
            let end = start.and_then(|s| s.checked_add(HOUR_MS - 1));
            self.offset = match (offset_at(start), offset_at(end)) {
                (Some(a), Some(b)) if a.fix() == b.fix() => Some(a),
                _ => None,
            };
        }
        match &self.offset {
            Some(o) => Some(DateTime::from_naive_utc_and_offset(utc, o.clone())),
            None => Some(self.tz.from_utc_datetime(&utc)),
        }
    }
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
    fn json_written_as_it_comes_is_the_json_of_the_whole_array() {
        let plain = SessionSummary {
            agent: "claude".into(),
            format: "claude".into(),
            id: "0b3b4068-d136-4483-a288-7c76a58f2d93".into(),
            path: "/home/u/.claude/projects/-home-u-app/0b3b4068.jsonl".into(),
            project: Some("/home/u/app".into()),
            title: Some("Fix the parser".into()),
            started_ms: Some(1_756_425_386_013),
            updated_ms: Some(1_756_425_978_455),
            messages: 48,
            tokens: 1_363_105,
            deleted: None,
            kind: agentlog_model::SessionKind::Conversation,
        };
        let hostile = SessionSummary {
            agent: "a\"b\\c".into(),
            format: "\u{7f}é✓\u{2028}".into(),
            id: "\u{0}\u{1b}[31m\u{7}\u{1f}\u{80}\u{2029}".into(),
            path: "/tmp/é/日本語/🦀 \"quoted\".jsonl".into(),
            project: None,
            title: Some("line\nbreak\ttab\r\u{8}\u{c}</script>".into()),
            started_ms: None,
            updated_ms: Some(-1),
            messages: u64::MAX,
            tokens: 0,
            deleted: Some(agentlog_api::list::Deleted {
                noticed_ms: Some(1_756_425_978_455),
            }),
            kind: agentlog_model::SessionKind::Subagent,
        };
        let rows = [plain, hostile, SessionSummary::default()];
        for n in 0..=rows.len() {
            let mut out = Vec::new();
            let mut json = JsonArray::new(&mut out);
            rows[..n].iter().for_each(|r| json.push(r));
            json.finish().unwrap();
            let mut want = serde_json::to_string_pretty(&rows[..n]).unwrap();
            want.push('\n');
            assert_eq!(String::from_utf8(out).unwrap(), want, "{n}");
        }
        // A path that is not UTF-8 is an error, as serde's is.
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt as _;
            let mut odd = rows[0].clone();
            odd.path = std::ffi::OsStr::from_bytes(b"/tmp/\xff.jsonl").into();
            let mut out = Vec::new();
            let mut json = JsonArray::new(&mut out);
            json.push(&odd);
            let err = json.finish().unwrap_err().to_string();
            assert!(serde_json::to_string(&odd).is_err());
            assert!(err.contains("invalid UTF-8"), "{err}");
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
            cell.clear();
            started_cell(Some(ms), &mut Clock::new(Local), &mut cell);
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
        cell.clear();
        started_cell(None, &mut Clock::new(Local), &mut cell);
        assert_eq!(cell, "-");
    }

    /// A zone that moves its clocks an hour on at an instant within an
    /// hour, and back at another.
    #[derive(Clone, Copy, Debug)]
    struct Shifting;

    /// When [`Shifting`] moves on (17.5 s after the half hour) and back
    /// (an hour and 59 minutes later).
    const ON_MS: i64 = 1_780_000_000_000 / HOUR_MS * HOUR_MS + 37_817_500;
    const BACK_MS: i64 = ON_MS + 119 * 60_000;

    impl Shifting {
        fn offset_at(utc_ms: i64) -> chrono::FixedOffset {
            let hours = if (ON_MS..BACK_MS).contains(&utc_ms) {
                2
            } else {
                1
            };
            chrono::FixedOffset::east_opt(hours * 3600).unwrap()
        }
    }

    impl TimeZone for Shifting {
        type Offset = chrono::FixedOffset;
        fn from_offset(_: &chrono::FixedOffset) -> Shifting {
            Shifting
        }
        fn offset_from_local_date(
            &self,
            _: &chrono::NaiveDate,
        ) -> chrono::LocalResult<chrono::FixedOffset> {
            chrono::LocalResult::None
        }
        fn offset_from_local_datetime(
            &self,
            _: &chrono::NaiveDateTime,
        ) -> chrono::LocalResult<chrono::FixedOffset> {
            chrono::LocalResult::None
        }
        fn offset_from_utc_date(&self, utc: &chrono::NaiveDate) -> chrono::FixedOffset {
            Self::offset_at(
                utc.and_hms_opt(0, 0, 0)
                    .unwrap()
                    .and_utc()
                    .timestamp_millis(),
            )
        }
        fn offset_from_utc_datetime(&self, utc: &chrono::NaiveDateTime) -> chrono::FixedOffset {
            Self::offset_at(utc.and_utc().timestamp_millis())
        }
    }

    #[test]
    fn a_clock_finding_offsets_once_an_hour_tells_the_time_the_zone_does() {
        let mut clock = Clock::new(Shifting);
        let mut times: Vec<i64> = (-180..300)
            .flat_map(|m| {
                [
                    ON_MS + m * 60_000,
                    ON_MS + m * 60_000 - 1,
                    ON_MS + m * 60_000 + 1,
                ]
            })
            .collect();
        times.extend([BACK_MS - 1, BACK_MS, 0, -1, i64::MAX, i64::MIN]);
        // In order, as a listing gives them, and in no order.
        for order in [times.clone(), times.iter().rev().copied().collect()] {
            for ms in order {
                let want = Shifting.timestamp_millis_opt(ms).single();
                assert_eq!(clock.at(ms), want, "{ms}");
            }
        }
        // The shift shows in the cells, a millisecond apart.
        let mut clock = Clock::new(Shifting);
        let mut cell = |ms: i64| {
            let mut c = String::new();
            started_cell(Some(ms), &mut clock, &mut c);
            c
        };
        let (before, after) = (cell(ON_MS - 1), cell(ON_MS));
        assert_ne!(before, after);
        let want = Shifting.timestamp_millis_opt(ON_MS).unwrap();
        assert_eq!(after, want.format("%Y-%m-%d %H:%M").to_string());
    }

    #[test]
    fn long_cells_are_cut() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate_left("/a/b/c/d", 5), "…/c/d");
    }
}
