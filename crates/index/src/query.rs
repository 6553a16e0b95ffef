//! The search query language, translated to an FTS5 expression.
//!
//! - `word` matches the word (any case, accents ignored);
//! - `word*` matches words starting with `word`;
//! - `"exact words"` matches the words next to each other, in order
//!   (`"exact wor"*` ends in a prefix);
//! - terms are all required; `a OR b` needs either; `-word` or `NOT word`
//!   excludes.
//!
//! Every term is quoted before it reaches FTS5, so punctuation in a query
//! (`src/main.rs`, `foo::bar`, `-rf`) is searched as words, never read as
//! FTS5 syntax.

use crate::IndexError;

/// The columns user terms are matched against (not the filter tags).
pub(crate) const CONTENT_COLUMNS: &str = "{text thinking tools output}";

#[derive(Debug, PartialEq)]
enum Tok {
    Term { text: String, prefix: bool },
    Or,
    Not,
}

fn tokenize(q: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut chars = q.chars().peekable();
    let mut negate_next = false;
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if c == '-' && !negate_next {
            // A leading dash excludes the term that follows it directly.
            let mut look = chars.clone();
            look.next();
            if look.peek().is_some_and(|n| !n.is_whitespace() && *n != '-') {
                chars.next();
                out.push(Tok::Not);
                negate_next = true;
                continue;
            }
        }
        negate_next = false;
        if c == '"' {
            chars.next();
            let mut text = String::new();
            for ch in chars.by_ref() {
                if ch == '"' {
                    break;
                }
                text.push(ch);
            }
            let prefix = chars.peek() == Some(&'*');
            if prefix {
                chars.next();
            }
            out.push(Tok::Term { text, prefix });
            continue;
        }
        let mut word = String::new();
        while let Some(&ch) = chars.peek() {
            if ch.is_whitespace() || ch == '"' {
                break;
            }
            word.push(ch);
            chars.next();
        }
        match word.as_str() {
            "OR" => out.push(Tok::Or),
            "NOT" => out.push(Tok::Not),
            "AND" => {}
            _ => {
                let prefix = word.ends_with('*');
                let text = word.trim_end_matches('*').to_string();
                out.push(Tok::Term { text, prefix });
            }
        }
    }
    out
}

fn has_word(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}

fn phrase(text: &str, prefix: bool) -> String {
    let mut p = format!("\"{}\"", text.replace('"', "\"\""));
    if prefix {
        p.push('*');
    }
    p
}

/// A parsed query: groups of alternatives that are all required, and
/// excluded phrases; each phrase already quoted for FTS5.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parsed {
    pub required: Vec<Vec<String>>,
    pub excluded: Vec<String>,
}

impl Parsed {
    /// Returns the FTS5 expression over the content columns.
    pub fn expr(&self) -> String {
        self.expr_in(CONTENT_COLUMNS)
    }

    /// Returns the FTS5 expression over `columns` (an FTS5 column filter,
    /// `{tools}`).
    pub fn expr_in(&self, columns: &str) -> String {
        let mut expr = self.groups(&|_| true).unwrap_or_default();
        if !self.excluded.is_empty() {
            expr = format!("({expr}) NOT ({})", self.excluded.join(" OR "));
        }
        format!("{columns} : ({expr})")
    }

    /// Returns the expression of the required groups whose alternatives all
    /// satisfy `keep` (no exclusions), or `None` when no group is left.
    pub fn ranking_expr(&self, keep: &dyn Fn(&str) -> bool) -> Option<String> {
        self.groups(keep)
            .map(|e| format!("{CONTENT_COLUMNS} : ({e})"))
    }

    fn groups(&self, keep: &dyn Fn(&str) -> bool) -> Option<String> {
        let groups: Vec<String> = self
            .required
            .iter()
            .filter(|g| g.iter().all(|p| keep(p)))
            .map(|g| {
                if g.len() == 1 {
                    g[0].clone()
                } else {
                    format!("({})", g.join(" OR "))
                }
            })
            .collect();
        (!groups.is_empty()).then(|| groups.join(" AND "))
    }

    /// Returns every required phrase.
    pub fn phrases(&self) -> impl Iterator<Item = &String> {
        self.required.iter().flatten()
    }
}

/// One term of a query: a word or the words of a quoted phrase, the last
/// one possibly a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The text as written (between the quotes for a phrase).
    pub text: String,
    /// True when the term ends in `*`.
    pub prefix: bool,
}

/// A query as terms: groups of alternatives (`a OR b`) that are all
/// required, and excluded terms. Other backends translate this to their own
/// full-text syntax, so every backend reads queries the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terms {
    /// Every group must match; a group matches when one of its terms does.
    pub required: Vec<Vec<Term>>,
    /// No term here may match.
    pub excluded: Vec<Term>,
}

/// Parses a user query into its terms; an error when nothing is required.
pub fn terms(query: &str) -> Result<Terms, IndexError> {
    let toks = tokenize(query);
    let mut required: Vec<Vec<Term>> = Vec::new();
    let mut excluded: Vec<Term> = Vec::new();
    let mut negate = false;
    let mut join_or = false;
    for t in toks {
        match t {
            Tok::Or => join_or = !required.is_empty(),
            Tok::Not => negate = true,
            Tok::Term { text, prefix } => {
                if !has_word(&text) {
                    negate = false;
                    continue;
                }
                let term = Term { text, prefix };
                if negate {
                    excluded.push(term);
                } else if join_or {
                    if let Some(last) = required.last_mut() {
                        last.push(term);
                    }
                } else {
                    required.push(vec![term]);
                }
                negate = false;
                join_or = false;
            }
        }
    }
    if required.is_empty() {
        return Err(IndexError::Query {
            query: query.to_string(),
            message:
                "give at least one word to look for (letters or digits; `-word` only excludes)"
                    .to_string(),
        });
    }
    Ok(Terms { required, excluded })
}

/// Parses a user query.
pub(crate) fn parse(query: &str) -> Result<Parsed, IndexError> {
    let t = terms(query)?;
    let quote = |t: &Term| phrase(&t.text, t.prefix);
    Ok(Parsed {
        required: t
            .required
            .iter()
            .map(|g| g.iter().map(quote).collect())
            .collect(),
        excluded: t.excluded.iter().map(quote).collect(),
    })
}

/// Translates a user query to an FTS5 expression over the content columns.
pub fn to_fts(query: &str) -> Result<String, IndexError> {
    Ok(parse(query)?.expr())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> String {
        to_fts(s).unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn translates_words_phrases_prefixes() {
        assert_eq!(q("parser"), "{text thinking tools output} : (\"parser\")");
        assert_eq!(
            q("\"borrow checker\" lifeti*"),
            "{text thinking tools output} : (\"borrow checker\" AND \"lifeti\"*)"
        );
        assert_eq!(
            q("src/main.rs OR lib.rs -test"),
            "{text thinking tools output} : (((\"src/main.rs\" OR \"lib.rs\")) NOT (\"test\"))"
        );
        assert_eq!(
            q("a NOT b \"it's\" AND"),
            "{text thinking tools output} : ((\"a\" AND \"it's\") NOT (\"b\"))"
        );
        assert_eq!(
            q("x -- y"),
            "{text thinking tools output} : (\"x\" AND \"y\")"
        );
        assert!(to_fts("-only").is_err());
        assert!(to_fts("  ").is_err());
    }
}
