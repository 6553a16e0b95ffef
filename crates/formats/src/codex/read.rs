//! Reading Codex rollouts into the model.

use super::usage::UsageTracker;
use super::wire::{event_to_message, item_to_message, message_items, ENVELOPE};
use super::{BARE, DOCUMENT, FORMAT_NAME};
use crate::{jsonl, Diagnostic, FormatError, Read};
use agentlog_model::{
    Agent, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta, Timestamp,
};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::Path;

/// One line, split into its envelope and payload.
struct Rec {
    line: u64,
    /// The envelope `type` (`session_meta`, `response_item`, …); for bare
    /// lines the type the line stands for.
    env: String,
    timestamp: Option<Timestamp>,
    payload: Value,
    /// Envelope fields other than `timestamp`, `type` and `payload`.
    extra: Extra,
}

/// The state of one read.
struct Reader<'a> {
    path: &'a Path,
    session: Session,
    diags: Vec<Diagnostic>,
    parent: Option<String>,
    own_meta: Option<Map<String, Value>>,
    gate: ForkGate,
    model: Option<String>,
    usage: UsageTracker,
    /// Texts of response-item messages not yet matched by their event copy.
    pending_texts: HashMap<(bool, String), usize>,
    call_names: HashMap<String, String>,
    turn_starts: Vec<String>,
}

/// Suppresses the parent history a forked or subagent rollout replays after
/// its own `session_meta`: everything up to the first `turn_context` whose
/// turn id (a UUIDv7) was minted at or after the fork's creation.
#[derive(Default)]
struct ForkGate {
    active: bool,
    created_ms: i64,
}

impl ForkGate {
    fn arm(&mut self, meta: &Map<String, Value>, envelope: Option<&Timestamp>) {
        let ms = meta
            .get("id")
            .and_then(Value::as_str)
            .and_then(uuid_v7_millis)
            .or_else(|| {
                meta.get("timestamp")
                    .and_then(Value::as_str)
                    .and_then(|t| Timestamp::Text(t.to_string()).millis())
            })
            .or_else(|| envelope.and_then(Timestamp::millis));
        if let Some(ms) = ms {
            self.active = true;
            self.created_ms = ms;
        }
    }

    /// True when the line is replayed parent history; a `turn_context` of a
    /// turn minted after the fork opens the gate.
    fn suppresses(&mut self, env: &str, payload: &Value) -> bool {
        if !self.active {
            return false;
        }
        if env != "turn_context" {
            return true;
        }
        match payload.get("turn_id").and_then(Value::as_str) {
            None => true,
            Some(t) => match uuid_v7_millis(t) {
                Some(ms) if ms < self.created_ms => true,
                _ => {
                    self.active = false;
                    false
                }
            },
        }
    }
}

/// Returns the milliseconds a UUIDv7 was minted at.
fn uuid_v7_millis(id: &str) -> Option<i64> {
    let u = uuid::Uuid::parse_str(id).ok()?;
    if u.get_version_num() != 7 {
        return None;
    }
    let b = u.as_bytes();
    let mut ms: i64 = 0;
    for byte in &b[..6] {
        ms = (ms << 8) | i64::from(*byte);
    }
    Some(ms)
}

