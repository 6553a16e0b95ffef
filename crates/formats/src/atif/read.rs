//! Reads an ATIF trajectory into a session: one message entry per step
//! (`user`, `system` or the agent's answer with its reasoning, tool calls,
//! model and tokens), and after an agent's step, an entry holding its
//! observation's results. What the model has no place for is kept: the
//! step's other fields in the entry's extra fields, a tool call's and a
//! result's in the block's, the root's (final metrics, notes, embedded
//! subagent trajectories, …) in the session's, the `metrics` object whole
//! beside the usage read from it, so the writer gives the same document
//! back. A step the reader cannot map (an unknown source, a message of
//! another shape) is kept verbatim as an unknown record.

use super::wire;
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{
    Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta, Timestamp,
};
use serde_json::{Map, Value};
use std::path::Path;

/// The session extra field that says the trajectory had no `session_id`
/// (its id was taken from the trajectory id or the folder).
pub(super) const NO_SESSION_ID: &str = "atif_no_session_id";
/// The session extra field holding the `agent` object's fields but
/// `version` and `model_name`.
pub(super) const AGENT: &str = "agent";
/// The block or message extra field that says how the native content was
/// written when it is not what the writer writes by default: `list` (a
/// list of text parts), `absent`, `null`.
pub(super) const CONTENT_FORM: &str = "atif_content";

/// Reads the trajectory whose file `path` holds `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let doc: Value = serde_json::from_slice(bytes)
        .map_err(|e| FormatError::invalid(path, Some(e.line() as u64), format!("not JSON: {e}")))?;
    let Value::Object(mut doc) = doc else {
        return Err(FormatError::invalid(path, Some(1), "not a JSON object"));
    };
    let Some(Value::Array(steps)) = doc.remove("steps") else {
        return Err(FormatError::invalid(
            path,
            None,
            "no `steps` array: not an ATIF trajectory",
        ));
    };
    let mut diagnostics = Vec::new();
    let session_id = match doc.remove("session_id") {
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            doc.insert("session_id".into(), other);
            None
        }
        None => None,
    };
    let mut meta = SessionMeta::new(
        session_id
            .clone()
            .unwrap_or_else(|| fallback_id(&doc, path)),
        crate::Format::agent(&super::FORMAT),
    );
    if session_id.is_none() {
        meta.extra.insert(NO_SESSION_ID.into(), Value::Bool(true));
    }
    meta.format = Some(super::FORMAT_NAME.into());
    meta.format_version = doc.remove("schema_version");
    match meta.format_version.as_ref().and_then(Value::as_str) {
        Some(v) if wire::VERSIONS.contains(&v) => {}
        Some(v) => diagnostics.push(Diagnostic::warning(
            path,
            None,
            "unknown-version",
            format!(
                "schema_version {v:?} is not one this reader knows (the newest is {})",
                wire::SCHEMA_VERSION
            ),
        )),
        None => diagnostics.push(Diagnostic::warning(
            path,
            None,
            "no-version",
            "no schema_version: read as ATIF",
        )),
    }
    match doc.remove("agent") {
        Some(Value::Object(mut agent)) => {
            if let Some(Value::String(v)) = agent.remove("version") {
                meta.agent_version = Some(v);
            } else if agent.get("version").is_none() {
                diagnostics.push(Diagnostic::error(
                    path,
                    None,
                    "no-agent-version",
                    "the agent object has no version",
                ));
            }
            if let Some(Value::String(m)) = agent.remove("model_name") {
                meta.model.model = Some(m);
            }
            if !agent.get("name").is_some_and(Value::is_string) {
                diagnostics.push(Diagnostic::error(
                    path,
                    None,
                    "no-agent-name",
                    "the agent object has no name",
                ));
            }
            meta.extra.insert(AGENT.into(), Value::Object(agent));
        }
        Some(other) => {
            diagnostics.push(Diagnostic::error(
                path,
                None,
                "bad-agent",
                "`agent` is not an object",
            ));
            doc.insert("agent".into(), other);
        }
        None => diagnostics.push(Diagnostic::error(
            path,
            None,
            "no-agent",
            "no `agent` object",
        )),
    }
    // The root's other fields (notes, final metrics, embedded subagent
    // trajectories, extra, …) as they are.
    for (k, v) in doc {
        meta.extra.insert(k, v);
    }
    let mut session = Session::new(meta);
    let mut parent: Option<String> = None;
    for (i, step) in steps.into_iter().enumerate() {
        let n = i as u64 + 1;
        for mut e in step_entries(path, n, step, &mut diagnostics) {
            e.parent_id = parent.clone();
            e.line = Some(n);
            parent = Some(e.id.clone());
            session.push(e);
        }
    }
    if session.entries.is_empty() {
        diagnostics.push(Diagnostic::error(
            path,
            None,
            "no-steps",
            "the trajectory has no steps",
        ));
    }
    Ok(Read {
        session,
        diagnostics,
    })
}

