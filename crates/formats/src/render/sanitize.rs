//! The one terminal sanitizer: everything agentlog prints for a human
//! passes through it, because session text is attacker-controlled (a web
//! page an agent read, a file in a cloned repository).
//!
//! - C0 control characters (ESC, BEL, CR, backspace, …), DEL and the C1
//!   controls (U+0080–U+009F, among them the one-byte CSI and OSC) are shown
//!   visibly: ESC becomes the four characters `\x1b`, U+009B becomes
//!   `\u{9b}`. Newline is kept by [`sanitize`] (multi-line text) and
//!   shown as `\n` by [`sanitize_line`] (one-line fields: titles, ids,
//!   paths, model and tool names); tab likewise.
//! - Bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
//!   U+061C) and the line and paragraph separators U+2028/U+2029 are shown
//!   as `\u{202e}` and so on, so they cannot reorder what follows them.
//! - [`truncate`] cuts after sanitizing, on character boundaries, and never
//!   inside a shown escape: a cut text cannot leave a sequence open.
//!
//! `--json` output is never sanitized: it is exact, and JSON escapes every
//! control character itself.
//!
//! ```
//! use agentlog_formats::render::sanitize::{sanitize, sanitize_line, truncate};
//!
//! assert_eq!(sanitize("red \x1b[31m\nnext"), "red \\x1b[31m\nnext");
//! assert_eq!(sanitize_line("a\r\nb"), "a\\x0d\\nb");
//! assert_eq!(sanitize_line("abc\u{202e}def"), "abc\\u{202e}def");
//! assert_eq!(truncate("ab\x1b]0;x\x07", 4), "ab…");
//! ```

use std::borrow::Cow;

/// How one character is printed.
enum Shown {
    /// As itself.
    Plain(char),
    /// As this visible escape.
    Escaped(String),
}

fn is_bidi_or_separator(c: char) -> bool {
    matches!(
        c,
        '\u{061c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Returns true when `c` is printed as an escape (`keep_newlines`: newline
/// and tab are printed as themselves).
fn needs_escape(c: char, keep_newlines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_newlines,
        c if c.is_control() => true, // C0, DEL, C1
        c => is_bidi_or_separator(c),
    }
}

fn show(c: char, keep_newlines: bool) -> Shown {
    if !needs_escape(c, keep_newlines) {
        return Shown::Plain(c);
    }
    Shown::Escaped(match c {
        '\n' => "\\n".to_string(),
        '\t' => "\\t".to_string(),
        c if (c as u32) < 0x80 => format!("\\x{:02x}", c as u32),
        c => format!("\\u{{{:x}}}", c as u32),
    })
}

fn clean(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    if !any_escape(s, keep_newlines) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        // A CR ending a line (CRLF) is harmless: keep the line end only.
        if keep_newlines && c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        match show(c, keep_newlines) {
            Shown::Plain(c) => out.push(c),
            Shown::Escaped(e) => out.push_str(&e),
        }
    }
    Cow::Owned(out)
}

/// Returns multi-line text safe for a terminal: newlines and tabs kept,
/// every other control character and every bidi control shown as an
/// escape. Borrowed when nothing needed escaping.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    clean(s, true)
}

/// Returns a one-line field (title, id, path, model or tool name) safe for
/// a terminal: like [`sanitize`], and newlines and tabs shown as `\n`
/// and `\t`.
pub fn sanitize_line(s: &str) -> Cow<'_, str> {
    clean(s, false)
}

/// How many characters `c` is shown as in a one-line field.
fn shown_len(c: char) -> usize {
    if !needs_escape(c, false) {
        1
    } else if matches!(c, '\n' | '\t') {
        2
    } else if (c as u32) < 0x80 {
        4
    } else {
        // `\u{` and `}` around the hex digits.
        let digits = (32 - (c as u32).leading_zeros()).div_ceil(4) as usize;
        4 + digits
    }
}

