//! What each format's discovery works with: the machine's home, the
//! environment variables agents honour and root overrides
//! ([`DiscoverEnv`]), and walks over folders that never fail, never loop
//! and have a depth limit. Format modules use this module; the
//! registry-wide search over them is [`crate::discover`] (which re-exports
//! everything here), so no format depends on the list of all formats.

use crate::Diagnostic;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// The inputs of discovery: the home directory, the environment variables
/// agents honour, and per-format root overrides.
#[derive(Clone, Debug, Default)]
pub struct DiscoverEnv {
    /// The user's home directory.
    pub home: PathBuf,
    /// Environment variables (only those agents honour need be present).
    pub vars: BTreeMap<String, String>,
    /// Roots to search instead of a format's defaults, by format name.
    pub roots: BTreeMap<String, Vec<PathBuf>>,
}

/// The environment variables agents honour for their data locations; the
/// CLI captures these (and only these) from the process environment.
pub const AGENT_VARS: &[&str] = &[
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "GEMINI_DATA_DIR",
    "CURSOR_CONFIG_DIR",
    "PI_CODING_AGENT_DIR",
    "PI_AGENT_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "OPENCODE_DATA_DIR",
    "DROID_SESSIONS_DIR",
    "ACPX_HOME",
    "CODELIA_HOME",
    "JIDO_HOME",
    "SPECSTORY_HOME",
    "HOSTNAME",
    "COPILOT_HOME",
    "QWEN_HOME",
    "KILO_DATA_DIR",
    "CONTINUE_GLOBAL_DIR",
    "CLINE_DIR",
    "VIBE_HOME",
    "KIMI_SHARE_DIR",
    "FILE_STORE_PATH",
    "CRUSH_GLOBAL_DATA",
];

/// Prefixes of further variables agents honour (`PI_CODING_AGENT_SESSION_DIR`,
/// `CODELIA_LAYOUT`, …); the CLI captures every variable with one of them.
pub const AGENT_VAR_PREFIXES: &[&str] = &[
    "CLAUDE_",
    "CODEX_",
    "GEMINI_",
    "CURSOR_",
    "PI_",
    "CODELIA_",
    "JIDO_",
    "ACPX_",
    "SPECSTORY_",
    "XDG_",
    "OPENCODE_",
    "DROID_",
    "AGENTLOG_",
];

/// True for the name of a variable discovery may need (see [`AGENT_VARS`]
/// and [`AGENT_VAR_PREFIXES`]).
pub fn is_agent_var(name: &str) -> bool {
    AGENT_VARS.contains(&name) || AGENT_VAR_PREFIXES.iter().any(|p| name.starts_with(p))
}

impl DiscoverEnv {
    /// Returns an environment with only a home directory.
    pub fn with_home(home: impl Into<PathBuf>) -> DiscoverEnv {
        DiscoverEnv {
            home: home.into(),
            ..DiscoverEnv::default()
        }
    }

    /// Returns the variable `name`, when set and not empty.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// Returns the variable `name` as a path, with a leading `~/` expanded
    /// to the home directory.
    pub fn var_path(&self, name: &str) -> Option<PathBuf> {
        let v = self.var(name)?;
        Some(match v.strip_prefix("~/") {
            Some(rest) => self.home.join(rest),
            None if v == "~" => self.home.clone(),
            None => PathBuf::from(v),
        })
    }

    /// Returns the override roots for `format`, when any were given.
    pub fn roots_for(&self, format: &str) -> Option<&[PathBuf]> {
        self.roots.get(format).map(Vec::as_slice)
    }

    /// Returns `home/rel`.
    pub fn home_join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.home.join(rel)
    }

    /// Returns `$XDG_CONFIG_HOME`, or `~/.config` when unset.
    pub fn xdg_config_home(&self) -> PathBuf {
        self.var_path("XDG_CONFIG_HOME")
            .unwrap_or_else(|| self.home.join(".config"))
    }

    /// Returns `$XDG_DATA_HOME`, or `~/.local/share` when unset.
    pub fn xdg_data_home(&self) -> PathBuf {
        self.var_path("XDG_DATA_HOME")
            .unwrap_or_else(|| self.home.join(".local/share"))
    }
}

