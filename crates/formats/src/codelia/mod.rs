//! codelia's run log (`sessions/YYYY/MM/DD/<run_id>.jsonl`) and resume
//! state snapshot (`sessions/state/<session_id>.json`).
//!
//! A run log is one JSON object per line: a `header` (schema version, run
//! and session ids, start time, client/server, model, prompts, tools,
//! runtime), then `run.start`, `run.context`, `agent.event`, `tool.output`,
//! `llm.request`, `llm.response`, `run.status`, `run.error` and `run.end`
//! records, each with a `ts`. One file holds one run, so one file is one
//! model [`Session`] whose id is the `run_id` (the codelia `session_id`,
//! shared by the runs of a conversation, stays in the metadata's `extra`).
//!
//! Records map to the model's run kinds: `run.start` -> `RunStart`,
//! `run.status` -> `RunStatus`, `run.context` -> `RunContext`, `run.error`
//! -> `RunError`, `run.end` -> `RunEnd`, `llm.request` -> `LlmRequest`,
//! `llm.response` -> `LlmResponse`, `tool.output` -> `ToolOutput`, and
//! `agent.event` -> `Event` (source `agent`). Entry ids are `l<line>`, each
//! the child of the one before. Fields the model has no slot for stay in
//! `extra`, and a record that would not map back to the same JSON value, a
//! record of an unknown type and a namespaced `x.<org>.*` record are kept
//! verbatim as `Unknown` entries, so reading then writing a file gives the
//! same JSON values line by line. Unknown `run.status` and `run.end`
//! values are kept as they are; an unknown `schema_version` is read in
//! best-effort mode with a warning; a log without `run.end` (a crash, or a
//! run still going) is read with an info diagnostic.
//!
//! Writing another format's session as a run log: entries codelia has no
//! record for (messages, compactions, labels, …) are written as
//! `x.agentlog.entry` records holding the model's entry, which agentlog
//! reads back and codelia itself skips (the spec tells readers to ignore
//! unknown types); the fidelity report names them.
//!
//! Differences from the real system (kousw/codelia): the seed describes the
//! resume state as `sessions/state/<session_id>.json`, which is what this
//! module reads and writes; codelia since moved it to a SQLite index
//! (`sessions/state.db`) plus `sessions/messages/<session_id>.jsonl` and
//! only reads the JSON files as a legacy layout. The real writer also adds
//! header fields the seed does not list (`model.source`, `tools.source`,
//! `meta.runtime_environment`); they are kept like any unknown field.

mod header;
mod message;
mod record;
mod state;

pub use header::SCHEMA_VERSION;
pub use record::{outcome_str, ENTRY_RECORD, RECORD_TYPES, STATUSES};
pub use state::{is_state, LAYOUT_KEY, LAYOUT_STATE};

use crate::env::{walk_files, DiscoverEnv};
use crate::jsonl;
use crate::{Diagnostic, Fidelity, Format, FormatError, Read};
use agentlog_model::{Agent, Entry, EntryKind, Session, SessionMeta, Timestamp};
use record::Decoded;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The codelia format.
pub struct CodeliaFormat;

/// The registry entry.
pub static FORMAT: CodeliaFormat = CodeliaFormat;

impl Format for CodeliaFormat {
    fn name(&self) -> &'static str {
        "codelia"
    }

    fn description(&self) -> &'static str {
        "codelia run log (JSONL) and resume state"
    }

    fn agent(&self) -> Agent {
        Agent::Codelia
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext == "json" {
            let text = jsonl::head_text(head, 4096);
            let looks = text.contains("\"session_id\"")
                && text.contains("\"messages\"")
                && text.contains("\"schema_version\"");
            if looks && serde_json::from_slice::<Value>(head).map_or(true, |v| is_state(&v)) {
                return 85;
            }
            return 0;
        }
        let Some(first) = jsonl::first_value(head) else {
            return 0;
        };
        let ty = jsonl::str_field(&first, "type").unwrap_or("");
        let has = |k: &str| first.get(k).is_some();
        if ty == "header" && has("run_id") && has("schema_version") && has("started_at") {
            95
        } else if RECORD_TYPES.contains(&ty) && ty != "header" && has("run_id") && has("ts") {
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
        roots.iter().flat_map(|r| run_files(r)).collect()
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        let json_ext = path.extension().is_some_and(|e| e == "json");
        if json_ext || jsonl::first_value(bytes).is_none() {
            if let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(bytes) {
                if !obj.contains_key("type") {
                    let mut diagnostics = Vec::new();
                    let session = state::decode(path, &obj, &mut diagnostics);
                    return Ok(Read {
                        session,
                        diagnostics,
                    });
                }
            }
        }
        read_log(path, bytes)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        if session.meta.extra.get(LAYOUT_KEY).and_then(Value::as_str) == Some(LAYOUT_STATE) {
            let (value, fid) = state::encode(session);
            let mut buf = serde_json::to_vec_pretty(&value)
                .map_err(|e| FormatError::write("codelia state", std::io::Error::from(e)))?;
            buf.push(b'\n');
            out.write_all(&buf)
                .map_err(|e| FormatError::write("codelia state", e))?;
            return Ok(fid);
        }
        let (lines, fid) = encode_log(session);
        for line in lines {
            let mut buf = serde_json::to_vec(&line)
                .map_err(|e| FormatError::write("codelia record", std::io::Error::from(e)))?;
            buf.push(b'\n');
            out.write_all(&buf)
                .map_err(|e| FormatError::write("codelia record", e))?;
        }
        Ok(fid)
    }
}

