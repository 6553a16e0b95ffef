//! Health checks and repairs of append-only JSONL session files, for
//! `agentlog doctor`: torn tails, invalid lines, permissions, locks, and
//! leftovers of earlier crashes.

use crate::append::{inspect_tail, Tail};
use crate::lock::{self, LockHolder, LockState};
use crate::{AppendOptions, AppendWriter, LockMode, Recovery, StoreError, SyncPolicy};
use agentlog_formats::Diagnostic;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// Most invalid lines listed one by one; the rest are counted.
pub const MAX_LISTED_LINES: usize = 20;

/// What [`check_jsonl`] found in one file.
#[derive(Clone, Debug)]
pub struct JsonlCheck {
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Number of whole (newline-terminated) lines.
    pub lines: u64,
    /// Invalid whole lines (1-based line number, problem), at most
    /// [`MAX_LISTED_LINES`].
    pub invalid: Vec<(u64, String)>,
    /// Number of invalid whole lines in all.
    pub invalid_count: u64,
    /// The state of the last line.
    pub tail: Tail,
    /// The line number of the last line (for a torn tail).
    pub tail_line: u64,
    /// The file's permission bits (Unix).
    pub mode: Option<u32>,
    /// The permission bits of its directory (Unix).
    pub dir_mode: Option<u32>,
    /// Whether a writer holds the file.
    pub lock: LockState,
    /// Sidecar files of earlier repairs beside the file.
    pub sidecars: Vec<PathBuf>,
}

impl JsonlCheck {
    /// Returns the bytes a repair would cut off (a torn tail).
    pub fn torn_bytes(&self) -> u64 {
        match self.tail {
            Tail::Torn { keep } => self.bytes - keep,
            _ => 0,
        }
    }

    /// True when a writer holds the file now.
    pub fn is_held(&self) -> bool {
        matches!(self.lock, LockState::Held(_))
    }

    /// Returns the problems found, as diagnostics with file and line.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let p = self.path.as_path();
        let mut out = Vec::new();
        for (line, msg) in &self.invalid {
            out.push(Diagnostic::error(
                p,
                Some(*line),
                "invalid-json",
                format!("{msg}; readers skip this line"),
            ));
        }
        if self.invalid_count > self.invalid.len() as u64 {
            out.push(Diagnostic::error(
                p,
                None,
                "invalid-json",
                format!(
                    "{} more invalid lines not listed",
                    self.invalid_count - self.invalid.len() as u64
                ),
            ));
        }
        let held_by = match &self.lock {
            LockState::Held(h) => Some(holder_text(h.as_ref())),
            _ => None,
        };
        match (self.tail, &held_by) {
            (Tail::Torn { .. }, Some(h)) => out.push(Diagnostic::info(
                p,
                Some(self.tail_line),
                "write-in-progress",
                format!("the last line is incomplete, but a writer holds the file ({h}): it may still be writing"),
            )),
            (Tail::Torn { .. }, None) => out.push(Diagnostic::warning(
                p,
                Some(self.tail_line),
                "torn-tail",
                format!(
                    "the last {} bytes are an incomplete or invalid line (a write cut short); `agentlog doctor --repair` moves them to a sidecar file",
                    self.torn_bytes()
                ),
            )),
            (Tail::MissingNewline, None) => out.push(Diagnostic::warning(
                p,
                Some(self.tail_line),
                "missing-newline",
                "the last line is whole but lacks its newline; the next append would glue onto it; `agentlog doctor --repair` adds it",
            )),
            _ => {}
        }
        if let Some(m) = self.mode {
            if m & 0o077 != 0 {
                out.push(Diagnostic::warning(
                    p,
                    None,
                    "permissions",
                    format!("mode {m:04o} lets other users read or change the session; run `chmod 600 {}`", p.display()),
                ));
            }
        }
        if let Some(m) = self.dir_mode {
            if m & 0o077 != 0 && m & 0o1000 == 0 {
                out.push(Diagnostic::info(
                    p,
                    None,
                    "dir-permissions",
                    format!("its directory has mode {m:04o}; session directories agentlog creates are 0700"),
                ));
            }
        }
        match &self.lock {
            LockState::Stale(h) => out.push(Diagnostic::warning(
                p,
                None,
                "stale-lock",
                format!(
                    "{} names a writer ({}) that no longer holds the file; `agentlog doctor --repair` removes it",
                    lock::holder_path(p).display(),
                    holder_text(h.as_ref())
                ),
            )),
            LockState::Held(h) => out.push(Diagnostic::info(
                p,
                None,
                "locked",
                format!("a writer holds the file: {}", holder_text(h.as_ref())),
            )),
            LockState::Free => {}
        }
        for s in &self.sidecars {
            out.push(Diagnostic::info(
                p,
                None,
                "sidecar",
                format!(
                    "bytes cut off by an earlier repair are kept in {}",
                    s.display()
                ),
            ));
        }
        out
    }
}

fn holder_text(h: Option<&LockHolder>) -> String {
    match h {
        Some(h) => h.to_string(),
        None => "holder unknown".to_string(),
    }
}