/// True when every byte of `s` is printable ASCII (space to `~`): shown as
/// it is, one column each. Most titles, paths and ids are; checking bytes
/// is several times quicker than going through the characters (`ls` of
/// 12,000 sessions sanitized for a tenth of its time).
fn is_printable_ascii(s: &str) -> bool {
    s.bytes().all(is_printable)
}

/// True for a printable ASCII byte (space to `~`).
fn is_printable(b: u8) -> bool {
    (b' '..=b'~').contains(&b)
}

/// True when some character of `s` [`needs_escape`], looking at bytes:
/// only an ASCII control or DEL, or a character whose UTF-8 starts with
/// 0xC2 (the C1 controls), 0xD8 (U+061C) or 0xE2 (the other bidi controls
/// and separators) can; only those characters are decoded.
fn any_escape(s: &str, keep_newlines: bool) -> bool {
    s.bytes().enumerate().any(|(i, b)| match b {
        b'\n' | b'\t' => !keep_newlines,
        0..=0x1f | 0x7f => true,
        0xc2 | 0xd8 | 0xe2 => s[i..]
            .chars()
            .next()
            .is_some_and(|c| needs_escape(c, keep_newlines)),
        _ => false,
    })
}

/// Appends `c` as it is shown in a one-line field.
fn push_shown(out: &mut String, c: char) {
    match show(c, false) {
        Shown::Plain(c) => out.push(c),
        Shown::Escaped(e) => out.push_str(&e),
    }
}

/// Returns `s` sanitized as a one-line field and cut to at most `max`
/// characters, the last of them `…` when it was cut. Escapes count with
/// their shown length and are never split.
pub fn truncate(s: &str, max: usize) -> String {
    // Printable ASCII up to the cut: one column per byte.
    let plain = s
        .bytes()
        .take(max.saturating_add(1))
        .take_while(|&b| is_printable(b))
        .count();
    if plain == s.len() && s.len() <= max {
        return s.to_string();
    }
    if plain >= max && s.len() > max {
        let mut out = String::with_capacity(max + 2);
        if max > 0 {
            out.push_str(&s[..max - 1]);
            out.push('…');
        }
        return out;
    }
    let mut out = String::with_capacity(s.len().min(max.saturating_mul(4)));
    let mut used = 0usize;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let len = shown_len(c);
        // Room for this piece, and for an ellipsis if more follows.
        let reserve = usize::from(chars.peek().is_some());
        if used + len + reserve > max {
            if used + len <= max && chars.peek().is_none() {
                push_shown(&mut out, c);
                return out;
            }
            if max > 0 {
                out.push('…');
            }
            return out;
        }
        push_shown(&mut out, c);
        used += len;
    }
    out
}

/// Returns the first `max` characters of `s` sanitized as a one-line field,
/// without an ellipsis (for short ids); an escape that does not fit whole
/// is left out.
pub fn head(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let n = shown_len(c);
        if used + n > max {
            break;
        }
        push_shown(&mut out, c);
        used += n;
    }
    out
}

/// Returns `s` sanitized as a one-line field and cut to its last `max`
/// characters, the first of them `…` when it was cut (for paths, whose
/// end names the project). Escapes are never split.
pub fn truncate_start(s: &str, max: usize) -> String {
    if is_printable_ascii(s) {
        return match max {
            _ if s.len() <= max => s.to_string(),
            0 => String::new(),
            _ => format!("…{}", &s[s.len() - (max - 1)..]),
        };
    }
    let total: usize = s.chars().map(shown_len).sum();
    if total <= max {
        return sanitize_line(s).into_owned();
    }
    if max == 0 {
        return String::new();
    }
    // The characters kept, from the end.
    let mut used = 0;
    let mut from = s.len();
    for (i, c) in s.char_indices().rev() {
        let n = shown_len(c);
        if used + n + 1 > max {
            break;
        }
        used += n;
        from = i;
    }
    let mut out = String::with_capacity(3 + s.len() - from);
    out.push('…');
    for c in s[from..].chars() {
        push_shown(&mut out, c);
    }
    out
}