/// Returns codelia's sessions directory under `env`: `~/.codelia/sessions`,
/// or `$XDG_STATE_HOME/codelia/sessions` (default `~/.local/state`) when
/// `CODELIA_LAYOUT=xdg`.
pub fn sessions_dir(env: &DiscoverEnv) -> PathBuf {
    if env.var("CODELIA_LAYOUT") == Some("xdg") {
        let state = env
            .var_path("XDG_STATE_HOME")
            .unwrap_or_else(|| env.home_join(".local/state"));
        state.join("codelia").join("sessions")
    } else {
        env.home_join(".codelia").join("sessions")
    }
}

/// Returns the run logs under a sessions directory: `YYYY/MM/DD/*.jsonl`
/// with numeric date directories.
pub fn run_files(sessions: &Path) -> Vec<PathBuf> {
    let digits = |s: &std::ffi::OsStr, n: usize| {
        let s = s.to_string_lossy();
        s.len() == n && s.bytes().all(|b| b.is_ascii_digit())
    };
    walk_files(sessions, 3, &|p: &Path| {
        let comps: Vec<&std::ffi::OsStr> = p
            .strip_prefix(sessions)
            .map(|r| r.iter().collect())
            .unwrap_or_default();
        comps.len() == 4
            && digits(comps[0], 4)
            && digits(comps[1], 2)
            && digits(comps[2], 2)
            && p.extension().is_some_and(|e| e == "jsonl")
    })
}

fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read_log(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let mut diags = Vec::new();
    let values = jsonl::parse_values(path, bytes, &mut diags);
    let mut records = values.into_iter().peekable();
    let meta = match records.peek() {
        Some((line, Value::Object(h)))
            if h.get("type").and_then(Value::as_str) == Some("header") =>
        {
            let meta = header::decode(h, &file_stem(path));
            check_version(path, *line, &meta, &mut diags);
            records.next();
            meta
        }
        Some((line, first)) => {
            diags.push(Diagnostic::warning(
                path,
                Some(*line),
                "missing-header",
                "the first record is not a header; session metadata is incomplete",
            ));
            let id =
                jsonl::str_field(first, "run_id").map_or_else(|| file_stem(path), str::to_string);
            let mut meta = SessionMeta::new(id, Agent::Codelia);
            meta.format = Some("codelia".into());
            meta
        }
        None => {
            return Err(FormatError::invalid(
                path,
                None,
                "no codelia record in the file",
            ));
        }
    };
    let mut session = Session::new(meta);
    let mut check = OrderCheck::default();
    let mut prev: Option<String> = None;
    for (line, value) in records {
        let entry = read_record(path, line, value, &mut prev, &mut diags);
        check.see(path, &entry, &mut diags);
        let derived = conversation_of(&entry);
        session.push(entry);
        for (i, m) in derived.into_iter().enumerate() {
            let Some(from) = prev.clone() else { break };
            let mut e = Entry::new(
                format!("{from}.m{i}"),
                Some(from.clone()),
                EntryKind::Message(m),
            );
            e.extra.insert(DERIVED_FROM.into(), Value::String(from));
            prev = Some(e.id.clone());
            session.push(e);
        }
    }
    if !check.ended {
        diags.push(Diagnostic::info(
            path,
            None,
            "no-run-end",
            "the run has no run.end record (it crashed or is still running)",
        ));
    }
    if session.meta.title.is_none() {
        session.meta.title = session.entries.iter().find_map(|e| match &e.kind {
            EntryKind::RunStart { input, .. } => {
                input.get("text").and_then(Value::as_str).map(title_of)
            }
            _ => None,
        });
    }
    Ok(Read {
        session,
        diagnostics: diags,
    })
}

/// Key in `Entry::extra` of a message read out of a run-log record (the
/// prompt of `run.start`, the model's messages of `llm.response`, the result
/// of `tool.output`); its value is the record's entry id. Writing a run log
/// skips these entries: the records themselves are written.
pub const DERIVED_FROM: &str = agentlog_model::DERIVED_FROM;

