//! The archive's services: keeping every session file's states before the
//! index reads them, listing and reading the sessions whose files are
//! gone, versions, restore, forget and checks.
//!
//! The archive is on by default, beside the index (see
//! [`Settings::archive_dir`]); every refresh of the index captures the
//! files it is about to read first ([`capture`]). A session whose file is
//! gone stays a session: discovery adds the gone files the archive keeps
//! ([`with_kept`]), and readers find their bytes in the archive (see
//! [`agentlog_formats::archived`]), under the path the agent wrote them
//! at.

pub use crate::kept::{attach, capture, gone, open, open_existing, with_kept, Kept};
use crate::resolve::format_named;
use crate::{ApiError, Settings};
use agentlog_archive::{Archive, Source, Version};
use agentlog_formats::discover::Found;
use agentlog_formats::registry;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The error of a command that needs the archive when it is off.
fn archive_off() -> ApiError {
    ApiError::NoArchive {
        why: "the archive is off (AGENTLOG_ARCHIVE=off)".into(),
    }
}

/// The archive of `settings`, created when missing, or an error saying it
/// is off.
fn open_on(settings: &Settings) -> Result<Archive, ApiError> {
    open(settings)?.ok_or_else(archive_off)
}

/// The archive of `settings`, or an error saying there is none.
fn require(settings: &Settings) -> Result<Archive, ApiError> {
    match settings.archive_dir() {
        None => Err(archive_off()),
        Some(dir) if dir.join(agentlog_archive::DB_NAME).is_file() => Ok(Archive::open(&dir)?),
        Some(dir) => Err(ApiError::NoArchive {
            why: format!(
                "there is no archive at {} yet (the first index makes it)",
                dir.display()
            ),
        }),
    }
}

/// What the archive knows of one session file.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Kept1 {
    /// The file, as its agent wrote it.
    pub source: Source,
    /// Every state kept, oldest first.
    pub versions: Vec<Version>,
    /// True when the file is not on disk.
    pub gone: bool,
}

/// The file `arg` (a path, id or id prefix) names, the archive holding it.
fn kept_file(
    settings: &Settings,
    archive: &Archive,
    arg: &str,
) -> Result<(Found, Kept1), ApiError> {
    let found = crate::resolve::resolve(settings, arg)?;
    // A session inside a database is kept with its database.
    let file = agentlog_formats::member::split_member(&found.path)
        .map_or_else(|| found.path.clone(), |(db, _)| db);
    let source = archive.source(&file)?.ok_or_else(|| {
        ApiError::Archive(agentlog_archive::ArchiveError::NotKept {
            path: found.path.clone(),
            version: None,
        })
    })?;
    let versions = archive.versions(&file)?;
    let gone = std::fs::symlink_metadata(&file).is_err();
    Ok((
        found,
        Kept1 {
            source,
            versions,
            gone,
        },
    ))
}

/// The versions the archive keeps of the session `arg` names.
pub fn versions(settings: &Settings, arg: &str) -> Result<(Found, Kept1), ApiError> {
    let archive = require(settings)?;
    kept_file(settings, &archive, arg)
}

/// The bytes of version `number` (the latest when `None`) of the session
/// `arg` names.
pub fn bytes(
    settings: &Settings,
    arg: &str,
    number: Option<u32>,
) -> Result<(Found, Vec<u8>), ApiError> {
    let archive = require(settings)?;
    let (found, kept) = kept_file(settings, &archive, arg)?;
    let bytes = archive.read(&kept.source.path, number)?;
    Ok((found, bytes))
}

