//! A light index over a pi session file: one [`Slot`] per entry with its
//! type, id, parent and the span of its line. Lines are parsed only as far
//! as these fields need (the rest of each record is skipped, not built), so
//! opening a large session costs one pass over the bytes and little memory;
//! whole records are parsed on demand.

use agentlog_formats::{jsonl, Diagnostic};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::Path;

/// No index (`u32::MAX`).
pub(crate) const NONE: u32 = u32::MAX;

/// The kind of a record, as far as the manager needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    Message,
    AssistantMessage,
    ModelChange,
    ThinkingLevelChange,
    Compaction,
    BranchSummary,
    CustomMessage,
    Label,
    TtsrInjection,
    Other,
}

impl Ty {
    pub(crate) fn of(ty: Option<&str>, role: Option<&str>) -> Ty {
        match ty {
            Some("message") if role == Some("assistant") => Ty::AssistantMessage,
            Some("message") => Ty::Message,
            Some("model_change") => Ty::ModelChange,
            Some("thinking_level_change") => Ty::ThinkingLevelChange,
            Some("compaction") => Ty::Compaction,
            Some("branch_summary") => Ty::BranchSummary,
            Some("custom_message") => Ty::CustomMessage,
            Some("label") => Ty::Label,
            Some("ttsr_injection") => Ty::TtsrInjection,
            _ => Ty::Other,
        }
    }
}

/// One entry of the tree.
#[derive(Debug)]
pub(crate) struct Slot {
    /// Start of the line in its buffer.
    pub start: usize,
    /// End of the line (exclusive, no newline).
    pub end: usize,
    /// True when the line is in the buffer of appended entries.
    pub appended: bool,
    pub ty: Ty,
    pub id: Box<str>,
    pub parent_id: Option<Box<str>>,
    /// The parent's slot, or [`NONE`] (no parent, or an unknown one).
    pub parent: u32,
    /// The 1-based line in the file (0 for entries not yet written).
    pub line: u64,
}

/// A label record seen while indexing.
pub(crate) struct LabelRec {
    pub target: Box<str>,
    /// The label when it is a non-empty string (pi clears on anything else).
    pub label: Option<String>,
    pub slot: u32,
}

/// What a migration already knows about an entry line it wrote (the
/// line starting at `offset` of its output), so that indexing does not
/// parse the line again.
pub(crate) struct Known {
    pub offset: usize,
    pub ty: Ty,
    pub id: Box<str>,
    pub parent_id: Option<Box<str>>,
}

/// What indexing a file found.
pub(crate) struct Scan {
    pub header: Option<Map<String, Value>>,
    pub slots: Vec<Slot>,
    pub labels: Vec<LabelRec>,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Deserialize)]
struct MsgProbe<'a> {
    #[serde(borrow)]
    role: Option<&'a str>,
}

/// The fields of a record the index needs; everything else is skipped.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<&'a str>,
    #[serde(borrow)]
    id: Option<&'a str>,
    #[serde(rename = "parentId", borrow)]
    parent_id: Option<&'a str>,
    #[serde(rename = "targetId", borrow)]
    target_id: Option<&'a str>,
    #[serde(borrow)]
    label: Option<&'a str>,
    #[serde(borrow)]
    message: Option<MsgProbe<'a>>,
}

/// The same fields, owned, from either parse.
struct Fields {
    ty: Option<String>,
    id: Option<String>,
    parent_id: Option<String>,
    target_id: Option<String>,
    label: Option<String>,
    role: Option<String>,
}

fn fields_of(line: &[u8]) -> Result<(Fields, Option<Map<String, Value>>), serde_json::Error> {
    if let Ok(p) = serde_json::from_slice::<Probe<'_>>(line) {
        if p.ty != Some("session") {
            return Ok((
                Fields {
                    ty: p.ty.map(str::to_string),
                    id: p.id.map(str::to_string),
                    parent_id: p.parent_id.map(str::to_string),
                    target_id: p.target_id.map(str::to_string),
                    label: p.label.map(str::to_string),
                    role: p.message.and_then(|m| m.role).map(str::to_string),
                },
                None,
            ));
        }
    }
    // Escaped strings, unexpected types, duplicate keys, headers: the slow
    // path through a full parse.
    let v: Value = serde_json::from_slice(line)?;
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let label = match v.get("label") {
        Some(Value::String(l)) => Some(l.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Bool(true)) => Some("true".into()),
        _ => None,
    };
    let f = Fields {
        ty: s(v.get("type")),
        id: s(v.get("id")),
        parent_id: s(v.get("parentId")),
        target_id: s(v.get("targetId")),
        label,
        role: s(v.get("message").and_then(|m| m.get("role"))),
    };
    let obj = match v {
        Value::Object(m) => Some(m),
        _ => None,
    };
    Ok((f, obj))
}

/// Returns the version of the header when the first record is a pi
/// session header (1 when it has no version).
pub(crate) fn header_version(bytes: &[u8]) -> Option<u64> {
    let line = jsonl::lines(bytes).find(|l| {
        !jsonl::is_blank(l.bytes)
            && serde_json::from_slice::<serde::de::IgnoredAny>(l.bytes).is_ok()
    })?;
    let v: Value = serde_json::from_slice(line.bytes).ok()?;
    let h = v.as_object()?;
    (h.get("type").and_then(Value::as_str) == Some("session")
        && h.get("id").is_some_and(Value::is_string))
    .then(|| agentlog_formats::pi::header_version(h.get("version")))
}

