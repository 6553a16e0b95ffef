//! Keeping the index current: the refresh policy commands follow before
//! they read the index, full updates and rebuilds, and watching.

use crate::{ApiError, Settings};
use agentlog_formats::discover::{discover_report, Discovery, Found};
use agentlog_index::{Index, Journal, Progress, UpdateReport};
use std::path::Path;

/// A refresh reads at most this many files before a command runs; beyond
/// it the command uses the index as it is.
pub const CHEAP_FILES: usize = 200;
/// A refresh reads at most this many bytes before a command runs.
pub const CHEAP_BYTES: u64 = 64 * 1024 * 1024;

/// What happens while the index is opened and refreshed, for a front end
/// to show.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// The index file was not usable and was replaced by an empty one.
    Replaced {
        /// Why.
        notice: &'a str,
    },
    /// The index is empty and is being built from every session.
    Building {
        /// Session files to read.
        files: usize,
        /// The index file.
        path: &'a Path,
    },
    /// Files read so far.
    Progress(Progress),
    /// The archive kept the files about to be read (see
    /// [`crate::kept::capture`]).
    Archived(&'a crate::kept::Kept),
}

/// What a refresh did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refreshed {
    /// The index was current.
    Current,
    /// The index was empty and was built.
    Built(UpdateReport),
    /// A few files were read.
    Updated(UpdateReport),
    /// Too much changed to read before the command; the index is used as
    /// it is.
    Behind {
        /// Files to read or remove.
        files: usize,
        /// Bytes to read.
        bytes: u64,
    },
}

