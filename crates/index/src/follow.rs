//! Following a session file while an agent writes it: the session as a
//! whole read gives it, kept up to date by reading only what was appended.
//!
//! A viewer that shows an open session as it grows would otherwise read
//! the whole file again at every append: a second or more for a 100 MB
//! session, several times a minute. [`Follow`] reads the file whole once,
//! then, for the formats whose appends it can place ([`appendable`]), only
//! from the last turn boundary on, as the index does ([`crate::files`] says how, and when a file counts as
//! rewritten and is read whole again). The entries read from there replace
//! those the last read had from there; the entries before it stay.
//!
//! What a reader makes of a line can depend on the lines before it: an
//! entry with no parent of its own is chained to the one before it, a
//! parent that is a merged chunk of a response names the response, an id
//! met before is made unique. So the read starts [`CONTEXT`] entries
//! before the turn boundary, and what it makes of those entries must be
//! what the last read made of them (the first one's parent aside, which
//! lies outside the read); an entry from the boundary on whose id the
//! entries before already have, or whose parent is no entry of the read,
//! makes the file be read whole instead, as does any doubt (another inode,
//! a first or last 4 KiB before the end that changed). A change in the
//! middle of a file that keeps its inode, size order and those bytes is not
//! seen, as the index does not see it.
//!
//! Only whole lines are read: a line still being written is read once its
//! newline is there. The metadata stays that of the whole read (a read of
//! the appended lines does not know the whole file's).

use crate::files::{self, FileStat, FileState};
use crate::IndexError;
use agentlog_formats::Format;
use agentlog_model::Session;
use std::path::{Path, PathBuf};

/// Entries read again before a turn boundary, for what a reader makes of
/// the boundary's entry.
pub const CONTEXT: usize = 4;

/// A session file followed as it grows (see the module documentation).
pub struct Follow {
    path: PathBuf,
    format: &'static dyn Format,
    /// Where the next read starts (`tail_line`: [`CONTEXT`] entries before
    /// `boundary`); `indexed_to` is 0 for a file read whole at every
    /// change.
    state: FileState,
    /// The line of the turn boundary: entries from it on are replaced by
    /// the next read.
    boundary: u64,
    session: Session,
    /// How the last change was read.
    last: Advance,
}

/// How [`Follow::advance`] found and read the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advance {
    /// Unchanged: nothing was read.
    Same,
    /// Grown: read from the last turn boundary.
    Appended,
    /// Read whole (first read, a rewritten file, a format not read
    /// incrementally, or a read of the appended lines in doubt).
    Whole,
}

impl std::fmt::Debug for Follow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follow")
            .field("path", &self.path)
            .field("format", &self.format.name())
            .field("state", &self.state)
            .field("entries", &self.session.entries.len())
            .finish()
    }
}

impl Follow {
    /// Reads the session file at `path` whole (its whole lines, for the
    /// formats read incrementally), with `prepare` applied to the session
    /// read (to trim or redact it).
    pub fn start(
        path: &Path,
        format: &'static dyn Format,
        prepare: &dyn Fn(&mut Session),
    ) -> Result<Follow, IndexError> {
        let mut f = Follow {
            path: path.to_path_buf(),
            format,
            state: FileState::default(),
            boundary: 0,
            last: Advance::Whole,
            session: Session::new(agentlog_model::SessionMeta::new(
                "",
                agentlog_model::Agent::Other(String::new()),
            )),
        };
        f.read_whole(prepare)?;
        Ok(f)
    }

    /// The session as last read.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session as last read, taken.
    pub fn into_session(self) -> Session {
        self.session
    }

    /// Reads what changed in the file since the last read, with `prepare`
    /// applied to what was read (each entry prepared once); returns false
    /// when the file is as it was.
    pub fn advance(&mut self, prepare: &dyn Fn(&mut Session)) -> Result<bool, IndexError> {
        let stat = files::stat(&self.path)
            .ok_or_else(|| self.error(format!("{}: the file is gone", self.path.display())))?;
        if stat.same_state(&self.state.stat) {
            self.last = Advance::Same;
            return Ok(false);
        }
        self.last = Advance::Appended;
        if self.state.indexed_to == 0 || !self.read_appended(stat, prepare)? {
            self.last = Advance::Whole;
            self.read_whole(prepare)?;
        }
        Ok(true)
    }