/// Reads the TypeScript-era single document `{"session": {...}, "items":
/// [...]}` (spring 2025): the session object and each item become entries,
/// the other top-level fields stay in `meta.extra`.
fn read_document(path: &Path, mut doc: Map<String, Value>) -> Read {
    let mut meta = SessionMeta::new(file_id(path), Agent::Codex);
    meta.format = Some(FORMAT_NAME.into());
    meta.format_version = Some(Value::String(DOCUMENT.into()));
    let session_obj = doc.remove("session").unwrap_or(Value::Null);
    let items = match doc.remove("items") {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let top = doc;
    let mut r = Reader {
        path,
        session: Session::new(meta),
        diags: Vec::new(),
        parent: None,
        own_meta: None,
        gate: ForkGate::default(),
        model: None,
        usage: UsageTracker::default(),
        pending_texts: HashMap::new(),
        call_names: HashMap::new(),
        turn_starts: Vec::new(),
    };
    let mut recs = vec![Rec {
        line: 1,
        env: "session_meta".into(),
        timestamp: None,
        payload: session_obj,
        extra: Extra::new(),
    }];
    for (i, item) in items.into_iter().enumerate() {
        recs.push(Rec {
            line: i as u64 + 2,
            env: "response_item".into(),
            timestamp: None,
            payload: item,
            extra: Extra::new(),
        });
    }
    r.count_response_texts(&recs);
    for rec in recs {
        let msg = response_message(&rec);
        r.record(rec, msg);
    }
    r.finish();
    r.session.meta.extra = top;
    Read {
        session: r.session,
        diagnostics: r.diags,
    }
}

pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let first = bytes.iter().position(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|i| bytes[i] == b'{') {
        if let Ok(Value::Object(doc)) = serde_json::from_slice::<Value>(bytes) {
            if doc.get("items").is_some_and(Value::is_array)
                && doc.get("session").is_some_and(Value::is_object)
            {
                return Ok(read_document(path, doc));
            }
        }
    }
    // Bare or not is up to the first record, which splitting every record
    // needs to know.
    let bare = jsonl::lines(bytes)
        .filter(|l| !jsonl::is_blank(l.bytes))
        .find_map(|l| serde_json::from_slice::<Value>(l.bytes).ok())
        .is_some_and(|v| is_bare(&v));
    let mut meta = SessionMeta::new(file_id(path), Agent::Codex);
    meta.format = Some(FORMAT_NAME.into());
    if bare {
        meta.format_version = Some(Value::String(BARE.into()));
    }
    let mut r = Reader {
        path,
        session: Session::new(meta),
        diags: Vec::new(),
        parent: None,
        own_meta: None,
        gate: ForkGate::default(),
        model: None,
        usage: UsageTracker::default(),
        pending_texts: response_texts(bytes, bare),
        call_names: HashMap::new(),
        turn_starts: Vec::new(),
    };
    // About one entry per line, room made at once: grown by doubling, the
    // entries were copied into fresh memory again and again (a sixth of a
    // long rollout's read). Only what is filled is ever touched, and a
    // file of many short or blank lines reserves no more than an entry per
    // 128 bytes.
    let lines = memchr::memchr_iter(b'\n', bytes).count() + 1;
    let _ = r
        .session
        .entries
        .try_reserve_exact(lines.min(bytes.len() / 128).min(1 << 21));
    // Parsed on a second thread a few batches ahead of this (for a large
    // rollout), never all of it at once: all of a 109 MB rollout's JSON
    // values took 470 MB beside the model they became.
    let mut values = 0usize;
    let mut torn = false;
    jsonl::each_value(path, bytes, |line, value| {
        let value = match value {
            Ok(v) => v,
            Err(d) => {
                torn |= d.code == "torn-tail";
                return r.diags.push(d);
            }
        };
        values += 1;
        match split(bare, line, value) {
            Ok(rec) => {
                let msg = response_message(&rec);
                r.record(rec, msg);
            }
            Err((line, raw)) => r.unknown(line, raw),
        }
    });
    if values == 0 && !r.diags.is_empty() && !torn {
        return Err(FormatError::invalid(
            path,
            r.diags.first().and_then(|d| d.line),
            "not a Codex rollout: no line is valid JSON",
        ));
    }
    r.finish();
    Ok(Read {
        session: r.session,
        diagnostics: r.diags,
    })
}

fn is_bare(v: &Value) -> bool {
    let Some(o) = v.as_object() else {
        return false;
    };
    if o.contains_key("payload") {
        return false;
    }
    match o.get("type").and_then(Value::as_str) {
        None => o.contains_key("id") || o.contains_key("record_type"),
        Some(t) => matches!(
            t,
            "message" | "reasoning" | "function_call" | "function_call_output" | "local_shell_call"
        ),
    }
}

/// Returns the session id in a `rollout-<time>-<uuid>.jsonl` name, or the
/// file stem.
fn file_id(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if stem.len() >= 36 {
        let tail = &stem[stem.len() - 36..];
        if uuid::Uuid::parse_str(tail).is_ok() {
            return tail.to_string();
        }
    }
    stem
}

/// The message of the response item `rec`, if it is one.
fn response_message(rec: &Rec) -> Option<Message> {
    item_to_message(response_item(rec)?)
}

/// The [`message_item_key`] of `rec` when it is a response item of type
/// `message`: a text its event copy will repeat.
fn response_text(rec: &Rec) -> Option<(bool, String)> {
    let obj =
        response_item(rec).filter(|o| o.get("type").and_then(Value::as_str) == Some("message"))?;
    message_item_key(obj)
}

