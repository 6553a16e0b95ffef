//! Session metadata from a chat directory: `meta.json` (newer builds) and
//! the `meta` table of `store.db`. Encryption keys are removed before
//! anything is kept.

use super::super::wire::content::scrub_secrets;
use crate::Diagnostic;
use agentlog_model::{SessionMeta, Timestamp};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Reads `meta.json` in `chat_dir`, without its secrets. A missing file is
/// `None`; an unreadable or invalid one also gives a diagnostic.
pub(in crate::cursor) fn read_meta_json(
    chat_dir: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Option<Map<String, Value>> {
    let path = chat_dir.join("meta.json");
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            diags.push(Diagnostic::warning(
                &path,
                None,
                "unreadable-meta",
                format!("cannot read ({e}); metadata skipped"),
            ));
            return None;
        }
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut v @ Value::Object(_)) => {
            scrub_secrets(&mut v);
            match v {
                Value::Object(m) => Some(m),
                _ => None,
            }
        }
        Ok(_) => {
            diags.push(Diagnostic::warning(
                &path,
                None,
                "invalid-meta",
                "not a JSON object; metadata skipped",
            ));
            None
        }
        Err(e) => {
            diags.push(Diagnostic::warning(
                &path,
                Some(e.line() as u64),
                "invalid-meta",
                format!("not valid JSON ({e}); metadata skipped"),
            ));
            None
        }
    }
}

/// Returns a Cursor time value (epoch milliseconds as a number or a digit
/// string, or ISO text) as a timestamp.
pub(in crate::cursor) fn timestamp(v: &Value) -> Option<Timestamp> {
    match v {
        Value::Number(n) => n.as_i64().map(Timestamp::Millis),
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => Some(match s.parse::<i64>() {
            Ok(ms) => Timestamp::Millis(ms),
            Err(_) => Timestamp::Text(s.clone()),
        }),
        _ => None,
    }
}

fn str_of<'a>(m: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| m.get(*k).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
}

/// Fills the session metadata from a chat store's metadata (`meta.json`
/// fields or the decoded `meta` row), without overriding what is set.
pub(in crate::cursor) fn apply(meta: &mut SessionMeta, m: &Map<String, Value>) {
    if meta.title.is_none() {
        meta.title = str_of(m, &["title", "name"]).map(str::to_string);
    }
    if meta.cwd.is_none() {
        meta.cwd = str_of(m, &["cwd", "workspacePath", "workspaceRoot"]).map(str::to_string);
    }
    if meta.model.model.is_none() {
        meta.model.model = str_of(m, &["lastUsedModel", "model"]).map(str::to_string);
    }
    if meta.created_at.is_none() {
        meta.created_at = ["createdAtMs", "createdAt"]
            .iter()
            .find_map(|k| m.get(*k).and_then(timestamp));
    }
    if meta.updated_at.is_none() {
        meta.updated_at = ["updatedAtMs", "updatedAt"]
            .iter()
            .find_map(|k| m.get(*k).and_then(timestamp));
    }
}

/// Returns the chat directories (`<root>/chats/<hash>/<id>`) holding the
/// store of the transcript at `path`
/// (`<root>/projects/<flat>/agent-transcripts/…/<id>.jsonl`).
fn chat_dirs_for(path: &Path, id: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let root = path
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "agent-transcripts"))
        .and_then(Path::parent)
        .and_then(Path::parent)
        .filter(|p| p.file_name().is_some_and(|n| n == "projects"))
        .and_then(Path::parent);
    let Some(root) = root else { return out };
    let Ok(rd) = std::fs::read_dir(root.join("chats")) else {
        return out;
    };
    for ws in rd.flatten() {
        let dir = ws.path().join(id);
        if dir.is_dir() {
            out.push(dir);
        }
    }
    out.sort();
    out
}

/// Returns the flattened project directory name of a transcript
/// (`Users-a-prj-foo`), when it sits in the usual place.
fn project_slug(path: &Path) -> Option<String> {
    let at = path
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "agent-transcripts"))?;
    let project = at.parent()?;
    // `projects/agent-transcripts`: a session run outside a workspace (a
    // project whose folder is `/projects` sits in `projects/projects`).
    let grandparent = project.parent().and_then(Path::file_name);
    if project.file_name()? == "projects" && grandparent.is_none_or(|n| n != "projects") {
        return None;
    }
    Some(project.file_name()?.to_string_lossy().into_owned())
}

/// Resolves a flattened cwd (`/` replaced by `-`, no leading dash) against
/// the file system: at each level, the longest run of dash-joined parts
/// that names an existing directory wins. `None` when no directory fits.
pub(in crate::cursor) fn resolve_slug(slug: &str, fs_root: &Path) -> Option<PathBuf> {
    let parts: Vec<&str> = slug.split('-').collect();
    let mut dir = fs_root.to_path_buf();
    let mut i = 0;
    while i < parts.len() {
        let mut next = None;
        for j in (i + 1..=parts.len()).rev() {
            let name = parts[i..j].join("-");
            if name.is_empty() {
                continue;
            }
            // Cursor also flattens dots in some builds; try both.
            for cand in [name.clone(), format!(".{name}")] {
                if dir.join(&cand).is_dir() {
                    next = Some((cand, j));
                    break;
                }
            }
            if next.is_some() {
                break;
            }
        }
        let (name, j) = next?;
        dir.push(name);
        i = j;
    }
    (dir != fs_root).then_some(dir)
}

/// Fills the metadata of a transcript from the chat directory with the same
/// session id (meta.json, then store.db's meta row) and, failing that, the
/// project directory name.
pub(in crate::cursor) fn enrich_transcript(
    path: &Path,
    meta: &mut SessionMeta,
    diags: &mut Vec<Diagnostic>,
) {
    let slug = project_slug(path);
    for dir in chat_dirs_for(path, &meta.id) {
        if let Some(m) = read_meta_json(&dir, diags) {
            apply(meta, &m);
            meta.extra.insert("meta_json".into(), Value::Object(m));
        }
        let db = dir.join("store.db");
        if db.is_file() {
            if let Ok(m) = super::store::read_meta_only(&db) {
                apply(meta, &m);
                meta.extra.insert("store_meta".into(), Value::Object(m));
            }
        }
    }
    if let Some(slug) = slug {
        if meta.cwd.is_none() {
            meta.cwd =
                resolve_slug(&slug, Path::new("/")).map(|p| p.to_string_lossy().into_owned());
        }
        meta.extra
            .insert("project_slug".into(), Value::String(slug));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_dashed_slugs_against_the_file_system() {
        let Ok(tmp) = tempfile::tempdir() else { return };
        let _ = std::fs::create_dir_all(tmp.path().join("home/me/my-proj/sub"));
        assert_eq!(
            resolve_slug("home-me-my-proj-sub", tmp.path()),
            Some(tmp.path().join("home/me/my-proj/sub"))
        );
        assert_eq!(resolve_slug("nowhere-at-all", tmp.path()), None);
    }

    #[test]
    fn reads_times_in_every_shape() {
        assert_eq!(timestamp(&Value::from(5)), Some(Timestamp::Millis(5)));
        assert_eq!(timestamp(&Value::from("7")), Some(Timestamp::Millis(7)));
        assert_eq!(timestamp(&Value::from("")), None);
    }
}
