//! Continuing a session in another agent: convert it to the agent's native
//! format, write it where that agent keeps its sessions (never over an
//! existing file), and return the one shell command that continues it.
//!
//! ```
//! use agentlog_api::resume::{resume, ResumeParams};
//! use agentlog_api::{Library, Settings};
//! # let home = tempfile::tempdir()?;
//! # agentlog_api::example::write_claude_session(home.path())?;
//! let lib = Library::new(Settings::with_home(home.path()));
//! let read = lib.read("5e55f0")?;
//! let done = resume(&lib.settings, &read.session, &ResumeParams::new("codex"))?;
//! assert!(done.path.starts_with(home.path().join(".codex")));
//! assert_eq!(done.command.matches("cd ").count(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::{ApiError, Settings};
use agentlog_formats::{Fidelity, Written};
use agentlog_model::Session;
use agentlog_store::snapshot::{write_file_with, write_folder, Existing};
use serde::Serialize;
use std::borrow::Cow;
use std::io::Write;
use std::path::PathBuf;

/// What to resume in, and how.
#[derive(Debug, Clone)]
pub struct ResumeParams {
    /// The format (agent) to continue in: `claude`, `codex`, `pi`, ….
    pub target: String,
    /// Continue in this directory instead of the session's own working
    /// directory (an absolute path; relative ones are made absolute).
    pub cwd: Option<PathBuf>,
    /// Plan only: convert and report, write nothing.
    pub dry_run: bool,
    /// The file the session was read from, recorded with the copy (see
    /// [`crate::copies`]).
    pub source: Option<PathBuf>,
}

impl ResumeParams {
    /// Resume in `target`, in the session's own directory, writing the file.
    pub fn new(target: &str) -> ResumeParams {
        ResumeParams {
            target: target.to_string(),
            cwd: None,
            dry_run: false,
            source: None,
        }
    }
}

/// What [`resume`] did.
#[derive(Debug, Clone, Serialize)]
pub struct Resumed {
    /// The agent's format.
    pub target: &'static str,
    /// The native session file (or, for an agent whose sessions are
    /// folders, the folder) written, or that would be written.
    pub path: PathBuf,
    /// The directory the command runs in.
    pub cwd: Option<PathBuf>,
    /// The shell command that continues the session: at most one `cd`,
    /// every word taken from the session quoted.
    pub command: String,
    /// The command alone, without the `cd`: what runs in `cwd`.
    #[serde(skip)]
    pub run: String,
    /// False for a dry run.
    pub written: bool,
    /// What the target format could not hold.
    pub fidelity: Fidelity,
}

