//! Session text made safe and fitted to the screen: sanitized (the CLI's
//! one sanitizer), tabs as spaces, cut or wrapped to a width in terminal
//! cells, with the searched words marked.

use agentlog_formats::render::sanitize::sanitize_line;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Returns `s` as one safe line: tabs as spaces, every control, escape and
/// bidi character shown visibly, newlines as spaces.
pub fn one_line(s: &str) -> String {
    let s = s.replace(['\t', '\n', '\r'], " ");
    sanitize_line(&s).into_owned()
}

/// Returns the lines of `s`, each made safe like [`one_line`], wrapped to
/// `width` cells.
pub fn wrapped(s: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in s.lines() {
        let line = sanitize_line(&line.replace('\t', "    ")).into_owned();
        wrap_into(&line, width.max(1), &mut out);
    }
    out
}

/// Cuts a safe line to `width` cells, ending in `…` when cut.
pub fn fit(s: &str, width: usize) -> String {
    let mut used = 0;
    let mut out = String::new();
    let total: usize = s.chars().map(|c| c.width().unwrap_or(0)).sum();
    if total <= width {
        return s.to_string();
    }
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// Splits a safe line into pieces of at most `width` cells, at a space
/// when there is one.
fn wrap_into(line: &str, width: usize, out: &mut Vec<String>) {
    let mut rest = line.trim_end();
    if rest.is_empty() {
        out.push(String::new());
        return;
    }
    while !rest.is_empty() {
        let mut used = 0;
        let mut end = rest.len();
        let mut last_space = None;
        for (i, c) in rest.char_indices() {
            let w = c.width().unwrap_or(0);
            if used + w > width {
                end = i;
                break;
            }
            if c == ' ' {
                last_space = Some(i);
            }
            used += w;
        }
        if end < rest.len() && !rest[end..].starts_with(' ') {
            if let Some(sp) = last_space.filter(|&sp| sp > 0) {
                end = sp;
            }
            if end == 0 {
                // A character wider than the line: it goes alone.
                end = rest.chars().next().map_or(rest.len(), char::len_utf8);
            }
        }
        out.push(rest[..end].to_string());
        rest = rest[end..].trim_start_matches(' ');
    }
}

/// Returns `line` with every occurrence of `words` (lowercase) that starts
/// a word drawn bold and underlined, in `base` otherwise.
pub fn marked(line: String, words: &[String], base: Style) -> Line<'static> {
    if words.is_empty() {
        return Line::from(Span::styled(line, base));
    }
    let lower = line.to_ascii_lowercase();
    let mut marks: Vec<(usize, usize)> = Vec::new();
    for w in words {
        let mut from = 0;
        while let Some(at) = lower[from..].find(w.as_str()) {
            let start = from + at;
            let end = start + w.len();
            let starts_word = lower[..start]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            if starts_word && line.is_char_boundary(start) && line.is_char_boundary(end) {
                marks.push((start, end));
            }
            from = end;
        }
    }
    if marks.is_empty() {
        return Line::from(Span::styled(line, base));
    }
    marks.sort_unstable();
    let hit = base.add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
    let mut spans = Vec::new();
    let mut pos = 0;
    for (s, e) in marks {
        if s < pos {
            continue;
        }
        if s > pos {
            spans.push(Span::styled(line[pos..s].to_string(), base));
        }
        spans.push(Span::styled(line[s..e].to_string(), hit));
        pos = e;
    }
    if pos < line.len() {
        spans.push(Span::styled(line[pos..].to_string(), base));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn session_text_is_shown_never_obeyed() {
        let s = "a\x1b[2J\x1b]0;t\x07b\u{202e}c\u{9b}d";
        let l = one_line(s);
        assert!(
            !l.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{l:?}"
        );
        for w in wrapped(s, 5) {
            assert!(
                !w.chars().any(|c| c.is_control() || c == '\u{202e}'),
                "{w:?}"
            );
        }
    }

    #[test]
    fn lines_wrap_at_spaces_and_fit_the_width() {
        assert_eq!(wrapped("one two three", 7), ["one two", "three"]);
        assert_eq!(wrapped("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrapped("a\n\nb", 4), ["a", "", "b"]);
        assert_eq!(wrapped("日本語です", 4), ["日本", "語で", "す"]);
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
    }

    #[test]
    fn words_are_marked_where_they_start_a_word() {
        let l = marked(
            "Tokenizer and retokenize".into(),
            &["tokeni".into()],
            Style::default(),
        );
        let bold: Vec<String> = l
            .spans
            .iter()
            .filter(|s| s.style.add_modifier.contains(Modifier::BOLD))
            .map(|s| s.content.to_string())
            .collect();
        assert_eq!(bold, ["Tokeni"]);
    }
}
