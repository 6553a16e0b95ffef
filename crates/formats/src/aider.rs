//! Aider chat histories (`<project>/.aider.chat.history.md`).
//!
//! Aider appends every run to one markdown file in the project (the root of
//! its git repository). The file is read the way aider itself reads it back
//! (`--restore-chat-history`): a line starting `#### ` is the user's, one
//! starting `> ` is aider's own output (edits applied, warnings, token
//! counts), a line starting `# ` is a header, and every other line is the
//! model's answer.
//!
//! - Each `# aider chat started at <time>` header starts a run: an event
//!   entry with that time (runs continue one conversation, as aider's
//!   `--restore-chat-history` does).
//! - Consecutive `#### ` lines are one user message; consecutive answer lines
//!   one assistant message; consecutive `> ` lines one system message marked
//!   injected (`aider-output`).
//! - `> Tokens: <n> sent, <m> received.` is the usage of the answer before
//!   it (aider's own counts; `k`/`M` suffixes are read), `Cost: $<x>
//!   message` its cost.
//! - The `.aider.input.history` beside the file (`# <time>` then `+<line>`
//!   per prompt) gives each prompt its time, matched in order by text.
//!
//! The session's cwd is the file's directory. Reading only: the format has
//! no ids or structure to write back losslessly.

use crate::env::{list_dirs, DiscoverEnv};
use crate::{Format, FormatError, Read};
use agentlog_model::{
    Agent, Block, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp, Usage,
};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "aider";
/// The file aider writes in each project.
pub const HISTORY_FILE: &str = ".aider.chat.history.md";
/// The header that starts each run.
const STARTED: &str = "# aider chat started at ";

/// The aider format.
pub struct AiderFormat;

/// The registry entry.
pub static FORMAT: AiderFormat = AiderFormat;

impl Format for AiderFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Aider chat history (<project>/.aider.chat.history.md)"
    }

    fn agent(&self) -> Agent {
        Agent::Aider
    }

    fn extension(&self) -> &'static str {
        "md"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let text = String::from_utf8_lossy(head);
        let starts = text.trim_start_matches(['\n', '\r']).starts_with(STARTED);
        let named = path.file_name().is_some_and(|n| n == HISTORY_FILE);
        match (named, starts) {
            (true, _) => 95,
            (false, true) => 80,
            _ => 0,
        }
    }

    /// Aider keeps no central store: its history lives in each project.
    /// Discovery looks in the roots configured for `aider`, else in the home
    /// directory and the two levels of non-hidden directories below it
    /// (`~/proj`, `~/src/proj`).
    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => vec![env.home.clone()],
        };
        let mut out = Vec::new();
        let visible = |d: &PathBuf| {
            d.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.') && n != "node_modules" && n != "target")
        };
        for root in roots {
            if root.is_file() {
                out.push(root);
                continue;
            }
            let mut dirs = vec![root.clone()];
            for d in list_dirs(&root).into_iter().filter(visible) {
                dirs.extend(list_dirs(&d).into_iter().filter(visible));
                dirs.push(d);
            }
            for d in dirs {
                let f = d.join(HISTORY_FILE);
                if f.is_file() {
                    out.push(f);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        let inputs = input_history(path);
        Ok(read(path, &String::from_utf8_lossy(bytes), &inputs))
    }
}

/// The prompts of `.aider.input.history` beside `path`, with their times.
fn input_history(path: &Path) -> Vec<(String, String)> {
    let Some(dir) = path.parent() else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(dir.join(".aider.input.history")) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = Vec::new();
    let mut time = String::new();
    let mut lines: Vec<&str> = Vec::new();
    let flush = |time: &str, lines: &mut Vec<&str>, out: &mut Vec<(String, String)>| {
        if !lines.is_empty() {
            out.push((time.to_string(), lines.join("\n")));
            lines.clear();
        }
    };
    for l in text.lines() {
        if let Some(t) = l.strip_prefix("# ") {
            flush(&time, &mut lines, &mut out);
            time = t.trim().to_string();
        } else if let Some(p) = l.strip_prefix('+') {
            lines.push(p);
        }
    }
    flush(&time, &mut lines, &mut out);
    out
}

#[derive(PartialEq, Clone, Copy)]
enum Kind {
    User,
    Assistant,
    Output,
}

/// Parses `Tokens: 1.2k sent, 340 received. Cost: $0.01 message, …`.
fn tokens_line(line: &str) -> Option<Usage> {
    let rest = line.trim().strip_prefix("Tokens: ")?;
    let counts = rest.split("Cost:").next().unwrap_or(rest);
    let mut u = Usage::default();
    let mut any = false;
    for part in counts.split(',').map(|p| p.trim().trim_end_matches('.')) {
        let mut words = part.split_whitespace();
        let (Some(n), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        let Some(n) = count(n) else { continue };
        match what {
            "sent" => {
                u.input = n;
                any = true;
            }
            "received" => {
                u.output = n;
                any = true;
            }
            _ => {}
        }
    }
    if let Some(cost) = line.split("Cost: $").nth(1) {
        let num: String = cost
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        u.cost_usd = num.trim_end_matches('.').parse().ok();
    }
    any.then_some(u)
}

/// Reads `123`, `1.2k`, `3M`.
fn count(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1_000.0),
        'M' => (&s[..s.len() - 1], 1_000_000.0),
        _ => (s, 1.0),
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * mult).round() as u64)
}

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

fn read(path: &Path, text: &str, inputs: &[(String, String)]) -> Read {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_token_lines() {
        let u = tokens_line("Tokens: 650 sent, 19 received.").unwrap();
        assert_eq!((u.input, u.output), (650, 19));
        let u =
            tokens_line("Tokens: 2.9k sent, 1.1k received. Cost: $0.01 message, $0.02 session.")
                .unwrap();
        assert_eq!((u.input, u.output, u.cost_usd), (2900, 1100, Some(0.01)));
        assert!(tokens_line("Applied edit to x.py").is_none());
        assert_eq!(count("3M"), Some(3_000_000));
        assert_eq!(count("k"), None);
        assert_eq!(count("-1"), None);
    }
}