/// Counts the texts of the user and assistant messages among the response
/// items of the rollout `bytes`, which their event copies will repeat (an
/// event copy may come before its item, so all are counted before the
/// first record is read). Only the lines that can be such an item are
/// parsed: those that hold `response_item` (for a rollout with envelopes)
/// and `message`, or an escape that could spell either.
fn response_texts(bytes: &[u8], bare: bool) -> HashMap<(bool, String), usize> {
    let item = memchr::memmem::Finder::new(b"response_item");
    let message = memchr::memmem::Finder::new(b"message");
    let escape = memchr::memmem::Finder::new(b"\\u");
    let mut counts = HashMap::new();
    for line in jsonl::lines(bytes) {
        let b = line.bytes;
        let may = escape.find(b).is_some()
            || (message.find(b).is_some() && (bare || item.find(b).is_some()));
        if !may {
            continue;
        }
        let Ok(value) = serde_json::from_slice::<Value>(b) else {
            continue;
        };
        let key = split(bare, line.number, value)
            .ok()
            .and_then(|rec| response_text(&rec));
        if let Some(key) = key {
            *counts.entry(key).or_default() += 1;
        }
    }
    counts
}

/// The payload of `rec` when it is a response item.
fn response_item(rec: &Rec) -> Option<&Map<String, Value>> {
    rec.payload
        .as_object()
        .filter(|_| rec.env == "response_item")
}

fn text_key(m: &Message) -> (bool, String) {
    (m.role == Role::User, m.text_content().trim().to_string())
}

/// The [`text_key`] of the message [`item_to_message`] makes of the message
/// item `obj` when it is by a user or the assistant, read off the item
/// without making the message (which copied every message's content once
/// more, only to count texts).
fn message_item_key(obj: &Map<String, Value>) -> Option<(bool, String)> {
    let role = Role::parse(obj.get("role")?.as_str()?);
    if !matches!(role, Role::User | Role::Assistant) {
        return None;
    }
    let text = match obj.get("content") {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Array(items)) => {
            let texts: Vec<&str> = items
                .iter()
                .filter_map(|i| {
                    let o = i.as_object()?;
                    let kind = o.get("type")?.as_str()?;
                    let text = o.get("text")?.as_str()?;
                    matches!(kind, "input_text" | "output_text").then_some(text)
                })
                .collect();
            texts.join("\n\n").trim().to_string()
        }
        _ => String::new(),
    };
    Some((role == Role::User, text))
}

/// Splits the record on `line` into envelope and payload (a bare rollout's
/// lines are payloads alone); a line that is no record comes back as it is.
fn split(bare: bool, line: u64, value: Value) -> Result<Rec, (u64, Value)> {
    let Value::Object(mut obj) = value else {
        return Err((line, value));
    };
    if bare {
        let env = if obj.contains_key("record_type") {
            "state"
        } else if !obj.contains_key("type") {
            "session_meta"
        } else {
            "response_item"
        };
        return Ok(Rec {
            line,
            env: env.into(),
            timestamp: None,
            payload: Value::Object(obj),
            extra: Extra::new(),
        });
    }
    let env = match (obj.get("type"), obj.contains_key("payload")) {
        (Some(Value::String(t)), true) => t.clone(),
        _ => return Err((line, Value::Object(obj))),
    };
    obj.remove("type");
    let payload = obj.remove("payload").unwrap_or(Value::Null);
    let timestamp = obj.get("timestamp").and_then(Timestamp::from_json);
    if timestamp.is_some() {
        obj.remove("timestamp");
    }
    Ok(Rec {
        line,
        env,
        timestamp,
        payload,
        extra: obj,
    })
}

