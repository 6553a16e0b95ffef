//! Validation of SessionData: the JSON Schema and the `Validate()` rules.

use super::wire::types::{SessionData, SCHEMA_VERSION, TOOL_TYPES};
use crate::locate::{self, Seg};
use crate::specstory::write::markdown::GENERATED_BY;
use crate::Diagnostic;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

/// The seed document's JSON Schema (enforced by default).
pub const SEED_SCHEMA: &str = include_str!("../../schemas/session-data-v1.json");

/// The schema file the SpecStory CLI ships (see `schemas/README.md` for how
/// it differs from the document).
pub const UPSTREAM_SCHEMA: &str = include_str!("../../schemas/session-data-v1.upstream.json");

/// Which JSON Schema to check against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ValidationSchema {
    /// The schema in the seed document.
    #[default]
    Seed,
    /// The schema file shipped by the SpecStory CLI.
    Upstream,
}

/// One problem: where (a path such as `exchanges[0].messages[1].role`) and
/// what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The path of the offending value.
    pub path: String,
    /// What is wrong with it.
    pub problem: String,
    /// Which check found it: `schema` or `rule`.
    pub source: &'static str,
    pub(crate) segs: Vec<Seg>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.problem)
    }
}

impl Violation {
    fn new(segs: Vec<Seg>, problem: impl Into<String>, source: &'static str) -> Violation {
        Violation {
            path: locate::display(&segs),
            problem: problem.into(),
            source,
            segs,
        }
    }

    /// Returns the 1-based line of the offending value in `text`, the JSON
    /// the data was read from.
    pub fn line_in(&self, text: &str) -> Option<u64> {
        // Missing values are reported at their parent; walk up until found.
        let mut segs = self.segs.as_slice();
        loop {
            if let Some(l) = locate::line_of(text, segs) {
                return Some(l);
            }
            segs = segs.split_last()?.1;
        }
    }
}

fn validator(which: ValidationSchema) -> Option<&'static jsonschema::Validator> {
    static SEED: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    static UPSTREAM: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    let (cell, text) = match which {
        ValidationSchema::Seed => (&SEED, SEED_SCHEMA),
        ValidationSchema::Upstream => (&UPSTREAM, UPSTREAM_SCHEMA),
    };
    cell.get_or_init(|| {
        let schema: Value = serde_json::from_str(text).ok()?;
        jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&schema)
            .ok()
    })
    .as_ref()
}

/// Checks `value` against the JSON Schema; one violation per error.
pub fn schema_violations(value: &Value, which: ValidationSchema) -> Vec<Violation> {
    let Some(v) = validator(which) else {
        return vec![Violation::new(
            Vec::new(),
            "the embedded JSON Schema could not be compiled",
            "schema",
        )];
    };
    v.iter_errors(value)
        .map(|e| {
            let mut segs = locate::from_pointer(e.instance_path().as_str());
            // A missing property is reported at the property, so that it
            // lines up with the rule that names the same field.
            if let jsonschema::error::ValidationErrorKind::Required {
                property: Value::String(p),
            } = e.kind()
            {
                segs.push(Seg::Key(p.clone()));
                return Violation::new(segs, "is required", "schema");
            }
            Violation::new(segs, e.to_string(), "schema")
        })
        .collect()
}

/// Applies the seed's `Validate()` rules; one violation per broken rule and
/// place. Beyond the seed's list, duplicate exchange ids are reported (the
/// document says they must be unique).
pub fn rule_violations(data: &SessionData) -> Vec<Violation> {
    match serde_json::to_value(data) {
        Ok(v) => rule_violations_value(&v),
        Err(e) => vec![Violation::new(Vec::new(), e.to_string(), "rule")],
    }
}