/// Converts `session` to `params.target`'s format and writes it where that
/// agent looks for sessions under `settings` (unless `dry_run`). Refuses
/// formats agentlog cannot write, and never replaces an existing file.
pub fn resume(
    settings: &Settings,
    session: &Session,
    params: &ResumeParams,
) -> Result<Resumed, ApiError> {
    let target = crate::resolve::format_named(&params.target)?;
    if !target.can_write() {
        return Err(ApiError::Format(
            agentlog_formats::FormatError::Unsupported {
                format: target.name(),
                operation: "resuming (agentlog cannot write this format yet)",
            },
        ));
    }
    let session: Cow<'_, Session> = match &params.cwd {
        Some(dir) => {
            let dir = std::path::absolute(dir).map_err(|e| ApiError::io(dir, e))?;
            let mut s = session.clone();
            s.meta.cwd = Some(dir.to_string_lossy().into_owned());
            Cow::Owned(s)
        }
        None => Cow::Borrowed(session),
    };
    let plan = target.resume_plan(&session, &settings.env)?;
    let (written, fidelity) = target.write_resumable(&session, &plan)?;
    if std::fs::symlink_metadata(&plan.path).is_ok() {
        return Err(ApiError::io(
            &plan.path,
            std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "already exists; agentlog never overwrites a session (was it resumed before?)",
            ),
        ));
    }
    if !params.dry_run {
        // Recorded first: a copy is never written unrecorded, and a
        // record whose copy failed names no file anyone finds.
        crate::copies::record(
            settings,
            &crate::copies::CopyRecord {
                id: session.meta.id.clone(),
                agent: target.name().to_string(),
                path: plan.path.clone(),
                from: params.source.clone(),
            },
        )?;
        match &written {
            Written::File(bytes) => {
                write_file_with(&plan.path, Existing::Refuse, |w: &mut dyn Write| {
                    w.write_all(bytes).map_err(|e| ApiError::io(&plan.path, e))
                })?;
            }
            Written::Folder(files) => write_folder(&plan.path, files, Existing::Refuse)?,
        }
        target.register_resumed(&session, &plan, &settings.env)?;
    }
    let command = match &plan.cwd {
        Some(dir) => format!(
            "cd {} && {}",
            agentlog_formats::shell::quote(&dir.to_string_lossy()),
            plan.command
        ),
        None => plan.command.clone(),
    };
    Ok(Resumed {
        target: target.name(),
        path: plan.path,
        cwd: plan.cwd,
        command,
        run: plan.command,
        written: !params.dry_run,
        fidelity,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Library;

    /// The bytes of the file at `path`, or of every file in the folder
    /// there, by path.
    fn contents(path: &std::path::Path) -> Vec<(PathBuf, Vec<u8>)> {
        if path.is_file() {
            return vec![(path.to_path_buf(), std::fs::read(path).unwrap())];
        }
        let mut out = Vec::new();
        for e in std::fs::read_dir(path).unwrap() {
            out.extend(contents(&e.unwrap().path()));
        }
        out.sort();
        out
    }

    fn lib() -> (tempfile::TempDir, Library) {
        let home = tempfile::tempdir().unwrap();
        crate::example::write_claude_session(home.path()).unwrap();
        let lib = Library::new(Settings::with_home(home.path()));
        (home, lib)
    }

    #[test]
    fn every_writable_format_resumes_with_one_cd_and_never_overwrites() {
        let (home, lib) = lib();
        let session = lib.read("5e55f0").unwrap().session;
        let source = lib.resolve("5e55f0").unwrap().path;
        let mut resumed = Vec::new();
        for f in agentlog_formats::registry::all() {
            if !f.can_write() {
                continue;
            }
            let p = ResumeParams::new(f.name());
            let Ok(done) = resume(&lib.settings, &session, &p) else {
                continue; // formats with no agent location of their own
            };
            // Under HOME, or (aider) in the session's project.
            let in_project = session
                .meta
                .cwd
                .as_deref()
                .is_some_and(|c| done.path.starts_with(c));
            assert!(
                done.path.starts_with(home.path()) || in_project,
                "{}: {:?}",
                f.name(),
                done.path
            );
            assert!(
                done.path.is_file() || (f.writes_folder() && done.path.is_dir()),
                "{}",
                f.name()
            );
            assert!(
                done.command.matches("cd ").count() <= 1,
                "{}: {}",
                f.name(),
                done.command
            );
            assert_eq!(
                done.cwd.is_some(),
                done.command.starts_with("cd "),
                "{}: {}",
                f.name(),
                done.command
            );
            let before = contents(&done.path);
            let again = resume(&lib.settings, &session, &p);
            assert!(again.is_err(), "{}: resumed twice over one file", f.name());
            assert_eq!(contents(&done.path), before);
            resumed.push(f.name());
        }
        for agent in ["codex", "gemini", "pi", "copilot", "qwen", "openhands"] {
            assert!(resumed.contains(&agent), "{agent} not resumed: {resumed:?}");
        }
        // The session is Claude's own file: resuming it in Claude would
        // write over it, which is refused.
        let before = std::fs::read(&source).unwrap();
        let err = resume(&lib.settings, &session, &ResumeParams::new("claude"));
        assert!(err.is_err_and(|e| e.to_string().contains("already exists")));
        assert_eq!(std::fs::read(&source).unwrap(), before);
    }

    #[test]
    fn acpx_continues_gemini_chats_and_says_how_to_get_one() {
        let (home, lib) = lib();
        let claude = lib.read("5e55f0").unwrap().session;
        // acpx continues a session in the agent that holds it.
        let err = resume(&lib.settings, &claude, &ResumeParams::new("acpx")).unwrap_err();
        assert!(
            err.to_string()
                .contains("resume the session in gemini first"),
            "{err}"
        );
        let chat = resume(&lib.settings, &claude, &ResumeParams::new("gemini")).unwrap();
        let gemini = agentlog_formats::registry::detect(&chat.path)
            .unwrap()
            .read_path(&chat.path)
            .unwrap()
            .session;
        let done = resume(&lib.settings, &gemini, &ResumeParams::new("acpx")).unwrap();
        assert!(done
            .path
            .starts_with(home.path().join(".acpx").join("sessions")));
        assert!(
            done.command.contains("acpx gemini -s agentlog-"),
            "{}",
            done.command
        );
        // acpx's on-disk shape, pointing at the Gemini CLI chat.
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&done.path).unwrap()).unwrap();
        let id = agentlog_formats::gemini::gemini_session_id(&gemini);
        assert_eq!(record["acp_session_id"], serde_json::json!(id));
        assert_eq!(record["agent_command"], "gemini --acp");
        assert_eq!(record["last_seq"], 0);
        assert!(record["event_log"]["active_path"].is_string());
        assert!(record["updated_at"].is_string() && record["created_at"].is_string());
        for m in record["messages"].as_array().unwrap() {
            for r in m["Agent"]["tool_results"].as_object().into_iter().flatten() {
                assert!(r.1["tool_name"].is_string(), "{r:?}");
            }
        }
        // agentlog reads it back with the conversation.
        let back = lib.read(&done.path.display().to_string()).unwrap().session;
        let prompts: Vec<String> = back
            .active_branch()
            .iter()
            .filter_map(|e| e.message())
            .filter(|m| m.role == agentlog_model::Role::User && m.injected.is_none())
            .map(|m| m.text_content())
            .filter(|t| !t.is_empty())
            .collect();
        assert!(!prompts.is_empty());
        // Without the chat in Gemini CLI's store there is nothing to load.
        std::fs::remove_file(&chat.path).unwrap();
        std::fs::remove_file(&done.path).unwrap();
        let err = resume(&lib.settings, &gemini, &ResumeParams::new("acpx")).unwrap_err();
        assert!(err.to_string().contains("has no chat"), "{err}");
        assert!(!done.path.exists());
    }

    #[test]
    fn a_dry_run_writes_nothing_and_cwd_is_used() {
        let (_home, lib) = lib();
        let session = lib.read("5e55f0").unwrap().session;
        let p = ResumeParams {
            target: "claude".into(),
            cwd: Some(PathBuf::from("/srv/my proj")),
            dry_run: true,
            source: None,
        };
        let done = resume(&lib.settings, &session, &p).unwrap();
        assert!(!done.written && !done.path.exists());
        assert!(
            done.command.starts_with("cd '/srv/my proj' && "),
            "{}",
            done.command
        );
    }
}
