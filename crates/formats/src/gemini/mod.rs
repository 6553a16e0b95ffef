//! Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.json[l]`).
//!
//! # Reading
//!
//! Both eras are read:
//!
//! - the legacy single object `session-*.json`
//!   (`{sessionId, projectHash, startTime, lastUpdated, messages[], …}`):
//!   one entry per message, the top-level fields kept in `meta.extra`;
//! - the current append-only `session-*.jsonl` event log: one entry per line.
//!   Metadata lines and `$set` patches are events merged into the metadata;
//!   a message record re-appended with the same `id` replaces the earlier
//!   version at the earlier position (the earlier line stays as a
//!   `superseded` event, so its tokens are not counted twice); `$set.messages`
//!   is a checkpoint that clears the conversation and rebuilds it from the
//!   messages it holds (a new root), except after a compression: a
//!   checkpoint holding a summary the CLI's model acknowledged (`Got it.
//!   Thanks for the additional context!`) goes on from the conversation
//!   under a compaction entry with that summary (both messages marked
//!   injected), and later checkpoints holding the same summary go on from
//!   that compaction, so the compressed turns stay on the active branch, as
//!   they do for Claude Code and pi; `$rewindTo` drops that message and
//!   everything after it (an unknown id drops everything), which leaves the
//!   dropped part as a side branch. The active branch (root to leaf) is the
//!   conversation the CLI would load.
//!
//! Message records: `user` -> user, `gemini` -> assistant, `info`, `error`
//! and `warning` -> system notices (the type stays in the extras). `thoughts`
//! become thinking blocks (`**subject**` then the description), `toolCalls`
//! tool-call blocks each followed by a tool-result block made from its
//! `functionResponse` output (or error). A user message opening with
//! `<session_context>` is marked injected (`session_context`), as is the CLI's
//! `System: Please continue.` nudge (`continuation`).
//!
//! Tokens: Gemini's `input` includes `cached` and its `output` excludes
//! `thoughts`, so `Usage::input = input - cached + tool`,
//! `cache_read = cached`, `output = output + thoughts`,
//! `reasoning = thoughts`, `total = total`.
//!
//! The cwd comes from the `.project_root` file of the project directory
//! (slug-named directories since v0.30), else the first of `directories`. A
//! subagent chat (`kind: "subagent"`, in `chats/<parentSessionId>/`) names its
//! parent in `meta.parent_session`.
//!
//! # Writing
//!
//! A session read from Gemini is written back as it was read: line for line
//! for `.jsonl` (`$set` and `$rewindTo` lines included), the same object for
//! `.json`. A session from another format becomes a current-era `.jsonl`
//! (metadata line, then `user`/`gemini`/`info` records with thoughts,
//! tokens, model and tool calls whose results are folded in) of the active
//! branch, with a [`Fidelity`] report of the rest.

mod read;
mod validate;
mod wire;
mod write;

use crate::env::{list_dirs, walk_files, DiscoverEnv};
use crate::{Fidelity, Format, FormatError, Read, ResumePlan};
use agentlog_model::{Agent, Session};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "gemini";
/// `SessionMeta::format_version` of legacy single-object files.
const JSON: &str = "json";
/// `SessionMeta::format_version` of event-log files.
const JSONL: &str = "jsonl";
/// Key in `meta.extra` of a `.json` file that had no `messages` array.
const NO_MESSAGES: &str = "$no_messages";

/// The gemini format.
pub struct GeminiFormat;

/// The registry entry.
pub static FORMAT: GeminiFormat = GeminiFormat;

/// Returns the session id a session has as a Gemini chat: its id when that
/// is a UUID, otherwise a UUID derived from it (the same every time).
pub fn gemini_session_id(session: &Session) -> String {
    let id = &session.meta.id;
    if uuid::Uuid::parse_str(id).is_ok() {
        return id.clone();
    }
    crate::ids::stable_uuid(id).to_string()
}

/// The chat file of the session `id` in Gemini CLI's store under `env`
/// (`tmp/<project>/chats/session-<time>-<id8>.json[l]` whose first 4 KiB
/// name the session), if there is one.
pub(crate) fn chat_path(env: &DiscoverEnv, id: &str) -> Option<PathBuf> {
    let short: String = id.chars().take(8).collect();
    let names_it = |p: &Path| {
        use std::io::Read as _;
        let mut head = Vec::new();
        crate::input::open_file(p).is_ok_and(|(f, _)| f.take(4096).read_to_end(&mut head).is_ok())
            && String::from_utf8_lossy(&head).contains(&format!("\"sessionId\":\"{id}\""))
    };
    list_dirs(&gemini_dir(env).join("tmp"))
        .into_iter()
        .find_map(|project| {
            std::fs::read_dir(project.join("chats"))
                .ok()?
                .flatten()
                .map(|e| e.path())
                .find(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with("session-")
                            && (n.ends_with(&format!("-{short}.jsonl"))
                                || n.ends_with(&format!("-{short}.json")))
                    }) && names_it(p)
                })
        })
}

