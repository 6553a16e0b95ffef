//! Writing a session back into the format it was read from, byte for byte
//! where nothing changed.
//!
//! The writers rebuild every record from the model, so a record comes back
//! as the same JSON value but not always as the same text: key order,
//! spacing and escapes are the writer's. [`keep_unchanged`] puts the
//! original text back wherever the written record has the same value as
//! the original record at that place, so a session read and written back
//! unchanged is the same file, and a changed one (redacted, appended)
//! differs only in the records that changed. Values are compared, never
//! text alone: a record whose value differs is written as the writer wrote
//! it.

use serde_json::Value;

/// How many lines of the original past the expected one may be passed over
/// to find the written record's original.
const LOOKAHEAD: usize = 16;

/// Returns `written` with each record (a JSON line, or the whole document)
/// whose value equals the original's record at that place replaced by the
/// original's bytes.
pub fn keep_unchanged(written: &[u8], original: &[u8]) -> Vec<u8> {
    if let Some(b) = document(original) {
        let a = serde_json::from_slice::<Value>(written).ok();
        return if a.as_ref() == Some(&b) {
            original.to_vec()
        } else {
            written.to_vec()
        };
    }
    let old = lines(original);
    let new = lines(written);
    let mut at = 0;
    let mut out = Vec::with_capacity(written.len());
    for (i, line) in new.iter().enumerate() {
        // Blank lines of the original stay where they were.
        while at < old.len() && is_blank(old[at]) {
            out.extend_from_slice(old[at]);
            at += 1;
        }
        // The original's next lines the writer did not write (a line that
        // is not JSON, say) are passed over when a later one matches.
        let written_value = value(line);
        let same_as = |old_line: &[u8]| match (&written_value, value(old_line)) {
            (Some(a), Some(b)) => *a == b,
            _ => *line == old_line,
        };
        if let Some(k) = (at..old.len().min(at + LOOKAHEAD)).find(|&k| same_as(old[k])) {
            at = k;
        }
        let same = at < old.len() && same_as(old[at]);
        if same {
            // The original's line, with its own ending (the original's last
            // line may have none; more lines follow here).
            out.extend_from_slice(old[at]);
            if !old[at].ends_with(b"\n") && i + 1 < new.len() {
                out.push(b'\n');
            }
            at += 1;
        } else {
            out.extend_from_slice(line);
        }
    }
    // Blank lines that ended the original end it here too.
    if old[at.min(old.len())..].iter().all(|l| is_blank(l)) {
        for l in &old[at.min(old.len())..] {
            out.extend_from_slice(l);
        }
    }
    out
}

/// The bytes as one JSON document spread over several lines (a document
/// on one line is compared as a line).
fn document(bytes: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.trim().lines().count() <= 1 {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// Lines with their endings.
fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').collect()
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

fn value(line: &[u8]) -> Option<Value> {
    serde_json::from_slice(line).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn unchanged_records_keep_their_text() {
        let original = b"{\"b\":1,\"a\":2}\n\n{\"x\": \"\\u00e9\"}\n{\"k\":3}\n\n";
        let written = b"{\"a\":2,\"b\":1}\n{\"x\":\"\xc3\xa9\"}\n{\"k\":3}\n";
        assert_eq!(keep_unchanged(written, original), original.to_vec());
        // A last line without its newline stays so.
        let original = b"{\"b\":1,\"a\":2}\n{\"k\":3}";
        let written = b"{\"a\":2,\"b\":1}\n{\"k\":3}\n";
        assert_eq!(keep_unchanged(written, original), original.to_vec());
    }

    #[test]
    fn changed_records_are_written_as_the_writer_wrote_them() {
        let original = b"{\"b\":1,\"a\":2}\n{\"secret\":\"sk-1\", \"n\":1}\n";
        let written = b"{\"a\":2,\"b\":1}\n{\"n\":1,\"secret\":\"[REDACTED]\"}\n{\"new\":true}\n";
        assert_eq!(
            keep_unchanged(written, original),
            b"{\"b\":1,\"a\":2}\n{\"n\":1,\"secret\":\"[REDACTED]\"}\n{\"new\":true}\n".to_vec()
        );
    }

    #[test]
    fn a_document_is_kept_whole_or_not_at_all() {
        let original = b"{\n  \"b\": 1,\n  \"a\": [1, 2]\n}\n";
        assert_eq!(
            keep_unchanged(b"{\"a\":[1,2],\"b\":1}", original),
            original.to_vec()
        );
        assert_eq!(
            keep_unchanged(b"{\"a\":[1,3],\"b\":1}", original),
            b"{\"a\":[1,3],\"b\":1}".to_vec()
        );
    }

    #[test]
    fn lines_the_writer_dropped_are_passed_over() {
        let original = b"{\"a\":1}\n{\"broken\n{\"b\":2}\n";
        assert_eq!(
            keep_unchanged(b"{\"a\": 1}\n{\"b\": 2}\n", original),
            b"{\"a\":1}\n{\"b\":2}\n".to_vec()
        );
    }

    #[test]
    fn numbers_compare_by_value() {
        let original = b"{\"t\":1.50}\n";
        assert_eq!(
            keep_unchanged(b"{\"t\":1.5}\n", original),
            original.to_vec()
        );
        assert_eq!(
            keep_unchanged(b"{\"t\":1.6}\n", original),
            b"{\"t\":1.6}\n".to_vec()
        );
    }
}