/// Reads version `number` of the session `arg` names, as its format reads
/// it.
pub fn read_version(
    settings: &Settings,
    arg: &str,
    number: Option<u32>,
) -> Result<(Found, agentlog_formats::Read), ApiError> {
    let (found, bytes) = bytes(settings, arg, number)?;
    let format = format_named(found.format)?;
    let Some((db, id)) = agentlog_formats::member::split_member(&found.path) else {
        let read = format.read_bytes(&found.path, &bytes)?;
        return Ok((found, read));
    };
    // A state of a database is read from a private copy of it.
    let dir = tempfile::tempdir().map_err(|e| ApiError::io(&db, e))?;
    let copy = dir.path().join(db.file_name().unwrap_or(db.as_os_str()));
    std::fs::write(&copy, &bytes).map_err(|e| ApiError::io(&copy, e))?;
    let read = format.read_path(&agentlog_formats::member::member_path(&copy, &id))?;
    Ok((found, read))
}

/// What changed between two versions of a session, as a unified diff of
/// their transcripts (markdown): lines a compression or rewind removed
/// start with `-`.
pub fn diff(settings: &Settings, arg: &str, a: u32, b: u32) -> Result<String, ApiError> {
    let (found, old) = read_version(settings, arg, Some(a))?;
    let (_, new) = read_version(settings, arg, Some(b))?;
    let render = |r: &agentlog_formats::Read| agentlog_formats::render::markdown(&r.session);
    let (x, y) = (render(&old), render(&new));
    let name = found.path.display().to_string();
    Ok(similar::TextDiff::from_lines(&x, &y)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("{name} (state {a})"),
            &format!("{name} (state {b})"),
        )
        .to_string())
}

/// Puts the session `arg` names back where its agent looks (or at `to`),
/// version `number` (the latest when `None`), byte for byte; never over
/// an existing file unless `force`. Returns where it wrote and how many
/// bytes.
pub fn restore(
    settings: &Settings,
    arg: &str,
    number: Option<u32>,
    to: Option<&Path>,
    force: bool,
) -> Result<(PathBuf, u64), ApiError> {
    let archive = require(settings)?;
    let (_, kept) = kept_file(settings, &archive, arg)?;
    Ok(archive.restore(&kept.source.path, number, to, force)?)
}

/// Removes the session `arg` names from the archive for good (every
/// state) and, when its file is gone, from the index. Returns the file and
/// whether it is still on disk (then the next index reads it again).
pub fn forget(settings: &Settings, arg: &str) -> Result<(PathBuf, bool), ApiError> {
    let mut archive = require(settings)?;
    let (found, kept) = kept_file(settings, &archive, arg)?;
    if found.path != kept.source.path {
        return Err(ApiError::InDatabase {
            session: found.path,
            database: kept.source.path,
        });
    }
    archive.forget(&found.path)?;
    if kept.gone && settings.index_path.is_file() {
        // The next update sees it neither on disk nor in the archive.
        let discovered = crate::refresh::discover_full(settings)?;
        crate::refresh::update(settings, &discovered, false, &mut |_| {})?;
    }
    Ok((found.path, !kept.gone))
}

/// Checks every chunk and version of the archive.
pub fn verify(settings: &Settings) -> Result<agentlog_archive::VerifyReport, ApiError> {
    Ok(require(settings)?.verify()?)
}

/// The archive's figures; `None` when there is none.
pub fn stats(settings: &Settings) -> Result<Option<agentlog_archive::ArchiveStats>, ApiError> {
    match open_existing(settings)? {
        Some(a) => Ok(Some(a.stats()?)),
        None => Ok(None),
    }
}

/// Drops the states last seen more than `days` ago that are not their
/// file's latest, and the files gone from disk since before then (with
/// `dry_run`, only counts). Returns (states dropped, files forgotten).
pub fn prune(settings: &Settings, days: u32, dry_run: bool) -> Result<(usize, usize), ApiError> {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    Ok(require(settings)?.prune(now_ms - i64::from(days) * 86_400_000, dry_run)?)
}

/// Every file the archive keeps.
pub fn sources(settings: &Settings) -> Result<Vec<Source>, ApiError> {
    Ok(require(settings)?.sources()?)
}

/// Captures the session file at `path` now (its format detected).
pub fn capture_file(
    settings: &Settings,
    path: &Path,
) -> Result<agentlog_archive::Captured, ApiError> {
    let format = registry::detect(path)?;
    let mut archive = open_on(settings)?;
    Ok(archive.capture(path, format.name())?)
}

