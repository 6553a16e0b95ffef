//! Escaping: every piece of session text goes through here before it
//! reaches a page.

use std::fmt::Write;

/// Returns `s` with `& < > " '` replaced by entities: safe in element
/// content and in quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    push_esc(&mut out, s);
    out
}

/// Appends `s` escaped (see [`esc`]) to `out`.
pub fn push_esc(out: &mut String, s: &str) {
    let mut last = 0;
    for (i, b) in s.bytes().enumerate() {
        let rep = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            b'\'' => "&#39;",
            // Control characters other than tab and newlines are shown as
            // replacement characters: they are never meant for a reader.
            0..=8 | 11 | 12 | 14..=31 | 127 => "\u{fffd}",
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(rep);
        last = i + 1;
    }
    out.push_str(&s[last..]);
}

/// Returns the element id of the entry `id`: `e-` and the id when it holds
/// only letters, digits, `-` and `_`, else `x-` and its bytes in hex.
pub fn anchor(id: &str) -> String {
    if !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        format!("e-{id}")
    } else {
        let mut s = String::from("x-");
        for b in id.bytes().take(128) {
            let _ = write!(s, "{b:02x}");
        }
        s
    }
}

/// Returns `s` percent-encoded for a URL query value.
pub fn url_enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// True when a link target from session text may be followed: `http`,
/// `https` and `mailto` URLs and in-page anchors. Everything else
/// (`javascript:`, `data:`, `vbscript:`, relative paths into this server, …)
/// is shown as text instead.
pub fn safe_href(url: &str) -> bool {
    let u: String = url
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .take(16)
        .collect::<String>()
        .to_ascii_lowercase();
    u.starts_with("https://")
        || u.starts_with("http://")
        || u.starts_with("mailto:")
        || (u.starts_with('#') && !url.contains(['"', '<', '>']))
}

/// Returns at most `max` bytes of `s`, cut at a character boundary.
pub fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `s` as a title of at most `max` bytes and a `…`: whole when it fits,
/// else cut at the last space in its last third (at `max` when there is
/// none: one long word), with `…` saying it was cut.
pub fn clip_title(s: &str, max: usize) -> String {
    let c = clip(s, max);
    if c.len() == s.len() {
        return s.to_string();
    }
    let at_word = match c.rfind(char::is_whitespace) {
        Some(i) if i >= max * 2 / 3 => &c[..i],
        _ => c,
    };
    format!("{}…", at_word.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_cut_at_a_word_with_an_ellipsis() {
        assert_eq!(clip_title("short", 10), "short");
        assert_eq!(clip_title("the tokenizer panics", 16), "the tokenizer…");
        assert_eq!(clip_title("abcdefghijklmnop", 8), "abcdefgh…");
        assert_eq!(clip_title("é é é é é", 5), "é é…");
    }

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc("<img src=x onerror='a()'>&\""),
            "&lt;img src=x onerror=&#39;a()&#39;&gt;&amp;&quot;"
        );
        assert_eq!(esc("a\u{1b}[31mb"), "a\u{fffd}[31mb");
    }

    #[test]
    fn anchors_are_plain() {
        assert_eq!(anchor("abc-1_2"), "e-abc-1_2");
        assert_eq!(anchor("\"><x"), "x-223e3c78");
    }

    #[test]
    fn only_web_links_are_followed() {
        assert!(safe_href("https://example.com/x"));
        assert!(!safe_href("javascript:alert(1)"));
        assert!(!safe_href(" JaVa\tScript:alert(1)"));
        assert!(!safe_href("data:text/html,<script>"));
        assert!(!safe_href("/api/x"));
    }
}
