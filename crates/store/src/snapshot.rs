//! Atomic whole-file snapshots: a reader sees the old file or the new one,
//! never a mix, and an acknowledged write survives a crash.
//!
//! [`write_atomic`] writes a temp file (0600) in the same directory, syncs
//! it, renames it over the target and syncs the directory. Every
//! snapshot-style format (resume state, acpx `session.json`, jido files)
//! goes through it.
//!
//! When the target is a symbolic link, the rename replaces the link itself
//! with a regular file; the file the link pointed at is left as it was.
//! A crash can leave a temp file behind (named `.<file>.<pid>.<n>.tmp`, see
//! [`is_temp_name`]); it never replaces the target and can be removed.

use crate::StoreError;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Creates `dir` and its missing parents; directories it creates are 0700.
/// Existing directories are left as they are.
pub fn ensure_dir(dir: &Path) -> Result<(), StoreError> {
    if dir.is_dir() {
        return Ok(());
    }
    if dir.exists() {
        return Err(StoreError::io(
            dir,
            "create directory",
            std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "exists and is not a directory",
            ),
        ));
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .map_err(|e| StoreError::io(dir, "create directory", e))
}

/// Syncs a directory so a rename or create inside it is durable.
pub fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        let d = File::open(dir).map_err(|e| StoreError::io(dir, "open directory", e))?;
        d.sync_all()
            .map_err(|e| StoreError::io(dir, "fsync directory", e))?;
    }
    let _ = dir;
    Ok(())
}

