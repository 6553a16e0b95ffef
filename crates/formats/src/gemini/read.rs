//! Reading Gemini CLI chats (`.json` objects and `.jsonl` event logs).

use super::wire::{
    message_record, record_id, record_message, CHECKPOINT, SUPERSEDED_IN_CHECKPOINT,
};
use super::{FORMAT_NAME, JSON, JSONL, NO_MESSAGES};
use crate::{jsonl, Diagnostic, FormatError, Read};
use agentlog_model::{Agent, Entry, EntryKind, Extra, Role, Session, SessionMeta, Timestamp};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::Path;

pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(0);
    let whole = if bytes.get(start) == Some(&b'{') {
        serde_json::from_slice::<Value>(bytes).ok()
    } else {
        None
    };
    let mut read = match whole {
        Some(Value::Object(obj)) if !looks_like_log_line(&obj) => read_json(path, obj)?,
        _ => read_jsonl(path, bytes)?,
    };
    super::wire::drop_repeated_results(&mut read.session);
    let meta = &mut read.session.meta;
    if let Some(root) = project_root(path) {
        meta.cwd = Some(root);
    }
    if meta.cwd.is_none() {
        meta.cwd = meta
            .extra
            .get("directories")
            .and_then(Value::as_array)
            .and_then(|d| d.first())
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    if meta.extra.get("kind").and_then(Value::as_str) == Some("subagent") {
        // chats/<parentSessionId>/<subagentSessionId>.jsonl
        meta.parent_session = path
            .parent()
            .filter(|p| p.file_name().is_some_and(|n| n != "chats"))
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned());
    }
    Ok(read)
}

/// True for a one-line `.jsonl` file: a metadata line or a message record,
/// not a whole legacy session.
fn looks_like_log_line(obj: &Map<String, Value>) -> bool {
    !obj.contains_key("messages")
        && (obj.contains_key("$set")
            || obj.contains_key("$rewindTo")
            || obj.contains_key("id")
            || obj.contains_key("sessionId"))
}

