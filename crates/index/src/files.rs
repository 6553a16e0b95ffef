//! What the index remembers about each session file, and reading a file
//! whole or from where the last update stopped.
//!
//! Which formats are read incrementally: `pi`, `claude` and `codex` files
//! are append-only JSON lines, so an update re-reads only the tail. The tail
//! starts at the line of the last real user message indexed (a turn
//! boundary), so records that a reader merges or attaches to an earlier one
//! (Claude's streamed chunks of one response share a message id; Codex's
//! `token_count` follows the message it counts) are re-read together with
//! it; the documents from that line on are replaced. The first line of the
//! file (pi's and Codex's session header) is put in front of the tail and
//! blank lines keep the line numbers, so entry ids that readers derive from
//! line numbers stay the same. Only whole lines are read: a last line
//! without a newline (a write in progress) is read next time. Every other
//! format (one JSON document, SQLite stores, event logs that rewrite earlier
//! records) is read again in full when it changes.
//!
//! A file is unchanged when its size, modification time and inode are. A
//! file that shrank, or whose first 4 KiB or the 4 KiB before the indexed
//! end changed, was rewritten and is read again in full.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// Bytes hashed at the start of a file and before the indexed end.
pub const CHECK_BYTES: u64 = 4096;

/// Returns true when files of `format` are indexed incrementally.
pub fn incremental(format: &str) -> bool {
    matches!(format, "pi" | "claude" | "codex")
}

/// Size, modification time and inode of a session file (or, for a format
/// stored as a directory, the sum of sizes and the newest time inside).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FileStat {
    /// Bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Inode number (0 where there is none).
    pub inode: u64,
    /// True for a regular file.
    pub is_file: bool,
    /// True when the file is gone from disk and this is the state
    /// agentlog's archive keeps of it (see
    /// [`agentlog_formats::archived`]).
    pub kept: bool,
}

impl FileStat {
    /// True when `other` is the same state of the file: same size,
    /// modification time and inode.
    pub fn same_state(&self, other: &FileStat) -> bool {
        (self.size, self.mtime_ns, self.inode) == (other.size, other.mtime_ns, other.inode)
    }
}

/// The state agentlog's archive keeps of `path`, a file gone from disk.
fn kept_stat(path: &Path) -> Option<FileStat> {
    if std::fs::symlink_metadata(path).is_ok() {
        return None;
    }
    agentlog_formats::archived::stat(path).map(|k| FileStat {
        size: k.size,
        mtime_ns: k.mtime_ns,
        inode: k.inode,
        is_file: true,
        kept: true,
    })
}

/// Returns the stat of `path`, or `None` when it is gone. A session inside a
/// database (`<file>#<id>`, see [`agentlog_formats::member`]) has the stat
/// of the database and its write-ahead log together.
pub fn stat(path: &Path) -> Option<FileStat> {
    // One `stat` for a file (asking whether a path is a member first cost
    // every file a second one).
    let Ok(md) = std::fs::metadata(path) else {
        return member_stat(path).or_else(|| kept_stat(path)).or_else(|| {
            // A session inside a database that is gone: the database's
            // kept state.
            let (db, _) = agentlog_formats::member::split_member(path)?;
            kept_stat(&db).map(|st| FileStat {
                is_file: false,
                ..st
            })
        });
    };
    let mut st = FileStat {
        size: md.len(),
        mtime_ns: mtime_ns(&md),
        inode: inode(&md),
        is_file: md.is_file(),
        kept: false,
    };
    if md.is_dir() {
        st.size = 0;
        let mut stack = vec![(path.to_path_buf(), 0)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                let Ok(m) = e.metadata() else { continue };
                if m.is_dir() && depth < 4 {
                    stack.push((e.path(), depth + 1));
                } else if m.is_file() {
                    st.size += m.len();
                    st.mtime_ns = st.mtime_ns.max(mtime_ns(&m));
                }
            }
        }
    }
    Some(st)
}

/// The stat of a session inside a database: its file and write-ahead log.
fn member_stat(path: &Path) -> Option<FileStat> {
    let files = agentlog_formats::member::member_files(path)?;
    let mut st: Option<FileStat> = None;
    for f in files {
        let Ok(md) = std::fs::metadata(&f) else {
            continue;
        };
        let s = st.get_or_insert(FileStat {
            size: 0,
            mtime_ns: 0,
            inode: inode(&md),
            is_file: false,
            kept: false,
        });
        s.size += md.len();
        s.mtime_ns = s.mtime_ns.max(mtime_ns(&md));
    }
    st
}

