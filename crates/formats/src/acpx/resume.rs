//! Continuing a session through acpx.
//!
//! acpx does not hold a conversation itself: it drives an ACP agent, and
//! when a session is continued it asks the agent to load the agent's own
//! session (`session/load` with the record's `acp_session_id`); when that
//! fails it starts an empty one. So a session can be continued through
//! acpx only in an agent whose ACP mode loads its own sessions by id and
//! that has the session in its store. agentlog writes the record acpx keeps
//! (its on-disk shape, in `~/.acpx/sessions`) pointing at that session,
//! with the conversation in `messages` for acpx's `sessions read`, and a
//! name, so `acpx <agent> -s <name>` picks exactly this record.

use super::wire::record::{Layout, Opt};
use super::write::record_from_session;
use super::{sessions_dir, FORMAT};
use crate::env::DiscoverEnv;
use crate::{Fidelity, Format, FormatError, ResumePlan};
use agentlog_model::{Agent, Session};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// The agents acpx starts with a fixed command of its agent registry and
/// whose ACP mode loads their own sessions: the agent, acpx's name for it,
/// and the command.
const DRIVEN: &[(Agent, &str, &[&str])] = &[(Agent::Gemini, "gemini", &["gemini", "--acp"])];

/// The segment size and count acpx gives a new session's event log.
const MAX_SEGMENT_BYTES: u64 = 64 * 1024 * 1024;
const MAX_SEGMENTS: u64 = 5;

/// What acpx needs to continue `session`.
struct Target {
    /// acpx's agent name (`gemini`).
    agent: &'static str,
    /// The command acpx starts the agent with.
    argv: &'static [&'static str],
    /// The agent's own session id.
    session_id: String,
    /// The record's id (its file is `<id>.json`).
    record_id: String,
    /// The record's name.
    name: String,
}

fn target(session: &Session) -> Result<Target, FormatError> {
    let Some(&(_, agent, argv)) = DRIVEN.iter().find(|(a, _, _)| *a == session.meta.agent) else {
        return Err(FormatError::Unsupported {
            format: FORMAT.name(),
            operation: "continuing this agent's sessions (acpx continues a session in the \
                        agent that holds it; agentlog can point it at Gemini CLI sessions: \
                        resume the session in gemini first, then resume that chat in acpx)",
        });
    };
    let session_id = crate::gemini::gemini_session_id(session);
    let short: String = session_id.chars().take(8).collect();
    Ok(Target {
        agent,
        argv,
        record_id: crate::ids::stable_uuid(&format!("acpx/{agent}/{session_id}")).to_string(),
        name: format!("agentlog-{short}"),
        session_id,
    })
}

/// Plans the record: where it goes and the command that continues it.
pub(super) fn plan(session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
    let t = target(session)?;
    if crate::gemini::chat_path(env, &t.session_id).is_none() {
        return Err(FormatError::io(
            crate::gemini::gemini_dir(env).join("tmp"),
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "Gemini CLI has no chat {} here, so acpx could not load it (it would start \
                     an empty session); resume the session in gemini first, then resume that \
                     chat in acpx",
                    t.session_id
                ),
            ),
        ));
    }
    let dir = sessions_dir(&env.home);
    let path = dir.join(crate::safe_path::component(&format!(
        "{}.json",
        t.record_id
    )));
    crate::safe_path::inside(&dir, &path)?;
    let cwd = session.meta.cwd.clone().filter(|c| !c.is_empty());
    Ok(ResumePlan {
        path,
        command: format!("acpx {} -s {} -f -", t.agent, crate::shell::quote(&t.name)),
        cwd: cwd.map(PathBuf::from),
    })
}

/// Writes the record of [`plan`] in acpx's on-disk shape.
pub(super) fn write(
    session: &Session,
    plan: &ResumePlan,
    out: &mut dyn Write,
) -> Result<Fidelity, FormatError> {
    let t = target(session)?;
    let (mut rec, fidelity) = record_from_session(session);
    rec.layout = Layout::Disk;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let r = &mut rec.record;
    r.acpx_record_id = t.record_id.clone();
    r.acp_session_id = Opt::Set(t.session_id.clone());
    r.agent_command = Opt::Set(t.argv.join(" "));
    r.name = Opt::Set(t.name.clone());
    r.closed = Opt::Set(false);
    r.closed_at = Opt::Absent;
    if r.cwd.get().is_none() {
        r.cwd = Opt::Set(
            plan.cwd
                .as_ref()
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
    }
    let created = r.created_at.get().cloned().unwrap_or_else(|| now.clone());
    r.created_at = Opt::Set(created);
    let used = r.last_used_at.get().cloned().unwrap_or_else(|| now.clone());
    r.last_used_at = Opt::Set(used.clone());
    let thread = r.thread_mut();
    if thread.updated_at.get().is_none() {
        thread.updated_at = Opt::Set(used);
    }
    if thread.title.get().is_none() {
        thread.title = Opt::Absent;
    }
    let log = plan
        .path
        .with_file_name(format!("{}.stream.ndjson", t.record_id));
    r.extra.insert("agentArgv".into(), json!(t.argv));
    r.extra.insert("lastSeq".into(), json!(0));
    r.extra.insert(
        "eventLog".into(),
        json!({
            "active_path": log.to_string_lossy(),
            "segment_count": 1,
            "max_segment_bytes": MAX_SEGMENT_BYTES,
            "max_segments": MAX_SEGMENTS,
        }),
    );
    out.write_all(rec.to_text().as_bytes())
        .map_err(|e| FormatError::write("acpx session record", e))?;
    Ok(fidelity)
}
