//! Secrets in sessions: finding them everywhere (`agentlog scan`) and
//! rewriting one session without them (`agentlog scrub`).
//!
//! Findings never hold a secret, only its kind, where it is and a short
//! fingerprint. A scrub keeps the original as a private backup beside the
//! file, writes the new file atomically, and refuses when the result would
//! read worse than the original or the file changed meanwhile. A session
//! stored as a folder of files (an OpenHands conversation) is scrubbed
//! file by file, each changed file replaced atomically, the originals of
//! those kept in a backup folder beside it.
//!
//! ```
//! use agentlog_api::secrets::{scan, ScanParams};
//! use agentlog_api::Settings;
//! # let home = tempfile::tempdir()?;
//! # agentlog_api::example::write_claude_session(home.path())?;
//! let settings = Settings::with_home(home.path());
//! let found = scan(&settings, &ScanParams::default())?;
//! assert_eq!(found.scanned, 1);
//! assert!(found.findings.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::list::{par_map, read_found};
use crate::{ApiError, Settings};
use agentlog_formats::discover::{discover_report, Found};
use agentlog_formats::{registry, Format, Read, Severity, Written};
use agentlog_redact::{Finding, Redactor, Report};
use agentlog_store::snapshot::{create_private, write_atomic, write_folder, Existing};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What to scan.
#[derive(Debug, Clone, Default)]
pub struct ScanParams {
    /// Session files, ids or id prefixes; empty: every session found.
    pub sessions: Vec<String>,
    /// Only these agents (when scanning everything).
    pub agents: Vec<String>,
}

/// One secret found.
#[derive(Debug, Clone, Serialize)]
pub struct Leak {
    /// The detector that found it (`anthropic-api-key`, `jwt`, …).
    pub kind: String,
    /// The session's id.
    pub session: String,
    /// The session's agent.
    pub agent: String,
    /// The session file.
    pub path: PathBuf,
    /// The entry it is in, when in one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// The field (`content[0].text`, `meta.title`, …).
    pub field: String,
    /// A short fingerprint of the secret (never the secret).
    pub fingerprint: String,
}

/// What a scan found.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Every secret found.
    pub findings: Vec<Leak>,
    /// How many sessions were scanned.
    pub scanned: usize,
    /// Files that could not be read, and places discovery could not look.
    pub warnings: Vec<String>,
}

fn leaks(path: &Path, read: &Read, r: &Redactor) -> Vec<Leak> {
    let s = &read.session;
    r.scan_session(s)
        .findings
        .into_iter()
        .map(|f: Finding| Leak {
            kind: f.kind,
            session: s.meta.id.clone(),
            agent: s.meta.agent.to_string(),
            path: path.to_path_buf(),
            entry: f.location.entry,
            field: f.location.field,
            fingerprint: f.fingerprint,
        })
        .collect()
}

/// The secrets in the subagent sessions kept beside the session file at
/// `path` of `format` (Claude Code's `<session>/subagents/agent-*.jsonl`,
/// which its pages show inside the calls that started them), each named
/// by its own file; and the subagent files that could not be read.
fn subagent_leaks(path: &Path, format: &str, r: &Redactor) -> (Vec<Leak>, Vec<String>) {
    let (mut leaks_found, mut warnings) = (Vec::new(), Vec::new());
    if format != "claude" {
        return (leaks_found, warnings);
    }
    for (f, read) in agentlog_formats::claude::read_subagents(path) {
        match read {
            Ok(read) => leaks_found.extend(leaks(&f, &read, r)),
            Err(e) => warnings.push(format!("{}: {e}", f.display())),
        }
    }
    (leaks_found, warnings)
}

