//! Claude Code project transcripts (JSONL).
//!
//! Claude Code keeps one file per session at
//! `<root>/projects/<encoded cwd>/<session id>.jsonl` (root `~/.claude`, or
//! `$CLAUDE_CONFIG_DIR`). Each line is a record; conversation records form
//! a tree through `uuid`/`parentUuid`. Subagent transcripts live inline
//! (`isSidechain`, 1.0.x), beside the session as `agent-<id>.jsonl` (2.0.x)
//! or under `<session id>/subagents/agent-<id>.jsonl` (2.1.x); each
//! subagent file reads as its own session whose `parent_session` is the
//! session that spawned it ([`subagent_files`] lists them).
//!
//! Reading and writing a Claude file gives back the same JSON values line
//! by line: entries keep the native fields the model has no place for in
//! `extra`, and what a rebuilt line still differs in under the
//! `agentlog:claude` key (which writers of other formats ignore).

mod read;
mod validate;
mod wire;
mod write;

/// (Cline keeps these blocks as Claude Code does.)
pub(crate) use wire::put_message_block;

use crate::env::DiscoverEnv;
use crate::{Diagnostic, Fidelity, Format, FormatError, Read, ResumePlan};
use agentlog_model::{Agent, Entry, Session};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The claude format.
pub struct ClaudeFormat;

/// The registry entry.
pub static FORMAT: ClaudeFormat = ClaudeFormat;

/// Record types whose presence on a first line says "Claude transcript".
const TYPES: &[&str] = &[
    "user",
    "assistant",
    "system",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "attachment",
    "progress",
    "custom-title",
    "ai-title",
    "last-prompt",
    "mode",
    "permission-mode",
    "agent-name",
];

impl Format for ClaudeFormat {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn description(&self) -> &'static str {
        "Claude Code project transcript (JSONL)"
    }

    fn agent(&self) -> Agent {
        Agent::Claude
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let in_projects = path
            .to_str()
            .is_some_and(|p| p.contains("/.claude/projects/") || p.contains("/claude/projects/"));
        let Some(Value::Object(o)) = crate::jsonl::first_value(head) else {
            return if in_projects && path.extension().is_some_and(|e| e == "jsonl") {
                40
            } else {
                0
            };
        };
        let has = |k: &str| o.contains_key(k);
        let ty = o.get("type").and_then(Value::as_str);
        let score = match ty {
            Some("user") | Some("assistant") if o.get("message").is_some_and(Value::is_object) => {
                if has("uuid") || has("parentUuid") || has("sessionId") {
                    90
                } else {
                    70
                }
            }
            Some("summary") if has("leafUuid") => 90,
            Some("system") if has("parentUuid") && has("sessionId") => 85,
            Some(t) if TYPES.contains(&t) && (has("sessionId") || has("leafUuid")) => 75,
            None if o
                .get("message")
                .and_then(|m| m.get("role"))
                .is_some_and(Value::is_string)
                && (has("requestId") || has("sessionId")) =>
            {
                60
            }
            _ => 0,
        };
        if score == 0 && in_projects {
            30
        } else {
            score
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots: Vec<PathBuf> = match env.roots_for("claude") {
            Some(r) => r.to_vec(),
            None => claude_roots(env)
                .into_iter()
                .map(|r| r.join("projects"))
                .collect(),
        };
        let mut out = Vec::new();
        for root in roots {
            out.extend(crate::env::walk_files(&root, 3, &|p: &Path| {
                is_session_file(p)
            }));
        }
        crate::env::sort_paths(&mut out);
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        let (session, diagnostics) = read::read(path, bytes, true, None);
        Ok(Read {
            session,
            diagnostics,
        })
    }

    fn read_bytes_to_show(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        let (session, diagnostics) = read::read(path, bytes, false, None);
        Ok(Read {
            session,
            diagnostics,
        })
    }

    fn read_path_to_show(&self, path: &Path) -> Result<Read, FormatError> {
        read_path_to_show(path, None)
    }

    fn read_path_to_show_with(
        &self,
        path: &Path,
        trim: &dyn Fn(&mut Entry),
    ) -> Result<Read, FormatError> {
        read_path_to_show(path, Some(trim))
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn drift(&self, read: &Read) -> Vec<crate::drift::Drift> {
        read::drift(read)
    }

    fn session_kind(&self, path: &Path, session: &Session) -> agentlog_model::SessionKind {
        read::session_kind(path, session)
    }

    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        let cwd = session.meta.cwd.clone().ok_or_else(|| {
            FormatError::invalid(
                PathBuf::from(&session.meta.id),
                None,
                "the session records no working directory; Claude Code files sessions by project directory, so give it one before resuming",
            )
        })?;
        let root = claude_roots(env)
            .into_iter()
            .next()
            .unwrap_or_else(|| env.home_join(".claude"));
        let real = std::fs::canonicalize(&cwd)
            .ok()
            .and_then(|p| p.to_str().map(str::to_string))
            .unwrap_or_else(|| cwd.clone());
        let id = if write::is_native(session) && uuid::Uuid::parse_str(&session.meta.id).is_ok() {
            session.meta.id.clone()
        } else {
            write::claude_session_id(session)
        };
        let projects = root.join("projects");
        let path = projects
            .join(crate::safe_path::component(&encode_project_dir(&real)))
            .join(crate::safe_path::component(&format!("{id}.jsonl")));
        crate::safe_path::inside(&projects, &path)?;
        Ok(ResumePlan {
            path,
            command: format!("claude --resume {id}"),
            cwd: Some(PathBuf::from(cwd)),
        })
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }
}

