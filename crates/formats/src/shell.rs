//! Quoting for the POSIX shell commands agentlog prints (`cd DIR && agent
//! --resume ID`), so that a path or id taken from a session is one word
//! that runs nothing, whatever it holds.

/// Quotes `s` as one POSIX shell word.
///
/// Words made only of letters, digits and `-_./:@%+,=` (not starting with
/// `=`, which zsh expands) are returned as they are; anything else is put
/// in single quotes, with each `'` written as `'\''`. The empty string
/// becomes `''`.
///
/// ```
/// use agentlog_formats::shell::quote;
/// assert_eq!(quote("/home/me/proj"), "/home/me/proj");
/// assert_eq!(quote("/home/me/my proj"), "'/home/me/my proj'");
/// assert_eq!(quote("it's $(x)"), r"'it'\''s $(x)'");
/// assert_eq!(quote(""), "''");
/// ```
pub fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && !s.starts_with('=')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:@%+,=".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn anything_a_shell_would_interpret_is_quoted() {
        for s in [
            "a b",
            "a;b",
            "a&b",
            "a|b",
            "$HOME",
            "`x`",
            "a\nb",
            "~",
            "*",
            "?",
            "[a]",
            "{a,b}",
            "a\"b",
            "a\\b",
            "#x",
            "!x",
            "=ls",
            "a<b",
            "a>b",
            "(x)",
            "é",
            "\u{1b}[2J",
        ] {
            let q = quote(s);
            assert!(q.starts_with('\'') && q.ends_with('\''), "{s:?} -> {q}");
            // Inside the quotes, only the escaped quote form can end them.
            assert_eq!(q[1..q.len() - 1].replace("'\\''", ""), s.replace('\'', ""));
        }
        assert_eq!(quote("a'b"), "'a'\\''b'");
    }

    #[test]
    fn plain_words_stay_plain() {
        for s in ["/a/b-c_d.e", "x@y:1", "50%", "a+b,c", "k=v"] {
            assert_eq!(quote(s), s);
        }
    }
}
