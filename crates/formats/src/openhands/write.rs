//! Writes conversations of the OpenHands CLI 1.x: a folder with
//! `events/event-<n>-<id>.json`, one event a file, and (for a conversation
//! read from OpenHands) its `base_state.json`.
//!
//! - A conversation read from OpenHands is written event for event: each
//!   entry's event with its text, reasoning and results put back where the
//!   reader took them from, and the state file as it was.
//! - Another agent's session becomes the events OpenHands itself would have
//!   written: prompts and answers as `MessageEvent`s; an answer's tool calls
//!   as `ActionEvent`s of one response (its text as the first call's
//!   `thought`, its thinking as `reasoning_content`) carrying the call as the
//!   model sent it and no executable action, so OpenHands sends them to the
//!   model as they were and never runs them again; their results as
//!   `ObservationEvent`s with a tool's generic observation
//!   (`MCPToolObservation`). No `base_state.json`: OpenHands writes its own
//!   (with the agent it runs) when it continues the conversation, and
//!   refuses a state naming another agent. A system prompt is not written:
//!   OpenHands gives its own only to a conversation with no events, so one
//!   continued from another agent runs without it (in the fidelity report).

use super::conversation::{part_value, BASE_STATE};
use super::wire::EVENTS;
use super::FORMAT_NAME;
use crate::{Fidelity, FormatError, Written};
use agentlog_model::{Block, BlockKind, Entry, EntryKind, Message, Role, Session};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;

/// Writes `session` as the files of a conversation folder.
pub(super) fn write(session: &Session) -> Result<(Written, Fidelity), FormatError> {
    let mut w = Writer {
        session_id: &session.meta.id,
        fidelity: Fidelity::new(FORMAT_NAME),
        events: Vec::new(),
        calls: HashMap::new(),
    };
    // A 1.x conversation (an older event store is written as another
    // agent's session would be).
    let own = session.meta.format.as_deref() == Some(FORMAT_NAME)
        && (session.meta.extra.contains_key("base_state")
            || session.entries.iter().any(|e| {
                let kind = match &e.kind {
                    EntryKind::Event { payload, .. } => payload.get("kind"),
                    _ => e.extra.get("kind"),
                };
                kind.is_some_and(Value::is_string)
            }));
    for e in session.active_branch() {
        // An event read from a 1.x conversation goes back as it was.
        if own {
            match &e.kind {
                EntryKind::Message(_) if e.extra.get("kind").is_some_and(Value::is_string) => {
                    w.own_event(e);
                    continue;
                }
                EntryKind::Event { payload, .. }
                    if payload.get("kind").is_some_and(Value::is_string) =>
                {
                    w.events.push(payload.clone());
                    continue;
                }
                EntryKind::Unknown { raw, .. } => {
                    w.events.push(raw.clone());
                    continue;
                }
                _ => {}
            }
        }
        w.entry(e);
    }
    let mut files = Vec::new();
    if own {
        if let Some(state) = session.meta.extra.get("base_state") {
            files.push((PathBuf::from(BASE_STATE), to_json(state)?));
        }
    }
    for (n, ev) in w.events.iter().enumerate() {
        let id = match ev.get("id").and_then(Value::as_str) {
            Some(id) if is_event_id(id) => id.to_string(),
            _ => w.id(&format!("file {n}"), 0),
        };
        let name = format!("event-{n:05}-{id}.json");
        files.push((PathBuf::from(EVENTS).join(name), to_json(ev)?));
    }
    Ok((Written::Folder(files), w.fidelity))
}

/// An event's JSON, as one line like OpenHands' own.
fn to_json(v: &Value) -> Result<Vec<u8>, FormatError> {
    serde_json::to_vec(v)
        .map_err(|e| FormatError::write("openhands event", std::io::Error::other(e)))
}

