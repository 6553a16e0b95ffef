//! Writing sessions as Codex rollouts.

use super::usage::usage_value;
use super::wire::{message_items, ENVELOPE};
use super::{rollout_id, BARE, DOCUMENT, FORMAT_NAME};
use crate::{Fidelity, FormatError};
use agentlog_model::{
    BlockKind, Entry, EntryKind, Extra, Message, Role, Session, Timestamp, Usage,
};
use serde_json::{json, Map, Value};
use std::io::Write;

pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let mut fidelity = Fidelity::new(FORMAT_NAME);
    let native = session.meta.format.as_deref() == Some(FORMAT_NAME);
    if native && session.meta.format_version.as_ref().and_then(Value::as_str) == Some(DOCUMENT) {
        let mut lines = native_lines(session, &mut fidelity).into_iter();
        let mut doc = session.meta.extra.clone();
        doc.insert("session".into(), lines.next().unwrap_or(Value::Null));
        doc.insert("items".into(), Value::Array(lines.collect()));
        serde_json::to_writer_pretty(&mut *out, &Value::Object(doc))
            .map_err(|e| FormatError::write("codex session", std::io::Error::from(e)))?;
        out.write_all(b"\n")
            .map_err(|e| FormatError::write("codex session", e))?;
        return Ok(fidelity);
    }
    let lines = if session.meta.format.as_deref() == Some(FORMAT_NAME) {
        native_lines(session, &mut fidelity)
    } else {
        Foreign::new(session).lines(&mut fidelity)
    };
    for line in lines {
        serde_json::to_writer(&mut *out, &line)
            .map_err(|e| FormatError::write("codex rollout", std::io::Error::from(e)))?;
        out.write_all(b"\n")
            .map_err(|e| FormatError::write("codex rollout", e))?;
    }
    Ok(fidelity)
}

fn envelope(bare: bool, env: &str, payload: Value, ts: Option<&Timestamp>, extra: &Extra) -> Value {
    if bare {
        return payload;
    }
    let mut obj = Map::new();
    if let Some(t) = ts {
        obj.insert(
            "timestamp".into(),
            serde_json::to_value(t).unwrap_or(Value::Null),
        );
    }
    for (k, v) in extra {
        obj.insert(k.clone(), v.clone());
    }
    obj.insert("type".into(), env.into());
    obj.insert("payload".into(), payload);
    Value::Object(obj)
}

/// Writes a session read from Codex back line for line.
fn native_lines(session: &Session, fidelity: &mut Fidelity) -> Vec<Value> {
    let version = session.meta.format_version.as_ref().and_then(Value::as_str);
    let bare = version == Some(BARE) || version == Some(DOCUMENT);
    let mut foreign = Foreign::new(session);
    let mut out = Vec::with_capacity(session.entries.len());
    for e in &session.entries {
        let ts = e.timestamp.as_ref();
        match &e.kind {
            EntryKind::Event {
                source, payload, ..
            } => {
                out.push(envelope(bare, source, payload.clone(), ts, &e.extra));
            }
            EntryKind::Unknown { raw, .. } => out.push(raw.clone()),
            EntryKind::Message(m) => {
                let m = &with_entry_extra(m, &e.extra);
                let extra = match m.extra.get(ENVELOPE) {
                    Some(Value::Object(o)) => o.clone(),
                    _ => Extra::new(),
                };
                for (env, payload) in message_items(m, true) {
                    out.push(envelope(bare, env, payload, ts, &extra));
                }
            }
            EntryKind::Compaction {
                summary, details, ..
            } => {
                let mut p = Map::new();
                p.insert("message".into(), summary.clone().into());
                if let Some(Value::Object(d)) = details {
                    p.extend(d.clone());
                }
                out.push(envelope(bare, "compacted", Value::Object(p), ts, &e.extra));
            }
            _ => foreign.entry(e, fidelity, &mut out),
        }
    }
    out
}

/// Writes a session from another format as a new rollout of the newest
/// shape.
struct Foreign<'a> {
    session: &'a Session,
    id: String,
    cwd: String,
    ts: String,
    model: Option<String>,
    written_model: Option<String>,
    total: Usage,
}