    /// How the last [`Follow::advance`] read the file.
    pub fn last(&self) -> Advance {
        self.last
    }

    fn error(&self, message: impl Into<String>) -> IndexError {
        IndexError::Session {
            path: self.path.display().to_string(),
            message: message.into(),
        }
    }

    /// Reads the file whole.
    fn read_whole(&mut self, prepare: &dyn Fn(&mut Session)) -> Result<(), IndexError> {
        let stat = files::stat(&self.path).unwrap_or_default();
        let name = self.format.name();
        let mut state = FileState {
            format: name.to_string(),
            stat,
            tail_line: 1,
            ..FileState::default()
        };
        let read = if stat.is_file && appendable(name) {
            let bytes = std::fs::read(&self.path)
                .map_err(|e| self.error(format!("{}: {e}", self.path.display())))?;
            let end = files::whole_lines(&bytes);
            let read = self
                .format
                .read_bytes_to_show(&self.path, &bytes[..end])
                .map_err(|e| self.error(e.to_string()))?;
            // A file whose entries do not all say their line is read whole
            // at every change (what was appended could not be placed).
            if read.session.entries.iter().all(|e| e.line.is_some()) {
                state.indexed_to = end as u64;
            }
            (state.head_hash, state.before_hash) = files::check_hashes(&bytes, end);
            (self.boundary, state.tail_line, state.tail_offset) =
                restart(&read.session, &bytes[..end], (1, 0)).unwrap_or((0, 1, 0));
            read
        } else {
            self.format
                .read_path_to_show(&self.path)
                .map_err(|e| self.error(e.to_string()))?
        };
        let mut session = read.session;
        prepare(&mut session);
        self.session = session;
        self.state = state;
        Ok(())
    }

    /// Reads the file from where the last read restarts, when it only
    /// grew; false when it is to be read whole.
    fn read_appended(
        &mut self,
        stat: FileStat,
        prepare: &dyn Fn(&mut Session),
    ) -> Result<bool, IndexError> {
        // Another file in its place.
        if stat.inode != self.state.stat.inode {
            return Ok(false);
        }
        let (tail, read) = match files::read_tail_as(&self.path, &self.state, self.format) {
            Ok(Some(t)) => t,
            Ok(None) => return Ok(false),
            Err(e) => return Err(self.error(format!("{}: {e}", self.path.display()))),
        };
        let mut session = read.session;
        let (from, boundary) = (tail.first_line, self.boundary);
        let line = |e: &agentlog_model::Entry| e.line.unwrap_or(0);
        // The entries before the boundary, read again for context, must be
        // as the last read made them.
        let split = session.entries.partition_point(|e| line(e) < boundary);
        if session.entries[split..].iter().any(|e| line(e) < boundary) {
            return Ok(false);
        }
        let kept = &self.session.entries;
        let again: Vec<&agentlog_model::Entry> = kept
            .iter()
            .filter(|e| (from..boundary).contains(&line(e)))
            .collect();
        if again.len() != split {
            return Ok(false);
        }
        // The first is read without its own context (its parent, the call
        // it answers lie before the read): only its id must match.
        for (k, (old, new)) in again.iter().zip(&session.entries[..split]).enumerate() {
            if k == 0 {
                if old.id != new.id {
                    return Ok(false);
                }
                continue;
            }
            // Prepared as the kept ones were, to compare alike.
            let mut one = Session::new(session.meta.clone());
            one.entries.push(new.clone());
            prepare(&mut one);
            if serde_json::to_value(&one.entries[0]).ok() != serde_json::to_value(old).ok() {
                return Ok(false);
            }
        }
        let next = restart(&session, tail.bytes(), (tail.first_line, tail.first_offset));
        let mut new = session.entries.split_off(split);
        // What is new must fit what is kept: no id twice, every parent an
        // entry, the leaf one of them.
        let before: std::collections::HashSet<&str> = kept
            .iter()
            .filter(|e| line(e) < boundary)
            .map(|e| e.id.as_str())
            .collect();
        let ids: std::collections::HashSet<&str> = new.iter().map(|e| e.id.as_str()).collect();
        // A parent (or leaf) must be an entry this read made: one before it
        // may stand for another in a whole read (a record with no id of its
        // own is chained after the entry before it, and records naming that
        // entry as parent are moved under it), which the read did not see.
        let context: std::collections::HashSet<&str> =
            session.entries.iter().map(|e| e.id.as_str()).collect();
        let known = |id: &str| context.contains(id) || ids.contains(id);
        // A result of a call made before the read: what the reader takes of
        // the call (its tool's name) was not read.
        let calls: std::collections::HashSet<&str> = session
            .entries
            .iter()
            .chain(&new)
            .flat_map(|e| e.tool_call_names())
            .map(|(id, _)| id)
            .collect();
        if new.iter().any(|e| before.contains(e.id.as_str()))
            || ids.len() != new.len()
            || new
                .iter()
                .any(|e| e.parent_id.as_deref().is_some_and(|p| !known(p)))
            || new.iter().any(|e| answered(e).any(|c| !calls.contains(c)))
        {
            return Ok(false);
        }
        let leaf = match session.leaf_id.take() {
            Some(l) if known(&l) => Some(l),
            None if new.is_empty() => self.session.leaf_id.clone(),
            _ => return Ok(false),
        };
        session.entries = std::mem::take(&mut new);
        prepare(&mut session);
        self.session.entries.retain(|e| line(e) < boundary);
        self.session.entries.append(&mut session.entries);
        self.session.leaf_id = leaf;
        let (boundary, tail_line, tail_offset) =
            next.unwrap_or((boundary, tail.first_line, tail.first_offset));
        self.boundary = boundary;
        self.state = FileState {
            stat,
            indexed_to: tail.end,
            tail_line,
            tail_offset,
            head_hash: tail.hashes.0,
            before_hash: tail.hashes.1,
            ..std::mem::take(&mut self.state)
        };
        Ok(true)
    }
}