/// The conversation a record holds, as model messages: the user prompt of
/// `run.start`, the assistant messages (text and tool calls) of
/// `llm.response`, the tool result of `tool.output`.
fn conversation_of(e: &Entry) -> Vec<agentlog_model::Message> {
    use agentlog_model::{Block, Message, Role};
    match &e.kind {
        EntryKind::RunStart { input, .. } => input
            .get("text")
            .and_then(Value::as_str)
            .map(|t| {
                let mut m = Message::text(Role::User, t);
                m.content_is_text = true;
                vec![m]
            })
            .unwrap_or_default(),
        EntryKind::LlmResponse { output, usage, .. } => {
            let mut out: Vec<Message> = output
                .get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|v| v.get("role").and_then(Value::as_str) == Some("assistant"))
                .filter_map(message::decode)
                .filter(|m| !m.content.is_empty())
                .collect();
            if let Some(last) = out.last_mut() {
                last.usage = usage.clone();
            }
            out
        }
        EntryKind::ToolOutput {
            tool,
            tool_call_id,
            output,
            is_error,
        } => {
            let mut m = Message::new(Role::Tool);
            m.content.push(Block::tool_result(
                Some(tool_call_id.clone()),
                vec![Block::text(output.clone())],
                is_error.unwrap_or(false),
            ));
            m.tool_call_id = Some(tool_call_id.clone());
            m.tool_name = Some(tool.clone());
            m.is_error = *is_error;
            vec![m]
        }
        _ => Vec::new(),
    }
}

fn title_of(text: &str) -> String {
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    first.chars().take(120).collect()
}

fn check_version(path: &Path, line: u64, meta: &SessionMeta, diags: &mut Vec<Diagnostic>) {
    if meta.format_version.as_ref().and_then(Value::as_u64) != Some(SCHEMA_VERSION) {
        let v = meta.format_version.clone().unwrap_or(Value::Null);
        diags.push(Diagnostic::warning(
            path,
            Some(line),
            "unsupported-schema-version",
            format!("schema_version {v} is not {SCHEMA_VERSION}; read in best-effort mode (fields not understood are kept verbatim)"),
        ));
    }
}

fn read_record(
    path: &Path,
    line: u64,
    value: Value,
    prev: &mut Option<String>,
    diags: &mut Vec<Diagnostic>,
) -> Entry {
    let parent = prev.clone();
    let ty = jsonl::str_field(&value, "type").map(str::to_string);
    let decoded = match &value {
        Value::Object(m) => record::decode(m),
        _ => None,
    };
    let mut entry = match decoded {
        Some(Decoded::Entry(e)) => e,
        Some(Decoded::Record {
            kind,
            timestamp,
            extra,
        }) => {
            let mut e = Entry::new(format!("l{line}"), parent, kind);
            e.timestamp = timestamp;
            e.extra = extra;
            e
        }
        None => {
            let (code, msg) = match ty.as_deref() {
                None => (
                    "no-type",
                    "record has no string \"type\"; kept verbatim".to_string(),
                ),
                Some("header") => (
                    "misplaced-header",
                    "a header after the first record; kept verbatim".to_string(),
                ),
                Some(t) if t.starts_with("x.") => (
                    "extension-record",
                    format!("namespaced record {t:?} kept verbatim"),
                ),
                Some(t) if RECORD_TYPES.contains(&t) => (
                    "unmapped-record",
                    format!("{t} record has fields of unexpected types; kept verbatim"),
                ),
                Some(t) => (
                    "unknown-type",
                    format!("unknown record type {t:?}; kept verbatim"),
                ),
            };
            let d = if code == "extension-record" || code == "unknown-type" {
                Diagnostic::info(path, Some(line), code, msg)
            } else {
                Diagnostic::warning(path, Some(line), code, msg)
            };
            diags.push(d);
            let mut e = Entry::new(
                format!("l{line}"),
                parent,
                EntryKind::Unknown {
                    record_type: ty,
                    raw: value.clone(),
                },
            );
            e.timestamp = value
                .get("ts")
                .and_then(Value::as_str)
                .map(|s| Timestamp::Text(s.to_string()));
            e
        }
    };
    entry.line = Some(line);
    *prev = Some(entry.id.clone());
    entry
}

/// Notes the ordering rules a reader can check: `agent.event` seq strictly
/// increasing, responses answering earlier requests, nothing after `run.end`.
#[derive(Default)]
struct OrderCheck {
    last_event_seq: Option<u64>,
    requests: HashSet<u64>,
    ended: bool,
}

