use crate::fresh::{refreshed, IndexLocation};
use crate::out;
use agentlog_api::Matches;
use agentlog_formats::render::sanitize::sanitize_line;
use agentlog_index::time::{now_ms, parse_time};
use agentlog_index::{Hit, SearchParams};
use std::process::ExitCode;

/// Search the text of every session.
///
/// QUERY is one or more words, all required: `word`, `prefix*`,
/// `"exact phrase"`, `a OR b`, `-excluded`. A shell takes the quotes off
/// `"exact phrase"` (leaving the two words, found anywhere): keep them
/// inside single quotes, `agentlog search '"exact phrase"'`, or give the
/// words with --phrase: `agentlog search --phrase exact phrase`. Case and
/// accents are ignored;
/// punctuation is searched as word boundaries (`src/main.rs` finds that
/// path). Message text, thinking, tool names and inputs (commands, paths)
/// and tool output are searched. Hits are ranked by relevance (BM25) and
/// recency; each names the session and the entry to open with
/// `agentlog show SESSION --at ENTRY`. Headless runs and subagent
/// transcripts are searched too (`ls` leaves them out); their hits are
/// marked [headless] or [subagent].
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The words to look for.
    #[arg(required = true, value_name = "QUERY")]
    pub query: Vec<String>,
    /// Search QUERY's words as one exact phrase: these words, in this
    /// order, next to each other.
    #[arg(long)]
    pub phrase: bool,
    /// Only these agents (repeat or separate with commas), e.g. claude,codex.
    #[arg(long, value_name = "AGENT", value_delimiter = ',')]
    pub agent: Vec<String>,
    /// Only sessions whose project directory contains this text.
    #[arg(long, value_name = "TEXT")]
    pub project: Vec<String>,
    /// Only entries of these roles: user, assistant, tool, system, thinking.
    #[arg(long, value_name = "ROLE", value_delimiter = ',')]
    pub role: Vec<String>,
    /// Only entries calling or answering these tools (e.g. Bash, shell).
    #[arg(long, value_name = "TOOL", value_delimiter = ',')]
    pub tool: Vec<String>,
    /// Only sessions whose id starts with this (or this session file).
    #[arg(long, value_name = "ID")]
    pub session: Vec<String>,
    /// Only entries since a date (2026-01-31), a time (RFC 3339) or a span
    /// ago (30m, 12h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only entries before this time (same forms as --since).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Show at most this many hits.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
    /// Print the hits as JSON (matches between « and », and as byte ranges).
    #[arg(long)]
    pub json: bool,
    /// Read from the team database instead of this machine:
    /// postgres://USER:PASSWORD@HOST:PORT/DATABASE.
    #[arg(long, value_name = "URL", env = "AGENTLOG_DB", hide_env_values = true)]
    pub db: Option<String>,
    #[command(flatten)]
    pub loc: IndexLocation,
}

/// Runs `agentlog search`.
pub fn cmd_search(args: Args) -> anyhow::Result<ExitCode> {
    let now = now_ms();
    let params = SearchParams {
        query: if args.phrase {
            phrase(&args.query)
        } else {
            args.query.join(" ")
        },
        agents: args.agent.clone(),
        projects: args.project.clone(),
        roles: args.role.iter().map(|r| r.to_lowercase()).collect(),
        tools: args.tool.clone(),
        sessions: args.session.clone(),
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
        limit: args.limit.max(1),
        candidates: 0,
        now_ms: Some(now),
    };
    // Check the query before any indexing work.
    // A query that cannot be understood is a usage error (exit 2), not
    // "no matches" (exit 1).
    if let Err(e) = agentlog_index::to_fts(&params.query) {
        crate::eprintln_clean!("agentlog: error: {e}");
        return Ok(ExitCode::from(2));
    }
    let found = match &args.db {
        Some(url) => agentlog_api::search(&crate::commands::db::connect(url)?, &params)?,
        None => agentlog_api::search(&refreshed(&args.loc)?, &params)?,
    };
    let hits = found.hits;
    if args.json {
        out::print_json(&hits)?;
    } else {
        // Fields are sanitized one by one: the colours are our own.
        out::print_exact(&render(&hits, found.matches, out::use_color()))?;
    }
    Ok(if hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn render(hits: &[Hit], matches: Option<Matches>, color: bool) -> String {
    let (bold, dim, reset) = if color {
        ("\x1b[1m", "\x1b[2m", "\x1b[0m")
    } else {
        ("", "", "")
    };
    let mut s = String::new();
    if hits.is_empty() {
        s.push_str("no matches\n");
        return s;
    }
    for h in hits {
        let when = h
            .ts_ms
            .map(|t| {
                chrono::DateTime::<chrono::Utc>::from_timestamp_millis(t)
                    .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        let mut field = if h.field == "text" {
            String::new()
        } else {
            format!(" [{}]", h.field)
        };
        // Every kind is searched; a hit outside a conversation says so.
        if !h.kind.is_conversation() {
            field.push_str(&format!(" [{}]", h.kind.as_str()));
        }
        s.push_str(&format!(
            "{bold}{}{reset} --at {bold}{}{reset}  {dim}{} {} {} {}{field}{reset}\n",
            sanitize_line(&h.session_id),
            sanitize_line(&h.entry_id),
            sanitize_line(&h.agent),
            sanitize_line(h.role.as_deref().unwrap_or("-")),
            when,
            sanitize_line(h.project.as_deref().unwrap_or("")),
        ));
        let mut line = String::from("    ");
        for seg in h.segments() {
            let text = squeeze(&seg.text);
            let text = sanitize_line(&text);
            if seg.hit {
                if color {
                    line.push_str(&format!("{bold}{text}{reset}"));
                } else {
                    line.push_str(&format!("«{text}»"));
                }
            } else {
                line.push_str(&text);
            }
        }
        s.push_str("    ");
        s.push_str(line[4..].trim());
        s.push('\n');
    }
    let shown = hits.len() as u64;
    let shown = match matches {
        Some(Matches::Exactly(n)) if n <= shown => out::count(shown, "hit"),
        Some(Matches::Exactly(n)) => format!(
            "showing the best {} of {} (raise --limit)",
            out::group(shown),
            out::count(n, "hit")
        ),
        Some(Matches::AtLeast(n)) => format!(
            "showing the best {} of {}+ hits (raise --limit)",
            out::group(shown),
            out::group(n)
        ),
        None => format!(
            "the best {} shown; more match (raise --limit)",
            out::count(shown, "hit")
        ),
    };
    s.push_str(&format!(
        "{dim}{shown}; open one with: agentlog show SESSION --at ENTRY{reset}\n"
    ));
    s
}

/// Returns the query searching `words` as one phrase: their text, its
/// double quotes taken out, in double quotes.
fn phrase(words: &[String]) -> String {
    let text = words.join(" ").replace('"', " ");
    format!(
        "\"{}\"",
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

/// Returns `text` on one line with every run of whitespace as one space.
fn squeeze(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = true;
        } else {
            if space {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    if space {
        out.push(' ');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_keep_one_space_per_run_of_whitespace() {
        assert_eq!(squeeze("a   b\n\n\tc "), "a b c ");
        assert_eq!(squeeze("  lead"), " lead");
    }
}
