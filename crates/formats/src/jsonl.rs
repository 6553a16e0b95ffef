//! Line splitting and tolerant JSON-lines parsing shared by the readers.

use crate::Diagnostic;
use serde_json::Value;
use std::path::Path;

/// One line of a JSON-lines file.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// 1-based line number.
    pub number: u64,
    /// The bytes without the newline (and without a `\r` before it).
    pub bytes: &'a [u8],
    /// False for a last line with no newline: possibly still being written.
    pub terminated: bool,
    /// Byte offset of the line's start in the input.
    pub offset: usize,
}

/// Splits `bytes` into lines, skipping a UTF-8 byte-order mark.
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = Line<'_>> {
    lines_at(bytes, bom_len(bytes), 0)
}

/// The length of the UTF-8 byte-order mark `bytes` starts with, if any.
fn bom_len(bytes: &[u8]) -> usize {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    }
}

/// The lines of `bytes` from offset `start` (a line's start), numbered on
/// from `before`, the number of lines before it.
fn lines_at(bytes: &[u8], start: usize, before: u64) -> impl Iterator<Item = Line<'_>> {
    let mut pos = start;
    let mut number = before;
    std::iter::from_fn(move || {
        if pos >= bytes.len() {
            return None;
        }
        number += 1;
        let rest = &bytes[pos..];
        let (len, terminated) = match memchr::memchr(b'\n', rest) {
            Some(i) => (i, true),
            None => (rest.len(), false),
        };
        let mut line = &rest[..len];
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        let item = Line {
            number,
            bytes: line,
            terminated,
            offset: pos,
        };
        pos += len + usize::from(terminated);
        Some(item)
    })
}

/// Calls `f` with each line read from `input`, as [`lines`] splits bytes
/// (a byte-order mark skipped, `\r` before the newline dropped), holding
/// one line in memory at a time.
pub fn for_each_line(
    mut input: impl std::io::BufRead,
    mut f: impl FnMut(&Line<'_>),
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut number = 0u64;
    let mut offset = 0usize;
    loop {
        buf.clear();
        let n = input.read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        let mut start = 0;
        if number == 0 && buf.starts_with(b"\xEF\xBB\xBF") {
            start = 3;
            offset = 3;
        }
        number += 1;
        let terminated = buf.last() == Some(&b'\n');
        let mut end = buf.len() - usize::from(terminated);
        if end > start && buf[end - 1] == b'\r' {
            end -= 1;
        }
        f(&Line {
            number,
            bytes: &buf[start..end],
            terminated,
            offset,
        });
        offset += n - start;
    }
}

/// True when the line is empty or only white space.
pub fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_whitespace)
}

/// Parses every non-blank line as JSON. A line that is not valid UTF-8 or
/// not valid JSON becomes a diagnostic (`torn-tail` when it is the last line
/// and has no newline, a write that was cut short) and is skipped.
///
/// A large input is parsed in two halves at once, the second on another
/// thread (readers that need every record before reading the first, such
/// as Codex's, spent half their time here).
pub fn parse_values(path: &Path, bytes: &[u8], diags: &mut Vec<Diagnostic>) -> Vec<(u64, Value)> {
    let start = bom_len(bytes);
    // Where the second half starts: after the first newline past the middle.
    let cut = (bytes.len() >= PIPELINE_MIN && two_threads())
        .then(|| {
            let half = bytes.len() / 2;
            memchr::memchr(b'\n', &bytes[half..]).map(|i| half + i + 1)
        })
        .flatten()
        .filter(|&cut| cut > start);
    let Some(cut) = cut else {
        return parse_lines(path, lines(bytes), diags);
    };
    let before = memchr::memchr_iter(b'\n', &bytes[start..cut]).count() as u64;
    let second = |d: &mut Vec<Diagnostic>| parse_lines(path, lines_at(bytes, cut, before), d);
    let (mut out, mut rest, rest_diags) = std::thread::scope(|scope| {
        let other = std::thread::Builder::new()
            .name("jsonl-parse".into())
            .spawn_scoped(scope, || {
                let mut d = Vec::new();
                (second(&mut d), d)
            });
        let first = parse_lines(path, lines_at(&bytes[..cut], start, 0), diags);
        let (rest, d) = match other {
            Ok(h) => match h.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            // No thread to be had: the second half here too.
            Err(_) => {
                let mut d = Vec::new();
                (second(&mut d), d)
            }
        };
        (first, rest, d)
    });
    out.append(&mut rest);
    diags.extend(rest_diags);
    out
}