/// Opens the index of `settings`, reporting a replaced file.
pub fn open(settings: &Settings, events: &mut dyn FnMut(Event<'_>)) -> Result<Index, ApiError> {
    crate::kept::attach(settings);
    let (index, notice) = Index::open(&settings.index_path)?;
    if let Some(n) = notice {
        events(Event::Replaced { notice: &n });
    }
    Ok(index)
}

/// Returns every session file discovery finds, and its problems (folders
/// that could not be listed).
pub fn discover(settings: &Settings) -> Result<(Vec<Found>, Vec<String>), ApiError> {
    let (report, _) = discovery(settings)?;
    let problems = report.diagnostics.iter().map(ToString::to_string).collect();
    Ok((report.found, problems))
}

/// What a full discovery found, for [`update`]: the sessions, the problems
/// met, and where it looked (kept as the journal once the index holds
/// every session found).
#[derive(Clone, Debug)]
pub struct Discovered {
    /// Every session file found.
    pub found: Vec<Found>,
    /// Folders that could not be listed, and similar problems.
    pub problems: Vec<String>,
    discovery: Discovery,
    key: u64,
}

/// Runs a full discovery for `settings` (see [`Discovered`]).
pub fn discover_full(settings: &Settings) -> Result<Discovered, ApiError> {
    let (mut discovery, key) = discovery(settings)?;
    let problems = discovery
        .diagnostics
        .iter()
        .map(ToString::to_string)
        .collect();
    Ok(Discovered {
        found: std::mem::take(&mut discovery.found),
        problems,
        discovery,
        key,
    })
}

/// Runs discovery for `settings`; returns its report and the journal key of
/// these settings.
fn discovery(settings: &Settings) -> Result<(Discovery, u64), ApiError> {
    let formats = settings.formats(&[])?;
    let key = journal_key(settings, &formats);
    let mut report = discover_report(&settings.env, Some(&formats));
    report.found = crate::kept::with_kept(settings, report.found, Some(&formats));
    Ok((report, key))
}

/// Captures `found` into the archive before the index reads them (`full`:
/// `found` is every session), telling `events` what it kept.
fn keep(
    settings: &Settings,
    found: &[Found],
    full: bool,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<(), ApiError> {
    if let Some(kept) = crate::kept::capture(settings, found, full, &mut |_, _| {})? {
        events(Event::Archived(&kept));
    }
    Ok(())
}

/// The journal key of `settings`: what discovery looks for and where.
fn journal_key(settings: &Settings, formats: &[String]) -> u64 {
    Journal::key(&settings.env, formats)
}

/// How long after a full check (a `stat` of every session file) commands
/// rely on the journal alone; after this they still answer at once, and
/// [`full_check_due`] says so (the CLI then runs one in the background).
pub const FULL_CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// Files last seen written within this long of the last full check are
/// `stat`ed by every command: the sessions agents are writing.
pub const RECENT: std::time::Duration = std::time::Duration::from_secs(3600);

/// Formats that keep many sessions in one file: a new session in them
/// changes no directory, so their discovery runs on every command.
const CONTAINERS: [&str; 2] = ["opencode", "kilo"];

/// Keeps the journal of a full check that `discovery` was part of.
fn keep_journal(index: &Index, discovery: &Discovery, key: u64) -> Result<(), ApiError> {
    index.save_journal(&Journal {
        checked_ms: agentlog_index::time::now_ms(),
        key,
        dirs: discovery.dirs.clone(),
    })?;
    Ok(())
}

/// True when the journal of `index` is older than [`FULL_CHECK_EVERY`] (or
/// missing) and no other process claimed the check within that time: the
/// caller should run a full check soon, e.g. in the background. Claims it.
pub fn full_check_due(index: &Index) -> bool {
    let now = agentlog_index::time::now_ms();
    let every = FULL_CHECK_EVERY.as_millis() as i64;
    let stale = index
        .journal()
        .ok()
        .flatten()
        .is_none_or(|j| now.saturating_sub(j.checked_ms) >= every);
    stale && index.claim_check(now, every).unwrap_or(false)
}

/// The quick refresh: when the journal is for these settings and no
/// directory discovery looks in has changed, reads what changed among the
/// recently written files (and the sessions of [`CONTAINERS`]). `None`
/// when a full check is needed.
fn quick(
    settings: &Settings,
    index: &mut Index,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<Option<Refreshed>, ApiError> {
    let Some(journal) = index.journal()? else {
        return Ok(None);
    };
    let formats = settings.formats(&[])?;
    if journal.key != journal_key(settings, &formats) || !journal.dirs_unchanged() {
        return Ok(None);
    }
    let containers: Vec<String> = formats
        .iter()
        .filter(|f| CONTAINERS.contains(&f.as_str()))
        .cloned()
        .collect();
    let more = if containers.is_empty() {
        Vec::new()
    } else {
        discover_report(&settings.env, Some(&containers)).found
    };
    let since_ns = journal
        .checked_ms
        .saturating_sub(RECENT.as_millis() as i64)
        .saturating_mul(1_000_000);
    let plan = index.plan_recent(since_ns, &more)?;
    if plan.is_empty() {
        return Ok(Some(Refreshed::Current));
    }
    if plan.files_to_read() > CHEAP_FILES || plan.bytes > CHEAP_BYTES {
        return Ok(None);
    }
    keep(settings, &plan.found(), false, events)?;
    let report = index.apply(plan, &mut |_| {})?;
    Ok(Some(Refreshed::Updated(report)))
}

/// Returns the index, brought up to date first when that is cheap (a stat
/// of every file shows at most [`CHEAP_FILES`] files and [`CHEAP_BYTES`]
/// to read) or when it is empty; what `search`, `stats` and a cached
/// listing do before they read.
pub fn refreshed(
    settings: &Settings,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<(Index, Refreshed), ApiError> {
    let mut index = open(settings, events)?;
    let refreshed = refresh(settings, &mut index, events)?;
    Ok((index, refreshed))
}

/// Brings an index already open up to date when that is cheap, as
/// [`refreshed`] does: for a front end that keeps its index open between
/// requests (`agentlog mcp`), which saves opening it each time.
pub fn refresh(
    settings: &Settings,
    index: &mut Index,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<Refreshed, ApiError> {
    if let Some(r) = quick(settings, index, events)? {
        return Ok(r);
    }
    let (discovered, key) = discovery(settings)?;
    let plan = index.plan(&discovered.found)?;
    if plan.is_empty() {
        keep_journal(index, &discovered, key)?;
        return Ok(Refreshed::Current);
    }
    let empty = index.counts()?.1 == 0 && index.file_state_count()? == 0;
    if !empty && (plan.files_to_read() > CHEAP_FILES || plan.bytes > CHEAP_BYTES) {
        return Ok(Refreshed::Behind {
            files: plan.files_to_read() + plan.files_to_remove(),
            bytes: plan.bytes,
        });
    }
    if empty {
        events(Event::Building {
            files: plan.files_to_read(),
            path: &settings.index_path,
        });
    }
    keep(settings, &plan.found(), false, events)?;
    let report = index.apply(plan, &mut |p| events(Event::Progress(p)))?;
    keep_journal(index, &discovered, key)?;
    Ok(if empty {
        Refreshed::Built(report)
    } else {
        Refreshed::Updated(report)
    })
}

/// The index as a front end reads it (see [`for_reading`]).
pub struct Fresh {
    /// The index, refreshed when that was cheap.
    pub index: Index,
    /// What the refresh did (a front end says when the index is
    /// [`Refreshed::Behind`]).
    pub refreshed: Refreshed,
    /// A full check is due and this caller claimed it: it should run one
    /// once it has answered (the CLI starts `agentlog index` in the
    /// background). Only with [`Settings::background_checks`].
    pub check_due: bool,
}

/// What every command that reads the index does first (`search`, `stats`,
/// a cached listing, an export of every session): opens the index of
/// `settings` and brings it up to date when that is cheap ([`refreshed`],
/// telling `events`), then, when the caller runs checks
/// ([`Settings::background_checks`]), asks whether a full check is due
/// ([`full_check_due`], which claims it).
pub fn for_reading(
    settings: &Settings,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<Fresh, ApiError> {
    let (index, refreshed) = refreshed(settings, events)?;
    let check_due = settings.background_checks && full_check_due(&index);
    Ok(Fresh {
        index,
        refreshed,
        check_due,
    })
}

/// Brings the index up to date with every session (`rebuild`: reads every
/// file again into a new index that replaces the old one when complete).
pub fn update(
    settings: &Settings,
    discovered: &Discovered,
    rebuild: bool,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<(Index, UpdateReport), ApiError> {
    let found = &discovered.found;
    // The archive first: whatever the index reads, the archive holds.
    keep(settings, found, true, events)?;
    let (index, report) = if rebuild {
        Index::rebuild(&settings.index_path, found, &mut |p| {
            events(Event::Progress(p))
        })?
    } else {
        let mut index = open(settings, events)?;
        let plan = index.plan(found)?;
        let empty = plan.is_empty();
        let report = index.apply(plan, &mut |p| events(Event::Progress(p)))?;
        // What commands' updates of recent files left unmerged (an update
        // with files to read merges as it goes).
        if empty {
            index.merge_pending()?;
        }
        (index, report)
    };
    keep_journal(&index, &discovered.discovery, discovered.key)?;
    Ok((index, report))
}

/// One round of watching: reads what changed since the last round; `None`
/// when nothing did.
pub fn watch_round(
    index: &mut Index,
    settings: &Settings,
) -> Result<Option<UpdateReport>, ApiError> {
    let (discovered, key) = discovery(settings)?;
    keep(settings, &discovered.found, true, &mut |_| {})?;
    let plan = index.plan(&discovered.found)?;
    let report = if plan.is_empty() {
        index.merge_pending()?;
        None
    } else {
        Some(index.apply(plan, &mut |_| {})?)
    };
    keep_journal(index, &discovered, key)?;
    Ok(report)
}

/// One round of keeping the index fresh for a long-running reader (the
/// web viewer): while the journal of the last full round holds and is
/// younger than [`FULL_CHECK_EVERY`], only the recently written files are
/// looked at ([`RECENT`]); else a full round ([`watch_round`]). Returns
/// what was read, `None` when nothing changed.
pub fn keep_fresh(
    index: &mut Index,
    settings: &Settings,
) -> Result<Option<UpdateReport>, ApiError> {
    let now = agentlog_index::time::now_ms();
    let young = index
        .journal()?
        .is_some_and(|j| now.saturating_sub(j.checked_ms) < FULL_CHECK_EVERY.as_millis() as i64);
    if young {
        match quick(settings, index, &mut |_| {})? {
            Some(Refreshed::Updated(r)) => return Ok(Some(r)),
            Some(_) => return Ok(None),
            None => {}
        }
    }
    watch_round(index, settings)
}

/// How often `agentlog index` runs SQLite's `quick_check` on the index:
/// damage in the middle of the file can go unnoticed by queries (they
/// return what they can read).
pub const CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// Keeps the index at `settings` up to date until `on_update` returns
/// false or fails: a round after each wait, the wait doubling from half a
/// second to 16 seconds while nothing changes and back to half a second
/// when something did. `on_update` gets each round's report and how long
/// it took.
pub fn watch(
    settings: &Settings,
    events: &mut dyn FnMut(Event<'_>),
    on_update: &mut dyn FnMut(&UpdateReport, std::time::Duration) -> Result<bool, ApiError>,
) -> Result<(), ApiError> {
    let mut index = open(settings, events)?;
    let min = std::time::Duration::from_millis(500);
    let max = std::time::Duration::from_secs(16);
    let mut wait = min;
    loop {
        let started = std::time::Instant::now();
        match watch_round(&mut index, settings)? {
            None => wait = (wait * 2).min(max),
            Some(r) => {
                if !on_update(&r, started.elapsed())? {
                    return Ok(());
                }
                wait = min;
            }
        }
        std::thread::sleep(wait);
    }
}
