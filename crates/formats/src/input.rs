//! Reading input files safely: only regular files (never a FIFO, a device
//! such as `/dev/zero`, or a directory), and never more than a size cap.
//!
//! The cap is process-wide (default [`DEFAULT_MAX_BYTES`]); the command
//! line sets it from `AGENTLOG_MAX_INPUT` with [`set_max_bytes`]. Readers
//! take their input through [`read_file`] or [`open_file`].
//!
//! ```
//! let dir = std::env::temp_dir();
//! let err = agentlog_formats::input::read_file(&dir).unwrap_err();
//! assert!(err.to_string().contains("not a regular file"));
//! ```

use crate::FormatError;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many bytes of a file detection looks at.
pub const HEAD_BYTES: usize = 64 * 1024;

/// The default cap on one input file: 4 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 4 << 30;

static MAX_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_BYTES);

/// Sets the cap on the size of one input file, for the whole process.
pub fn set_max_bytes(max: u64) {
    MAX_BYTES.store(max, Ordering::Relaxed);
}

/// Returns the cap on the size of one input file.
pub fn max_bytes() -> u64 {
    MAX_BYTES.load(Ordering::Relaxed)
}

/// Parses a size such as `512M`, `4G`, `100k` or `12345` (bytes).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&s[..i], 1 << 20),
        (i, 'g' | 'G') => (&s[..i], 1 << 30),
        (i, 't' | 'T') => (&s[..i], 1 << 40),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

fn kind_of(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

pub(crate) fn too_big(path: &Path, size: u64, max: u64) -> FormatError {
    FormatError::io(
        path,
        std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "{size} bytes is over the input size cap of {max} bytes; raise it with AGENTLOG_MAX_INPUT (e.g. AGENTLOG_MAX_INPUT=16G)"
            ),
        ),
    )
}

/// An open input: a file on disk, or the kept bytes of one that is gone.
#[derive(Debug)]
pub enum Input {
    /// A regular file.
    File(std::fs::File),
    /// The bytes agentlog's archive kept of a file that is gone.
    Kept(std::io::Cursor<Vec<u8>>),
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Input::File(f) => f.read(buf),
            Input::Kept(c) => c.read(buf),
        }
    }
}

/// Opens `path` for reading when it is a regular file no larger than the
/// cap; returns the file and its size. Anything else is an error naming
/// what the path is. A file that is gone but kept in agentlog's archive is
/// read from there (see [`crate::archived`]).
pub fn open_file(path: &Path) -> Result<(Input, u64), FormatError> {
    match open_disk_file(path) {
        Ok((f, len)) => Ok((Input::File(f), len)),
        Err(e) => match read_kept(path) {
            Some(Ok(bytes)) => {
                let len = bytes.len() as u64;
                Ok((Input::Kept(std::io::Cursor::new(bytes)), len))
            }
            Some(Err(k)) => Err(k),
            None => Err(e),
        },
    }
}

/// Opens the file on disk at `path` (see [`open_file`]).
fn open_disk_file(path: &Path) -> Result<(std::fs::File, u64), FormatError> {
    let meta = std::fs::metadata(path).map_err(|e| FormatError::io(path, e))?;
    if !meta.is_file() {
        return Err(FormatError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{}, not a regular file; agentlog reads only regular files (use - to read standard input)",
                    kind_of(&meta.file_type())
                ),
            ),
        ));
    }
    let max = max_bytes();
    if meta.len() > max {
        return Err(too_big(path, meta.len(), max));
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        // Never block opening: the path could have become a FIFO since the
        // check above.
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK);
    }
    let f = o.open(path).map_err(|e| FormatError::io(path, e))?;
    let m = f.metadata().map_err(|e| FormatError::io(path, e))?;
    if !m.is_file() {
        return Err(FormatError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{}, not a regular file", kind_of(&m.file_type())),
            ),
        ));
    }
    Ok((f, m.len()))
}

/// Reads the whole of `path`: a regular file no larger than the cap. A
/// file that is gone but kept in agentlog's archive is read from there
/// (see [`crate::archived`]).
pub fn read_file(path: &Path) -> Result<Vec<u8>, FormatError> {
    let (f, len) = match open_disk_file(path) {
        Ok(o) => o,
        Err(e) => return read_kept(path).unwrap_or(Err(e)),
    };
    read_capped(path, f, len)
}

/// The kept bytes of a file that is not on disk (`None` when it is there,
/// or nothing keeps it).
pub fn read_kept(path: &Path) -> Option<Result<Vec<u8>, FormatError>> {
    if std::fs::symlink_metadata(path).is_ok() {
        return None;
    }
    crate::archived::read(path).map(|r| r.map_err(|e| FormatError::io(path, e)))
}

/// Reads all of `r` (standard input, say), failing once it passes the cap.
pub fn read_capped(path: &Path, r: impl Read, hint: u64) -> Result<Vec<u8>, FormatError> {
    let max = max_bytes();
    let mut buf = Vec::with_capacity(usize::try_from(hint.min(max)).unwrap_or(0));
    r.take(max.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| FormatError::io(path, e))?;
    if buf.len() as u64 > max {
        return Err(too_big(path, buf.len() as u64, max));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("x"), None);
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_directories_are_refused() {
        let err = read_file(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(err.contains("character device"), "{err}");
        let err = read_file(Path::new("/")).unwrap_err().to_string();
        assert!(err.contains("a directory"), "{err}");
    }
}