/// The agents whose hooks [`capture_hook`] understands, and the format
/// each one's sessions are read as.
pub const HOOK_AGENTS: [(&str, &str); 4] = [
    ("claude", "claude"),
    ("codex", "codex"),
    ("gemini", "gemini"),
    ("qwen", "qwen"),
];

/// Captures the session an agent's hook input names: a JSON object with
/// the transcript's path (`transcript_path`, as Claude Code, Gemini CLI and
/// Qwen Code give it) or the session's id (`session_id`; Codex's `notify`
/// gives `thread-id`), whose file discovery finds. Returns the file and
/// what was kept.
pub fn capture_hook(
    settings: &Settings,
    agent: &str,
    input: &str,
) -> Result<(PathBuf, agentlog_archive::Captured), ApiError> {
    let Some((_, format)) = HOOK_AGENTS.iter().find(|(a, _)| *a == agent) else {
        return Err(ApiError::UnknownAgent {
            name: agent.to_string(),
            known: HOOK_AGENTS
                .iter()
                .map(|(a, _)| *a)
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    let bad = |why: String| ApiError::HookInput {
        agent: agent.to_string(),
        why,
    };
    let v: serde_json::Value =
        serde_json::from_str(input.trim()).map_err(|e| bad(format!("not a JSON object: {e}")))?;
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| v.get(*k).and_then(serde_json::Value::as_str))
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let path = match text(&["transcript_path", "transcriptPath"]) {
        Some(p) => PathBuf::from(p),
        None => {
            let id = text(&["session_id", "sessionId", "thread-id", "thread_id"])
                .ok_or_else(|| bad("it names neither a transcript_path nor a session id".into()))?;
            let found = agentlog_formats::discover::discover_all(
                &settings.env,
                Some(&[format.to_string()]),
            );
            crate::resolve::resolve_among(&found, &id)?.path
        }
    };
    // Only a session file of that agent is kept: a hook's input names a
    // path, and what is not the agent's session stays out of the archive.
    let detected = registry::detect(&path)?;
    if detected.name() != *format {
        return Err(bad(format!(
            "{} is not a {agent} session file (it reads as {}); nothing was kept",
            path.display(),
            detected.name()
        )));
    }
    let mut archive = open_on(settings)?;
    let kept = archive.capture(&path, format)?;
    Ok((path, kept))
}

/// What scrubbing the archive's states of one file did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ScrubbedStates {
    /// Versions kept of the file.
    pub versions: usize,
    /// Versions that held secrets (rewritten unless a dry run).
    pub rewritten: usize,
    /// What was (or would be) replaced, over every version.
    pub report: agentlog_redact::Report,
}

/// Replaces every secret in every state the archive keeps of `path`, as
/// `scrub` does to the file itself (otherwise a secret scrubbed from a
/// session lives on in an older state); with `dry_run`, only reports.
/// Nothing to do when the archive does not hold the file.
pub fn scrub(settings: &Settings, path: &Path, dry_run: bool) -> Result<ScrubbedStates, ApiError> {
    let mut out = ScrubbedStates::default();
    // No archive (or it is off): nothing kept to scrub. An archive that
    // cannot be opened is an error, never skipped silently.
    let mut archive = match require(settings) {
        Ok(a) => a,
        Err(ApiError::NoArchive { .. }) => return Ok(out),
        Err(e) => return Err(e),
    };
    if !archive.holds(path)? {
        return Ok(out);
    }
    let redactor = agentlog_redact::Redactor::builtin()
        .map_err(|e| ApiError::io(path, std::io::Error::other(e.to_string())))?;
    let versions = archive.versions(path)?;
    out.versions = versions.len();
    for v in &versions {
        let bytes = archive.read_version(v.id)?;
        if let Ok((_, found)) = redactor.bytes(&bytes) {
            if !found.is_empty() {
                out.rewritten += 1;
                out.report.extend(found);
            }
        }
    }
    if !dry_run && out.rewritten > 0 {
        archive.rewrite_versions(path, &mut |b| {
            redactor.bytes(b).ok().map(|(clean, _)| clean)
        })?;
    }
    Ok(out)
}

/// An agent set to delete sessions that the archive does not hold yet.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Retention {
    /// The agent (a format name).
    pub agent: &'static str,
    /// The setting, in the agent's words, e.g. `cleanupPeriodDays = 30
    /// (the default)`.
    pub setting: String,
    /// What the agent deletes, in a few words.
    pub deletes: String,
    /// Its sessions whose current state the archive does not hold.
    pub unkept: usize,
    /// Its sessions found.
    pub sessions: usize,
}

