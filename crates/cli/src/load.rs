//! Finding and reading the session a command names.

use agentlog_formats::{registry, Format, Read};
use anyhow::{anyhow, Context};
use std::path::{Path, PathBuf};

/// Returns the format called `name`, or an error listing the known names.
pub fn format_named(name: &str) -> anyhow::Result<&'static dyn Format> {
    registry::by_name(name).ok_or_else(|| {
        anyhow!(
            "unknown format {name:?}; known formats: {}",
            registry::names()
        )
    })
}

/// Returns the path a session argument names: an existing path as is;
/// otherwise an id (or id prefix) looked up among discovered sessions (see
/// [`resolve_in`]).
pub fn resolve(arg: &str) -> anyhow::Result<PathBuf> {
    let p = Path::new(arg);
    if p.exists() || agentlog_formats::member::split_member(p).is_some() {
        return Ok(p.to_path_buf());
    }
    resolve_in(&crate::config::settings(&[])?, arg)
}

/// Returns the session whose id is `arg` or starts with it, among the
/// sessions discovered with `settings`.
///
/// Ids are first matched against the ids file names carry (the file stem, a
/// trailing UUID, a chat directory's name), then, when none matches,
/// against the ids inside the files. An id that is the whole id of one
/// session wins over longer ones it prefixes; otherwise a prefix matching
/// several sessions is an error listing them.
pub fn resolve_in(settings: &crate::config::Settings, arg: &str) -> anyhow::Result<PathBuf> {
    use crate::commands::ls::{par_map, read_found};
    use agentlog_formats::discover::{discover_all, Found};
    use std::io::IsTerminal;
    let looks_like_path =
        arg.is_empty() || arg.contains(std::path::MAIN_SEPARATOR) || arg.contains('/');
    if looks_like_path {
        return Err(anyhow!("{arg}: no such file"));
    }
    let formats = settings.formats(&[])?;
    let found = discover_all(&settings.env, Some(&formats));
    let by_name: Vec<(&Found, String)> = found
        .iter()
        .filter_map(|f| {
            name_ids(&f.path)
                .into_iter()
                .find(|id| id.starts_with(arg))
                .map(|id| (f, id))
        })
        .collect();
    if let Some(p) = pick(arg, by_name)? {
        return Ok(p);
    }
    let ids = par_map(&found, std::io::stderr().is_terminal(), |f| {
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
    if let Some(p) = pick(arg, by_content)? {
        return Ok(p);
    }
    Err(anyhow!(
        "{arg}: no such file, and none of the {} sessions found has an id starting with it; `agentlog ls` lists them",
        found.len()
    ))
}

/// Picks the one candidate, the one whose id is exactly `arg`, or fails
/// listing them all.
fn pick(
    arg: &str,
    cands: Vec<(&agentlog_formats::discover::Found, String)>,
) -> anyhow::Result<Option<PathBuf>> {
    if cands.len() <= 1 {
        return Ok(cands.into_iter().next().map(|(f, _)| f.path.clone()));
    }
    let exact: Vec<_> = cands.iter().filter(|(_, id)| id == arg).collect();
    if let [one] = exact.as_slice() {
        return Ok(Some(one.0.path.clone()));
    }
    let mut msg = format!(
        "{arg}: the id prefix is ambiguous; it matches {} sessions:",
        cands.len()
    );
    for (f, id) in cands.iter().take(20) {
        msg.push_str(&format!("\n  {:<9} {id}  {}", f.format, f.path.display()));
    }
    if cands.len() > 20 {
        msg.push_str(&format!("\n  … and {} more", cands.len() - 20));
    }
    msg.push_str("\ngive more characters of the id, or the path");
    Err(anyhow!(msg))
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

/// Reads the session at `arg` with format `from`, or the detected one.
pub fn read(arg: &str, from: Option<&str>) -> anyhow::Result<(PathBuf, &'static dyn Format, Read)> {
    let path = resolve(arg)?;
    let format = match from {
        Some(name) => format_named(name)?,
        None => registry::detect(&path)?,
    };
    let read = format
        .read_path(&path)
        .with_context(|| format!("reading {} as {}", path.display(), format.name()))?;
    Ok((path, format, read))
}
