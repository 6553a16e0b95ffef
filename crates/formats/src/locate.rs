//! Finds the line a JSON value starts on, from its path, so validation
//! messages can name the line.

/// One step of a path into a JSON document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// Renders a path as `exchanges[0].messages[1].role` (`(root)` when empty).
pub(crate) fn display(path: &[Seg]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if out.is_empty() {
        out.push_str("(root)");
    }
    out
}

/// Parses a JSON pointer (`/exchanges/0/role`) into segments; numbers
/// become indexes.
pub(crate) fn from_pointer(pointer: &str) -> Vec<Seg> {
    pointer
        .split('/')
        .skip(1)
        .map(|raw| {
            let s = raw.replace("~1", "/").replace("~0", "~");
            match s.parse::<usize>() {
                Ok(i) if !s.starts_with('+') => Seg::Index(i),
                _ => Seg::Key(s),
            }
        })
        .collect()
}

/// Returns the 1-based line on which the value at `path` starts in `text`,
/// or `None` when the text is not JSON or the path is not in it.
pub(crate) fn line_of(text: &str, path: &[Seg]) -> Option<u64> {
    let mut p = Parser {
        b: text.as_bytes(),
        pos: 0,
        line: 1,
    };
    p.ws();
    p.find(path)
}

struct Parser<'a> {
    b: &'a [u8],
    pos: usize,
    line: u64,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.pos) {
            match c {
                b'\n' => {
                    self.line += 1;
                    self.pos += 1;
                }
                b' ' | b'\t' | b'\r' => self.pos += 1,
                _ => break,
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    /// At the start of a value: returns its line if `path` is empty,
    /// otherwise descends.
    fn find(&mut self, path: &[Seg]) -> Option<u64> {
        let Some((first, rest)) = path.split_first() else {
            return Some(self.line);
        };
        match (self.peek()?, first) {
            (b'{', Seg::Key(want)) => {
                self.pos += 1;
                loop {
                    self.ws();
                    if self.peek()? == b'}' {
                        return None;
                    }
                    let key = self.string()?;
                    self.ws();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.pos += 1;
                    self.ws();
                    if &key == want {
                        return self.find(rest);
                    }
                    self.skip_value()?;
                    self.ws();
                    match self.peek()? {
                        b',' => self.pos += 1,
                        _ => return None,
                    }
                }
            }
            (b'[', Seg::Index(want)) => {
                self.pos += 1;
                let mut i = 0usize;
                loop {
                    self.ws();
                    if self.peek()? == b']' {
                        return None;
                    }
                    if i == *want {
                        return self.find(rest);
                    }
                    self.skip_value()?;
                    self.ws();
                    match self.peek()? {
                        b',' => self.pos += 1,
                        _ => return None,
                    }
                    i += 1;
                }
            }
            _ => None,
        }
    }

    /// Reads a string token and returns its (unescaped enough) contents.
    fn string(&mut self) -> Option<String> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    break;
                }
                _ => self.pos += 1,
            }
        }
        let raw = std::str::from_utf8(self.b.get(start..self.pos)?).ok()?;
        serde_json::from_str::<String>(raw).ok()
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.pos += 1;
                                return Some(());
                            }
                        }
                        b'\n' => self.line += 1,
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            _ => {
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']') || c.is_ascii_whitespace() {
                        break;
                    }
                    self.pos += 1;
                }
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_line_of_nested_values() {
        let text = "{\n  \"a\": 1,\n  \"b\": [\n    {\"x\": \"}\"},\n    {\n      \"y\": 2\n    }\n  ]\n}\n";
        let path = from_pointer("/b/1/y");
        assert_eq!(display(&path), "b[1].y");
        assert_eq!(line_of(text, &path), Some(6));
        assert_eq!(line_of(text, &from_pointer("/b/0")), Some(4));
        assert_eq!(line_of(text, &from_pointer("")), Some(1));
        assert_eq!(line_of(text, &from_pointer("/c")), None);
        assert_eq!(line_of("{\"a\":", &from_pointer("/b")), None);
    }
}
