//! One run-log record (other than the header) and one model entry.
//!
//! Known record types map to the model's run kinds; fields the model has no
//! slot for stay in the entry's `extra`. A record is only mapped when
//! mapping it back gives the same JSON value, so a record of an unexpected
//! shape is kept verbatim as [`EntryKind::Unknown`] instead of being bent.

use super::header::ts_text;
use super::message::extend_missing;
use agentlog_model::{Entry, EntryKind, Extra, RunOutcome, Timestamp, Usage};
use serde_json::{Map, Number, Value};

/// The record types of schema version 1, header included.
pub const RECORD_TYPES: [&str; 10] = [
    "header",
    "run.start",
    "run.context",
    "agent.event",
    "tool.output",
    "llm.request",
    "llm.response",
    "run.status",
    "run.error",
    "run.end",
];

/// The extension record agentlog writes for entries codelia has no record
/// for; it holds the model's entry as JSON.
pub const ENTRY_RECORD: &str = "x.agentlog.entry";

/// `run.status` values the schema names.
pub const STATUSES: [&str; 5] = ["running", "awaiting_ui", "completed", "error", "cancelled"];

/// A decoded record: what it is, when, and the fields left over.
pub(crate) enum Decoded {
    /// A native record: its kind, time and leftover fields.
    Record {
        kind: EntryKind,
        timestamp: Option<Timestamp>,
        extra: Extra,
    },
    /// An `x.agentlog.entry` record: the whole entry, id and parent included.
    Entry(Entry),
}

/// Maps a record (not the header) to an entry kind; `None` when it does not
/// map exactly.
pub(crate) fn decode(rec: &Map<String, Value>) -> Option<Decoded> {
    let ty = rec.get("type")?.as_str()?;
    if ty == ENTRY_RECORD {
        return decode_entry_record(rec);
    }
    let mut r = rec.clone();
    r.shift_remove("type");
    let timestamp = match r.get("ts") {
        Some(Value::String(s)) => {
            let t = Timestamp::Text(s.clone());
            r.shift_remove("ts");
            Some(t)
        }
        _ => None,
    };
    let kind = match ty {
        "run.start" => EntryKind::RunStart {
            run_id: take_str(&mut r, "run_id")?,
            input: r.shift_remove("input")?,
        },
        "run.context" => EntryKind::RunContext {
            run_id: take_str(&mut r, "run_id")?,
            context_left_percent: r.shift_remove("context_left_percent")?.as_f64()?,
        },
        "agent.event" => {
            let seq = r.shift_remove("seq")?.as_u64()?;
            let payload = r.shift_remove("event")?;
            EntryKind::Event {
                source: "agent".into(),
                event_type: payload.get("type")?.as_str()?.to_string(),
                seq: Some(seq),
                payload,
            }
        }
        "tool.output" => EntryKind::ToolOutput {
            tool: take_str(&mut r, "tool")?,
            tool_call_id: take_str(&mut r, "tool_call_id")?,
            output: take_str(&mut r, "result_raw")?,
            is_error: match r.shift_remove("is_error") {
                None => None,
                Some(v) => Some(v.as_bool()?),
            },
        },
        "llm.request" => EntryKind::LlmRequest {
            seq: r.shift_remove("seq")?.as_u64()?,
            model: r.shift_remove("model"),
            input: r.shift_remove("input")?,
        },
        "llm.response" => {
            let seq = r.shift_remove("seq")?.as_u64()?;
            let output = r.shift_remove("output")?;
            let usage = output.get("usage").and_then(usage);
            EntryKind::LlmResponse { seq, output, usage }
        }
        "run.status" => EntryKind::RunStatus {
            run_id: take_str(&mut r, "run_id")?,
            status: take_str(&mut r, "status")?,
            message: opt_str(&mut r, "message")?,
        },
        "run.error" => {
            let run_id = take_str(&mut r, "run_id")?;
            let Value::Object(mut e) = r.shift_remove("error")? else {
                return None;
            };
            let kind = EntryKind::RunError {
                run_id,
                name: take_str(&mut e, "name")?,
                message: take_str(&mut e, "message")?,
                stack: opt_str(&mut e, "stack")?,
            };
            if !e.is_empty() {
                return None;
            }
            kind
        }
        "run.end" => EntryKind::RunEnd {
            run_id: take_str(&mut r, "run_id")?,
            outcome: outcome(&take_str(&mut r, "outcome")?),
            final_text: opt_str(&mut r, "final")?,
        },
        _ => return None,
    };
    let mut probe = Entry::new("", None, kind);
    probe.timestamp = timestamp;
    probe.extra = r;
    if encode(&probe, true).as_ref() != Some(rec) {
        return None;
    }
    Some(Decoded::Record {
        kind: probe.kind,
        timestamp: probe.timestamp,
        extra: probe.extra,
    })
}

fn decode_entry_record(rec: &Map<String, Value>) -> Option<Decoded> {
    let entry: Entry = serde_json::from_value(rec.get("entry")?.clone()).ok()?;
    (encode_entry_record(&entry) == *rec).then_some(Decoded::Entry(entry))
}

/// Returns the `x.agentlog.entry` record holding `entry`.
pub(crate) fn encode_entry_record(entry: &Entry) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("type".into(), Value::String(ENTRY_RECORD.into()));
    if let Some(ts) = &entry.timestamp {
        out.insert("ts".into(), Value::String(ts_text(ts)));
    }
    let mut e = entry.clone();
    e.line = None;
    out.insert(
        "entry".into(),
        serde_json::to_value(&e).unwrap_or(Value::Null),
    );
    out
}

