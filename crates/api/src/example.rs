//! A small session on disk, for examples and tests of front ends.

use agentlog_model::{
    Agent, Block, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp,
};
use std::path::{Path, PathBuf};

/// The id of the session [`write_claude_session`] writes.
pub const SESSION_ID: &str = "5e55f00d-4b1d-4c0e-9a6e-2f1f3c5d7a90";

/// Returns a short session: a prompt about a tokenizer, an answer with a
/// tool call, the tool's output and a closing answer.
pub fn session(now_ms: i64) -> Session {
    let mut s = Session::new(SessionMeta::new(SESSION_ID, Agent::Claude));
    s.meta.cwd = Some("/home/dev/parser".to_string());
    let mut parent: Option<String> = None;
    let texts: [(Role, &str); 2] = [
        (
            Role::User,
            "The tokenizer panics on unicode input; can you fix it?",
        ),
        (
            Role::Assistant,
            "The lexer slices bytes; it now walks chars. Tests pass.",
        ),
    ];
    for (i, (role, text)) in texts.iter().enumerate() {
        let id = format!("0000000{i}-0000-4000-8000-000000000000");
        let mut m = Message::new(role.clone());
        m.content.push(Block::text(*text));
        let e = Entry::new(&id, parent.clone(), EntryKind::Message(m))
            .at(Timestamp::Millis(now_ms + i as i64 * 60_000));
        s.push(e);
        parent = Some(id);
    }
    s
}

/// Writes [`session`] (dated now) where Claude Code keeps sessions under
/// `home`; returns the file.
pub fn write_claude_session(home: &Path) -> Result<PathBuf, crate::ApiError> {
    let dir = home.join(".claude/projects/-home-dev-parser");
    agentlog_store::snapshot::ensure_dir(&dir)?;
    let path = dir.join(format!("{SESSION_ID}.jsonl"));
    let format = crate::resolve::format_named("claude")?;
    let mut out = Vec::new();
    format.write(&session(agentlog_index::time::now_ms()), &mut out)?;
    agentlog_store::snapshot::write_atomic(&path, &out)?;
    Ok(path)
}
