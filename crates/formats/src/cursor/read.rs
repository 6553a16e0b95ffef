//! Reads Cursor sessions: the chat store (`store.db`, with `meta.json`
//! beside it) and the agent transcripts (JSON lines, or plain text before
//! them).

mod meta;
mod store;
mod text;
mod transcript;

pub(super) use transcript::looks_like;

/// True when `head` starts a plain-text transcript (`user:` first).
pub(super) fn looks_like_text(head: &[u8]) -> bool {
    text::looks_like(head)
}

use super::SQLITE_MAGIC;
use crate::{FormatError, Read};
use std::io::Read as _;
use std::path::Path;

/// Reads the session whose file `path` holds `bytes`.
pub(super) fn read_bytes(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    if bytes.starts_with(SQLITE_MAGIC) {
        if path.is_file() {
            return store::read(path);
        }
        return Err(FormatError::invalid(
            path,
            None,
            "a Cursor store.db can only be read from its file on disk",
        ));
    }
    transcript_or_text(path, bytes)
}

/// Reads a transcript: JSON lines, or the older plain text.
fn transcript_or_text(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    if text::looks_like(bytes) {
        text::read(path, bytes)
    } else {
        transcript::read(path, bytes)
    }
}

/// Reads the session at `path`: a chat directory, a `store.db` or a transcript.
pub(super) fn read_path(path: &Path) -> Result<Read, FormatError> {
    if path.is_dir() {
        let db = path.join("store.db");
        if db.is_file() {
            return store::read(&db);
        }
        return Err(FormatError::invalid(
            path,
            None,
            "a directory, but not a Cursor chat directory (no store.db in it)",
        ));
    }
    let mut magic = [0u8; 16];
    let n = crate::input::open_file(path)?
        .0
        .take(16)
        .read(&mut magic)
        .map_err(|e| FormatError::io(path, e))?;
    if magic[..n] == *SQLITE_MAGIC {
        return store::read(path);
    }
    let bytes = crate::input::read_file(path)?;
    transcript_or_text(path, &bytes)
}
