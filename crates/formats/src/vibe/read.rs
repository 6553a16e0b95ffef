//! Reads a Vibe session in the layout its file names: a 3.x store's
//! `meta.json`, or anything else as 2.x chat messages (`messages.jsonl`).

use crate::{FormatError, Read};
use std::path::Path;

/// Reads the session file at `path`, whose bytes are `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    if path.file_name().is_some_and(|n| n == super::wire::META) {
        super::unified::read(path, bytes)
    } else {
        super::legacy::read(path, bytes)
    }
}
