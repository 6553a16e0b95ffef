//! The searchable text of every entry, kept compressed.
//!
//! FTS5 needs an entry's text twice after indexing it: to cut a snippet
//! around a match, and to find the words to take out of the index when the
//! entry is removed. A plain FTS5 table keeps a copy of every text for that,
//! uncompressed: 0.57x the corpus it indexes on the benchmark's 1 GB of
//! sessions. Here `fts` is an external-content table reading the view
//! `fts_text`, and the text lives in `texts`: the entries of one update of
//! one session, about [`BLOCK_BYTES`] at a time, compressed together with
//! zstd (0.2–0.3x of the text: the entries of a session share most of their
//! words). `docs.block` and `docs.slot` say where an entry's text is;
//! entries with nothing searchable have none and are not in `fts`.
//!
//! The view decompresses with the SQL function [`FUNCTION`], which every
//! connection to an index registers ([`register`]); it keeps the last block
//! it decompressed, so the snippets of one search and the entries of one
//! removal, which come in order, decompress each block once.
//!
//! Each block also adds its distinct words to `words`, a contentless FTS5
//! table without positions (rowid = the block's id) whose vocabulary
//! (`words_vocab`) lists every word the index holds: a prefix query is
//! turned into the words it starts (`pars*` into `parse OR parser`), which
//! FTS5 answers in a millisecond, where gathering the entries of every word
//! a prefix starts took tens of milliseconds at 1 GB. The words are the
//! pieces of the text between ASCII characters that are not letters or
//! digits (every one of which FTS5's tokenizer also splits at), so FTS5
//! makes the same terms of them as of the text itself.
//!
//! A block is never changed once written: an entry is removed from `fts`
//! (which reads its text through the view) before its block is deleted, and
//! a block is deleted only when no entry points into it.

use crate::extract::Doc;
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::Connection;

/// The name of the SQL function that reads one field of one entry:
/// `agentlog_text(block, slot, field)` with the block's compressed bytes.
pub(crate) const FUNCTION: &str = "agentlog_text";

/// About how much text goes into one block before it is compressed:
/// larger blocks compress better, smaller ones are quicker to decompress
/// for one snippet (64 KiB takes about 0.1 ms).
pub(crate) const BLOCK_BYTES: usize = 64 * 1024;

/// zstd's level: 1 compresses these texts within a few percent of 3 at
/// twice the speed.
const LEVEL: i32 = 1;

/// The fields of an entry, in `fts`'s column order.
pub(crate) const FIELDS: usize = 5;

/// Collects entries' fields into one block.
#[derive(Default)]
struct BlockBuilder {
    raw: Vec<u8>,
    slots: i64,
    /// The distinct words of the block's text fields (ASCII letters in
    /// lower case: FTS5 folds case anyway).
    words: foldhash::HashSet<String>,
    word: String,
}

/// The text fields (not the filter tags) of [`FIELDS`].
const TEXT_FIELDS: usize = 4;

impl BlockBuilder {
    /// Adds one entry's fields; returns its slot in the block.
    pub fn push(&mut self, fields: [&str; FIELDS]) -> i64 {
        for f in &fields[..TEXT_FIELDS] {
            for piece in f
                .split(|c: char| c.is_ascii() && !c.is_ascii_alphanumeric())
                .filter(|p| !p.is_empty())
            {
                self.word.clear();
                self.word.push_str(piece);
                self.word.make_ascii_lowercase();
                if !self.words.contains(self.word.as_str()) {
                    self.words.insert(self.word.clone());
                }
            }
        }
        for f in fields {
            let len = u32::try_from(f.len()).unwrap_or(u32::MAX);
            self.raw.extend_from_slice(&len.to_le_bytes());
            self.raw.extend_from_slice(&f.as_bytes()[..len as usize]);
        }
        self.slots += 1;
        self.slots - 1
    }

    /// True when the block has reached [`BLOCK_BYTES`].
    pub fn is_full(&self) -> bool {
        self.raw.len() >= BLOCK_BYTES
    }