/// Writes `bytes` to `path` atomically: a temp file (0600) in the same
/// directory, synced, renamed over `path`, then the directory synced. On
/// failure the temp file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Like [`write_atomic`], but the content is streamed by `fill` into a
/// buffered writer (for snapshots too large to build in memory first).
pub fn write_atomic_with<F>(path: &Path, fill: F) -> Result<(), StoreError>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let dir = parent_dir(path);
    ensure_dir(&dir)?;
    if path.is_dir() {
        return Err(StoreError::NotRegularFile {
            path: path.to_path_buf(),
        });
    }
    let tmp = temp_beside(path);
    let result = (|| {
        let f = create_private(&tmp)?;
        let mut w = std::io::BufWriter::new(f);
        fill(&mut w).map_err(|e| StoreError::io(&tmp, "write", e))?;
        let f = w
            .into_inner()
            .map_err(|e| StoreError::io(&tmp, "write", e.into_error()))?;
        f.sync_all().map_err(|e| StoreError::io(&tmp, "fsync", e))?;
        drop(f);
        fs::rename(&tmp, path).map_err(|e| StoreError::io(path, "rename", e))?;
        sync_dir(&dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// How [`write_file_with`] treats a file already at the target path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Fail with an `AlreadyExists` error, leaving it as it is.
    Refuse,
    /// Replace it atomically (a symbolic link there is replaced itself;
    /// the file it points at is left as it was).
    Replace,
}

/// When [`write_file_with`]'s file reaches the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durable {
    /// Synced, and its directory too, before returning.
    Now,
    /// Left to the caller, who writes many files and syncs them all at once
    /// with [`sync_filesystem`] (the file is still moved into place whole).
    Later,
}

/// Makes everything written to the file system holding `dir` durable (one
/// `syncfs`, for many files written with [`Durable::Later`]).
pub fn sync_filesystem(dir: &Path) -> Result<(), StoreError> {
    #[cfg(target_os = "linux")]
    {
        let d = File::open(dir).map_err(|e| StoreError::io(dir, "open directory", e))?;
        rustix::fs::syncfs(&d).map_err(|e| StoreError::io(dir, "sync the file system", e.into()))
    }
    #[cfg(not(target_os = "linux"))]
    {
        sync_dir(dir)
    }
}

/// Writes a whole file at `path` through a private temp file (0600) in the
/// same directory (created 0700 when missing): `fill` writes the content,
/// which is synced, then moved into place, and the directory synced. With
/// [`Existing::Refuse`] the move is a hard link, which never replaces
/// anything (a planted symbolic link included); with [`Existing::Replace`]
/// it is a rename. Nothing is ever written through a symbolic link, and on
/// failure `path` is as it was and the temp file is removed. Returns what
/// `fill` returned.
pub fn write_file_with<T, E>(
    path: &Path,
    existing: Existing,
    fill: impl FnOnce(&mut dyn Write) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<StoreError>,
{
    write_file_durable(path, existing, Durable::Now, fill)
}

/// [`write_file_with`], syncing now or leaving it to the caller.
pub fn write_file_durable<T, E>(
    path: &Path,
    existing: Existing,
    durable: Durable,
    fill: impl FnOnce(&mut dyn Write) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<StoreError>,
{
    let dir = parent_dir(path);
    ensure_dir(&dir)?;
    // Only a regular file (or a symbolic link, replaced itself) is ever
    // replaced: never a directory, a device such as /dev/null, a FIFO or a
    // socket.
    if fs::symlink_metadata(path)
        .is_ok_and(|m| !m.file_type().is_file() && !m.file_type().is_symlink())
    {
        return Err(StoreError::NotRegularFile {
            path: path.to_path_buf(),
        }
        .into());
    }
    if existing == Existing::Refuse && fs::symlink_metadata(path).is_ok() {
        return Err(already_exists(path, "file").into());
    }
    let tmp = temp_beside(path);
    let f = create_private(&tmp)?;
    let result = (|| -> Result<T, E> {
        let mut w = std::io::BufWriter::new(f);
        let r = fill(&mut w)?;
        let f = w
            .into_inner()
            .map_err(|e| StoreError::io(&tmp, "write", e.into_error()))?;
        if durable == Durable::Now {
            f.sync_all().map_err(|e| StoreError::io(&tmp, "fsync", e))?;
        }
        drop(f);
        match existing {
            Existing::Replace => {
                fs::rename(&tmp, path).map_err(|e| StoreError::io(path, "rename", e))?
            }
            Existing::Refuse => match fs::hard_link(&tmp, path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(already_exists(path, "file").into())
                }
                Err(e) => return Err(StoreError::io(path, "link", e).into()),
            },
        }
        if durable == Durable::Now {
            sync_dir(&dir)?;
        }
        Ok(r)
    })();
    let _ = fs::remove_file(&tmp);
    result
}

/// Writes a folder of files at `path` whole or not at all (a session of a
/// format stored as several files): each file (0600, folders 0700) into a
/// temp folder beside `path` (named as [`is_temp_name`] says), synced, then
/// the folder moved into place and its parent synced. `files` name their
/// places inside the folder with plain relative paths (anything else is an
/// error). With [`Existing::Refuse`] anything at `path` is an error and is
/// never replaced (on Linux the move itself refuses, so a folder made there
/// meanwhile is safe too); with [`Existing::Replace`] a folder there is
/// swapped for the new one (atomically on Linux, see
/// `move_folder_portably` elsewhere) and then removed, and anything else
/// there is an error. When writing or moving fails, `path` is as it was
/// and the temp folder is removed; when only the last sync of the parent
/// fails, the new folder is in place and the error says so.
pub fn write_folder(
    path: &Path,
    files: &[(PathBuf, Vec<u8>)],
    existing: Existing,
) -> Result<(), StoreError> {
    let dir = parent_dir(path);
    ensure_dir(&dir)?;
    match fs::symlink_metadata(path) {
        Ok(_) if existing == Existing::Refuse => return Err(already_exists(path, "session")),
        Ok(m) if !m.is_dir() => {
            return Err(StoreError::io(
                path,
                "replace folder",
                std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "exists and is not a folder",
                ),
            ))
        }
        _ => {}
    }
    let tmp = temp_beside(path);
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(&tmp)
        .map_err(|e| StoreError::io(&tmp, "create directory", e))?;
    let result = (|| {
        let mut dirs = std::collections::BTreeSet::from([tmp.clone()]);
        for (rel, bytes) in files {
            let rel = agentlog_formats::safe_path::relative(rel)
                .map_err(|e| StoreError::io(rel, "write", e))?;
            let p = tmp.join(rel);
            ensure_dir(&parent_dir(&p))?;
            // Every folder between the file and the temp folder.
            for d in p.ancestors().skip(1).take_while(|d| d.starts_with(&tmp)) {
                dirs.insert(d.to_path_buf());
            }
            let mut f = create_private(&p)?;
            f.write_all(bytes)
                .map_err(|e| StoreError::io(&p, "write", e))?;
            f.sync_all().map_err(|e| StoreError::io(&p, "fsync", e))?;
        }
        // Deepest first, so each folder's entry is durable in its parent.
        for d in dirs.iter().rev() {
            sync_dir(d)?;
        }
        move_folder(&tmp, path, existing)?;
        sync_dir(&dir)
    })();
    // The temp folder: the new one after a failure, or the old one after
    // it was swapped out.
    let _ = fs::remove_dir_all(&tmp);
    result
}

/// The error for a path agentlog will not write over (`what` is there: a
/// file, a session).
fn already_exists(path: &Path, what: &str) -> StoreError {
    StoreError::io(
        path,
        "create",
        std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("already exists (agentlog does not overwrite a {what} unless told to)"),
        ),
    )
}

