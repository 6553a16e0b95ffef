//! Standard output that survives closed pipes, and small printing helpers.

use agentlog_formats::render::sanitize::sanitize;
use serde::Serialize;
use std::io::{self, IsTerminal, Write};

/// What to do about an error, in this command line's terms, attached to
/// it with [`hinted`]: `main` prints it after the error and its causes,
/// never in their place.
#[derive(Debug)]
pub struct Hint(pub String);

impl std::fmt::Display for Hint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Returns `err` with `hint` attached (see [`Hint`]).
pub fn hinted(err: impl Into<anyhow::Error>, hint: impl Into<String>) -> anyhow::Error {
    err.into().context(Hint(hint.into()))
}

/// True when the error (or a cause) is a closed pipe: `agentlog … | head`
/// is a normal use, not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(io::ErrorKind::BrokenPipe))
    })
}

/// When standard output is a pipe, makes its buffer 1 MiB (the most an
/// unprivileged process may by default) instead of 64 KiB: a long output
/// then waits for the reader far less often (`ls --json` of 122,000
/// sessions read through a pipe: 350 → 293 ms). Nothing happens for a
/// file, a terminal, or when the system refuses.
pub fn widen_stdout_pipe() {
    #[cfg(target_os = "linux")]
    {
        const WIDE: usize = 1 << 20;
        // A pipe made wider still by someone else stays so.
        if rustix::pipe::fcntl_getpipe_size(io::stdout()).is_ok_and(|n| n < WIDE) {
            let _ = rustix::pipe::fcntl_setpipe_size(io::stdout(), WIDE);
        }
    }
}

/// True when standard output is a terminal.
pub fn stdout_is_terminal() -> bool {
    io::stdout().is_terminal()
}

/// True when colours should be used on standard output (a terminal, and
/// `NO_COLOR` unset).
pub fn use_color() -> bool {
    stdout_is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Writes `text`, meant for a human, to standard output through the
/// terminal sanitizer ([`agentlog_formats::render::sanitize`]): session
/// text never reaches the terminal as control sequences.
pub fn print(text: &str) -> anyhow::Result<()> {
    print_exact(&sanitize(text))
}

/// Writes `text` to standard output as it is: for data (JSON, a session
/// file) and for renderings that sanitized their fields themselves and
/// add colours of their own.
pub fn print_exact(text: &str) -> anyhow::Result<()> {
    let mut o = io::stdout().lock();
    o.write_all(text.as_bytes())?;
    o.flush()?;
    Ok(())
}

/// Writes `text` to standard error through the terminal sanitizer.
pub fn eprint(text: &str) {
    let mut e = io::stderr().lock();
    let _ = e.write_all(sanitize(text).as_bytes());
    let _ = e.flush();
}

/// `eprintln!` through the terminal sanitizer.
#[macro_export]
macro_rules! eprintln_clean {
    () => {
        $crate::out::eprint("\n")
    };
    ($($t:tt)*) => {
        $crate::out::eprint(&format!("{}\n", format_args!($($t)*)))
    };
}

/// `eprint!` through the terminal sanitizer.
#[macro_export]
macro_rules! eprint_clean {
    ($($t:tt)*) => {
        $crate::out::eprint(&format!("{}", format_args!($($t)*)))
    };
}

/// Writes `value` as pretty JSON and a newline to standard output.
///
/// The JSON is built first and written in one go, so a closed pipe is the
/// plain I/O error [`is_broken_pipe`] recognises (serde_json's writer
/// wraps it in its own error).
pub fn print_json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    // JSON is exact (it escapes control characters itself).
    print_exact(&text)
}

/// Returns `n` with thousands separated by commas: `1,234,567`.
pub fn group(n: u64) -> String {
    let mut out = String::with_capacity(26);
    push_grouped(n, &mut out);
    out
}

/// Appends `n` with thousands separated by commas to `out`.
pub fn push_grouped(n: u64, out: &mut String) {
    let mut digits = [0u8; 20];
    let mut len = 0;
    let mut rest = n;
    loop {
        digits[len] = b'0' + (rest % 10) as u8;
        len += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for i in (0..len).rev() {
        out.push(char::from(digits[i]));
        if i > 0 && i % 3 == 0 {
            out.push(',');
        }
    }
}

/// Returns the plural of an English noun: `entry` -> `entries`, `match`
/// -> `matches`, `file` -> `files`.
pub fn plural(noun: &str) -> String {
    let b = noun.as_bytes();
    let consonant_y = b.len() >= 2
        && b[b.len() - 1] == b'y'
        && !matches!(b[b.len() - 2], b'a' | b'e' | b'i' | b'o' | b'u');
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if ["s", "x", "ch", "sh"].iter().any(|e| noun.ends_with(e)) {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

/// Returns `n` (digits grouped) and the noun, plural unless `n` is 1:
/// `1 file`, `2 files`, `12,345 entries`.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {}", group(n), plural(noun))
    }
}

/// Lays out `rows` under `head` in left-aligned columns two spaces apart
/// (cells sanitized; widths in characters), one line each.
pub fn table<const N: usize>(head: &[&str; N], rows: &[[String; N]]) -> String {
    let clean = |s: &str| agentlog_formats::render::sanitize::sanitize_line(s).into_owned();
    let head: [String; N] = head.map(clean);
    let rows: Vec<[String; N]> = rows.iter().map(|r| r.clone().map(|c| clean(&c))).collect();
    let mut widths = [0usize; N];
    for r in std::iter::once(&head).chain(&rows) {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut s = String::new();
    for r in std::iter::once(&head).chain(&rows) {
        let cells: Vec<String> = r
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_english() {
        assert_eq!(count(1, "hit"), "1 hit");
        assert_eq!(count(0, "hit"), "0 hits");
        assert_eq!(count(2, "entry"), "2 entries");
        assert_eq!(count(1_234_567, "match"), "1,234,567 matches");
        assert_eq!(count(3, "day"), "3 days");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(0), "0");
    }

    #[test]
    fn grouping_digits_writes_what_formatting_the_number_does() {
        for n in [0, 7, 10, 999, 1_000, 12_345, 100_000, 999_999, 1_000_000]
            .into_iter()
            .chain([u64::MAX, u64::MAX / 7, 1 << 40])
        {
            let plain = n.to_string();
            let want: String = plain
                .chars()
                .enumerate()
                .flat_map(|(i, c)| {
                    let comma = i > 0 && (plain.len() - i) % 3 == 0;
                    comma.then_some(',').into_iter().chain([c])
                })
                .collect();
            let mut out = String::from("x");
            push_grouped(n, &mut out);
            assert_eq!(out, format!("x{want}"), "{n}");
        }
    }
}