fn take_str(m: &mut Map<String, Value>, k: &str) -> Option<String> {
    match m.shift_remove(k)? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// Takes an optional string: `Some(None)` when absent, `None` when present
/// with another type.
fn opt_str(m: &mut Map<String, Value>, k: &str) -> Option<Option<String>> {
    match m.shift_remove(k) {
        None => Some(None),
        Some(Value::String(s)) => Some(Some(s)),
        Some(_) => None,
    }
}

fn outcome(s: &str) -> RunOutcome {
    match s {
        "completed" => RunOutcome::Completed,
        "cancelled" => RunOutcome::Cancelled,
        "error" => RunOutcome::Error,
        other => RunOutcome::Other(other.to_string()),
    }
}

/// Returns the outcome as codelia writes it.
pub fn outcome_str(o: &RunOutcome) -> &str {
    match o {
        RunOutcome::Completed => "completed",
        RunOutcome::Cancelled => "cancelled",
        RunOutcome::Error => "error",
        RunOutcome::Other(s) => s,
    }
}

/// Maps codelia's `output.usage`. `input_tokens` counts cached tokens too,
/// so the model's `input` is `input_tokens` minus `input_cached_tokens`.
fn usage(v: &Value) -> Option<Usage> {
    let o = v.as_object()?;
    let n = |k: &str| o.get(k).and_then(Value::as_u64);
    let cached = n("input_cached_tokens").unwrap_or(0);
    let mut u = Usage {
        input: n("input_tokens").unwrap_or(0).saturating_sub(cached),
        output: n("output_tokens").unwrap_or(0),
        cache_read: cached,
        cache_write: n("input_cache_creation_tokens").unwrap_or(0),
        total: n("total_tokens"),
        ..Usage::default()
    };
    for (k, val) in o {
        if !matches!(
            k.as_str(),
            "input_tokens"
                | "output_tokens"
                | "input_cached_tokens"
                | "input_cache_creation_tokens"
                | "total_tokens"
        ) {
            u.extra.insert(k.clone(), val.clone());
        }
    }
    Some(u)
}

/// A number as JavaScript writes it: integral values without a fraction.
fn js_number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        Value::from(f as i64)
    } else {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// Returns the record for `entry`, or `None` when codelia has no record for
/// its kind. With `native` the entry's extra fields are codelia's own and
/// are written; otherwise they belong to another format and are left out.
pub(crate) fn encode(entry: &Entry, native: bool) -> Option<Map<String, Value>> {
    let s = |v: &str| Value::String(v.to_string());
    let mut k: Vec<(&str, Value)> = Vec::new();
    let ty = match &entry.kind {
        EntryKind::RunStart { run_id, input } => {
            k.push(("run_id", s(run_id)));
            k.push(("input", input.clone()));
            "run.start"
        }
        EntryKind::RunContext {
            run_id,
            context_left_percent,
        } => {
            k.push(("run_id", s(run_id)));
            k.push(("context_left_percent", js_number(*context_left_percent)));
            "run.context"
        }
        EntryKind::Event {
            source,
            event_type,
            seq: Some(seq),
            payload,
        } if source == "agent"
            && payload.get("type").and_then(Value::as_str) == Some(event_type.as_str()) =>
        {
            k.push(("seq", Value::from(*seq)));
            k.push(("event", payload.clone()));
            "agent.event"
        }
        EntryKind::ToolOutput {
            tool,
            tool_call_id,
            output,
            is_error,
        } => {
            k.push(("tool", s(tool)));
            k.push(("tool_call_id", s(tool_call_id)));
            k.push(("result_raw", s(output)));
            if let Some(e) = is_error {
                k.push(("is_error", Value::Bool(*e)));
            }
            "tool.output"
        }
        EntryKind::LlmRequest { seq, model, input } => {
            k.push(("seq", Value::from(*seq)));
            if let Some(m) = model {
                k.push(("model", m.clone()));
            }
            k.push(("input", input.clone()));
            "llm.request"
        }
        EntryKind::LlmResponse { seq, output, .. } => {
            k.push(("seq", Value::from(*seq)));
            k.push(("output", output.clone()));
            "llm.response"
        }
        EntryKind::RunStatus {
            run_id,
            status,
            message,
        } => {
            k.push(("run_id", s(run_id)));
            k.push(("status", s(status)));
            if let Some(m) = message {
                k.push(("message", s(m)));
            }
            "run.status"
        }
        EntryKind::RunError {
            run_id,
            name,
            message,
            stack,
        } => {
            k.push(("run_id", s(run_id)));
            let mut e = Map::new();
            e.insert("name".into(), s(name));
            e.insert("message".into(), s(message));
            if let Some(st) = stack {
                e.insert("stack".into(), s(st));
            }
            k.push(("error", Value::Object(e)));
            "run.error"
        }
        EntryKind::RunEnd {
            run_id,
            outcome,
            final_text,
        } => {
            k.push(("run_id", s(run_id)));
            k.push(("outcome", s(outcome_str(outcome))));
            if let Some(f) = final_text {
                k.push(("final", s(f)));
            }
            "run.end"
        }
        EntryKind::Unknown {
            raw: Value::Object(raw),
            ..
        } if native => return Some(raw.clone()),
        _ => return None,
    };
    let empty = Extra::new();
    let extra = if native { &entry.extra } else { &empty };
    let mut known: Map<String, Value> = k.into_iter().map(|(a, b)| (a.to_string(), b)).collect();
    if let Some(ts) = &entry.timestamp {
        known.insert("ts".into(), Value::String(ts_text(ts)));
    }
    let mut out = Map::new();
    out.insert("type".into(), s(ty));
    for key in ["run_id", "session_id", "ts"] {
        if let Some(v) = known.shift_remove(key).or_else(|| extra.get(key).cloned()) {
            out.insert(key.into(), v);
        }
    }
    extend_missing(&mut out, &known);
    extend_missing(&mut out, extra);
    Some(out)
}
