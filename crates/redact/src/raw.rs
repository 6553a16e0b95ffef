//! Redacting the bytes of a native session file, keeping its structure.
//!
//! JSON and JSON Lines files (every writable format but SpecStory's
//! markdown) are walked token by token: only the string values that hold a
//! secret are rewritten, re-encoded as JSON strings, and every other byte
//! (spacing, key order, number spelling, escapes of untouched strings) stays
//! as it was. Other text files are redacted as text.

use crate::report::Report;
use crate::rules::Rules;
use crate::walk::{Clean, Walk};
use crate::RedactError;
use serde_json::Value;

/// Returns `bytes` with every secret replaced, and what was found.
pub(crate) fn redact(rules: &Rules, bytes: &[u8]) -> Result<(Vec<u8>, Report), RedactError> {
    if bytes.contains(&0) {
        return Err(RedactError::Binary);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| RedactError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    let mut report = Report::default();
    let first = text.trim_start().as_bytes().first().copied();
    let out = if matches!(first, Some(b'{') | Some(b'[')) {
        json_text(rules, text, &mut report)
    } else {
        plain_text(rules, text, 0, "", &mut report)
    };
    Ok((out.into_bytes(), report))
}

/// Redacts `text` as plain text; findings get their line (counting from
/// line `base_line` + 1) and `field`.
fn plain_text(
    rules: &Rules,
    text: &str,
    base_line: u64,
    field: &str,
    report: &mut Report,
) -> String {
    let hits = rules.find(text);
    if hits.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut line = base_line + 1;
    for h in hits {
        line += text[at..h.start].bytes().filter(|&b| b == b'\n').count() as u64;
        let mut s = text[h.start..h.end].to_string();
        let mut w = Walk {
            rules,
            report,
            clean: &mut Clean::default(),
            entry: None,
            line: Some(line),
        };
        w.force(&mut s, h.rule, &|| field.to_string());
        out.push_str(&text[at..h.start]);
        out.push_str(&s);
        line += text[h.start..h.end].bytes().filter(|&b| b == b'\n').count() as u64;
        at = h.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Redacts a JSON or JSON Lines text string token by string token.
fn json_text(rules: &Rules, text: &str, report: &mut Report) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut line: u64 = 1;
    // Start of the text not yet copied to `out`.
    let mut copied = 0;
    // The last object key seen, for field rules and locations.
    let mut key = String::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b'"' => {
                let start = i;
                let mut j = i + 1;
                let mut escaped = false;
                while j < b.len() && b[j] != b'"' && b[j] != b'\n' {
                    escaped |= b[j] == b'\\';
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                if j >= b.len() || b[j] != b'"' {
                    // An unterminated string (a torn or broken line): the
                    // rest of the line is redacted as text.
                    let end = j.min(b.len());
                    let seg = plain_text(rules, &text[start..end], line - 1, &key, report);
                    out.push_str(&text[copied..start]);
                    out.push_str(&seg);
                    copied = end;
                    i = end;
                    continue;
                }
                let end = j + 1;
                let token = &text[start..end];
                let is_key = b[end..]
                    .iter()
                    .find(|c| !c.is_ascii_whitespace())
                    .is_some_and(|&c| c == b':');
                let decoded: Option<String> = if escaped {
                    serde_json::from_str(token).ok()
                } else {
                    Some(text[start + 1..j].to_string())
                };
                match decoded {
                    Some(s) if is_key => key = s,
                    Some(s) => {
                        if let Some(new) = redact_value(rules, &key, s, line, report) {
                            out.push_str(&text[copied..start]);
                            out.push_str(&new);
                            copied = end;
                        }
                    }
                    None => {
                        let seg = plain_text(rules, token, line - 1, &key, report);
                        if seg != token {
                            out.push_str(&text[copied..start]);
                            out.push_str(&seg);
                            copied = end;
                        }
                    }
                }
                i = end;
            }
            _ => {
                // Outside strings valid JSON holds no text; a line that is
                // not JSON is checked as text up to its next quote.
                let start = i;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += 1;
                }
                let seg = &text[start..i];
                if seg.len() >= 8 && seg.bytes().any(|c| c.is_ascii_alphabetic()) {
                    let red = plain_text(rules, seg, line - 1, "", report);
                    if red != seg {
                        out.push_str(&text[copied..start]);
                        out.push_str(&red);
                        copied = i;
                    }
                }
            }
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Redacts one decoded JSON string value under `key`; returns its new JSON
/// encoding when it changed.
fn redact_value(
    rules: &Rules,
    key: &str,
    s: String,
    line: u64,
    report: &mut Report,
) -> Option<String> {
    let mut v = serde_json::Map::new();
    v.insert(key.to_string(), Value::String(s));
    let before = report.len();
    let mut w = Walk {
        rules,
        report,
        clean: &mut Clean::default(),
        entry: None,
        line: Some(line),
    };
    w.map(&mut v, &String::new);
    if report.len() == before {
        return None;
    }
    let new = v.remove(key)?;
    serde_json::to_string(&new).ok()
}
