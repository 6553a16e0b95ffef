//! What a session picker needs besides drawing: the query typed, with its
//! filters (`agent:`, `dir:`, `since:`, `until:`), the sessions it finds
//! (through the index, one row per session with its best hit), a preview
//! of one session's transcript with the hit in view, and the command that
//! continues a session in its own agent in its folder, or in another agent
//! (through [`crate::resume`]). The CLI's `agentlog pick` draws them; any
//! other front end can share them.
//!
//! ```
//! use agentlog_api::pick::{self, Query};
//! use agentlog_api::{Library, Settings};
//! # let home = tempfile::tempdir()?;
//! # let file = agentlog_api::example::write_claude_session(home.path())?;
//! let lib = Library::new(Settings::with_home(home.path()));
//! let q = Query::parse("agent:claude tokeni", agentlog_index::time::now_ms())?;
//! assert_eq!(q.search_text().as_deref(), Some("tokeni*"));
//! let (index, _) = agentlog_api::refresh::refreshed(&lib.settings, &mut |_| {})?;
//! let found = pick::find(&lib.settings, &index, &q, 50)?;
//! assert_eq!(found.rows[0].path, file);
//! let launch = pick::resume_here(&lib.settings, &found.rows[0].path)?;
//! assert_eq!(launch.program, "claude");
//! assert_eq!(launch.cwd.as_deref(), Some(std::path::Path::new("/home/dev/parser")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::resume::{ResumeParams, Resumed};
use crate::{ApiError, ListOptions, ListOrder, Settings, Source};
use agentlog_index::{Backend, Hit, SearchParams};
use agentlog_model::{BlockKind, EntryKind, Role, Session};
use std::path::{Path, PathBuf};

/// A query as typed into a picker: the words searched, and the filters
/// written among them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// The words, phrases and operators searched (the query language of
    /// `agentlog_index::terms`), the filters taken out.
    pub text: String,
    /// True when the text ends in the middle of a word (no space after
    /// it): that word is searched as a prefix, as it is still being typed.
    pub typing: bool,
    /// `agent:NAME` (repeatable, or `agent:a,b`): only these agents.
    pub agents: Vec<String>,
    /// `dir:TEXT`: only sessions whose folder contains this text (the
    /// last one given).
    pub dir: Option<String>,
    /// `since:WHEN`: only sessions active since then (ms since the epoch).
    pub since_ms: Option<i64>,
    /// `until:WHEN`: only what happened before then.
    pub until_ms: Option<i64>,
}

/// The filters a query can hold, as `NAME:VALUE` words.
pub const FILTERS: [&str; 4] = ["agent", "dir", "since", "until"];

impl Query {
    /// Parses `input`: words of the form `agent:NAME`, `dir:TEXT`,
    /// `since:WHEN` and `until:WHEN` (WHEN as `agentlog_index::time`
    /// reads it: `7d`, `2026-01-31`, …) are filters, the rest is searched.
    /// A filter with no value yet (`agent:` while typing) filters nothing.
    /// Double quotes keep a phrase together, filter-looking words inside
    /// it included.
    pub fn parse(input: &str, now_ms: i64) -> Result<Query, ApiError> {
        let mut q = Query::default();
        let mut text: Vec<&str> = Vec::new();
        for word in words(input) {
            let Some((name, value)) = word.split_once(':') else {
                text.push(word);
                continue;
            };
            if !FILTERS.contains(&name) {
                text.push(word);
                continue;
            }
            if value.is_empty() {
                continue;
            }
            match name {
                "agent" => {
                    for a in value.split(',').filter(|a| !a.is_empty()) {
                        let a = a.to_lowercase();
                        crate::settings::check_name(&a)?;
                        if !q.agents.contains(&a) {
                            q.agents.push(a);
                        }
                    }
                }
                "dir" => q.dir = Some(value.to_string()),
                "since" => {
                    q.since_ms = Some(agentlog_index::time::parse_time("since:", value, now_ms)?)
                }
                _ => q.until_ms = Some(agentlog_index::time::parse_time("until:", value, now_ms)?),
            }
        }
        q.text = text.join(" ");
        q.typing = !q.text.is_empty() && !input.ends_with(char::is_whitespace);
        Ok(q)
    }

