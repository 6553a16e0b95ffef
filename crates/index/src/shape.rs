//! The shape of a large session: what a viewer must know of the whole
//! session to show its first entries after reading only the lines that
//! hold them.
//!
//! A page of a session shows one branch: the entries from the root to the
//! session's leaf, a page at a time, under a header that counts them all
//! (entries, branch points, tokens). Reading a 100 MB file to show its
//! first 100 entries took a second; the index has just read the whole file
//! anyway, so for every file of at least [`shape_min`] bytes it keeps the
//! session's shape ([`Shape`]): each entry's id, parent and line, the leaf,
//! the metadata, the summed usage and the subagents the tool calls started.
//! With it a viewer finds the entries of the first page and the lines they
//! end at, and reads the file only that far (`agentlog_web::first`).
//!
//! A shape belongs to one state of its file (size, modification time and
//! inode); a file that changed since is read whole. An update that reads
//! only what was appended to a file drops its shape (the reader's metadata
//! of the whole file is not known from the appended lines); a file that has
//! not changed for a while gets one again from [`Index::make_shapes`],
//! which the web viewer calls as it keeps the index fresh.
//!
//! Only the formats the viewer reads by line keep shapes
//! ([`SHAPED_FORMATS`]).

use crate::error::SqlContext;
use crate::files::FileStat;
use crate::{Index, IndexError};
use agentlog_model::{Entry, EntryKind, Session, SessionMeta, Usage};
use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};

/// Files smaller than this keep no shape: they read fast enough whole.
const SHAPE_MIN: u64 = 8 << 20;

/// The smallest file that keeps a shape: [`SHAPE_MIN`], or the bytes
/// `AGENTLOG_SHAPE_MIN` names (for tests, which check the shortcut on
/// small files).
pub fn shape_min() -> u64 {
    static MIN: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MIN.get_or_init(|| {
        std::env::var("AGENTLOG_SHAPE_MIN")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(SHAPE_MIN)
    })
}

/// The formats whose files keep shapes: those whose first lines give the
/// first entries (JSON Lines, one record after another), for which the web
/// viewer reads a first page from them.
pub const SHAPED_FORMATS: [&str; 4] = ["claude", "codex", "gemini", "pi"];

/// True when a file of `format` at `path` is read by line: one of the
/// [`SHAPED_FORMATS`] in JSON Lines.
pub fn by_line(format: &str, path: &std::path::Path) -> bool {
    SHAPED_FORMATS.contains(&format) && path.extension().is_some_and(|e| e == "jsonl")
}

/// True when a file of `format` at `path` of `size` bytes keeps a shape.
pub fn shaped(format: &str, path: &std::path::Path, size: u64) -> bool {
    size >= shape_min() && by_line(format, path)
}

/// A parent that is no entry of the session (or the entry itself).
const LOOSE: i64 = -2;

/// What made a shape: this agentlog's version and the shape's own. A shape
/// another version made is not used (its readers may make other metadata,
/// counts or sums of the same file).
const MADE_BY: &str = concat!(env!("CARGO_PKG_VERSION"), "/shape-1");

/// The largest shape read back (uncompressed); a larger one is damage.
const MAX_SHAPE: u64 = 1 << 30;

/// What a viewer must know of a whole session to show a page of it from a
/// part of its file (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    /// [`MADE_BY`] of the agentlog that made it.
    made_by: String,
    /// The session's metadata, as read from the whole file.
    pub meta: SessionMeta,
    /// The session's leaf ([`Session::leaf_id`]).
    pub leaf_id: Option<String>,
    /// Each entry's id, in the session's order.
    pub ids: Vec<String>,
    /// Each entry's parent: the index of an entry with that id, -1 for
    /// none, [`LOOSE`] for one that `loose` names.
    parents: Vec<i64>,
    /// The parents that name no entry, by entry index.
    loose: Vec<(usize, String)>,
    /// Each entry's 1-based line.
    pub lines: Vec<u64>,
    /// The usage of every model response, summed
    /// ([`Session::total_usage`]).
    pub usage: Usage,
    /// Each (tool call id, subagent id) the session's tool results name
    /// ([`Entry::subagent_calls`]).
    pub subagent_calls: Vec<(String, String)>,
    /// Each (tool call id, tool name) of the session's tool calls
    /// ([`Entry::tool_call_names`]; a later call of an id names it), by
    /// which a page names the call a result answers.
    pub tool_names: Vec<(String, String)>,
    /// The session's first prompt ([`Session::first_prompt`]), which a page
    /// without a title is named by.
    pub first_prompt: Option<String>,
    /// Each entry's [`fingerprint`]: an entry read from the first lines of
    /// the file is the entry of the whole file when they match (a Gemini
    /// CLI record is superseded by a later one of the same message; a
    /// Codex event is a copy of an item that may come later).
    pub fingerprints: Vec<u64>,
}

