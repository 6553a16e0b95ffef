//! Finding and reading the session a command names (through the library
//! API, adding what to do next to its errors).

use agentlog_api::ApiError;
use agentlog_formats::{Format, Read};
use std::path::PathBuf;

/// Returns the format called `name`, or an error listing the known names.
pub fn format_named(name: &str) -> anyhow::Result<&'static dyn Format> {
    Ok(agentlog_api::resolve::format_named(name)?)
}

/// Adds the command that lists sessions to a not-found error.
fn hint(e: ApiError) -> anyhow::Error {
    match e {
        ApiError::NotFound { .. } => {
            crate::out::hinted(e, "`agentlog ls` lists the sessions and their ids")
        }
        e => e.into(),
    }
}

/// Which file a session argument names when its id is in several agents
/// (a session resumed in another agent keeps its id there).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Which {
    /// When the session's id is in several agents (after `resume --in`),
    /// take this agent's (also written AGENT:ID).
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,
    /// When the session's id is in several files, take the one written
    /// last (by default: the original, not a resumed copy).
    #[arg(long)]
    pub newest: bool,
}

impl Which {
    fn options(&self) -> agentlog_api::resolve::ResolveOptions {
        use agentlog_api::resolve::{Prefer, ResolveOptions};
        ResolveOptions {
            agent: self.agent.clone(),
            prefer: if self.newest {
                Prefer::Newest
            } else {
                Prefer::Original
            },
        }
    }
}

/// Says on stderr which file of several holding one session was taken,
/// and how to name another.
fn say_others(r: &agentlog_api::resolve::Resolved, which: &Which) {
    if r.others.is_empty() {
        return;
    }
    let c = &r.chosen;
    let kind = match (which.newest, c.copy) {
        (true, _) => "the newest",
        (false, true) => "a resumed copy",
        (false, false) => "the original",
    };
    crate::eprintln_clean!(
        "agentlog: {} is in {} files; reading {kind}: {} {} {}",
        c.id,
        r.others.len() + 1,
        c.format,
        c.when(),
        c.path.display()
    );
    for o in &r.others {
        crate::eprintln_clean!(
            "  also  {} {} {}{}",
            o.format,
            o.when(),
            o.path.display(),
            if o.copy { " (resumed copy)" } else { "" }
        );
    }
    crate::eprintln_clean!(
        "  name another with --agent AGENT (or AGENT:ID), or take the newest with --newest"
    );
}

/// Returns the path a session argument names: an existing path as is;
/// otherwise an id (or id prefix) looked up among discovered sessions.
pub fn resolve(arg: &str) -> anyhow::Result<PathBuf> {
    resolve_which(arg, &Which::default())
}

/// Returns the path a session argument names, as [`resolve`] does, taking
/// the file `which` says when the id is in several.
pub fn resolve_which(arg: &str, which: &Which) -> anyhow::Result<PathBuf> {
    let settings = crate::config::settings(&[])?;
    if std::path::Path::new(arg).exists() {
        return Ok(PathBuf::from(arg));
    }
    let r = agentlog_api::resolve::resolve_with(&settings, arg, &which.options()).map_err(hint)?;
    say_others(&r, which);
    Ok(r.found.path)
}

/// Sessions read by path below this size are read without transparent
/// huge pages (see [`small_heap`]).
const SMALL_SESSION: u64 = 8 << 20;

/// Turns transparent huge pages off for the rest of this process when `arg`
/// is a session file smaller than [`SMALL_SESSION`], for commands that read
/// one session and exit (`show`, `export`, `convert`, `tree`; not `resume`,
/// whose agent would inherit the setting). The allocator asks for huge
/// pages, and the first touch of one zeroes 2 MB: exporting a 50 KB session
/// touched a few, about a tenth of the command's time, where 4 KB pages
/// zero what it uses. A large session keeps them (reading 100 MB is faster
/// with them).
pub fn small_heap(arg: &str) {
    #[cfg(target_os = "linux")]
    if std::fs::metadata(arg).is_ok_and(|m| m.is_file() && m.len() < SMALL_SESSION) {
        // Only a hint: if the kernel refuses, the command runs as before.
        let _ = rustix::thread::disable_transparent_huge_pages(true);
    }
}

/// Reads the session at `arg` with format `from`, or the detected one,
/// taking the file `which` says when the id is in several (and saying
/// which others there are).
///
/// `-` reads standard input (up to the input size cap); any other path
/// must be a regular file (never a FIFO or a device).
pub fn read_which(
    arg: &str,
    from: Option<&str>,
    which: &Which,
) -> anyhow::Result<(PathBuf, &'static dyn Format, Read)> {
    use agentlog_formats::registry;
    use anyhow::Context;
    if arg == "-" {
        let path = PathBuf::from("<stdin>");
        let bytes = agentlog_formats::input::read_capped(&path, std::io::stdin().lock(), 0)?;
        let format = match from {
            Some(name) => registry::by_name(name)
                .ok_or_else(|| anyhow::anyhow!("unknown format {name:?}; known formats: {}", registry::names()))?,
            None => registry::detect_bytes(&path, &bytes).ok_or_else(|| {
                anyhow::anyhow!(
                    "standard input is not a session agentlog recognises; name its format with --from (known: {})",
                    registry::names()
                )
            })?,
        };
        let read = format
            .read_bytes(&path, &bytes)
            .with_context(|| format!("reading standard input as {}", format.name()))?;
        return Ok((path, format, read));
    }
    let settings = crate::config::settings(&[])?;
    let (path, format, read, resolved) =
        agentlog_api::resolve::read_with(&settings, arg, from, &which.options()).map_err(hint)?;
    if let Some(r) = &resolved {
        say_others(r, which);
    }
    if agentlog_formats::archived::is_kept_only(&path) {
        crate::eprintln_clean!(
            "agentlog: {} is gone from disk (its agent deleted it); read from agentlog's archive (`agentlog restore {}` puts it back)",
            path.display(),
            arg
        );
    }
    Ok((path, format, read))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_small_session_file_turns_huge_pages_off_and_a_large_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let large = dir.path().join("large.jsonl");
        std::fs::File::create(&large)
            .unwrap()
            .set_len(SMALL_SESSION)
            .unwrap();
        let small = dir.path().join("small.jsonl");
        std::fs::write(&small, "{}\n").unwrap();
        // The setting is the process's: nothing else in these tests sets it.
        let before = match rustix::thread::transparent_huge_pages_are_disabled() {
            Ok(before) => before,
            Err(e) if std::env::var_os("CI").is_none() => {
                eprintln!("skipped: the kernel does not say whether huge pages are off: {e}");
                return;
            }
            Err(e) => panic!("PR_GET_THP_DISABLE: {e}"),
        };
        small_heap(large.to_str().unwrap());
        small_heap(dir.path().to_str().unwrap());
        small_heap("no-such-session-id");
        assert_eq!(
            rustix::thread::transparent_huge_pages_are_disabled().unwrap(),
            before
        );
        small_heap(small.to_str().unwrap());
        assert!(rustix::thread::transparent_huge_pages_are_disabled().unwrap());
    }
}
