//! Reads a Kimi session: `context.jsonl`, with `wire.jsonl`, `state.json`
//! and the share directory's `kimi.json` for usage, times, title and cwd.

use super::wire::{millis, usage_of, STATE, WIRE};
use super::FORMAT_NAME;
use crate::chat::message_entry;
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{
    Block, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp, Usage,
};
use md5::{Digest, Md5};
use serde_json::{Map, Value};
use std::path::Path;

/// One model step of the wire: its usage, response id and time.
struct Step {
    usage: Usage,
    message_id: Option<String>,
    at: Option<i64>,
}

/// What the wire tells of the session.
#[derive(Default)]
struct Wire {
    protocol: Option<Value>,
    turns: Vec<Option<i64>>,
    steps: Vec<Step>,
}

fn read_json(path: &Path) -> Option<Value> {
    let bytes = crate::input::read_file(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn read_wire(path: &Path, diags: &mut Vec<Diagnostic>) -> Wire {
    let mut w = Wire::default();
    let Ok(bytes) = crate::input::read_file(path) else {
        return w;
    };
    for (_, r) in crate::jsonl::parse_values(path, &bytes, diags) {
        if r.get("type").and_then(Value::as_str) == Some("metadata") {
            w.protocol = r.get("protocol_version").cloned();
            continue;
        }
        let Some(msg) = r.get("message") else {
            continue;
        };
        let at = millis(r.get("timestamp"));
        match msg.get("type").and_then(Value::as_str) {
            Some("TurnBegin") => w.turns.push(at),
            Some("StatusUpdate") => {
                let p = msg.get("payload");
                if let Some(t) = p.and_then(|p| p.get("token_usage")) {
                    w.steps.push(Step {
                        usage: usage_of(t),
                        message_id: p
                            .and_then(|p| p.get("message_id"))
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        at,
                    });
                }
            }
            _ => {}
        }
    }
    w
}

/// The work directory whose folder name (its path's MD5, prefixed with its
/// `kaos` when not local) is `folder`, from `kimi.json`.
fn work_dir(kimi_json: &Path, folder: &str) -> Option<String> {
    let doc = read_json(kimi_json)?;
    doc.get("work_dirs")?.as_array()?.iter().find_map(|w| {
        let p = w.get("path")?.as_str()?;
        let hash = format!("{:x}", Md5::digest(p.as_bytes()));
        let kaos = w.get("kaos").and_then(Value::as_str).unwrap_or("local");
        let name = if kaos == "local" {
            hash
        } else {
            format!("{kaos}_{hash}")
        };
        (name == folder).then(|| p.to_string())
    })
}

/// Reads the `context.jsonl` at `path`, whose bytes are `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let mut diags = Vec::new();
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string()
    };
    let mut meta = SessionMeta::new(name(dir), crate::Format::agent(&super::FORMAT));
    meta.format = Some(FORMAT_NAME.into());
    if let Some(Value::Object(state)) = read_json(&dir.join(STATE)) {
        meta.title = state
            .get("custom_title")
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
            .map(str::to_string);
        meta.extra.insert("state_file".into(), Value::Object(state));
    }
    if let Some(work) = dir.parent() {
        if let Some(share) = work.parent().and_then(Path::parent) {
            meta.cwd = work_dir(&share.join("kimi.json"), &name(work));
        }
    }
    let wire = read_wire(&dir.join(WIRE), &mut diags);
    meta.format_version = wire.protocol.clone();
    let mut session = Session::new(meta);
    let (mut turns, mut steps) = (wire.turns.into_iter(), wire.steps.into_iter());
    for (n, v) in crate::jsonl::parse_values(path, bytes, &mut diags) {
        let mut e = match v {
            Value::Object(m) if m.get("role").is_some_and(Value::is_string) => {
                let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
                if let Some(own) = role.strip_prefix('_') {
                    own_record(own.to_string(), m, n)
                } else {
                    let mut e = message_entry(m, n, FORMAT_NAME);
                    if let EntryKind::Message(msg) = &mut e.kind {
                        match msg.role {
                            Role::User => {
                                e.timestamp = turns.next().flatten().map(Timestamp::Millis)
                            }
                            Role::Assistant => {
                                if let Some(step) = steps.next() {
                                    msg.usage = Some(step.usage);
                                    msg.id = step.message_id;
                                    e.timestamp = step.at.map(Timestamp::Millis);
                                }
                            }
                            _ => {}
                        }
                    }
                    e
                }
            }
            other => {
                diags.push(Diagnostic::warning(
                    path,
                    Some(n),
                    "unknown-record",
                    format!("line {n} is not a message or one of Kimi's records; kept verbatim"),
                ));
                Entry::new(
                    format!("l{n}"),
                    None,
                    EntryKind::Unknown {
                        record_type: None,
                        raw: other,
                    },
                )
            }
        };
        e.parent_id = session.leaf_id.clone();
        e.line = Some(n);
        session.push(e);
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// One of Kimi's own records (`_system_prompt`, `_checkpoint`, `_usage`,
/// …): the system prompt as an injected system message, the others as
/// events kept whole.
fn own_record(kind: String, mut m: Map<String, Value>, n: u64) -> Entry {
    if kind == "system_prompt" && m.get("content").is_some_and(Value::is_string) {
        let mut msg = Message::new(Role::System);
        if let Some(Value::String(text)) = m.remove("content") {
            msg.content.push(Block::text(text));
            msg.content_is_text = true;
        }
        msg.injected = Some("system_prompt".into());
        m.remove("role");
        msg.extra = m;
        let mut e = Entry::new(format!("l{n}"), None, EntryKind::Message(msg));
        e.extra
            .insert(crate::chat::SYNTHETIC_ID.into(), Value::Bool(true));
        return e;
    }
    Entry::new(
        format!("l{n}"),
        None,
        EntryKind::Event {
            source: FORMAT_NAME.into(),
            event_type: kind,
            seq: None,
            payload: Value::Object(m),
        },
    )
}