/// Returns a digest of everything `entry` holds (its JSON form, hashed).
pub fn fingerprint(entry: &Entry) -> u64 {
    struct Digest(foldhash::quality::FoldHasher<'static>);
    impl std::io::Write for Digest {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            std::hash::Hasher::write(&mut self.0, buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    static SEED: foldhash::quality::FixedState =
        foldhash::quality::FixedState::with_seed(0x6167_6c6f_6773);
    let mut d = Digest(std::hash::BuildHasher::build_hasher(&SEED));
    // Writing to a digest cannot fail, and an entry always serializes.
    let _ = serde_json::to_writer(&mut d, entry);
    std::hash::Hasher::finish(&d.0)
}

impl Shape {
    /// Returns the shape of `session`, or `None` when an entry does not say
    /// which line it was read from.
    pub fn of(session: &Session) -> Option<Shape> {
        let mut lines = Vec::with_capacity(session.entries.len());
        for e in &session.entries {
            lines.push(e.line?);
        }
        let mut first = foldhash::HashMap::default();
        for (i, e) in session.entries.iter().enumerate() {
            first.entry(e.id.as_str()).or_insert(i);
        }
        let mut loose = Vec::new();
        let parents = session
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| match e.parent_id.as_deref() {
                None => -1,
                Some(p) => match first.get(p) {
                    Some(&j) => j as i64,
                    None => {
                        loose.push((i, p.to_string()));
                        LOOSE
                    }
                },
            })
            .collect();
        Some(Shape {
            made_by: MADE_BY.to_string(),
            meta: session.meta.clone(),
            leaf_id: session.leaf_id.clone(),
            ids: session.entries.iter().map(|e| e.id.clone()).collect(),
            parents,
            loose,
            lines,
            usage: session.total_usage(),
            subagent_calls: session
                .entries
                .iter()
                .flat_map(Entry::subagent_calls)
                .map(|(c, a)| (c.to_string(), a.to_string()))
                .collect(),
            tool_names: {
                let mut names = foldhash::HashMap::default();
                for e in &session.entries {
                    names.extend(e.tool_call_names());
                }
                let mut names: Vec<(String, String)> = names
                    .into_iter()
                    .map(|(c, n)| (c.to_string(), n.to_string()))
                    .collect();
                names.sort_unstable();
                names
            },
            first_prompt: session.first_prompt(),
            fingerprints: session.entries.iter().map(fingerprint).collect(),
        })
    }

    /// Returns the parent of entry `i`.
    pub fn parent(&self, i: usize) -> Option<&str> {
        match self.parents[i] {
            -1 => None,
            LOOSE => self
                .loose
                .binary_search_by_key(&i, |(k, _)| *k)
                .ok()
                .map(|k| self.loose[k].1.as_str()),
            j => self.ids.get(j as usize).map(String::as_str),
        }
    }

    /// Returns a session of the same tree with none of the content: each
    /// entry's id, parent and line (what the branch, its length and the
    /// branch points are worked out from, by the model's own
    /// [`agentlog_model::Tree`]).
    pub fn skeleton(&self) -> Session {
        let mut s = Session::new(self.meta.clone());
        s.entries = (0..self.ids.len())
            .map(|i| {
                let mut e = Entry::new(
                    self.ids[i].clone(),
                    self.parent(i).map(str::to_string),
                    EntryKind::ThinkingLevelChange {
                        level: String::new(),
                    },
                );
                e.line = Some(self.lines[i]);
                e
            })
            .collect();
        s.leaf_id = self.leaf_id.clone();
        s
    }

    fn to_blob(&self) -> Result<Vec<u8>, std::io::Error> {
        let json = serde_json::to_vec(self)?;
        zstd::bulk::compress(&json, 1)
    }

    fn from_blob(z: &[u8]) -> Option<Shape> {
        let mut json = Vec::new();
        let decoder = zstd::stream::read::Decoder::new(z).ok()?;
        std::io::Read::read_to_end(&mut std::io::Read::take(decoder, MAX_SHAPE + 1), &mut json)
            .ok()?;
        if json.len() as u64 > MAX_SHAPE {
            return None;
        }
        let shape: Shape = serde_json::from_slice(&json).ok()?;
        let n = shape.ids.len();
        let whole = shape.made_by == MADE_BY
            && shape.parents.len() == n
            && shape.lines.len() == n
            && shape.fingerprints.len() == n
            && shape.parents.iter().all(|&p| p >= LOOSE && p < n as i64)
            && shape.loose.windows(2).all(|w| w[0].0 < w[1].0)
            && shape.loose.iter().all(|(i, _)| *i < n);
        whole.then_some(shape)
    }
}

/// Reads the file at `path` of `format` whole, as an update reads it in
/// full, and returns its session's shape.
fn read_shape(path: &std::path::Path, format: &str) -> Option<Shape> {
    let format = agentlog_formats::registry::by_name(format)?;
    let bytes = std::fs::read(path).ok()?;
    // A last line without its newline: an update leaves it for later, but
    // a page reads it; no shape until it is whole.
    if crate::files::incremental(format.name()) && crate::files::whole_lines(&bytes) < bytes.len() {
        return None;
    }
    let read = format.read_bytes_to_show(path, &bytes).ok()?;
    Shape::of(&read.session)
}

/// The table of shapes, made with a new index and, when missing, by every
/// writer and by [`Index::make_shapes`]: `file` is the id of the file in `files`, `path`, `size`,
/// `mtime_ns` and `inode` the state of the file the shape is of, `z` the
/// shape (zstd-compressed JSON).
pub(crate) const TABLE: &str = "
CREATE TABLE IF NOT EXISTS shapes(
  file INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  inode INTEGER NOT NULL,
  z BLOB NOT NULL
);";

/// Keeps `shape` as the shape of file `id` at `path` in the state `stat`.
pub(crate) fn put(
    conn: &rusqlite::Connection,
    at: &std::path::Path,
    id: i64,
    path: &str,
    stat: &FileStat,
    shape: &Shape,
) -> Result<(), IndexError> {
    let z = shape.to_blob().map_err(|source| IndexError::Io {
        path: at.to_path_buf(),
        source,
    })?;
    conn.prepare_cached(
        "INSERT OR REPLACE INTO shapes(file, path, size, mtime_ns, inode, z)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )
    .and_then(|mut st| {
        st.execute(rusqlite::params![
            id,
            path,
            stat.size as i64,
            stat.mtime_ns,
            stat.inode as i64,
            z
        ])
    })
    .at(at)?;
    Ok(())
}

impl Index {
    /// Makes the shapes of at most `limit` files that keep none: files of
    /// the [`SHAPED_FORMATS`] of at least [`shape_min`] bytes, indexed as
    /// they are now, unchanged for `quiet` (an update that read only what
    /// was appended to one dropped its shape). Each is read whole; one that
    /// changes meanwhile is left for the next update. Returns how many were
    /// made.
    pub fn make_shapes(
        &mut self,
        quiet: std::time::Duration,
        limit: usize,
    ) -> Result<usize, IndexError> {
        self.conn.execute_batch(TABLE).at(&self.path)?;
        let before = crate::time::now_ms()
            .saturating_sub(quiet.as_millis() as i64)
            .saturating_mul(1_000_000);
        let wanted: Vec<(i64, String, String, FileStat)> = self
            .conn
            .prepare_cached(
                "SELECT f.id, f.path, f.format, f.size, f.mtime_ns, f.inode FROM files f
                 WHERE f.size >= ?1 AND f.mtime_ns <= ?2 AND f.error IS NULL
                   AND NOT EXISTS (SELECT 1 FROM shapes s WHERE s.file = f.id AND s.path = f.path
                                     AND s.size = f.size AND s.mtime_ns = f.mtime_ns
                                     AND s.inode = f.inode)
                 ORDER BY f.mtime_ns DESC",
            )
            .and_then(|mut st| {
                st.query_map(rusqlite::params![shape_min() as i64, before], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        FileStat {
                            size: r.get::<_, i64>(3)? as u64,
                            mtime_ns: r.get(4)?,
                            inode: r.get::<_, i64>(5)? as u64,
                            is_file: true,
                            kept: false,
                        },
                    ))
                })?
                .collect::<Result<_, _>>()
            })
            .at(&self.path)?;
        let mut made = 0;
        for (id, path, format, stat) in wanted {
            if made == limit {
                break;
            }
            let p = std::path::Path::new(&path);
            if !shaped(&format, p, stat.size) {
                continue;
            }
            let same = |s: Option<FileStat>| s.is_some_and(|s| s.same_state(&stat));
            if !same(crate::files::stat(p)) {
                continue;
            }
            let Some(shape) = read_shape(p, &format) else {
                continue;
            };
            if !same(crate::files::stat(p)) {
                continue;
            }
            put(&self.conn, &self.path, id, &path, &stat, &shape)?;
            made += 1;
        }
        Ok(made)
    }

    /// Returns the shape the index keeps of the session file at `path`, when
    /// it keeps one of the file as it is now (same size, modification time
    /// and inode); `None` otherwise, and for an index made before shapes
    /// were kept.
    pub fn shape(&self, path: &str) -> Result<Option<Shape>, IndexError> {
        let Some(now) = crate::files::stat(std::path::Path::new(path)) else {
            return Ok(None);
        };
        let row = self
            .conn
            .prepare_cached(
                "SELECT s.size, s.mtime_ns, s.inode, s.z FROM files f JOIN shapes s ON s.file = f.id
                 WHERE f.path = ?1 AND s.path = ?1",
            )
            .and_then(|mut st| {
                st.query_row([path], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, Vec<u8>>(3)?,
                    ))
                })
                .optional()
            });
        let row = match row {
            Ok(r) => r,
            // An index no writer of this version has opened yet has no
            // table of shapes.
            Err(rusqlite::Error::SqliteFailure(_, Some(m))) if m.contains("no such table") => {
                return Ok(None)
            }
            Err(e) => return Err(e).at(&self.path),
        };
        let Some((size, mtime_ns, inode, z)) = row else {
            return Ok(None);
        };
        let kept = FileStat {
            size: size as u64,
            mtime_ns,
            inode: inode as u64,
            is_file: true,
            kept: false,
        };
        if !kept.same_state(&now) {
            return Ok(None);
        }
        Ok(Shape::from_blob(&z))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentlog_model::{Agent, Message, Role};

    fn entry(id: &str, parent: Option<&str>, line: u64) -> Entry {
        let mut e = Entry::new(
            id,
            parent.map(str::to_string),
            EntryKind::Message(Message::new(Role::User)),
        );
        e.line = Some(line);
        e
    }

    #[test]
    fn a_skeleton_keeps_every_parent_loose_duplicate_and_self() {
        let mut s = Session::new(SessionMeta::new("s", Agent::Claude));
        s.entries = vec![
            entry("a", None, 1),
            entry("b", Some("a"), 2),
            entry("c", Some("gone"), 3),
            entry("b", Some("b"), 4),
            entry("d", Some("b"), 6),
        ];
        s.leaf_id = Some("d".into());
        let shape = Shape::of(&s).unwrap();
        let back = Shape::from_blob(&shape.to_blob().unwrap()).unwrap();
        assert_eq!(back, shape);
        let sk = back.skeleton();
        let got: Vec<(&str, Option<&str>, Option<u64>)> = sk
            .entries
            .iter()
            .map(|e| (e.id.as_str(), e.parent_id.as_deref(), e.line))
            .collect();
        let want: Vec<(&str, Option<&str>, Option<u64>)> = s
            .entries
            .iter()
            .map(|e| (e.id.as_str(), e.parent_id.as_deref(), e.line))
            .collect();
        assert_eq!(got, want);
        assert_eq!(sk.leaf_id.as_deref(), Some("d"));
    }

    #[test]
    fn no_shape_without_lines_and_none_from_a_damaged_blob() {
        let mut s = Session::new(SessionMeta::new("s", Agent::Claude));
        s.entries = vec![entry("a", None, 1)];
        s.entries[0].line = None;
        assert!(Shape::of(&s).is_none());
        s.entries[0].line = Some(1);
        let mut z = Shape::of(&s).unwrap();
        z.made_by = "0.0.0/shape-0".into();
        assert!(Shape::from_blob(&z.to_blob().unwrap()).is_none());
        let mut z = Shape::of(&s).unwrap();
        z.parents = vec![5];
        assert!(Shape::from_blob(&z.to_blob().unwrap()).is_none());
        assert!(Shape::from_blob(b"not zstd").is_none());
    }
}
