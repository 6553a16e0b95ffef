//! Listing sessions: one [`SessionSummary`] per session, from the session
//! files themselves (read in parallel) or from the index's catalog.

use crate::{ApiError, Settings};
use agentlog_formats::discover::{discover_report, Found};
use agentlog_formats::{registry, Read};
use agentlog_index::title::listed_title;
use agentlog_index::{Backend, Listed, ListingQuery, SessionOrder};
use agentlog_model::{Session, SessionKind, Timestamp};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One listed session.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SessionSummary {
    /// The agent that wrote it.
    pub agent: String,
    /// The format that reads it (a registry name).
    pub format: String,
    /// The session id.
    pub id: String,
    /// The session file (or directory).
    pub path: PathBuf,
    /// The working directory.
    pub project: Option<String>,
    /// The title, or the first line of the first prompt.
    pub title: Option<String>,
    /// When it started (ms since the epoch; `started` in JSON, RFC 3339
    /// UTC, written only then: a listing of 120,000 sessions printed as a
    /// table spent a tenth of its time writing these times).
    #[serde(rename = "started", serialize_with = "as_rfc3339")]
    pub started_ms: Option<i64>,
    /// When it last changed (ms since the epoch; `updated` in JSON).
    #[serde(rename = "updated", serialize_with = "as_rfc3339")]
    pub updated_ms: Option<i64>,
    /// Number of user, assistant and system messages (not tool results).
    pub messages: u64,
    /// Tokens used (input, output and cache).
    pub tokens: u64,
    /// Set when the session's file is gone from disk (its agent deleted
    /// it) and it is read from agentlog's archive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted: Option<Deleted>,
    /// What it is: a conversation, a headless run (`claude -p`, `codex
    /// exec`) or a subagent's transcript, as its file says.
    pub kind: SessionKind,
}

/// A session whose file its agent deleted, kept in agentlog's archive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Deleted {
    /// When agentlog noticed the file was gone (ms since the epoch;
    /// `noticed` in JSON), when it has recorded it.
    #[serde(rename = "noticed", serialize_with = "as_rfc3339")]
    pub noticed_ms: Option<i64>,
}

/// Writes a time in ms since the epoch as RFC 3339 UTC text (null when
/// unknown).
fn as_rfc3339<S: serde::Serializer>(ms: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    rfc3339(*ms).serialize(s)
}

/// Where a listing reads from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// Every session file, read now (always current).
    #[default]
    Files,
    /// The index's catalog, refreshed first when that is cheap (fast with
    /// many sessions).
    Index,
    /// The index when there is one, else every session file.
    Auto,
}

impl Source {
    /// Returns where a listing with `settings` reads from: [`Source::Auto`]
    /// is [`Source::Index`] when the index file exists, else
    /// [`Source::Files`] (a first listing does not wait for an index to be
    /// built).
    pub fn resolve(self, settings: &Settings) -> Source {
        match self {
            Source::Auto if settings.index_path.is_file() => Source::Index,
            Source::Auto => Source::Files,
            other => other,
        }
    }
}

/// What to list.
#[derive(Debug, Default, Clone)]
pub struct ListOptions {
    /// Only these agents (format names; all when empty).
    pub agents: Vec<String>,
    /// Only sessions whose working directory contains this text.
    pub project: Option<String>,
    /// Only sessions started at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// At most this many sessions (all when `None`).
    pub limit: Option<usize>,
    /// Sort by start (default) or last change, newest first.
    pub order: ListOrder,
    /// Where to read from.
    pub source: Source,
    /// Only sessions whose files are gone, kept in the archive.
    pub deleted_only: bool,
    /// Every kind of session: headless runs (`claude -p`, `codex exec`)
    /// and subagent transcripts too. By default only conversations are
    /// listed, and [`Listing::hidden`] counts the others.
    pub all_kinds: bool,
}

/// How a listing is sorted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ListOrder {
    /// Newest start first.
    #[default]
    Started,
    /// Most recent change first.
    Updated,
}