/// Parses the non-blank `lines`, recording a diagnostic for each that is
/// not JSON.
fn parse_lines<'a>(
    path: &Path,
    lines: impl Iterator<Item = Line<'a>>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<(u64, Value)> {
    let mut out = Vec::new();
    for line in lines {
        if is_blank(line.bytes) {
            continue;
        }
        if let Some(v) = parse_line(path, &line, diags) {
            out.push((line.number, v));
        }
    }
    out
}

/// Inputs at least this large are parsed on a second thread while the
/// caller maps what is already parsed (see [`each_value`], and
/// [`each_value_read`], which readers use from this size on).
pub const PIPELINE_MIN: usize = 8 << 20;

/// Lines parsed together on the parsing thread: about this many bytes.
const BATCH_BYTES: usize = 1 << 20;

/// What a parsed line costs in a batch beside its bytes: its place in the
/// batch and the smallest value's allocations.
const LINE_COST: usize =
    std::mem::size_of::<(u64, Result<Value, Diagnostic>, Option<String>)>() + 64;

/// Calls `f` with the number and the value of every non-blank line of
/// `bytes`, in order, or with the diagnostic of a line that is not JSON (as
/// [`parse_line`] makes it).
///
/// A large input is parsed on another thread, a batch of lines ahead of `f`:
/// a reader's mapping of records into the model takes as long as parsing
/// them, and the two then run side by side (a 113 MB Claude Code session's
/// first screen waited for both in turn). At most a few batches are
/// parsed ahead, so memory does not grow with the file.
pub fn each_value(path: &Path, bytes: &[u8], mut f: impl FnMut(u64, Result<Value, Diagnostic>)) {
    each_value_keeping(path, bytes, &|_| false, |n, v, _| f(n, v));
}

/// [`each_value`], which also passes `f` the text of each line whose value
/// `keep_text` holds (it runs where the line is parsed; `None` for the
/// others): for a reader that keeps some records as the text they were.
pub fn each_value_keeping(
    path: &Path,
    bytes: &[u8],
    keep_text: &(dyn Fn(&Value) -> bool + Sync),
    mut f: impl FnMut(u64, Result<Value, Diagnostic>, Option<String>),
) {
    let parallel = bytes.len() >= PIPELINE_MIN && two_threads();
    pipelined(
        path,
        parallel,
        |each| lines(bytes).for_each(|line| each(&line)),
        keep_text,
        &mut f,
    );
}

/// [`each_value`] over a stream: the parsing thread reads the lines from
/// `input` as it parses them, so the input is never whole in memory (read
/// to be shown, a 113 MB session held its file beside the model it became:
/// a fifth of the memory the read touched). Returns the error that stopped
/// reading `input`, after `f` has had every line read before it.
pub fn each_value_read(
    path: &Path,
    input: impl std::io::BufRead + Send,
    mut f: impl FnMut(u64, Result<Value, Diagnostic>),
) -> std::io::Result<()> {
    each_value_read_keeping(path, input, &|_| false, |n, v, _| f(n, v))
}

/// [`each_value_read`], keeping the text of the lines whose value
/// `keep_text` holds (see [`each_value_keeping`]).
pub fn each_value_read_keeping(
    path: &Path,
    input: impl std::io::BufRead + Send,
    keep_text: &(dyn Fn(&Value) -> bool + Sync),
    mut f: impl FnMut(u64, Result<Value, Diagnostic>, Option<String>),
) -> std::io::Result<()> {
    pipelined(
        path,
        two_threads(),
        |each| for_each_line(input, |line| each(line)),
        keep_text,
        &mut f,
    )
}

/// True when this machine runs two threads at once.
fn two_threads() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() > 1)
}

