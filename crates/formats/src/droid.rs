//! Factory Droid sessions, in the two shapes Droid writes:
//!
//! - its session store (`~/.factory/sessions/<id>.jsonl`, or under
//!   `$DROID_SESSIONS_DIR`): a `session_start` record (id, title, cwd,
//!   owner, Droid version) followed by `message` records (`id`, `parentId`,
//!   `timestamp`, `message: {role, content[]}`) whose content blocks are
//!   Anthropic-style: `text`, `thinking`, `tool_use`, `tool_result`,
//!   `image`;
//! - the stream of `droid exec --output-format stream-json`: `message`
//!   (`role`, `text`), `tool_call` (`toolCallId`, `toolName`,
//!   `parameters`), `tool_result` (`toolCallId`, `value`), `completion`
//!   (`finalText`), each with `session_id` and `timestamp`.
//!
//! Records of other types are kept verbatim. Droid opens a session with a
//! user message of its own (`context-…`, `<system-reminder>` blocks): it is
//! marked injected. Reading only. Checked against a file Droid 0.225.2
//! (`@factory/cli` from npm) wrote against the mock model server, and
//! public sample files of older shapes.

use crate::env::{walk_files, DiscoverEnv};
use crate::{jsonl, Diagnostic, Format, FormatError, Read};
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta,
    Timestamp,
};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "droid";

/// The Factory Droid format.
pub struct DroidFormat;

/// The registry entry.
pub static FORMAT: DroidFormat = DroidFormat;

/// Returns where Droid keeps sessions: `$DROID_SESSIONS_DIR`, else
/// `~/.factory/sessions`.
pub fn sessions_dir(env: &DiscoverEnv) -> PathBuf {
    env.var_path("DROID_SESSIONS_DIR")
        .unwrap_or_else(|| env.home.join(".factory").join("sessions"))
}

/// The type of the first record, when it is one of Droid's.
fn first_type(head: &[u8]) -> Option<(String, Map<String, Value>)> {
    let Some(Value::Object(o)) = jsonl::first_value(head) else {
        return None;
    };
    let ty = o.get("type")?.as_str()?.to_string();
    Some((ty, o))
}