/// Returns `~/.gemini`, with `$GEMINI_CLI_HOME` in place of `~`.
pub fn gemini_dir(env: &DiscoverEnv) -> PathBuf {
    env.var_path("GEMINI_CLI_HOME")
        .unwrap_or_else(|| env.home.clone())
        .join(".gemini")
}

/// Returns the project slug Gemini CLI (v0.30+) derives from a path's last
/// component: lowercased, runs of characters other than `a-z0-9` turned into
/// one `-`, no `-` at either end, `project` when nothing is left.
pub fn project_slug(cwd: &str) -> String {
    let base = Path::new(cwd)
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut slug = String::new();
    for c in base.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-').to_string();
    if slug.is_empty() {
        "project".into()
    } else {
        slug
    }
}

/// Returns the project directory under `<gemini dir>/tmp` for `cwd`: the
/// one whose `.project_root` names `cwd`, else the sha256-named one when it
/// exists, else the first free slug (`<slug>`, `<slug>-1`, …) whose
/// `.project_root` is missing or names `cwd`.
pub fn project_dir(env: &DiscoverEnv, cwd: &str) -> PathBuf {
    let tmp = gemini_dir(env).join("tmp");
    for dir in list_dirs(&tmp) {
        if read_marker(&dir).as_deref() == Some(cwd) {
            return dir;
        }
    }
    let hashed = tmp.join(write::project_hash(cwd));
    if hashed.is_dir() {
        return hashed;
    }
    let slug = project_slug(cwd);
    for n in 0.. {
        let name = if n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        };
        let dir = tmp.join(&name);
        match read_marker(&dir) {
            Some(owner) if owner != cwd => continue,
            _ => return dir,
        }
    }
    tmp.join(slug)
}

