//! Reads a Vibe session in the layout its file names: a 2.x
//! `messages.jsonl`, or a 3.x store's `meta.json`.

use crate::{FormatError, Read};
use std::path::Path;

/// Reads the session file at `path`, whose bytes are `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    if super::is_legacy_messages(path) {
        super::legacy::read(path, bytes)
    } else {
        super::unified::read(path, bytes)
    }
}