/// The filter that left a listing empty.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "filter")]
pub enum EmptiedBy {
    /// No session of these agents was found at all.
    Agents {
        /// The agents asked for (empty: every agent).
        agents: Vec<String>,
    },
    /// Sessions were found, but none in this project.
    Project {
        /// The text asked for.
        project: String,
        /// Sessions before the filter.
        sessions: usize,
    },
    /// Sessions were found, but none started since then.
    Since {
        /// The time asked for (ms since the epoch).
        since_ms: i64,
        /// Sessions before the filter.
        sessions: usize,
    },
}

/// The sessions listed, and what could not be read.
#[derive(Debug, Default)]
pub struct Listing {
    /// The sessions, newest first.
    pub sessions: Vec<SessionSummary>,
    /// Sessions that matched before the limit cut the list.
    pub matched: usize,
    /// Sessions that matched every filter but are not conversations
    /// (headless runs, subagent transcripts), left out because
    /// [`ListOptions::all_kinds`] was not set.
    pub hidden: usize,
    /// Directories that could not be searched and files that could not be
    /// read, each naming the path.
    pub warnings: Vec<String>,
    /// When nothing matched: the filter that removed the last session.
    pub emptied_by: Option<EmptiedBy>,
    /// Where sessions were looked for: the home directory the agents'
    /// default locations are under, and configured roots.
    pub looked_in: Vec<PathBuf>,
}

