//! jido_code's persisted session: one pretty-printed JSON object per
//! session, `~/.jido_code/sessions/{id}.json`, written when a session
//! closes and read back by `/resume`.
//!
//! The file holds `version`, `id`, `name`, `project_path`, `config`
//! (provider, model, temperature, max_tokens), `created_at`, `updated_at`,
//! `closed_at`, the `conversation` (messages with `id`, `role`, string
//! `content`, `timestamp`) and `todos` (`content`, `status`,
//! `active_form`). In the model: the name is the title, the project path
//! the working directory, the config the model configuration, each
//! conversation message a message entry (its id the entry id, each the
//! child of the one before) and the todos the session's todos. Fields the
//! model has no slot for (`language`, `prompt_history`,
//! `cumulative_usage`, `signature`, per-message `usage`, …) stay in the
//! `extra` maps; a message or a field of an unexpected shape is kept
//! verbatim, so reading then writing gives the same JSON value.
//!
//! A jido file holds plain text turns only. Writing another format's
//! session reports what it cannot hold: thinking, tool calls and results,
//! images, non-message entries, branches other than the active one. A
//! run's `run.start` text and `run.end` final answer (a codelia run log)
//! become a user and an assistant message.
//!
//! Differences from the real system (agentjido/jido_code): it writes keys
//! in alphabetical order and adds an HMAC `signature` over the pretty JSON,
//! keyed by a per-machine secret; agentlog writes the seed's key order and
//! keeps a signature it reads as an unknown field, but cannot re-sign a
//! file it changed (jido_code accepts unsigned files with a warning).

pub mod schema;

use crate::env::{walk_files, DiscoverEnv};
use crate::{Diagnostic, Fidelity, Format, FormatError, Read};
use agentlog_model::{
    Agent, BlockKind, Entry, EntryKind, Extra, Message, ModelConfig, Role, Session, SessionMeta,
    Timestamp, Todo,
};
use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The jido format.
pub struct JidoFormat;

/// The registry entry.
pub static FORMAT: JidoFormat = JidoFormat;

/// The order of the top-level fields in the seed.
const ORDER: [&str; 10] = [
    "version",
    "id",
    "name",
    "project_path",
    "config",
    "created_at",
    "updated_at",
    "closed_at",
    "conversation",
    "todos",
];

