//! Capturing files: reading a file's current state, cutting it into
//! chunks, and storing what the archive does not hold yet.

use crate::schema;
use crate::{now_ns, path_text, Archive, ArchiveError, FileStat};
use crate::{AVG_CHUNK, LEVEL, MAX_CHUNK, MIN_CHUNK};
use rusqlite::OptionalExtension;
use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// What a capture did with one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Captured {
    /// The archive already held this state.
    Unchanged,
    /// A file the archive did not hold: its first version.
    New,
    /// The file grew: its latest version grew with it.
    Appended,
    /// The file changed otherwise: a new version.
    Rewritten,
}

/// A file a capture could not keep, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FileFailure {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// What capturing many files did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CaptureReport {
    /// Files looked at.
    pub files: usize,
    /// Files whose state the archive already held.
    pub unchanged: usize,
    /// Files new to the archive.
    pub new: usize,
    /// Files that grew.
    pub appended: usize,
    /// Files rewritten (a new version each).
    pub rewritten: usize,
    /// Bytes of files read.
    pub bytes_read: u64,
    /// Bytes of new chunks stored, compressed.
    pub bytes_stored: u64,
    /// Files that could not be kept.
    pub failed: Vec<FileFailure>,
}

impl CaptureReport {
    /// Counts one file that `c` says what capturing did with.
    pub fn count(&mut self, c: Captured) {
        match c {
            Captured::Unchanged => self.unchanged += 1,
            Captured::New => self.new += 1,
            Captured::Appended => self.appended += 1,
            Captured::Rewritten => self.rewritten += 1,
        }
    }
}

/// One chunk of a file.
#[derive(Clone, Debug)]
pub(crate) struct Chunk {
    pub hash: [u8; 32],
    pub offset: u64,
    pub size: u32,
    /// The compressed bytes, when they are to be stored (`None`: the
    /// archive holds the chunk already, or it was sent ahead).
    pub z: Option<Vec<u8>>,
}

/// Chunks cut from a file (or its end).
#[derive(Clone, Debug, Default)]
pub(crate) struct Cut {
    pub chunks: Vec<Chunk>,
    /// The file's size.
    pub size: u64,
    /// The hashes of the parts kept before `chunks` (an append), for the
    /// digest.
    pub kept_before: Vec<[u8; 32]>,
}

impl Cut {
    /// BLAKE3 of every part's hash in order.
    pub fn digest(&self) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        for k in &self.kept_before {
            h.update(k);
        }
        for c in &self.chunks {
            h.update(&c.hash);
        }
        *h.finalize().as_bytes()
    }

    fn stored_bytes(&self) -> u64 {
        stored_bytes(&self.chunks)
    }
}

/// The compressed bytes `chunks` carry to store.
fn stored_bytes(chunks: &[Chunk]) -> u64 {
    chunks
        .iter()
        .filter_map(|c| c.z.as_ref())
        .map(|z| z.len() as u64)
        .sum()
}

/// Cuts `bytes` whole into compressed chunks.
pub(crate) fn cut(bytes: &[u8]) -> Cut {
    let mut z = Compressor::new();
    let chunks = fastcdc::v2020::FastCDC::new(bytes, MIN_CHUNK, AVG_CHUNK, MAX_CHUNK)
        .map(|c| {
            let data = &bytes[c.offset..c.offset + c.length];
            Chunk {
                hash: *blake3::hash(data).as_bytes(),
                offset: c.offset as u64,
                size: c.length as u32,
                z: Some(z.compress(data)),
            }
        })
        .collect();
    Cut {
        chunks,
        size: bytes.len() as u64,
        kept_before: Vec::new(),
    }
}

/// A zstd context kept for a thread's chunks.
struct Compressor(Option<zstd::bulk::Compressor<'static>>);

impl Compressor {
    fn new() -> Compressor {
        Compressor(zstd::bulk::Compressor::new(LEVEL).ok())
    }

    fn compress(&mut self, data: &[u8]) -> Vec<u8> {
        if let Some(c) = self.0.as_mut() {
            if let Ok(z) = c.compress(data) {
                return z;
            }
        }
        // Only when zstd could not make a context: the one-shot call.
        zstd::bulk::compress(data, LEVEL).unwrap_or_else(|_| data.to_vec())
    }
}

/// The latest version of a file, as a capture builds on it.
#[derive(Clone, Debug)]
pub(crate) struct Base {
    pub version: i64,
    pub stat: FileStat,
    /// (hash, offset, size) of each part.
    pub parts: Vec<([u8; 32], u64, u32)>,
}

/// A file's state, read and cut, ready to store.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub path: PathBuf,
    pub format: String,
    pub stat: FileStat,
    /// The version grown in place, and how many of its parts stay.
    pub append: Option<(i64, usize)>,
    pub base_version: Option<i64>,
    pub cut: Cut,
}