/// Lists the secrets in the sessions `params` names (all of them when it
/// names none) and in their subagents' sessions, reading files in
/// parallel.
pub fn scan(settings: &Settings, params: &ScanParams) -> Result<Scan, ApiError> {
    let redactor = Redactor::builtin().map_err(redact_error)?;
    let mut out = Scan::default();
    if params.sessions.is_empty() {
        let formats = settings.formats(&params.agents)?;
        let report = discover_report(&settings.env, Some(&formats));
        out.warnings
            .extend(report.diagnostics.iter().map(ToString::to_string));
        let results = par_map(&report.found, &|_, _| {}, |f: &Found| {
            read_found(f).map(|read| {
                let (subs, warnings) = subagent_leaks(&f.path, f.format, redactor);
                let mut found = leaks(&f.path, &read, redactor);
                found.extend(subs);
                (found, warnings)
            })
        });
        out.scanned = report.found.len();
        for (f, r) in report.found.iter().zip(results) {
            match r {
                Some(Ok((mut rs, mut ws))) => {
                    out.findings.append(&mut rs);
                    out.warnings.append(&mut ws);
                }
                Some(Err(e)) => out.warnings.push(e.to_string()),
                None => out.warnings.push(format!(
                    "{}: the {} reader failed on this file; please report it",
                    f.path.display(),
                    f.format
                )),
            }
        }
    } else {
        out.scanned = params.sessions.len();
        for arg in &params.sessions {
            let (path, format, read) = crate::resolve::read(settings, arg, None)?;
            out.findings.extend(leaks(&path, &read, redactor));
            let (subs, mut warnings) = subagent_leaks(&path, format.name(), redactor);
            out.findings.extend(subs);
            out.warnings.append(&mut warnings);
        }
    }
    Ok(out)
}

/// What [`scrub`] did.
#[derive(Debug, Clone, Serialize)]
pub struct Scrubbed {
    /// The session file.
    pub path: PathBuf,
    /// Its format.
    pub format: &'static str,
    /// True when the file was rewritten.
    pub written: bool,
    /// The original, kept beside the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup: Option<PathBuf>,
    /// What was replaced.
    pub report: Report,
    /// Secrets found in the rewritten session that could not be rewritten
    /// in place.
    pub remaining: Report,
    /// The files the session reads beside its own that held secrets
    /// (Claude Code's persisted tool outputs), each scrubbed as text.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub beside: Vec<ScrubbedBeside>,
}

/// A file read with a session, scrubbed with it.
#[derive(Debug, Clone, Serialize)]
pub struct ScrubbedBeside {
    /// The file.
    pub path: PathBuf,
    /// Its original, kept beside it (none in a dry run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup: Option<PathBuf>,
    /// What was replaced.
    pub report: Report,
}

/// Copies `bytes`, the original of `path`, to a private backup beside it;
/// returns the backup's path.
fn keep_backup(path: &Path, bytes: &[u8]) -> Result<PathBuf, ApiError> {
    let b = backup_path(path);
    let mut f = create_private(&b)?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| ApiError::io(&b, e))?;
    Ok(b)
}

