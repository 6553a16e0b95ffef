//! The archive's part below listing and resolving: attaching it for the
//! readers, capturing files before the index reads them, and the sessions
//! whose files are gone (the archive module has the services on top).

use crate::{ApiError, Settings};
use agentlog_archive::{Archive, CaptureReport};
use agentlog_formats::discover::Found;
use agentlog_formats::registry;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Makes the archive of `settings` where readers find the files it keeps
/// that are gone (see [`agentlog_formats::archived`]). Every entry point
/// that reads sessions calls it; it is cheap and idempotent.
pub fn attach(settings: &Settings) {
    if let Some(dir) = settings.archive_dir() {
        agentlog_archive::attach(&dir);
    }
}

/// Opens the archive of `settings`, creating it; `None` when it is off.
pub fn open(settings: &Settings) -> Result<Option<Archive>, ApiError> {
    match settings.archive_dir() {
        Some(dir) => Ok(Some(Archive::open(&dir)?)),
        None => Ok(None),
    }
}

/// Opens the archive of `settings` when there is one.
pub fn open_existing(settings: &Settings) -> Result<Option<Archive>, ApiError> {
    match settings.archive_dir() {
        Some(dir) => Ok(Archive::open_existing(&dir)?),
        None => Ok(None),
    }
}

/// True for a discovered session that is one regular file (or claims to
/// be): the archive keeps those. Folders are not captured yet; sessions
/// inside a database (`store.db#id`) are captured by their database.
fn capturable(f: &Found) -> bool {
    match std::fs::symlink_metadata(&f.path) {
        Ok(m) => !m.is_dir(),
        Err(_) => false,
    }
}

/// The databases holding sessions of `found` (`store.db#id`), once each,
/// with the format of their sessions.
fn databases(found: &[Found]) -> Vec<(PathBuf, String)> {
    let mut seen = HashSet::new();
    found
        .iter()
        .filter_map(|f| {
            let (db, _) = agentlog_formats::member::split_member(&f.path)?;
            std::fs::symlink_metadata(&db).ok()?;
            seen.insert(db.clone()).then(|| (db, f.format.to_string()))
        })
        .collect()
}

/// What keeping the found files did.
#[derive(Clone, Debug, Default)]
pub struct Kept {
    /// The capture's report.
    pub report: CaptureReport,
    /// Sessions newly noticed gone, or back.
    pub noticed: usize,
    /// States and files dropped by the retention the user set
    /// (`archive_keep_days`).
    pub pruned: usize,
}

/// Captures into the archive every file of `found` (session files) whose
/// state it does not hold, and notes which kept files are gone and which
/// are back. `None` when the archive is off. `full` says `found` is every
/// session discovery found (only then are the others noticed gone).
pub fn capture(
    settings: &Settings,
    found: &[Found],
    full: bool,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Option<Kept>, ApiError> {
    let Some(mut archive) = open(settings)? else {
        return Ok(None);
    };
    let files: Vec<(PathBuf, String)> = found
        .iter()
        .filter(|f| capturable(f))
        .map(|f| (f.path.clone(), f.format.to_string()))
        .collect();
    let mut report = archive.capture_all(&files, progress)?;
    for (db, format) in databases(found) {
        report.files += 1;
        match archive.capture_database(&db, &format) {
            Ok(c) => report.count(c),
            Err(e) => report.failed.push(agentlog_archive::FileFailure {
                path: db,
                message: e.to_string(),
            }),
        }
    }
    let (mut noticed, mut pruned) = (0, 0);
    if full {
        let live: HashSet<&Path> = found
            .iter()
            .filter(|f| std::fs::symlink_metadata(&f.path).is_ok())
            .map(|f| f.path.as_path())
            .collect();
        let dbs = databases(found);
        let live: HashSet<&Path> = live
            .into_iter()
            .chain(dbs.iter().map(|(db, _)| db.as_path()))
            .collect();
        let (mut missing, mut present) = (Vec::new(), Vec::new());
        for s in archive.sources()? {
            let on_disk =
                live.contains(s.path.as_path()) || std::fs::symlink_metadata(&s.path).is_ok();
            match (on_disk, s.gone_ms.is_some()) {
                (false, false) => missing.push(s.path),
                (true, true) => present.push(s.path),
                _ => {}
            }
        }
        noticed = archive.note_presence(&missing, &present)?;
        // agentlog's own retention, when the user set one.
        if let Some(days) = settings.archive_keep_days {
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            let (states, files) = archive.prune(now_ms - i64::from(days) * 86_400_000, false)?;
            pruned = states + files;
        }
    }
    Ok(Some(Kept {
        report,
        noticed,
        pruned,
    }))
}

/// `found` with the sessions the archive keeps whose files are gone from
/// disk (of `formats`, all when `None`) added after them.
pub fn with_kept(
    settings: &Settings,
    mut found: Vec<Found>,
    formats: Option<&[String]>,
) -> Vec<Found> {
    attach(settings);
    let Ok(Some(archive)) = open_existing(settings) else {
        return found;
    };
    let Ok(sources) = archive.paths() else {
        return found;
    };
    let live: HashSet<PathBuf> = found.iter().map(|f| f.path.clone()).collect();
    for (path, format) in sources {
        if live.contains(&path) || formats.is_some_and(|fs| !fs.contains(&format)) {
            continue;
        }
        if std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        if let Some(format) = registry::by_name(&format) {
            // A database's sessions, or the file's one.
            for path in format.sessions_in(&path) {
                if !live.contains(&path) {
                    found.push(Found {
                        path,
                        format: format.name(),
                    });
                }
            }
        }
    }
    found
}

/// The sessions whose files are gone, by path, with when agentlog noticed
/// (ms since the epoch), as the last full check of the files found them.
pub fn gone(settings: &Settings) -> HashMap<PathBuf, Option<i64>> {
    let Ok(Some(archive)) = open_existing(settings) else {
        return HashMap::new();
    };
    // The ones a full check noticed (a listing does not `stat` every file
    // the archive holds).
    archive
        .gone()
        .unwrap_or_default()
        .into_iter()
        .map(|s| (s.path, s.gone_ms))
        .collect()
}

/// When the file of the session at `path` was noticed gone, from `gone`
/// (see [`gone`]): its own file's, or for a session inside a database
/// (`store.db#id`), the database's.
pub(crate) fn gone_at(gone: &HashMap<PathBuf, Option<i64>>, path: &Path) -> Option<Option<i64>> {
    if let Some(g) = gone.get(path) {
        return Some(*g);
    }
    let (file, _) = path.to_str()?.rsplit_once('#')?;
    gone.get(Path::new(file)).copied()
}
