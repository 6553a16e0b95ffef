//! Rows for `COPY … FROM STDIN` in PostgreSQL's text format.

/// Appends a text field, escaped (NUL characters, which PostgreSQL text
/// cannot hold, are dropped).
pub fn text(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => {}
            c => out.push(c),
        }
    }
}

/// Appends an optional text field (`\N` for none).
pub fn opt_text(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => text(out, s),
        None => out.push_str("\\N"),
    }
}

/// Appends an optional number.
pub fn opt_num<T: std::fmt::Display>(out: &mut String, n: Option<T>) {
    match n {
        Some(n) => out.push_str(&n.to_string()),
        None => out.push_str("\\N"),
    }
}

/// Appends a `text[]` field.
pub fn text_array(out: &mut String, items: &[String]) {
    let mut lit = String::from("{");
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            lit.push(',');
        }
        lit.push('"');
        for c in it.chars() {
            if c == '"' || c == '\\' {
                lit.push('\\');
            }
            lit.push(c);
        }
        lit.push('"');
    }
    lit.push('}');
    text(out, &lit);
}

/// Removes NUL characters (PostgreSQL text cannot hold them).
pub fn clean(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\0') {
        std::borrow::Cow::Owned(s.replace('\0', ""))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_fields() {
        let mut s = String::new();
        text(&mut s, "a\tb\nc\\d\0e");
        assert_eq!(s, "a\\tb\\nc\\\\de");
        let mut s = String::new();
        text_array(&mut s, &["x\"y".to_string(), "b\\".to_string()]);
        assert_eq!(s, "{\"x\\\\\"y\",\"b\\\\\\\\\"}");
    }
}
