//! Finding the session a front end names: a path, an id, or the start of
//! an id, among every session discovery finds.

use crate::copies::CopyRecord;
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

/// Which file to take when one session id names several (a session
/// resumed in another agent keeps its id there).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Prefer {
    /// The original: the file that is not a copy `resume` wrote (the
    /// first made, when that is not known).
    #[default]
    Original,
    /// The file written to last.
    Newest,
}

/// How to resolve a session argument.
#[derive(Clone, Debug, Default)]
pub struct ResolveOptions {
    /// Only sessions of this agent (format). An argument `AGENT:ID` names
    /// the agent too.
    pub agent: Option<String>,
    /// Which file to take when the id is in several.
    pub prefer: Prefer,
}

/// A resolved session, and the other files holding the same session (the
/// same id in other agents, or copies beside it).
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The file taken.
    pub found: Found,
    /// The file taken, as a candidate (its id, time, whether it is a copy).
    pub chosen: Candidate,
    /// The other files with the same id, not taken.
    pub others: Vec<Candidate>,
}

/// Splits `AGENT:ID` into the agent and the id, when what comes before the
/// first `:` is an agent's name; otherwise `(None, arg)`.
///
/// ```
/// use agentlog_api::resolve::split_agent;
/// assert_eq!(split_agent("codex:5e55f0"), (Some("codex"), "5e55f0"));
/// assert_eq!(split_agent("5e55f0"), (None, "5e55f0"));
/// assert_eq!(split_agent("nope:5e55f0"), (None, "nope:5e55f0"));
/// ```
pub fn split_agent(arg: &str) -> (Option<&str>, &str) {
    match arg.split_once(':') {
        Some((agent, id)) if registry::by_name(agent).is_some() => (Some(agent), id),
        _ => (None, arg),
    }
}

/// Returns the session `arg` names: an existing path as is (its format
/// detected), otherwise the session whose id is `arg` or starts with it.
///
/// Ids are first matched against the ids file names carry (the file stem,
/// a trailing UUID, a chat directory's name), then, when none matches,
/// against the ids inside the files. An id that is the whole id of one
/// session wins over longer ones it prefixes; otherwise a prefix matching
/// several sessions is [`ApiError::Ambiguous`], listing them. `AGENT:ID`
/// looks among that agent's sessions only. One id in several files (a
/// session resumed in another agent) is not ambiguous: the original is
/// taken (see [`resolve_with`]).
pub fn resolve(settings: &Settings, arg: &str) -> Result<Found, ApiError> {
    Ok(resolve_with(settings, arg, &ResolveOptions::default())?.found)
}

