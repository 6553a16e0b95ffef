//! Redacting strings and JSON values, recording what was found where.

use crate::report::{fingerprint, Finding, Location, Report};
use crate::rules::{Hit, Rules, MIN_TEXT_LEN};
use serde_json::Value;

/// Returns the marker that replaces a secret of `kind`.
pub fn marker(kind: &str) -> String {
    format!("[REDACTED:{kind}]")
}

/// Joins a parent path and a key: `a` + `b` = `a.b`; the root has no dot.
pub(crate) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// The longest text [`Clean`] remembers.
const CLEAN_LEN: usize = 256;

/// The most texts [`Clean`] remembers in one pass.
const CLEAN_MAX: usize = 1 << 14;

/// Short texts of one pass already found to hold no secret. A session
/// repeats the same strings on every record (its id, working directory,
/// branch, version, the id of a streamed response on each of its chunks):
/// three in four of the texts a Claude session gives the rules are such
/// repeats, and each would otherwise be searched again.
#[derive(Default)]
pub(crate) struct Clean(foldhash::HashSet<Box<str>>);

impl Clean {
    /// True for a text worth remembering: one the rules search at all
    /// (see [`MIN_TEXT_LEN`]), and short.
    fn kept(s: &str) -> bool {
        (MIN_TEXT_LEN..=CLEAN_LEN).contains(&s.len())
    }

    fn remembers(&self, s: &str) -> bool {
        Clean::kept(s) && self.0.contains(s)
    }

    fn remember(&mut self, s: &str) {
        if Clean::kept(s) && self.0.len() < CLEAN_MAX {
            self.0.insert(s.into());
        }
    }
}

/// The state of one redaction pass: the rules, the report, and where we are.
pub(crate) struct Walk<'a> {
    pub rules: &'a Rules,
    pub report: &'a mut Report,
    /// Texts of this pass already found clean.
    pub clean: &'a mut Clean,
    /// The entry being walked, if any.
    pub entry: Option<&'a str>,
    /// The line being walked, if known.
    pub line: Option<u64>,
}

impl Walk<'_> {
    fn record(&mut self, kind: &str, secret: &str, field: String) {
        self.report.findings.push(Finding {
            kind: kind.to_string(),
            location: Location {
                entry: self.entry.map(str::to_string),
                field,
                line: self.line,
            },
            fingerprint: fingerprint(secret),
        });
    }

    /// Redacts `s` in place. A string that is itself JSON (an object, an
    /// array, or a string: tool arguments kept as a string, encoded once or
    /// twice) is redacted as JSON and written back compactly, so it stays
    /// valid JSON.
    pub fn string(&mut self, s: &mut String, path: &dyn Fn() -> String) {
        if self.clean.remembers(s) {
            return;
        }
        let hits = self.rules.find(s);
        if hits.is_empty() {
            self.clean.remember(s);
            return;
        }
        let trimmed = s.trim_start();
        if trimmed.starts_with(['{', '[', '"']) {
            if let Ok(mut v) = serde_json::from_str::<Value>(s) {
                if v.is_object() || v.is_array() || v.is_string() {
                    self.value(&mut v, path);
                    if let Ok(text) = serde_json::to_string(&v) {
                        *s = text;
                    }
                    let rest = self.rules.find(s);
                    if rest.is_empty() {
                        return;
                    }
                    self.replace(s, &rest, path);
                    return;
                }
            }
        }
        self.replace(s, &hits, path);
    }

    /// Replaces each hit in `s` by its marker.
    fn replace(&mut self, s: &mut String, hits: &[Hit], path: &dyn Fn() -> String) {
        let mut out = String::with_capacity(s.len());
        let mut at = 0;
        let field = path();
        for h in hits {
            let kind = &self.rules.rules[h.rule].id;
            out.push_str(&s[at..h.start]);
            out.push_str(&marker(kind));
            self.record(kind, &s[h.start..h.end], field.clone());
            at = h.end;
        }
        out.push_str(&s[at..]);
        *s = out;
    }

    /// Redacts a secret that starts in `a` and ends in `b` (two texts shown
    /// one after the other): the part in each is replaced by the marker,
    /// and it is recorded once. Only the ends that meet are searched.
    pub fn across(&mut self, a: &mut String, b: &mut String, path: &dyn Fn() -> String) {
        /// How much of each side is searched.
        const EDGE: usize = 512;
        let mut from = a.len().saturating_sub(EDGE);
        while !a.is_char_boundary(from) {
            from += 1;
        }
        let mut to = b.len().min(EDGE);
        while !b.is_char_boundary(to) {
            to -= 1;
        }
        let cut = a.len() - from;
        if cut == 0 || to == 0 {
            return;
        }
        let joined = format!("{}{}", &a[from..], &b[..to]);
        let hits = self.rules.find(&joined);
        let Some(h) = hits.iter().find(|h| h.start < cut && h.end > cut) else {
            return;
        };
        let kind = self.rules.rules[h.rule].id.clone();
        self.record(&kind, &joined[h.start..h.end], path());
        let m = marker(&kind);
        b.replace_range(..h.end - cut, &m);
        a.replace_range(from + h.start.., &m);
    }

    /// Replaces all of `s`, a secret found by text rule `rule`, by its marker.
    pub fn force(&mut self, s: &mut String, rule: usize, path: &dyn Fn() -> String) {
        let kind = self.rules.rules[rule].id.clone();
        self.record(&kind, s, path());
        *s = marker(&kind);
    }

    /// Redacts an optional string.
    pub fn opt(&mut self, s: &mut Option<String>, path: &dyn Fn() -> String) {
        if let Some(s) = s {
            self.string(s, path);
        }
    }

    /// Redacts every string in a JSON value; a string under a key that names
    /// a secret (`password`, `api_key`, …) is replaced whole.
    pub fn value(&mut self, v: &mut Value, path: &dyn Fn() -> String) {
        match v {
            Value::String(s) => self.string(s, path),
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    self.value(item, &|| format!("{}[{i}]", path()));
                }
            }
            Value::Object(map) => self.map(map, path),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// Redacts every string of a JSON object map (an `extra` map).
    pub fn map(&mut self, m: &mut serde_json::Map<String, Value>, path: &dyn Fn() -> String) {
        for (k, item) in m.iter_mut() {
            if let Value::String(s) = item {
                if let Some(f) = self.rules.field_match(k, s) {
                    let kind = self.rules.fields[f].id.clone();
                    self.record(&kind, s, join(&path(), k));
                    *s = marker(&kind);
                    continue;
                }
            }
            self.value(item, &|| join(&path(), k));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_text_seen_again_is_searched_as_the_first_time() {
        let r = crate::Redactor::new().unwrap();
        let secret = "push with ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 please";
        let clean = "/home/dev/src/payments";
        let mut v = json!([secret, clean, secret, clean, {"a": secret, "b": clean}]);
        let report = r.value(&mut v, "x");
        assert_eq!(report.len(), 3, "{report:?}");
        let redacted = "push with [REDACTED:github-pat] please";
        assert_eq!(
            v,
            json!([redacted, clean, redacted, clean, {"a": redacted, "b": clean}])
        );
        // Whether a text was seen before or not, in one pass or another.
        let mut again = json!([clean, secret]);
        assert_eq!(r.value(&mut again, "x").len(), 1);
        assert_eq!(again, json!([clean, redacted]));
    }
}
