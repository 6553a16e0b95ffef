//! Reading append-only JSONL files while a writer appends to them.
//!
//! A writer appends one whole line per `write`, but a reader can still
//! catch a line half-copied, or find the torn tail of a crashed writer.
//! These helpers return only whole lines — those ending in a newline — and
//! leave a last line without one for later: readers always see a prefix of
//! whole lines.

use crate::StoreError;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// True when the line is empty or only white space.
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Returns the prefix of `bytes` that ends with its last newline (empty
/// when there is none).
pub fn whole_lines(bytes: &[u8]) -> &[u8] {
    match bytes.iter().rposition(|&b| b == b'\n') {
        Some(i) => &bytes[..=i],
        None => &[],
    }
}

/// Reads the whole lines of the file at `path`: everything up to and
/// including its last newline. A last line without a newline (being written
/// or torn) is left out.
pub fn read_whole_lines(path: &Path) -> Result<Vec<u8>, StoreError> {
    let mut bytes = agentlog_formats::input::read_file(path)
        .map_err(|e| StoreError::io(path, "read", std::io::Error::other(e.to_string())))?;
    let keep = whole_lines(&bytes).len();
    bytes.truncate(keep);
    Ok(bytes)
}

/// Follows a JSONL file line by line, returning only whole lines and
/// picking up lines appended later.
///
/// ```no_run
/// # fn main() -> Result<(), agentlog_store::StoreError> {
/// let mut r = agentlog_store::read::LineReader::open(std::path::Path::new("s.jsonl"))?;
/// while let Some(line) = r.next_line()? {
///     println!("{}", String::from_utf8_lossy(&line));
/// }
/// // Later: more lines the writer has appended since.
/// let more = r.next_line()?;
/// # let _ = more;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct LineReader {
    path: PathBuf,
    file: File,
    /// Offset of the end of the last whole line returned.
    offset: u64,
    /// Bytes read past `offset` not yet returned.
    buf: Vec<u8>,
    /// Start of the unreturned part of `buf`.
    start: usize,
    line_no: u64,
}

impl LineReader {
    /// Opens `path` for reading from its start.
    pub fn open(path: &Path) -> Result<LineReader, StoreError> {
        let file = File::open(path).map_err(|e| StoreError::io(path, "open", e))?;
        Ok(LineReader {
            path: path.to_path_buf(),
            file,
            offset: 0,
            buf: Vec::new(),
            start: 0,
            line_no: 0,
        })
    }

    /// Opens `path` for reading from `offset`, which must be the end of a
    /// whole line (for example an earlier [`LineReader::offset`]).
    pub fn open_at(path: &Path, offset: u64) -> Result<LineReader, StoreError> {
        let mut r = LineReader::open(path)?;
        r.file
            .seek(SeekFrom::Start(offset))
            .map_err(|e| StoreError::io(path, "seek", e))?;
        r.offset = offset;
        Ok(r)
    }

    /// Returns the offset just past the last whole line returned.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Returns the 1-based number of the last line returned (counted from
    /// where the reader started).
    pub fn line_number(&self) -> u64 {
        self.line_no
    }

    /// Returns the next whole line without its newline, or `None` when no
    /// whole line is available yet. Call again later to pick up lines
    /// appended since. Fails when the file shrank below what was read (it
    /// was replaced or truncated).
    pub fn next_line(&mut self) -> Result<Option<Vec<u8>>, StoreError> {
        loop {
            if let Some(i) = self.buf[self.start..].iter().position(|&b| b == b'\n') {
                let line = self.buf[self.start..self.start + i].to_vec();
                self.start += i + 1;
                self.offset += i as u64 + 1;
                self.line_no += 1;
                return Ok(Some(line));
            }
            if self.start > 0 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            let before = self.buf.len();
            self.buf.resize(before + 64 * 1024, 0);
            let n = match self.file.read(&mut self.buf[before..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => 0,
                Err(e) => {
                    self.buf.truncate(before);
                    return Err(StoreError::io(&self.path, "read", e));
                }
            };
            self.buf.truncate(before + n);
            if n == 0 {
                let len = self
                    .file
                    .metadata()
                    .map_err(|e| StoreError::io(&self.path, "stat", e))?
                    .len();
                if len < self.offset {
                    return Err(StoreError::Invalid(format!(
                        "{}: the file shrank to {len} bytes below the {} already read; it was truncated or replaced",
                        self.path.display(),
                        self.offset
                    )));
                }
                return Ok(None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn leaves_out_a_last_line_without_newline() {
        assert_eq!(whole_lines(b"a\nb\nc"), b"a\nb\n");
        assert_eq!(whole_lines(b"abc"), b"");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, b"{}\n{\"a\"").unwrap();
        assert_eq!(read_whole_lines(&p).unwrap(), b"{}\n");
    }

    #[test]
    fn follows_lines_as_they_are_completed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, b"1\n2").unwrap();
        let mut r = LineReader::open(&p).unwrap();
        assert_eq!(r.next_line().unwrap().unwrap(), b"1");
        assert_eq!(r.next_line().unwrap(), None);
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"2\n3\n").unwrap();
        assert_eq!(r.next_line().unwrap().unwrap(), b"22");
        assert_eq!(r.next_line().unwrap().unwrap(), b"3");
        assert_eq!(r.next_line().unwrap(), None);
        assert_eq!(r.offset(), 7);
        assert_eq!(r.line_number(), 3);
        let mut r2 = LineReader::open_at(&p, 2).unwrap();
        assert_eq!(r2.next_line().unwrap().unwrap(), b"22");
        std::fs::write(&p, b"").unwrap();
        assert!(r.next_line().is_err());
    }
}
