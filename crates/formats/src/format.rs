//! The [`Format`] trait every format implements.

use crate::{Diagnostic, Fidelity, FormatError};
use agentlog_model::{Agent, Session};
use std::io::Write;
use std::path::Path;

/// The result of reading one session.
#[derive(Debug)]
pub struct Read {
    /// The session.
    pub session: Session,
    /// Problems found on the way; the session holds everything else.
    pub diagnostics: Vec<Diagnostic>,
}

/// Where a converted session goes for an agent to continue it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumePlan {
    /// The native session file to write.
    pub path: std::path::PathBuf,
    /// The shell command that continues the session in the agent, to run in
    /// `cwd` (it holds no `cd`; the caller prints one).
    pub command: String,
    /// The directory the command must run in.
    pub cwd: Option<std::path::PathBuf>,
}

/// What a format writes for one session: one file, or, for a format whose
/// sessions are folders of files (OpenHands' conversations), each file's
/// path inside the folder and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// The bytes of the one file.
    File(Vec<u8>),
    /// The files of the folder, each named by a relative path of plain
    /// names (no `..`, no root), in the order they are written.
    Folder(Vec<(std::path::PathBuf, Vec<u8>)>),
}

impl Written {
    /// Each file's path inside the folder (`None` for the one file) and its
    /// bytes.
    pub fn files(&self) -> Vec<(Option<&Path>, &[u8])> {
        match self {
            Written::File(b) => vec![(None, b.as_slice())],
            Written::Folder(files) => files
                .iter()
                .map(|(p, b)| (Some(p.as_path()), b.as_slice()))
                .collect(),
        }
    }

    /// Writes the file, or the folder with the folders inside it, at
    /// `path` with plain writes (a file there is replaced; a folder's other
    /// files are left as they are): for scratch copies and tests.
    /// (agentlog's commands write through `agentlog_store`, whole or not at
    /// all, and never over a session.)
    pub fn write_plain(&self, path: &Path) -> std::io::Result<()> {
        match self {
            Written::File(b) => std::fs::write(path, b),
            Written::Folder(files) => {
                for (rel, b) in files {
                    let p = path.join(crate::safe_path::relative(rel)?);
                    if let Some(dir) = p.parent() {
                        std::fs::create_dir_all(dir)?;
                    }
                    std::fs::write(p, b)?;
                }
                Ok(())
            }
        }
    }
}

/// One session format: detection, reading and (where possible) writing.
pub trait Format: Send + Sync {
    /// Returns the registry name (`pi`, `claude`, …) used by `--from`/`--to`.
    fn name(&self) -> &'static str;

    /// Returns a one-line description for `--help` and `agentlog formats`.
    fn description(&self) -> &'static str;

    /// Returns the agent whose sessions this format holds.
    fn agent(&self) -> Agent;