    /// Returns what is searched: the text, its last word a prefix while it
    /// is being typed (`toke` finds `tokenizer`), an open phrase closed;
    /// `None` when there is nothing to search (the picker lists sessions).
    pub fn search_text(&self) -> Option<String> {
        if agentlog_index::terms(&self.text).is_err() {
            return None;
        }
        let mut t = self.text.clone();
        if t.matches('"').count() % 2 == 1 {
            t.push('"');
            if self.typing {
                t.push('*');
            }
            return Some(t);
        }
        if self.typing {
            let last = t.rsplit(char::is_whitespace).next().unwrap_or("");
            let plain = !last.ends_with('*')
                && !last.ends_with('"')
                && !matches!(last, "OR" | "NOT" | "AND")
                && last.chars().any(char::is_alphanumeric);
            if plain {
                t.push('*');
            }
        }
        Some(t)
    }

    /// Returns the words a front end marks in a preview: every searched
    /// term (a phrase's words one by one), lowercase, without `*`, the
    /// excluded ones left out.
    pub fn marked_words(&self) -> Vec<String> {
        let Ok(terms) = agentlog_index::terms(&self.text) else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for t in terms.required.iter().flatten() {
            for w in t.text.split(|c: char| !c.is_alphanumeric()) {
                let w = w.to_lowercase();
                if !w.is_empty() && !out.contains(&w) {
                    out.push(w);
                }
            }
        }
        out
    }
}

/// Splits `input` at whitespace outside double quotes.
fn words(input: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut quoted = false;
    for (i, c) in input.char_indices() {
        if c == '"' {
            quoted = !quoted;
        }
        if c.is_whitespace() && !quoted {
            if let Some(s) = start.take() {
                out.push(&input[s..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(&input[s..]);
    }
    out
}

/// One session a picker lists.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The session id.
    pub id: String,
    /// The agent.
    pub agent: String,
    /// The session file (or folder).
    pub path: PathBuf,
    /// The working directory.
    pub project: Option<String>,
    /// The title, or the first line of the first prompt.
    pub title: Option<String>,
    /// When it last changed, or the best hit's time (ms since the epoch).
    pub when_ms: Option<i64>,
    /// The best-ranked matching entry, when the query searched words.
    pub hit: Option<Hit>,
    /// How many of the hits fetched are in this session.
    pub hits: usize,
    /// Its agent deleted the file; it is read from agentlog's archive.
    pub deleted: bool,
}

/// What a query found.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// The sessions, best (or, with no words, most recently changed) first.
    pub rows: Vec<Row>,
    /// True when more sessions match than `rows` holds.
    pub more: bool,
}

/// The session files agentlog's archive holds whose agents deleted them:
/// read once, for every search of a picker (opening the archive costs more
/// than a search).
#[derive(Debug, Clone, Default)]
pub struct Gone(std::collections::HashSet<PathBuf>);

impl Gone {
    /// Reads them from the archive of `settings` (none when there is no
    /// archive).
    pub fn of(settings: &Settings) -> Gone {
        Gone(crate::kept::gone(settings).into_keys().collect())
    }
}

/// Returns the sessions `q` finds in `backend` (an index already opened),
/// at most `limit`: with words, one row per session holding hits, in the
/// order of its best hit; without, the sessions changed last first.
pub fn find(
    settings: &Settings,
    backend: &dyn Backend,
    q: &Query,
    limit: usize,
) -> Result<Found, ApiError> {
    find_with(settings, backend, q, limit, &Gone::of(settings))
}

/// [`find`], with the deleted sessions read before.
pub fn find_with(
    settings: &Settings,
    backend: &dyn Backend,
    q: &Query,
    limit: usize,
    gone: &Gone,
) -> Result<Found, ApiError> {
    let limit = limit.max(1);
    let Some(text) = q.search_text() else {
        let opts = ListOptions {
            agents: q.agents.clone(),
            project: q.dir.clone(),
            since_ms: q.since_ms,
            limit: Some(limit),
            order: ListOrder::Updated,
            source: Source::Index,
            deleted_only: false,
            // The user's conversations, as `ls` lists them; a search below
            // finds headless runs and subagents too.
            all_kinds: false,
        };
        let mut rows = Vec::new();
        let listing = crate::list::visit_in(settings, &opts, backend, &mut |s| {
            rows.push(Row {
                id: s.id.clone(),
                agent: s.agent.clone(),
                path: s.path.clone(),
                project: s.project.clone(),
                title: s.title.clone(),
                when_ms: s.updated_ms.or(s.started_ms),
                hit: None,
                hits: 0,
                deleted: s.deleted.is_some(),
            })
        })?;
        let more = listing.matched > rows.len();
        return Ok(Found { rows, more });
    };
    settings.formats(&q.agents)?;
    let params = SearchParams {
        query: text,
        agents: q.agents.clone(),
        projects: q.dir.iter().cloned().collect(),
        since_ms: q.since_ms,
        until_ms: q.until_ms,
        // Sessions with many hits take several: fetch more hits than rows
        // (and one more, to tell whether more match; not counted).
        limit: limit * 4 + 1,
        ..SearchParams::default()
    };
    let mut hits = backend.search(&params)?;
    let more = hits.len() > limit * 4;
    hits.truncate(limit * 4);
    let mut rows: Vec<Row> = Vec::new();
    let mut cut = false;
    for h in hits {
        if let Some(r) = rows
            .iter_mut()
            .find(|r| r.path.as_os_str() == h.path.as_str())
        {
            r.hits += 1;
            continue;
        }
        if rows.len() == limit {
            cut = true;
            continue;
        }
        let path = PathBuf::from(&h.path);
        rows.push(Row {
            id: h.session_id.clone(),
            agent: h.agent.clone(),
            deleted: gone.0.contains(&path),
            path,
            project: h.project.clone(),
            title: h.title.clone(),
            when_ms: h.ts_ms,
            hits: 1,
            hit: Some(h),
        });
    }
    Ok(Found {
        rows,
        more: cut || more,
    })
}

/// One entry of a preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewEntry {
    /// The entry id.
    pub id: String,
    /// Who speaks, or what it is: `user`, `assistant`, `tool result
    /// Bash`, `compaction`, ….
    pub label: String,
    /// When (UTC, `2026-01-31 12:00`).
    pub time: Option<String>,
    /// The text, tool calls as `→ NAME INPUT`, long parts cut (never
    /// sanitized: a front end for a terminal sanitizes it).
    pub text: String,
}

/// A session's transcript as a picker previews it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// The session file.
    pub path: PathBuf,
    /// The title.
    pub title: String,
    /// Agent, id, folder and start, as one line.
    pub facts: String,
    /// The active branch's entries that say something.
    pub entries: Vec<PreviewEntry>,
    /// The entry to bring into view (the hit), as an index of `entries`.
    pub focus: Option<usize>,
}

