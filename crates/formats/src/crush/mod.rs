//! Crush sessions (`<project>/.crush/crush.db`, SQLite with a write-ahead
//! log), as Crush 0.x writes them; a session is `crush.db#<session id>`.
//!
//! - `sessions`: id, parent (a subagent's session is named by the tool
//!   call that started it), title, message count, token counts and cost
//!   (the session's, not each answer's: they go on its last answer), times
//!   in Unix seconds, and in later versions the summary message and todos.
//! - `messages`: role (`user`, `assistant`, `tool`, `system`), model and
//!   provider, times, and `parts`, a JSON list of `{type, data}`: `text`,
//!   `reasoning` (with its signature), `tool_call` (its input a JSON
//!   string), `tool_result`, `finish` (why the answer ended, and an API
//!   error's message), `image_url`, `binary`, `shell_command`; others are
//!   kept as they are.
//! - The project is the folder holding `.crush`.
//!
//! Found in the projects of Crush's `projects.json` (in
//! `$CRUSH_GLOBAL_DATA`, `$XDG_DATA_HOME/crush` or `~/.local/share/crush`) and in the
//! projects under the home directory (`~/*`, `~/*/*`). Reading only (the
//! live database belongs to the agent).

mod read;
mod validate;
mod wire;

use crate::env::DiscoverEnv;
use crate::member::{member_path, split_member};
use crate::sqlite::SQLITE_MAGIC;
use crate::{Diagnostic, Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "crush";

/// The Crush format.
pub struct CrushFormat;

/// The registry entry.
pub static FORMAT: CrushFormat = CrushFormat;

/// The databases of the projects Crush lists and of the projects under the
/// home directory.
fn databases(env: &DiscoverEnv) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // Crush's global data folder: `$CRUSH_GLOBAL_DATA`, else
    // `$XDG_DATA_HOME/crush`, else `~/.local/share/crush`.
    let global = env
        .var_path("CRUSH_GLOBAL_DATA")
        .unwrap_or_else(|| env.xdg_data_home().join("crush"));
    let list = global.join("projects.json");
    if let Some(projects) = crate::input::read_file(&list)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    {
        for p in projects
            .get("projects")
            .and_then(|p| p.as_array())
            .into_iter()
            .flatten()
        {
            let project = p.get("path").and_then(|d| d.as_str()).map(PathBuf::from);
            let dir = p
                .get("data_dir")
                .and_then(|d| d.as_str())
                .map(|d| match &project {
                    // A relative data folder is the project's.
                    Some(root) if Path::new(d).is_relative() => root.join(d),
                    _ => PathBuf::from(d),
                })
                .or_else(|| {
                    p.get("path")
                        .and_then(|d| d.as_str())
                        .map(|d| Path::new(d).join(wire::DATA_DIR))
                });
            if let Some(dir) = dir {
                out.push(dir.join(wire::DB));
            }
        }
    }
    // Projects under the home directory, two levels down (not hidden).
    let visible = |d: &PathBuf| {
        !d.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
    };
    let mut projects = vec![env.home.clone()];
    for d in crate::env::list_dirs(&env.home).into_iter().filter(visible) {
        projects.extend(crate::env::list_dirs(&d).into_iter().filter(visible));
        projects.push(d);
    }
    out.extend(
        projects
            .iter()
            .map(|p| p.join(wire::DATA_DIR).join(wire::DB)),
    );
    // Noted, so that a later database is found: a project's `.crush` (or,
    // until Crush makes it, the project) changes when one is made, and the
    // project list's folder when Crush lists a project.
    crate::env::note_dir(&global);
    for db in &out {
        if let Some(dir) = db.parent() {
            crate::env::note_dir(dir);
        }
    }
    out.retain(|p| p.is_file());
    crate::env::sort_paths(&mut out);
    out.dedup();
    out
}

impl Format for CrushFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Crush sessions (.crush/crush.db#<session id>, SQLite with WAL)"
    }

    fn agent(&self) -> Agent {
        Agent::Other("crush".into())
    }

    fn extension(&self) -> &'static str {
        "db"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if !head.starts_with(SQLITE_MAGIC) {
            return 0;
        }
        let file = split_member(path).map_or_else(|| path.to_path_buf(), |(f, _)| f);
        let named = file.file_name().is_some_and(|n| n == wire::DB);
        if named {
            return 95;
        }
        if read::has_tables(&file) {
            60
        } else {
            0
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let dbs = match env.roots_for(FORMAT_NAME) {
            Some(roots) => roots
                .iter()
                .flat_map(|r| {
                    if r.is_file() {
                        vec![r.clone()]
                    } else {
                        crate::env::walk_files(r, 3, &|p| {
                            p.file_name().is_some_and(|n| n == wire::DB)
                        })
                    }
                })
                .collect(),
            None => databases(env),
        };
        let mut out = Vec::new();
        for db in dbs {
            out.extend(self.sessions_in(&db));
        }
        out
    }

    fn sessions_in(&self, file: &Path) -> Vec<PathBuf> {
        match read::session_ids(file) {
            Ok(ids) => ids.iter().map(|id| member_path(file, id)).collect(),
            Err(e) => {
                crate::env::note_problem(e.to_diagnostic(file));
                Vec::new()
            }
        }
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        crate::sqlite::read_bytes_from_disk(path, bytes, "a Crush database", |p| self.read_path(p))
    }

    fn read_path(&self, path: &Path) -> Result<Read, FormatError> {
        let (db, id) = match split_member(path) {
            Some((db, id)) => (db, Some(id)),
            None => (path.to_path_buf(), None),
        };
        read::read(&db, id.as_deref(), path)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn drift(&self, read: &Read) -> Vec<crate::drift::Drift> {
        read::drift(read)
    }
}