/// [`rule_violations`] on a parsed document, so that a value of the wrong
/// type in one place does not hide the rules broken elsewhere (a value of
/// the wrong type counts as absent here; the schema reports its type).
pub fn rule_violations_value(doc: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    let key = |k: &str| Seg::Key(k.to_string());
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let nonempty_array = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    };
    let version = doc.get("schemaVersion");
    if version.and_then(Value::as_str) != Some(SCHEMA_VERSION) {
        let got = version
            .map(Value::to_string)
            .unwrap_or_else(|| "nothing".into());
        out.push(Violation::new(
            vec![key("schemaVersion")],
            format!("must be \"1.0\", got {got}"),
            "rule",
        ));
    }
    let provider = doc.get("provider").cloned().unwrap_or(Value::Null);
    for field in ["id", "name", "version"] {
        if text(&provider, field).is_empty() {
            out.push(Violation::new(
                vec![key("provider"), key(field)],
                "is required and must not be empty",
                "rule",
            ));
        }
    }
    for field in ["sessionId", "createdAt", "workspaceRoot"] {
        if text(doc, field).is_empty() {
            out.push(Violation::new(
                vec![key(field)],
                "is required and must not be empty",
                "rule",
            ));
        }
    }
    let empty = Vec::new();
    let exchanges = doc
        .get("exchanges")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, ex) in exchanges.iter().enumerate() {
        let ex_path = vec![key("exchanges"), Seg::Index(i)];
        let with = |extra: &[Seg]| {
            let mut p = ex_path.clone();
            p.extend_from_slice(extra);
            p
        };
        let id = text(ex, "exchangeId");
        if id.is_empty() {
            out.push(Violation::new(
                with(&[key("exchangeId")]),
                "is required and must not be empty",
                "rule",
            ));
        } else if let Some(first) = seen.get(&id).copied() {
            out.push(Violation::new(
                with(&[key("exchangeId")]),
                format!(
                    "{id:?} is already the id of exchanges[{first}]; exchange ids must be unique"
                ),
                "rule",
            ));
        } else {
            seen.insert(id, i);
        }
        let messages = ex
            .get("messages")
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        for (j, m) in messages.iter().enumerate() {
            let m_path = with(&[key("messages"), Seg::Index(j)]);
            let at = |extra: &[Seg]| {
                let mut p = m_path.clone();
                p.extend_from_slice(extra);
                p
            };
            let present = |k: &str| m.get(k).is_some_and(|v| !v.is_null());
            match m.get("role").and_then(Value::as_str) {
                Some("user") => {
                    if !nonempty_array(m, "content") {
                        out.push(Violation::new(
                            at(&[key("content")]),
                            "a user message must have non-empty content",
                            "rule",
                        ));
                    }
                    if present("tool") {
                        out.push(Violation::new(
                            at(&[key("tool")]),
                            "a user message cannot have a tool",
                            "rule",
                        ));
                    }
                    if present("model") {
                        out.push(Violation::new(
                            at(&[key("model")]),
                            "a user message cannot have a model",
                            "rule",
                        ));
                    }
                }
                Some("agent") => {
                    if !nonempty_array(m, "content")
                        && !present("tool")
                        && !nonempty_array(m, "pathHints")
                    {
                        out.push(Violation::new(
                            at(&[]),
                            "an agent message must have content, a tool or pathHints",
                            "rule",
                        ));
                    }
                }
                _ => {
                    let got = m
                        .get("role")
                        .map(Value::to_string)
                        .unwrap_or_else(|| "nothing".into());
                    out.push(Violation::new(
                        at(&[key("role")]),
                        format!("must be \"user\" or \"agent\", got {got}"),
                        "rule",
                    ));
                }
            }
            let parts = m.get("content").and_then(Value::as_array).unwrap_or(&empty);
            for (k, part) in parts.iter().enumerate() {
                let kind = part.get("type").and_then(Value::as_str);
                if kind != Some("text") && kind != Some("thinking") {
                    let got = part
                        .get("type")
                        .map(Value::to_string)
                        .unwrap_or_else(|| "nothing".into());
                    out.push(Violation::new(
                        at(&[key("content"), Seg::Index(k), key("type")]),
                        format!("must be \"text\" or \"thinking\", got {got}"),
                        "rule",
                    ));
                }
            }
            if let Some(tool) = m.get("tool").filter(|t| !t.is_null()) {
                if text(tool, "name").is_empty() {
                    out.push(Violation::new(
                        at(&[key("tool"), key("name")]),
                        "is required and must not be empty",
                        "rule",
                    ));
                }
                let kind = tool.get("type").and_then(Value::as_str).unwrap_or("");
                if !TOOL_TYPES.contains(&kind) {
                    let got = tool
                        .get("type")
                        .map(Value::to_string)
                        .unwrap_or_else(|| "nothing".into());
                    out.push(Violation::new(
                        at(&[key("tool"), key("type")]),
                        format!("must be one of {}, got {got}", TOOL_TYPES.join(", ")),
                        "rule",
                    ));
                }
            }
        }
    }
    out
}

/// Checks a parsed document against the schema and, when it has the
/// SessionData shape, the rules. A schema error at a place a rule already
/// reports is left out, so each problem is named once.
pub fn violations(value: &Value, which: ValidationSchema) -> Vec<Violation> {
    let schema = schema_violations(value, which);
    let rules = rule_violations_value(value);
    let mut out: Vec<Violation> = schema
        .into_iter()
        .filter(|s| !rules.iter().any(|r| r.segs == s.segs))
        .collect();
    out.extend(rules);
    out
}

/// Checks the JSON text of a SessionData file against `schema` and the
/// rules; one diagnostic (code `schema` or `rule`) per violation, at the
/// line of the offending value.
pub fn validate_text(path: &Path, text: &str, schema: ValidationSchema) -> Vec<Diagnostic> {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return vec![Diagnostic::error(
                path,
                Some(e.line() as u64),
                "invalid-json",
                format!("not JSON: {e}"),
            )]
        }
    };
    violations(&value, schema)
        .into_iter()
        .map(|v| Diagnostic::error(path, v.line_in(text), v.source, v.to_string()))
        .collect()
}

/// Returns every problem of the SessionData or transcript at `path`.
pub(super) fn validate_file(path: &Path) -> Result<Vec<Diagnostic>, crate::FormatError> {
    let bytes = crate::input::read_file(path)?;
    let text = String::from_utf8_lossy(&bytes);
    if text.trim_start().starts_with(GENERATED_BY) {
        return Ok(super::read::read(path, &bytes)?.diagnostics);
    }
    Ok(validate_text(path, &text, ValidationSchema::Seed))
}