fn mtime_ns(md: &std::fs::Metadata) -> i64 {
    md.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

#[cfg(unix)]
fn inode(md: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(md)
}

#[cfg(not(unix))]
fn inode(_md: &std::fs::Metadata) -> u64 {
    0
}

/// Stored file states by path (foldhash, faster than the standard
/// library's hasher for the path of every session file, which every
/// `agentlog index` looks up).
pub type States = foldhash::HashMap<String, FileState>;

/// What the index stored about a file after its last update.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct FileState {
    /// The file's row id (also its session's id).
    pub id: i64,
    /// The registry name of its format.
    pub format: String,
    /// Its stat when it was read.
    pub stat: FileStat,
    /// Bytes read (whole lines only for incremental formats).
    pub indexed_to: u64,
    /// Where the next incremental read starts.
    pub tail_offset: u64,
    /// The line number at `tail_offset`.
    pub tail_line: u64,
    /// Hash of the first [`CHECK_BYTES`].
    pub head_hash: i64,
    /// Hash of the [`CHECK_BYTES`] before `indexed_to`.
    pub before_hash: i64,
    /// The error of the last read, if it failed.
    pub error: Option<String>,
}

/// Returns the FNV-1a hash of `bytes` (stored as a signed SQLite integer).
pub fn hash(bytes: &[u8]) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

/// Returns the hashes of the first bytes and of the bytes before `end`.
pub fn check_hashes(bytes: &[u8], end: usize) -> (i64, i64) {
    let end = end.min(bytes.len());
    let head = &bytes[..end.min(CHECK_BYTES as usize)];
    let before = &bytes[end.saturating_sub(CHECK_BYTES as usize)..end];
    (hash(head), hash(before))
}

/// Returns the length of the whole lines at the start of `bytes` (up to and
/// including the last newline).
pub fn whole_lines(bytes: &[u8]) -> usize {
    memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1)
}

/// The bytes to read for an incremental update, and where they sit.
pub struct Tail {
    /// The first line, blank lines up to `tail_line`, then the tail's whole
    /// lines: what the reader parses.
    pub buffer: Vec<u8>,
    /// The file's line number of the tail's first line.
    pub first_line: u64,
    /// The file offset of the tail's first line.
    pub first_offset: u64,
    /// The file offset after the tail's last whole line.
    pub end: u64,
    /// The hashes of the start and of the bytes before the new end.
    pub hashes: (i64, i64),
}

impl Tail {
    /// The tail's own lines: the file's bytes from `first_offset` to `end`.
    pub fn bytes(&self) -> &[u8] {
        &self.buffer[self.buffer.len() - (self.end - self.first_offset) as usize..]
    }
}

/// [`read_tail`], read with `format`: the tail, and what the reader made of
/// it with the entries before its first line dropped; `Ok(None)` when the
/// file is to be read whole (rewritten, a tail the reader refuses, or an
/// entry that does not say its line, which could not be placed).
pub fn read_tail_as(
    path: &Path,
    state: &FileState,
    format: &dyn agentlog_formats::Format,
) -> std::io::Result<Option<(Tail, agentlog_formats::Read)>> {
    let Some(tail) = read_tail(path, state)? else {
        return Ok(None);
    };
    let Ok(mut read) = format.read_bytes_to_show(path, &tail.buffer) else {
        return Ok(None);
    };
    if read.session.entries.iter().any(|e| e.line.is_none()) {
        return Ok(None);
    }
    read.session
        .entries
        .retain(|e| e.line.is_some_and(|l| l >= tail.first_line));
    Ok(Some((tail, read)))
}

