//! Words as the SQLite index sees them, as PostgreSQL `tsvector`s and
//! `tsquery`s.
//!
//! The SQLite index splits text with FTS5's `unicode61` tokenizer
//! (`remove_diacritics 2`): a word is a run of letters and digits, lower
//! case, accents removed. PostgreSQL's own parser splits differently (it
//! keeps `src/main.rs` or `foo-bar` as one token, and has no accent
//! folding without an extension), so the same query would find other
//! entries. Here the words are cut in Rust by the same rule and sent as
//! ready `tsvector` literals; queries become `tsquery` literals of the same
//! words. PostgreSQL then only matches and ranks (GIN index, `@@`, `<->`
//! for phrases, `:*` for prefixes), and both backends find the same entries.

use unicode_normalization::char::{decompose_canonical, is_combining_mark};

/// PostgreSQL keeps positions up to this value (larger ones are clamped).
const MAX_POS: usize = 16_383;
/// Lexemes longer than this are refused by PostgreSQL.
const MAX_LEXEME: usize = 2_000;

/// Returns the words of `text`, each with its byte range in `text`.
pub fn words(text: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() || is_combining_mark(c) {
            if cur.is_empty() && !is_combining_mark(c) {
                start = i;
            }
            fold(c, &mut cur);
        } else if !cur.is_empty() {
            out.push((std::mem::take(&mut cur), start..i));
        }
    }
    if !cur.is_empty() {
        out.push((cur, start..text.len()));
    }
    out
}

/// Appends `c` lower case without accents.
fn fold(c: char, out: &mut String) {
    for l in c.to_lowercase() {
        decompose_canonical(l, |d| {
            if !is_combining_mark(d) {
                out.push(d);
            }
        });
    }
}

/// Builds the `tsvector` literal of a document's columns. Each column has
/// its weight (A: message text, B: tool calls, C: thinking, D: tool
/// output) and starts two positions after the previous one, so a phrase
/// never spans two columns.
pub fn tsvector(columns: &[(&str, char)]) -> String {
    let mut lexemes: std::collections::BTreeMap<String, Vec<(usize, char)>> = Default::default();
    let mut pos = 1usize;
    for (text, weight) in columns {
        for (w, _) in words(text) {
            if w.len() <= MAX_LEXEME {
                let ps = lexemes.entry(w).or_default();
                // PostgreSQL keeps at most 256 positions per lexeme.
                if ps.len() < 256 {
                    ps.push((pos.min(MAX_POS), *weight));
                }
            }
            pos += 1;
        }
        pos += 1;
    }
    let mut s = String::new();
    for (w, ps) in lexemes {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push('\'');
        s.push_str(&w);
        s.push_str("':");
        let mut last = 0;
        let mut first = true;
        for (p, wt) in ps {
            if p == last {
                continue;
            }
            last = p;
            if !first {
                s.push(',');
            }
            first = false;
            s.push_str(&p.to_string());
            s.push(wt);
        }
    }
    s
}

/// Translates a query's terms to a `tsquery` literal; `None` when a term
/// has no word at all (it cannot match anything).
pub fn tsquery(t: &agentlog_index::Terms) -> Option<String> {
    let term = |t: &agentlog_index::Term| -> Option<String> {
        let ws = words(&t.text);
        if ws.is_empty() {
            return None;
        }
        let n = ws.len();
        let parts: Vec<String> = ws
            .into_iter()
            .enumerate()
            .map(|(i, (w, _))| {
                if t.prefix && i + 1 == n {
                    format!("'{w}':*")
                } else {
                    format!("'{w}'")
                }
            })
            .collect();
        Some(if n == 1 {
            parts.join("")
        } else {
            format!("({})", parts.join(" <-> "))
        })
    };
    let mut groups = Vec::new();
    for g in &t.required {
        let alts: Vec<String> = g.iter().filter_map(term).collect();
        if alts.is_empty() {
            return None;
        }
        groups.push(format!("({})", alts.join(" | ")));
    }
    let excluded: Vec<String> = t.excluded.iter().filter_map(term).collect();
    let mut q = groups.join(" & ");
    if !excluded.is_empty() {
        q = format!("({q}) & !({})", excluded.join(" | "));
    }
    Some(q)
}

/// Returns the query's terms as word lists (with the prefix flag) for
/// highlighting.
pub fn highlight_terms(t: &agentlog_index::Terms) -> Vec<(Vec<String>, bool)> {
    t.required
        .iter()
        .flatten()
        .map(|t| (words(&t.text).into_iter().map(|w| w.0).collect(), t.prefix))
        .filter(|(w, _): &(Vec<String>, bool)| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(s: &str) -> Vec<String> {
        words(s).into_iter().map(|w| w.0).collect()
    }

    #[test]
    fn splits_like_unicode61() {
        assert_eq!(ws("src/main.rs"), ["src", "main", "rs"]);
        assert_eq!(ws("Crème BRÛLÉE, naïve!"), ["creme", "brulee", "naive"]);
        assert_eq!(
            ws("parse_config -rf 3.14"),
            ["parse", "config", "rf", "3", "14"]
        );
        assert_eq!(ws("日本語 テスト"), ["日本語", "テスト"]);
        assert!(ws("--- ... \x1b[31m").iter().all(|w| w == "31m"));
    }

    #[test]
    fn keeps_byte_ranges() {
        let t = "a Éclair b";
        let w = words(t);
        assert_eq!(&t[w[1].1.clone()], "Éclair");
        assert_eq!(w[1].0, "eclair");
    }

    #[test]
    fn builds_vectors_with_column_gaps() {
        assert_eq!(
            tsvector(&[("borrow checker", 'A'), ("checker x", 'D')]),
            "'borrow':1A 'checker':2A,4D 'x':5D"
        );
    }

    #[test]
    fn builds_queries() {
        let q = |s: &str| tsquery(&agentlog_index::terms(s).unwrap()).unwrap();
        assert_eq!(q("parser"), "('parser')");
        assert_eq!(
            q("\"borrow checker\" lifeti*"),
            "(('borrow' <-> 'checker')) & ('lifeti':*)"
        );
        assert_eq!(
            q("src/main.rs OR lib -test"),
            "((('src' <-> 'main' <-> 'rs') | 'lib')) & !('test')"
        );
    }
}