impl Format for JidoFormat {
    fn name(&self) -> &'static str {
        "jido"
    }

    fn description(&self) -> &'static str {
        "jido_code persisted session (JSON)"
    }

    fn agent(&self) -> Agent {
        Agent::JidoCode
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if path.extension().is_some_and(|e| e != "json") {
            return 0;
        }
        let text = crate::jsonl::head_text(head, 64 * 1024);
        let t = text.trim_start();
        let keys = ["\"project_path\"", "\"conversation\"", "\"closed_at\""];
        let hits = keys.iter().filter(|k| t.contains(*k)).count();
        if t.starts_with('{') && hits == keys.len() {
            90
        } else if t.starts_with('{') && hits == 2 && t.contains("\"version\"") {
            60
        } else {
            0
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(self.name()) {
            Some(r) => r.to_vec(),
            None => vec![sessions_dir(env)],
        };
        roots
            .iter()
            .flat_map(|r| {
                walk_files(r, 0, &|p: &Path| {
                    p.extension().is_some_and(|e| e == "json")
                        && !p
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
            })
            .collect()
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        let doc: Value = serde_json::from_slice(bytes).map_err(|e| {
            FormatError::invalid(path, Some(e.line() as u64), format!("not valid JSON: {e}"))
        })?;
        let Value::Object(obj) = doc else {
            return Err(FormatError::invalid(
                path,
                None,
                "a jido session file must be a JSON object",
            ));
        };
        let mut diagnostics = Vec::new();
        let session = decode(path, &obj, &mut diagnostics);
        Ok(Read {
            session,
            diagnostics,
        })
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        let bytes = crate::input::read_file(path)?;
        let mut diags = self.read_bytes(path, &bytes)?.diagnostics;
        let doc: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        for p in schema::validate(&doc) {
            diags.push(Diagnostic::error(path, None, "schema", p.to_string()));
        }
        Ok(diags)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        let (doc, fid) = encode(session);
        let mut buf = to_pretty(&doc).map_err(|e| FormatError::write("jido session", e))?;
        buf.push(b'\n');
        out.write_all(&buf)
            .map_err(|e| FormatError::write("jido session", e))?;
        Ok(fid)
    }
}

/// Returns the document as jido_code lays it out (two-space indents).
pub fn to_pretty(doc: &Value) -> std::io::Result<Vec<u8>> {
    serde_json::to_vec_pretty(doc).map_err(std::io::Error::other)
}

/// Returns jido_code's sessions directory, `~/.jido_code/sessions`.
pub fn sessions_dir(env: &DiscoverEnv) -> PathBuf {
    env.home_join(".jido_code").join("sessions")
}

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(str::to_string)
}

fn ts(v: Option<&Value>) -> Option<Timestamp> {
    text(v).map(Timestamp::Text)
}

/// Reads a session document into the model.
pub fn decode(path: &Path, obj: &Map<String, Value>, diags: &mut Vec<Diagnostic>) -> Session {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut meta = SessionMeta::new(text(obj.get("id")).unwrap_or(stem), Agent::JidoCode);
    meta.format = Some("jido".into());
    meta.format_version = obj.get("version").cloned();
    meta.title = text(obj.get("name"));
    meta.cwd = text(obj.get("project_path"));
    meta.created_at = ts(obj.get("created_at"));
    meta.updated_at = ts(obj.get("updated_at"));
    meta.closed_at = ts(obj.get("closed_at"));
    if let Some(cfg) = obj.get("config").and_then(decode_config) {
        meta.model = cfg;
    }
    if let Some(Value::Array(todos)) = obj.get("todos") {
        if let Some(t) = todos.iter().map(decode_todo).collect::<Option<Vec<_>>>() {
            meta.todos = t;
        }
    }
    if let Some(v) = obj.get("version") {
        if v.as_u64() != Some(schema::CURRENT_VERSION) {
            diags.push(Diagnostic::warning(
                path,
                None,
                "unsupported-schema-version",
                format!(
                    "version {v} is not {}; read as is (restore migrates older versions)",
                    schema::CURRENT_VERSION
                ),
            ));
        }
    }
    let mut session = Session::new(meta);
    if let Some(Value::Array(msgs)) = obj.get("conversation") {
        let mut parent: Option<String> = None;
        for (i, m) in msgs.iter().enumerate() {
            let mut e = match decode_message(m) {
                Some(e) => e,
                None => {
                    diags.push(Diagnostic::warning(
                        path,
                        None,
                        "unmapped-message",
                        format!("conversation[{i}] is not a message of the expected shape; kept verbatim"),
                    ));
                    Entry::new(
                        format!("conversation-{i}"),
                        None,
                        EntryKind::Unknown {
                            record_type: Some("message".into()),
                            raw: m.clone(),
                        },
                    )
                }
            };
            e.parent_id = parent.take();
            e.line = Some(i as u64 + 1);
            parent = Some(e.id.clone());
            session.push(e);
        }
    }
    // Whatever does not come back the same stays verbatim in `extra`.
    let (back, _) = encode(&session);
    let mut extra = Extra::new();
    for (k, v) in obj {
        if back.get(k) != Some(v) {
            extra.insert(k.clone(), v.clone());
        }
    }
    session.meta.extra = extra;
    session
}

fn decode_config(v: &Value) -> Option<ModelConfig> {
    let mut m = v.as_object()?.clone();
    let mut cfg = ModelConfig::default();
    let take_str = |m: &mut Map<String, Value>, k: &str| match m.get(k) {
        Some(Value::String(s)) => {
            let s = s.clone();
            m.shift_remove(k);
            Some(s)
        }
        _ => None,
    };
    cfg.provider = take_str(&mut m, "provider");
    cfg.model = take_str(&mut m, "model");
    if let Some(t) = m.get("temperature").and_then(Value::as_f64) {
        cfg.temperature = Some(t);
        m.shift_remove("temperature");
    }
    if let Some(t) = m.get("max_tokens").and_then(Value::as_u64) {
        cfg.max_tokens = Some(t);
        m.shift_remove("max_tokens");
    }
    cfg.extra = m;
    Some(cfg)
}

fn decode_todo(v: &Value) -> Option<Todo> {
    let mut m = v.as_object()?.clone();
    let content = text(m.get("content"))?;
    let status = text(m.get("status"))?;
    let active_form = match m.get("active_form") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return None,
    };
    for k in ["content", "status", "active_form"] {
        m.shift_remove(k);
    }
    Some(Todo {
        content,
        status,
        active_form,
        extra: m,
    })
}

fn decode_message(v: &Value) -> Option<Entry> {
    let mut m = v.as_object()?.clone();
    let id = text(m.get("id"))?;
    let role = text(m.get("role"))?;
    let content = text(m.get("content"))?;
    let timestamp = match m.get("timestamp") {
        None => None,
        Some(Value::String(s)) => Some(Timestamp::Text(s.clone())),
        Some(_) => return None,
    };
    for k in ["id", "role", "content", "timestamp"] {
        m.shift_remove(k);
    }
    let mut msg = Message::text(Role::parse(&role), content);
    msg.content_is_text = true;
    msg.extra = m;
    let mut e = Entry::new(id, None, EntryKind::Message(msg));
    e.timestamp = timestamp;
    Some(e)
}

