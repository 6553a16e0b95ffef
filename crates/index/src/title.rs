//! The title a session list shows: the session's title, or else the first
//! line of its first prompt, on one line and cut to [`LISTED_TITLE_CHARS`].

/// At most this many characters of a listed title (the last one `…` when
/// it was cut).
pub const LISTED_TITLE_CHARS: usize = 200;

/// The index keeps this title in its catalog (`sessions.listed`): a change
/// to what it gives needs a new schema version, whose migration makes the
/// column again (`schema.rs`), or the titles listed stay the old ones.
///
/// Returns the title a list shows for a session with `title` and
/// `first_prompt`: the title unless it is blank, else the first prompt;
/// its first non-blank line, trimmed and cut ([`truncate`]).
pub fn listed_title(title: Option<&str>, first_prompt: Option<&str>) -> Option<String> {
    title
        .filter(|t| !t.trim().is_empty())
        .or(first_prompt)
        .and_then(first_line)
}

/// [`listed_title`] of owned strings, which keeps the string itself when
/// it is already one listed line (a row read as a list shows it).
pub fn listed_title_owned(title: Option<String>, first_prompt: Option<String>) -> Option<String> {
    let t = title.filter(|t| !t.trim().is_empty()).or(first_prompt)?;
    if is_listed_line(&t) {
        return Some(t);
    }
    first_line(&t)
}

/// True when `t` is its own first line: not blank, trimmed, without a line
/// break, and no longer than a listed title.
fn is_listed_line(t: &str) -> bool {
    !t.is_empty()
        && !t.contains('\n')
        && t.trim().len() == t.len()
        && (t.len() <= LISTED_TITLE_CHARS || t.chars().count() <= LISTED_TITLE_CHARS)
}

/// The first non-blank line of `t`, trimmed and cut.
fn first_line(t: &str) -> Option<String> {
    t.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| truncate(l, LISTED_TITLE_CHARS))
}

/// `s` when it has at most `max` characters, else its first `max - 1`
/// and `…` (cut by byte offset: collecting characters one by one was a
/// tenth of listing every session).
pub fn truncate(s: &str, max: usize) -> String {
    // ASCII up to the cut: characters are bytes.
    if max > 0 && s.as_bytes().iter().take(max + 1).all(u8::is_ascii) {
        if s.len() <= max {
            return s.to_string();
        }
        let mut t = String::with_capacity(max - 1 + '…'.len_utf8());
        t.push_str(&s[..max - 1]);
        t.push('…');
        return t;
    }
    let mut starts = s.char_indices().map(|(i, _)| i).skip(max.saturating_sub(1));
    match (starts.next(), starts.next()) {
        (Some(cut), Some(_)) if max > 0 => {
            let mut t = String::with_capacity(cut + '…'.len_utf8());
            t.push_str(&s[..cut]);
            t.push('…');
            t
        }
        _ if max == 0 && !s.is_empty() => "…".to_string(),
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cut, character by character, as it was written first.
    fn by_chars(s: &str, max: usize) -> String {
        if s.chars().count() <= max {
            return s.to_string();
        }
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }

    #[test]
    fn truncating_cuts_where_counting_characters_does() {
        for s in [
            "",
            "a",
            "ab",
            "abc",
            "héllo wörld",
            "→✓«»",
            "日本語のテキスト",
            "a\u{301}bc",
            "plain ascii, longer than the cut",
            "ascii first, then é and ✓",
            "abcdefghij…",
            "abcdefghijk",
        ] {
            for max in 0..40 {
                assert_eq!(truncate(s, max), by_chars(s, max), "{s:?} {max}");
            }
        }
    }

    #[test]
    fn a_listed_title_is_the_first_line_of_the_title_or_else_the_prompt() {
        assert_eq!(
            listed_title(Some("  \n Fix it \n more"), Some("prompt")).as_deref(),
            Some("Fix it")
        );
        assert_eq!(
            listed_title(Some(" \t"), Some("\n\n  first\r\nsecond")).as_deref(),
            Some("first")
        );
        assert_eq!(listed_title(None, Some(" \n ")), None);
        assert_eq!(listed_title(None, None), None);
        let long = "é".repeat(300);
        let cut = listed_title(None, Some(&long)).unwrap_or_default();
        assert_eq!(cut.chars().count(), LISTED_TITLE_CHARS);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn the_owned_form_gives_the_same_title_and_keeps_a_listed_line() {
        let cases = [
            (Some("Title"), None),
            (Some(" padded "), None),
            (Some(""), Some("a\nb")),
            (None, Some("\u{3000}ideographic space\u{3000}")),
            (None, Some("line\r")),
            (Some("\u{85}next line"), None),
        ];
        let long = "x".repeat(250);
        let longer = "ü".repeat(201);
        let exact = "ü".repeat(200);
        let cases = cases.into_iter().chain([
            (Some(long.as_str()), None),
            (Some(longer.as_str()), None),
            (Some(exact.as_str()), None),
        ]);
        for (t, p) in cases {
            let want = listed_title(t, p);
            let got = listed_title_owned(t.map(String::from), p.map(String::from));
            assert_eq!(got, want, "{t:?} {p:?}");
            // A listed title is listed as itself.
            if let Some(w) = &want {
                assert_eq!(listed_title(Some(w), None).as_ref(), Some(w));
            }
        }
    }
}