/// Indexes `bytes` (a whole pi file). Lines that cannot be read become
/// diagnostics; the first record must be a session header. The fields of
/// the entry lines in `known` (in offset order) are taken as given
/// instead of parsing those lines.
pub(crate) fn scan(path: &Path, bytes: &[u8], known: Vec<Known>) -> Scan {
    let mut known = known.into_iter().peekable();
    let mut out = Scan {
        header: None,
        slots: Vec::with_capacity(bytes.len() / 600 + 16),
        labels: Vec::new(),
        diagnostics: Vec::new(),
    };
    let utf8_ok = std::str::from_utf8(bytes).is_ok();
    let mut first = true;
    for line in jsonl::lines(bytes) {
        if jsonl::is_blank(line.bytes) {
            continue;
        }
        if !utf8_ok && std::str::from_utf8(line.bytes).is_err() {
            out.diagnostics.push(Diagnostic::error(
                path,
                Some(line.number),
                "invalid-utf8",
                "line is not valid UTF-8; skipped (kept in the file)",
            ));
            continue;
        }
        while known.next_if(|k| k.offset < line.offset).is_some() {}
        if let Some(k) = known.next_if(|k| k.offset == line.offset) {
            if !first {
                out.slots.push(Slot {
                    start: line.offset,
                    end: line.offset + line.bytes.len(),
                    appended: false,
                    ty: k.ty,
                    id: k.id,
                    parent_id: k.parent_id,
                    parent: NONE,
                    line: line.number,
                });
                continue;
            }
        }
        let (f, obj) = match fields_of(line.bytes) {
            Ok(x) => x,
            Err(e) => {
                out.diagnostics.push(jsonl::line_error(path, &line, &e));
                continue;
            }
        };
        if first {
            first = false;
            if f.ty.as_deref() == Some("session") && f.id.is_some() {
                out.header = obj;
                continue;
            }
        }
        if f.ty.as_deref() == Some("session") {
            out.diagnostics.push(Diagnostic::warning(
                path,
                Some(line.number),
                "extra-header",
                "a second session header; not part of the tree",
            ));
            continue;
        }
        let id = match f.id {
            Some(id) => id,
            None => {
                let id = format!("line{}", line.number);
                out.diagnostics.push(Diagnostic::warning(
                    path,
                    Some(line.number),
                    "missing-id",
                    format!("entry has no string id; using {id}"),
                ));
                id
            }
        };
        let slot = out.slots.len() as u32;
        let ty = Ty::of(f.ty.as_deref(), f.role.as_deref());
        if ty == Ty::Label {
            if let Some(target) = f.target_id {
                out.labels.push(LabelRec {
                    target: target.into(),
                    label: f.label.filter(|l| !l.is_empty()),
                    slot,
                });
            }
        }
        let start = line.offset;
        out.slots.push(Slot {
            start,
            end: start + line.bytes.len(),
            appended: false,
            ty,
            id: id.into(),
            parent_id: f.parent_id.map(Into::into),
            parent: NONE,
            line: line.number,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pi::migrate::{migrate_bytes_with, migrate_indexed, IdScheme};

    type Row = (usize, usize, Ty, String, Option<String>, u64);

    fn rows(s: &Scan) -> Vec<Row> {
        s.slots
            .iter()
            .map(|x| {
                (
                    x.start,
                    x.end,
                    x.ty,
                    x.id.to_string(),
                    x.parent_id.as_deref().map(str::to_string),
                    x.line,
                )
            })
            .collect()
    }

    /// The index of a migrated file is the same whether the migration's
    /// knowledge is used or every line is parsed.
    fn assert_known_matches_parsing(src: &[u8]) {
        let p = Path::new("t.jsonl");
        for scheme in [IdScheme::LineNumbers, IdScheme::Random] {
            let (out, known) = migrate_indexed(src, 1, scheme);
            assert!(!known.is_empty());
            let fast = scan(p, &out, known);
            let slow = scan(p, &out, Vec::new());
            assert_eq!(rows(&fast), rows(&slow));
            assert_eq!(fast.header, slow.header);
            assert_eq!(fast.labels.len(), slow.labels.len());
            assert_eq!(fast.diagnostics.len(), slow.diagnostics.len());
            if scheme == IdScheme::LineNumbers {
                assert_eq!(out, migrate_bytes_with(src, 1, scheme));
            }
        }
    }

    #[test]
    fn migrated_entries_index_as_if_parsed() {
        let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");
        for rel in [
            "seeds/pi-mono/large-session.jsonl",
            "seeds/pi-mono/before-compaction.jsonl",
        ] {
            let src = std::fs::read(Path::new(fixtures).join(rel)).unwrap();
            assert_known_matches_parsing(&src);
        }
        // Odd lines: garbage before and after the header, blank and CRLF
        // lines, escapes, labels, a second header, a non-object.
        let src = "\u{feff}garbage\n{\"type\":\"session\",\"id\":\"s\",\"cwd\":\"/\"}\r\n\n\
            {\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\\\"b\"}}\n\
            not json\n\
            {\"type\":\"mess\\u0061ge\",\"message\":{\"role\":\"assistant\"}}\r\n\
            {\"type\":\"label\",\"targetId\":\"x\",\"label\":\"l\"}\n\
            [1,2]\n\
            {\"type\":\"session\",\"id\":\"s2\"}\n   \n\
            {\"type\":\"compaction\",\"firstKeptEntryIndex\":1,\"summary\":\"s\"}\n\
            {  \"type\" : \"model_change\" , \"provider\":\"p\" }  \n\
            {\"type\":\"message\",\"message\":{\"role\":\"assistant\",\"content\":[]}}";
        assert_known_matches_parsing(src.as_bytes());
    }
}