impl Format for DroidFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Factory Droid session (sessions/<id>.jsonl, or exec stream-json)"
    }

    fn agent(&self) -> Agent {
        Agent::Other("droid".into())
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let in_factory = path
            .to_str()
            .is_some_and(|p| p.contains("/.factory/sessions/"));
        match first_type(head) {
            Some((ty, o)) if ty == "session_start" && o.contains_key("id") => 90,
            Some((ty, o))
                if ["message", "tool_call", "tool_result", "completion"].contains(&ty.as_str())
                    && o.contains_key("session_id")
                    && (o.contains_key("text")
                        || o.contains_key("toolCallId")
                        || o.contains_key("finalText")) =>
            {
                80
            }
            Some(_) if in_factory => 40,
            _ => 0,
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => vec![sessions_dir(env)],
        };
        roots
            .iter()
            .flat_map(|r| {
                walk_files(r, 3, &|p: &Path| {
                    p.extension().is_some_and(|e| e == "jsonl")
                        && !p
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
            })
            .collect()
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        let mut diags = Vec::new();
        let records = jsonl::parse_values(path, bytes, &mut diags);
        if records.is_empty() {
            return Err(FormatError::invalid(path, None, "no Droid records"));
        }
        let fallback = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut meta = SessionMeta::new(fallback, self.agent());
        meta.format = Some(FORMAT_NAME.into());
        let mut entries: Vec<Entry> = Vec::new();
        let mut prev: Option<String> = None;
        for (n, v) in records {
            let Value::Object(o) = v else {
                diags.push(Diagnostic::warning(
                    path,
                    Some(n),
                    "not-an-object",
                    "line is JSON but not an object; kept verbatim",
                ));
                entries.push(unknown(n, None, Value::Null, &prev));
                continue;
            };
            let ty = o
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let ts = o
                .get("timestamp")
                .and_then(Value::as_str)
                .map(|s| Timestamp::Text(s.to_string()));
            if meta.created_at.is_none() {
                meta.created_at = ts.clone();
            }
            if let Some(sid) = o.get("session_id").and_then(Value::as_str) {
                meta.id = sid.to_string();
            }
            let entry = match ty.as_str() {
                "session_start" => {
                    start_meta(&o, &mut meta);
                    None
                }
                "message" if o.get("message").is_some_and(Value::is_object) => {
                    store_message(&o, n, &prev)
                }
                "message" => stream_message(&o, n, &prev),
                "tool_call" => stream_call(&o, n, &prev),
                "tool_result" => stream_result(&o, n, &prev),
                "completion" => o.get("finalText").and_then(Value::as_str).map(|t| {
                    let mut m = Message::new(Role::Assistant);
                    m.content.push(Block::text(t.to_string()));
                    entry(n, &o, EntryKind::Message(m), &prev, &["finalText"])
                }),
                // Bookkeeping Droid writes after each turn: kept as it is.
                "agent_turn_outcome" => {
                    Some(unknown(n, Some(&ty), Value::Object(o.clone()), &prev))
                }
                _ => None,
            };
            let entry = match entry {
                Some(e) => e,
                None if ty == "session_start" => {
                    // Kept for the record (its fields are in the metadata).
                    unknown(n, Some(&ty), Value::Object(o), &prev)
                }
                None => {
                    diags.push(Diagnostic::info(
                        path,
                        Some(n),
                        "unknown-type",
                        format!("record type {ty:?} is not known; kept verbatim"),
                    ));
                    unknown(n, Some(&ty), Value::Object(o), &prev)
                }
            };
            let entry = match ts {
                Some(t) if entry.timestamp.is_none() => entry.at(t),
                _ => entry,
            };
            prev = Some(entry.id.clone());
            entries.push(entry);
        }
        if meta.updated_at.is_none() {
            meta.updated_at = entries.iter().rev().find_map(|e| e.timestamp.clone());
        }
        let mut session = Session::new(meta);
        // Entries name their parents when the store gives them; a parent
        // that is not an entry (the session id) makes a root.
        let ids: std::collections::HashSet<String> = entries.iter().map(|e| e.id.clone()).collect();
        for e in &mut entries {
            if e.parent_id.as_ref().is_some_and(|p| !ids.contains(p)) {
                e.parent_id = None;
            }
        }
        session.leaf_id = entries.last().map(|e| e.id.clone());
        session.entries = entries;
        Ok(Read {
            session,
            diagnostics: diags,
        })
    }
}

/// Fills the metadata from a `session_start` record.
fn start_meta(o: &Map<String, Value>, meta: &mut SessionMeta) {
    if let Some(id) = o.get("id").and_then(Value::as_str) {
        meta.id = id.to_string();
    }
    meta.title = o
        .get("sessionTitle")
        .or_else(|| o.get("title"))
        .and_then(Value::as_str)
        .map(str::to_string);
    meta.cwd = o.get("cwd").and_then(Value::as_str).map(str::to_string);
    meta.agent_version = o.get("version").and_then(Value::as_str).map(str::to_string);
    for (k, v) in o {
        if !["type", "id", "title", "sessionTitle", "cwd", "version"].contains(&k.as_str()) {
            meta.extra.insert(k.clone(), v.clone());
        }
    }
}

/// An entry for line `n`: its own `id` (else `line<n>`), its `parentId`
/// (else the previous entry), the record's other fields as extras.
fn entry(
    n: u64,
    o: &Map<String, Value>,
    kind: EntryKind,
    prev: &Option<String>,
    used: &[&str],
) -> Entry {
    let id = o
        .get("id")
        .and_then(Value::as_str)
        .map_or_else(|| format!("line{n}"), str::to_string);
    let parent = match o.get("parentId") {
        Some(Value::String(p)) => Some(p.clone()),
        Some(Value::Null) => None,
        _ => prev.clone(),
    };
    let mut extra = Extra::new();
    for (k, v) in o {
        if !["type", "id", "parentId", "timestamp"].contains(&k.as_str())
            && !used.contains(&k.as_str())
        {
            extra.insert(k.clone(), v.clone());
        }
    }
    let mut e = Entry::new(id, parent, kind);
    e.extra = extra;
    e.line = Some(n);
    e
}

fn unknown(n: u64, ty: Option<&str>, raw: Value, prev: &Option<String>) -> Entry {
    let mut e = Entry::new(
        format!("line{n}"),
        prev.clone(),
        EntryKind::Unknown {
            record_type: ty.map(str::to_string),
            raw,
        },
    );
    e.line = Some(n);
    e
}

fn role_of(s: &str) -> Role {
    match s {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        other => Role::Custom(other.to_string()),
    }
}

/// A session-store `message` record.
fn store_message(o: &Map<String, Value>, n: u64, prev: &Option<String>) -> Option<Entry> {
    let msg = o.get("message")?.as_object()?;
    let mut m = Message::new(role_of(
        msg.get("role").and_then(Value::as_str).unwrap_or(""),
    ));
    match msg.get("content") {
        Some(Value::String(s)) => {
            m.content_is_text = true;
            m.content.push(Block::text(s.clone()));
        }
        Some(Value::Array(blocks)) => m.content.extend(blocks.iter().map(block)),
        _ => {}
    }
    for (k, v) in msg {
        if k != "role" && k != "content" {
            m.extra.insert(k.clone(), v.clone());
        }
    }
    // Droid opens a session with a user message of its own (id
    // `context-…`, `<system-reminder>` blocks: tools, skills, the
    // environment): context it injects, not a prompt.
    let context_id = o
        .get("id")
        .and_then(Value::as_str)
        .is_some_and(|id| id.starts_with("context-"));
    if m.role == Role::User
        && (context_id
            || m.text_content()
                .trim_start()
                .starts_with("<system-reminder>"))
    {
        m.injected = Some("system-reminder".into());
    }
    Some(entry(n, o, EntryKind::Message(m), prev, &["message"]))
}

/// One Anthropic-style content block.
fn block(v: &Value) -> Block {
    let other = || Block {
        kind: BlockKind::Other { value: v.clone() },
        extra: Extra::new(),
    };
    let Some(o) = v.as_object() else {
        return other();
    };
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    match o.get("type").and_then(Value::as_str) {
        Some("text") => s("text").map_or_else(other, Block::text),
        Some("thinking") => {
            s("thinking").map_or_else(other, |t| Block::thinking(t, s("signature")))
        }
        Some("tool_use") => match s("name") {
            Some(name) => Block::tool_call(
                s("id"),
                name,
                o.get("input").cloned().unwrap_or(Value::Null),
            ),
            None => other(),
        },
        Some("tool_result") => {
            let content = match o.get("content") {
                Some(Value::String(t)) => vec![Block::text(t.clone())],
                Some(Value::Array(items)) => items.iter().map(block).collect(),
                _ => Vec::new(),
            };
            let failed = o.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            Block::tool_result(s("tool_use_id"), content, failed)
        }
        _ => other(),
    }
}

/// A stream-json `message` (`role`, `text`).
fn stream_message(o: &Map<String, Value>, n: u64, prev: &Option<String>) -> Option<Entry> {
    let text = o.get("text")?.as_str()?;
    let mut m = Message::new(role_of(
        o.get("role").and_then(Value::as_str).unwrap_or("assistant"),
    ));
    m.content.push(Block::text(text.to_string()));
    Some(entry(n, o, EntryKind::Message(m), prev, &["role", "text"]))
}

/// A stream-json `tool_call`.
fn stream_call(o: &Map<String, Value>, n: u64, prev: &Option<String>) -> Option<Entry> {
    let name = o.get("toolName")?.as_str()?;
    let id = o
        .get("toolCallId")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut m = Message::new(Role::Assistant);
    m.content.push(Block::tool_call(
        id,
        name.to_string(),
        o.get("parameters").cloned().unwrap_or(Value::Null),
    ));
    Some(entry(
        n,
        o,
        EntryKind::Message(m),
        prev,
        &["toolCallId", "toolName", "parameters"],
    ))
}

/// A stream-json `tool_result` (`value`: text, or `stdout`/`exitCode`).
fn stream_result(o: &Map<String, Value>, n: u64, prev: &Option<String>) -> Option<Entry> {
    let id = o
        .get("toolCallId")
        .and_then(Value::as_str)
        .map(str::to_string);
    let value = o.get("value")?;
    let (text, failed) = match value {
        Value::String(s) => (s.clone(), false),
        Value::Object(v) => {
            let out = v
                .get("stdout")
                .or_else(|| v.get("output"))
                .and_then(Value::as_str)
                .map_or_else(|| value.to_string(), str::to_string);
            let code = v.get("exitCode").and_then(Value::as_i64).unwrap_or(0);
            (out, code != 0 || v.get("error").is_some())
        }
        other => (other.to_string(), false),
    };
    let mut m = Message::new(Role::Tool);
    m.content
        .push(Block::tool_result(id, vec![Block::text(text)], failed));
    Some(entry(
        n,
        o,
        EntryKind::Message(m),
        prev,
        &["toolCallId", "value"],
    ))
}