fn ts_text(t: &Timestamp) -> String {
    match t {
        Timestamp::Text(s) => s.clone(),
        Timestamp::Millis(_) => t.to_rfc3339(),
    }
}

/// Returns the document for `session` and what it could not hold.
pub fn encode(session: &Session) -> (Value, Fidelity) {
    let mut fid = Fidelity::new("jido");
    let meta = &session.meta;
    let native = meta.format.as_deref() == Some("jido");
    let s = |v: &str| Value::String(v.to_string());
    let mut known = Map::new();
    match (&meta.format_version, native) {
        (Some(v), true) => {
            known.insert("version".into(), v.clone());
        }
        (None, true) => {}
        (_, false) => {
            known.insert("version".into(), Value::from(schema::CURRENT_VERSION));
        }
    }
    known.insert("id".into(), s(&meta.id));
    let name = meta.title.clone().or_else(|| {
        (!native).then(|| {
            meta.cwd
                .as_deref()
                .and_then(|c| Path::new(c).file_name())
                .map_or_else(|| meta.id.clone(), |n| n.to_string_lossy().into_owned())
        })
    });
    if let Some(n) = name {
        known.insert("name".into(), s(&n));
    }
    match &meta.cwd {
        Some(c) => {
            known.insert("project_path".into(), s(c));
        }
        None if !native => {
            fid.lost("project path (the source has none; written empty)", None);
            known.insert("project_path".into(), s(""));
        }
        None => {}
    }
    if !meta.model.is_empty() || !native {
        known.insert("config".into(), encode_config(&meta.model));
    }
    let first = session.entries.iter().find_map(|e| e.timestamp.clone());
    let last = session
        .entries
        .iter()
        .rev()
        .find_map(|e| e.timestamp.clone());
    let fill = |t: &Option<Timestamp>, fallback: Option<&Timestamp>| {
        t.as_ref()
            .or(if native { None } else { fallback })
            .map(ts_text)
    };
    let created = fill(&meta.created_at, first.as_ref());
    let updated = fill(&meta.updated_at, last.as_ref().or(meta.created_at.as_ref()));
    let closed = fill(&meta.closed_at, meta.updated_at.as_ref().or(last.as_ref()));
    for (k, v) in [
        ("created_at", created),
        ("updated_at", updated),
        ("closed_at", closed),
    ] {
        if let Some(v) = v {
            known.insert(k.into(), s(&v));
        }
    }
    let conversation = encode_conversation(session, native, &mut fid);
    if !conversation.is_empty() || !native {
        known.insert("conversation".into(), Value::Array(conversation));
    }
    if !meta.todos.is_empty() || !native {
        known.insert(
            "todos".into(),
            Value::Array(meta.todos.iter().map(|t| encode_todo(t, native)).collect()),
        );
    }
    if !native {
        report_foreign_meta(meta, &mut fid);
    }
    let empty = Extra::new();
    let extra = if native { &meta.extra } else { &empty };
    let mut out = Map::new();
    for k in ORDER {
        if let Some(v) = extra.get(k).cloned().or_else(|| known.get(k).cloned()) {
            out.insert(k.into(), v);
        }
    }
    for (k, v) in extra {
        if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
    (Value::Object(out), fid)
}

fn encode_config(m: &ModelConfig) -> Value {
    let mut o = Map::new();
    if let Some(p) = &m.provider {
        o.insert("provider".into(), Value::String(p.clone()));
    }
    if let Some(p) = &m.model {
        o.insert("model".into(), Value::String(p.clone()));
    }
    if let Some(t) = m.temperature {
        o.insert(
            "temperature".into(),
            serde_json::Number::from_f64(t).map_or(Value::Null, Value::Number),
        );
    }
    if let Some(t) = m.max_tokens {
        o.insert("max_tokens".into(), Value::from(t));
    }
    for (k, v) in &m.extra {
        o.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Value::Object(o)
}

fn encode_todo(t: &Todo, native: bool) -> Value {
    let mut o = Map::new();
    o.insert("content".into(), Value::String(t.content.clone()));
    o.insert("status".into(), Value::String(t.status.clone()));
    if let Some(a) = &t.active_form {
        o.insert("active_form".into(), Value::String(a.clone()));
    }
    if native {
        for (k, v) in &t.extra {
            o.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    Value::Object(o)
}

fn encode_conversation(session: &Session, native: bool, fid: &mut Fidelity) -> Vec<Value> {
    // One chain: no entry with two children and a single root.
    let tree = session.tree();
    let linear = tree.branch_points().is_empty() && tree.roots().len() <= 1;
    let entries: Vec<&Entry> = if linear {
        session.entries.iter().collect()
    } else {
        let branch = session.active_branch();
        let off = session.entries.len().saturating_sub(branch.len());
        for _ in 0..off {
            fid.lost("entries off the active branch", None);
        }
        branch
    };
    let mut out = Vec::new();
    for e in entries {
        // The messages agentlog reads out of a codelia run log's records:
        // the run's input and final answer below are its turns for jido.
        if e.extra.contains_key(crate::codelia::DERIVED_FROM) {
            continue;
        }
        match &e.kind {
            EntryKind::Message(m) => {
                if let Some(v) = encode_message(e, m, native, fid) {
                    out.push(v);
                }
            }
            EntryKind::Unknown {
                record_type: Some(t),
                raw,
            } if native && t == "message" => out.push(raw.clone()),
            // A run's input and final answer are its user and assistant
            // turns (codelia run logs hold no messages otherwise).
            EntryKind::RunStart { input, .. }
                if !native && input.get("text").is_some_and(Value::is_string) =>
            {
                fid.lost(
                    "run_start entries (only the input text kept, as a user message)",
                    Some(&e.id),
                );
                let text = input
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let m = Message::text(Role::User, text);
                out.extend(encode_message(&turn_of(e), &m, native, fid));
            }
            EntryKind::RunEnd {
                final_text: Some(text),
                ..
            } if !native => {
                fid.lost(
                    "run_end entries (only the final answer kept, as an assistant message)",
                    Some(&e.id),
                );
                let m = Message::text(Role::Assistant, text.clone());
                out.extend(encode_message(&turn_of(e), &m, native, fid));
            }
            other => fid.lost(format!("{} entries", other.name()), Some(&e.id)),
        }
    }
    out
}

/// Returns an entry with only the id and time of `e`, for a message made
/// from a run record.
fn turn_of(e: &Entry) -> Entry {
    let mut t = Entry::new(e.id.clone(), None, EntryKind::Resume);
    t.timestamp = e.timestamp.clone();
    t
}

fn encode_message(e: &Entry, m: &Message, native: bool, fid: &mut Fidelity) -> Option<Value> {
    let role = match &m.role {
        Role::User | Role::Assistant | Role::System | Role::Tool => m.role.as_str().to_string(),
        Role::Developer => {
            fid.lost("developer role (written as system)", Some(&e.id));
            "system".to_string()
        }
        Role::Custom(r) if native => r.clone(),
        Role::Custom(r) => {
            fid.lost(format!("messages with role {r}"), Some(&e.id));
            return None;
        }
    };
    let mut parts: Vec<String> = Vec::new();
    for b in &m.content {
        match &b.kind {
            BlockKind::Text { text } => parts.push(text.clone()),
            BlockKind::ToolResult { .. } if m.role == Role::Tool => {
                parts.extend(b.plain_text());
            }
            BlockKind::Thinking { .. } => fid.lost("thinking", Some(&e.id)),
            BlockKind::ToolCall { .. } => fid.lost("tool calls", Some(&e.id)),
            BlockKind::ToolResult { .. } => fid.lost("tool results", Some(&e.id)),
            BlockKind::Image { .. } => fid.lost("images", Some(&e.id)),
            BlockKind::Other { .. } => fid.lost("content blocks of other kinds", Some(&e.id)),
        }
        if !native && !b.extra.is_empty() {
            fid.lost("native fields of content blocks", Some(&e.id));
        }
    }
    if parts.len() > 1 {
        fid.lost(
            "block structure (text blocks joined into one string)",
            Some(&e.id),
        );
    }
    let mut o = Map::new();
    o.insert("id".into(), Value::String(e.id.clone()));
    o.insert("role".into(), Value::String(role));
    o.insert("content".into(), Value::String(parts.join("\n\n")));
    match e.timestamp.as_ref().or(m.timestamp.as_ref()) {
        Some(t) => {
            o.insert("timestamp".into(), Value::String(ts_text(t)));
        }
        None if !native => fid.lost("message timestamps (the source has none)", Some(&e.id)),
        None => {}
    }
    if native {
        for (k, v) in &m.extra {
            o.entry(k.clone()).or_insert_with(|| v.clone());
        }
    } else {
        if m.usage.is_some() {
            fid.lost("token usage", Some(&e.id));
        }
        if !m.extra.is_empty() || !e.extra.is_empty() {
            fid.lost("native fields of messages", Some(&e.id));
        }
    }
    Some(Value::Object(o))
}

fn report_foreign_meta(meta: &SessionMeta, fid: &mut Fidelity) {
    if meta.model.thinking_level.is_some() {
        fid.lost("thinking level", None);
    }
    if meta.parent_session.is_some() {
        fid.lost("parent session", None);
    }
    if meta.agent_version.is_some() {
        fid.lost("agent version", None);
    }
    if !meta.extra.is_empty() || !meta.model.extra.is_empty() {
        fid.lost("native session fields of the source format", None);
    }
}