/// A session found on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The session file (or directory, for multi-file formats).
    pub path: PathBuf,
    /// The format that reads it.
    pub format: &'static str,
}

thread_local! {
    /// Problems met by the walk helpers during the current discovery on
    /// this thread; [`crate::discover::discover_report`] collects them.
    static PROBLEMS: RefCell<Vec<Diagnostic>> = const { RefCell::new(Vec::new()) };
}

/// Records a discovery problem for [`crate::discover::discover_report`]
/// to return.
pub fn note_problem(d: Diagnostic) {
    PROBLEMS.with(|p| p.borrow_mut().push(d));
}

/// Starts collecting problems on this thread; returns what was being
/// collected before (for [`end_problems`]).
pub(crate) fn begin_problems() -> Vec<Diagnostic> {
    PROBLEMS.with(|p| std::mem::take(&mut *p.borrow_mut()))
}

/// Returns the problems collected since [`begin_problems`] and restores
/// `previous`.
pub(crate) fn end_problems(previous: Vec<Diagnostic>) -> Vec<Diagnostic> {
    PROBLEMS.with(|p| std::mem::replace(&mut *p.borrow_mut(), previous))
}

thread_local! {
    /// The directories the walk helpers looked in during the current
    /// discovery on this thread, with their modification times taken just
    /// before they were listed.
    static DIRS: RefCell<Vec<(PathBuf, i64)>> = const { RefCell::new(Vec::new()) };
}

/// Returns the modification time of `path` in nanoseconds since the epoch.
pub fn mtime_ns(path: &Path) -> Option<i64> {
    let m = std::fs::metadata(path).ok()?;
    let t = m.modified().ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_nanos()).ok()
}

/// Records that discovery looks in `dir` (a directory it lists, or one
/// whose entries it probes by name), with its modification time now: a
/// later change of that time means files were added, removed or renamed
/// there. A directory that does not exist is recorded through its nearest
/// existing ancestor, whose time changes when the missing part is made.
pub fn note_dir(dir: &Path) {
    let mut at = Some(dir);
    while let Some(d) = at {
        // One `stat` for both questions.
        let dir_time = std::fs::metadata(d)
            .ok()
            .filter(std::fs::Metadata::is_dir)
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_nanos()).ok());
        if let Some(t) = dir_time {
            DIRS.with(|v| v.borrow_mut().push((d.to_path_buf(), t)));
            return;
        }
        at = d.parent();
    }
}

/// Starts collecting looked-in directories on this thread; returns what
/// was being collected before (for [`end_dirs`]).
pub(crate) fn begin_dirs() -> Vec<(PathBuf, i64)> {
    DIRS.with(|v| std::mem::take(&mut *v.borrow_mut()))
}

/// Returns the directories collected since [`begin_dirs`] (each once, with
/// the earliest time seen) and restores `previous`.
pub(crate) fn end_dirs(previous: Vec<(PathBuf, i64)>) -> Vec<(PathBuf, i64)> {
    let mut dirs = DIRS.with(|v| std::mem::replace(&mut *v.borrow_mut(), previous));
    settle_dirs(&mut dirs);
    dirs
}

/// Sorts folders by path and keeps each once, with the earliest time seen.
pub(crate) fn settle_dirs(dirs: &mut Vec<(PathBuf, i64)>) {
    dirs.sort();
    dirs.dedup_by(|a, b| a.0 == b.0);
}

fn note_unreadable(dir: &Path, err: &std::io::Error) {
    if err.kind() != std::io::ErrorKind::NotFound {
        note_problem(Diagnostic::warning(
            dir,
            None,
            "unreadable-dir",
            format!("cannot list this directory ({err}); its sessions are skipped"),
        ));
    }
}

/// A key identifying a directory, the same for every path (symlink or not)
/// that leads to it.
fn dir_key(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        use std::hash::{Hash, Hasher};
        let c = std::fs::canonicalize(path).ok()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        c.hash(&mut h);
        Some((0, h.finish()))
    }
}