/// How many compressed bytes a capture holds before it stores its chunks
/// ahead of the version (a large file is never held whole).
const AHEAD_BYTES: usize = 64 << 20;

/// Loads the latest version of `path` and its parts.
pub(crate) fn base(conn: &rusqlite::Connection, path: &Path) -> rusqlite::Result<Option<Base>> {
    let v: Option<(i64, i64, i64, i64)> = conn
        .prepare_cached(
            "SELECT v.id, v.size, v.mtime_ns, v.inode FROM versions v
             JOIN sources s ON s.id = v.source WHERE s.path = ?1
             ORDER BY v.id DESC LIMIT 1",
        )?
        .query_row([path_text(path)], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .optional()?;
    let Some((version, size, mtime_ns, inode)) = v else {
        return Ok(None);
    };
    let mut st = conn.prepare_cached(
        "SELECT c.hash, p.offset, p.size FROM parts p JOIN chunks c ON c.id = p.chunk
         WHERE p.version = ?1 ORDER BY p.seq",
    )?;
    let parts = st
        .query_map([version], |r| {
            let h: Vec<u8> = r.get(0)?;
            let mut hash = [0u8; 32];
            if h.len() == 32 {
                hash.copy_from_slice(&h);
            }
            Ok((hash, r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as u32))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Some(Base {
        version,
        stat: FileStat {
            size: size as u64,
            mtime_ns,
            inode: inode as u64,
        },
        parts,
    }))
}

/// Opens `path` for a capture: a regular file, never through a symbolic
/// link, never blocking on a FIFO; returns it and its stat.
fn open_regular(path: &Path) -> Result<(std::fs::File, FileStat), ArchiveError> {
    let meta = std::fs::symlink_metadata(path)
        .map_err(|e| ArchiveError::io(path, "look at the file", e))?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err(refused(
            path,
            "is a symbolic link; the archive keeps only regular files (it never follows a link a session file was swapped for)",
        ));
    }
    if !kind.is_file() {
        return Err(refused(
            path,
            &format!("is {}, not a regular file", kind_name(&kind)),
        ));
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let f = o
        .open(path)
        .map_err(|e| ArchiveError::io(path, "open the file", e))?;
    let m = f
        .metadata()
        .map_err(|e| ArchiveError::io(path, "look at the file", e))?;
    if !m.is_file() {
        return Err(refused(path, "is not a regular file"));
    }
    let max = agentlog_formats::input::max_bytes();
    if m.len() > max {
        return Err(refused(
            path,
            &format!(
                "{} bytes is over the input size cap of {max} bytes; raise it with AGENTLOG_MAX_INPUT",
                m.len()
            ),
        ));
    }
    Ok((f, FileStat::of(&m)))
}

fn refused(path: &Path, why: &str) -> ArchiveError {
    ArchiveError::Refused {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

fn kind_name(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "something else"
    }
}

/// Reads `len` bytes at `offset` of `f`.
fn read_at(
    f: &mut std::fs::File,
    path: &Path,
    offset: u64,
    len: u32,
) -> Result<Vec<u8>, ArchiveError> {
    let mut buf = vec![0u8; len as usize];
    f.seek(SeekFrom::Start(offset))
        .and_then(|_| f.read_exact(&mut buf))
        .map_err(|e| ArchiveError::io(path, "read the file", e))?;
    Ok(buf)
}

/// True when the file at this stat is `base` grown: the same inode, larger,
/// and its first and last parts still there byte for byte (the same check
/// the index makes of an append-only file; a change in the middle of a
/// large file that keeps both is taken for an append).
fn grew(
    f: &mut std::fs::File,
    path: &Path,
    base: &Base,
    stat: &FileStat,
) -> Result<bool, ArchiveError> {
    if stat.inode != base.stat.inode || stat.size <= base.stat.size || base.parts.is_empty() {
        return Ok(false);
    }
    let check = |f: &mut std::fs::File, (hash, offset, size): ([u8; 32], u64, u32)| {
        read_at(f, path, offset, size).map(|b| *blake3::hash(&b).as_bytes() == hash)
    };
    let first = base.parts[0];
    let last = base.parts[base.parts.len() - 1];
    Ok(check(f, first)? && (base.parts.len() == 1 || check(f, last)?))
}

/// Where a state's bytes are read from: the file itself, or a copy of it
/// taken for the purpose (a database's consistent snapshot) with the stat
/// the file had when the copy was taken.
#[derive(Clone, Copy, Debug)]
pub(crate) enum From<'a> {
    File,
    Copy(&'a Path, FileStat),
}

/// Reads the file at `path` and cuts its state, building on `base`: only
/// the end of a file that grew is cut again; chunks `base` holds are not
/// compressed again. `ahead` takes chunks to store before the version when
/// a large file's compressed bytes pass [`AHEAD_BYTES`]. `Ok(None)` when
/// `base` is the file's state already.
pub(crate) fn prepare(
    path: &Path,
    format: &str,
    base: Option<&Base>,
    from: From<'_>,
    ahead: &mut dyn FnMut(Vec<Chunk>) -> Result<(), ArchiveError>,
) -> Result<Option<Prepared>, ArchiveError> {
    const TRIES: u32 = 3;
    for _ in 0..TRIES {
        let (mut f, read_stat, stat) = match from {
            From::File => {
                let (f, st) = open_regular(path)?;
                (f, st, st)
            }
            From::Copy(copy, st) => {
                let (f, own) = open_regular(copy)?;
                // The copy's size is the state's; the file's time and
                // inode say when it changes.
                (
                    f,
                    own,
                    FileStat {
                        size: own.size,
                        ..st
                    },
                )
            }
        };
        if base.is_some_and(|b| b.stat == stat) {
            return Ok(None);
        }
        // A copy is a whole new state: its pages may change anywhere.
        let append = match base {
            Some(b) if matches!(from, From::File) && grew(&mut f, path, b, &stat)? => Some(b),
            _ => None,
        };
        let (start, kept_before) = match append {
            Some(b) => {
                let last = b.parts[b.parts.len() - 1];
                let before: Vec<[u8; 32]> =
                    b.parts[..b.parts.len() - 1].iter().map(|p| p.0).collect();
                (last.1, before)
            }
            None => (0, Vec::new()),
        };
        f.seek(SeekFrom::Start(start))
            .map_err(|e| ArchiveError::io(path, "read the file", e))?;
        let known: HashSet<[u8; 32]> = base
            .map(|b| b.parts.iter().map(|p| p.0).collect())
            .unwrap_or_default();
        let want = read_stat.size - start;
        let mut z = Compressor::new();
        let mut chunks = Vec::new();
        let mut pending = 0usize;
        let mut read = 0u64;
        let stream = fastcdc::v2020::StreamCDC::new(
            Read::take(&mut f, want.saturating_add(1)),
            MIN_CHUNK,
            AVG_CHUNK,
            MAX_CHUNK,
        );
        for c in stream {
            let c = c.map_err(|e| match e {
                fastcdc::v2020::Error::IoError(e) => ArchiveError::io(path, "read the file", e),
                other => ArchiveError::io(
                    path,
                    "read the file",
                    std::io::Error::other(other.to_string()),
                ),
            })?;
            read += c.length as u64;
            let hash = *blake3::hash(&c.data).as_bytes();
            let data = (!known.contains(&hash)).then(|| z.compress(&c.data));
            pending += data.as_ref().map_or(0, Vec::len);
            chunks.push(Chunk {
                hash,
                offset: start + c.offset,
                size: c.length as u32,
                z: data,
            });
            if pending > AHEAD_BYTES {
                let sent: Vec<Chunk> = chunks
                    .iter_mut()
                    .filter_map(|c| {
                        c.z.take().map(|z| Chunk {
                            z: Some(z),
                            ..c.clone()
                        })
                    })
                    .collect();
                ahead(sent)?;
                pending = 0;
            }
        }
        // Kept only when the file is as it was when opened: nothing
        // appended, truncated or rewritten while it was read.
        let after = f
            .metadata()
            .map(|m| FileStat::of(&m))
            .map_err(|e| ArchiveError::io(path, "look at the file", e))?;
        if read != want || after != read_stat {
            continue;
        }
        let cut = Cut {
            chunks,
            size: read_stat.size,
            kept_before,
        };
        return Ok(Some(Prepared {
            path: path.to_path_buf(),
            format: format.to_string(),
            stat,
            append: append.map(|b| (b.version, b.parts.len() - 1)),
            base_version: base.map(|b| b.version),
            cut,
        }));
    }
    Err(ArchiveError::Changed {
        path: path.to_path_buf(),
        tries: TRIES,
    })
}

/// Why a prepared state could not be stored as it was prepared.
#[derive(Debug)]
pub(crate) enum StoreFailure {
    /// Another capture stored a later state meanwhile: prepare again.
    Moved,
    Err(ArchiveError),
}

/// Stores `p` in the open transaction `tx`.
pub(crate) fn store(
    tx: &rusqlite::Connection,
    db: &Path,
    p: &Prepared,
) -> Result<Captured, StoreFailure> {
    let sql = |e| StoreFailure::Err(ArchiveError::sql(db, e));
    let now = now_ns();
    let source: i64 = tx
        .prepare_cached(
            "INSERT INTO sources(path, format, first_ns) VALUES (?1, ?2, ?3)
             ON CONFLICT(path) DO UPDATE SET format = excluded.format RETURNING id",
        )
        .and_then(|mut st| {
            st.query_row(rusqlite::params![path_text(&p.path), p.format, now], |r| {
                r.get(0)
            })
        })
        .map_err(sql)?;
    let latest: Option<(i64, i64, i64, i64, Vec<u8>)> = tx
        .prepare_cached(
            "SELECT id, size, mtime_ns, inode, digest FROM versions WHERE source = ?1
             ORDER BY id DESC LIMIT 1",
        )
        .and_then(|mut st| {
            st.query_row([source], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .optional()
        })
        .map_err(sql)?;
    if latest.as_ref().map(|l| l.0) != p.base_version {
        return Err(StoreFailure::Moved);
    }
    let digest = p.cut.digest();
    if let Some((id, _, _, _, d)) = &latest {
        if d.as_slice() == digest.as_slice() {
            // The same bytes (a file touched, or put back): only its stat.
            tx.execute(
                "UPDATE versions SET seen_ns = ?2, size = ?3, mtime_ns = ?4, inode = ?5 WHERE id = ?1",
                rusqlite::params![id, now, p.stat.size as i64, p.stat.mtime_ns, p.stat.inode as i64],
            )
            .map_err(sql)?;
            return Ok(Captured::Unchanged);
        }
    }
    let missing = |e: rusqlite::Error| match e {
        // A chunk the preparation took as held is gone (forgotten
        // meanwhile): prepare again.
        rusqlite::Error::QueryReturnedNoRows => StoreFailure::Moved,
        e => StoreFailure::Err(ArchiveError::sql(db, e)),
    };
    match p.append {
        Some((version, keep)) => {
            let old: Vec<i64> = tx
                .prepare_cached("SELECT chunk FROM parts WHERE version = ?1 AND seq >= ?2")
                .and_then(|mut st| {
                    st.query_map(rusqlite::params![version, keep as i64], |r| r.get(0))?
                        .collect()
                })
                .map_err(sql)?;
            // The state it grew from stays a state: the first bytes of
            // this one.
            tx.execute(
                "INSERT OR IGNORE INTO grown(version, size, mtime_ns, inode, seen_ns)
                 SELECT id, size, mtime_ns, inode, seen_ns FROM versions WHERE id = ?1",
                [version],
            )
            .map_err(sql)?;
            tx.execute(
                "DELETE FROM parts WHERE version = ?1 AND seq >= ?2",
                rusqlite::params![version, keep as i64],
            )
            .map_err(sql)?;
            schema::write_parts(tx, version, keep as i64, &p.cut).map_err(missing)?;
            tx.execute(
                "UPDATE versions SET seen_ns = ?2, size = ?3, mtime_ns = ?4, inode = ?5,
                   digest = ?6, appends = appends + 1 WHERE id = ?1",
                rusqlite::params![
                    version,
                    now,
                    p.stat.size as i64,
                    p.stat.mtime_ns,
                    p.stat.inode as i64,
                    digest.as_slice()
                ],
            )
            .map_err(sql)?;
            schema::drop_unused(tx, &old).map_err(sql)?;
            Ok(Captured::Appended)
        }
        None => {
            tx.execute(
                "INSERT INTO versions(source, seen_ns, size, mtime_ns, inode, digest)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                rusqlite::params![
                    source,
                    now,
                    p.stat.size as i64,
                    p.stat.mtime_ns,
                    p.stat.inode as i64,
                    digest.as_slice()
                ],
            )
            .map_err(sql)?;
            let version = tx.last_insert_rowid();
            schema::write_parts(tx, version, 0, &p.cut).map_err(missing)?;
            Ok(if latest.is_some() {
                Captured::Rewritten
            } else {
                Captured::New
            })
        }
    }
}

/// Stores chunks sent ahead of their version.
pub(crate) fn store_ahead(tx: &rusqlite::Connection, chunks: &[Chunk]) -> rusqlite::Result<()> {
    chunks.iter().try_for_each(|c| schema::insert_chunk(tx, c))
}

/// Up to this many files, a capture looks up each one's latest state
/// alone instead of reading every source's.
const FEW_FILES: usize = 256;

/// How many times a capture that another one overtook is tried again.
const STORE_TRIES: u32 = 4;

/// What a worker hands the writer.
enum Msg {
    Ahead(Vec<Chunk>),
    Ready(usize, Box<Prepared>, u64),
    Same,
    Failed(usize, String),
}

/// A batch is committed once it holds this many compressed bytes, or
/// this many files.
const BATCH_BYTES: u64 = 128 << 20;
const BATCH_FILES: usize = 2000;

impl Archive {
    /// Captures the file at `path` (a session file of `format`) now: its
    /// state is stored when the archive does not hold it yet. Stored and
    /// durable when this returns.
    pub fn capture(&mut self, path: &Path, format: &str) -> Result<Captured, ArchiveError> {
        let db = self.db.clone();
        for _ in 0..STORE_TRIES {
            let base = base(&self.conn, path).map_err(|e| ArchiveError::sql(&db, e))?;
            let prepared = {
                let conn = &self.conn;
                let mut ahead = |chunks: Vec<Chunk>| {
                    store_ahead(conn, &chunks).map_err(|e| ArchiveError::sql(&db, e))
                };
                prepare(path, format, base.as_ref(), From::File, &mut ahead)?
            };
            let Some(p) = prepared else {
                return Ok(Captured::Unchanged);
            };
            let tx = schema::immediate(&mut self.conn).map_err(|e| ArchiveError::sql(&db, e))?;
            match store(&tx, &db, &p) {
                Ok(c) => {
                    tx.commit().map_err(|e| ArchiveError::sql(&db, e))?;
                    return Ok(c);
                }
                Err(StoreFailure::Moved) => continue,
                Err(StoreFailure::Err(e)) => return Err(e),
            }
        }
        Err(ArchiveError::Changed {
            path: path.to_path_buf(),
            tries: STORE_TRIES,
        })
    }

    /// Captures every file of `files` (path and format) whose state the
    /// archive does not hold: read and cut on two threads, stored from this
    /// one in few transactions. A file that cannot be kept is reported and
    /// the others go on. `progress` gets files done and to do.
    pub fn capture_all(
        &mut self,
        files: &[(PathBuf, String)],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<CaptureReport, ArchiveError> {
        let db = self.db.clone();
        // A few files (the recently written ones a command's refresh
        // reads) are looked up one by one; many, with one read of them all.
        let latest = if files.len() <= FEW_FILES {
            let mut m = std::collections::HashMap::new();
            for (p, _) in files {
                if let Some(s) = self.source(p)? {
                    m.insert(path_text(p), s.latest);
                }
            }
            m
        } else {
            self.latest_stats()?
        };
        let mut report = CaptureReport {
            files: files.len(),
            ..CaptureReport::default()
        };
        // Files whose stat is the latest version's are not read at all.
        let todo: Vec<usize> = files
            .iter()
            .enumerate()
            .filter(|(_, (p, _))| {
                let now = std::fs::symlink_metadata(p).ok().map(|m| FileStat::of(&m));
                now.is_none_or(|s| latest.get(&path_text(p)) != Some(&s))
            })
            .map(|(i, _)| i)
            .collect();
        report.unchanged = files.len() - todo.len();
        let total = todo.len();
        progress(0, total);
        if todo.is_empty() {
            return Ok(report);
        }
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 4)
            .min(total);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut retry: Vec<usize> = Vec::new();
        std::thread::scope(|scope| -> Result<(), ArchiveError> {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Msg>(4);
            for _ in 0..workers {
                let tx = tx.clone();
                let next = &next;
                let todo = &todo;
                let db = &db;
                scope.spawn(move || {
                    let conn = match schema::open(db, true) {
                        Ok(c) => c,
                        Err(e) => {
                            let _ = tx.send(Msg::Failed(usize::MAX, e.to_string()));
                            return;
                        }
                    };
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&i) = todo.get(k) else { break };
                        let (path, format) = &files[i];
                        let msg = match base(&conn, path) {
                            Err(e) => Msg::Failed(i, ArchiveError::sql(db, e).to_string()),
                            Ok(b) => {
                                let mut ahead = |c: Vec<Chunk>| {
                                    tx.send(Msg::Ahead(c)).map_err(|_| ArchiveError::Changed {
                                        path: path.clone(),
                                        tries: 0,
                                    })
                                };
                                match prepare(path, format, b.as_ref(), From::File, &mut ahead) {
                                    Ok(None) => Msg::Same,
                                    Ok(Some(p)) => {
                                        let read = p.stat.size
                                            - p.cut
                                                .chunks
                                                .first()
                                                .map_or(p.stat.size, |c| c.offset);
                                        Msg::Ready(i, Box::new(p), read)
                                    }
                                    Err(e) => Msg::Failed(i, e.to_string()),
                                }
                            }
                        };
                        if tx.send(msg).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let mut done = 0usize;
            let mut t = schema::immediate(&mut self.conn).map_err(|e| ArchiveError::sql(&db, e))?;
            let (mut batch_bytes, mut batch_files) = (0u64, 0usize);
            for msg in rx {
                match msg {
                    Msg::Ahead(chunks) => {
                        store_ahead(&t, &chunks).map_err(|e| ArchiveError::sql(&db, e))?;
                        let stored = stored_bytes(&chunks);
                        batch_bytes += stored;
                        report.bytes_stored += stored;
                        continue;
                    }
                    Msg::Same => report.unchanged += 1,
                    Msg::Failed(i, message) => report.failed.push(FileFailure {
                        path: files
                            .get(i)
                            .map(|f| f.0.clone())
                            .unwrap_or_else(|| db.clone()),
                        message,
                    }),
                    Msg::Ready(i, p, read) => {
                        let sp = t.savepoint().map_err(|e| ArchiveError::sql(&db, e))?;
                        match store(&sp, &db, &p) {
                            Ok(c) => {
                                sp.commit().map_err(|e| ArchiveError::sql(&db, e))?;
                                report.count(c);
                                report.bytes_read += read;
                                let stored = p.cut.stored_bytes();
                                report.bytes_stored += stored;
                                batch_bytes += stored;
                                batch_files += 1;
                            }
                            Err(StoreFailure::Moved) => {
                                drop(sp);
                                retry.push(i);
                            }
                            Err(StoreFailure::Err(e)) => {
                                drop(sp);
                                report.failed.push(FileFailure {
                                    path: p.path.clone(),
                                    message: e.to_string(),
                                });
                            }
                        }
                    }
                }
                done += 1;
                progress(done, total);
                if batch_bytes >= BATCH_BYTES || batch_files >= BATCH_FILES {
                    t.commit().map_err(|e| ArchiveError::sql(&db, e))?;
                    t = schema::immediate(&mut self.conn).map_err(|e| ArchiveError::sql(&db, e))?;
                    (batch_bytes, batch_files) = (0, 0);
                }
            }
            t.commit().map_err(|e| ArchiveError::sql(&db, e))?;
            Ok(())
        })?;
        // Files another process captured meanwhile, one at a time.
        for i in retry {
            let (path, format) = &files[i];
            match self.capture(path, format) {
                Ok(c) => report.count(c),
                Err(e) => report.failed.push(FileFailure {
                    path: path.clone(),
                    message: e.to_string(),
                }),
            }
        }
        if !report.failed.is_empty() {
            // Chunks sent ahead for a file that then failed.
            self.sweep()?;
        }
        Ok(report)
    }

    /// The latest version's stat of every source, by path.
    fn latest_stats(&self) -> Result<std::collections::HashMap<String, FileStat>, ArchiveError> {
        let r = self
            .conn
            .prepare_cached(
                "SELECT s.path, v.size, v.mtime_ns, v.inode FROM sources s
                 JOIN versions v ON v.id = (SELECT max(id) FROM versions WHERE source = s.id)",
            )
            .and_then(|mut st| {
                st.query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        FileStat {
                            size: r.get::<_, i64>(1)? as u64,
                            mtime_ns: r.get(2)?,
                            inode: r.get::<_, i64>(3)? as u64,
                        },
                    ))
                })?
                .collect()
            });
        self.sql(r)
    }
}
