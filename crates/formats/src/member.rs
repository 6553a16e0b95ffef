//! Sessions stored inside a file that holds many (OpenCode's and Kilo's
//! SQLite databases): such a session's path is `<file>#<session id>`.
//!
//! ```
//! use agentlog_formats::member::{member_path, split_member};
//! let dir = std::env::temp_dir().join(format!("agentlog-member-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let db = dir.join("opencode.db");
//! std::fs::write(&db, b"").unwrap();
//! let p = member_path(&db, "ses_1");
//! assert_eq!(split_member(&p), Some((db.clone(), "ses_1".to_string())));
//! assert_eq!(split_member(&db), None);
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::path::{Path, PathBuf};

/// Returns the path naming session `id` inside `file`.
pub fn member_path(file: &Path, id: &str) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push("#");
    s.push(id);
    PathBuf::from(s)
}

/// Splits `<file>#<id>` into the file and the id, when `path` itself does
/// not exist, the part before the last `#` is a file (on disk, or gone and
/// kept by agentlog's archive, see [`crate::archived`]) and the id is a
/// plain name (no separators, not empty).
pub fn split_member(path: &Path) -> Option<(PathBuf, String)> {
    if path.exists() {
        return None;
    }
    let s = path.to_str()?;
    let (file, id) = s.rsplit_once('#')?;
    if id.is_empty() || id.contains(['/', '\\']) || id == "." || id == ".." {
        return None;
    }
    let file = PathBuf::from(file);
    (file.is_file() || crate::archived::is_kept_only(&file)).then(|| (file, id.to_string()))
}

/// The files whose changes change a member session: the database and its
/// write-ahead log (where SQLite keeps recent writes until a checkpoint).
pub fn member_files(path: &Path) -> Option<Vec<PathBuf>> {
    let (file, _) = split_member(path)?;
    let mut wal = file.as_os_str().to_owned();
    wal.push("-wal");
    Some(vec![file, PathBuf::from(wal)])
}
