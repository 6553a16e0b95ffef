//! Where pi keeps sessions and how it names them.

use crate::env::DiscoverEnv;
use crate::{FormatError, ResumePlan};
use agentlog_model::{Session, Timestamp};
use std::path::PathBuf;

/// Returns the directory name pi files a working directory's sessions
/// under: `--<cwd without its leading separator, / \ : replaced by ->--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    let safe: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{safe}--")
}

/// Returns pi's file name for a session: `<ISO time, : and . as ->_<id>.jsonl`.
pub fn session_file_name(created: &Timestamp, id: &str) -> String {
    // A timestamp that does not parse is its text: made one safe component.
    let stamp = created.to_rfc3339().replace([':', '.'], "-");
    crate::safe_path::component(&format!("{stamp}_{id}.jsonl"))
}

fn expand_tilde(env: &DiscoverEnv, p: &str) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => env.home_join(rest),
        None if p == "~" => env.home.clone(),
        None => PathBuf::from(p),
    }
}

/// Returns pi's agent directory: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub fn agent_dir(env: &DiscoverEnv) -> PathBuf {
    match env.var("PI_CODING_AGENT_DIR") {
        Some(d) => expand_tilde(env, d),
        None => env.home_join(".pi/agent"),
    }
}

/// Returns where pi and oh-my-pi keep sessions.
pub(crate) fn default_roots(env: &DiscoverEnv) -> Vec<PathBuf> {
    let mut roots = vec![agent_dir(env).join("sessions")];
    if let Some(d) = env.var("PI_CODING_AGENT_SESSION_DIR") {
        roots.push(expand_tilde(env, d));
    }
    roots.push(env.home_join(".pi/agent/sessions"));
    roots.push(env.home_join(".omp/agent/sessions"));
    roots.sort();
    roots.dedup();
    roots
}

/// Plans continuing `session` in pi: the file goes to
/// `<agentDir>/sessions/--<cwd>--/<time>_<id>.jsonl` and `pi --session
/// <file>` continues it from the session's working directory.
pub(crate) fn resume_plan(session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
    let cwd = session
        .meta
        .cwd
        .clone()
        .unwrap_or_else(|| env.home.to_string_lossy().into_owned());
    let created = session
        .meta
        .created_at
        .clone()
        .unwrap_or_else(Timestamp::now);
    let root = agent_dir(env).join("sessions");
    let path = root
        .join(crate::safe_path::component(&encode_cwd(&cwd)))
        .join(session_file_name(&created, &session.meta.id));
    crate::safe_path::inside(&root, &path)?;
    let command = format!(
        "pi --session {}",
        crate::shell::quote(&path.to_string_lossy())
    );
    Ok(ResumePlan {
        path,
        command,
        cwd: Some(PathBuf::from(cwd)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_pi() {
        assert_eq!(encode_cwd("/Users/a/code/p"), "--Users-a-code-p--");
        assert_eq!(encode_cwd("C:\\work\\x"), "--C--work-x--");
        let t = Timestamp::Text("2025-01-01T10:00:00.123Z".into());
        assert_eq!(
            session_file_name(&t, "abc"),
            "2025-01-01T10-00-00-123Z_abc.jsonl"
        );
    }
}