/// Reads what was appended to a file since `state`, or `Ok(None)` when the
/// file was rewritten (it shrank, or the bytes already indexed changed) and
/// must be read in full.
pub fn read_tail(path: &Path, state: &FileState) -> std::io::Result<Option<Tail>> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    if len < state.indexed_to || state.tail_line < 2 || state.tail_offset > state.indexed_to {
        return Ok(None);
    }
    let head_len = state.indexed_to.min(CHECK_BYTES);
    let mut head = vec![0u8; head_len as usize];
    f.read_exact(&mut head)?;
    if hash(&head) != state.head_hash {
        return Ok(None);
    }
    let before_start = state.indexed_to.saturating_sub(CHECK_BYTES);
    let mut before = vec![0u8; (state.indexed_to - before_start) as usize];
    f.seek(SeekFrom::Start(before_start))?;
    f.read_exact(&mut before)?;
    if hash(&before) != state.before_hash {
        return Ok(None);
    }
    // The first line, read on its own: a session header may be long.
    f.seek(SeekFrom::Start(0))?;
    let mut first = Vec::new();
    BufReader::new(&mut f).read_until(b'\n', &mut first)?;
    if first.last() != Some(&b'\n') {
        return Ok(None);
    }
    f.seek(SeekFrom::Start(state.tail_offset))?;
    let mut tail = Vec::with_capacity((len - state.tail_offset) as usize);
    f.read_to_end(&mut tail)?;
    let cut = whole_lines(&tail);
    tail.truncate(cut);
    let end = state.tail_offset + cut as u64;
    // The bytes before the new end, for the next check.
    let before_new = if cut as u64 >= CHECK_BYTES {
        hash(&tail[cut - CHECK_BYTES as usize..])
    } else {
        let start = end.saturating_sub(CHECK_BYTES);
        let mut b = vec![0u8; (end - start) as usize];
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut b)?;
        hash(&b)
    };
    let head_new = if end >= CHECK_BYTES && head_len == CHECK_BYTES {
        state.head_hash
    } else {
        let mut b = vec![0u8; end.min(CHECK_BYTES) as usize];
        f.seek(SeekFrom::Start(0))?;
        f.read_exact(&mut b)?;
        hash(&b)
    };
    let pad = (state.tail_line - 2) as usize;
    let mut buffer = Vec::with_capacity(first.len() + pad + tail.len());
    buffer.extend_from_slice(&first);
    buffer.resize(first.len() + pad, b'\n');
    buffer.extend_from_slice(&tail);
    Ok(Some(Tail {
        buffer,
        first_line: state.tail_line,
        first_offset: state.tail_offset,
        end,
        hashes: (head_new, before_new),
    }))
}

/// Returns the file offset of line `target` in `bytes`, whose first line is
/// line `base_line` at file offset `base_offset`.
pub fn line_offset(bytes: &[u8], base_offset: u64, base_line: u64, target: u64) -> Option<u64> {
    if target < base_line {
        return None;
    }
    agentlog_formats::jsonl::lines(bytes)
        .find(|l| base_line + l.number - 1 == target)
        .map(|l| base_offset + l.offset as u64)
}

/// Returns the line and file offset the next incremental read of a file
/// starts at, of `session` read from `bytes`, whose first line is the
/// file's line and offset `base`: the line of the last real user prompt (a
/// turn boundary) after the file's first, or `None` to read from `base`
/// (or from the start, when `base` is the start).
pub fn restart(
    session: &agentlog_model::Session,
    bytes: &[u8],
    base: (u64, u64),
) -> Option<(u64, u64)> {
    let line = session
        .entries
        .iter()
        .rev()
        .find(|e| {
            e.message().is_some_and(|m| {
                m.role == agentlog_model::Role::User
                    && m.injected.is_none()
                    && !m.sidechain
                    && m.content
                        .iter()
                        .any(|b| matches!(b.kind, agentlog_model::BlockKind::Text { .. }))
            })
        })
        .and_then(|e| e.line)
        .filter(|&l| l >= 2)?;
    line_offset(bytes, base.1, base.0, line).map(|o| (line, o))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_the_appended_whole_lines() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("s.jsonl");
        let start = b"{\"h\":1}\n{\"a\":1}\n{\"b\":2}\n";
        std::fs::write(&p, start).unwrap_or_else(|e| panic!("{e}"));
        let (h, b) = check_hashes(start, start.len());
        let state = FileState {
            indexed_to: start.len() as u64,
            tail_offset: 8,
            tail_line: 2,
            head_hash: h,
            before_hash: b,
            ..FileState::default()
        };
        let mut more = start.to_vec();
        more.extend_from_slice(b"{\"c\":3}\n{\"torn\":");
        std::fs::write(&p, &more).unwrap_or_else(|e| panic!("{e}"));
        let t = read_tail(&p, &state)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("not a rewrite"));
        assert_eq!(t.buffer, b"{\"h\":1}\n{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
        assert_eq!(t.end, 32);
        assert_eq!(line_offset(&more[8..32], 8, 2, 4), Some(24));
        // A rewrite with another prefix is detected.
        std::fs::write(&p, b"{\"h\":2}\n{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(read_tail(&p, &state)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_none());
    }
}