/// The id of a trajectory without a `session_id`: its trajectory id, else
/// the trial folder it sits in (`<trial>/agent/trajectory.json`), else the
/// file's name.
fn fallback_id(doc: &Map<String, Value>, path: &Path) -> String {
    if let Some(t) = doc.get("trajectory_id").and_then(Value::as_str) {
        return t.to_string();
    }
    let dir = path.parent();
    let trial = dir
        .filter(|d| {
            d.file_name()
                .is_some_and(|n| n == "agent" || n == "user-agent")
        })
        .and_then(Path::parent)
        .and_then(Path::file_name);
    trial
        .or_else(|| path.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The entries of step `n`: its message, and its observation's results
/// after it.
fn step_entries(path: &Path, n: u64, step: Value, diagnostics: &mut Vec<Diagnostic>) -> Vec<Entry> {
    let id = format!("step-{n}");
    let verbatim = |step: Value, why: &str, diagnostics: &mut Vec<Diagnostic>| {
        diagnostics.push(Diagnostic::warning(
            path,
            Some(n),
            "unmapped-step",
            format!("step {n}: {why}; kept as it is"),
        ));
        vec![Entry::new(
            id.clone(),
            None,
            EntryKind::Unknown {
                record_type: Some("step".into()),
                raw: step,
            },
        )]
    };
    let Value::Object(mut s) = step else {
        return verbatim(step, "not an object", diagnostics);
    };
    let role = match s.get("source").and_then(Value::as_str) {
        Some("user") => Role::User,
        Some("system") => Role::System,
        Some("agent") => Role::Assistant,
        Some(other) => {
            let why = format!("unknown source {other:?}");
            return verbatim(Value::Object(s), &why, diagnostics);
        }
        None => return verbatim(Value::Object(s), "no source", diagnostics),
    };
    let Some(content) = s.get("message").and_then(parts) else {
        return verbatim(
            Value::Object(s),
            "a message that is neither text nor content parts",
            diagnostics,
        );
    };
    match s.get("step_id").and_then(Value::as_u64) {
        Some(k) if k == n => {
            s.remove("step_id");
        }
        _ => diagnostics.push(Diagnostic::error(
            path,
            Some(n),
            "step-id",
            format!("step {n} does not have step_id {n} (step ids count from 1)"),
        )),
    }
    s.remove("source");
    let mut m = Message::new(role.clone());
    let message = s.remove("message").unwrap_or_default();
    m.content_is_text = message.is_string();
    if message.is_array()
        && content
            .iter()
            .all(|b| matches!(b.kind, BlockKind::Text { .. }))
    {
        m.extra.insert(CONTENT_FORM.into(), "list".into());
    }
    if let Some(Value::String(r)) = s.get("reasoning_content") {
        m.content.push(Block::thinking(r.clone(), None));
        s.remove("reasoning_content");
    }
    m.content.extend(content);
    if let Some(Value::String(model)) = s.get("model_name") {
        m.model = Some(model.clone());
        s.remove("model_name");
    }
    if let Some(calls) = s.get("tool_calls").and_then(tool_calls) {
        m.content.extend(calls);
        s.remove("tool_calls");
    }
    if let Some(Value::Object(metrics)) = s.get("metrics") {
        let mut usage = wire::usage_of(metrics);
        usage
            .extra
            .insert(wire::KEPT_METRICS.into(), Value::Object(metrics.clone()));
        m.usage = Some(usage);
        s.remove("metrics");
    }
    let observation = s.get("observation").and_then(observation);
    if observation.is_some() {
        s.remove("observation");
    }
    let mut e = Entry::new(id.clone(), None, EntryKind::Message(m));
    if let Some(Value::String(t)) = s.get("timestamp") {
        e.timestamp = Some(Timestamp::Text(t.clone()));
        s.remove("timestamp");
    }
    for (k, v) in s {
        if !wire::STEP_FIELDS.contains(&k.as_str()) {
            diagnostics.push(Diagnostic::warning(
                path,
                Some(n),
                "unknown-field",
                format!("step {n}: field {k:?} is not part of ATIF"),
            ));
        }
        e.extra.insert(k, v);
    }
    let mut out = vec![e];
    if let Some(results) = observation {
        let mut m = Message::new(Role::Tool);
        m.content = results;
        out.push(Entry::new(
            format!("{id}-observation"),
            None,
            EntryKind::Message(m),
        ));
    }
    out
}

/// The blocks of a message or a result's content: a string is one text
/// block (none when empty); a list of content parts, a block each (text,
/// an image by its path, anything else as it is). `None` for another
/// shape.
fn parts(v: &Value) -> Option<Vec<Block>> {
    match v {
        Value::String(s) if s.is_empty() => Some(Vec::new()),
        Value::String(s) => Some(vec![Block::text(s.clone())]),
        Value::Array(items) => Some(items.iter().map(part).collect()),
        _ => None,
    }
}

/// One content part as a block.
fn part(p: &Value) -> Block {
    let other = || Block {
        kind: BlockKind::Other { value: p.clone() },
        extra: Extra::new(),
    };
    let Some(o) = p.as_object() else {
        return other();
    };
    match (o.get("type").and_then(Value::as_str), o.len()) {
        (Some("text"), 2) => match o.get("text") {
            Some(Value::String(t)) => Block::text(t.clone()),
            _ => other(),
        },
        (Some("image"), 2) => {
            let src = o.get("source").and_then(Value::as_object);
            match src.map(|s| (s.len(), s.get("media_type"), s.get("path"))) {
                Some((2, Some(Value::String(mt)), Some(Value::String(p)))) => Block {
                    kind: BlockKind::Image {
                        media_type: Some(mt.clone()),
                        data: None,
                        url: Some(p.clone()),
                    },
                    extra: Extra::new(),
                },
                _ => other(),
            }
        }
        _ => other(),
    }
}

/// The tool calls of a step, when every one has an id, a function name and
/// arguments.
fn tool_calls(v: &Value) -> Option<Vec<Block>> {
    let mut out = Vec::new();
    for c in v.as_array()? {
        let mut c = c.as_object()?.clone();
        let Some(Value::String(id)) = c.remove("tool_call_id") else {
            return None;
        };
        let Some(Value::String(name)) = c.remove("function_name") else {
            return None;
        };
        let input = c.remove("arguments")?;
        let mut b = Block::tool_call(Some(id), name, input);
        b.extra = c.into_iter().collect();
        out.push(b);
    }
    Some(out)
}

/// The results of an observation, when it is `{results: [objects]}`.
fn observation(v: &Value) -> Option<Vec<Block>> {
    let o = v.as_object()?;
    if o.len() != 1 {
        return None;
    }
    let mut out = Vec::new();
    for r in o.get("results")?.as_array()? {
        let mut r = r.as_object()?.clone();
        let call = match r.remove("source_call_id") {
            Some(Value::String(c)) => Some(c),
            None => None,
            Some(other) => {
                r.insert("source_call_id".into(), other);
                None
            }
        };
        let (content, form) = match r.remove("content") {
            None => (Vec::new(), Some("absent")),
            Some(Value::Null) => (Vec::new(), Some("null")),
            Some(c) => match parts(&c) {
                Some(blocks) => {
                    let text_list = c.is_array()
                        && blocks
                            .iter()
                            .all(|b| matches!(b.kind, BlockKind::Text { .. }));
                    (blocks, text_list.then_some("list"))
                }
                None => {
                    r.insert("content".into(), c);
                    (Vec::new(), Some("absent"))
                }
            },
        };
        let mut b = Block::tool_result(call, content, false);
        b.extra = r.into_iter().collect();
        if let Some(f) = form {
            b.extra.insert(CONTENT_FORM.into(), f.into());
        }
        out.push(b);
    }
    Some(out)
}