/// Returns the session `arg` names as [`resolve`] does, with `opts`: only
/// an agent's sessions, and which file to take when the id is in several
/// (the original unless [`Prefer::Newest`]); the others are returned too,
/// for a front end to say which copies exist.
pub fn resolve_with(
    settings: &Settings,
    arg: &str,
    opts: &ResolveOptions,
) -> Result<Resolved, ApiError> {
    crate::kept::attach(settings);
    let p = Path::new(arg);
    if exists(p) {
        let format = registry::detect(p)?;
        let found = Found {
            path: p.to_path_buf(),
            format: format.name(),
        };
        return Ok(Resolved {
            chosen: candidate(&found, String::new(), &[]),
            found,
            others: Vec::new(),
        });
    }
    let (named, id) = split_agent(arg);
    let agent = opts.agent.as_deref().or(named);
    let looks_like_path =
        id.is_empty() || id.contains(std::path::MAIN_SEPARATOR) || id.contains('/');
    let agents: Vec<String> = agent.map(String::from).into_iter().collect();
    let formats = settings.formats(&agents)?;
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
    let copies = crate::copies::recorded(settings);
    resolve_among_with(&found, id, &copies, opts.prefer)
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
/// [`resolve`]), knowing no recorded copies.
pub fn resolve_among(found: &[Found], arg: &str) -> Result<Found, ApiError> {
    Ok(resolve_among_with(found, arg, &[], Prefer::Original)?.found)
}

/// Returns the session of `found` whose id is `arg` or starts with it;
/// `copies` are the copies `resume` recorded, `prefer` which file to take
/// when the id is in several (see [`resolve_with`]).
pub fn resolve_among_with(
    found: &[Found],
    arg: &str,
    copies: &[CopyRecord],
    prefer: Prefer,
) -> Result<Resolved, ApiError> {
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
    if let Some(f) = pick(arg, by_name, copies, prefer)? {
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
    pick(arg, by_content, copies, prefer)?.ok_or_else(not_found)
}

/// Reads the session `arg` names (see [`resolve`]) with the format `from`,
/// or the one that found or detects it.
pub fn read(
    settings: &Settings,
    arg: &str,
    from: Option<&str>,
) -> Result<(PathBuf, &'static dyn Format, Read), ApiError> {
    let (path, format, read, _) = read_with(settings, arg, from, &ResolveOptions::default())?;
    Ok((path, format, read))
}

/// Reads the session `arg` names with `opts` (see [`resolve_with`]) and
/// the format `from`, or the one that found or detects it; returns the
/// resolution too (what other files hold the session).
pub fn read_with(
    settings: &Settings,
    arg: &str,
    from: Option<&str>,
    opts: &ResolveOptions,
) -> Result<(PathBuf, &'static dyn Format, Read, Option<Resolved>), ApiError> {
    let (path, format, resolved) = match from {
        // A named format reads a file it would not be detected as.
        Some(name) if exists(Path::new(arg)) => (PathBuf::from(arg), format_named(name)?, None),
        Some(name) => {
            let r = resolve_with(settings, arg, opts)?;
            (r.found.path.clone(), format_named(name)?, Some(r))
        }
        None => {
            let r = resolve_with(settings, arg, opts)?;
            (r.found.path.clone(), format_named(r.found.format)?, Some(r))
        }
    };
    let read = format.read_path(&path)?;
    Ok((path, format, read, resolved))
}

fn candidate(f: &Found, id: String, copies: &[CopyRecord]) -> Candidate {
    Candidate {
        format: f.format.to_string(),
        id,
        path: f.path.clone(),
        modified: crate::copies::modified(&f.path),
        copy: crate::copies::is_copy(copies, &f.path),
    }
}

/// Picks the one candidate, the one whose id is exactly `arg`, the one
/// `prefer` says of several files with the same id, or fails listing them
/// all.
fn pick(
    arg: &str,
    cands: Vec<(&Found, String)>,
    copies: &[CopyRecord],
    prefer: Prefer,
) -> Result<Option<Resolved>, ApiError> {
    let mut cands = cands;
    if cands.is_empty() {
        return Ok(None);
    }
    if cands.iter().filter(|(_, id)| id == arg).count() >= 1 {
        cands.retain(|(_, id)| id == arg);
    }
    let first_id = cands[0].1.clone();
    if cands.iter().all(|(_, id)| *id == first_id) {
        return Ok(Some(choose(cands, copies, prefer)));
    }
    Err(ApiError::Ambiguous {
        prefix: arg.to_string(),
        candidates: cands
            .into_iter()
            .map(|(f, id)| candidate(f, id, copies))
            .collect(),
    })
}

/// Takes one of `cands`, files holding the same session id: the original
/// (not a recorded copy; of several, the first made) or the newest.
fn choose(cands: Vec<(&Found, String)>, copies: &[CopyRecord], prefer: Prefer) -> Resolved {
    let mut all: Vec<(Found, Candidate, Option<std::time::SystemTime>)> = cands
        .into_iter()
        .map(|(f, id)| {
            let c = candidate(f, id, copies);
            (f.clone(), c, crate::copies::made(&f.path))
        })
        .collect();
    // The chosen one goes first; the rest keep discovery's order.
    let best = match prefer {
        Prefer::Original => all
            .iter()
            .enumerate()
            .min_by_key(|(i, (_, c, made))| (c.copy, made.is_none(), *made, *i))
            .map(|(i, _)| i),
        Prefer::Newest => all
            .iter()
            .enumerate()
            .max_by_key(|(i, (_, c, _))| (c.modified, std::cmp::Reverse(*i)))
            .map(|(i, _)| i),
    }
    .unwrap_or(0);
    let (found, chosen, _) = all.remove(best);
    Resolved {
        found,
        chosen,
        others: all.into_iter().map(|(_, c, _)| c).collect(),
    }
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
                .map(|id| {
                    let path = path_of(id);
                    Candidate {
                        format: kind.to_string(),
                        id: id.to_string(),
                        modified: crate::copies::modified(&path),
                        copy: false,
                        path,
                    }
                })
                .collect(),
        }),
    }
}