/// Moves the folder `from` to `to`: never over anything with
/// [`Existing::Refuse`]; with [`Existing::Replace`], a folder at `to` ends
/// up at `from`.
fn move_folder(from: &Path, to: &Path, existing: Existing) -> Result<(), StoreError> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        use rustix::io::Errno;
        let flags = if existing == Existing::Replace && to.is_dir() {
            RenameFlags::EXCHANGE
        } else {
            RenameFlags::NOREPLACE
        };
        match renameat_with(CWD, from, CWD, to, flags) {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) | Err(Errno::NOTEMPTY) => Err(already_exists(to, "session")),
            // A file system without these flags (some network and
            // overlay ones): the moves any file system has.
            Err(Errno::INVAL) | Err(Errno::NOSYS) | Err(Errno::OPNOTSUPP) => {
                move_folder_portably(from, to, existing)
            }
            Err(e) => Err(StoreError::io(to, "rename", e.into())),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        move_folder_portably(from, to, existing)
    }
}

/// [`move_folder`] with plain renames: the folder at `to` (replaced only
/// with [`Existing::Replace`]) is moved aside, the new one moved in, and the
/// old one moved to `from`; if the new one cannot be moved in, the old one
/// is moved back. (Between the first two renames `to` is missing, and a
/// folder made at `to` meanwhile is not replaced: `rename` refuses a
/// folder that is not empty.)
fn move_folder_portably(from: &Path, to: &Path, existing: Existing) -> Result<(), StoreError> {
    let rename = |a: &Path, b: &Path| fs::rename(a, b).map_err(|e| StoreError::io(b, "rename", e));
    if fs::symlink_metadata(to).is_err() {
        return rename(from, to);
    }
    if existing == Existing::Refuse {
        return Err(already_exists(to, "session"));
    }
    let old = temp_beside(to);
    rename(to, &old)?;
    if let Err(e) = rename(from, to) {
        let _ = fs::rename(&old, to);
        return Err(e);
    }
    rename(&old, from)
}

/// A new temp name beside `path`, as [`is_temp_name`] knows it:
/// `.<name>.<pid>.<n>.tmp`.
fn temp_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    parent_dir(path).join(format!(".{name}.{}.{}.tmp", std::process::id(), unique()))
}

/// Creates a new file readable and writable by the owner only (0600);
/// fails if it exists (a symbolic link included).
pub fn create_private(path: &Path) -> Result<File, StoreError> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path).map_err(|e| StoreError::io(path, "create", e))
}