/// Returns the sessions matching `opts`, newest first.
pub fn list(
    settings: &Settings,
    opts: &ListOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Listing, ApiError> {
    if opts.source.resolve(settings) == Source::Index {
        let (index, _) = crate::refresh::refreshed(settings, &mut |_| {})?;
        return list_in(settings, opts, &index);
    }
    let formats = settings.formats(&opts.agents)?;
    let mut listing = Listing {
        looked_in: looked_in(settings, &formats),
        ..Listing::default()
    };
    let report = discover_report(&settings.env, Some(&formats));
    listing
        .warnings
        .extend(report.diagnostics.iter().map(ToString::to_string));
    let on_disk = report.found.len();
    let found = crate::kept::with_kept(settings, report.found, Some(&formats));
    let mut gone = crate::kept::gone(settings);
    // Those no full check has noticed yet are gone too.
    for f in &found[on_disk..] {
        gone.entry(f.path.clone()).or_insert(None);
    }
    let found: Vec<Found> = if opts.deleted_only {
        found
            .into_iter()
            .filter(|f| crate::kept::gone_at(&gone, &f.path).is_some())
            .collect()
    } else {
        found
    };
    let (mut rows, skipped) = from_files(&found, opts.since_ms, &mut listing.warnings, progress);
    for r in &mut rows {
        r.deleted = crate::kept::gone_at(&gone, &r.path).map(|noticed_ms| Deleted { noticed_ms });
    }
    Ok(finish(listing, rows, skipped, opts))
}

/// Returns the sessions matching `opts` from the catalog of `backend` (an
/// index already opened and refreshed, or a team database), newest first.
pub fn list_in(
    settings: &Settings,
    opts: &ListOptions,
    backend: &dyn Backend,
) -> Result<Listing, ApiError> {
    let mut sessions = Vec::new();
    let mut listing = visit_in(settings, opts, backend, &mut |s| sessions.push(s.clone()))?;
    listing.sessions = sessions;
    Ok(listing)
}

/// Gives `f` each session matching `opts` from the catalog of `backend`,
/// newest first, as it is read: a listing of 120,000 sessions holds none
/// of them but the one given (in one reused summary). Returns the rest of
/// the listing: how many matched, the warnings, the filter that emptied it
/// and where agentlog looked; its `sessions` are empty.
pub fn visit_in(
    settings: &Settings,
    opts: &ListOptions,
    backend: &dyn Backend,
    f: &mut dyn FnMut(&SessionSummary),
) -> Result<Listing, ApiError> {
    let formats = settings.formats(&opts.agents)?;
    // The files the index could not read, as a listing of the files says.
    let warnings = backend
        .failed_files()
        .unwrap_or_default()
        .into_iter()
        .map(|(path, why)| format!("{path}: {why}"))
        .collect();
    let mut listing = Listing {
        looked_in: looked_in(settings, &formats),
        warnings,
        ..Listing::default()
    };
    let gone = crate::kept::gone(settings);
    let q = ListingQuery {
        formats,
        project: opts.project.clone(),
        started_since_ms: opts.since_ms,
        // Deleted sessions are picked from every row below.
        limit: if opts.deleted_only { None } else { opts.limit },
        order: match opts.order {
            ListOrder::Started => SessionOrder::Created,
            ListOrder::Updated => SessionOrder::Updated,
        },
        conversations_only: !opts.all_kinds,
    };
    let mut row = SessionSummary::default();
    let mut given = 0usize;
    let matched = backend.visit_listing(&q, &mut |l| {
        fill(&mut row, l);
        row.deleted = if gone.is_empty() {
            None
        } else {
            crate::kept::gone_at(&gone, &row.path).map(|noticed_ms| Deleted { noticed_ms })
        };
        if opts.deleted_only && row.deleted.is_none() {
            return;
        }
        given += 1;
        if opts.limit.is_none_or(|l| given <= l) {
            f(&row);
        }
    })?;
    listing.matched = if opts.deleted_only { given } else { matched };
    if q.conversations_only {
        // The others are counted, not read (deleted ones among every kind:
        // only a listing of them reads their rows).
        let mut every = 0usize;
        let all = backend.visit_listing(
            &ListingQuery {
                conversations_only: false,
                limit: if opts.deleted_only { None } else { Some(0) },
                ..q.clone()
            },
            &mut |l| {
                if opts.deleted_only && gone.contains_key(Path::new(l.path)) {
                    every += 1;
                }
            },
        )?;
        let every = if opts.deleted_only { every } else { all };
        listing.hidden = every.saturating_sub(listing.matched);
    }
    if listing.matched == 0 && listing.hidden == 0 {
        listing.emptied_by = Some(emptied_by(backend, &q, &opts.agents)?);
    }
    Ok(listing)
}

/// The filter that left a listing of `q` empty, from the counts without it.
fn emptied_by(
    backend: &dyn Backend,
    q: &ListingQuery,
    agents: &[String],
) -> Result<EmptiedBy, ApiError> {
    let count = |project: Option<String>| {
        backend.visit_listing(
            &ListingQuery {
                project,
                started_since_ms: None,
                limit: Some(0),
                ..q.clone()
            },
            &mut |_| {},
        )
    };
    let sessions = count(None)?;
    if sessions == 0 {
        return Ok(EmptiedBy::Agents {
            agents: agents.to_vec(),
        });
    }
    let in_project = match &q.project {
        Some(project) => match count(Some(project.clone()))? {
            0 => {
                return Ok(EmptiedBy::Project {
                    project: project.clone(),
                    sessions,
                })
            }
            n => n,
        },
        None => sessions,
    };
    Ok(EmptiedBy::Since {
        since_ms: q.started_since_ms.unwrap_or_default(),
        sessions: in_project,
    })
}

/// Makes `row` the summary of `l`, reusing its strings.
fn fill(row: &mut SessionSummary, l: &Listed<'_>) {
    let set = |s: &mut String, v: &str| {
        s.clear();
        s.push_str(v);
    };
    let set_opt = |s: &mut Option<String>, v: Option<&str>| match v {
        Some(v) => set(s.get_or_insert_with(String::new), v),
        None => *s = None,
    };
    set(&mut row.agent, l.agent);
    set(&mut row.format, l.format);
    set(&mut row.id, l.session_id);
    let path = row.path.as_mut_os_string();
    path.clear();
    path.push(l.path);
    set_opt(&mut row.project, l.project);
    set_opt(&mut row.title, l.title);
    row.started_ms = l.started_ms;
    row.updated_ms = l.updated_ms;
    row.messages = l.messages;
    row.tokens = l.tokens;
    row.kind = l.kind;
}

/// Filters, sorts and cuts `rows` as `opts` asks, saying which filter
/// emptied the list.
fn finish(
    mut listing: Listing,
    mut rows: Vec<SessionSummary>,
    skipped: usize,
    opts: &ListOptions,
) -> Listing {
    listing.emptied_by = if rows.is_empty() && skipped == 0 {
        Some(EmptiedBy::Agents {
            agents: opts.agents.clone(),
        })
    } else {
        None
    };
    if let Some(p) = &opts.project {
        let before = rows.len();
        rows.retain(|r| r.project.as_deref().is_some_and(|c| c.contains(p.as_str())));
        if before > 0 && rows.is_empty() {
            listing.emptied_by = Some(EmptiedBy::Project {
                project: p.clone(),
                sessions: before,
            });
        }
    }
    if let Some(s) = opts.since_ms {
        let before = rows.len() + skipped;
        rows.retain(|r| r.started_ms.is_some_and(|t| t >= s));
        if before > 0 && rows.is_empty() {
            listing.emptied_by = Some(EmptiedBy::Since {
                since_ms: s,
                sessions: before,
            });
        }
    }
    if !opts.all_kinds {
        let before = rows.len();
        rows.retain(|r| r.kind.is_conversation());
        listing.hidden = before - rows.len();
        if listing.hidden > 0 {
            listing.emptied_by = None;
        }
    }
    let key = |r: &SessionSummary| match opts.order {
        ListOrder::Started => r.started_ms,
        ListOrder::Updated => r.updated_ms,
    };
    // Ties by the path's bytes, as the catalog orders them. The keys are
    // sorted and the rows then moved once: sorting the rows themselves
    // moved each one about twenty times (a tenth of listing 120,000).
    let mut order: Vec<(Option<i64>, usize)> =
        rows.iter().enumerate().map(|(i, r)| (key(r), i)).collect();
    let path = |i: usize| rows[i].path.as_os_str().as_encoded_bytes();
    order.sort_unstable_by(|(ka, a), (kb, b)| {
        kb.cmp(ka)
            .then_with(|| path(*a).cmp(path(*b)))
            .then(a.cmp(b))
    });
    let mut order: Vec<usize> = order.into_iter().map(|(_, i)| i).collect();
    permute(&mut rows, &mut order);
    listing.matched = rows.len();
    rows.truncate(opts.limit.unwrap_or(usize::MAX));
    listing.sessions = rows;
    listing
}

/// Puts `rows[order[i]]` at `i` for every `i`, in place (`order` a
/// permutation of the indices of `rows`; it is used up).
fn permute<T>(rows: &mut [T], order: &mut [usize]) {
    debug_assert_eq!(rows.len(), order.len());
    for start in 0..order.len() {
        // Follow the cycle through `start`, moving each row once; a done
        // place points at itself.
        let mut at = start;
        loop {
            let from = order[at];
            order[at] = at;
            if from == start || from == at {
                break;
            }
            rows.swap(at, from);
            at = from;
        }
    }
}

fn looked_in(settings: &Settings, formats: &[String]) -> Vec<PathBuf> {
    let mut out = vec![settings.env.home.clone()];
    for f in formats {
        if let Some(roots) = settings.env.roots_for(f) {
            out.extend(roots.iter().cloned());
        }
    }
    out.dedup();
    out
}

/// Reads and summarises every file but those last written before `since`
/// (a session started since then was written since then); returns the
/// summaries and how many files were skipped.
fn from_files(
    found: &[Found],
    since: Option<i64>,
    warnings: &mut Vec<String>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> (Vec<SessionSummary>, usize) {
    let results = par_map(found, progress, |f| {
        if let Some(since) = since {
            if mtime_ms(&f.path).is_some_and(|m| m < since) {
                return None;
            }
        }
        Some(read_found(f).map(|r| summary(f, &r.session)))
    });
    let mut rows = Vec::new();
    let mut skipped = 0;
    for (f, r) in found.iter().zip(results) {
        match r {
            Some(Some(Ok(row))) => rows.push(row),
            Some(Some(Err(e))) => warnings.push(e.to_string()),
            Some(None) => skipped += 1,
            None => warnings.push(format!(
                "{}: the {} reader failed on this file; please report it",
                f.path.display(),
                f.format
            )),
        }
    }
    (rows, skipped)
}

/// Reads one discovered session with the format that found it.
pub fn read_found(found: &Found) -> Result<Read, ApiError> {
    let format = registry::by_name(found.format).ok_or_else(|| ApiError::UnknownFormat {
        name: found.format.to_string(),
        known: registry::names(),
    })?;
    Ok(format.read_path(&found.path)?)
}

/// Applies `f` to every item on a few threads, keeping the order, calling
/// `progress(done, total)` as items finish. An item whose `f` panicked
/// gives `None` (a reader that panics must not take a listing down).
pub fn par_map<T, F>(
    items: &[Found],
    progress: &(dyn Fn(usize, usize) + Sync),
    f: F,
) -> Vec<Option<T>>
where
    T: Send,
    F: Fn(&Found) -> T + Sync,
{
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8)
        .min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let done_count = AtomicUsize::new(0);
    let mut done: Vec<(usize, Option<T>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(item)));
                        mine.push((i, r.ok()));
                        let n = done_count.fetch_add(1, Ordering::Relaxed) + 1;
                        progress(n, items.len());
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
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

fn mtime_ms(path: &Path) -> Option<i64> {
    let m = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(chrono::DateTime::<chrono::Utc>::from(m).timestamp_millis())
}

fn rfc3339(ms: Option<i64>) -> Option<String> {
    ms.and_then(Timestamp::rfc3339_millis)
}

/// Summarises a session read from `found`.
pub fn summary(found: &Found, s: &Session) -> SessionSummary {
    let first_time = s
        .entries
        .iter()
        .find_map(|e| e.timestamp.as_ref().and_then(Timestamp::millis));
    let last_time = s
        .entries
        .iter()
        .rev()
        .find_map(|e| e.timestamp.as_ref().and_then(Timestamp::millis));
    let mtime = mtime_ms(&found.path);
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
    // The first prompt is looked for only when the title is blank.
    let title = listed_title(s.meta.title.as_deref(), None)
        .or_else(|| listed_title(None, s.first_prompt().as_deref()));
    SessionSummary {
        agent: s.meta.agent.as_str().to_string(),
        format: found.format.to_string(),
        id: s.meta.id.clone(),
        path: found.path.clone(),
        project: s.meta.cwd.clone(),
        title,
        messages: s.message_count() as u64,
        tokens: s.total_usage().sum(),
        started_ms: started,
        updated_ms: updated,
        deleted: None,
        kind: registry::by_name(found.format)
            .map(|f| f.session_kind(&found.path, s))
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::permute;

    #[test]
    fn permuting_in_place_moves_each_row_where_the_order_says() {
        // Every permutation of up to six rows (Heap's algorithm), and a
        // long one of mixed cycles.
        fn all(n: usize) -> Vec<Vec<usize>> {
            let mut p: Vec<usize> = (0..n).collect();
            let mut out = vec![p.clone()];
            let mut c = vec![0; n];
            let mut i = 0;
            while i < n {
                if c[i] < i {
                    p.swap(if i % 2 == 0 { 0 } else { c[i] }, i);
                    out.push(p.clone());
                    c[i] += 1;
                    i = 0;
                } else {
                    c[i] = 0;
                    i += 1;
                }
            }
            out
        }
        let long: Vec<usize> = (0..1000).map(|i| (i * 7 + 3) % 1000).collect();
        for order in (0..=6).flat_map(all).chain([long]) {
            let rows: Vec<String> = (0..order.len()).map(|i| format!("row {i}")).collect();
            let want: Vec<String> = order.iter().map(|&i| rows[i].clone()).collect();
            let mut got = rows.clone();
            permute(&mut got, &mut order.clone());
            assert_eq!(got, want, "{order:?}");
        }
    }
}