/// How much of one entry a preview keeps.
const PREVIEW_ENTRY_CHARS: usize = 3000;
/// How many lines of a tool's output a preview keeps.
const PREVIEW_TOOL_LINES: usize = 6;

/// Reads the session at `path` and returns its preview, with `entry` (the
/// hit's entry id) as the focus when it is on the active branch.
pub fn preview(settings: &Settings, path: &Path, entry: Option<&str>) -> Result<Preview, ApiError> {
    let (path, _, read) = crate::resolve::read(settings, &path.to_string_lossy(), None)?;
    Ok(preview_of(path, &read.session, entry))
}

/// Returns the preview of `session` (read from `path`).
pub fn preview_of(path: PathBuf, session: &Session, entry: Option<&str>) -> Preview {
    let m = &session.meta;
    let mut facts = vec![format!("{} {}", m.agent, m.id)];
    if let Some(cwd) = &m.cwd {
        facts.push(cwd.clone());
    }
    if let Some(t) = m.created_at.as_ref().and_then(|t| t.to_utc()) {
        facts.push(t.format("%Y-%m-%d %H:%M").to_string());
    }
    let mut entries = Vec::new();
    let mut focus = None;
    for e in session.active_branch() {
        let (label, text) = match &e.kind {
            EntryKind::Message(msg) => {
                let label = match &msg.role {
                    Role::User => "user".to_string(),
                    Role::Assistant => "assistant".to_string(),
                    Role::Tool => format!("tool result {}", msg.tool_name.as_deref().unwrap_or(""))
                        .trim_end()
                        .to_string(),
                    other => other.as_str().to_string(),
                };
                let mut text = String::new();
                for b in &msg.content {
                    block_text(&mut text, &b.kind, msg.role == Role::Tool);
                }
                (label, text)
            }
            EntryKind::Compaction { summary, .. } => ("compaction".to_string(), summary.clone()),
            EntryKind::BranchSummary { summary, .. } => {
                ("branch summary".to_string(), summary.clone())
            }
            _ => continue,
        };
        let text = cut_chars(text.trim(), PREVIEW_ENTRY_CHARS);
        if text.is_empty() && entry != Some(e.id.as_str()) {
            continue;
        }
        if entry == Some(e.id.as_str()) {
            focus = Some(entries.len());
        }
        entries.push(PreviewEntry {
            id: e.id.clone(),
            label,
            time: e
                .timestamp
                .as_ref()
                .and_then(|t| t.to_utc())
                .map(|t| t.format("%Y-%m-%d %H:%M").to_string()),
            text,
        });
    }
    Preview {
        path,
        title: agentlog_formats::render::title(session),
        facts: facts.join(" · "),
        entries,
        focus,
    }
}

