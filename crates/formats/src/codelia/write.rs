//! Writes a session as a codelia run log, or as a resume state snapshot
//! when it was read from one.

use super::wire::record::{self};
use super::wire::{header, state};
use super::{DERIVED_FROM, ENTRY_RECORD, LAYOUT_KEY, LAYOUT_STATE};
use crate::{Fidelity, FormatError};
use agentlog_model::{Session, SessionMeta, Timestamp};
use serde_json::{Map, Value};
use std::io::Write;

/// Writes `session` to `out`.
pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
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

/// Returns the run log lines for `session` and what they could not hold.
pub(super) fn encode_log(session: &Session) -> (Vec<Map<String, Value>>, Fidelity) {
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
pub(super) fn with_run_id(rec: Map<String, Value>, run_id: &Value) -> Map<String, Value> {
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

pub(super) fn report_foreign_meta(meta: &SessionMeta, fid: &mut Fidelity) {
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