fn read_marker(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join(".project_root"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Writes the `.project_root` marker that ties a slug project directory to
/// its path, unless it is there already. Gemini CLI finds the chats of a
/// project through this marker, so a caller that writes a session to a
/// [`ResumePlan`] path in a new project directory calls this for the
/// directory above `chats/`.
///
/// The marker is created new (0600, in directories created 0700): a file,
/// or a symbolic link, already at its name is left as it is.
pub fn write_project_root(project_dir: &Path, cwd: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut dirs = std::fs::DirBuilder::new();
    dirs.recursive(true);
    let mut file = std::fs::OpenOptions::new();
    file.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        dirs.mode(0o700);
        file.mode(0o600);
    }
    dirs.create(project_dir)?;
    let marker = project_dir.join(".project_root");
    match file.open(&marker) {
        Ok(mut f) => f.write_all(cwd.as_bytes()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Drops the header-only files Gemini CLI leaves beside a chat it continues
/// in a later minute (`session-<later minute>-<same id8>.jsonl` holding only
/// the metadata line and its injected session context), so one session is listed once. A header-only file
/// with no sibling of the same id is kept.
fn without_header_only_siblings(files: Vec<PathBuf>) -> Vec<PathBuf> {
    fn key(p: &Path) -> Option<(PathBuf, String)> {
        let stem = p.file_stem()?.to_str()?;
        let id8 = stem.rsplit('-').next()?;
        Some((p.parent()?.to_path_buf(), id8.to_owned()))
    }
    /// Nothing of the conversation: the metadata line, and at most a
    /// `$set` whose messages are the CLI's injected session context.
    fn header_only(p: &Path) -> bool {
        if p.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            return false;
        }
        let Ok(meta) = std::fs::metadata(p) else {
            return false;
        };
        if meta.len() > 256 * 1024 {
            return false;
        }
        let Ok(text) = std::fs::read_to_string(p) else {
            return false;
        };
        let injected_only = |m: &serde_json::Value| {
            m.get("type").and_then(serde_json::Value::as_str) == Some("user")
                && m.get("content")
                    .and_then(serde_json::Value::as_array)
                    .is_some_and(|parts| {
                        parts.iter().all(|p| {
                            p.get("text")
                                .and_then(serde_json::Value::as_str)
                                .is_some_and(|t| t.trim_start().starts_with("<session_context>"))
                        })
                    })
        };
        let mut saw_header = false;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                return false;
            };
            if v.get("sessionId").is_some() && v.get("projectHash").is_some() {
                if v.get("messages").is_some() {
                    return false;
                }
                saw_header = true;
            } else if let Some(set) = v.get("$set") {
                let quiet = match set.get("messages") {
                    Some(serde_json::Value::Array(ms)) => ms.iter().all(injected_only),
                    Some(_) => false,
                    None => true,
                };
                if !quiet {
                    return false;
                }
            } else {
                return false;
            }
        }
        saw_header
    }
    let mut count: std::collections::HashMap<(PathBuf, String), usize> =
        std::collections::HashMap::new();
    for f in &files {
        if let Some(k) = key(f) {
            *count.entry(k).or_default() += 1;
        }
    }
    files
        .into_iter()
        .filter(|f| {
            let shared = key(f).is_some_and(|k| count.get(&k).copied().unwrap_or(0) > 1);
            !(shared && header_only(f))
        })
        .collect()
}

fn is_chat(p: &Path) -> bool {
    let ext = p.extension().and_then(|e| e.to_str());
    if !matches!(ext, Some("json" | "jsonl")) {
        return false;
    }
    let in_chats = p
        .ancestors()
        .skip(1)
        .take(2)
        .any(|a| a.file_name().is_some_and(|n| n == "chats"));
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    in_chats && (name.starts_with("session-") || ext == Some("jsonl"))
}

impl Format for GeminiFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Gemini CLI chat (session-*.json or .jsonl)"
    }

    fn agent(&self) -> Agent {
        Agent::Gemini
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if head.is_empty() {
            return 0;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let named =
            name.starts_with("session-") && (name.ends_with(".json") || name.ends_with(".jsonl"));
        if let Some(v) = crate::jsonl::first_value(head) {
            if v.get("sessionId").is_some() && v.get("projectHash").is_some() {
                return 90;
            }
            if v.get("$set").is_some() || v.get("$rewindTo").is_some() {
                return 70;
            }
        }
        let text = crate::jsonl::head_text(head, 4096);
        let t = text.trim_start();
        if t.starts_with('{') && t.contains("\"sessionId\"") && t.contains("\"projectHash\"") {
            return 85;
        }
        if named {
            60
        } else {
            0
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let files: Vec<PathBuf> = if let Some(roots) = env.roots_for(FORMAT_NAME) {
            roots
                .iter()
                .flat_map(|r| walk_files(r, 5, &is_chat))
                .collect()
        } else {
            let tmp = gemini_dir(env).join("tmp");
            list_dirs(&tmp)
                .into_iter()
                .flat_map(|project| walk_files(&project.join("chats"), 1, &is_chat))
                .collect()
        };
        without_header_only_siblings(files)
    }

    fn drift(&self, read: &Read) -> Vec<crate::drift::Drift> {
        read::drift(read)
    }

    fn session_kind(&self, _path: &Path, session: &Session) -> agentlog_model::SessionKind {
        read::session_kind(session)
    }

    fn validate(&self, path: &Path) -> Result<Vec<crate::Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read(path, bytes)
    }

    /// Returns `~/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`
    /// (UTC, as Gemini CLI names its files; the project directory from
    /// [`project_dir`]) and `cd <cwd> && gemini --resume <sessionId>`. The
    /// caller writes the session file and, for a new project directory, the
    /// `.project_root` marker with [`write_project_root`].
    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        let id = gemini_session_id(session);
        let start = session
            .meta
            .created_at
            .as_ref()
            .and_then(|t| t.to_utc())
            .unwrap_or_else(chrono::Utc::now);
        let cwd = session.meta.cwd.clone().unwrap_or_default();
        let dir = project_dir(env, &cwd);
        let short: String = id.chars().take(8).collect();
        let path = dir.join("chats").join(crate::safe_path::component(&format!(
            "session-{}-{short}.jsonl",
            start.format("%Y-%m-%dT%H-%M"),
        )));
        crate::safe_path::inside(&gemini_dir(env).join("tmp"), &path)?;
        let command = format!("gemini --resume {id}");
        Ok(ResumePlan {
            path,
            command,
            cwd: (!cwd.is_empty()).then(|| PathBuf::from(cwd)),
        })
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }
}
