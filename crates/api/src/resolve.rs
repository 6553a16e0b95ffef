//! Finding the session a front end names: a path, an id, or the start of
//! an id, among every session discovery finds.

use crate::error::Candidate;
use crate::list::{par_map, read_found};
use crate::{ApiError, Settings};
use agentlog_formats::discover::{discover_all, Found};
use agentlog_formats::{registry, Format, Read};
use std::path::{Path, PathBuf};

/// Returns the format called `name`, or an error listing the known names.
pub fn format_named(name: &str) -> Result<&'static dyn Format, ApiError> {
    registry::by_name(name).ok_or_else(|| ApiError::UnknownFormat {
        name: name.to_string(),
        known: registry::names(),
    })
}

/// True for an existing path, or a member of a multi-session file
/// (`store.db#chat-id`, see [`agentlog_formats::member`]).
fn exists(p: &Path) -> bool {
    p.exists()
        || agentlog_formats::member::split_member(p).is_some()
        || agentlog_formats::archived::is_kept_only(p)
}

/// Returns the session `arg` names: an existing path as is (its format
/// detected), otherwise the session whose id is `arg` or starts with it.
///
/// Ids are first matched against the ids file names carry (the file stem,
/// a trailing UUID, a chat directory's name), then, when none matches,
/// against the ids inside the files. An id that is the whole id of one
/// session wins over longer ones it prefixes; otherwise a prefix matching
/// several sessions is [`ApiError::Ambiguous`], listing them.
pub fn resolve(settings: &Settings, arg: &str) -> Result<Found, ApiError> {
    crate::kept::attach(settings);
    let p = Path::new(arg);
    if exists(p) {
        let format = registry::detect(p)?;
        return Ok(Found {
            path: p.to_path_buf(),
            format: format.name(),
        });
    }
    let looks_like_path =
        arg.is_empty() || arg.contains(std::path::MAIN_SEPARATOR) || arg.contains('/');
    let formats = settings.formats(&[])?;
    let found = if looks_like_path {
        Vec::new()
    } else {
        // The sessions whose files are gone, kept in the archive, too.
        crate::kept::with_kept(
            settings,
            discover_all(&settings.env, Some(&formats)),
            Some(&formats),
        )
    };
    resolve_among(&found, arg)
}

/// Returns the path `arg` names: an existing path as is (whatever its
/// format), otherwise the file of the session whose id is `arg` or starts
/// with it (see [`resolve`]).
pub fn resolve_path(settings: &Settings, arg: &str) -> Result<PathBuf, ApiError> {
    let p = Path::new(arg);
    if exists(p) {
        return Ok(p.to_path_buf());
    }
    Ok(resolve(settings, arg)?.path)
}

/// Returns the session of `found` whose id is `arg` or starts with it (see
/// [`resolve`]).
pub fn resolve_among(found: &[Found], arg: &str) -> Result<Found, ApiError> {
    let not_found = || ApiError::NotFound {
        id: arg.to_string(),
        searched: found.len(),
    };
    if arg.is_empty() {
        return Err(not_found());
    }
    let by_name: Vec<(&Found, String)> = found
        .iter()
        .filter_map(|f| {
            name_ids(&f.path)
                .into_iter()
                .find(|id| id.starts_with(arg))
                .map(|id| (f, id))
        })
        .collect();
    if let Some(f) = pick(arg, by_name)? {
        return Ok(f);
    }
    let ids = par_map(found, &|_, _| {}, |f| {
        read_found(f).ok().map(|r| r.session.meta.id)
    });
    let by_content: Vec<(&Found, String)> = found
        .iter()
        .zip(ids)
        .filter_map(|(f, id)| {
            id.flatten()
                .filter(|id| id.starts_with(arg))
                .map(|id| (f, id))
        })
        .collect();
    pick(arg, by_content)?.ok_or_else(not_found)
}

/// Reads the session `arg` names (see [`resolve`]) with the format `from`,
/// or the one that found or detects it.
pub fn read(
    settings: &Settings,
    arg: &str,
    from: Option<&str>,
) -> Result<(PathBuf, &'static dyn Format, Read), ApiError> {
    let (path, format) = match from {
        // A named format reads a file it would not be detected as.
        Some(name) if exists(Path::new(arg)) => (PathBuf::from(arg), format_named(name)?),
        Some(name) => (resolve(settings, arg)?.path, format_named(name)?),
        None => {
            let found = resolve(settings, arg)?;
            (found.path, format_named(found.format)?)
        }
    };
    let read = format.read_path(&path)?;
    Ok((path, format, read))
}