/// Calls `f` with the number and the value (or diagnostic) of every
/// non-blank line `split` gives, in order, and the line's text when
/// `keep_text` holds for its value; returns what `split` returns.
/// When `parallel`, `split` runs and the lines are parsed on another
/// thread, batches of about [`BATCH_BYTES`] at most four ahead of `f`;
/// otherwise (or when no thread is to be had) all of it runs here.
fn pipelined<R: Send>(
    path: &Path,
    parallel: bool,
    split: impl FnOnce(&mut dyn FnMut(&Line<'_>)) -> R + Send,
    keep_text: &(dyn Fn(&Value) -> bool + Sync),
    f: &mut dyn FnMut(u64, Result<Value, Diagnostic>, Option<String>),
) -> R {
    if !parallel {
        return in_turn(path, split, keep_text, f);
    }
    // The thread takes `split` from here; if it cannot be started, this
    // thread does.
    let slot = std::sync::Mutex::new(Some(split));
    let piped = std::thread::scope(|scope| {
        type Batch = Vec<(u64, Result<Value, Diagnostic>, Option<String>)>;
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(4);
        let slot = &slot;
        let parser = std::thread::Builder::new()
            .name("jsonl-parse".into())
            .spawn_scoped(scope, move || {
                let split = slot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take()?;
                let mut batch = Vec::new();
                let mut size = 0;
                let mut gone = false;
                let r = split(&mut |line| {
                    if gone || is_blank(line.bytes) {
                        return;
                    }
                    // A line costs its bytes and what holds its value: a
                    // batch of a million tiny lines took 200 MB.
                    size += line.bytes.len() + LINE_COST;
                    let (v, text) = parse_keeping(path, line, keep_text);
                    batch.push((line.number, v, text));
                    if size >= BATCH_BYTES {
                        size = 0;
                        gone = tx.send(std::mem::take(&mut batch)).is_err();
                    }
                });
                if !batch.is_empty() {
                    let _ = tx.send(batch);
                }
                Some(r)
            })
            .ok()?;
        for batch in rx {
            for (n, v, text) in batch {
                f(n, v, text);
            }
        }
        match parser.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });
    if let Some(r) = piped {
        return r;
    }
    // No thread was started, so the lines are still here.
    let Some(split) = slot
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    else {
        unreachable!("the parsing thread took the lines and gave no result");
    };
    in_turn(path, split, keep_text, f)
}

/// [`pipelined`] on this thread alone.
fn in_turn<R>(
    path: &Path,
    split: impl FnOnce(&mut dyn FnMut(&Line<'_>)) -> R,
    keep_text: &(dyn Fn(&Value) -> bool + Sync),
    f: &mut dyn FnMut(u64, Result<Value, Diagnostic>, Option<String>),
) -> R {
    split(&mut |line| {
        if !is_blank(line.bytes) {
            let (v, text) = parse_keeping(path, line, keep_text);
            f(line.number, v, text);
        }
    })
}

/// Parses `line`, with its text when `keep_text` holds for its value.
fn parse_keeping(
    path: &Path,
    line: &Line<'_>,
    keep_text: &(dyn Fn(&Value) -> bool + Sync),
) -> (Result<Value, Diagnostic>, Option<String>) {
    let v = parse(path, line);
    let text = v
        .as_ref()
        .is_ok_and(keep_text)
        .then(|| String::from_utf8_lossy(line.bytes).into_owned());
    (v, text)
}

/// Parses one line, recording a diagnostic when it is not valid JSON.
pub fn parse_line(path: &Path, line: &Line<'_>, diags: &mut Vec<Diagnostic>) -> Option<Value> {
    parse(path, line).map_err(|d| diags.push(d)).ok()
}

/// Parses one line, or returns the diagnostic saying why it is not JSON.
fn parse(path: &Path, line: &Line<'_>) -> Result<Value, Diagnostic> {
    serde_json::from_slice::<Value>(line.bytes).map_err(|e| line_error(path, line, &e))
}

/// Returns the diagnostic for a line that failed to parse.
pub fn line_error(path: &Path, line: &Line<'_>, err: &serde_json::Error) -> Diagnostic {
    if std::str::from_utf8(line.bytes).is_err() {
        Diagnostic::error(
            path,
            Some(line.number),
            "invalid-utf8",
            "line is not valid UTF-8; skipped",
        )
    } else if !line.terminated {
        Diagnostic::warning(
            path,
            Some(line.number),
            "torn-tail",
            format!("last line is incomplete (no newline, {err}); a write was cut short or is in progress; skipped"),
        )
    } else {
        Diagnostic::error(
            path,
            Some(line.number),
            "invalid-json",
            format!("not valid JSON ({err}); skipped"),
        )
    }
}

/// Returns the string at `key` of a JSON object.
pub fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The value at the JSON pointer `pointer` (`/a/b/0`) inside the object
/// `m`: what `Value::pointer` gives, for a record already taken apart into
/// its map.
pub fn pointer_in<'a>(m: &'a serde_json::Map<String, Value>, pointer: &str) -> Option<&'a Value> {
    let rest = pointer.strip_prefix('/')?;
    let (first, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let v = m.get(first)?;
    if tail.is_empty() {
        Some(v)
    } else {
        v.pointer(&format!("/{tail}"))
    }
}

/// Returns the first `n` bytes of `bytes` as lossy text, for detection.
pub fn head_text(bytes: &[u8], n: usize) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(&bytes[..bytes.len().min(n)])
}

/// Parses the first complete line of `head` as JSON, for detection.
pub fn first_value(head: &[u8]) -> Option<Value> {
    lines(head)
        .find(|l| !is_blank(l.bytes) && l.terminated)
        .and_then(|l| serde_json::from_slice(l.bytes).ok())
}

#[cfg(test)]
mod tests {

    /// An input over [`PIPELINE_MIN`] (parsed in batches on another thread,
    /// or in two halves) starting with `first`: valid lines, blank ones,
    /// broken ones, a line that is not UTF-8 (with `\r\n`), one starting
    /// with a byte-order mark (not skipped there) and a torn tail.
    fn large_mixed_input(first: &[u8]) -> Vec<u8> {
        let mut input = first.to_vec();
        let mut n = 0u64;
        while input.len() < PIPELINE_MIN + 3 * BATCH_BYTES {
            n += 1;
            match n % 1000 {
                7 => input.extend_from_slice(b"  \n"),
                13 => input.extend_from_slice(b"{\"broken\": \n"),
                17 => input.extend_from_slice(b"{\"bytes\":\"\xFF\"}\r\n"),
                19 => input.extend_from_slice(b"\xEF\xBB\xBF{\"bom\":1}\n"),
                _ => input.extend_from_slice(
                    format!(
                        "{{\"n\":{n},\"pad\":\"{}\"}}\n",
                        "x".repeat((n % 300) as usize)
                    )
                    .as_bytes(),
                ),
            }
        }
        input.extend_from_slice(b"{\"torn\":");
        input
    }

    #[test]
    fn values_parsed_on_a_second_thread_come_in_order_with_their_errors() {
        // Parsed on the parsing thread, across many batches.
        let input = large_mixed_input(b"");
        let path = Path::new("big.jsonl");
        let summary = |n: u64, v: Result<Value, Diagnostic>| match v {
            Ok(v) => (n, v.to_string()),
            Err(d) => (n, format!("{} {:?}", d.code, d.line)),
        };
        let mut want = Vec::new();
        for line in lines(&input) {
            if !is_blank(line.bytes) {
                let v = serde_json::from_slice::<Value>(line.bytes)
                    .map_err(|e| line_error(path, &line, &e));
                want.push(summary(line.number, v));
            }
        }
        let mut got = Vec::new();
        each_value(path, &input, |n, v| got.push(summary(n, v)));
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the values or their order differ");
        let codes = |code: &str| got.iter().filter(|(_, s)| s.starts_with(code)).count();
        assert!(codes("invalid-json") > 5 && codes("invalid-utf8") > 5);
        assert_eq!(codes("torn-tail"), 1);
        // A small input takes the same path as before, on this thread.
        let mut small = Vec::new();
        each_value(path, b"{\"a\":1}\n\n{", |n, v| small.push(summary(n, v)));
        assert_eq!(
            small,
            [
                (1, "{\"a\":1}".to_string()),
                (3, "torn-tail Some(3)".into())
            ]
        );
    }

    #[test]
    fn texts_kept_where_the_lines_are_parsed_are_the_lines() {
        let input = large_mixed_input(b"{ \"n\" : 0 ,\"spaced\": true }\n");
        let path = Path::new("big.jsonl");
        let keep = |v: &Value| {
            v.get("n")
                .and_then(Value::as_u64)
                .is_some_and(|n| n % 97 == 0)
        };
        let mut want = Vec::new();
        for line in lines(&input) {
            if let Ok(v) = serde_json::from_slice::<Value>(line.bytes) {
                if keep(&v) {
                    want.push((
                        line.number,
                        String::from_utf8_lossy(line.bytes).into_owned(),
                    ));
                }
            }
        }
        assert!(want.len() > 100 && want[0].1.contains(" : 0 ,"));
        let mut got = Vec::new();
        let mut others = 0;
        each_value_keeping(path, &input, &keep, |n, v, text| match text {
            Some(t) => got.push((n, t)),
            None => others += usize::from(v.is_ok_and(|v| keep(&v))),
        });
        assert!(got == want, "the kept texts differ");
        assert_eq!(others, 0, "a value kept had no text");
        let mut streamed = Vec::new();
        each_value_read_keeping(path, &input[..], &keep, |n, _, text| {
            streamed.extend(text.map(|t| (n, t)))
        })
        .unwrap_or_default();
        assert!(streamed == want, "the kept texts of the stream differ");
    }

    #[test]
    fn values_parsed_in_two_halves_are_the_values_parsed_in_one() {
        // Parsed in two halves, a byte-order mark and CRLF at the start too.
        let input = large_mixed_input(b"\xEF\xBB\xBF{\"first\":true}\r\n");
        let path = Path::new("big.jsonl");
        let mut want_diags = Vec::new();
        let want = parse_lines(path, lines(&input), &mut want_diags);
        let mut diags = Vec::new();
        let got = parse_values(path, &input, &mut diags);
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the values or their numbers differ");
        let text = |d: &[Diagnostic]| d.iter().map(|d| d.to_string()).collect::<Vec<_>>();
        assert_eq!(text(&diags), text(&want_diags));
        let codes = |code: &str| diags.iter().filter(|d| d.code == code).count();
        assert!(codes("invalid-json") > 5 && codes("invalid-utf8") > 5);
        assert_eq!(codes("torn-tail"), 1);
        assert_eq!(got[0], (1, serde_json::json!({"first": true})));
    }

    #[test]
    fn streaming_lines_are_the_same_as_split_lines() {
        for input in [
            &b""[..],
            b"{}\n",
            b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \n{\"b\":2}",
            b"one\ntwo\r\nthree",
            b"\n\n",
        ] {
            let want: Vec<(u64, Vec<u8>, bool, usize)> = lines(input)
                .map(|l| (l.number, l.bytes.to_vec(), l.terminated, l.offset))
                .collect();
            let mut got = Vec::new();
            for_each_line(input, |l| {
                got.push((l.number, l.bytes.to_vec(), l.terminated, l.offset))
            })
            .unwrap_or_default();
            assert_eq!(got, want, "{input:?}");
        }
    }

    use super::*;

    #[test]
    fn splits_lines_and_marks_the_torn_tail() {
        let v: Vec<_> = lines(b"\xEF\xBB\xBFa\r\nb\n\nc").collect();
        assert_eq!(v.len(), 4);
        assert_eq!(v[0].bytes, b"a");
        assert_eq!(v[1].offset, 6);
        assert!(v[2].terminated && v[2].bytes.is_empty());
        assert!(!v[3].terminated);
        assert_eq!(v[3].number, 4);
    }

    #[test]
    fn reports_bad_lines_and_keeps_the_rest() {
        let mut d = Vec::new();
        let vals = parse_values(
            Path::new("f.jsonl"),
            b"{\"a\":1}\nnope\n\xff\n{\"b\":",
            &mut d,
        );
        assert_eq!(vals.len(), 1);
        let codes: Vec<_> = d.iter().map(|d| (d.line, d.code)).collect();
        assert_eq!(
            codes,
            [
                (Some(2), "invalid-json"),
                (Some(3), "invalid-utf8"),
                (Some(4), "torn-tail")
            ]
        );
    }
}
