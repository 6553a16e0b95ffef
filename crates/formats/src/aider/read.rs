//! Reads an aider history into a session.

use super::wire::{tokens_line, Kind, STARTED};
use super::FORMAT_NAME;
use crate::Read;
use agentlog_model::{
    Agent, Block, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp, Usage,
};
use serde_json::json;
use std::path::Path;

struct Builder {
    session: Session,
    n: u64,
    kind: Option<Kind>,
    lines: Vec<String>,
    first_line: u64,
    last_assistant: Option<usize>,
    inputs: Vec<(String, String)>,
    next_input: usize,
}

impl Builder {
    fn push(&mut self, kind: EntryKind, line: u64, ts: Option<Timestamp>) -> usize {
        self.n += 1;
        let mut e = Entry::new(format!("m{}", self.n), self.session.leaf_id.clone(), kind);
        e.line = Some(line);
        e.timestamp = ts;
        self.session.push(e);
        self.session.entries.len() - 1
    }

    fn flush(&mut self) {
        let Some(kind) = self.kind.take() else {
            return;
        };
        let text = std::mem::take(&mut self.lines).join("\n");
        let text = text.trim_end().trim_start_matches('\n').to_string();
        if text.trim().is_empty() {
            return;
        }
        let line = self.first_line;
        match kind {
            Kind::User => {
                let ts = self.prompt_time(&text);
                let mut m = Message::new(Role::User);
                m.content.push(Block::text(text));
                self.push(EntryKind::Message(m), line, ts);
            }
            Kind::Assistant => {
                let mut m = Message::new(Role::Assistant);
                m.content.push(Block::text(text));
                let i = self.push(EntryKind::Message(m), line, None);
                self.last_assistant = Some(i);
            }
            Kind::Output => {
                for l in text.lines() {
                    if let Some(u) = tokens_line(l) {
                        self.usage(u);
                    }
                }
                let mut m = Message::new(Role::System);
                m.content.push(Block::text(text));
                m.injected = Some("aider-output".into());
                self.push(EntryKind::Message(m), line, None);
            }
        }
    }

    fn usage(&mut self, u: Usage) {
        let Some(i) = self.last_assistant.take() else {
            return;
        };
        if let Some(EntryKind::Message(m)) = self.session.entries.get_mut(i).map(|e| &mut e.kind) {
            m.usage = Some(u);
        }
    }

    /// The time of the next prompt in the input history with this text.
    fn prompt_time(&mut self, text: &str) -> Option<Timestamp> {
        let found = self.inputs[self.next_input.min(self.inputs.len())..]
            .iter()
            .position(|(_, p)| p.trim_end() == text)?;
        let i = self.next_input + found;
        self.next_input = i + 1;
        Some(Timestamp::Text(self.inputs[i].0.clone()))
    }
}

pub(super) fn read(path: &Path, text: &str, inputs: &[(String, String)]) -> Read {
    let cwd = path
        .parent()
        .map(|d| d.display().to_string())
        .filter(|d| !d.is_empty());
    let id = crate::ids::stable_uuid(&path.display().to_string()).to_string();
    let mut meta = SessionMeta::new(id, Agent::Aider);
    meta.format = Some(FORMAT_NAME.into());
    meta.cwd = cwd;
    let mut b = Builder {
        session: Session::new(meta),
        n: 0,
        kind: None,
        lines: Vec::new(),
        first_line: 0,
        last_assistant: None,
        inputs: inputs.to_vec(),
        next_input: 0,
    };
    for (i, raw) in text.lines().enumerate() {
        let line = i as u64 + 1;
        if let Some(t) = raw.strip_prefix(STARTED) {
            b.flush();
            b.last_assistant = None;
            let t = t.trim().to_string();
            let ts = Timestamp::Text(t.clone());
            if b.session.meta.created_at.is_none() {
                b.session.meta.created_at = Some(ts.clone());
            }
            b.session.meta.updated_at = Some(ts.clone());
            b.push(
                EntryKind::Event {
                    source: FORMAT_NAME.into(),
                    event_type: "chat_started".into(),
                    seq: None,
                    payload: json!({ "started_at": t }),
                },
                line,
                Some(ts),
            );
            continue;
        }
        if raw.starts_with("# ") {
            continue;
        }
        let (kind, content) = if let Some(c) = raw.strip_prefix("> ") {
            (Kind::Output, c)
        } else if let Some(c) = raw.strip_prefix("#### ") {
            (Kind::User, c)
        } else {
            (Kind::Assistant, raw)
        };
        // A blank line ends a user or output block, as in aider's reader.
        if kind == Kind::Assistant && b.kind != Some(Kind::Assistant) && raw.trim().is_empty() {
            b.flush();
            continue;
        }
        if b.kind != Some(kind) {
            b.flush();
            b.kind = Some(kind);
            b.first_line = line;
        }
        b.lines.push(content.trim_end().to_string());
    }
    b.flush();
    if b.session.meta.title.is_none() {
        b.session.meta.title = b.session.first_prompt();
    }
    Read {
        session: b.session,
        diagnostics: Vec::new(),
    }
}