/// Returns the first non-empty line of `s` (trimmed), sanitized and cut to
/// `max` characters like [`truncate`].
pub fn one_line(s: &str, max: usize) -> String {
    let line = s.trim().lines().next().unwrap_or("").trim();
    truncate(line, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_every_control_visibly() {
        for c in (0u32..0x20).chain(0x7f..0xa0) {
            let Some(c) = char::from_u32(c) else { continue };
            let s = format!("a{c}b");
            let line = sanitize_line(&s);
            assert!(!line.chars().any(|x| x.is_control()), "{c:?}: {line:?}");
            if c != '\n' && c != '\t' {
                let text = sanitize(&s);
                assert!(!text.chars().any(|x| x.is_control()), "{c:?}: {text:?}");
            }
        }
        assert_eq!(
            sanitize("\x1b]8;;file:///etc\x07x"),
            "\\x1b]8;;file:///etc\\x07x"
        );
        assert_eq!(sanitize("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(sanitize("ok\rfake"), "ok\\x0dfake");
        assert_eq!(sanitize("dos\r\nline\r"), "dos\nline\\x0d");
    }

    #[test]
    fn neutralises_bidi_controls() {
        for c in [
            '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}',
            '\u{2068}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}',
        ] {
            let s = sanitize(&format!("x{c}y")).into_owned();
            assert!(!s.contains(c), "{c:?}");
            assert!(s.starts_with("x\\u{"), "{s}");
        }
    }

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(sanitize("héllo\nwörld\t"), Cow::Borrowed(_)));
        assert!(matches!(sanitize_line("héllo"), Cow::Borrowed(_)));
    }

    #[test]
    fn truncation_never_splits_an_escape() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abcd", 4), "abcd");
        assert_eq!(truncate("ab\x1b[2J", 5), "ab…");
        assert_eq!(truncate("ab\x1b[2J", 7), "ab\\x1b…");
        assert_eq!(truncate("ééééé", 3), "éé…");
        assert_eq!(truncate("x", 0), "");
        for max in 0..30 {
            let t = truncate("t\x1b]0;evil\x07\u{202e}end", max);
            assert!(t.chars().count() <= max, "{max}: {t:?}");
            assert!(!t.chars().any(|c| c.is_control() || c == '\u{202e}'));
            // A cut never leaves half of a `\x..` or `\u{..}` escape.
            let body = t.trim_end_matches('…');
            assert!(!body.ends_with("\\x1") && !body.ends_with('\\'), "{t:?}");
            assert!(
                body.matches("\\u{").count() == body.matches('}').count(),
                "{t:?}"
            );
        }
    }

    #[test]
    fn heads_and_tails_keep_escapes_whole() {
        assert_eq!(head("abcdefghij", 8), "abcdefgh");
        assert_eq!(head("abc\x1bdef", 5), "abc");
        assert_eq!(head("abc\x1bdef", 8), "abc\\x1bd");
        assert_eq!(truncate_start("/home/me/project", 8), "…project");
        assert_eq!(truncate_start("/a/\x1b]0;x", 6), "…]0;x");
        assert_eq!(truncate_start("short", 8), "short");
        for max in 0..20 {
            let t = truncate_start("/p/\x1b[2J/\u{202e}q", max);
            assert!(t.chars().count() <= max, "{t:?}");
            assert!(!t.chars().any(|c| c.is_control() || c == '\u{202e}'));
            assert!(!t.starts_with("…x1b") && !t.starts_with("…1b"), "{t:?}");
        }
    }

    /// The cutting functions as first written, a piece at a time: what
    /// the ones above must still give.
    mod reference {
        use super::super::{show, Shown};

        fn pieces(s: &str) -> Vec<String> {
            s.chars()
                .map(|c| match show(c, false) {
                    Shown::Plain(c) => c.to_string(),
                    Shown::Escaped(e) => e,
                })
                .collect()
        }

        pub fn truncate(s: &str, max: usize) -> String {
            let all = pieces(s);
            let mut out = String::new();
            let mut used = 0;
            for (i, p) in all.iter().enumerate() {
                let len = p.chars().count();
                let reserve = usize::from(i + 1 < all.len());
                if used + len + reserve > max {
                    if used + len <= max && i + 1 == all.len() {
                        out.push_str(p);
                        return out;
                    }
                    if max > 0 {
                        out.push('…');
                    }
                    return out;
                }
                out.push_str(p);
                used += len;
            }
            out
        }

        pub fn head(s: &str, max: usize) -> String {
            let mut out = String::new();
            let mut used = 0;
            for p in pieces(s) {
                let n = p.chars().count();
                if used + n > max {
                    break;
                }
                out.push_str(&p);
                used += n;
            }
            out
        }

        pub fn truncate_start(s: &str, max: usize) -> String {
            let all = pieces(s);
            let total: usize = all.iter().map(|p| p.chars().count()).sum();
            if total <= max {
                return all.concat();
            }
            let mut kept: Vec<&str> = Vec::new();
            let mut used = 0;
            for p in all.iter().rev() {
                let n = p.chars().count();
                if used + n + 1 > max {
                    break;
                }
                kept.push(p);
                used += n;
            }
            if max == 0 {
                return String::new();
            }
            kept.reverse();
            format!("…{}", kept.concat())
        }
    }

    proptest::proptest! {
        #[test]
        fn cutting_gives_what_a_piece_at_a_time_gives(
            s in proptest::prop_oneof![
                "(\\PC|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}\\u{10000}-\\u{10ffff}]){0,40}",
                // Printable ASCII (cut by bytes), perhaps with one character
                // that is not near the end.
                "[ -~]{0,60}(…|é|\\x1b|\\u{202e}|\n)?[ -~]{0,5}",
            ],
            max in 0usize..70,
        ) {
            proptest::prop_assert_eq!(truncate(&s, max), reference::truncate(&s, max));
            proptest::prop_assert_eq!(head(&s, max), reference::head(&s, max));
            proptest::prop_assert_eq!(truncate_start(&s, max), reference::truncate_start(&s, max));
            if is_printable_ascii(&s) {
                proptest::prop_assert_eq!(sanitize_line(&s), s.as_str());
            }
        }

        #[test]
        fn any_escape_agrees_with_the_characters(
            s in "(\\PC|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{61c}\\u{200e}\\u{200f}\\u{2028}-\\u{202e}\\u{2066}-\\u{2069}…–’])*",
            keep in proptest::bool::ANY,
        ) {
            proptest::prop_assert_eq!(
                any_escape(&s, keep),
                s.chars().any(|c| needs_escape(c, keep))
            );
        }
    }

    #[test]
    fn ascii_then_one_other_character_is_cut_as_any_text_is() {
        // Every place of one character that is not printable ASCII after
        // and before printable ASCII, at every width around it: where the
        // byte cut ends and the character cut begins.
        for special in ["", "…", "é", "\x1b", "\u{202e}", "\n", "\u{10348}"] {
            for before in 0..12 {
                for after in 0..3 {
                    let s = format!("{}{special}{}", "a".repeat(before), "b".repeat(after));
                    for max in 0..18 {
                        assert_eq!(
                            truncate(&s, max),
                            reference::truncate(&s, max),
                            "{s:?} {max}"
                        );
                        assert_eq!(
                            truncate_start(&s, max),
                            reference::truncate_start(&s, max),
                            "{s:?} {max}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn one_line_takes_the_first_line() {
        assert_eq!(one_line("  hello\nworld", 80), "hello");
        assert_eq!(one_line("ab\x1bc\nd", 80), "ab\\x1bc");
    }
}