/// True for a top-level session transcript (not a subagent file, nor a
/// file inside a session's own directory).
fn is_session_file(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if !name.ends_with(".jsonl") || name.starts_with("agent-") {
        return false;
    }
    !p.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some("subagents") | Some("tool-results") | Some("workflows")
        )
    })
}

/// Returns the Claude configuration roots: each entry of the
/// comma-separated `CLAUDE_CONFIG_DIR`, else `~/.claude` and
/// `~/.config/claude`.
pub fn claude_roots(env: &DiscoverEnv) -> Vec<PathBuf> {
    match env.var("CLAUDE_CONFIG_DIR") {
        Some(v) => v
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect(),
        None => vec![env.home_join(".claude"), env.home_join(".config/claude")],
    }
}

/// Returns the project directory name Claude Code uses for `cwd`: every
/// UTF-16 code unit outside `[A-Za-z0-9]` becomes `-`; a name longer than
/// 200 characters keeps its first 200 and gets `-` and a base-36 hash of
/// the path.
pub fn encode_project_dir(cwd: &str) -> String {
    let units: Vec<u16> = cwd.encode_utf16().collect();
    let encoded: String = units
        .iter()
        .map(|&u| match u8::try_from(u) {
            Ok(b) if b.is_ascii_alphanumeric() => b as char,
            _ => '-',
        })
        .collect();
    if encoded.len() <= 200 {
        return encoded;
    }
    let mut h: i32 = 0;
    for &u in &units {
        h = h.wrapping_mul(31).wrapping_add(i32::from(u));
    }
    format!(
        "{}-{}",
        &encoded[..200],
        base36(i64::from(h).unsigned_abs())
    )
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if n == 0 {
        return "0".into();
    }
    let mut out = Vec::new();
    while n > 0 {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads each subagent transcript of the session at `session_path`
/// ([`subagent_files`]), with the file it came from.
pub fn read_subagents(
    session_path: &Path,
) -> Vec<(PathBuf, Result<crate::Read, crate::FormatError>)> {
    subagent_files(session_path)
        .into_iter()
        .map(|f| {
            let read = ClaudeFormat.read_path(&f);
            (f, read)
        })
        .collect()
}

/// Returns the persisted tool outputs of the session at `session_path`:
/// the regular files of its own `<session>/tool-results/` folder (neither
/// folder a symbolic link), which the reader shows in place of the
/// previews that point at them.
pub fn persisted_outputs(session_path: &Path) -> Vec<PathBuf> {
    let own = session_path.with_extension("");
    let dir = own.join("tool-results");
    // Folders of the session's own, not links to somewhere else.
    let real_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    if !real_dir(&own) || !real_dir(&dir) {
        return Vec::new();
    }
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(crate::env::BACKUP_MARK))
        })
        .collect();
    out.sort();
    out
}

