//! Writing HTML exports to files (`agentlog export --to html`): one
//! self-contained page per session, an index page for several, redaction
//! on unless asked otherwise, and never over a file that is not one of
//! agentlog's own HTML exports.

use crate::{export_index, Exported};
use agentlog_index::SessionInfo;
use agentlog_model::Session;
use agentlog_redact::Redactor;
use agentlog_store::snapshot::{write_file_durable, Durable, Existing};
use std::io::Write;
use std::path::{Path, PathBuf};

/// How every page agentlog writes starts: what marks a file as its own.
const OURS: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">";

/// Errors of writing exports.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A file is in the way that agentlog did not write.
    #[error("{}: exists and is not an HTML export of agentlog; not overwriting it", .0.display())]
    Foreign(PathBuf),
    /// Reading a session failed.
    #[error(transparent)]
    Format(#[from] agentlog_formats::FormatError),
    /// Reading a session of the catalog failed.
    #[error(transparent)]
    Index(#[from] agentlog_index::IndexError),
    /// Writing failed.
    #[error(transparent)]
    Store(#[from] agentlog_store::StoreError),
    /// The redaction rules failed to load.
    #[error("redaction rules: {0}")]
    Redact(String),
    /// A folder could not be made.
    #[error("{}: {source}", path.display())]
    Io {
        /// The folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Returns an error unless `path` is free or one of agentlog's own HTML
/// exports (which are replaced).
pub fn refuse_foreign(path: &Path) -> Result<(), ExportError> {
    // Only a regular file is opened to look: opening a FIFO would wait for
    // a writer forever, and a device is never ours.
    match std::fs::metadata(path) {
        Err(_) => return Ok(()),
        Ok(m) if !m.is_file() => return Err(ExportError::Foreign(path.to_path_buf())),
        Ok(_) => {}
    }
    match std::fs::File::open(path) {
        Err(_) => Ok(()),
        Ok(mut f) => {
            let mut head = vec![0u8; OURS.len()];
            let ours =
                std::io::Read::read_exact(&mut f, &mut head).is_ok() && head == OURS.as_bytes();
            if ours {
                Ok(())
            } else {
                Err(ExportError::Foreign(path.to_path_buf()))
            }
        }
    }
}

fn redactor(redact: bool) -> Result<Option<&'static Redactor>, ExportError> {
    if !redact {
        return Ok(None);
    }
    Redactor::builtin()
        .map(Some)
        .map_err(|e| ExportError::Redact(e.to_string()))
}

/// Renders one session as a page (redacted unless `redact` is false;
/// `shown` is the path printed on the page); returns the page and how many
/// secrets were replaced.
pub fn session_page(
    session: &mut Session,
    shown: &str,
    redact: bool,
) -> Result<(String, agentlog_redact::Report), ExportError> {
    session_page_with(session, &mut [], shown, redact)
}

/// Renders one session as [`session_page`] does, with its subagents'
/// sessions (file, session: see [`read_subagents`]) inside the calls that
/// started them, redacted as the session is. What no page shows is dropped
/// from the sessions first ([`crate::render::keep_shown`]), so only what
/// the page can show is searched for secrets.
pub fn session_page_with(
    session: &mut Session,
    subagents: &mut [(String, Session)],
    shown: &str,
    redact: bool,
) -> Result<(String, agentlog_redact::Report), ExportError> {
    // A page is written to be shared: it names the session's file, not
    // where it is on this machine (`/home/<user>/.claude/projects/…`).
    let mut shown = last_part(shown);
    let mut report = agentlog_redact::Report::default();
    crate::render::keep_shown(session);
    for (_, sub) in subagents.iter_mut() {
        crate::render::keep_shown(sub);
    }
    if let Some(r) = redactor(redact)? {
        report = r.session(session);
        for (path, sub) in subagents.iter_mut() {
            report.extend(r.session(sub));
            r.text(path, "path");
        }
        r.text(&mut shown, "path");
    }
    Ok((
        crate::pages::export_session_with(session, &shown, subagents),
        report,
    ))
}

/// The last part of the path `shown` (a member of a multi-session file
/// keeps its `#member`).
fn last_part(shown: &str) -> String {
    shown
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(shown)
        .to_string()
}

/// Reads the subagent sessions kept beside the session file at `path` on
/// this machine (Claude Code's `<session>/subagents/agent-*.jsonl`; none
/// for other formats); a file that cannot be read is left out.
pub fn read_subagents(path: &Path, format: &str) -> Vec<(String, Session)> {
    if format != "claude" {
        return Vec::new();
    }
    agentlog_formats::claude::read_subagents(path)
        .into_iter()
        .filter_map(|(f, read)| Some((f.to_string_lossy().into_owned(), read.ok()?.session)))
        .collect()
}

/// Writes `html` at `path` (replacing only agentlog's own export there).
pub fn write_page(path: &Path, html: &str) -> Result<(), ExportError> {
    write_page_durable(path, html, Durable::Now)
}

/// [`write_page`], synced now or with the others of an export at its end.
fn write_page_durable(path: &Path, html: &str, durable: Durable) -> Result<(), ExportError> {
    refuse_foreign(path)?;
    write_file_durable(path, Existing::Replace, durable, |w: &mut dyn Write| {
        w.write_all(html.as_bytes())
            .map_err(|e| agentlog_store::StoreError::io(path, "write", e))
    })?;
    Ok(())
}

/// What [`export_all`] wrote.
#[derive(Debug, Default)]
pub struct AllExported {
    /// The index page.
    pub index: PathBuf,
    /// The pages written, as the index lists them.
    pub pages: Vec<Exported>,
    /// Sessions that could not be exported, with why.
    pub failed: Vec<String>,
    /// Secrets replaced, in all.
    pub secrets: usize,
    /// Sessions that had secrets.
    pub with_secrets: usize,
    /// What was redacted, per session that had secrets: its file, the page
    /// written, the report (kinds, where, fingerprints; never a secret).
    pub reports: Vec<(String, String, agentlog_redact::Report)>,
}

/// Reads the session of a catalog row (from its file, or from the bytes a
/// team server keeps: see [`agentlog_index::backend::read_session`]).
pub type ReadSession<'a> =
    dyn Fn(&SessionInfo) -> Result<agentlog_formats::Read, agentlog_index::IndexError> + Sync + 'a;

/// Writes a page for each of `sessions` (catalog rows, each read with
/// `read`) into `dir`, in parallel, and `dir/index.html` listing them;
/// `local` when the rows are this machine's files (their subagents' files
/// are then read beside them).
pub fn export_all(
    sessions: Vec<SessionInfo>,
    dir: &Path,
    redact: bool,
    read: &ReadSession<'_>,
    local: bool,
) -> Result<AllExported, ExportError> {
    std::fs::create_dir_all(dir).map_err(|e| ExportError::Io {
        path: dir.to_path_buf(),
        source: e,
    })?;
    let mut names = std::collections::HashSet::new();
    let jobs: Vec<(SessionInfo, String)> = sessions
        .into_iter()
        .map(|s| {
            let base = file_name(&s.agent, &s.session_id);
            let mut name = format!("{base}.html");
            let mut n = 2;
            while !names.insert(name.clone()) || name == "index.html" {
                name = format!("{base}-{n}.html");
                n += 1;
            }
            (s, name)
        })
        .collect();
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    // Each worker takes the next session as it finishes one (sessions differ
    // in size a lot), and the pages keep the order of `sessions`.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, PageResult)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((s, name)) = jobs.get(i) else {
                            break;
                        };
                        let r = export_one(s, name, dir, redact, read, local)
                            .map_err(|e| e.to_string());
                        out.push((i, r));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join().unwrap_or_else(|_| {
                    vec![(usize::MAX, Err("an export thread failed".to_string()))]
                })
            })
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    // The pages reach the disk together, before the index that lists them.
    agentlog_store::snapshot::sync_filesystem(dir)?;
    let mut done = AllExported::default();
    for (_, r) in results {
        match r {
            Ok((e, path, report)) => {
                if !report.is_empty() {
                    done.secrets += report.len();
                    done.with_secrets += 1;
                    done.reports.push((path, e.file.clone(), report));
                }
                done.pages.push(e);
            }
            Err(e) => done.failed.push(e),
        }
    }
    done.index = dir.join("index.html");
    write_page(&done.index, &export_index(&done.pages))?;
    Ok(done)
}

