//! Keeping the index current: the refresh policy commands follow before
//! they read the index, full updates and rebuilds, and watching.

use crate::{ApiError, Settings};
use agentlog_formats::discover::{discover_report, Found};
use agentlog_index::{Index, Progress, UpdateReport};
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
    let (index, notice) = Index::open(&settings.index_path)?;
    if let Some(n) = notice {
        events(Event::Replaced { notice: &n });
    }
    Ok(index)
}

/// Returns every session file discovery finds, and its problems (folders
/// that could not be listed).
pub fn discover(settings: &Settings) -> Result<(Vec<Found>, Vec<String>), ApiError> {
    let formats = settings.formats(&[])?;
    let report = discover_report(&settings.env, Some(&formats));
    let problems = report.diagnostics.iter().map(ToString::to_string).collect();
    Ok((report.found, problems))
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
    let (found, _) = discover(settings)?;
    let plan = index.plan(&found)?;
    if plan.is_empty() {
        return Ok((index, Refreshed::Current));
    }
    let empty = index.counts()?.1 == 0 && index.file_state_count()? == 0;
    if !empty && (plan.files_to_read() > CHEAP_FILES || plan.bytes > CHEAP_BYTES) {
        let behind = Refreshed::Behind {
            files: plan.files_to_read() + plan.files_to_remove(),
            bytes: plan.bytes,
        };
        return Ok((index, behind));
    }
    if empty {
        events(Event::Building {
            files: plan.files_to_read(),
            path: &settings.index_path,
        });
    }
    let report = index.apply(plan, &mut |p| events(Event::Progress(p)))?;
    Ok((
        index,
        if empty {
            Refreshed::Built(report)
        } else {
            Refreshed::Updated(report)
        },
    ))
}

/// Brings the index up to date with every session (`rebuild`: reads every
/// file again into a new index that replaces the old one when complete).
pub fn update(
    settings: &Settings,
    found: &[Found],
    rebuild: bool,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<(Index, UpdateReport), ApiError> {
    if rebuild {
        let r = Index::rebuild(&settings.index_path, found, &mut |p| {
            events(Event::Progress(p))
        })?;
        return Ok(r);
    }
    let mut index = open(settings, events)?;
    let plan = index.plan(found)?;
    let report = index.apply(plan, &mut |p| events(Event::Progress(p)))?;
    Ok((index, report))
}

/// One round of watching: reads what changed since the last round; `None`
/// when nothing did.
pub fn watch_round(
    index: &mut Index,
    settings: &Settings,
) -> Result<Option<UpdateReport>, ApiError> {
    let (found, _) = discover(settings)?;
    let plan = index.plan(&found)?;
    if plan.is_empty() {
        return Ok(None);
    }
    Ok(Some(index.apply(plan, &mut |_| {})?))
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
