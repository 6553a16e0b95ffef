//! Reads a session of Vibe's unified session store (3.x) from its
//! directory: `meta.json`, `CURRENT`, the generation's manifest and chunks,
//! and the journal written since.

use super::wire::{apply_meta, num, put_total_usage, take_string, CURRENT};
use super::FORMAT_NAME;
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{
    Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta, Timestamp,
    Usage,
};
use serde_json::{Map, Value};
use std::path::Path;

/// Reads the session whose `meta.json` is at `path` (with bytes `bytes`).
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let doc: Value = serde_json::from_slice(bytes)
        .map_err(|e| FormatError::invalid(path, Some(e.line() as u64), format!("not JSON: {e}")))?;
    let Value::Object(doc) = doc else {
        return Err(FormatError::invalid(path, None, "not a JSON object"));
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let dir_id = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let mut meta = SessionMeta::new(dir_id, crate::Format::agent(&super::FORMAT));
    meta.format = Some(FORMAT_NAME.into());
    apply_meta(doc, &mut meta);
    let mut diags = Vec::new();
    let mut store = Store::open(dir, &mut diags);
    if let Some(current) = &store.current {
        meta.format_version = match (
            current.get("store_format").and_then(Value::as_str),
            current.get("store_format_minor").and_then(Value::as_u64),
        ) {
            (Some(f), Some(minor)) => Some(Value::from(format!("{f}.{minor}"))),
            (Some(f), None) => Some(Value::from(f)),
            _ => None,
        };
        meta.extra.insert("current".into(), current.clone());
    }
    if let Some(title) = store
        .envelope
        .as_ref()
        .and_then(|e| e.pointer("/session/title"))
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
    {
        meta.title.get_or_insert_with(|| title.to_string());
    }
    let usage = store.usage();
    if let Some(env) = store.envelope.take() {
        meta.extra.insert("envelope".into(), env);
    }
    let mut session = Session::new(meta);
    let mut calls = std::mem::take(&mut store.calls);
    for (i, entry) in store.entries.into_iter().enumerate() {
        for mut e in history_entry(entry, i as u64 + 1, &mut calls) {
            e.parent_id = session.leaf_id.clone();
            session.push(e);
        }
    }
    put_total_usage(&mut session, usage);
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// A tool call as the model saw it (from the checkpoint's context), to be
/// matched with the projection's `effect` entry of the same input.
struct ContextCall {
    id: Option<String>,
    name: String,
    input: Value,
    result: Option<String>,
    used: bool,
}

/// What the store holds for one session at its newest generation plus its
/// journal.
struct Store {
    current: Option<Value>,
    /// The projection's envelope: session status, title, token usage.
    envelope: Option<Value>,
    /// The projection's history entries, in order.
    entries: Vec<Value>,
    calls: Vec<ContextCall>,
}

/// True for a name made only of ASCII digits (generations, journal files).
fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// True for a chunk's name: a SHA-256 in lowercase hex.
fn is_chunk_name(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn read_json(path: &Path, diags: &mut Vec<Diagnostic>) -> Option<Value> {
    let bytes = match crate::input::read_file(path) {
        Ok(b) => b,
        Err(e) => {
            diags.push(Diagnostic::warning(
                path,
                None,
                "unreadable",
                format!("cannot read it: {e}"),
            ));
            return None;
        }
    };
    match serde_json::from_slice(&bytes) {
        Ok(v) => Some(v),
        Err(e) => {
            diags.push(Diagnostic::warning(
                path,
                Some(e.line() as u64),
                "invalid-json",
                format!("not JSON: {e}"),
            ));
            None
        }
    }
}

impl Store {
    fn open(dir: &Path, diags: &mut Vec<Diagnostic>) -> Store {
        let mut store = Store {
            current: None,
            envelope: None,
            entries: Vec::new(),
            calls: Vec::new(),
        };
        let current_path = dir.join(CURRENT);
        let Some(current) = read_json(&current_path, diags) else {
            return store;
        };
        let generation = current
            .get("generation")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        store.current = Some(current);
        if !is_number(&generation) {
            diags.push(Diagnostic::warning(
                &current_path,
                None,
                "bad-generation",
                format!("generation {generation:?} is not a number; the conversation is not read"),
            ));
            return store;
        }
        let gen_dir = dir.join("generations").join(&generation);
        let manifest_path = gen_dir.join("manifest.json");
        let Some(manifest) = read_json(&manifest_path, diags) else {
            return store;
        };
        let chunks = |part: &str, diags: &mut Vec<Diagnostic>| -> Vec<Value> {
            let mut out = Vec::new();
            let names = manifest
                .get(part)
                .and_then(|p| p.get("chunks"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for name in names {
                let name = name.as_str().unwrap_or_default();
                if !is_chunk_name(name) {
                    diags.push(Diagnostic::warning(
                        &manifest_path,
                        None,
                        "bad-chunk",
                        format!("chunk name {name:?} is not a SHA-256; skipped"),
                    ));
                    continue;
                }
                let p = dir.join("chunks").join(format!("{name}.json"));
                match read_json(&p, diags) {
                    Some(Value::Array(items)) => out.extend(items),
                    Some(_) => diags.push(Diagnostic::warning(
                        &p,
                        None,
                        "bad-chunk",
                        "a chunk is not a JSON array; skipped",
                    )),
                    None => {}
                }
            }
            out
        };
        store.entries = chunks("projection_state", diags);
        let context = chunks("checkpoint", diags);
        store.calls = context_calls(&context);
        store.envelope = read_json(&gen_dir.join("projection-state.json"), diags)
            .and_then(|p| p.get("snapshot").cloned());
        let sequence = manifest
            .get("snapshot_sequence")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if let Some(journal) = manifest
            .pointer("/recovery_journal_segment/path")
            .and_then(Value::as_str)
        {
            let file = journal.strip_prefix("journal/").unwrap_or_default();
            let ok = file.strip_suffix(".jsonl").is_some_and(is_number);
            if ok {
                store.replay(&dir.join("journal").join(file), sequence, diags);
            } else {
                diags.push(Diagnostic::warning(
                    &manifest_path,
                    None,
                    "bad-journal",
                    format!("journal path {journal:?} is not journal/<number>.jsonl; not read"),
                ));
            }
        }
        store
    }

    /// Applies the projection deltas recorded after `sequence` in the
    /// journal at `path` (a missing journal has none).
    fn replay(&mut self, path: &Path, sequence: u64, diags: &mut Vec<Diagnostic>) {
        if !path.exists() {
            return;
        }
        let bytes = match crate::input::read_file(path) {
            Ok(b) => b,
            Err(e) => {
                diags.push(Diagnostic::warning(
                    path,
                    None,
                    "unreadable",
                    format!("cannot read it: {e}"),
                ));
                return;
            }
        };
        for (n, record) in crate::jsonl::parse_values(path, &bytes, diags) {
            if record.get("type").and_then(Value::as_str) != Some("projection_delta")
                || num(record.get("sequence")) <= sequence
            {
                continue;
            }
            let ops = record
                .pointer("/payload/delta")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for op in ops {
                if let Err(why) = self.apply(op) {
                    diags.push(Diagnostic::warning(path, Some(n), "unknown-delta", why));
                }
            }
        }
    }

    fn apply(&mut self, mut op: Value) -> Result<(), String> {
        let id_of = |v: &Value| v.get("id").and_then(Value::as_str).map(str::to_string);
        let kind = op
            .get("op")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match kind.as_str() {
            "append_entry" => {
                let entry = op.get_mut("entry").map(Value::take);
                self.entries.extend(entry);
            }
            "replace_entry" => {
                let id = id_of(&op);
                let entry = op.get_mut("entry").map(Value::take).unwrap_or(Value::Null);
                match self
                    .entries
                    .iter_mut()
                    .find(|e| id.is_some() && id_of(e) == id)
                {
                    Some(slot) => *slot = entry,
                    None => return Err(format!("replace_entry of {id:?}, which is not there")),
                }
            }
            "remove_entry" => {
                let id = id_of(&op);
                self.entries.retain(|e| id.is_none() || id_of(e) != id);
            }
            "set_history_entries" => {
                if let Some(Value::Array(entries)) = op.get_mut("entries").map(Value::take) {
                    self.entries = entries;
                }
            }
            "set_envelope" => self.envelope = op.get_mut("state").map(Value::take),
            other => return Err(format!("projection op {other:?} is not known; skipped")),
        }
        Ok(())
    }

    /// The session's token totals, from the envelope.
    fn usage(&self) -> Usage {
        let Some(t) = self
            .envelope
            .as_ref()
            .and_then(|e| e.pointer("/session/tokenUsage"))
        else {
            return Usage::default();
        };
        let cache_read = num(t.get("cachedInputTokens"));
        Usage {
            input: num(t.get("inputTokens")).saturating_sub(cache_read),
            output: num(t.get("outputTokens")),
            cache_read,
            ..Usage::default()
        }
    }
}

/// The tool calls of the checkpoint's model context, with the text each
/// result sent back to the model.
fn context_calls(context: &[Value]) -> Vec<ContextCall> {
    let mut calls: Vec<ContextCall> = Vec::new();
    for item in context {
        let Some(m) = item.get("message") else {
            continue;
        };
        let blocks = m
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        match m.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                for b in blocks {
                    if b.get("type").and_then(Value::as_str) != Some("tool_call") {
                        continue;
                    }
                    let args = b.get("arguments");
                    let input = args
                        .and_then(|a| a.get("value"))
                        .cloned()
                        .or_else(|| {
                            args.and_then(|a| a.get("raw"))
                                .and_then(Value::as_str)
                                .and_then(|r| serde_json::from_str(r).ok())
                        })
                        .unwrap_or(Value::Null);
                    calls.push(ContextCall {
                        id: b.get("id").and_then(Value::as_str).map(str::to_string),
                        name: b
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        input,
                        result: None,
                        used: false,
                    });
                }
            }
            Some("tool") => {
                let id = m.get("tool_call_id").and_then(Value::as_str);
                let text: String = blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect();
                if let Some(c) = calls
                    .iter_mut()
                    .find(|c| c.id.is_some() && c.id.as_deref() == id)
                {
                    c.result = Some(text);
                }
            }
            _ => {}
        }
    }
    calls
}

fn millis(m: &Map<String, Value>, k: &str) -> Option<Timestamp> {
    m.get(k).and_then(Value::as_i64).map(Timestamp::Millis)
}

/// Content blocks of a projection message: text parts, others kept.
fn blocks(content: Vec<Value>) -> Vec<Block> {
    content
        .into_iter()
        .map(|v| match v {
            Value::Object(mut b)
                if b.get("type").and_then(Value::as_str) == Some("text")
                    && b.get("text").is_some_and(Value::is_string) =>
            {
                let text = take_string(&mut b, "text").unwrap_or_default();
                b.remove("type");
                Block {
                    kind: BlockKind::Text { text },
                    extra: b,
                }
            }
            other => Block {
                kind: BlockKind::Other { value: other },
                extra: Extra::new(),
            },
        })
        .collect()
}

fn unknown(id: String, record_type: Option<String>, raw: Value) -> Entry {
    Entry::new(id, None, EntryKind::Unknown { record_type, raw })
}

/// The entries of one projection history entry: a message, a thinking
/// block, or a tool call and its result; any other kept verbatim.
fn history_entry(v: Value, n: u64, calls: &mut [ContextCall]) -> Vec<Entry> {
    let Value::Object(mut m) = v else {
        return vec![unknown(format!("h{n}"), None, v)];
    };
    let id = m
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("h{n}"));
    let ty = m
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let created = millis(&m, "createdAt");
    if matches!(ty.as_str(), "message" | "reasoning" | "effect") {
        m.remove("id");
        m.remove("type");
    }
    let mut out = Vec::new();
    match ty.as_str() {
        "message" if m.get("role").is_some_and(Value::is_string) => {
            let role = Role::parse(&take_string(&mut m, "role").unwrap_or_default());
            let mut msg = Message::new(role);
            match m.remove("content") {
                Some(Value::Array(c)) => msg.content = blocks(c),
                Some(Value::String(s)) => {
                    msg.content.push(Block::text(s));
                    msg.content_is_text = true;
                }
                Some(other) => {
                    m.insert("content".into(), other);
                }
                None => {}
            }
            out.push(message(id, msg, m, created));
        }
        "reasoning" if m.get("text").is_some_and(Value::is_string) => {
            let mut msg = Message::new(Role::Assistant);
            msg.content.push(Block::thinking(
                take_string(&mut m, "text").unwrap_or_default(),
                None,
            ));
            out.push(message(id, msg, m, created));
        }
        "effect"
            if m.get("detail")
                .and_then(|d| d.get("kind"))
                .and_then(Value::as_str)
                == Some("tool") =>
        {
            let input = m
                .get("detail")
                .and_then(|d| d.get("input"))
                .cloned()
                .unwrap_or(Value::Null);
            let own_name = m
                .get("detail")
                .and_then(|d| d.get("toolName"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let seen = calls.iter_mut().find(|c| !c.used && c.input == input);
            let (call_id, name, sent) = match seen {
                Some(c) => {
                    c.used = true;
                    (c.id.clone(), c.name.clone(), c.result.clone())
                }
                None => (None, own_name, None),
            };
            let call_id = call_id.unwrap_or_else(|| id.clone());
            let state = m.get("state").cloned().unwrap_or(Value::Null);
            let output = state.get("output");
            let is_error = output
                .and_then(|o| o.get("type"))
                .and_then(Value::as_str)
                .is_some_and(|t| t != "success");
            let result_text = sent.or_else(|| output_text(&state));
            let finished = millis(&m, "updatedAt");
            let mut call = Message::new(Role::Assistant);
            call.content
                .push(Block::tool_call(Some(call_id.clone()), name.clone(), input));
            out.push(message(id.clone(), call, m, created));
            if let Some(text) = result_text {
                let mut result = Message::new(Role::Tool);
                result.tool_call_id = Some(call_id.clone());
                result.tool_name = Some(name);
                result.is_error = Some(is_error);
                result.content.push(Block::tool_result(
                    Some(call_id),
                    vec![Block::text(text)],
                    is_error,
                ));
                out.push(message(
                    format!("{id}/result"),
                    result,
                    Map::new(),
                    finished,
                ));
            }
        }
        _ => {
            // Put back what was taken for the known types.
            m.insert("id".into(), Value::from(id.clone()));
            if !ty.is_empty() {
                m.insert("type".into(), Value::from(ty.clone()));
            }
            out.push(unknown(
                id,
                Some(ty).filter(|t| !t.is_empty()),
                Value::Object(m),
            ));
        }
    }
    out
}

/// The text of a finished tool run's output, as Vibe's projection keeps it.
fn output_text(state: &Value) -> Option<String> {
    if let Some(t) = state
        .get("outputText")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        return Some(t.to_string());
    }
    let output = state.get("output")?;
    if let Some(s) = output.get("structured_content").filter(|s| !s.is_null()) {
        return Some(s.to_string());
    }
    let text: String = output
        .get("content")?
        .as_array()?
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    Some(text).filter(|t| !t.is_empty())
}

fn message(
    id: String,
    mut msg: Message,
    extra: Map<String, Value>,
    at: Option<Timestamp>,
) -> Entry {
    msg.extra = extra;
    let mut e = Entry::new(id, None, EntryKind::Message(msg));
    e.timestamp = at;
    e
}
