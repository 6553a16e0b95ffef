//! Migrating pi session files to version 3, as pi does on load.
//!
//! - v1 -> v2: every record after the header gets a fresh `id` and a
//!   `parentId` pointing at the record before it (a linear chain); a
//!   compaction's `firstKeptEntryIndex` (an index into the parsed records,
//!   the header being 0) becomes `firstKeptEntryId` and the index is removed.
//! - v2 -> v3: the message role `hookMessage` becomes `custom`.
//!
//! Every session record gets the new `version`. New keys go at the end of
//! each object, where pi puts them. Unlike pi, lines that do not parse are
//! kept verbatim instead of being dropped.

use super::ids::new_entry_id;
use super::index::{Known, Ty};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// The newest version.
pub const CURRENT_VERSION: u64 = 3;

#[derive(Deserialize)]
struct MsgProbe<'a> {
    #[serde(borrow)]
    role: Option<&'a str>,
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<&'a str>,
    id: Option<IgnoredAny>,
    #[serde(rename = "parentId")]
    parent_id: Option<IgnoredAny>,
    #[serde(borrow)]
    message: Option<MsgProbe<'a>>,
}

/// Returns the version a header declares (1 when it has none).
pub fn version_of(header: &Map<String, Value>) -> u64 {
    agentlog_formats::pi::header_version(header.get("version"))
}

/// How version 1 entries get their ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdScheme {
    /// Fresh random ids, as pi makes them (for files that are rewritten).
    Random,
    /// `line<N>`, N the entry's line in the version 1 file: the ids the
    /// `pi` format reader gives, stable across reads (for reading only).
    LineNumbers,
}

/// Rewrites a whole pi file at `version` as a version 3 file with random
/// ids and returns the new bytes.
pub fn migrate_bytes(bytes: &[u8], version: u64) -> Vec<u8> {
    migrate_bytes_with(bytes, version, IdScheme::Random)
}

/// Rewrites a whole pi file at `version` as a version 3 file, giving
/// version 1 entries ids by `scheme`, and returns the new bytes.
pub fn migrate_bytes_with(bytes: &[u8], version: u64, scheme: IdScheme) -> Vec<u8> {
    migrate_impl(bytes, version, scheme, None)
}

/// Like [`migrate_bytes_with`], also returning what is known of the entry
/// lines written (for `index::scan`).
pub(crate) fn migrate_indexed(
    bytes: &[u8],
    version: u64,
    scheme: IdScheme,
) -> (Vec<u8>, Vec<Known>) {
    let mut known = Vec::with_capacity(bytes.len() / 600 + 16);
    let out = migrate_impl(bytes, version, scheme, Some(&mut known));
    (out, known)
}

fn migrate_impl(
    bytes: &[u8],
    version: u64,
    scheme: IdScheme,
    mut known: Option<&mut Vec<Known>>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 20);
    let mut used: HashSet<String> = HashSet::new();
    // Ids of the parsed records by index (the header is index 0), for
    // `firstKeptEntryIndex`.
    let mut ids: Vec<Option<String>> = Vec::new();
    let mut prev: Option<String> = None;
    for line in agentlog_formats::jsonl::lines(bytes) {
        let raw = line.bytes;
        if agentlog_formats::jsonl::is_blank(raw) {
            continue;
        }
        let probe = serde_json::from_slice::<Probe<'_>>(raw).ok();
        let parsed = probe.is_some() || serde_json::from_slice::<IgnoredAny>(raw).is_ok();
        if !parsed {
            // pi drops lines it cannot parse; they are kept here.
            out.extend_from_slice(raw);
            out.push(b'\n');
            continue;
        }
        let simple = probe.as_ref().is_some_and(|p| {
            !matches!(p.ty, Some("session") | Some("compaction"))
                && p.id.is_none()
                && p.parent_id.is_none()
                && p.message.as_ref().and_then(|m| m.role) != Some("hookMessage")
        });
        if version < 2 && simple {
            if let Some(body) = object_body(raw) {
                let id = next_id(scheme, line.number, &mut used);
                if let (Some(k), Some(p)) = (known.as_deref_mut(), &probe) {
                    // Labels are left to the index: it reads more of them.
                    if p.ty != Some("label") {
                        k.push(Known {
                            offset: out.len(),
                            ty: Ty::of(p.ty, p.message.as_ref().and_then(|m| m.role)),
                            id: id.as_str().into(),
                            parent_id: prev.as_deref().map(Into::into),
                        });
                    }
                }
                out.extend_from_slice(body);
                if body.len() > 1 {
                    out.push(b',');
                }
                out.extend_from_slice(b"\"id\":");
                push_json_str(&mut out, &id);
                out.extend_from_slice(b",\"parentId\":");
                match &prev {
                    Some(p) => push_json_str(&mut out, p),
                    None => out.extend_from_slice(b"null"),
                }
                out.extend_from_slice(b"}\n");
                ids.push(Some(id.clone()));
                prev = Some(id);
                continue;
            }
        }
        let untouched_v2 = probe.as_ref().is_some_and(|p| {
            p.ty != Some("session")
                && p.message.as_ref().and_then(|m| m.role) != Some("hookMessage")
        });
        if version >= 2 && untouched_v2 {
            out.extend_from_slice(raw);
            out.push(b'\n');
            ids.push(None);
            continue;
        }
        let Ok(mut v) = serde_json::from_slice::<Value>(raw) else {
            out.extend_from_slice(raw);
            out.push(b'\n');
            continue;
        };
        let id = (version < 2).then(|| next_id(scheme, line.number, &mut used));
        migrate_value(&mut v, version, id, &mut ids, &mut prev);
        match serde_json::to_vec(&v) {
            Ok(b) => out.extend_from_slice(&b),
            Err(_) => out.extend_from_slice(raw),
        }
        out.push(b'\n');
    }
    out
}

