//! What a jido_code session file must hold: its schema, checked field by
//! field ([`validate`]), and the reader's diagnostics (`validate_file`).
//!
//! Every problem names the field (`conversation[3].role`) and what is wrong
//! with it, so a person can fix the file.

use crate::{Diagnostic, FormatError};
use serde_json::Value;
use std::fmt;
use std::path::Path;

/// The schema version this build writes and restores without migrating.
pub const CURRENT_VERSION: u64 = 1;

/// Message roles a file may hold. The seed lists user, assistant and system;
/// jido_code also writes tool messages.
pub const ROLES: [&str; 4] = ["user", "assistant", "system", "tool"];

/// Todo statuses a file may hold.
pub const TODO_STATUSES: [&str; 3] = ["pending", "in_progress", "completed"];

/// One schema violation.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// The field, as a path from the top (`todos[0].status`); empty for the
    /// whole document.
    pub path: String,
    /// What is wrong with it.
    pub problem: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.problem)
        } else {
            write!(f, "{}: {}", self.path, self.problem)
        }
    }
}

/// True when `s` is an ISO 8601 date-time with a UTC offset (RFC 3339,
/// e.g. `2025-12-16T10:30:00Z`), what Elixir's `DateTime.to_iso8601` writes.
pub fn is_iso8601(s: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

struct Checker {
    problems: Vec<Problem>,
}

impl Checker {
    fn push(&mut self, path: &str, problem: impl Into<String>) {
        self.problems.push(Problem {
            path: path.to_string(),
            problem: problem.into(),
        });
    }

    /// Returns the field, recording a problem when it is missing.
    fn required<'a>(
        &mut self,
        obj: &'a serde_json::Map<String, Value>,
        path: &str,
        key: &str,
    ) -> Option<&'a Value> {
        let v = obj.get(key);
        if v.is_none() {
            self.push(&join(path, key), "required field is missing");
        }
        v
    }

    fn string<'a>(&mut self, v: &'a Value, path: &str) -> Option<&'a str> {
        match v {
            Value::String(s) => Some(s),
            other => {
                self.push(
                    path,
                    format!("must be a string, found {}", type_name(other)),
                );
                None
            }
        }
    }

    fn timestamp(&mut self, v: &Value, path: &str) {
        if let Some(s) = self.string(v, path) {
            if !is_iso8601(s) {
                self.push(
                    path,
                    format!(
                        "must be an ISO 8601 timestamp such as 2025-12-16T10:30:00Z, found {s:?}"
                    ),
                );
            }
        }
    }

    fn one_of(&mut self, v: &Value, path: &str, allowed: &[&str]) {
        if let Some(s) = self.string(v, path) {
            if !allowed.contains(&s) {
                self.push(
                    path,
                    format!("must be one of {}, found {s:?}", allowed.join(", ")),
                );
            }
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Checks a session document of the current version and returns every
/// problem found (empty when it is valid).
pub fn validate(doc: &Value) -> Vec<Problem> {
    let mut c = Checker {
        problems: Vec::new(),
    };
    let Some(top) = doc.as_object() else {
        c.push(
            "",
            format!(
                "a session file must be a JSON object, found {}",
                type_name(doc)
            ),
        );
        return c.problems;
    };
    if let Some(v) = c.required(top, "", "version") {
        match v.as_u64() {
            Some(n) if n >= 1 => {}
            _ => c.push("version", format!("must be a positive integer, found {v}")),
        }
    }
    if let Some(v) = c.required(top, "", "id") {
        if c.string(v, "id").is_some_and(str::is_empty) {
            c.push("id", "must not be empty");
        }
    }
    if let Some(v) = c.required(top, "", "name") {
        c.string(v, "name");
    }
    if let Some(v) = c.required(top, "", "project_path") {
        if let Some(p) = c.string(v, "project_path") {
            if !p.starts_with('/') {
                c.push(
                    "project_path",
                    format!("must be an absolute path, found {p:?}"),
                );
            }
        }
    }
    if let Some(v) = c.required(top, "", "config") {
        check_config(&mut c, v);
    }
    for key in ["created_at", "updated_at", "closed_at"] {
        if let Some(v) = c.required(top, "", key) {
            c.timestamp(v, key);
        }
    }
    if let Some(v) = c.required(top, "", "conversation") {
        match v {
            Value::Array(msgs) => {
                for (i, m) in msgs.iter().enumerate() {
                    check_message(&mut c, m, &format!("conversation[{i}]"));
                }
            }
            other => c.push(
                "conversation",
                format!("must be an array, found {}", type_name(other)),
            ),
        }
    }
    if let Some(v) = c.required(top, "", "todos") {
        match v {
            Value::Array(todos) => {
                for (i, t) in todos.iter().enumerate() {
                    check_todo(&mut c, t, &format!("todos[{i}]"));
                }
            }
            other => c.push(
                "todos",
                format!("must be an array, found {}", type_name(other)),
            ),
        }
    }
    c.problems
}

fn check_config(c: &mut Checker, v: &Value) {
    let Some(cfg) = v.as_object() else {
        c.push(
            "config",
            format!("must be an object, found {}", type_name(v)),
        );
        return;
    };
    for key in ["provider", "model"] {
        if let Some(v) = cfg.get(key) {
            c.string(v, &join("config", key));
        }
    }
    if let Some(t) = cfg.get("temperature") {
        match t.as_f64() {
            Some(x) if (0.0..=2.0).contains(&x) => {}
            Some(x) => c.push(
                "config.temperature",
                format!("must be between 0.0 and 2.0, found {x}"),
            ),
            None => c.push(
                "config.temperature",
                format!("must be a number, found {}", type_name(t)),
            ),
        }
    }
    if let Some(m) = cfg.get("max_tokens") {
        if m.as_u64().is_none_or(|n| n == 0) {
            c.push(
                "config.max_tokens",
                format!("must be a positive integer, found {m}"),
            );
        }
    }
}

fn check_message(c: &mut Checker, m: &Value, path: &str) {
    let Some(obj) = m.as_object() else {
        c.push(
            path,
            format!("a message must be an object, found {}", type_name(m)),
        );
        return;
    };
    if let Some(v) = c.required(obj, path, "id") {
        c.string(v, &join(path, "id"));
    }
    if let Some(v) = c.required(obj, path, "role") {
        c.one_of(v, &join(path, "role"), &ROLES);
    }
    if let Some(v) = c.required(obj, path, "content") {
        c.string(v, &join(path, "content"));
    }
    if let Some(v) = c.required(obj, path, "timestamp") {
        c.timestamp(v, &join(path, "timestamp"));
    }
}

fn check_todo(c: &mut Checker, t: &Value, path: &str) {
    let Some(obj) = t.as_object() else {
        c.push(
            path,
            format!("a todo must be an object, found {}", type_name(t)),
        );
        return;
    };
    if let Some(v) = c.required(obj, path, "content") {
        c.string(v, &join(path, "content"));
    }
    if let Some(v) = c.required(obj, path, "status") {
        c.one_of(v, &join(path, "status"), &TODO_STATUSES);
    }
    if let Some(v) = obj.get("active_form") {
        c.string(v, &join(path, "active_form"));
    }
}

/// Returns every problem of the session file at `path`: what the reader
/// reports and every field the schema finds wrong.
pub(super) fn validate_file(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (_, mut diags) = crate::diag::read_and_check(&super::FORMAT, path)?;
    let bytes = crate::input::read_file(path)?;
    let doc: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    for p in validate(&doc) {
        diags.push(Diagnostic::error(path, None, "schema", p.to_string()));
    }
    Ok(diags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_field_and_the_problem() {
        let doc = json!({
            "version": 1, "id": "x", "name": 3, "project_path": "rel",
            "config": {"temperature": 9},
            "created_at": "yesterday", "updated_at": "2025-12-16T10:30:00Z",
            "conversation": [{"id": "m", "role": "robot", "content": "hi", "timestamp": "2025-12-16T10:30:00Z"}],
            "todos": [{"content": "a", "status": "done"}]
        });
        let got: Vec<String> = validate(&doc).iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            [
                "name: must be a string, found a number",
                "project_path: must be an absolute path, found \"rel\"",
                "config.temperature: must be between 0.0 and 2.0, found 9",
                "created_at: must be an ISO 8601 timestamp such as 2025-12-16T10:30:00Z, found \"yesterday\"",
                "closed_at: required field is missing",
                "conversation[0].role: must be one of user, assistant, system, tool, found \"robot\"",
                "todos[0].status: must be one of pending, in_progress, completed, found \"done\"",
            ]
        );
    }
}
