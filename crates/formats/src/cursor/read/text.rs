//! Cursor's plain-text agent transcripts (`agent-transcripts/<id>.txt`),
//! what Cursor wrote before its JSON lines (until about February 2026;
//! the files stay on disk).
//!
//! A turn starts at a line that is exactly `user:` or `assistant:`. A user
//! turn holds the prompt in `<user_query>…</user_query>`, with attachments
//! (`<attached_files>`) or slash commands (`<cursor_commands>`) around it.
//! An assistant turn (one per tool round) holds, each at column 0:
//! `[Thinking] text`, `[Tool call] Name` followed by its arguments as
//! `  key: value` lines, `[Tool result] Name` (the output itself is never
//! written), and plain text. The file has no ids, times, model or tokens.
//!
//! Two things cannot be told apart in the text, and are read by rule:
//! - where thinking ends: the `[Thinking]` line is the thinking, the lines
//!   after it are the answer's text;
//! - where an argument ends: a value runs until a marker, a turn line, or
//!   the next `  key: ` line of a key the call has not had yet (values
//!   such as a written file's contents continue unindented); once a value
//!   has run over several lines, only a key Cursor's tools take
//!   ([`KNOWN_KEYS`]) starts the next argument, so that a written YAML
//!   file's `  branches: [main]` stays in its contents. Each call keeps its
//!   arguments exactly as written in `extra.arguments_text`.

use super::super::wire::content::classify_user;
use super::meta;
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{Agent, Block, Entry, EntryKind, Message, Role, Session, SessionMeta};
use serde_json::{Map, Value};
use std::path::Path;

/// The argument names of Cursor's tools seen in real transcripts.
const KNOWN_KEYS: &[&str] = &[
    "path",
    "paths",
    "target_directory",
    "working_directory",
    "command",
    "description",
    "timeout",
    "block_until_ms",
    "is_background",
    "offset",
    "limit",
    "pattern",
    "glob_pattern",
    "query",
    "-i",
    "-A",
    "-B",
    "-C",
    "output_mode",
    "head_limit",
    "type",
    "contents",
    "old_string",
    "new_string",
    "replace_all",
    "todos",
    "merge",
    "subagent_type",
    "prompt",
    "model",
    "name",
    "overview",
    "plan",
    "title",
    "questions",
    "url",
    "search_term",
    "explanation",
];

const THINKING: &str = "[Thinking]";
const TOOL_CALL: &str = "[Tool call] ";
const TOOL_RESULT: &str = "[Tool result]";

/// True when `head` starts (after a byte-order mark and blank lines) with
/// a `user:` or `assistant:` line: the start of a text transcript.
pub(in crate::cursor) fn looks_like(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let Some(first) = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
    else {
        return false;
    };
    first == b"user:" || first == b"assistant:"
}