    /// True when nothing was added since the last [`BlockBuilder::finish`].
    pub fn is_empty(&self) -> bool {
        self.slots == 0
    }

    /// Returns the compressed block and its distinct words (separated by
    /// spaces), and starts a new block.
    pub fn finish(&mut self) -> std::io::Result<(Vec<u8>, String)> {
        let z = zstd::bulk::compress(&self.raw, LEVEL)?;
        self.raw.clear();
        self.slots = 0;
        let mut words = String::with_capacity(self.words.iter().map(|w| w.len() + 1).sum());
        for w in self.words.drain() {
            words.push_str(&w);
            words.push(' ');
        }
        Ok((z, words))
    }
}

/// The searchable entries of one session in compressed blocks, with each
/// entry's tags: what the writer stores for the entries of a session. A
/// session read in full gets them on the thread that read it (making them
/// was a quarter of the single writer's time in a cold build).
pub(crate) struct Blocks {
    /// The session (`files.id`) whose tag the entries' tags hold.
    pub session: i64,
    /// Each block's compressed bytes and its distinct words.
    pub blocks: Vec<(Vec<u8>, String)>,
    /// For each entry, its block (an index into `blocks`) and its slot in
    /// it; `None` for an entry with nothing searchable.
    pub place: Vec<Option<(usize, i64)>>,
    /// For each entry, its tags (empty for one with nothing searchable).
    pub tags: Vec<String>,
}

/// Puts the searchable entries of `docs`, the entries of session `session`
/// (`agent`, `project`), into blocks of about [`BLOCK_BYTES`].
pub(crate) fn blocks(
    session: i64,
    agent: &str,
    project: Option<&str>,
    docs: &[Doc],
) -> std::io::Result<Blocks> {
    let base = crate::tags::session_tags(session, agent, project);
    let mut out = Blocks {
        session,
        blocks: Vec::new(),
        place: Vec::with_capacity(docs.len()),
        tags: Vec::with_capacity(docs.len()),
    };
    let mut builder = BlockBuilder::default();
    for d in docs {
        if d.is_empty() {
            out.tags.push(String::new());
            out.place.push(None);
            continue;
        }
        let t = crate::tags::doc_tags(&base, d);
        let slot = builder.push([&d.text, &d.thinking, &d.tools, &d.output, &t]);
        out.tags.push(t);
        out.place.push(Some((out.blocks.len(), slot)));
        if builder.is_full() {
            out.blocks.push(builder.finish()?);
        }
    }
    if !builder.is_empty() {
        out.blocks.push(builder.finish()?);
    }
    Ok(out)
}

/// The last block a connection decompressed.
#[derive(Default)]
struct Cache {
    /// zstd's context, made on first use and kept.
    unzip: Option<zstd::bulk::Decompressor<'static>>,
    /// Its compressed bytes (compared whole: a block id can be used again
    /// after a rollback, the bytes cannot be mistaken).
    z: Vec<u8>,
    raw: Vec<u8>,
    /// Where each slot's fields start in `raw`.
    slots: Vec<[(usize, usize); FIELDS]>,
}

impl Cache {
    fn load(&mut self, z: &[u8]) -> Result<(), String> {
        if !self.z.is_empty() && self.z == z {
            return Ok(());
        }
        self.z.clear();
        self.slots.clear();
        self.raw.clear();
        let damaged = |e: &dyn std::fmt::Display| format!("a text block is damaged: {e}");
        // Blocks are written whole, with their size in the frame's header.
        let size = zstd::zstd_safe::get_frame_content_size(z)
            .ok()
            .flatten()
            .filter(|&n| n <= 1 << 32)
            .ok_or_else(|| damaged(&"no size"))?;
        let unzip = match &mut self.unzip {
            Some(u) => u,
            None => self
                .unzip
                .insert(zstd::bulk::Decompressor::new().map_err(|e| damaged(&e))?),
        };
        self.raw.reserve(size as usize);
        unzip
            .decompress_to_buffer(z, &mut self.raw)
            .map_err(|e| damaged(&e))?;
        let raw = &self.raw;
        let mut pos = 0;
        while pos < raw.len() {
            let mut slot = [(0, 0); FIELDS];
            for s in &mut slot {
                let len = raw
                    .get(pos..pos + 4)
                    .and_then(|b| <[u8; 4]>::try_from(b).ok())
                    .map(u32::from_le_bytes)
                    .ok_or("a text block is cut short")? as usize;
                let start = pos + 4;
                if start + len > raw.len() {
                    return Err("a text block is cut short".into());
                }
                *s = (start, start + len);
                pos = start + len;
            }
            self.slots.push(slot);
        }
        self.z.extend_from_slice(z);
        Ok(())
    }