/// Helper for formats: returns the files under `root` (recursively, at most
/// `max_depth` directories down) whose paths satisfy `keep`, sorted.
///
/// Symlinks to files are followed; symlinks to directories are entered only
/// when that directory was not entered before, so loops end. Directories
/// that cannot be listed are skipped and reported (see [`crate::discover::discover_report`]).
/// When `root` is itself a file, it is returned if `keep` accepts it.
pub fn walk_files(root: &Path, max_depth: usize, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if root.is_file() {
        if keep(root) {
            out.push(root.to_path_buf());
        }
        return out;
    }
    let mut entered = HashSet::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        if let Some(k) = dir_key(&dir) {
            if !entered.insert(k) {
                continue;
            }
        }
        note_dir(&dir);
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                note_unreadable(&dir, &e);
                continue;
            }
        };
        for entry in rd {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    note_unreadable(&dir, &e);
                    continue;
                }
            };
            let Ok(mut ft) = entry.file_type() else {
                continue;
            };
            let p = entry.path();
            if ft.is_symlink() {
                match std::fs::metadata(&p) {
                    Ok(m) => ft = m.file_type(),
                    Err(_) => continue, // dangling link
                }
            }
            if ft.is_dir() {
                if depth < max_depth {
                    stack.push((p, depth + 1));
                }
            } else if ft.is_file() && keep(&p) {
                out.push(p);
            }
        }
    }
    sort_paths(&mut out);
    out
}

/// Sorts paths by their bytes and drops repeats: the order discovery lists
/// sessions in. (`Path`'s own order compares component by component,
/// which was a tenth of an index update that found nothing new.)
pub fn sort_paths(paths: &mut Vec<PathBuf>) {
    paths.sort_unstable_by(|a, b| {
        a.as_os_str()
            .as_encoded_bytes()
            .cmp(b.as_os_str().as_encoded_bytes())
    });
    // By bytes too: `PathBuf`'s equality parses both paths.
    paths.dedup_by(|a, b| a.as_os_str().as_encoded_bytes() == b.as_os_str().as_encoded_bytes());
}

/// What names a backup `agentlog scrub` keeps beside a session
/// (`<name>.agentlog-backup-<time>`): never a session itself. (A file's
/// backup no longer ends in its format's extension; a folder's is skipped
/// by the discovery of formats whose sessions are folders.)
pub const BACKUP_MARK: &str = ".agentlog-backup-";

/// Helper for formats: returns the subdirectories of `dir` (symlinks to
/// directories included), sorted. A directory that cannot be listed gives
/// an empty list and a reported problem; a missing one just an empty list.
pub fn list_dirs(dir: &Path) -> Vec<PathBuf> {
    note_dir(dir);
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            note_unreadable(dir, &e);
            return Vec::new();
        }
    };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_files_and_survives_symlink_loops() {
        let tmp = match tempfile::tempdir() {
            Ok(t) => t,
            Err(_) => return,
        };
        let root = tmp.path();
        let _ = std::fs::create_dir_all(root.join("a/b"));
        let _ = std::fs::write(root.join("a/b/x.jsonl"), "{}\n");
        let _ = std::fs::write(root.join("a/y.txt"), "");
        #[cfg(unix)]
        {
            let _ = std::os::unix::fs::symlink(root, root.join("a/b/loop"));
            let _ = std::os::unix::fs::symlink(root.join("a/b/x.jsonl"), root.join("a/z.jsonl"));
        }
        let got = walk_files(root, 50, &|p| p.extension().is_some_and(|e| e == "jsonl"));
        let names: Vec<_> = got
            .iter()
            .filter_map(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        #[cfg(unix)]
        assert_eq!(names, ["x.jsonl", "z.jsonl"]);
        #[cfg(not(unix))]
        assert_eq!(names, ["x.jsonl"]);
    }

    #[test]
    fn var_paths_expand_the_home() {
        let mut env = DiscoverEnv::with_home("/home/u");
        env.vars.insert("CODEX_HOME".into(), "~/cx".into());
        env.vars.insert("EMPTY".into(), String::new());
        assert_eq!(
            env.var_path("CODEX_HOME"),
            Some(PathBuf::from("/home/u/cx"))
        );
        assert_eq!(env.var("EMPTY"), None);
        assert_eq!(env.xdg_config_home(), PathBuf::from("/home/u/.config"));
    }
}
