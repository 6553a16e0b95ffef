//! Writing Kimi's `context.jsonl`: a session read from Kimi line for line,
//! and sessions of other agents as the chat messages Kimi's model context
//! holds (so `kimi -r <id>` continues them).

use super::FORMAT_NAME;
use crate::chat::{foreign_lines, message_line, Reasoning};
use crate::{Fidelity, FormatError};
use agentlog_model::{EntryKind, Session};
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;

pub(super) fn write(session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
    let mut fidelity = Fidelity::new(FORMAT_NAME);
    let lines = if session.meta.format.as_deref() == Some(FORMAT_NAME) {
        native_lines(session, &mut fidelity)
    } else {
        foreign_lines(session, &mut fidelity, Reasoning::ThinkParts)
    };
    for line in lines {
        serde_json::to_writer(&mut *out, &line)
            .map_err(|e| FormatError::write("kimi context", std::io::Error::other(e)))?;
        out.write_all(b"\n")
            .map_err(|e| FormatError::write("kimi context", e))?;
    }
    Ok(fidelity)
}

/// The entries of a session read from Kimi, each back as its line.
fn native_lines(session: &Session, fidelity: &mut Fidelity) -> Vec<Value> {
    let mut lines = Vec::new();
    for e in &session.entries {
        match &e.kind {
            EntryKind::Message(m) if m.injected.as_deref() == Some("system_prompt") => {
                let mut line = message_line(e, m);
                line["role"] = "_system_prompt".into();
                lines.push(line);
            }
            EntryKind::Message(m) => lines.push(message_line(e, m)),
            EntryKind::Event {
                source,
                event_type,
                payload,
                ..
            } if source == FORMAT_NAME => {
                let mut line = payload.clone();
                if let Value::Object(o) = &mut line {
                    o.entry("role")
                        .or_insert_with(|| format!("_{event_type}").into());
                }
                lines.push(line);
            }
            EntryKind::Unknown { raw, .. } => lines.push(raw.clone()),
            other => fidelity.lost(format!("{} entry", other.name()), Some(&e.id)),
        }
    }
    lines
}

/// Lists `cwd` in Kimi's `kimi.json` (made if missing) with `id` as its
/// last session, unless it is listed already: Kimi continues only sessions
/// of work directories listed there, and replaces a session it cannot find
/// with a new, empty one. Every other field is kept; the file is replaced
/// by a complete new one (written beside it, then renamed), and one that
/// is not a JSON object is an error, left as it is.
pub(super) fn register_work_dir(kimi_json: &Path, cwd: &str, id: &str) -> Result<(), FormatError> {
    let mut doc = match std::fs::read(kimi_json) {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(o)) => o,
            _ => {
                return Err(FormatError::invalid(
                    kimi_json,
                    None,
                    "not a JSON object; Kimi's list of work directories is left as it is",
                ))
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::Map::new(),
        Err(e) => return Err(FormatError::io(kimi_json, e)),
    };
    let dirs = doc
        .entry("work_dirs")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(dirs) = dirs else {
        return Err(FormatError::invalid(
            kimi_json,
            None,
            "`work_dirs` is not a list; left as it is",
        ));
    };
    if dirs
        .iter()
        .any(|d| d.get("path").and_then(Value::as_str) == Some(cwd))
    {
        return Ok(());
    }
    dirs.push(json!({"path": cwd, "kaos": "local", "last_session_id": id}));
    let text = serde_json::to_string_pretty(&Value::Object(doc))
        .map_err(|e| FormatError::write("kimi.json", std::io::Error::other(e)))?;
    if let Some(dir) = kimi_json.parent() {
        std::fs::create_dir_all(dir).map_err(|e| FormatError::io(dir, e))?;
    }
    let tmp = kimi_json.with_extension("json.agentlog-tmp");
    std::fs::write(&tmp, text).map_err(|e| FormatError::io(&tmp, e))?;
    std::fs::rename(&tmp, kimi_json).map_err(|e| FormatError::io(kimi_json, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_work_dir_is_added_once_and_other_fields_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("kimi.json");
        register_work_dir(&p, "/w/a", "s1").unwrap();
        std::fs::write(
            &p,
            r#"{"work_dirs":[{"path":"/w/a","kaos":"local","last_session_id":"s0"}],"theme":"x"}"#,
        )
        .unwrap();
        register_work_dir(&p, "/w/a", "s1").unwrap();
        register_work_dir(&p, "/w/b", "s2").unwrap();
        let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(v["theme"], "x");
        assert_eq!(
            v["work_dirs"],
            json!([
                {"path": "/w/a", "kaos": "local", "last_session_id": "s0"},
                {"path": "/w/b", "kaos": "local", "last_session_id": "s2"}
            ])
        );
        // A file that is not Kimi's JSON is not replaced.
        std::fs::write(&p, "not json").unwrap();
        assert!(register_work_dir(&p, "/w/c", "s3").is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "not json");
    }
}