    fn field(&self, slot: i64, field: i64) -> Result<&str, String> {
        let (start, end) = usize::try_from(slot)
            .ok()
            .and_then(|s| self.slots.get(s))
            .and_then(|f| f.get(usize::try_from(field).ok()?))
            .copied()
            .ok_or_else(|| format!("no field {field} of slot {slot} in its text block"))?;
        std::str::from_utf8(&self.raw[start..end])
            .map_err(|_| "a text block holds text that is not UTF-8".to_string())
    }
}

/// Registers [`FUNCTION`] on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let mut cache = Cache::default();
    conn.create_scalar_function(
        FUNCTION,
        3,
        FunctionFlags::SQLITE_UTF8
            | FunctionFlags::SQLITE_DETERMINISTIC
            | FunctionFlags::SQLITE_INNOCUOUS,
        move |ctx: &Context<'_>| {
            let z = ctx.get_raw(0).as_blob().map_err(user_error)?;
            let slot: i64 = ctx.get(1)?;
            let field: i64 = ctx.get(2)?;
            cache.load(z).map_err(user_error)?;
            Ok(cache.field(slot, field).map_err(user_error)?.to_owned())
        },
    )
}

fn user_error(e: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::UserFunctionError(e.to_string().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_come_back_from_a_block() {
        let mut b = BlockBuilder::default();
        assert!(b.is_empty());
        assert_eq!(b.push(["one", "", "tools ü", "out\nput", "xa1"]), 0);
        assert_eq!(b.push(["two", "think", "", "ONE/Été", "xb2"]), 1);
        let (z, words) = b.finish().unwrap();
        let mut words: Vec<&str> = words.split(' ').filter(|w| !w.is_empty()).collect();
        words.sort_unstable();
        assert_eq!(
            words,
            // Only ASCII is folded here: FTS5 folds the rest the same way
            // for the words as for the text.
            ["one", "out", "put", "think", "tools", "two", "Été", "ü"]
        );
        assert!(b.is_empty());
        let mut c = Cache::default();
        c.load(&z).unwrap();
        assert_eq!(c.field(0, 2).unwrap(), "tools ü");
        assert_eq!(c.field(0, 3).unwrap(), "out\nput");
        assert_eq!(c.field(1, 1).unwrap(), "think");
        assert_eq!(c.field(1, 4).unwrap(), "xb2");
        assert!(c.field(2, 0).is_err());
        assert!(c.field(0, 5).is_err());
        // Another block replaces the cached one.
        b.push(["three", "", "", "", ""]);
        let (z2, words) = b.finish().unwrap();
        assert_eq!(words, "three ");
        c.load(&z2).unwrap();
        assert_eq!(c.field(0, 0).unwrap(), "three");
        assert!(c.load(b"not zstd").is_err());
    }

    #[test]
    fn the_view_reads_through_the_function() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let mut b = BlockBuilder::default();
        b.push(["alpha", "beta", "gamma", "delta", "tag"]);
        let (z, _) = b.finish().unwrap();
        let got: String = conn
            .query_row(
                &format!("SELECT {FUNCTION}(?1, 0, 2)"),
                [rusqlite::types::Value::Blob(z)],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(got, "gamma");
    }
}
