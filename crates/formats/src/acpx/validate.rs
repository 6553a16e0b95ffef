//! Strict validation of session records (the seed's "Strictness and
//! Validation").

use super::wire::record::{detect_layout, normalize, Layout, SCHEMA};
use crate::locate::{self, Seg};
use crate::{Diagnostic, FormatError};
use serde_json::Value;
use std::path::Path;

/// One problem: the path (in the file's own layout) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Where, e.g. `thread.messages[2]`.
    pub path: String,
    /// What is wrong.
    pub problem: String,
    pub(crate) segs: Vec<Seg>,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.problem)
    }
}

impl Problem {
    /// Returns the 1-based line of the offending value in `text`.
    pub fn line_in(&self, text: &str) -> Option<u64> {
        let mut segs = self.segs.as_slice();
        loop {
            if let Some(l) = locate::line_of(text, segs) {
                return Some(l);
            }
            segs = segs.split_last()?.1;
        }
    }
}

const CONTENT_TAGS: [&str; 6] = [
    "Text",
    "Mention",
    "Image",
    "Thinking",
    "RedactedThinking",
    "ToolUse",
];

/// Checks a record document: only `acpx.session.v1`, a record id,
/// `User`/`Agent`/`"Resume"` messages of the right shape (legacy
/// `kind`/`type`/`role` messages are invalid), token usage objects of
/// non-negative numbers, `speed` one of `standard`, `fast`, `null`.
pub fn problems(doc: &Value) -> Vec<Problem> {
    let Value::Object(map) = doc else {
        return vec![problem_at(
            &[],
            Layout::Seed,
            "a session record must be a JSON object".into(),
        )];
    };
    let layout = detect_layout(map);
    let n = Value::Object(normalize(map.clone(), layout));
    let mut out = Vec::new();
    let mut push = |path: &[Seg], msg: String| out.push(problem_at(path, layout, msg));
    let key = |k: &str| Seg::Key(k.into());
    match n.get("schema") {
        Some(Value::String(s)) if s == SCHEMA => {}
        Some(other) => push(
            &[key("schema")],
            format!("must be \"{SCHEMA}\", got {other}"),
        ),
        None => push(
            &[key("schema")],
            format!("is required and must be \"{SCHEMA}\""),
        ),
    }
    match n.get("acpxRecordId") {
        Some(Value::String(s)) if !s.is_empty() => {}
        _ => push(
            &[key("acpxRecordId")],
            "is required and must be a non-empty string".into(),
        ),
    }
    let Some(thread) = n.get("thread") else {
        return out;
    };
    if !thread.is_object() {
        push(&[key("thread")], "must be an object".into());
        return out;
    }
    let t = |k: &str| vec![key("thread"), key(k)];
    match thread.get("messages") {
        None => {}
        Some(Value::Array(msgs)) => {
            for (i, m) in msgs.iter().enumerate() {
                let mut p = t("messages");
                p.push(Seg::Index(i));
                for (sub, msg) in message_problems(m) {
                    let mut full = p.clone();
                    full.extend(sub);
                    push(&full, msg);
                }
            }
        }
        Some(_) => push(&t("messages"), "must be an array".into()),
    }
    if let Some(u) = thread.get("cumulative_token_usage") {
        for (sub, msg) in usage_problems(u) {
            let mut p = t("cumulative_token_usage");
            p.extend(sub);
            push(&p, msg);
        }
    }
    match thread.get("request_token_usage") {
        None | Some(Value::Null) => {}
        Some(Value::Object(per)) => {
            for (id, u) in per {
                for (sub, msg) in usage_problems(u) {
                    let mut p = t("request_token_usage");
                    p.push(key(id));
                    p.extend(sub);
                    push(&p, msg);
                }
            }
        }
        Some(_) => push(
            &t("request_token_usage"),
            "must be an object keyed by user message id".into(),
        ),
    }
    match thread.get("speed") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s == "standard" || s == "fast" => {}
        Some(other) => push(
            &t("speed"),
            format!("must be \"standard\", \"fast\" or null, got {other}"),
        ),
    }
    out
}

/// Maps a path in the seed's shape to the file's layout.
fn problem_at(path: &[Seg], layout: Layout, msg: String) -> Problem {
    let mut segs: Vec<Seg> = path.to_vec();
    if layout != Layout::Seed {
        if let Some(Seg::Key(first)) = segs.first() {
            if first == "thread" {
                segs.remove(0);
            } else if layout == Layout::Disk {
                let snake = to_snake(first);
                segs[0] = Seg::Key(snake);
            }
        }
    }
    Problem {
        path: locate::display(&segs),
        problem: msg,
        segs,
    }
}