/// True when `id` can name an event file: OpenHands finds its events by
/// names matching `event-<5 digits>-<hex and dashes, 8 or more>.json` (and
/// a file name has a limit; a UUID has 36).
fn is_event_id(id: &str) -> bool {
    (8..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

struct Writer<'a> {
    session_id: &'a str,
    fidelity: Fidelity,
    events: Vec<Value>,
    /// Each call written: its `ActionEvent`'s id and the tool's name.
    calls: HashMap<String, (String, String)>,
}

impl Writer<'_> {
    /// A UUID for the `k`-th event made of the entry `entry`: the same
    /// session converted twice gives the same files.
    fn id(&self, entry: &str, k: usize) -> String {
        crate::ids::stable_uuid(&format!("{}\0{entry}\0{k}", self.session_id)).to_string()
    }

    /// The entry's event as the reader found it, with what the reader took
    /// out of it put back.
    fn own_event(&mut self, e: &Entry) {
        let mut ev = e.extra.clone();
        let kind = ev
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if let EntryKind::Message(m) = &e.kind {
            match kind.as_str() {
                "SystemPromptEvent" => {
                    let text: String = m.content.iter().filter_map(Block::plain_text).collect();
                    if let Some(Value::Object(p)) = ev.get_mut("system_prompt") {
                        p.insert("text".into(), text.into());
                    }
                }
                // (a field the reader kept, not being a list of parts,
                // stays as it was)
                "MessageEvent" => {
                    if let Some(Value::Object(lm)) = ev.get_mut("llm_message") {
                        put_reasoning(lm, m);
                        if !lm.contains_key("content") {
                            lm.insert("content".into(), self.own_parts(m, &e.id));
                        }
                    }
                }
                "ActionEvent" => {
                    put_reasoning(&mut ev, m);
                    if !ev.contains_key("thought") {
                        ev.insert("thought".into(), self.own_parts(m, &e.id));
                    }
                }
                _ => {
                    if let Some(Value::Object(o)) = ev
                        .get_mut("observation")
                        .filter(|o| o.get("content").is_none())
                    {
                        let content = m.content.iter().find_map(|b| match &b.kind {
                            BlockKind::ToolResult { content, .. } => Some(content),
                            _ => None,
                        });
                        let parts = content
                            .into_iter()
                            .flatten()
                            .filter_map(|b| self.part(b, &e.id, true))
                            .collect();
                        o.insert("content".into(), Value::Array(parts));
                    }
                }
            }
        }
        self.events.push(Value::Object(ev));
    }

    /// The text and image parts of `m`, an event read from OpenHands (its
    /// thinking, calls and results are written elsewhere).
    fn own_parts(&mut self, m: &Message, id: &str) -> Value {
        let parts = m
            .content
            .iter()
            .filter(|b| {
                !matches!(
                    b.kind,
                    BlockKind::Thinking { .. }
                        | BlockKind::ToolCall { .. }
                        | BlockKind::ToolResult { .. }
                )
            })
            .filter_map(|b| self.part(b, id, true))
            .collect();
        Value::Array(parts)
    }

    /// A content part (of an event read from OpenHands when `own`), or
    /// `None` (reported lost) for a block OpenHands' content cannot hold.
    fn part(&mut self, b: &Block, id: &str, own: bool) -> Option<Value> {
        let p = part_value(b, own);
        if p.is_none() {
            self.fidelity
                .lost(format!("{} in a message", b.kind.name()), Some(id));
        }
        p
    }

    /// The events of an entry of another agent's session.
    fn entry(&mut self, e: &Entry) {
        let m = match &e.kind {
            EntryKind::Message(m) => m,
            other => {
                self.fidelity
                    .lost(format!("{} entry", other.name()), Some(&e.id));
                return;
            }
        };
        match m.role {
            Role::User | Role::Tool => self.user(e, m),
            Role::Assistant => self.assistant(e, m),
            _ if m.injected.as_deref() == Some("system_prompt") => self.fidelity.lost(
                "system prompt (OpenHands continues another agent's session without one)",
                Some(&e.id),
            ),
            _ => self
                .fidelity
                .lost(format!("{} message", m.role.as_str()), Some(&e.id)),
        }
    }

    /// A prompt (its text and images) and the tool results it carries.
    fn user(&mut self, e: &Entry, m: &Message) {
        // A tool message's text and images are its call's one result.
        if m.role == Role::Tool
            && !m
                .content
                .iter()
                .any(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
        {
            self.result(
                e,
                m.tool_call_id.as_ref(),
                &m.content,
                m.is_error == Some(true),
            );
            return;
        }
        let mut content = Vec::new();
        for b in &m.content {
            match &b.kind {
                BlockKind::ToolResult {
                    tool_call_id,
                    content: result,
                    is_error,
                } => {
                    let call = tool_call_id.as_ref().or(m.tool_call_id.as_ref());
                    self.result(e, call, result, *is_error || m.is_error == Some(true));
                }
                _ => content.extend(self.part(b, &e.id, false)),
            }
        }
        if content.is_empty() {
            return;
        }
        let mut ev = self.event(e, "MessageEvent", "user");
        ev.insert(
            "llm_message".into(),
            json!({"role": "user", "content": content}),
        );
        self.events.push(Value::Object(ev));
    }

    /// A call's result, answering the `ActionEvent` written for the call.
    fn result(&mut self, e: &Entry, call: Option<&String>, content: &[Block], is_error: bool) {
        let Some((action_id, tool)) = call.and_then(|c| self.calls.get(c)).cloned() else {
            self.fidelity.lost("tool result of no call", Some(&e.id));
            return;
        };
        let parts: Vec<Value> = content
            .iter()
            .filter_map(|b| self.part(b, &e.id, false))
            .collect();
        let mut ev = self.event(e, "ObservationEvent", "environment");
        ev.insert("tool_name".into(), tool.clone().into());
        ev.insert("tool_call_id".into(), call.cloned().into());
        ev.insert(
            "observation".into(),
            json!({"kind": "MCPToolObservation", "content": parts,
                   "is_error": is_error, "tool_name": tool}),
        );
        ev.insert("action_id".into(), action_id.into());
        self.events.push(Value::Object(ev));
    }

    /// An answer: a `MessageEvent`, or one `ActionEvent` per call, then
    /// the results it holds (agents such as OpenCode keep a call's result
    /// in the answer that made the call).
    fn assistant(&mut self, e: &Entry, m: &Message) {
        let mut reasoning = Vec::new();
        let mut content = Vec::new();
        let mut calls = Vec::new();
        let mut results = Vec::new();
        for b in &m.content {
            match &b.kind {
                BlockKind::Thinking {
                    text, signature, ..
                } => {
                    if signature.is_some() {
                        self.fidelity.lost("thinking signature", Some(&e.id));
                    }
                    reasoning.push(text.as_str());
                }
                BlockKind::ToolCall { id, name, input } => calls.push((id, name, input)),
                BlockKind::ToolResult {
                    tool_call_id,
                    content,
                    is_error,
                } => results.push((tool_call_id, content, *is_error)),
                _ => content.extend(self.part(b, &e.id, false)),
            }
        }
        let reasoning = (!reasoning.is_empty()).then(|| reasoning.join("\n"));
        if calls.is_empty() {
            if !content.is_empty() || reasoning.is_some() {
                let mut message = json!({"role": "assistant", "content": content});
                if let Some(r) = reasoning {
                    message["reasoning_content"] = r.into();
                }
                let mut ev = self.event(e, "MessageEvent", "agent");
                ev.insert("llm_message".into(), message);
                self.events.push(Value::Object(ev));
            }
            for (call, content, is_error) in results {
                self.result(e, call.as_ref(), content, is_error);
            }
            return;
        }
        // One response: its text and reasoning go with its first call.
        let response = format!("agentlog-{}", self.id(&e.id, usize::MAX));
        // A call's `thought` holds text only (OpenHands refuses an image
        // there).
        let (texts, others): (Vec<Value>, Vec<Value>) = content
            .into_iter()
            .partition(|p| p.get("type").and_then(Value::as_str) == Some("text"));
        if !others.is_empty() {
            self.fidelity
                .lost("image in an answer that calls a tool", Some(&e.id));
        }
        let mut thought = Some((texts, reasoning));
        for (k, (id, name, input)) in calls.into_iter().enumerate() {
            let call_id = id.clone().unwrap_or_else(|| format!("call_{}_{k}", e.id));
            let arguments = match input {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let mut ev = self.event(e, "ActionEvent", "agent");
            let (content, reasoning) = thought.take().unwrap_or_default();
            ev.insert("thought".into(), Value::Array(content));
            if let Some(r) = reasoning {
                ev.insert("reasoning_content".into(), r.into());
            }
            ev.insert("tool_name".into(), name.clone().into());
            ev.insert("tool_call_id".into(), call_id.clone().into());
            ev.insert(
                "tool_call".into(),
                json!({"id": call_id, "name": name, "arguments": arguments,
                       "origin": "completion"}),
            );
            ev.insert("llm_response_id".into(), response.clone().into());
            let event_id = ev
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            self.calls.insert(call_id, (event_id, name.clone()));
            self.events.push(Value::Object(ev));
        }
        for (call, content, is_error) in results {
            self.result(e, call.as_ref(), content, is_error);
        }
    }

    /// A new event of `kind` for the entry `e`: its id (one entry can
    /// give several events, each with its own), time and source.
    fn event(&self, e: &Entry, kind: &str, source: &str) -> Map<String, Value> {
        let mut ev = Map::new();
        ev.insert("kind".into(), kind.into());
        ev.insert("id".into(), self.id(&e.id, self.events.len()).into());
        // As OpenHands writes its times: ISO 8601 to the microsecond, with
        // no zone (UTC here).
        if let Some(t) = e.timestamp.as_ref().and_then(|t| t.to_utc()) {
            let t = t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string();
            ev.insert("timestamp".into(), t.into());
        }
        ev.insert("source".into(), source.into());
        ev
    }
}

/// Puts a message's thinking back as `reasoning_content`.
fn put_reasoning(obj: &mut Map<String, Value>, m: &Message) {
    if let Some(text) = crate::chat::thinking_text(m) {
        obj.insert("reasoning_content".into(), text.into());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Format;

    /// Writes `events` as a 1.x conversation with a state file, reads it,
    /// and writes it back: each file the same JSON value.
    fn round_trip(events: &[Value]) {
        let dir = tempfile::tempdir().unwrap();
        let conv = dir.path().join("c1");
        let mut files = vec![(PathBuf::from(BASE_STATE), br#"{"id":"c1"}"#.to_vec())];
        for (n, ev) in events.iter().enumerate() {
            let id = ev["id"].as_str().unwrap();
            let name = format!("event-{n:05}-{id}.json");
            files.push((
                PathBuf::from(EVENTS).join(name),
                ev.to_string().into_bytes(),
            ));
        }
        Written::Folder(files.clone()).write_plain(&conv).unwrap();
        let read = super::super::FORMAT.read_path(&conv).unwrap();
        let (Written::Folder(back), fidelity) = write(&read.session).unwrap() else {
            panic!("one file");
        };
        assert!(fidelity.is_lossless(), "{fidelity}");
        assert_eq!(back.len(), files.len());
        for ((p, a), (q, b)) in files.iter().zip(&back) {
            assert_eq!(p, q);
            let (a, b): (Value, Value) = (
                serde_json::from_slice(a).unwrap(),
                serde_json::from_slice(b).unwrap(),
            );
            assert_eq!(a, b, "{}", p.display());
        }
    }

    #[test]
    fn fields_that_are_not_lists_of_parts_come_back_as_they_were() {
        round_trip(&[
            json!({"kind": "MessageEvent", "id": "0000000a-aaaa", "source": "user",
                   "llm_message": {"role": "user", "content": "a plain string"}}),
            json!({"kind": "ActionEvent", "id": "0000000b-bbbb", "source": "agent",
                   "thought": "not a list", "reasoning_content": "",
                   "tool_name": "terminal", "tool_call_id": "c1",
                   "tool_call": {"id": "c1", "name": "terminal", "arguments": "{}"},
                   "llm_response_id": "r1"}),
            json!({"kind": "ObservationEvent", "id": "0000000c-cccc", "source": "environment",
                   "tool_name": "terminal", "tool_call_id": "c1", "action_id": "0000000b-bbbb",
                   "observation": {"kind": "ExecuteBashObservation", "content": null}}),
            json!({"kind": "MessageEvent", "id": "0000000d-dddd", "source": "agent",
                   "llm_message": {"role": "assistant", "reasoning_content": "why",
                                   "content": [{"type": "text", "text": "ok", "cache_prompt": false},
                                               {"type": "image", "image_urls": ["a", "b"]}]}}),
        ]);
    }

    #[test]
    fn a_tool_message_is_one_result_and_an_answers_image_is_not_a_thought() {
        use agentlog_model::{Agent, SessionMeta};
        let mut s = Session::new(SessionMeta::new("s1", Agent::Codex));
        let mut call = Message::text(Role::Assistant, "Looking.");
        call.content.push(Block {
            kind: BlockKind::Image {
                media_type: Some("image/png".into()),
                data: Some("AAAA".into()),
                url: None,
            },
            extra: Default::default(),
        });
        call.content.push(Block::tool_call(
            Some("c1".into()),
            "shell",
            json!({"cmd": "ls"}),
        ));
        let mut result = Message::new(Role::Tool);
        result.tool_call_id = Some("c1".into());
        result.content = vec![Block::text("a"), Block::text("b")];
        for (id, m) in [("e1", call), ("e2", result)] {
            s.push(Entry::new(id, s.leaf_id.clone(), EntryKind::Message(m)));
        }
        let (Written::Folder(files), fidelity) = write(&s).unwrap() else {
            panic!("one file");
        };
        let events: Vec<Value> = files
            .iter()
            .map(|(_, b)| serde_json::from_slice(b).unwrap())
            .collect();
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(
            events[0]["thought"],
            json!([{"type": "text", "text": "Looking."}])
        );
        assert_eq!(
            events[1]["observation"]["content"],
            json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
        );
        assert_eq!(events[1]["action_id"], events[0]["id"]);
        let lost: Vec<&str> = fidelity.losses.iter().map(|l| l.what.as_str()).collect();
        assert_eq!(lost, ["image in an answer that calls a tool"]);
    }
}

#[cfg(test)]
mod discovery_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Format;

    #[test]
    fn a_folder_being_written_or_a_scrubs_backup_is_not_a_session() {
        let home = tempfile::tempdir().unwrap();
        let convs = home.path().join(".openhands/conversations");
        let event = br#"{"kind":"MessageEvent","id":"0000000a-aaaa","source":"user","llm_message":{"role":"user","content":[]}}"#;
        for name in [
            "ab12",
            // write_folder's temp folder, left by a writer killed midway
            ".ab13.4242.7.tmp",
            "ab12.agentlog-backup-2026-11-26T10-00-00Z",
        ] {
            let files = vec![(
                PathBuf::from("events/event-00000-0000000a-aaaa.json"),
                event.to_vec(),
            )];
            Written::Folder(files)
                .write_plain(&convs.join(name))
                .unwrap();
        }
        let env = crate::env::DiscoverEnv::with_home(home.path());
        let found = super::super::FORMAT.discover(&env);
        assert_eq!(found, [convs.join("ab12/events")]);
    }
}
