//! The title a session list shows: the session's title, or else the first
//! line of its first prompt, on one line and cut to [`LISTED_TITLE_CHARS`].

use std::borrow::Cow;

/// At most this many characters of a listed title (the last one `…` when
/// it was cut).
pub const LISTED_TITLE_CHARS: usize = 200;

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

/// The characters of a title and a first prompt that a listing reads (an
/// index of the catalog holds them, so that listing every session reads
/// no row of the catalog itself): enough to decide the listed title unless
/// the text starts with this many blank characters, or its first line is
/// longer than this but, trimmed, not longer than [`LISTED_TITLE_CHARS`].
pub const LISTED_PREFIX_CHARS: usize = 256;

/// [`listed_title`] of a title and a first prompt of which only the first
/// [`LISTED_PREFIX_CHARS`] characters are known (a text that long may go
/// on), when they decide it; `None` when the whole texts are needed. The
/// title is borrowed from them unless it had to be cut.
pub fn listed_title_of_prefixes<'a>(
    title: Option<&'a str>,
    first_prompt: Option<&'a str>,
) -> Option<Option<Cow<'a, str>>> {
    let may_go_on =
        |s: &str| s.len() >= LISTED_PREFIX_CHARS && s.chars().count() >= LISTED_PREFIX_CHARS;
    let text = match title {
        Some(t) if !t.trim().is_empty() => Some(t),
        // Blank as far as it is known.
        Some(t) if may_go_on(t) => return None,
        _ => first_prompt,
    };
    let Some(text) = text else {
        return Some(None);
    };
    let goes_on = may_go_on(text);
    let mut rest = text;
    while let Some((line, after)) = rest.split_once('\n') {
        let line = line.trim();
        if !line.is_empty() {
            return Some(Some(cut_title(line)));
        }
        rest = after;
    }
    let last = rest.trim();
    if !goes_on {
        return Some((!last.is_empty()).then(|| cut_title(last)));
    }
    // The last line may go on past what is known: it decides only when it
    // is cut anyway (what follows, trimmed or not, is cut off).
    (last.chars().count() > LISTED_TITLE_CHARS).then(|| Some(cut_title(last)))
}

/// `line` cut as a listed title, borrowed when it is short enough.
fn cut_title(line: &str) -> Cow<'_, str> {
    if line.len() <= LISTED_TITLE_CHARS || line.chars().count() <= LISTED_TITLE_CHARS {
        Cow::Borrowed(line)
    } else {
        Cow::Owned(truncate(line, LISTED_TITLE_CHARS))
    }
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

    /// The first `LISTED_PREFIX_CHARS` characters of `s`, as SQLite's
    /// `substr` gives them.
    fn prefix(s: &str) -> &str {
        match s.char_indices().nth(LISTED_PREFIX_CHARS) {
            Some((i, _)) => &s[..i],
            None => s,
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn prefixes_give_the_whole_texts_title_whenever_they_decide_it(
            t in proptest::option::of("[ a\n\r\té\u{3000}\u{85}]{0,600}"),
            p in proptest::option::of("[ b\n\té✓]{0,600}"),
            pad in 0usize..300,
        ) {
            // Long lines, and blank starts around the prefix's length.
            let p = p.map(|p| format!("{}{p}", " ".repeat(pad)));
            let want = listed_title(t.as_deref(), p.as_deref());
            if let Some(got) = listed_title_of_prefixes(t.as_deref().map(prefix), p.as_deref().map(prefix)) {
                proptest::prop_assert_eq!(got.map(Cow::into_owned), want);
            }
        }
    }

    #[test]
    fn prefixes_decide_the_title_of_ordinary_texts_and_not_of_a_long_blank_start() {
        let long_line = "word ".repeat(100);
        let decided = [
            (Some("Fix the parser"), None),
            (None, Some("  \n\n Add a test\nthen more")),
            (Some(" "), Some("prompt")),
            (None, None),
            (None, Some(long_line.as_str())),
        ];
        for (t, p) in decided {
            let got = listed_title_of_prefixes(t.map(prefix), p.map(prefix));
            assert_eq!(
                got.map(|g| g.map(Cow::into_owned)),
                Some(listed_title(t, p)),
                "{t:?} {p:?}"
            );
        }
        // A short first line is borrowed.
        assert!(matches!(
            listed_title_of_prefixes(Some("Fix it\nmore"), None),
            Some(Some(Cow::Borrowed("Fix it")))
        ));
        let blank_start = format!("{}then the prompt", " ".repeat(300));
        assert_eq!(
            listed_title_of_prefixes(None, Some(prefix(&blank_start))),
            None
        );
        let blank_title = " ".repeat(300);
        assert_eq!(
            listed_title_of_prefixes(Some(prefix(&blank_title)), Some("prompt")),
            None
        );
        // A first line that may go on and may still be short once trimmed.
        let spaced = format!("x{}y", " ".repeat(300));
        assert_eq!(listed_title_of_prefixes(None, Some(prefix(&spaced))), None);
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