impl Reader<'_> {
    fn unknown(&mut self, line: u64, raw: Value) {
        let record_type = raw.get("type").and_then(Value::as_str).map(str::to_string);
        self.diags.push(Diagnostic::warning(
            self.path,
            Some(line),
            "unknown-record",
            "not a Codex rollout line ({timestamp, type, payload} envelope); kept verbatim",
        ));
        let kind = EntryKind::Unknown { record_type, raw };
        self.push(kind, None, Extra::new(), line);
    }

    /// Counts the texts of the user and assistant messages among the
    /// response items of `recs`, which their event copies will repeat.
    fn count_response_texts(&mut self, recs: &[Rec]) {
        for key in recs.iter().filter_map(response_text) {
            *self.pending_texts.entry(key).or_default() += 1;
        }
    }

    fn push(&mut self, kind: EntryKind, ts: Option<Timestamp>, extra: Extra, line: u64) -> String {
        let id = format!("L{line}");
        let mut e = Entry::new(id.clone(), self.parent.clone(), kind);
        e.timestamp = ts;
        e.extra = extra;
        e.line = Some(line);
        self.session.push(e);
        self.parent = Some(id.clone());
        id
    }

    fn event(&mut self, rec: Rec) {
        let event_type = rec
            .payload
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&rec.env)
            .to_string();
        let kind = EntryKind::Event {
            source: rec.env,
            event_type,
            seq: None,
            payload: rec.payload,
        };
        self.push(kind, rec.timestamp, rec.extra, rec.line);
    }

    /// Reads one record; `msg` is the message of a response item
    /// ([`response_message`]).
    fn record(&mut self, rec: Rec, msg: Option<Message>) {
        let replayed = match rec.env.as_str() {
            "session_meta" if self.gate.active => true,
            "session_meta" => false,
            env => self.gate.suppresses(env, &rec.payload),
        };
        match rec.env.as_str() {
            "session_meta" => {
                self.session_meta(&rec);
                self.event(rec);
            }
            "turn_context" => {
                if let Some(m) = rec.payload.get("model").and_then(Value::as_str) {
                    self.model = Some(m.to_string());
                    self.session.meta.model.model = Some(m.to_string());
                }
                if self.session.meta.cwd.is_none() {
                    if let Some(c) = rec.payload.get("cwd").and_then(Value::as_str) {
                        self.session.meta.cwd = Some(c.to_string());
                    }
                }
                self.event(rec);
            }
            "response_item" => self.message_or_event(rec, msg, replayed),
            "event_msg" => self.event_msg(rec, replayed),
            "compacted" => self.compacted(rec),
            _ => self.event(rec),
        }
    }

    fn session_meta(&mut self, rec: &Rec) {
        let Some(p) = rec.payload.as_object() else {
            return;
        };
        let s = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
        match &self.own_meta {
            None => {
                let meta = &mut self.session.meta;
                if let Some(id) = s("id") {
                    meta.id = id;
                }
                meta.created_at = s("timestamp")
                    .map(Timestamp::Text)
                    .or_else(|| rec.timestamp.clone());
                meta.cwd = s("cwd").or(meta.cwd.take());
                meta.agent_version = s("cli_version");
                meta.model.provider = s("model_provider");
                let spawn = p
                    .get("source")
                    .and_then(|v| v.get("subagent"))
                    .and_then(|v| v.get("thread_spawn"));
                meta.parent_session = s("forked_from_id")
                    .or_else(|| {
                        spawn
                            .and_then(|t| t.get("parent_thread_id"))
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    })
                    .or_else(|| s("parent_thread_id"));
                for k in ["originator", "source", "git"] {
                    if let Some(v) = p.get(k) {
                        meta.extra.insert(k.into(), v.clone());
                    }
                }
                if s("forked_from_id").is_some() {
                    self.gate.arm(p, rec.timestamp.as_ref());
                }
                self.own_meta = Some(p.clone());
            }
            Some(own) => {
                // A subagent rollout copies its parent's session_meta before
                // replaying the parent's history.
                let is_spawned = own.get("source").and_then(|v| v.get("subagent")).is_some()
                    || own.contains_key("parent_thread_id");
                if is_spawned && !self.gate.active && p.get("id") != own.get("id") {
                    let own = own.clone();
                    self.gate.arm(&own, rec.timestamp.as_ref());
                }
            }
        }
    }

    fn event_msg(&mut self, rec: Rec, replayed: bool) {
        let kind = rec
            .payload
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("");
        match kind {
            "user_message" | "agent_message" => {
                let msg = rec.payload.as_object().and_then(event_to_message);
                if let Some(m) = &msg {
                    if let Some(n) = self.pending_texts.get_mut(&text_key(m)) {
                        if *n > 0 {
                            // The response item carries this text; the event
                            // is its UI copy.
                            *n -= 1;
                            return self.event(rec);
                        }
                    }
                }
                self.message_or_event(rec, msg, replayed);
            }
            "token_count" => {
                self.usage.token_count(&rec.payload, replayed);
                self.event(rec);
            }
            "thread_rolled_back" => {
                let n = rec
                    .payload
                    .get("num_turns")
                    .and_then(Value::as_u64)
                    .unwrap_or(0) as usize;
                if n > 0 && n <= self.turn_starts.len() {
                    let start = self.turn_starts[self.turn_starts.len() - n].clone();
                    self.turn_starts.truncate(self.turn_starts.len() - n);
                    self.parent = self
                        .session
                        .entries
                        .iter()
                        .find(|e| e.id == start)
                        .and_then(|e| e.parent_id.clone());
                } else if n > 0 {
                    self.diags.push(Diagnostic::warning(
                        self.path,
                        Some(rec.line),
                        "rollback-too-far",
                        format!(
                            "thread_rolled_back drops {n} turns but only {} were read; nothing dropped",
                            self.turn_starts.len()
                        ),
                    ));
                }
                self.event(rec);
            }
            "thread_name_updated" => {
                if let Some(t) = rec.payload.get("thread_name").and_then(Value::as_str) {
                    self.session.meta.title = Some(t.to_string());
                }
                self.event(rec);
            }
            _ => self.event(rec),
        }
    }

    fn compacted(&mut self, rec: Rec) {
        let Some(Value::String(summary)) = rec.payload.get("message").cloned() else {
            return self.event(rec);
        };
        let mut details = rec.payload.as_object().cloned().unwrap_or_default();
        details.remove("message");
        let kind = EntryKind::Compaction {
            summary,
            short_summary: None,
            first_kept_entry_id: None,
            tokens_before: None,
            details: (!details.is_empty()).then_some(Value::Object(details)),
            from_extension: None,
            preserve_data: None,
        };
        self.push(kind, rec.timestamp, rec.extra, rec.line);
    }

    /// Pushes `msg` when writing it back gives the same payload, or the line
    /// as an event otherwise.
    fn message_or_event(&mut self, rec: Rec, msg: Option<Message>, replayed: bool) {
        let Some(mut msg) = msg else {
            return self.event(rec);
        };
        let env: &str = if rec.env == "event_msg" {
            "event_msg"
        } else {
            "response_item"
        };
        let items = message_items(&msg, true);
        if items.len() != 1 || items[0].0 != env || items[0].1 != rec.payload {
            self.diags.push(Diagnostic::info(
                self.path,
                Some(rec.line),
                "kept-verbatim",
                format!("{env} payload has a shape the reader does not model; kept as an event"),
            ));
            return self.event(rec);
        }
        if replayed {
            msg.injected = Some("fork_replay".into());
        }
        if msg.role == Role::Assistant {
            msg.model = self.model.clone();
        }
        for b in &msg.content {
            if let BlockKind::ToolCall {
                id: Some(id), name, ..
            } = &b.kind
            {
                self.call_names.insert(id.clone(), name.clone());
            }
        }
        if msg.role == Role::Tool {
            msg.tool_name = msg
                .tool_call_id
                .as_ref()
                .and_then(|id| self.call_names.get(id))
                .cloned();
        }
        let is_prompt = msg.role == Role::User && msg.injected.is_none();
        let is_assistant = msg.role == Role::Assistant && !replayed;
        if !rec.extra.is_empty() {
            msg.extra
                .insert(ENVELOPE.into(), Value::Object(rec.extra.clone()));
        }
        if self.session.meta.cwd.is_none() {
            if let Some(c) = env_cwd(&msg) {
                self.session.meta.cwd = Some(c);
            }
        }
        let id = self.push(
            EntryKind::Message(msg),
            rec.timestamp,
            Extra::new(),
            rec.line,
        );
        if is_prompt {
            self.turn_starts.push(id.clone());
        }
        if is_assistant {
            self.usage.assistant_entry(&id);
        }
    }

    fn finish(&mut self) {
        let assignments = self.usage.finish();
        // Each id's first entry, looked up once per assignment (a search of
        // the entries for each took 19 s on a 100 MB session).
        let mut at: HashMap<String, usize> = HashMap::with_capacity(assignments.len());
        if !assignments.is_empty() {
            for (i, e) in self.session.entries.iter().enumerate() {
                at.entry(e.id.clone()).or_insert(i);
            }
        }
        for (id, usage) in assignments {
            if let Some(EntryKind::Message(m)) =
                at.get(&id).map(|&i| &mut self.session.entries[i].kind)
            {
                match &mut m.usage {
                    Some(u) => u.add(&usage),
                    None => m.usage = Some(usage),
                }
            }
        }
        if let Some(u) = self.usage.unattributed() {
            self.diags.push(Diagnostic::info(
                self.path,
                None,
                "usage-unattributed",
                format!(
                    "token counts ({} input, {} cached, {} output) with no assistant message to carry them",
                    u.input, u.cache_read, u.output
                ),
            ));
        }
        let last = self
            .session
            .entries
            .iter()
            .rev()
            .find_map(|e| e.timestamp.clone().filter(|t| t.to_utc().is_some()));
        self.session.meta.updated_at = last;
        if self.session.meta.created_at.is_none() {
            self.session.meta.created_at = self
                .session
                .entries
                .iter()
                .find_map(|e| e.timestamp.clone().filter(|t| t.to_utc().is_some()));
        }
    }
}

