//! Writing what a front end produces (a converted session, an export) to a
//! file the user named: through the store (temp file 0600, sync, rename,
//! directory sync), with errors that name the user's path.

use crate::ApiError;
use std::io::Write;
use std::path::Path;

/// Writes the file at `path` with what `fill` writes, atomically: a reader
/// sees the old file or the complete new one. The folder must exist (a
/// typo in it is an error naming the path, not a new folder).
pub fn write_file<T>(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    let dir = agentlog_store::snapshot::parent_dir(path);
    if !dir.is_dir() {
        return Err(ApiError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("the folder {} does not exist", dir.display()),
            ),
        ));
    }
    let mut value = None;
    let mut failure = None;
    let written = agentlog_store::snapshot::write_atomic_with(path, |w| match fill(w) {
        Ok(v) => {
            value = Some(v);
            Ok(())
        }
        Err(e) => {
            let io = std::io::Error::other(e.to_string());
            failure = Some(e);
            Err(io)
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    written.map_err(|e| match e {
        agentlog_store::StoreError::Io { source, .. } => ApiError::io(path, source),
        e => e.into(),
    })?;
    value.ok_or_else(|| ApiError::io(path, std::io::Error::other("nothing was written")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_missing_folder_is_named_with_the_users_path() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("no-such-folder/out.jsonl");
        let err = write_file(&target, |w| {
            w.write_all(b"x").map_err(|e| ApiError::io("x", e))
        })
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(err.starts_with(&target.display().to_string()), "{err}");
        assert!(err.contains("no-such-folder does not exist"), "{err}");
        assert!(!err.contains(".out.jsonl."), "no temp file name: {err}");
    }

    #[test]
    fn files_are_private_and_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.txt");
        std::fs::write(&target, "old").unwrap();
        let n = write_file(&target, |w| {
            w.write_all(b"new").map_err(|e| ApiError::io("x", e))?;
            Ok(3)
        })
        .unwrap();
        assert_eq!(n, 3);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&target).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // A failed fill leaves the old file and no temp file.
        let failed = write_file(&target, |_| -> Result<(), ApiError> {
            Err(ApiError::NotFound {
                id: "x".into(),
                searched: 0,
            })
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
