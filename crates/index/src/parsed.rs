//! What the parallel readers of an update hand to the single writer: the
//! file to index and what reading it gave. Both the update pipeline and
//! the writer depend on these; neither depends on the other's internals.

use crate::extract::Extracted;
use crate::files::{FileStat, FileState};
use crate::texts::Blocks;
use std::path::PathBuf;

#[derive(Clone, Debug)]
pub(crate) struct Job {
    pub path: PathBuf,
    pub format: &'static str,
    pub stat: FileStat,
    /// The stored state, when the file was indexed before.
    pub state: Option<FileState>,
    /// True when the file may have grown by appends only.
    pub try_tail: bool,
    /// For a file new to the index, the id it is to get, given when the
    /// update is planned, so that the thread reading it can make its
    /// entries' blocks ([`crate::texts::Blocks`]); the writer gives it
    /// another when a file stored meanwhile took it.
    pub new_id: Option<i64>,
}

impl Job {
    /// The id the file has or gets in the index, when known.
    pub fn id(&self) -> Option<i64> {
        self.state.as_ref().map(|s| s.id).or(self.new_id)
    }

    /// The bytes the update reads of the file: all of them, or of a file
    /// that may have grown by appends, from where the last update stopped.
    pub fn bytes_to_read(&self) -> u64 {
        match &self.state {
            Some(s) if self.try_tail => self.stat.size.saturating_sub(s.tail_offset),
            _ => self.stat.size,
        }
    }
}

/// A file read by a worker, ready for the writer.
pub(crate) struct Parsed {
    pub job: Job,
    pub outcome: Outcome,
}

pub(crate) enum Outcome {
    /// The whole file was read.
    Full {
        extracted: Extracted,
        /// The entries' blocks, made for the file's id when it was known.
        blocks: Option<Blocks>,
        state: FileState,
        diagnostics: u64,
        bytes: u64,
        /// The session's shape, for a file of at least
        /// [`crate::shape::shape_min`] bytes.
        shape: Option<Box<crate::shape::Shape>>,
        /// What the reader did not know, and the agent version that wrote it.
        drift: FileDrift,
    },
    /// The tail was read; documents from `from_line` on are replaced.
    Tail {
        extracted: Extracted,
        from_line: u64,
        state: FileState,
        diagnostics: u64,
        bytes: u64,
        /// What the reader did not know in the lines read (added to what
        /// the file had).
        drift: FileDrift,
    },
    /// The file could not be read.
    Failed { message: String, state: FileState },
}

/// What a reader did not know in (part of) a file, as the update stores it.
#[derive(Clone, Debug, Default)]
pub(crate) struct FileDrift {
    /// The agent version the file says wrote it, when it says.
    pub version: Option<String>,
    /// The unknown record types, fields and layout.
    pub items: Vec<agentlog_formats::drift::Drift>,
}