/// Rewrites the session file at `path` (read as `from`, or detected) with
/// every secret replaced, keeping the original in a private backup beside
/// it; with `dry_run`, only reports. Refuses, changing nothing, when the
/// result would read with more errors or fewer entries than the original,
/// or when the file changes while being scrubbed.
pub fn scrub(path: &Path, from: Option<&str>, dry_run: bool) -> Result<Scrubbed, ApiError> {
    let refuse = |message: String| ApiError::io(path, std::io::Error::other(message));
    let not_a_session = || {
        refuse(
            "not a session file (scrub rewrites one session; a scan finds the sessions with secrets)"
                .into(),
        )
    };
    // Replacing a link with a clean file would leave the secrets in the
    // file it points to, and say they are gone.
    refuse_link(path)?;
    let format = match from {
        Some(name) => crate::resolve::format_named(name)?,
        None if path.is_dir() => registry::detect(path).map_err(|_| not_a_session())?,
        None => registry::detect(path)?,
    };
    if let Some(folder) = format.session_folder(path) {
        return scrub_folder(format, path, &folder, dry_run);
    }
    if !path.is_file() {
        return Err(not_a_session());
    }
    let before = std::fs::metadata(path).map_err(|e| ApiError::io(path, e))?;
    let bytes = agentlog_formats::input::read_file(path)?;
    let redactor = Redactor::builtin().map_err(redact_error)?;
    let (scrubbed, report) = redactor
        .bytes(&bytes)
        .map_err(|e| refuse(format!("cannot scrub: {e}")))?;
    // The scrubbed file must read as well as the original did.
    let (old_errors, old_entries) = errors(format, path, &bytes)?;
    let (new_errors, new_entries) = errors(format, path, &scrubbed)?;
    if new_errors > old_errors || new_entries != old_entries {
        return Err(refuse(format!(
            "the scrubbed file would not read back as {} ({new_errors} errors instead of {old_errors}, {new_entries} entries instead of {old_entries}); nothing changed",
            format.name()
        )));
    }
    // The persisted tool outputs the session reads (text files): each
    // scrubbed as text, kept and replaced atomically before the session.
    let mut beside = Vec::new();
    let outputs = if format.name() == "claude" {
        agentlog_formats::claude::persisted_outputs(path)
    } else {
        Vec::new()
    };
    let unchanged = |done: &[ScrubbedBeside]| -> Result<(), ApiError> {
        let now = std::fs::metadata(path).map_err(|e| ApiError::io(path, e))?;
        if now.len() != before.len() || now.modified().ok() != before.modified().ok() {
            let mut message =
                "changed while being scrubbed (is an agent writing it?); the session file was left as it was"
                    .to_string();
            if done.is_empty() {
                message.push_str(", nothing changed");
            }
            for b in done {
                message.push_str(&format!(
                    "; its tool output {} was scrubbed (the original is in {})",
                    b.path.display(),
                    b.backup.as_deref().unwrap_or(Path::new("?")).display()
                ));
            }
            return Err(refuse(message));
        }
        Ok(())
    };
    // What each output would become, before anything is written.
    let mut planned = Vec::new();
    for f in outputs {
        refuse_link(&f)?;
        let Ok(original) = std::fs::read(&f) else {
            continue;
        };
        // A file that is not text is not one the reader shows.
        let Ok((clean, found)) = redactor.bytes(&original) else {
            continue;
        };
        if !found.is_empty() {
            planned.push((f, original, clean, found));
        }
    }
    if !dry_run && !planned.is_empty() {
        unchanged(&beside)?;
    }
    for (f, original, clean, found) in planned {
        let mut backup = None;
        if !dry_run {
            backup = Some(keep_backup(&f, &original)?);
            write_atomic(&f, &clean)?;
        }
        beside.push(ScrubbedBeside {
            path: f,
            backup,
            report: found,
        });
    }
    let mut remaining = redactor.scan_session(&format.read_bytes(path, &scrubbed)?.session);
    if dry_run {
        // What the outputs hold would be gone.
        let gone: std::collections::HashSet<&str> = beside
            .iter()
            .flat_map(|b| b.report.findings.iter().map(|f| f.fingerprint.as_str()))
            .collect();
        remaining
            .findings
            .retain(|f| !gone.contains(f.fingerprint.as_str()));
    }
    let write = !report.is_empty() && !dry_run;
    let mut backup = None;
    if write {
        unchanged(&beside)?;
        backup = Some(keep_backup(path, &bytes)?);
        write_atomic(path, &scrubbed)?;
    }
    Ok(Scrubbed {
        path: path.to_path_buf(),
        format: format.name(),
        written: write,
        backup,
        report,
        remaining,
        beside,
    })
}

/// [`scrub`] of a session stored as the folder `folder`, named by `path`
/// (the folder or something in it): each of the session's own files
/// ([`Format::is_session_file`]; nothing else in the folder is read or
/// changed) scrubbed as text, the result read back from a hidden copy
/// beside the folder as well as the original reads, the originals of the
/// files that change kept in a backup folder beside it, and each of those
/// files replaced atomically (every file valid at every moment; a file an
/// agent adds meanwhile is left alone).
fn scrub_folder(
    format: &'static dyn Format,
    path: &Path,
    folder: &Path,
    dry_run: bool,
) -> Result<Scrubbed, ApiError> {
    let refuse = |message: String| ApiError::io(folder, std::io::Error::other(message));
    let files = session_files(format, folder, Path::new(""))?;
    if files.is_empty() {
        return Err(refuse(format!("holds no {} session files", format.name())));
    }
    let redactor = Redactor::builtin().map_err(redact_error)?;
    let mut report = Report::default();
    let mut scrubbed = Vec::new();
    for (rel, bytes) in &files {
        let (new, mut found) = redactor
            .bytes(bytes)
            .map_err(|e| refuse(format!("cannot scrub {}: {e}", rel.display())))?;
        for f in &mut found.findings {
            f.location.field = match f.location.field.as_str() {
                "" => rel.display().to_string(),
                field => format!("{}: {field}", rel.display()),
            };
        }
        report.extend(found);
        scrubbed.push((rel.clone(), new));
    }
    // The session as read from the folder it is in, `path` inside it.
    let path = std::path::absolute(path).map_err(|e| ApiError::io(path, e))?;
    let inside = path.strip_prefix(folder).unwrap_or(Path::new(""));
    let read = |dir: &Path| -> Result<(usize, usize, Read), ApiError> {
        let read = format.read_path(&dir.join(inside))?;
        let errors = read
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        Ok((errors, read.session.entries.len(), read))
    };
    let (old_errors, old_entries, _) = read(folder)?;
    let name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = folder.parent().unwrap_or(Path::new("."));
    // (removed when dropped)
    let check = tempfile::Builder::new()
        .prefix(&format!(".{name}.agentlog-check-"))
        .tempdir_in(parent)
        .map_err(|e| ApiError::io(parent, e))?;
    Written::Folder(scrubbed.clone())
        .write_plain(check.path())
        .map_err(|e| ApiError::io(check.path(), e))?;
    let (new_errors, new_entries, back) = read(check.path())?;
    drop(check);
    if new_errors > old_errors || new_entries != old_entries {
        return Err(refuse(format!(
            "the scrubbed folder would not read back as {} ({new_errors} errors instead of {old_errors}, {new_entries} entries instead of {old_entries}); nothing changed",
            format.name()
        )));
    }
    let remaining = redactor.scan_session(&back.session);
    let write = !report.is_empty() && !dry_run;
    let mut backup = None;
    if write {
        let changed: Vec<usize> = (0..files.len())
            .filter(|&i| files[i].1 != scrubbed[i].1)
            .collect();
        for &i in &changed {
            let p = folder.join(&files[i].0);
            if agentlog_formats::input::read_file(&p)? != files[i].1 {
                return Err(refuse(format!(
                    "{} changed while being scrubbed (is an agent writing it?); nothing changed",
                    files[i].0.display()
                )));
            }
        }
        let b = backup_path(folder);
        let originals: Vec<(PathBuf, Vec<u8>)> =
            changed.iter().map(|&i| files[i].clone()).collect();
        write_folder(&b, &originals, Existing::Refuse)?;
        for &i in &changed {
            write_atomic(&folder.join(&scrubbed[i].0), &scrubbed[i].1)?;
        }
        backup = Some(b);
    }
    Ok(Scrubbed {
        path: folder.to_path_buf(),
        format: format.name(),
        written: write,
        backup,
        report,
        remaining,
        beside: Vec::new(),
    })
}