    /// Returns the usual file extension (without the dot) of written files.
    fn extension(&self) -> &'static str {
        "jsonl"
    }

    /// Returns how sure (0 to 100) the format is that `path`, whose first
    /// bytes are `head` (empty for a directory), is one of its files.
    fn detect(&self, path: &Path, head: &[u8]) -> u8;

    /// Returns the sessions of this format found on the machine described by
    /// `env` (default locations, the agent's own environment overrides, or
    /// the roots `env` names for this format).
    fn discover(&self, env: &crate::env::DiscoverEnv) -> Vec<std::path::PathBuf> {
        let _ = env;
        Vec::new()
    }

    /// The sessions kept in `file`, a file discovery found for this format:
    /// the file itself, or for a format that keeps many sessions in one
    /// database, one `<file>#<id>` path each (see [`crate::member`]).
    fn sessions_in(&self, file: &Path) -> Vec<std::path::PathBuf> {
        vec![file.to_path_buf()]
    }

    /// Reads a session from the bytes of `path`. Never panics; problems with
    /// single records become diagnostics.
    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError>;

    /// Reads the session at `path` (a file, or a directory for formats
    /// stored as several files).
    fn read_path(&self, path: &Path) -> Result<Read, FormatError> {
        let bytes = crate::input::read_file(path)?;
        let mut read = self.read_bytes(path, &bytes)?;
        read.diagnostics = crate::diag::summarize(std::mem::take(&mut read.diagnostics), 100);
        Ok(read)
    }

    /// Reads a session to show it (render, export as a page), leaving out
    /// what only writing it back into this format line for line needs: the
    /// same entries as [`Format::read_bytes`], without the native records'
    /// bookkeeping. A session read so must not be written back into its own
    /// format (other formats and renderings are unaffected).
    fn read_bytes_to_show(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        self.read_bytes(path, bytes)
    }

    /// [`Format::read_path`], to show the session (see
    /// [`Format::read_bytes_to_show`]).
    fn read_path_to_show(&self, path: &Path) -> Result<Read, FormatError> {
        self.read_path(path)
    }

    /// [`Format::read_path_to_show`], with `trim` applied to each entry
    /// (to drop what a page does not show). A format may trim each entry as
    /// soon as it is done with it, so what is dropped never piles up while
    /// a long session is read; the session is the same as trimming every
    /// entry after the read as long as `trim` touches only native fields
    /// (the `extra` maps of the entry, its message and blocks), never ids,
    /// links, roles or content, which a reader may still look at.
    fn read_path_to_show_with(
        &self,
        path: &Path,
        trim: &dyn Fn(&mut agentlog_model::Entry),
    ) -> Result<Read, FormatError> {
        let mut read = self.read_path_to_show(path)?;
        read.session.entries.iter_mut().for_each(trim);
        Ok(read)
    }

    /// Checks the file at `path` against everything the format requires and
    /// returns every problem found. By default these are the reader's
    /// diagnostics; formats with a schema check more.
    fn validate(&self, path: &Path) -> Result<Vec<crate::Diagnostic>, FormatError> {
        crate::diag::read_and_check(self, path).map(|(_, d)| d)
    }

    /// Returns the record types and fields of `read` (a file this format
    /// read) that the reader does not know: the drift report of
    /// [`crate::drift`]. By default, the records kept as unknown.
    fn drift(&self, read: &Read) -> Vec<crate::drift::Drift> {
        let mut t = crate::drift::Tally::default();
        crate::drift::unknown_records(read, &mut t);
        t.into_items()
    }

    /// Returns what the session at `path` is, from what its file says: a
    /// conversation (the default), a headless run or a subagent's
    /// transcript. Only what the agent writes counts (a field, a folder it
    /// keeps subagents in), never a guess from the content.
    fn session_kind(&self, path: &Path, session: &Session) -> agentlog_model::SessionKind {
        let _ = (path, session);
        agentlog_model::SessionKind::Conversation
    }

    /// Plans continuing `session` in this format's agent: where its native
    /// file goes (in the agent's own location under `env`) and the command
    /// that continues it there. The caller writes the file.
    fn resume_plan(
        &self,
        session: &Session,
        env: &crate::env::DiscoverEnv,
    ) -> Result<ResumePlan, FormatError> {
        let _ = (session, env);
        Err(FormatError::Unsupported {
            format: self.name(),
            operation: "resuming",
        })
    }

    /// Writes `session` for the file (or folder) [`Format::resume_plan`]
    /// planned: what [`Format::write_session`] writes, unless the agent
    /// wants another shape in its own store.
    fn write_resumable(
        &self,
        session: &Session,
        plan: &ResumePlan,
    ) -> Result<(Written, Fidelity), FormatError> {
        let _ = plan;
        self.write_session(session)
    }

    /// Does what the agent needs beyond the file [`Format::resume_plan`]
    /// planned to find it (Kimi only continues sessions of work directories
    /// listed in its `kimi.json`). Called after the file is written; adds
    /// what is missing and changes nothing already there.
    fn register_resumed(
        &self,
        session: &Session,
        plan: &ResumePlan,
        env: &crate::env::DiscoverEnv,
    ) -> Result<(), FormatError> {
        let _ = (session, plan, env);
        Ok(())
    }

    /// True when [`Format::write`] is supported.
    fn can_write(&self) -> bool {
        false
    }

    /// Writes `session` in this format and reports what the format could
    /// not hold. A format whose sessions are folders writes them with
    /// [`Format::write_session`] and refuses this.
    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        let _ = (session, out);
        Err(FormatError::Unsupported {
            format: self.name(),
            operation: "writing",
        })
    }

    /// True when a session of this format is a folder of files, which only
    /// [`Format::write_session`] writes (and a resume plan's path names
    /// the folder).
    fn writes_folder(&self) -> bool {
        false
    }

    /// For a format whose sessions are folders: the folder of the session
    /// `path` names (the folder, or a file or folder inside it), the one
    /// [`Format::write_session`]'s paths are relative to. `None` for a
    /// session that is one file.
    fn session_folder(&self, path: &Path) -> Option<std::path::PathBuf> {
        let _ = path;
        None
    }

    /// For a format whose sessions are folders: true when the file at `rel`,
    /// a path inside a session's folder, is one of the session's own files
    /// (the ones its reader reads): `scrub` rewrites these and no other.
    fn is_session_file(&self, rel: &Path) -> bool {
        let _ = rel;
        false
    }

    /// True when `dir` holds a session of this format and nothing else:
    /// only files [`Format::is_session_file`] names, at least one. A folder
    /// `--force` may replace.
    fn is_session_folder(&self, dir: &Path) -> bool {
        fn walk(f: &(impl Format + ?Sized), root: &Path, dir: &Path, n: &mut usize) -> bool {
            let Ok(rd) = std::fs::read_dir(dir) else {
                return false;
            };
            rd.flatten().all(|e| {
                let p = e.path();
                match e.file_type() {
                    Ok(t) if t.is_dir() => walk(f, root, &p, n),
                    Ok(t) if t.is_file() => {
                        *n += 1;
                        p.strip_prefix(root).is_ok_and(|rel| f.is_session_file(rel))
                    }
                    _ => false,
                }
            })
        }
        let mut n = 0;
        walk(self, dir, dir, &mut n) && n > 0
    }

    /// Writes `session` in this format, whether one file or a folder, and
    /// reports what the format could not hold: [`Format::write`]'s bytes,
    /// unless the format writes folders.
    fn write_session(&self, session: &Session) -> Result<(Written, Fidelity), FormatError> {
        let mut bytes = Vec::new();
        let fidelity = self.write(session, &mut bytes)?;
        Ok((Written::File(bytes), fidelity))
    }
}

/// The working directory a session is resumed in, for agents that keep
/// sessions by project; a session with none cannot be resumed in `format`.
pub(crate) fn resume_cwd(session: &Session, format: &'static str) -> Result<String, FormatError> {
    session
        .meta
        .cwd
        .clone()
        .filter(|c| !c.is_empty())
        .ok_or(FormatError::Unsupported {
            format,
            operation: "resuming a session with no working directory",
        })
}