/// Checks the JSONL file at `path` without changing it: every line is read
/// (streaming), the tail inspected, the mode, the lock and the sidecars of
/// earlier repairs looked at.
pub fn check_jsonl(path: &Path) -> Result<JsonlCheck, StoreError> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| StoreError::io(path, "stat", e))?;
    if meta.file_type().is_symlink() {
        return Err(StoreError::Symlink {
            path: path.to_path_buf(),
        });
    }
    if !meta.is_file() {
        return Err(StoreError::NotRegularFile {
            path: path.to_path_buf(),
        });
    }
    let mut file = File::open(path).map_err(|e| StoreError::io(path, "open", e))?;
    let bytes = file
        .metadata()
        .map_err(|e| StoreError::io(path, "stat", e))?
        .len();
    let mut check = JsonlCheck {
        path: path.to_path_buf(),
        bytes,
        lines: 0,
        invalid: Vec::new(),
        invalid_count: 0,
        tail: Tail::Clean,
        tail_line: 0,
        mode: None,
        dir_mode: None,
        lock: LockState::Free,
        sidecars: Vec::new(),
    };
    check.tail = inspect_tail(&mut file, bytes).map_err(|e| StoreError::io(path, "read", e))?;
    let torn_from = match check.tail {
        Tail::Torn { keep } => keep,
        _ => u64::MAX,
    };
    let mut r = BufReader::with_capacity(256 * 1024, &file);
    std::io::Seek::seek(&mut r, std::io::SeekFrom::Start(0))
        .map_err(|e| StoreError::io(path, "seek", e))?;
    let mut line = Vec::new();
    let mut offset = 0u64;
    loop {
        line.clear();
        let n = r
            .read_until(b'\n', &mut line)
            .map_err(|e| StoreError::io(path, "read", e))?;
        if n == 0 {
            break;
        }
        let start = offset;
        offset += n as u64;
        let number = check.lines + 1;
        if start >= torn_from || line.last() != Some(&b'\n') {
            check.tail_line = number;
            break;
        }
        check.lines = number;
        let mut body = &line[..line.len() - 1];
        if number == 1 {
            body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
        }
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        if crate::read::is_blank(body) {
            continue;
        }
        if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
            check.invalid_count += 1;
            if check.invalid.len() < MAX_LISTED_LINES {
                let msg = if std::str::from_utf8(body).is_err() {
                    "not valid UTF-8".to_string()
                } else {
                    format!("not valid JSON ({e})")
                };
                check.invalid.push((number, msg));
            }
        }
    }
    if check.tail_line == 0 {
        check.tail_line = check.lines;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        check.mode = Some(meta.permissions().mode() & 0o7777);
        check.dir_mode = std::fs::metadata(crate::snapshot::parent_dir(path))
            .ok()
            .map(|m| m.permissions().mode() & 0o7777);
    }
    check.lock = lock::probe(path)?;
    check.sidecars = sidecars_of(path);
    Ok(check)
}

/// Returns the sidecar files (`<file>.torn-*`) beside `path`.
pub fn sidecars_of(path: &Path) -> Vec<PathBuf> {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return Vec::new();
    };
    let prefix = format!("{name}.torn-");
    let mut out: Vec<PathBuf> = std::fs::read_dir(crate::snapshot::parent_dir(path))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Repairs the tail of `path` the way opening it for appending does (a
/// torn tail is cut into a sidecar, a missing newline added), taking the
/// writer's lock: a file a writer holds is refused with
/// [`StoreError::Locked`].
pub fn repair_tail(path: &Path) -> Result<Recovery, StoreError> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| StoreError::io(path, "stat", e))?;
    if meta.file_type().is_symlink() {
        return Err(StoreError::Symlink {
            path: path.to_path_buf(),
        });
    }
    let (w, rec) = AppendWriter::open(
        path,
        AppendOptions {
            sync: SyncPolicy::None,
            lock: LockMode::Fail,
        },
    )?;
    w.close()?;
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_invalid_lines_and_a_torn_tail_and_repairs_the_tail() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, b"{\"a\":1}\nnot json\n\n{\"b\":2}\n{\"c\":").unwrap();
        let c = check_jsonl(&p).unwrap();
        assert_eq!(c.lines, 4);
        assert_eq!(
            c.invalid,
            vec![(
                2,
                "not valid JSON (expected ident at line 1 column 2)".to_string()
            )]
        );
        assert_eq!(c.tail, Tail::Torn { keep: 26 });
        assert_eq!(c.tail_line, 5);
        assert_eq!(c.torn_bytes(), 5);
        let codes: Vec<_> = c.diagnostics().iter().map(|d| (d.line, d.code)).collect();
        assert!(codes.contains(&(Some(2), "invalid-json")), "{codes:?}");
        assert!(codes.contains(&(Some(5), "torn-tail")), "{codes:?}");
        let rec = repair_tail(&p).unwrap();
        assert_eq!(rec.torn_bytes, 5);
        let c = check_jsonl(&p).unwrap();
        assert_eq!(c.tail, Tail::Clean);
        assert_eq!(c.sidecars, vec![rec.sidecar.unwrap()]);
        assert_eq!(c.lock, LockState::Free);
    }

    #[test]
    fn a_held_file_is_reported_not_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let (mut w, _) = AppendWriter::open(&p, AppendOptions::default()).unwrap();
        w.append_line(b"{}").unwrap();
        std::io::Write::write_all(
            &mut std::fs::OpenOptions::new().append(true).open(&p).unwrap(),
            b"{\"x\"",
        )
        .unwrap();
        let c = check_jsonl(&p).unwrap();
        let codes: Vec<_> = c.diagnostics().iter().map(|d| d.code).collect();
        assert!(
            codes.contains(&"write-in-progress") && codes.contains(&"locked"),
            "{codes:?}"
        );
        assert!(matches!(repair_tail(&p), Err(StoreError::Locked { .. })));
    }

    #[cfg(unix)]
    #[test]
    fn open_permissions_are_reported() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, b"{}\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let c = check_jsonl(&p).unwrap();
        assert!(c.diagnostics().iter().any(|d| d.code == "permissions"));
    }
}
