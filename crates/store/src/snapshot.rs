//! Atomic whole-file snapshots: a reader sees the old file or the new one,
//! never a mix, and an acknowledged write survives a crash.

use crate::StoreError;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Creates `dir` and its missing parents; directories it creates are 0700.
pub fn ensure_dir(dir: &Path) -> Result<(), StoreError> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| StoreError::io(dir, "create directory", e))
}

/// Syncs a directory so a rename or create inside it is durable.
pub fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        let d = File::open(dir).map_err(|e| StoreError::io(dir, "open directory", e))?;
        d.sync_all().map_err(|e| StoreError::io(dir, "fsync directory", e))?;
    }
    let _ = dir;
    Ok(())
}

/// Writes `bytes` to `path` atomically: a temp file (0600) in the same
/// directory, synced, renamed over `path`, then the directory synced. On
/// failure the temp file is removed and `path` is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let dir = parent_dir(path);
    ensure_dir(&dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), unique()));
    let result = (|| {
        let mut f = create_private(&tmp)?;
        f.write_all(bytes).map_err(|e| StoreError::io(&tmp, "write", e))?;
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

/// Creates a new file readable and writable by the owner only (0600);
/// fails if it exists.
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
            assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
            assert_eq!(fs::metadata(p.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        }
        let leftovers = fs::read_dir(p.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1);
    }
}
