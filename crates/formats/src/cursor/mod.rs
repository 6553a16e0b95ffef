//! Cursor CLI (`cursor-agent`) sessions, from either of its two stores:
//!
//! - the chat store `~/.cursor/chats/<md5 of cwd>/<id>/store.db`: SQLite
//!   with a hex-encoded JSON `meta` row and content-addressed `blobs`, where
//!   message blobs are JSON and tree blobs are protobuf nodes that list
//!   their children by 32-byte blob id (see `read/store.rs`);
//! - the agent transcripts
//!   `~/.cursor/projects/<flattened cwd>/agent-transcripts/<id>/<id>.jsonl`
//!   (also flat `<id>.jsonl`, and subagents under `<parent>/subagents/`):
//!   one Anthropic-style message per line plus `turn_ended` lines (see
//!   `read/transcript.rs`); before them (until about February 2026), plain
//!   text `<id>.txt` with `user:`/`assistant:` turns (see `read/text.rs`),
//!   read where no JSON lines of the same id exist. Outside a workspace
//!   `cursor-agent` writes them to `projects/agent-transcripts/` itself.
//!
//! `meta.json` beside a `store.db` gives the title, cwd and model of both.
//! Its `blobEncryptionKey` is never kept: it is removed before anything is
//! stored in `extra`. Reading only.

mod read;
mod validate;
mod wire;

use crate::env::{list_dirs, walk_files, DiscoverEnv};
use crate::{Format, FormatError, Read};
use agentlog_model::Agent;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The cursor format.
pub struct CursorFormat;

/// The registry entry.
pub static FORMAT: CursorFormat = CursorFormat;

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

impl Format for CursorFormat {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn description(&self) -> &'static str {
        "Cursor CLI chat (store.db, or agent transcript JSONL or text)"
    }

    fn agent(&self) -> Agent {
        Agent::Cursor
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if head.starts_with(SQLITE_MAGIC) {
            return if path.file_name().is_some_and(|n| n == "store.db") {
                95
            } else {
                20
            };
        }
        if head.is_empty() && path.join("store.db").is_file() {
            return 80;
        }
        if read::looks_like(head) {
            if path_has_component(path, "agent-transcripts") {
                90
            } else {
                60
            }
        } else if read::looks_like_text(head) {
            // Plain text that starts with `user:` is only taken for a
            // transcript where Cursor keeps them (or when named `.txt`).
            if path_has_component(path, "agent-transcripts") {
                90
            } else if is_txt(path) {
                40
            } else {
                0
            }
        } else {
            0
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        match env.roots_for(self.name()) {
            Some(roots) => roots.iter().flat_map(|r| discover_in(r, true)).collect(),
            None => default_roots(env)
                .iter()
                .flat_map(|r| discover_in(r, false))
                .collect(),
        }
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read_bytes(path, bytes)
    }

    fn read_path(&self, path: &Path) -> Result<Read, FormatError> {
        read::read_path(path)
    }

    fn validate(&self, path: &Path) -> Result<Vec<crate::Diagnostic>, FormatError> {
        validate::validate(path)
    }
}

/// True when one of the path's components is `name`.
fn path_has_component(path: &Path, name: &str) -> bool {
    path.components().any(|c| c.as_os_str() == name)
}

/// Returns Cursor's data directories: `$CURSOR_CONFIG_DIR`, or `~/.cursor`
/// and (when it exists) `$XDG_CONFIG_HOME/cursor`, plus `~/.cursor-server`
/// on remote machines.
fn default_roots(env: &DiscoverEnv) -> Vec<PathBuf> {
    if let Some(dir) = env.var_path("CURSOR_CONFIG_DIR") {
        return vec![dir];
    }
    let mut roots = vec![env.home_join(".cursor")];
    for extra in [
        env.xdg_config_home().join("cursor"),
        env.home_join(".cursor-server"),
    ] {
        if extra.is_dir() && !roots.contains(&extra) {
            roots.push(extra);
        }
    }
    roots
}

/// Returns the sessions under one Cursor data directory: transcripts first,
/// then chat stores whose session has no transcript (one source per
/// session; the transcript is read with the store's metadata).
///
/// An explicit root (`--root cursor=…`) may also be a transcripts folder
/// or a folder of chat directories: every `*.jsonl` and `store.db` under it
/// counts.
fn discover_in(root: &Path, explicit: bool) -> Vec<PathBuf> {
    let mut transcripts = Vec::new();
    for project in list_dirs(&root.join("projects")) {
        // `projects/agent-transcripts` itself: sessions run outside a
        // workspace.
        let dir = if project
            .file_name()
            .is_some_and(|n| n == "agent-transcripts")
        {
            project
        } else {
            project.join("agent-transcripts")
        };
        crate::env::note_dir(&dir);
        if dir.is_dir() {
            transcripts.extend(newest_kind(walk_files(&dir, 3, &|p| {
                is_jsonl(p) || is_txt_transcript(p)
            })));
        }
    }
    let mut stores = Vec::new();
    for workspace in list_dirs(&root.join("chats")) {
        for chat in list_dirs(&workspace) {
            crate::env::note_dir(&chat);
            let db = chat.join("store.db");
            if db.is_file() {
                stores.push(db);
            }
        }
    }
    if explicit && transcripts.is_empty() && stores.is_empty() {
        for p in walk_files(root, 6, &|p| {
            is_jsonl(p) || p.file_name().is_some_and(|n| n == "store.db")
        }) {
            if is_jsonl(&p) {
                transcripts.push(p);
            } else {
                stores.push(p);
            }
        }
    }
    let ids: HashSet<String> = transcripts.iter().filter_map(|p| file_stem(p)).collect();
    stores.retain(|db| {
        db.parent()
            .and_then(|d| d.file_name())
            .is_none_or(|n| !ids.contains(&*n.to_string_lossy()))
    });
    transcripts.extend(stores);
    transcripts
}

fn is_jsonl(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "jsonl")
}

fn is_txt(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "txt")
}

/// A text transcript Cursor names by its session id (a UUID): other text
/// files in the folder are not taken.
fn is_txt_transcript(p: &Path) -> bool {
    is_txt(p)
        && p.file_stem()
            .and_then(|s| s.to_str())
            .is_some_and(|s| s.len() >= 8 && s.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'))
}

/// The transcripts without a plain-text one whose session also has JSON
/// lines (the newer file of the same session).
fn newest_kind(files: Vec<PathBuf>) -> Vec<PathBuf> {
    let json_ids: HashSet<String> = files
        .iter()
        .filter(|p| is_jsonl(p))
        .filter_map(|p| file_stem(p))
        .collect();
    files
        .into_iter()
        .filter(|p| !is_txt(p) || file_stem(p).is_none_or(|id| !json_ids.contains(&id)))
        .collect()
}

fn file_stem(p: &Path) -> Option<String> {
    p.file_stem().map(|s| s.to_string_lossy().into_owned())
}