impl<'a> Foreign<'a> {
    fn new(session: &'a Session) -> Foreign<'a> {
        let ts = session
            .meta
            .created_at
            .as_ref()
            .or_else(|| session.entries.iter().find_map(|e| e.timestamp.as_ref()))
            .map(Timestamp::to_rfc3339)
            .unwrap_or_else(|| Timestamp::now().to_rfc3339());
        Foreign {
            session,
            id: rollout_id(session),
            cwd: session.meta.cwd.clone().unwrap_or_else(|| ".".into()),
            ts,
            model: session.meta.model.model.clone(),
            written_model: None,
            total: Usage::default(),
        }
    }

    fn line(&self, env: &str, payload: Value) -> Value {
        json!({"timestamp": self.ts, "type": env, "payload": payload})
    }

    fn lines(mut self, fidelity: &mut Fidelity) -> Vec<Value> {
        let meta = &self.session.meta;
        let mut out = Vec::new();
        if meta.cwd.is_none() {
            fidelity.lost("working directory (written as \".\")", None);
        }
        let p = json!({
            "id": self.id,
            "timestamp": self.ts,
            "cwd": self.cwd,
            "originator": "agentlog",
            "cli_version": env!("CARGO_PKG_VERSION"),
            "instructions": null,
            "source": "cli",
        });
        // Codex refuses to resume a rollout whose `model_provider` is not
        // configured in its config.toml ("This chat uses model provider …
        // which is no longer configured"), and another agent's provider
        // (anthropic, google, a pi provider) never is. Without the field
        // Codex continues with the provider it is configured for.
        if meta.model.provider.is_some() {
            fidelity.lost(
                "model provider (Codex continues with its configured provider)",
                None,
            );
        }
        out.push(self.line("session_meta", p));
        if let Some(title) = &meta.title {
            let p =
                json!({"type": "thread_name_updated", "thread_id": self.id, "thread_name": title});
            out.push(self.line("event_msg", p));
        }
        let branch = self.session.active_branch();
        let off = self.session.entries.len() - branch.len();
        if off > 0 {
            for _ in 0..off {
                fidelity.lost("entries on branches other than the current one", None);
            }
        }
        for e in branch {
            self.entry(e, fidelity, &mut out);
        }
        out
    }

    fn turn_context(&mut self, out: &mut Vec<Value>) {
        let Some(model) = self.model.clone() else {
            return;
        };
        if self.written_model.as_ref() == Some(&model) {
            return;
        }
        let p = json!({
            "cwd": self.cwd,
            "approval_policy": "on-request",
            "sandbox_policy": {"type": "read-only"},
            "model": model,
            "summary": "auto",
        });
        out.push(self.line("turn_context", p));
        self.written_model = Some(model);
    }

    fn entry(&mut self, e: &Entry, fidelity: &mut Fidelity, out: &mut Vec<Value>) {
        if let Some(t) = &e.timestamp {
            self.ts = t.to_rfc3339();
        }
        match &e.kind {
            EntryKind::Message(m) => self.message(e, m, fidelity, out),
            EntryKind::ModelChange { model, .. } => {
                self.model = Some(model.clone());
                self.turn_context(out);
            }
            EntryKind::Compaction { summary, .. } => {
                out.push(self.line("compacted", json!({"message": summary})));
            }
            EntryKind::Event { .. } | EntryKind::Unknown { .. } if self.native() => {}
            other => fidelity.lost(format!("entry kind {}", other.name()), Some(&e.id)),
        }
    }

    fn native(&self) -> bool {
        self.session.meta.format.as_deref() == Some(FORMAT_NAME)
    }

    fn message(&mut self, e: &Entry, m: &Message, fidelity: &mut Fidelity, out: &mut Vec<Value>) {
        if let Role::Custom(r) = &m.role {
            fidelity.lost(format!("messages with role {r}"), Some(&e.id));
            return;
        }
        for b in &m.content {
            match &b.kind {
                BlockKind::Thinking {
                    signature: Some(_), ..
                } => {
                    fidelity.lost("thinking signatures", Some(&e.id));
                }
                BlockKind::Thinking {
                    text,
                    redacted: true,
                    ..
                } if text.is_empty() => {
                    fidelity.lost("redacted thinking", Some(&e.id));
                }
                BlockKind::Other { .. } => fidelity.lost("opaque content blocks", Some(&e.id)),
                BlockKind::Image { .. } if m.role == Role::Assistant => {
                    fidelity.lost("images in assistant messages", Some(&e.id));
                }
                _ => {}
            }
        }
        if !m.extra.is_empty() && !self.native() {
            fidelity.lost("native message fields of the source format", Some(&e.id));
        }
        if let Some(m) = &m.model {
            if m != "<synthetic>" {
                self.model = Some(m.clone());
            }
        }
        self.turn_context(out);
        if m.role == Role::Assistant {
            if let Some(u) = &m.usage {
                self.total.add(u);
                let p = json!({
                    "type": "token_count",
                    "info": {
                        "total_token_usage": usage_value(&self.total),
                        "last_token_usage": usage_value(u),
                        "model_context_window": null,
                    },
                    "rate_limits": null,
                });
                out.push(self.line("event_msg", p));
            }
        }
        let mut m = m.clone();
        for (n, b) in m.content.iter_mut().enumerate() {
            if let BlockKind::ToolCall { id: id @ None, .. } = &mut b.kind {
                *id = Some(format!("call_{}_{n}", e.id));
            }
        }
        for (env, payload) in message_items(&m, false) {
            let kind = payload.get("type").and_then(Value::as_str).unwrap_or("");
            let text = message_text(&payload);
            let is_message = kind == "message";
            out.push(self.line(env, payload));
            if is_message && m.injected.is_none() {
                match m.role {
                    Role::User if !text.is_empty() => {
                        let p = json!({
                            "type": "user_message",
                            "message": text,
                            "images": [],
                            "local_images": [],
                            "text_elements": [],
                        });
                        out.push(self.line("event_msg", p));
                    }
                    Role::Assistant if !text.is_empty() => {
                        let p = json!({"type": "agent_message", "message": text});
                        out.push(self.line("event_msg", p));
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Returns the text items of a `message` payload joined by blank lines.
fn message_text(payload: &Value) -> String {
    let Some(items) = payload.get("content").and_then(Value::as_array) else {
        return String::new();
    };
    let parts: Vec<&str> = items
        .iter()
        .filter_map(|i| i.get("text").and_then(Value::as_str))
        .collect();
    parts.join("\n\n")
}

/// Returns the message with the entry's extras among its own. Codex message
/// entries keep nothing in `Entry::extra`, but a trip through the unified
/// JSON format moves the message's extras there (both serialize as
/// `extra`).
fn with_entry_extra<'m>(m: &'m Message, extra: &Extra) -> std::borrow::Cow<'m, Message> {
    if extra.is_empty() {
        return std::borrow::Cow::Borrowed(m);
    }
    let mut m = m.clone();
    for (k, v) in extra {
        m.extra.entry(k.clone()).or_insert_with(|| v.clone());
    }
    std::borrow::Cow::Owned(m)
}