/// One page of an export: what was written, of which session file, and
/// what was redacted, or why it was not.
type PageResult = Result<(Exported, String, agentlog_redact::Report), String>;

fn export_one(
    s: &SessionInfo,
    name: &str,
    dir: &Path,
    redact: bool,
    read: &ReadSession<'_>,
    local: bool,
) -> Result<(Exported, String, agentlog_redact::Report), ExportError> {
    let mut read = read(s)?;
    let mut subagents = if local {
        read_subagents(Path::new(&s.path), &s.format)
    } else {
        Vec::new()
    };
    let (html, report) = session_page_with(&mut read.session, &mut subagents, &s.path, redact)?;
    write_page_durable(&dir.join(name), &html, Durable::Later)?;
    let mut title = s
        .title
        .clone()
        .or_else(|| s.first_prompt.clone())
        .unwrap_or_else(|| s.session_id.clone());
    let mut project = s.project.clone().unwrap_or_default();
    // The file's path names it in the report (a path may hold a secret:
    // pi names folders after the working directory).
    let mut path = s.path.clone();
    if let Some(r) = redactor(redact)? {
        r.text(&mut title, "title");
        r.text(&mut project, "project");
        r.text(&mut path, "path");
    }
    let exported = Exported {
        file: name.to_string(),
        title: title
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(140)
            .collect(),
        agent: s.agent.clone(),
        project,
        started: s
            .created_ms
            .and_then(chrono::DateTime::from_timestamp_millis)
            .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default(),
        messages: s.messages as usize,
    };
    Ok((exported, path, report))
}

/// A file name made of the agent and session id: letters, digits, `-_.`
/// only, never starting with a dot.
pub fn file_name(agent: &str, id: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .take(90)
            .collect()
    };
    let id = clean(id);
    let id = id.trim_start_matches('.');
    format!(
        "{}-{}",
        clean(agent),
        if id.is_empty() { "session" } else { id }
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn names_never_leave_the_folder_and_foreign_files_are_kept() {
        assert_eq!(
            file_name("claude", "../../etc/passwd"),
            "claude-_.._etc_passwd"
        );
        assert_eq!(file_name("pi", "..."), "pi-session");
        assert!(!file_name("a/b", "/x").contains('/'));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.html");
        std::fs::write(&p, "my notes").unwrap();
        assert!(matches!(
            write_page(&p, "<p>"),
            Err(ExportError::Foreign(_))
        ));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "my notes");
    }
}