fn block_text(out: &mut String, b: &BlockKind, tool_output: bool) {
    let sep = |out: &mut String| {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
    };
    match b {
        BlockKind::Text { text } if tool_output => {
            sep(out);
            out.push_str(&first_lines(text, PREVIEW_TOOL_LINES));
        }
        BlockKind::Text { text } => {
            sep(out);
            out.push_str(text);
        }
        BlockKind::Thinking { text, .. } if !text.trim().is_empty() => {
            sep(out);
            out.push_str("(thinking) ");
            out.push_str(text.trim().lines().next().unwrap_or(""));
        }
        BlockKind::ToolCall { name, input, .. } => {
            sep(out);
            let input = match input {
                serde_json::Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            out.push_str(&format!("→ {name} {}", cut_chars(&input, 300)));
        }
        BlockKind::ToolResult { content, .. } => {
            for c in content {
                block_text(out, &c.kind, true);
            }
        }
        BlockKind::Image { .. } => {
            sep(out);
            out.push_str("[image]");
        }
        _ => {}
    }
}

/// Returns the first `n` lines of `s`, and how many more there are.
fn first_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.trim_end().lines().collect();
    if lines.len() <= n {
        return lines.join("\n");
    }
    format!(
        "{}\n… {} more lines",
        lines[..n].join("\n"),
        lines.len() - n
    )
}

/// Returns `s` cut to at most `max` characters, with `…` when cut.
fn cut_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// A command to run: what a picker replaces itself with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The program (found on `PATH`).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The folder it runs in.
    pub cwd: Option<PathBuf>,
    /// The same as one shell command (`cd DIR && …`, every word taken
    /// from the session quoted), to print or copy.
    pub command: String,
}

impl Launch {
    /// Returns the launch of `run` (a shell command of quoted words, no
    /// `cd`) in `cwd`.
    fn new(id: &str, run: &str, cwd: Option<PathBuf>) -> Result<Launch, ApiError> {
        let mut words = shlex::split(run).unwrap_or_default().into_iter();
        let Some(program) = words.next() else {
            return Err(ApiError::NotResumable {
                id: id.to_string(),
                why: format!("its agent's command {run:?} is not a list of words"),
            });
        };
        let command = match &cwd {
            Some(dir) => format!(
                "cd {} && {run}",
                agentlog_formats::shell::quote(&dir.to_string_lossy())
            ),
            None => run.to_string(),
        };
        Ok(Launch {
            program,
            args: words.collect(),
            cwd,
            command,
        })
    }
}

/// Returns the command that continues the session at `path` in its own
/// agent, in its own folder (`claude --resume ID` in the project, `codex
/// resume ID`, `pi --session FILE`, …). Writes nothing. An error when the
/// agent cannot continue sessions, or the file is gone (its agent deleted
/// it; restore it first).
pub fn resume_here(settings: &Settings, path: &Path) -> Result<Launch, ApiError> {
    let (path, format, read) = crate::resolve::read(settings, &path.to_string_lossy(), None)?;
    let id = read.session.meta.id.clone();
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(ApiError::NotResumable {
            id,
            why: "its agent deleted the file; restore it from agentlog's archive first".into(),
        });
    }
    let plan = format
        .resume_plan(&read.session, &settings.env)
        .map_err(|e| match e {
            agentlog_formats::FormatError::Unsupported { format, .. } => ApiError::NotResumable {
                id: id.clone(),
                why: format!("agentlog cannot continue {format} sessions in their own agent; continue it in another agent"),
            },
            e => ApiError::Format(e),
        })?;
    // A plan names where a new copy would go; a command that names that
    // file (pi's `--session FILE`) names the session's own file instead.
    let mut run = plan.command.clone();
    if plan.path != path {
        let planned = agentlog_formats::shell::quote(&plan.path.to_string_lossy());
        let own = agentlog_formats::shell::quote(&path.to_string_lossy());
        run = run.replace(&planned, &own);
    }
    Launch::new(&id, &run, plan.cwd)
}