/// The session's own files under `dir` (at `rel` inside the session's
/// folder), sorted, with their bytes; other files and folders are passed
/// over, and so is anything that is not a plain file or folder.
fn session_files(
    format: &dyn Format,
    dir: &Path,
    rel: &Path,
) -> Result<Vec<(PathBuf, Vec<u8>)>, ApiError> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| ApiError::io(dir, e))? {
        let e = e.map_err(|e| ApiError::io(dir, e))?;
        let p = e.path();
        let t = e.file_type().map_err(|e| ApiError::io(&p, e))?;
        let r = rel.join(e.file_name());
        if t.is_dir() {
            out.extend(session_files(format, &p, &r)?);
        } else if t.is_file() && format.is_session_file(&r) {
            out.push((r, agentlog_formats::input::read_file(&p)?));
        } else if t.is_symlink() && format.is_session_file(&r) {
            refuse_link(&p)?;
        }
    }
    out.sort();
    Ok(out)
}

/// Refuses a `path` that is a symbolic link: scrub replaces a file, and a
/// link replaced by a clean file leaves the secrets where it pointed.
fn refuse_link(path: &Path) -> Result<(), ApiError> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_symlink() {
        return Ok(());
    }
    let target = std::fs::read_link(path)
        .map(|t| format!(" to {}", t.display()))
        .unwrap_or_default();
    Err(ApiError::io(
        path,
        std::io::Error::other(format!(
            "is a symbolic link{target}; scrub replaces files and would leave the secrets in the file the link points to: scrub that file itself; nothing changed"
        )),
    ))
}

fn redact_error(e: agentlog_redact::RedactError) -> ApiError {
    ApiError::io("redaction rules", std::io::Error::other(e.to_string()))
}

/// The error diagnostics and entries of `bytes` read as `format`.
fn errors(format: &dyn Format, path: &Path, bytes: &[u8]) -> Result<(usize, usize), ApiError> {
    let read = format.read_bytes(path, bytes)?;
    let errors = read
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    Ok((errors, read.session.entries.len()))
}

/// `<file>.agentlog-backup-<time>`, numbered when taken.
fn backup_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stamp = chrono::Utc::now().format("%Y-%m-%dT%H-%M-%SZ");
    let mark = agentlog_formats::discover::BACKUP_MARK;
    let mut p = path.with_file_name(format!("{name}{mark}{stamp}"));
    let mut n = 1;
    while p.symlink_metadata().is_ok() {
        n += 1;
        p = path.with_file_name(format!("{name}{mark}{stamp}-{n}"));
    }
    p
}
