//! The `header` record (line 1 of a run log) and the session metadata.

use super::message::extend_missing;
use agentlog_model::{Agent, Extra, ModelConfig, SessionMeta, Timestamp};
use serde_json::{Map, Value};

/// The `schema_version` this reader knows.
pub const SCHEMA_VERSION: u64 = 1;

/// The order codelia writes header fields in.
const ORDER: [&str; 12] = [
    "type",
    "schema_version",
    "run_id",
    "session_id",
    "started_at",
    "client",
    "server",
    "model",
    "prompts",
    "tools",
    "runtime",
    "meta",
];

/// Maps a header to session metadata. `fallback_id` names the session when
/// the header has no `run_id`.
pub(crate) fn decode(header: &Map<String, Value>, fallback_id: &str) -> SessionMeta {
    let mapped = decode_mapped(header, fallback_id);
    if encode(&mapped, true) == *header {
        return mapped;
    }
    // Something did not map exactly: keep every field verbatim and copy only
    // what the model needs to show the session.
    let mut meta = SessionMeta::new(run_id(header, fallback_id), Agent::Codelia);
    meta.format = Some("codelia".into());
    meta.format_version = header.get("schema_version").cloned();
    meta.created_at = header.get("started_at").and_then(timestamp);
    let mut extra = header.clone();
    extra.shift_remove("type");
    extra.shift_remove("schema_version");
    if meta.created_at.is_some() {
        extra.shift_remove("started_at");
    }
    meta.extra = extra;
    meta
}

fn run_id(header: &Map<String, Value>, fallback_id: &str) -> String {
    header
        .get("run_id")
        .and_then(Value::as_str)
        .unwrap_or(fallback_id)
        .to_string()
}

fn timestamp(v: &Value) -> Option<Timestamp> {
    match v {
        Value::String(s) => Some(Timestamp::Text(s.clone())),
        _ => None,
    }
}

fn decode_mapped(header: &Map<String, Value>, fallback_id: &str) -> SessionMeta {
    let mut rest = header.clone();
    rest.shift_remove("type");
    let mut meta = SessionMeta::new(run_id(header, fallback_id), Agent::Codelia);
    meta.format = Some("codelia".into());
    meta.format_version = rest.shift_remove("schema_version");
    if let Some(ts) = rest.get("started_at").and_then(timestamp) {
        meta.created_at = Some(ts);
        rest.shift_remove("started_at");
    }
    if let Some(Value::Object(m)) = rest.get("model") {
        let mut m = m.clone();
        let mut cfg = ModelConfig::default();
        let mut take = |k: &str| match m.get(k) {
            Some(Value::String(s)) => {
                let s = s.clone();
                m.shift_remove(k);
                Some(s)
            }
            _ => None,
        };
        cfg.provider = take("provider");
        cfg.model = take("name");
        cfg.thinking_level = take("reasoning");
        cfg.extra = m;
        meta.model = cfg;
        rest.shift_remove("model");
    }
    if let Some(Value::Object(rt)) = rest.get_mut("runtime") {
        if let Some(Value::String(cwd)) = rt.get("cwd") {
            meta.cwd = Some(cwd.clone());
            rt.shift_remove("cwd");
        }
    }
    meta.extra = rest;
    meta
}

/// Returns the header for `meta`. With `native` the metadata was read from a
/// codelia file and its extra fields are codelia's own; otherwise they are
/// another format's and are left out (the caller reports them).
pub(crate) fn encode(meta: &SessionMeta, native: bool) -> Map<String, Value> {
    let empty = Extra::new();
    let extra = if native { &meta.extra } else { &empty };
    let mut known = Map::new();
    known.insert("type".into(), Value::String("header".into()));
    let version = match (&meta.format_version, native) {
        (Some(v), true) => Some(v.clone()),
        (None, true) => None,
        (_, false) => Some(Value::from(SCHEMA_VERSION)),
    };
    if let Some(v) = version {
        known.insert("schema_version".into(), v);
    }
    if !extra.contains_key("run_id") {
        known.insert("run_id".into(), Value::String(meta.id.clone()));
    }
    if !native {
        known.insert("session_id".into(), Value::String(meta.id.clone()));
    }
    if let Some(ts) = &meta.created_at {
        known.insert("started_at".into(), Value::String(ts_text(ts)));
    }
    let m = &meta.model;
    if m.provider.is_some()
        || m.model.is_some()
        || m.thinking_level.is_some()
        || !m.extra.is_empty()
    {
        let mut o = Map::new();
        for (k, v) in [
            ("provider", &m.provider),
            ("name", &m.model),
            ("reasoning", &m.thinking_level),
        ] {
            if let Some(v) = v {
                o.insert(k.into(), Value::String(v.clone()));
            }
        }
        if native {
            extend_missing(&mut o, &m.extra);
        }
        known.insert("model".into(), Value::Object(o));
    }
    if let Some(cwd) = &meta.cwd {
        let mut rt = Map::new();
        rt.insert("cwd".into(), Value::String(cwd.clone()));
        if let Some(Value::Object(more)) = extra.get("runtime") {
            extend_missing(&mut rt, more);
        }
        known.insert("runtime".into(), Value::Object(rt));
    }
    let mut out = Map::new();
    for k in ORDER {
        if let Some(v) = known.shift_remove(k).or_else(|| extra.get(k).cloned()) {
            out.insert(k.into(), v);
        }
    }
    extend_missing(&mut out, &known);
    extend_missing(&mut out, extra);
    out
}

/// Returns a timestamp as codelia writes it: the text as read, or RFC 3339
/// UTC with milliseconds for a time read as a number.
pub(crate) fn ts_text(ts: &Timestamp) -> String {
    match ts {
        Timestamp::Text(s) => s.clone(),
        Timestamp::Millis(_) => ts.to_rfc3339(),
    }
}