/// What a line of the transcript is.
enum Line<'a> {
    Turn(Role),
    Thinking(&'a str),
    Call(&'a str),
    Result(&'a str),
    Other(&'a str),
}

fn classify(line: &str) -> Line<'_> {
    match line {
        "user:" => return Line::Turn(Role::User),
        "assistant:" => return Line::Turn(Role::Assistant),
        _ => {}
    }
    if let Some(rest) = line.strip_prefix(THINKING) {
        if rest.is_empty() || rest.starts_with(' ') {
            return Line::Thinking(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    if let Some(name) = line.strip_prefix(TOOL_CALL) {
        if !name.trim().is_empty() {
            return Line::Call(name.trim());
        }
    }
    if let Some(rest) = line.strip_prefix(TOOL_RESULT) {
        if rest.is_empty() || rest.starts_with(' ') {
            return Line::Result(rest.trim());
        }
    }
    Line::Other(line)
}

/// The key of an argument line (`  key: value` or `  key:`), and its value.
fn argument(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("  ")?;
    let colon = rest.find(':')?;
    let key = &rest[..colon];
    if key.is_empty()
        || key.len() > 64
        || key.starts_with(char::is_whitespace)
        || key.contains(char::is_whitespace)
    {
        return None;
    }
    let after = &rest[colon + 1..];
    match after.strip_prefix(' ') {
        Some(value) => Some((key, value)),
        None if after.is_empty() => Some((key, "")),
        None => None,
    }
}

/// A turn being read: its role, first line and lines.
struct Turn<'a> {
    role: Role,
    line: u64,
    lines: Vec<(u64, &'a str)>,
}

/// Reads a text transcript. Text before the first turn line is kept as an
/// unknown entry.
pub(in crate::cursor) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64
            + 1;
        FormatError::invalid(path, Some(line), "not UTF-8 text")
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut diags = Vec::new();
    let id = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut smeta = SessionMeta::new(id, Agent::Cursor);
    smeta.format = Some("cursor".into());
    smeta
        .extra
        .insert("transcript".into(), Value::String("text".into()));
    let mut session = Session::new(smeta);

    let mut preamble: Vec<&str> = Vec::new();
    let mut turns: Vec<Turn> = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let number = i as u64 + 1;
        match classify(line) {
            Line::Turn(role) => turns.push(Turn {
                role,
                line: number,
                lines: Vec::new(),
            }),
            _ => match turns.last_mut() {
                Some(t) => t.lines.push((number, line)),
                None => preamble.push(line),
            },
        }
    }
    if turns.is_empty() {
        return Err(FormatError::invalid(
            path,
            Some(1),
            "no `user:` or `assistant:` line: not a Cursor text transcript",
        ));
    }
    let mut prev: Option<String> = None;
    let mut push = |session: &mut Session, kind: EntryKind, line: u64| {
        let mut e = Entry::new(format!("l{line}"), prev.take(), kind);
        e.line = Some(line);
        prev = Some(e.id.clone());
        session.push(e);
    };
    if preamble.iter().any(|l| !l.trim().is_empty()) {
        diags.push(Diagnostic::info(
            path,
            Some(1),
            "unknown-type",
            "text before the first turn line; kept verbatim",
        ));
        let kind = EntryKind::Unknown {
            record_type: Some("preamble".into()),
            raw: Value::String(preamble.join("\n")),
        };
        push(&mut session, kind, 1);
    }
    // Calls not yet answered by a `[Tool result]` line: (name, id).
    let mut pending: Vec<(String, String)> = Vec::new();
    for turn in turns {
        match turn.role {
            Role::User => {
                let body = join_trimmed(turn.lines.iter().map(|(_, l)| *l));
                let mut msg = Message::new(Role::User);
                msg.content.push(Block::text(body));
                classify_user(&mut msg);
                push(&mut session, EntryKind::Message(msg), turn.line);
            }
            _ => {
                let (msg, results) = assistant(&turn, &mut pending, path, &mut diags);
                if !msg.content.is_empty() || results.is_empty() {
                    push(&mut session, EntryKind::Message(msg), turn.line);
                }
                for (line, block) in results {
                    let mut m = Message::new(Role::Tool);
                    m.content.push(block);
                    push(&mut session, EntryKind::Message(m), line);
                }
            }
        }
    }
    meta::enrich_transcript(path, &mut session.meta, &mut diags);
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// Reads an assistant turn: its message (thinking, text and calls, in
/// order) and the results it lists, each with its line.
fn assistant(
    turn: &Turn,
    pending: &mut Vec<(String, String)>,
    path: &Path,
    diags: &mut Vec<Diagnostic>,
) -> (Message, Vec<(u64, Block)>) {
    let mut msg = Message::new(Role::Assistant);
    let mut results = Vec::new();
    let mut text: Vec<&str> = Vec::new();
    let flush_text = |text: &mut Vec<&str>, msg: &mut Message| {
        let t = join_trimmed(text.drain(..));
        if !t.is_empty() {
            msg.content.push(Block::text(t));
        }
    };
    let mut i = 0;
    let lines = &turn.lines;
    while i < lines.len() {
        let (number, line) = lines[i];
        match classify(line) {
            Line::Thinking(t) => {
                flush_text(&mut text, &mut msg);
                // `[Thinking] ` alone: the model's reasoning was not shown.
                if !t.trim().is_empty() {
                    msg.content.push(Block::thinking(t, None));
                }
                i += 1;
            }
            Line::Call(name) => {
                flush_text(&mut text, &mut msg);
                let end = call_end(lines, i + 1);
                let args: Vec<&str> = lines[i + 1..end].iter().map(|(_, l)| *l).collect();
                let id = format!("call-l{number}");
                let mut block = Block::tool_call(Some(id.clone()), name, arguments(&args));
                let raw = join_trimmed(args.iter().copied());
                block
                    .extra
                    .insert("arguments_text".into(), Value::String(raw));
                msg.content.push(block);
                pending.push((name.to_string(), id));
                i = end;
            }
            Line::Result(name) => {
                flush_text(&mut text, &mut msg);
                let pos = pending.iter().position(|(n, _)| n == name);
                let call = pos.map(|p| pending.remove(p).1);
                if call.is_none() {
                    diags.push(Diagnostic::warning(
                        path,
                        Some(number),
                        "orphan-result",
                        format!("a result of {name:?} with no call of that name before it"),
                    ));
                }
                let mut block = Block::tool_result(call, Vec::new(), false);
                block
                    .extra
                    .insert("name".into(), Value::String(name.into()));
                // Cursor writes that a result came back, never what it was.
                block
                    .extra
                    .insert("output_recorded".into(), Value::Bool(false));
                results.push((number, block));
                i += 1;
            }
            Line::Other(l) => {
                text.push(l);
                i += 1;
            }
            Line::Turn(_) => unreachable!("turn lines start turns"),
        }
    }
    flush_text(&mut text, &mut msg);
    (msg, results)
}

/// The index of the first line after the arguments of a call whose first
/// argument line is at `start`: arguments run until a marker, or a line
/// that is not an argument when no argument has started; a value runs on
/// over any line but a marker or a new key's line.
fn call_end(lines: &[(u64, &str)], start: usize) -> usize {
    let mut args = Args::default();
    let mut i = start;
    while i < lines.len() {
        let line = lines[i].1;
        if !matches!(classify(line), Line::Other(_)) {
            break;
        }
        if args.new_key(line).is_none() && args.keys.is_empty() {
            break;
        }
        i += 1;
    }
    // Blank lines at the end separate the calls from their results.
    while i > start && lines[i - 1].1.trim().is_empty() {
        i -= 1;
    }
    i
}

/// The arguments of a call as a JSON object: each value as text, or as
/// the JSON it is when it is an array, an object, a number or a boolean
/// (the agent sent JSON; the transcript printed it).
fn arguments(lines: &[&str]) -> Value {
    let mut out = Map::new();
    let mut args = Args::default();
    let mut current: Option<(&str, Vec<&str>)> = None;
    let finish = |current: &mut Option<(&str, Vec<&str>)>, out: &mut Map<String, Value>| {
        if let Some((key, parts)) = current.take() {
            out.insert(key.to_string(), value_of(&parts.join("\n")));
        }
    };
    for &line in lines {
        match args.new_key(line) {
            Some((key, value)) => {
                finish(&mut current, &mut out);
                current = Some((key, vec![value]));
            }
            None => {
                if let Some((_, parts)) = &mut current {
                    parts.push(line);
                }
            }
        }
    }
    finish(&mut current, &mut out);
    Value::Object(out)
}

/// The arguments of a call being read: the keys so far, and whether the
/// current value has run over more than its first line.
#[derive(Default)]
struct Args<'a> {
    keys: Vec<&'a str>,
    long_value: bool,
}

impl<'a> Args<'a> {
    /// The key and value `line` starts, if it starts the next argument (see
    /// the module's notes); otherwise the line continues the value.
    fn new_key(&mut self, line: &'a str) -> Option<(&'a str, &'a str)> {
        let arg = argument(line).filter(|(key, _)| {
            !self.keys.contains(key) && (!self.long_value || KNOWN_KEYS.contains(key))
        });
        match arg {
            Some((key, _)) => {
                self.keys.push(key);
                self.long_value = false;
            }
            None => self.long_value = !self.keys.is_empty(),
        }
        arg
    }
}

fn value_of(text: &str) -> Value {
    let t = text.trim();
    let json_like = t.starts_with('[')
        || t.starts_with('{')
        || t == "true"
        || t == "false"
        || (!t.is_empty() && t.len() < 19 && t.bytes().all(|b| b.is_ascii_digit()));
    if json_like {
        if let Ok(v) = serde_json::from_str::<Value>(t) {
            return v;
        }
    }
    Value::String(text.to_string())
}

/// The lines joined, without the blank lines around them.
fn join_trimmed<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let lines: Vec<&str> = lines.collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    match (first, last) {
        (Some(a), Some(b)) => lines[a..=b].join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentlog_model::BlockKind;

    fn read_str(s: &str) -> Session {
        read(Path::new("/nowhere/agent-transcripts/t1.txt"), s.as_bytes())
            .unwrap()
            .session
    }

    #[test]
    fn detects_turn_lines_only() {
        assert!(looks_like(b"user:\n<user_query>\nhi\n</user_query>\n"));
        assert!(looks_like(b"\xef\xbb\xbf\r\nuser:\r\nhi"));
        assert!(!looks_like(b"user: hi\n"));
        assert!(!looks_like(b"{\"role\":\"user\"}\n"));
    }

    #[test]
    fn arguments_run_on_over_unindented_lines_until_a_new_key() {
        let s = read_str(
            "user:\n<user_query>\nwrite it\n</user_query>\n\nassistant:\n[Tool call] Write\n  path: /a/b.md\n  contents: # t\n\n  branches: [main]\nbody\n[Tool call] Shell\n  command: ls\n  timeout: 120\n  merge: true\n\n[Tool result] Write\n\n[Tool result] Shell\n\nassistant:\nDone.",
        );
        let calls: Vec<(&str, &Value)> = s
            .entries
            .iter()
            .filter_map(Entry::message)
            .flat_map(|m| m.tool_calls().map(|(_, n, v)| (n, v)))
            .collect();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].0, "Write");
        assert_eq!(calls[0].1["path"], "/a/b.md");
        // `  branches: [main]` after the contents' first lines is not a
        // key of Cursor's tools: it stays in the contents.
        assert_eq!(calls[0].1["contents"], "# t\n\n  branches: [main]\nbody");
        assert_eq!(calls[1].1["timeout"], 120);
        assert_eq!(calls[1].1["merge"], true);
        let results: Vec<&Block> = s
            .entries
            .iter()
            .filter_map(Entry::message)
            .filter(|m| m.role == Role::Tool)
            .flat_map(|m| &m.content)
            .collect();
        assert_eq!(results.len(), 2);
        let BlockKind::ToolResult { tool_call_id, .. } = &results[1].kind else {
            panic!("{:?}", results[1]);
        };
        assert_eq!(tool_call_id.as_deref(), Some("call-l13"));
    }

    #[test]
    fn thinking_is_its_line_and_the_prompt_is_the_query() {
        let s = read_str(
            "user:\n<cursor_commands>\n--- Cursor Command: review ---\nx\n--- End Command ---\n</cursor_commands>\n<user_query>\n/review\n</user_query>\n\nassistant:\n[Thinking] **Plan**\nI will look.",
        );
        let msgs: Vec<&Message> = s.entries.iter().filter_map(Entry::message).collect();
        assert_eq!(msgs[0].text_content(), "/review");
        assert!(
            matches!(&msgs[1].content[0].kind, BlockKind::Thinking { text, .. } if text == "**Plan**")
        );
        assert!(
            matches!(&msgs[1].content[1].kind, BlockKind::Text { text } if text == "I will look.")
        );
    }

    #[test]
    fn a_file_without_turns_is_an_error_naming_the_line() {
        let e = read(Path::new("x.txt"), b"hello\nworld\n").unwrap_err();
        assert!(e.to_string().contains("x.txt"), "{e}");
        let e = read(Path::new("x.txt"), b"user:\n\xff\n").unwrap_err();
        assert!(e.to_string().contains("x.txt:2:"), "{e}");
    }
}