/// Returns the project path in the `.project_root` file of the project
/// directory the session file sits in (`<project>/chats/…`).
fn project_root(path: &Path) -> Option<String> {
    let chats = path
        .ancestors()
        .skip(1)
        .take(3)
        .find(|p| p.file_name().is_some_and(|n| n == "chats"))?;
    let marker = chats.parent()?.join(".project_root");
    let text = std::fs::read_to_string(marker).ok()?;
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

fn new_meta(path: &Path, version: &str) -> SessionMeta {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut meta = SessionMeta::new(stem, Agent::Gemini);
    meta.format = Some(FORMAT_NAME.into());
    meta.format_version = Some(Value::String(version.into()));
    meta
}

/// Fills the model metadata from the merged native metadata fields.
fn apply_meta(meta: &mut SessionMeta, fields: &Map<String, Value>) {
    let s = |k: &str| fields.get(k).and_then(Value::as_str).map(str::to_string);
    if let Some(id) = s("sessionId") {
        meta.id = id;
    }
    meta.created_at = s("startTime").map(Timestamp::Text);
    meta.updated_at = s("lastUpdated").map(Timestamp::Text);
    if let Some(t) = s("summary") {
        meta.title = Some(t);
    }
}

fn last_model(session: &Session) -> Option<String> {
    session
        .entries
        .iter()
        .rev()
        .filter_map(Entry::message)
        .find_map(|m| m.model.clone())
}

/// Reads a legacy single-object `session-*.json`.
fn read_json(path: &Path, mut obj: Map<String, Value>) -> Result<Read, FormatError> {
    let mut diags = Vec::new();
    let mut meta = new_meta(path, JSON);
    let messages = match obj.remove("messages") {
        Some(Value::Array(m)) => m,
        Some(other) => {
            obj.insert("messages".into(), other);
            Vec::new()
        }
        None => {
            obj.insert(NO_MESSAGES.into(), Value::Bool(true));
            diags.push(Diagnostic::warning(
                path,
                None,
                "no-messages",
                "no `messages` array; not a Gemini CLI chat of a known shape",
            ));
            Vec::new()
        }
    };
    apply_meta(&mut meta, &obj);
    meta.extra = obj;
    let mut session = Session::new(meta);
    let mut parent: Option<String> = None;
    for (i, rec) in messages.into_iter().enumerate() {
        let n = i as u64 + 1;
        let id = format!("M{n}");
        let kind = match native_message(&rec) {
            Some((m, ts)) => {
                let mut e = Entry::new(id.clone(), parent.clone(), EntryKind::Message(m));
                e.timestamp = ts;
                e.line = Some(n);
                session.push(e);
                parent = Some(id);
                continue;
            }
            None => {
                diags.push(Diagnostic::info(
                    path,
                    None,
                    "kept-verbatim",
                    format!("message {n} has a shape the reader does not model; kept verbatim"),
                ));
                EntryKind::Unknown {
                    record_type: rec.get("type").and_then(Value::as_str).map(str::to_string),
                    raw: rec,
                }
            }
        };
        let mut e = Entry::new(id.clone(), parent.clone(), kind);
        e.line = Some(n);
        session.push(e);
        parent = Some(id);
    }
    if session.meta.model.model.is_none() {
        session.meta.model.model = last_model(&session);
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// Returns the message of a record when writing it back gives the record.
fn native_message(rec: &Value) -> Option<(agentlog_model::Message, Option<Timestamp>)> {
    let (m, ts) = record_message(rec.as_object()?)?;
    (message_record(&m, ts.as_ref(), true) == *rec).then_some((m, ts))
}

/// One entry's place in the rebuilt conversation.
struct Log {
    entries: Vec<Entry>,
    /// Entry indexes of the conversation as it stands, in order.
    seq: Vec<usize>,
    /// Where `seq` restarts (after a checkpoint or a rewind that cleared all).
    roots: HashSet<usize>,
    /// Message id -> entry index of its current version.
    current: HashMap<String, usize>,
    superseded: HashSet<usize>,
    seen_ids: HashSet<String>,
    /// Id of a compression's summary message -> the conversation up to and
    /// including the compaction entry made for it.
    compactions: HashMap<String, Vec<usize>>,
}

impl Log {
    fn push(&mut self, mut e: Entry, in_seq: bool) -> usize {
        e.parent_id = self.seq.last().map(|&i| self.entries[i].id.clone());
        if self.seq.is_empty() {
            self.roots.insert(self.entries.len());
        }
        self.entries.push(e);
        let idx = self.entries.len() - 1;
        if in_seq {
            self.seq.push(idx);
        }
        idx
    }

    fn message(&mut self, msg_id: String, e: Entry) {
        match self.current.get(&msg_id).copied() {
            Some(old) => {
                // Re-appended: the new version takes the old one's place
                // (looked for from the end, where it usually is: an index
                // is in `seq` at most once).
                let idx = self.push(e, false);
                if let Some(pos) = self.seq.iter().rposition(|&i| i == old) {
                    self.seq.insert(pos + 1, idx);
                } else {
                    self.seq.push(idx);
                }
                self.superseded.insert(old);
                self.current.insert(msg_id, idx);
            }
            None => {
                let idx = self.push(e, true);
                self.current.insert(msg_id, idx);
            }
        }
    }

    fn rewind(&mut self, to: &str) {
        let pos = self
            .current
            .get(to)
            .and_then(|&idx| self.seq.iter().rposition(|&i| i == idx));
        let cut = match pos {
            // The superseded versions sit right before the current one.
            Some(mut p) => {
                while p > 0
                    && self.superseded.contains(&self.seq[p - 1])
                    && self.same_id(self.seq[p - 1], to)
                {
                    p -= 1;
                }
                p
            }
            None => 0,
        };
        for idx in self.seq.drain(cut..) {
            if let Some(m) = self.entries[idx].message() {
                if let Some(id) = record_id(m) {
                    if self.current.get(id) == Some(&idx) {
                        self.current.remove(id);
                    }
                }
            }
        }
        if pos.is_none() {
            self.current.clear();
        }
    }

    fn same_id(&self, idx: usize, id: &str) -> bool {
        self.entries[idx].message().and_then(record_id) == Some(id)
    }

    fn clear(&mut self) {
        self.seq.clear();
        self.current.clear();
    }
}

/// What the CLI's model answers to the summary of a compressed history (the
/// history it keeps is this pair, then the messages it did not compress).
const COMPRESSION_ACK: &str = "Got it. Thanks for the additional context!";

/// Where a checkpoint's messages hold a compression summary (a user message
/// answered by [`COMPRESSION_ACK`]), and the summary.
fn compression_summary(
    messages: &[Option<(agentlog_model::Message, Option<Timestamp>)>],
) -> Option<(usize, String)> {
    messages.windows(2).enumerate().find_map(|(i, w)| {
        let (Some((user, _)), Some((ack, _))) = (&w[0], &w[1]) else {
            return None;
        };
        (user.role == Role::User
            && ack.role == Role::Assistant
            && ack.text_content().trim() == COMPRESSION_ACK)
            .then(|| (i, user.text_content()))
    })
}

/// Reads a current `session-*.jsonl` event log.
fn read_jsonl(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let mut diags = Vec::new();
    let mut meta = new_meta(path, JSONL);
    let mut fields = Map::new();
    let mut log = Log {
        entries: Vec::new(),
        seq: Vec::new(),
        roots: HashSet::new(),
        current: HashMap::new(),
        superseded: HashSet::new(),
        seen_ids: HashSet::new(),
        compactions: HashMap::new(),
    };
    // About one entry per line, room made at once: grown by doubling, the
    // entries were copied into fresh memory again and again (a sixth of a
    // long session's read). Only what is filled is ever touched, and a
    // file of many short or blank lines reserves no more than an entry per
    // 128 bytes.
    let lines = memchr::memchr_iter(b'\n', bytes).count() + 1;
    let _ = log
        .entries
        .try_reserve_exact(lines.min(bytes.len() / 128).min(1 << 21));
    // Parsed on a second thread a few batches ahead of this (for a large
    // file), never all of it at once.
    let mut values = 0usize;
    jsonl::each_value(path, bytes, |line, value| {
        let value = match value {
            Ok(v) => v,
            Err(d) => return diags.push(d),
        };
        values += 1;
        let id = format!("L{line}");
        let event = |t: &str, v: Value| EntryKind::Event {
            source: FORMAT_NAME.into(),
            event_type: t.into(),
            seq: None,
            payload: v,
        };
        let with_line = |kind: EntryKind| {
            let mut e = Entry::new(id.clone(), None, kind);
            e.line = Some(line);
            e
        };
        let Value::Object(obj) = &value else {
            diags.push(Diagnostic::warning(
                path,
                Some(line),
                "unknown-record",
                "not a JSON object; kept verbatim",
            ));
            log.push(
                with_line(EntryKind::Unknown {
                    record_type: None,
                    raw: value,
                }),
                true,
            );
            return;
        };
        if let Some(to) = obj.get("$rewindTo").and_then(Value::as_str) {
            let to = to.to_string();
            log.rewind(&to);
            log.push(with_line(event("$rewindTo", value)), true);
        } else if obj.get("id").is_some_and(Value::is_string) {
            match native_message(&value) {
                Some((mut m, ts)) => {
                    let msg_id = record_id(&m).unwrap_or_default().to_string();
                    if !log.seen_ids.insert(msg_id.clone()) && !log.current.contains_key(&msg_id) {
                        // An id seen before and rewound or cleared away:
                        // counted already.
                        m.usage = None;
                    }
                    let mut e = with_line(EntryKind::Message(m));
                    e.timestamp = ts;
                    log.message(msg_id, e);
                }
                None => {
                    diags.push(Diagnostic::info(
                        path,
                        Some(line),
                        "kept-verbatim",
                        "message record has a shape the reader does not model; kept as an event",
                    ));
                    log.push(with_line(event("message", value)), true);
                }
            }
        } else if let Some(Value::Object(set)) = obj.get("$set") {
            let set = set.clone();
            let checkpoint = set.get("messages").and_then(Value::as_array).cloned();
            for (k, v) in &set {
                if k != "messages" {
                    fields.insert(k.clone(), v.clone());
                }
            }
            match checkpoint {
                Some(messages) => {
                    let parsed: Vec<_> = messages
                        .iter()
                        .map(|rec| rec.as_object().and_then(record_message))
                        .collect();
                    let compression = compression_summary(&parsed);
                    let after_compaction = parsed
                        .iter()
                        .flatten()
                        .find_map(|(m, _)| log.compactions.get(record_id(m)?).cloned());
                    let summary_at = compression.as_ref().map(|(at, _)| *at);
                    // The CLI compressed the conversation: the history goes
                    // on under a compaction holding the summary.
                    let compressed =
                        compression.filter(|_| after_compaction.is_none() && !log.seq.is_empty());
                    match after_compaction {
                        // The history as it stands after an earlier
                        // compression: it goes on from that compaction.
                        Some(prefix) => {
                            log.seq = prefix;
                            log.current.clear();
                        }
                        None if compressed.is_some() => log.current.clear(),
                        None => log.clear(),
                    }
                    log.push(with_line(event("$set", value)), true);
                    if let Some((at, summary)) = compressed {
                        let mut c = Entry::new(
                            format!("L{line}.0"),
                            None,
                            EntryKind::Compaction {
                                summary,
                                short_summary: None,
                                first_kept_entry_id: None,
                                tokens_before: None,
                                details: None,
                                from_extension: None,
                                preserve_data: None,
                            },
                        );
                        c.timestamp = parsed[at].as_ref().and_then(|(_, ts)| ts.clone());
                        c.line = Some(line);
                        log.push(c, true);
                        if let Some(id) = parsed[at].as_ref().and_then(|(m, _)| record_id(m)) {
                            log.compactions.insert(id.to_string(), log.seq.clone());
                        }
                    }
                    for (i, rec) in parsed.into_iter().enumerate() {
                        let Some((mut m, ts)) = rec else {
                            continue;
                        };
                        let msg_id = record_id(&m).unwrap_or_default().to_string();
                        if !log.seen_ids.insert(msg_id.clone()) {
                            m.usage = None;
                        }
                        if let Some(at) = summary_at {
                            if i == at {
                                m.injected = Some("compression_summary".into());
                            } else if i == at + 1 {
                                m.injected = Some("compression_ack".into());
                            }
                        }
                        m.extra.insert(CHECKPOINT.into(), Value::Bool(true));
                        let mut e =
                            Entry::new(format!("L{line}.{}", i + 1), None, EntryKind::Message(m));
                        e.timestamp = ts;
                        e.line = Some(line);
                        log.message(msg_id, e);
                    }
                }
                None => {
                    log.push(with_line(event("$set", value)), true);
                }
            }
        } else if obj.get("sessionId").is_some_and(Value::is_string)
            || obj.contains_key("projectHash")
        {
            for (k, v) in obj {
                fields.insert(k.clone(), v.clone());
            }
            log.push(with_line(event("metadata", value)), true);
        } else {
            diags.push(Diagnostic::warning(
                path,
                Some(line),
                "unknown-record",
                "not a metadata line, message record, $set or $rewindTo; kept verbatim",
            ));
            let rt = obj.get("type").and_then(Value::as_str).map(str::to_string);
            log.push(
                with_line(EntryKind::Unknown {
                    record_type: rt,
                    raw: value,
                }),
                true,
            );
        }
    });
    if values == 0 && diags.iter().any(|d| d.code == "invalid-json") {
        return Err(FormatError::invalid(
            path,
            diags.first().and_then(|d| d.line),
            "not a Gemini CLI chat: neither one JSON object nor JSON lines",
        ));
    }
    // Superseded versions become events holding the record: the current
    // version is the message, and its usage is counted once. A version
    // read from a checkpoint (Gemini CLI repeats a record there now and
    // then) is not a line of the file: the `$set` holding it is.
    for &idx in &log.superseded {
        let e = &mut log.entries[idx];
        if let EntryKind::Message(m) = &e.kind {
            let event_type = if m.extra.contains_key(CHECKPOINT) {
                SUPERSEDED_IN_CHECKPOINT
            } else {
                "superseded"
            };
            let raw = message_record(m, e.timestamp.as_ref(), true);
            e.kind = EntryKind::Event {
                source: FORMAT_NAME.into(),
                event_type: event_type.into(),
                seq: None,
                payload: raw,
            };
            e.timestamp = None;
        }
    }
    let ids: Vec<String> = log.seq.iter().map(|&i| log.entries[i].id.clone()).collect();
    for (n, &idx) in log.seq.iter().enumerate() {
        log.entries[idx].parent_id = if n == 0 || log.roots.contains(&idx) {
            None
        } else {
            Some(ids[n - 1].clone())
        };
    }
    apply_meta(&mut meta, &fields);
    let mut extra = Extra::new();
    for k in ["projectHash", "kind", "directories"] {
        if let Some(v) = fields.get(k) {
            extra.insert(k.into(), v.clone());
        }
    }
    meta.extra = extra;
    let mut session = Session::new(meta);
    session.entries = log.entries;
    session.leaf_id = ids
        .last()
        .cloned()
        .or_else(|| session.entries.last().map(|e| e.id.clone()));
    session.meta.model.model = last_model(&session);
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// The drift report of a Gemini CLI chat: the records kept as unknown,
/// header fields beyond [`super::wire::KNOWN_HEADER`], and a document
/// without the `messages` array every chat had (a new layout).
pub(super) fn drift(read: &Read) -> Vec<crate::drift::Drift> {
    use crate::drift::{DriftKind, Tally};
    let mut t = Tally::default();
    crate::drift::unknown_records(read, &mut t);
    let extra = &read.session.meta.extra;
    if extra.contains_key(NO_MESSAGES) {
        t.add(DriftKind::Layout, crate::drift::LAYOUT, None);
    }
    t.fields("session", extra.keys(), super::wire::KNOWN_HEADER, None);
    // A JSONL chat's header lines, kept as `metadata` events.
    for e in &read.session.entries {
        if let EntryKind::Event {
            event_type,
            payload: Value::Object(o),
            ..
        } = &e.kind
        {
            if event_type == "metadata" {
                t.fields("session", o.keys(), super::wire::KNOWN_HEADER, e.line);
            }
        }
    }
    t.into_items()
}

/// What a Gemini CLI chat is: a subagent's when its header says
/// `kind: "subagent"` (as 0.61 writes for `chats/<parent>/<id>.jsonl`),
/// else a conversation (a `gemini -p` run writes nothing that tells it
/// apart).
pub(super) fn session_kind(session: &Session) -> agentlog_model::SessionKind {
    if session.meta.extra.get("kind").and_then(Value::as_str) == Some("subagent") {
        agentlog_model::SessionKind::Subagent
    } else {
        agentlog_model::SessionKind::Conversation
    }
}