/// Claude Code's `cleanupPeriodDays`, from its settings (30 when unset).
fn claude_retention(settings: &Settings) -> (String, String) {
    let file = crate::hooks::claude_settings(settings);
    let days = std::fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            v.get("cleanupPeriodDays")
                .and_then(serde_json::Value::as_i64)
        });
    match days {
        Some(d) => (
            format!("cleanupPeriodDays = {d} in {}", file.display()),
            format!("transcripts not written for {d} days, at its start"),
        ),
        None => (
            "cleanupPeriodDays = 30 (the default)".into(),
            "transcripts not written for 30 days, at its start".into(),
        ),
    }
}

/// Gemini CLI's session retention (`general.sessionRetention`: on, 30
/// days, by default), unless it is turned off.
fn gemini_retention(settings: &Settings) -> Option<(String, String)> {
    let file = crate::hooks::gemini_settings(settings);
    let v: serde_json::Value = std::fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let r = v.get("general").and_then(|g| g.get("sessionRetention"));
    let get = |k: &str| r.and_then(|r| r.get(k));
    if get("enabled").and_then(serde_json::Value::as_bool) == Some(false) {
        return None;
    }
    let age = get("maxAge")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("30d");
    let setting = if r.is_some() {
        format!("general.sessionRetention in {}", file.display())
    } else {
        "general.sessionRetention, on by default".to_string()
    };
    let deletes = match get("maxCount").and_then(serde_json::Value::as_i64) {
        Some(n) => {
            format!("a project's chats older than {age} or beyond the newest {n}, at its start")
        }
        None => format!("a project's chats older than {age}, and any it cannot read, at its start"),
    };
    Some((setting, deletes))
}

/// The agents set to delete sessions (Claude Code always is, by default)
/// whose sessions among `found` the archive does not hold in their current
/// state: what `doctor` and `ls` warn about. An agent whose every session
/// is kept is left out.
pub fn retention(settings: &Settings, found: &[Found]) -> Vec<Retention> {
    let held: HashMap<String, agentlog_archive::FileStat> = open_existing(settings)
        .ok()
        .flatten()
        .and_then(|a| a.sources().ok())
        .unwrap_or_default()
        .into_iter()
        .map(|s| (s.path.to_string_lossy().into_owned(), s.latest))
        .collect();
    let mut out = Vec::new();
    let mut check = |agent: &'static str, (setting, deletes): (String, String)| {
        let mine: Vec<&Found> = found.iter().filter(|f| f.format == agent).collect();
        let unkept = mine
            .iter()
            .filter(|f| {
                let now = std::fs::symlink_metadata(&f.path).ok();
                match (now, held.get(f.path.to_string_lossy().as_ref())) {
                    (None, _) => false,
                    (Some(_), None) => true,
                    (Some(m), Some(h)) => agentlog_archive::FileStat::of(&m) != *h,
                }
            })
            .count();
        if unkept > 0 {
            out.push(Retention {
                agent,
                setting,
                deletes,
                unkept,
                sessions: mine.len(),
            });
        }
    };
    check("claude", claude_retention(settings));
    if let Some(g) = gemini_retention(settings) {
        check("gemini", g);
    }
    out
}