/// Picks the one candidate, the one whose id is exactly `arg`, or fails
/// listing them all.
fn pick(arg: &str, cands: Vec<(&Found, String)>) -> Result<Option<Found>, ApiError> {
    if cands.len() <= 1 {
        return Ok(cands.into_iter().next().map(|(f, _)| f.clone()));
    }
    let exact: Vec<_> = cands.iter().filter(|(_, id)| id == arg).collect();
    if let [one] = exact.as_slice() {
        return Ok(Some(one.0.clone()));
    }
    Err(ApiError::Ambiguous {
        prefix: arg.to_string(),
        candidates: cands
            .into_iter()
            .map(|(f, id)| Candidate {
                format: f.format.to_string(),
                id,
                path: f.path.clone(),
            })
            .collect(),
    })
}

/// Returns the ids a session's path carries: the file stem (the chat
/// directory's name for generic names like `store.db`), a trailing UUID
/// (`rollout-…-<uuid>`, `<time>_<uuid>`) and a trailing short hex id
/// (`session-<time>-<8 hex>`).
fn name_ids(path: &Path) -> Vec<String> {
    const GENERIC: &[&str] = &[
        "store",
        "session",
        "events",
        "transcript",
        "meta",
        "state",
        "messages",
        "chat",
    ];
    let stem = if path.is_dir() {
        path.file_name()
    } else {
        path.file_stem()
    };
    let Some(stem) = stem.map(|s| s.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    let mut ids = Vec::new();
    if GENERIC.contains(&stem.as_str()) {
        if let Some(dir) = path.parent().and_then(Path::file_name) {
            ids.push(dir.to_string_lossy().into_owned());
        }
    }
    let is_uuid = |s: &str| {
        s.len() == 36
            && s.char_indices().all(|(i, c)| {
                if [8, 13, 18, 23].contains(&i) {
                    c == '-'
                } else {
                    c.is_ascii_hexdigit()
                }
            })
    };
    if let Some(tail) = stem.len().checked_sub(36).and_then(|i| stem.get(i..)) {
        if is_uuid(tail) {
            ids.push(tail.to_string());
        }
    }
    if let Some((_, t)) = stem.rsplit_once('_') {
        ids.push(t.to_string());
    }
    if let Some((_, t)) = stem.rsplit_once('-') {
        if t.len() >= 8 && t.chars().all(|c| c.is_ascii_hexdigit()) {
            ids.push(t.to_string());
        }
    }
    ids.push(stem);
    ids.dedup();
    ids
}

/// Picks the one of `ids` that `arg` names: the id itself, or the only id
/// starting with it (as session ids are resolved). `kind` names what the
/// ids are (`jido`, `acpx`, …) in an ambiguity error; `path_of` gives each
/// candidate's file for it.
///
/// ```
/// use agentlog_api::resolve::pick_id;
/// use std::path::PathBuf;
/// let ids = ["a1b2", "a1c3", "b9"];
/// let path = |id: &str| PathBuf::from(format!("{id}.json"));
/// assert_eq!(pick_id("jido", "b", &ids, path)?, "b9");
/// assert!(pick_id("jido", "a1", &ids, path).is_err());
/// assert!(pick_id("jido", "zz", &ids, path).is_err());
/// # Ok::<(), agentlog_api::ApiError>(())
/// ```
pub fn pick_id<'a, S: AsRef<str>>(
    kind: &str,
    arg: &str,
    ids: &'a [S],
    path_of: impl Fn(&str) -> PathBuf,
) -> Result<&'a str, ApiError> {
    if let Some(id) = ids.iter().find(|id| id.as_ref() == arg) {
        return Ok(id.as_ref());
    }
    let matching: Vec<&str> = if arg.is_empty() {
        Vec::new()
    } else {
        ids.iter()
            .map(AsRef::as_ref)
            .filter(|id| id.starts_with(arg))
            .collect()
    };
    match matching.as_slice() {
        [one] => Ok(one),
        [] => Err(ApiError::NotFound {
            id: arg.to_string(),
            searched: ids.len(),
        }),
        many => Err(ApiError::Ambiguous {
            prefix: arg.to_string(),
            candidates: many
                .iter()
                .map(|id| Candidate {
                    format: kind.to_string(),
                    id: id.to_string(),
                    path: path_of(id),
                })
                .collect(),
        }),
    }
}