impl OrderCheck {
    fn see(&mut self, path: &Path, e: &Entry, diags: &mut Vec<Diagnostic>) {
        let line = e.line;
        let mut warn =
            |msg: String| diags.push(Diagnostic::warning(path, line, "out-of-order", msg));
        if self.ended {
            warn(format!("{} record after run.end", e.kind_name()));
        }
        match &e.kind {
            EntryKind::Event {
                seq: Some(seq),
                source,
                ..
            } if source == "agent" => {
                if let Some(last) = self.last_event_seq.filter(|l| seq <= l) {
                    warn(format!("agent.event seq {seq} does not follow seq {last}"));
                }
                self.last_event_seq = Some(*seq);
            }
            EntryKind::LlmRequest { seq, .. } if !self.requests.insert(*seq) => {
                warn(format!("llm.request seq {seq} repeats an earlier request"));
            }
            EntryKind::LlmResponse { seq, .. } if !self.requests.contains(seq) => {
                warn(format!("llm.response seq {seq} has no earlier llm.request"));
            }
            EntryKind::RunStatus { status, .. } if !STATUSES.contains(&status.as_str()) => {
                diags.push(Diagnostic::info(
                    path,
                    line,
                    "unknown-value",
                    format!("run.status {status:?} is not a known status; kept"),
                ));
            }
            EntryKind::RunEnd { outcome, .. } => {
                if let agentlog_model::RunOutcome::Other(o) = outcome {
                    diags.push(Diagnostic::info(
                        path,
                        line,
                        "unknown-value",
                        format!("run.end outcome {o:?} is not a known outcome; kept"),
                    ));
                }
                self.ended = true;
            }
            _ => {}
        }
    }
}

/// Returns the run log lines for `session` and what they could not hold.
fn encode_log(session: &Session) -> (Vec<Map<String, Value>>, Fidelity) {
    let mut fid = Fidelity::new("codelia");
    let native = session.meta.format.as_deref() == Some("codelia");
    let mut meta = session.meta.clone();
    if !native {
        report_foreign_meta(&meta, &mut fid);
        if meta.created_at.is_none() {
            meta.created_at = Some(
                session
                    .entries
                    .iter()
                    .find_map(|e| e.timestamp.clone())
                    .unwrap_or_else(|| Timestamp::Text("1970-01-01T00:00:00.000Z".into())),
            );
        }
    }
    let head = header::encode(&meta, native);
    let run_id = head
        .get("run_id")
        .cloned()
        .unwrap_or(Value::String(meta.id.clone()));
    let mut lines = vec![head];
    let tree = session.tree();
    if !tree.branch_points().is_empty() || tree.roots().len() > 1 {
        fid.lost(
            "branches (a run log is linear; entries written in file order)",
            None,
        );
    }
    for e in &session.entries {
        if native && e.extra.contains_key(DERIVED_FROM) {
            // The conversation read out of a record: the record holds it.
            continue;
        }
        match record::encode(e, native) {
            Some(rec) => {
                if !native && !e.extra.is_empty() {
                    fid.lost(
                        format!("native fields of {} entries", e.kind_name()),
                        Some(&e.id),
                    );
                }
                lines.push(if native {
                    rec
                } else {
                    with_run_id(rec, &run_id)
                });
            }
            None => {
                fid.lost(
                    format!(
                        "{} entries (written as {ENTRY_RECORD} records, which codelia skips)",
                        e.kind_name()
                    ),
                    Some(&e.id),
                );
                lines.push(record::encode_entry_record(e));
            }
        }
    }
    (lines, fid)
}

/// Adds `run_id` after `type` to a record that lacks it.
fn with_run_id(rec: Map<String, Value>, run_id: &Value) -> Map<String, Value> {
    if rec.contains_key("run_id") {
        return rec;
    }
    let mut out = Map::new();
    for (k, v) in rec {
        let is_type = k == "type";
        out.insert(k, v);
        if is_type {
            out.insert("run_id".into(), run_id.clone());
        }
    }
    out
}

fn report_foreign_meta(meta: &SessionMeta, fid: &mut Fidelity) {
    if meta.title.is_some() {
        fid.lost("session title", None);
    }
    if meta.updated_at.is_some() || meta.closed_at.is_some() {
        fid.lost("session updated/closed times", None);
    }
    if meta.model.temperature.is_some()
        || meta.model.max_tokens.is_some()
        || !meta.model.extra.is_empty()
    {
        fid.lost(
            "model settings other than provider, model and reasoning",
            None,
        );
    }
    if meta.parent_session.is_some() {
        fid.lost("parent session", None);
    }
    if !meta.todos.is_empty() {
        fid.lost("todos", None);
    }
    if meta.agent_version.is_some() {
        fid.lost("agent version", None);
    }
    if !meta.extra.is_empty() {
        fid.lost("native session fields of the source format", None);
    }
}