/// Returns the subagent transcripts of the session at `session_path`: the
/// nested `<session>/subagents/**/agent-*.jsonl` files (2.1.x) and the flat
/// `agent-*.jsonl` files beside it whose records name this session (2.0.x).
pub fn subagent_files(session_path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let is_agent = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
    };
    let nested = session_path.with_extension("").join("subagents");
    crate::env::note_dir(&nested);
    if nested.is_dir() {
        out.extend(crate::env::walk_files(&nested, 4, &is_agent));
    }
    let id = session_path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    if let Some(dir) = session_path.parent() {
        crate::env::note_dir(dir);
        if let Ok(rd) = std::fs::read_dir(dir) {
            // The name first: a project folder holds every session of the
            // project, and only `agent-*.jsonl` files are worth a look.
            let mut flat: Vec<PathBuf> = rd
                .flatten()
                .filter(|e| {
                    is_agent(Path::new(&e.file_name()))
                        && e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink())
                })
                .map(|e| e.path())
                .filter(|p| p.is_file() && first_session_id(p).as_deref() == Some(id))
                .collect();
            flat.sort();
            out.extend(flat);
        }
    }
    out
}

/// Returns the `sessionId` of the first record of a transcript that has one.
fn first_session_id(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let f = std::fs::File::open(path).ok()?;
    let mut head = Vec::new();
    f.take(crate::input::HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .ok()?;
    let id = crate::jsonl::lines(&head)
        .filter_map(|l| serde_json::from_slice::<Value>(l.bytes).ok())
        .find_map(|v| {
            v.get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    id
}

/// [`Format::read_path_to_show_with`], `trim` optional.
fn read_path_to_show(path: &Path, trim: Option<read::Trim<'_>>) -> Result<Read, FormatError> {
    let (file, len) = crate::input::open_file(path)?;
    let (session, diagnostics) = if len < crate::jsonl::PIPELINE_MIN as u64 {
        let bytes = crate::input::read_capped(path, file, len)?;
        read::read(path, &bytes, false, trim)
    } else {
        // A large file is read as it is parsed, never whole in memory,
        // and refused past the input cap (it may grow while read) as a
        // whole read would be.
        let max = crate::input::max_bytes();
        let mut input = std::io::BufReader::with_capacity(
            1 << 20,
            std::io::Read::take(file, max.saturating_add(1)),
        );
        let read =
            read::read_stream(path, &mut input, trim, len).map_err(|e| FormatError::io(path, e))?;
        if input.get_ref().limit() == 0 {
            return Err(crate::input::too_big(path, max.saturating_add(1), max));
        }
        read
    };
    Ok(Read {
        session,
        diagnostics: crate::diag::summarize(diagnostics, 100),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_project_dirs() {
        assert_eq!(encode_project_dir("/Users/me/.agents"), "-Users-me--agents");
        assert_eq!(encode_project_dir("C:\\x"), "C--x");
        assert_eq!(encode_project_dir("/tmp/é😀"), "-tmp----");
        let long = format!("/{}", "a".repeat(250));
        let enc = encode_project_dir(&long);
        assert!(enc.starts_with(&format!("-{}", "a".repeat(199))));
        assert_eq!(enc.as_bytes()[200], b'-');
        assert!(enc[201..].chars().all(|c| c.is_ascii_alphanumeric()));
    }
}