/// Returns the `<cwd>` of an `<environment_context>` message (bare-era files
/// have no cwd anywhere else).
fn env_cwd(msg: &Message) -> Option<String> {
    if msg.injected.as_deref() != Some("environment_context") {
        return None;
    }
    let text = msg.text_content();
    let start = text.find("<cwd>")? + "<cwd>".len();
    let end = text[start..].find("</cwd>")? + start;
    Some(text[start..end].trim().to_string())
}

/// The drift report of a Codex rollout: the records kept as unknown, line
/// types beyond [`super::wire::KNOWN_ENVELOPES`] and response items beyond
/// [`super::wire::KNOWN_RESPONSE_ITEMS`] (`event_msg` types are not counted: Codex
/// adds them often, and each repeats a response item or says how the run
/// went; they are kept as events either way).
pub(super) fn drift(read: &Read) -> Vec<crate::drift::Drift> {
    use crate::drift::{DriftKind, Tally};
    let mut t = Tally::default();
    crate::drift::unknown_records(read, &mut t);
    for e in &read.session.entries {
        let EntryKind::Event {
            source, event_type, ..
        } = &e.kind
        else {
            continue;
        };
        if source == "state" {
            continue;
        }
        if !super::wire::KNOWN_ENVELOPES.contains(&source.as_str()) {
            t.add(DriftKind::RecordType, source, e.line);
        } else if source == "response_item"
            && event_type != source
            && !super::wire::KNOWN_RESPONSE_ITEMS.contains(&event_type.as_str())
        {
            t.add(
                DriftKind::RecordType,
                &format!("response_item.{event_type}"),
                e.line,
            );
        }
    }
    t.into_items()
}