fn next_id(scheme: IdScheme, line: u64, used: &mut HashSet<String>) -> String {
    let id = match scheme {
        IdScheme::Random => new_entry_id(used),
        IdScheme::LineNumbers => format!("line{line}"),
    };
    used.insert(id.clone());
    id
}

fn migrate_value(
    v: &mut Value,
    version: u64,
    new_id: Option<String>,
    ids: &mut Vec<Option<String>>,
    prev: &mut Option<String>,
) {
    let Value::Object(obj) = v else {
        ids.push(None);
        return;
    };
    let ty = obj
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if ty == "session" {
        obj.insert("version".into(), CURRENT_VERSION.into());
        ids.push(None);
        return;
    }
    if let (true, Some(id)) = (version < 2, new_id) {
        obj.insert("id".into(), id.clone().into());
        obj.insert(
            "parentId".into(),
            prev.clone().map(Value::String).unwrap_or(Value::Null),
        );
        ids.push(Some(id.clone()));
        *prev = Some(id);
        if ty == "compaction" {
            if let Some(index) = obj.get("firstKeptEntryIndex").and_then(Value::as_f64) {
                let target = (index >= 0.0 && index.fract() == 0.0)
                    .then(|| ids.get(index as usize).cloned().flatten())
                    .flatten();
                if let Some(t) = target {
                    obj.insert("firstKeptEntryId".into(), t.into());
                }
                obj.shift_remove("firstKeptEntryIndex");
            }
        }
    } else {
        ids.push(None);
    }
    if version < 3 && ty == "message" {
        if let Some(Value::Object(m)) = obj.get_mut("message") {
            if m.get("role").and_then(Value::as_str) == Some("hookMessage") {
                m.insert("role".into(), "custom".into());
            }
        }
    }
}

/// Returns the line without its closing brace (and the white space around
/// it), when it is one JSON object.
fn object_body(raw: &[u8]) -> Option<&[u8]> {
    let start = raw.iter().position(|b| !b.is_ascii_whitespace())?;
    let end = raw.iter().rposition(|b| !b.is_ascii_whitespace())?;
    if raw[start] != b'{' || raw[end] != b'}' || end <= start {
        return None;
    }
    let body = &raw[start..end];
    let last = body
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .unwrap_or(0);
    Some(&body[..=last])
}

fn push_json_str(out: &mut Vec<u8>, s: &str) {
    // Ids are generated hex or copied from the file; serde escapes either.
    match serde_json::to_vec(s) {
        Ok(b) => out.extend_from_slice(&b),
        Err(_) => out.extend_from_slice(b"\"\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(b: &[u8]) -> Vec<Value> {
        b.split(|&c| c == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect()
    }

    #[test]
    fn v1_gets_a_chain_of_ids_and_kept_indexes_become_ids() {
        let src = br#"{"type":"session","id":"s","timestamp":"t","cwd":"/"}
{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}
{ "type":"message","message":{"role":"hookMessage","content":"h"} }
not json
{"type":"compaction","summary":"s","firstKeptEntryIndex":2,"tokensBefore":3}
{}
"#;
        let out = migrate_bytes(src, 1);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.contains("\nnot json\n"));
        let v: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        assert_eq!(v[0]["version"], 3);
        let keys: Vec<&String> = v[0].as_object().unwrap().keys().collect();
        assert_eq!(keys.last().unwrap().as_str(), "version");
        assert_eq!(v[1]["parentId"], Value::Null);
        assert_eq!(v[2]["parentId"], v[1]["id"]);
        assert_eq!(v[2]["message"]["role"], "custom");
        assert_eq!(v[3]["firstKeptEntryId"], v[2]["id"]);
        assert!(v[3].get("firstKeptEntryIndex").is_none());
        let keys: Vec<&String> = v[3].as_object().unwrap().keys().collect();
        assert_eq!(
            keys[keys.len() - 3..],
            ["id", "parentId", "firstKeptEntryId"]
        );
        assert_eq!(v[4]["parentId"], v[3]["id"]);
        assert_eq!(v[1]["id"].as_str().unwrap().len(), 8);
        let _ = lines;
    }
}