/// Returns the agents the session at `path` can be continued in besides
/// its own (the formats agentlog writes and whose agent it can plan a
/// resume for), by name.
pub fn targets(settings: &Settings, path: &Path) -> Result<Vec<&'static str>, ApiError> {
    let (_, own, read) = crate::resolve::read(settings, &path.to_string_lossy(), None)?;
    Ok(agentlog_formats::registry::all()
        .iter()
        .filter(|f| f.name() != own.name() && f.can_write())
        .filter(|f| f.resume_plan(&read.session, &settings.env).is_ok())
        .map(|f| f.name())
        .collect())
}

/// Continues the session at `path` in `target` ([`crate::resume::resume`]:
/// converts it, writes it where that agent looks, never over a file) and
/// returns what was written and the command that continues it there.
pub fn resume_in(
    settings: &Settings,
    path: &Path,
    target: &str,
) -> Result<(Resumed, Launch), ApiError> {
    let (path, _, read) = crate::resolve::read(settings, &path.to_string_lossy(), None)?;
    let params = ResumeParams {
        source: Some(path),
        ..ResumeParams::new(target)
    };
    let done = crate::resume::resume(settings, &read.session, &params)?;
    let launch = Launch::new(&read.session.meta.id, &done.run, done.cwd.clone())?;
    Ok((done, launch))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const NOW: i64 = 1_767_000_000_000;

    #[test]
    fn filters_come_out_of_the_text() {
        let q = Query::parse("agent:claude,codex dir:parser since:7d fix panic", NOW).unwrap();
        assert_eq!(q.agents, ["claude", "codex"]);
        assert_eq!(q.dir.as_deref(), Some("parser"));
        assert_eq!(q.since_ms, Some(NOW - 7 * 86_400_000));
        assert_eq!(q.text, "fix panic");
        assert_eq!(q.search_text().as_deref(), Some("fix panic*"));
    }

    #[test]
    fn the_word_being_typed_is_a_prefix() {
        let q = |s| Query::parse(s, NOW).unwrap().search_text();
        assert_eq!(q("toke").as_deref(), Some("toke*"));
        assert_eq!(q("toke ").as_deref(), Some("toke"));
        assert_eq!(q("\"exact phr").as_deref(), Some("\"exact phr\"*"));
        assert_eq!(q("\"exact phrase\"").as_deref(), Some("\"exact phrase\""));
        assert_eq!(q("a OR").as_deref(), Some("a OR"));
        assert_eq!(q("-tests pars").as_deref(), Some("-tests pars*"));
        assert_eq!(q("pars -tes").as_deref(), Some("pars -tes*"));
        assert_eq!(q(""), None);
        assert_eq!(q("agent:claude"), None);
        assert_eq!(q("-only"), None);
    }

    #[test]
    fn a_filter_being_typed_filters_nothing_and_a_bad_one_says_why() {
        let q = Query::parse("agent: since: word", NOW).unwrap();
        assert!(q.agents.is_empty() && q.since_ms.is_none());
        assert_eq!(q.text, "word");
        let e = Query::parse("agent:nosuch x", NOW).unwrap_err();
        assert!(e.to_string().contains("unknown agent"), "{e}");
        let e = Query::parse("since:someday x", NOW).unwrap_err();
        assert!(e.to_string().contains("since:"), "{e}");
        // Not a filter: searched as it is.
        let q = Query::parse("http://x \"agent:claude said\"", NOW).unwrap();
        assert_eq!(q.text, "http://x \"agent:claude said\"");
        assert!(q.agents.is_empty());
    }

    #[test]
    fn marked_words_are_the_required_terms() {
        let q = Query::parse("Tokenizer \"unicode input\" -panic", NOW).unwrap();
        assert_eq!(q.marked_words(), ["tokenizer", "unicode", "input"]);
    }

    #[test]
    fn launches_split_the_command_into_words() {
        let l = Launch::new("x", "pi --session '/a b/c.jsonl'", Some("/w d".into())).unwrap();
        assert_eq!(l.program, "pi");
        assert_eq!(l.args, ["--session", "/a b/c.jsonl"]);
        assert_eq!(l.command, "cd '/w d' && pi --session '/a b/c.jsonl'");
        assert!(Launch::new("x", "", None).is_err());
    }
}