/// The ids of the calls `e` answers.
fn answered(e: &agentlog_model::Entry) -> impl Iterator<Item = &str> {
    let m = e.message();
    m.and_then(|m| m.tool_call_id.as_deref())
        .into_iter()
        .chain(m.into_iter().flat_map(|m| {
            m.content.iter().filter_map(|b| match &b.kind {
                agentlog_model::BlockKind::ToolResult {
                    tool_call_id: Some(id),
                    ..
                } => Some(id.as_str()),
                _ => None,
            })
        }))
}

/// True when a file of `format` is followed by reading its appended lines:
/// pi's and Claude Code's, whose records say their parents or follow the
/// record before. A Codex rollout is read whole at every change, though the
/// index reads it incrementally: a token count gives the difference from
/// the one before it, and counts at the end go to the last response until
/// one follows, so an append can change entries before the boundary.
pub fn appendable(format: &str) -> bool {
    matches!(format, "pi" | "claude")
}

/// Returns the turn boundary the next read of the file replaces entries
/// from, of `session` read from `bytes` (whose first line is the file's
/// line and offset `base`), and the line and offset the read starts at:
/// [`CONTEXT`] entries before the boundary, not before `base`, never the
/// file's first line (read anyway). `None` when there is no boundary.
fn restart(session: &Session, bytes: &[u8], base: (u64, u64)) -> Option<(u64, u64, u64)> {
    let (boundary, at) = files::restart(session, bytes, base)?;
    let mut before: Vec<u64> = session
        .entries
        .iter()
        .filter_map(|e| e.line)
        .filter(|&l| l < boundary && l >= base.0.max(2))
        .collect();
    before.sort_unstable();
    before.dedup();
    let start = before
        .len()
        .checked_sub(CONTEXT)
        .map_or(before.first(), |k| before.get(k))
        .copied();
    match start {
        Some(l) => {
            let o = files::line_offset(bytes, base.1, base.0, l)?;
            Some((boundary, l, o))
        }
        None => Some((boundary, boundary, at)),
    }
}