/// Returns the directory of `path` (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// True for the name of a temp file [`write_atomic`] left behind in a
/// crash (`.<file>.<pid>.<n>.tmp`).
pub fn is_temp_name(name: &str) -> bool {
    let Some(inner) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    let mut parts = inner.rsplitn(3, '.');
    let n = parts.next().unwrap_or("");
    let pid = parts.next().unwrap_or("");
    let file = parts.next().unwrap_or("");
    !file.is_empty()
        && !n.is_empty()
        && !pid.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && pid.bytes().all(|b| b.is_ascii_digit())
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    (nanos << 16) ^ N.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder_files() -> Vec<(PathBuf, Vec<u8>)> {
        vec![
            (PathBuf::from("base_state.json"), b"{}".to_vec()),
            (
                PathBuf::from("events/event-00000-ab12cd34.json"),
                b"{\"a\":1}".to_vec(),
            ),
        ]
    }

    /// The names in `dir`.
    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }

    #[test]
    fn writes_a_folder_whole_and_private_and_never_over_anything() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("convs/c1");
        write_folder(&p, &folder_files(), Existing::Refuse).unwrap();
        assert_eq!(fs::read(p.join("base_state.json")).unwrap(), b"{}");
        assert_eq!(
            fs::read(p.join("events/event-00000-ab12cd34.json")).unwrap(),
            b"{\"a\":1}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&p), 0o700);
            assert_eq!(mode(&p.join("events")), 0o700);
            assert_eq!(mode(&p.join("base_state.json")), 0o600);
        }
        assert_eq!(names(&dir.path().join("convs")), ["c1"]);
        // Never over a folder or a file already there.
        let other = vec![(PathBuf::from("x"), b"new".to_vec())];
        let err = write_folder(&p, &other, Existing::Refuse).unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(names(&p), ["base_state.json", "events"]);
        let file = dir.path().join("convs/file");
        fs::write(&file, b"mine").unwrap();
        assert!(write_folder(&file, &other, Existing::Refuse).is_err());
        assert!(write_folder(&file, &other, Existing::Replace).is_err());
        assert_eq!(fs::read(&file).unwrap(), b"mine");
        assert_eq!(names(&dir.path().join("convs")), ["c1", "file"]);
    }

    #[test]
    fn the_portable_move_refuses_or_swaps_like_the_atomic_one() {
        let dir = tempfile::tempdir().unwrap();
        let (new, to) = (dir.path().join("new"), dir.path().join("to"));
        fs::create_dir(&new).unwrap();
        fs::write(new.join("n"), b"new").unwrap();
        move_folder_portably(&new, &to, Existing::Refuse).unwrap();
        assert_eq!(names(&to), ["n"]);
        fs::create_dir(&new).unwrap();
        fs::write(new.join("m"), b"newer").unwrap();
        assert!(move_folder_portably(&new, &to, Existing::Refuse).is_err());
        assert_eq!(names(&to), ["n"]);
        // Replaced: the old folder ends up where the new one was.
        move_folder_portably(&new, &to, Existing::Replace).unwrap();
        assert_eq!(names(&to), ["m"]);
        assert_eq!(names(&new), ["n"]);
        assert_eq!(names(dir.path()), ["new", "to"]);
    }

    #[test]
    fn replaces_a_folder_only_when_told_and_leaves_no_temp_folder() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c1");
        write_folder(&p, &folder_files(), Existing::Refuse).unwrap();
        let new = vec![(PathBuf::from("only.json"), b"2".to_vec())];
        write_folder(&p, &new, Existing::Replace).unwrap();
        assert_eq!(names(&p), ["only.json"]);
        assert_eq!(names(dir.path()), ["c1"]);
    }

    #[test]
    fn a_folder_that_cannot_be_written_whole_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c1");
        for bad in ["../escape.json", "/abs.json", "events/../../x", ""] {
            let mut files = folder_files();
            files.push((PathBuf::from(bad), b"x".to_vec()));
            let err = write_folder(&p, &files, Existing::Refuse).unwrap_err();
            assert!(err.to_string().contains("not a plain path"), "{bad}: {err}");
            assert!(names(dir.path()).is_empty(), "{bad}");
        }
        // A folder that was there stays as it was.
        write_folder(&p, &folder_files(), Existing::Refuse).unwrap();
        let files = vec![(PathBuf::from("../x"), b"x".to_vec())];
        assert!(write_folder(&p, &files, Existing::Replace).is_err());
        assert_eq!(names(&p), ["base_state.json", "events"]);
        assert_eq!(names(dir.path()), ["c1"]);
    }

    #[test]
    fn replaces_files_whole_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/state.json");
        write_atomic(&p, b"{\"a\":1}\n").unwrap();
        write_atomic(&p, b"{\"a\":2}\n").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"{\"a\":2}\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                0o600
            );
            assert_eq!(
                fs::metadata(p.parent().unwrap())
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o777,
                0o700
            );
        }
        let leftovers = fs::read_dir(p.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1);
    }

    /// Replacing is for files: a FIFO (or a device) in the way is left as
    /// it is and the write refused.
    #[cfg(unix)]
    #[test]
    fn a_fifo_is_never_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pipe");
        assert!(std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap()
            .success());
        let r = write_file_with(&p, Existing::Replace, |w| {
            w.write_all(b"x")
                .map_err(|e| StoreError::io(&p, "write", e))
        });
        assert!(matches!(r, Err(StoreError::NotRegularFile { .. })), "{r:?}");
        assert!(fs::symlink_metadata(&p).unwrap().file_type().is_fifo());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn files_synced_later_are_written_whole_and_synced_together() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..3 {
            let p = dir.path().join(format!("page-{n}.html"));
            write_file_durable(&p, Existing::Replace, Durable::Later, |w| {
                w.write_all(format!("page {n}").as_bytes())
                    .map_err(|e| StoreError::io(&p, "write", e))
            })
            .unwrap();
        }
        sync_filesystem(dir.path()).unwrap();
        for n in 0..3 {
            let p = dir.path().join(format!("page-{n}.html"));
            assert_eq!(fs::read_to_string(p).unwrap(), format!("page {n}"));
        }
        // No temp file is left behind.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 3);
        assert!(sync_filesystem(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn a_failed_fill_leaves_the_old_file_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        write_atomic(&p, b"old").unwrap();
        let err = write_atomic_with(&p, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("source failed"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("source failed"), "{err}");
        assert_eq!(fs::read(&p).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn new_files_never_replace_anything_nor_follow_links() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, b"precious").unwrap();
        let link = dir.path().join("out/planted");
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let w = |e| {
            write_file_with(&link, e, |w| {
                w.write_all(b"new")
                    .map_err(|e| StoreError::io("x", "write", e))?;
                Ok::<_, StoreError>(7)
            })
        };
        let err = w(Existing::Refuse).unwrap_err();
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert_eq!(w(Existing::Replace).unwrap(), 7);
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert!(!fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&link).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&link).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let fresh = dir.path().join("a/b/new.md");
        write_file_with(&fresh, Existing::Refuse, |w| {
            w.write_all(b"x")
                .map_err(|e| StoreError::io("x", "write", e))
        })
        .unwrap();
        assert_eq!(
            fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::metadata(dir.path().join("a"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o700
        );
        assert_eq!(fs::read_dir(fresh.parent().unwrap()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_target_is_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        fs::write(&target, b"keep").unwrap();
        let link = dir.path().join("state.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        assert!(!fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&link).unwrap(), b"new");
    }

    #[test]
    fn temp_names_are_recognised() {
        assert!(is_temp_name(".state.json.123.456.tmp"));
        assert!(!is_temp_name("state.json"));
        assert!(!is_temp_name(".state.tmp"));
        assert!(!is_temp_name(".x.a.1.tmp"));
    }
}