/// What a Codex rollout is, from its `session_meta`: a subagent's when its
/// `source` names the thread that spawned it (`{"subagent": …}`), a
/// headless run when it came from `codex exec` (`source` `exec`, as 0.169
/// writes it, or originator `codex_exec`), else a conversation.
pub(super) fn session_kind(session: &Session) -> agentlog_model::SessionKind {
    use agentlog_model::SessionKind;
    let extra = &session.meta.extra;
    match extra.get("source") {
        Some(Value::Object(o)) if o.contains_key("subagent") => return SessionKind::Subagent,
        Some(Value::String(s)) if s == "exec" => return SessionKind::Headless,
        _ => {}
    }
    if extra.get("originator").and_then(Value::as_str) == Some("codex_exec") {
        return SessionKind::Headless;
    }
    SessionKind::Conversation
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The key read off an item is the key of the message made of it, for
    /// every shape of content and role.
    #[test]
    fn message_item_key_is_the_key_of_the_message() {
        let contents = [
            json!("  plain text  "),
            json!([]),
            json!([{"type": "input_text", "text": " a "}, {"type": "output_text", "text": "b"}]),
            json!([{"type": "input_text", "text": "a"}, {"type": "input_image", "image_url": "x"}, {"type": "output_text", "text": "c"}]),
            json!([{"type": "input_text", "text": 3}, "loose", 7, {"text": "untyped"}]),
            json!([{"type": "refusal", "refusal": "no"}, {"type": "output_text", "text": "yes"}]),
            json!(42),
            Value::Null,
        ];
        let roles = [
            json!("user"),
            json!("assistant"),
            json!("developer"),
            json!("system"),
            json!("x"),
            json!(1),
        ];
        let mut compared = 0;
        for content in &contents {
            for role in &roles {
                for with_content in [true, false] {
                    let mut item = json!({"type": "message", "role": role});
                    if with_content {
                        item["content"] = content.clone();
                    }
                    let obj = item.as_object().unwrap();
                    let want = item_to_message(obj)
                        .filter(|m| matches!(m.role, Role::User | Role::Assistant))
                        .map(|m| text_key(&m));
                    assert_eq!(message_item_key(obj), want, "{item}");
                    compared += usize::from(want.is_some());
                }
            }
        }
        assert!(compared >= 16, "only {compared} items had a key");
    }

    #[test]
    fn a_line_that_is_no_record_keeps_its_place() {
        let text = [
            json!({"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}}),
            json!({"odd": 1}),
            json!({"timestamp": "2025-01-01T00:00:01Z", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}}),
        ]
        .map(|v| v.to_string())
        .join("\n");
        let r = read(Path::new("r.jsonl"), text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        let lines: Vec<Option<u64>> = r.session.entries.iter().map(|e| e.line).collect();
        assert_eq!(lines, [Some(1), Some(2), Some(3)]);
        assert!(matches!(
            r.session.entries[1].kind,
            EntryKind::Unknown { .. }
        ));
        let parents: Vec<Option<&str>> = r
            .session
            .entries
            .iter()
            .map(|e| e.parent_id.as_deref())
            .collect();
        assert_eq!(parents, [None, Some("L1"), Some("L2")]);
    }

    /// Every text [`response_texts`] counts off the lines that may hold
    /// one, counted off every record of the rollout.
    fn every_text(bytes: &[u8], bare: bool) -> HashMap<(bool, String), usize> {
        let mut counts = HashMap::new();
        for line in jsonl::lines(bytes) {
            let Ok(v) = serde_json::from_slice::<Value>(line.bytes) else {
                continue;
            };
            if let Some(key) = split(bare, line.number, v)
                .ok()
                .as_ref()
                .and_then(response_text)
            {
                *counts.entry(key).or_default() += 1;
            }
        }
        counts
    }

    #[test]
    fn the_lines_skipped_when_counting_texts_hold_none() {
        let item = |text: &str| {
            json!({"timestamp": "t", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}).to_string()
        };
        let mut lines = vec![
            item("plain"),
            item("plain"),
            item("spelled with escapes"),
            // The same records with their names spelled in escapes, which
            // no search for the names finds.
            item("escaped type").replace("\"response_item\"", "\"response\\u005fitem\""),
            item("escaped kind").replace("\"message\"", "\"mess\\u0061ge\""),
            item("escaped key").replace("\"type\":\"message\"", "\"typ\\u0065\":\"message\""),
            json!({"type": "event_msg", "payload": {"type": "user_message", "message": "plain"}}).to_string(),
            json!({"type": "response_item", "payload": {"type": "message", "role": "developer", "content": "x"}}).to_string(),
            "{\"type\":\"response_item\", broken".to_string(),
        ];
        let with_envelopes = lines.join("\n");
        let want = every_text(with_envelopes.as_bytes(), false);
        assert_eq!(want.get(&(true, "plain".into())), Some(&2));
        assert!(want.contains_key(&(true, "escaped kind".into())));
        assert_eq!(response_texts(with_envelopes.as_bytes(), false), want);
        // A bare rollout's lines are the payloads.
        lines.retain(|l| l.contains("payload"));
        let mut bare: Vec<String> = lines
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|v| v["payload"].to_string())
            .collect();
        // Written out again, the payloads lost their escapes: spelled anew.
        let payload = |text: &str| {
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}).to_string()
        };
        bare.push(payload("bare, escaped").replace("\"message\"", "\"mess\\u0061ge\""));
        let bare = bare.join("\n");
        assert!(bare.contains("mess\\u0061ge"));
        let want = every_text(bare.as_bytes(), true);
        assert!(want.contains_key(&(true, "plain".into())));
        assert!(want.contains_key(&(true, "bare, escaped".into())));
        assert_eq!(response_texts(bare.as_bytes(), true), want);
        // And on every sample rollout.
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/native/codex");
        let mut files = 0;
        for f in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let bytes = std::fs::read(f.path()).unwrap_or_default();
            for bare in [false, true] {
                assert_eq!(
                    response_texts(&bytes, bare),
                    every_text(&bytes, bare),
                    "{}",
                    f.path().display()
                );
            }
            files += 1;
        }
        assert!(files > 0, "no sample rollouts in {}", dir.display());
    }
}
