//! Checks of the project directory a session points at, run on restore.

use std::path::{Path, PathBuf};

/// Directories that are never a project, exactly (their subdirectories
/// may be): the root, the roots of system and user trees, and temporary
/// and mount roots. The home directory itself is refused too.
pub const FORBIDDEN_EXACT: [&str; 15] = [
    "/",
    "/usr",
    "/usr/local",
    "/var",
    "/home",
    "/Users",
    "/opt",
    "/tmp",
    "/root",
    "/private",
    "/mnt",
    "/media",
    "/srv",
    "/run",
    "/Volumes",
];

/// Directory trees that are never a project, with everything below them:
/// system configuration, binaries, libraries, boot files and the kernel's
/// virtual file systems.
pub const FORBIDDEN_TREES: [&str; 12] = [
    "/etc",
    "/bin",
    "/sbin",
    "/boot",
    "/proc",
    "/sys",
    "/dev",
    "/lib",
    "/lib64",
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
];

/// Checks `project_path`: absolute, an existing directory, readable, and
/// not a forbidden directory (see [`FORBIDDEN_EXACT`], [`FORBIDDEN_TREES`]
/// and `home`). Symbolic links are resolved first, so a link cannot smuggle
/// in a forbidden directory. Returns the resolved directory.
pub fn check_project_path(project_path: &str, home: Option<&Path>) -> Result<PathBuf, String> {
    let p = Path::new(project_path);
    if !p.is_absolute() {
        return Err("must be an absolute path".into());
    }
    let meta = std::fs::metadata(p).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "project directory no longer exists".to_string(),
        _ => format!("project directory cannot be inspected ({e})"),
    })?;
    if !meta.is_dir() {
        return Err("is not a directory".into());
    }
    std::fs::read_dir(p).map_err(|e| format!("project directory is not readable ({e})"))?;
    let real = std::fs::canonicalize(p)
        .map_err(|e| format!("project directory cannot be resolved ({e})"))?;
    for candidate in [p, real.as_path()] {
        if let Some(reason) = forbidden(candidate, home) {
            return Err(reason);
        }
    }
    Ok(real)
}

fn forbidden(p: &Path, home: Option<&Path>) -> Option<String> {
    let p = normalise(p);
    if FORBIDDEN_EXACT.iter().any(|f| p == Path::new(f)) {
        return Some(format!(
            "{} is a forbidden directory (a system or top-level directory)",
            p.display()
        ));
    }
    if let Some(t) = FORBIDDEN_TREES.iter().find(|t| p.starts_with(t)) {
        return Some(format!(
            "{} is inside {t}, a forbidden system directory",
            p.display()
        ));
    }
    if home.is_some_and(|h| normalise(h) == p) {
        return Some(format!(
            "{} is the home directory itself, not a project",
            p.display()
        ));
    }
    None
}

/// Drops `.` components and trailing separators (no file-system access).
fn normalise(p: &Path) -> PathBuf {
    p.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_system_directories() {
        for p in ["/", "/etc", "/usr", "/proc/self", "/dev", "/usr/bin"] {
            let err = check_project_path(p, None);
            assert!(err.is_err(), "{p} accepted");
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = check_project_path(&dir.path().display().to_string(), None).unwrap();
        assert!(ok.is_dir());
        let err =
            check_project_path(&dir.path().display().to_string(), Some(dir.path())).unwrap_err();
        assert!(err.contains("home directory"), "{err}");
        assert_eq!(
            check_project_path("relative/dir", None).unwrap_err(),
            "must be an absolute path"
        );
    }
}