fn to_snake(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn message_problems(m: &Value) -> Vec<(Vec<Seg>, String)> {
    let key = |k: &str| Seg::Key(k.into());
    if m.as_str() == Some("Resume") {
        return Vec::new();
    }
    let Some(obj) = m.as_object() else {
        return vec![(
            Vec::new(),
            format!("must be {{\"User\": …}}, {{\"Agent\": …}} or \"Resume\", got {m}"),
        )];
    };
    if obj.len() != 1 || !(obj.contains_key("User") || obj.contains_key("Agent")) {
        let legacy = ["kind", "type", "role"]
            .iter()
            .any(|k| obj.contains_key(*k));
        let what = if legacy {
            "a legacy kind/type message shape"
        } else {
            "an untagged message"
        };
        return vec![(
            Vec::new(),
            format!("{what}; only {{\"User\": …}}, {{\"Agent\": …}} and \"Resume\" are valid"),
        )];
    }
    let mut out = Vec::new();
    if let Some(u) = obj.get("User") {
        let base = vec![key("User")];
        match u.get("id") {
            Some(Value::String(s)) if !s.is_empty() => {}
            _ => out.push((
                with(&base, &[key("id")]),
                "a user message needs a non-empty string id".into(),
            )),
        }
        content_problems(u.get("content"), &with(&base, &[key("content")]), &mut out);
    }
    if let Some(a) = obj.get("Agent") {
        let base = vec![key("Agent")];
        if !a.is_object() {
            out.push((base.clone(), "must be an object".into()));
            return out;
        }
        content_problems(a.get("content"), &with(&base, &[key("content")]), &mut out);
        match a.get("tool_results") {
            None | Some(Value::Null) => {}
            Some(Value::Object(results)) => {
                for (id, r) in results {
                    let p = with(&base, &[key("tool_results"), key(id)]);
                    match r.get("tool_use_id") {
                        Some(Value::String(_)) => {}
                        _ => {
                            out.push((p.clone(), "a tool result needs a string tool_use_id".into()))
                        }
                    }
                    if let Some(e) = r.get("is_error") {
                        if !e.is_boolean() {
                            out.push((
                                with(&p, &[key("is_error")]),
                                "must be true or false".into(),
                            ));
                        }
                    }
                }
            }
            Some(_) => out.push((
                with(&base, &[key("tool_results")]),
                "must be an object keyed by tool-use id".into(),
            )),
        }
    }
    out
}

fn with(base: &[Seg], rest: &[Seg]) -> Vec<Seg> {
    let mut p = base.to_vec();
    p.extend_from_slice(rest);
    p
}

fn content_problems(content: Option<&Value>, path: &[Seg], out: &mut Vec<(Vec<Seg>, String)>) {
    let Some(Value::Array(items)) = content else {
        out.push((
            path.to_vec(),
            "must be an array of tagged content items".into(),
        ));
        return;
    };
    for (i, c) in items.iter().enumerate() {
        let p = with(path, &[Seg::Index(i)]);
        let tag = c
            .as_object()
            .filter(|o| o.len() == 1)
            .and_then(|o| o.keys().next());
        match tag.map(String::as_str) {
            Some("Text") if c["Text"].is_string() => {}
            Some("Thinking") if c["Thinking"].get("text").is_some_and(Value::is_string) => {}
            Some("ToolUse")
                if c["ToolUse"].get("id").is_some_and(Value::is_string)
                    && c["ToolUse"].get("name").is_some_and(Value::is_string) => {}
            Some(t)
                if CONTENT_TAGS.contains(&t) && !matches!(t, "Text" | "Thinking" | "ToolUse") => {}
            Some(t) if CONTENT_TAGS.contains(&t) => {
                out.push((p, format!("a {t} item has the wrong shape")));
            }
            _ => out.push((
                p,
                format!(
                    "must be one of {} (a single-key object), got {c}",
                    CONTENT_TAGS.map(|t| format!("{{\"{t}\"}}")).join(", ")
                ),
            )),
        }
    }
}

fn usage_problems(u: &Value) -> Vec<(Vec<Seg>, String)> {
    let Some(obj) = u.as_object() else {
        return vec![(
            Vec::new(),
            format!("token usage must be an object, got {u}"),
        )];
    };
    obj.iter()
        .filter(|(_, v)| !v.as_f64().is_some_and(|f| f >= 0.0))
        .map(|(k, v)| {
            (
                vec![Seg::Key(k.clone())],
                format!("token counts must be non-negative numbers, got {v}"),
            )
        })
        .collect()
}

/// Checks the text of a record file; one diagnostic per problem, at its
/// line.
pub fn validate_text(path: &Path, text: &str) -> Vec<Diagnostic> {
    match serde_json::from_str::<Value>(text) {
        Ok(doc) => problems(&doc)
            .into_iter()
            .map(|p| Diagnostic::error(path, p.line_in(text), "strict", p.to_string()))
            .collect(),
        Err(e) => vec![Diagnostic::error(
            path,
            Some(e.line() as u64),
            "invalid-json",
            format!("not JSON: {e}"),
        )],
    }
}

/// Returns every problem of the record or audit log at `path`: the strict
/// checks of a record, or what reading an audit log reports.
pub(super) fn validate_file(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let bytes = crate::input::read_file(path)?;
    if super::read::is_event_log(path) {
        return Ok(super::read::read_event_file(path, &bytes).diagnostics);
    }
    Ok(validate_text(path, &String::from_utf8_lossy(&bytes)))
}
