//! Redaction reports: what was found where, never the secret itself.

use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;

/// Where a secret was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The entry id, when the secret was in an entry (not the session's
    /// metadata or a raw file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// The field: a path such as `content[0].text`, `content[1].input.command`,
    /// `meta.title`, or in a raw file the JSON key that held it.
    pub field: String,
    /// The 1-based line, for raw files (and entries that know their line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        if let Some(line) = self.line {
            write!(f, "line {line}")?;
            sep = " ";
        }
        if let Some(e) = &self.entry {
            write!(f, "{sep}entry {e}")?;
            sep = " ";
        }
        if !self.field.is_empty() {
            write!(f, "{sep}{}", self.field)?;
        }
        Ok(())
    }
}

/// One secret found (and, when redacting, replaced).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The kind: the id of the rule that found it (`anthropic-api-key`, …).
    pub kind: String,
    /// Where it was.
    pub location: Location,
    /// The first 8 hex digits of the secret's SHA-256: tells the same secret
    /// apart from another without showing it.
    pub fingerprint: String,
}

/// Returns the short fingerprint of a secret: the first 8 hex digits of its
/// SHA-256.
pub fn fingerprint(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    hex::encode(&digest[..4])
}

/// Every secret found in one session or file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The findings, in the order met.
    pub findings: Vec<Finding>,
}

/// The findings of one kind, summed up.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KindCount {
    /// The kind.
    pub kind: String,
    /// How many secrets of the kind.
    pub count: usize,
    /// How many different secrets (by fingerprint).
    pub distinct: usize,
    /// Where the first was.
    pub first: Location,
}

impl Report {
    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        self.findings.is_empty()
    }

    /// Returns the number of secrets found.
    pub fn len(&self) -> usize {
        self.findings.len()
    }

    /// Returns the findings summed up by kind, in the order first met.
    pub fn by_kind(&self) -> Vec<KindCount> {
        let mut out: Vec<KindCount> = Vec::new();
        let mut prints: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for f in &self.findings {
            let seen = prints.entry(f.kind.as_str()).or_default();
            let new_print = !seen.contains(&f.fingerprint.as_str());
            if new_print {
                seen.push(f.fingerprint.as_str());
            }
            match out.iter_mut().find(|k| k.kind == f.kind) {
                Some(k) => {
                    k.count += 1;
                    k.distinct += usize::from(new_print);
                }
                None => out.push(KindCount {
                    kind: f.kind.clone(),
                    count: 1,
                    distinct: 1,
                    first: f.location.clone(),
                }),
            }
        }
        out
    }

    /// Adds the findings of another report.
    pub fn extend(&mut self, other: Report) {
        self.findings.extend(other.findings);
    }
}

impl fmt::Display for Report {
    /// Prints the summary by kind, beside the fidelity report:
    ///
    /// ```text
    /// redacted 3 secrets:
    ///   - anthropic-api-key (2x, first at entry 11b4… content[0].text)
    ///   - jwt (1x, first at meta.title)
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.findings.is_empty() {
            return writeln!(f, "redacted: no secrets found");
        }
        let n = self.findings.len();
        writeln!(f, "redacted {n} secret{}:", if n == 1 { "" } else { "s" })?;
        for k in self.by_kind() {
            writeln!(f, "  - {} ({}x, first at {})", k.kind, k.count, k.first)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(kind: &str, entry: &str, secret: &str) -> Finding {
        Finding {
            kind: kind.into(),
            location: Location {
                entry: Some(entry.into()),
                field: "content[0].text".into(),
                line: None,
            },
            fingerprint: fingerprint(secret),
        }
    }

    #[test]
    fn fingerprints_are_8_hex_digits_of_sha256() {
        // SHA-256("abc") = ba7816bf…
        assert_eq!(fingerprint("abc"), "ba7816bf");
    }

    #[test]
    fn the_summary_counts_by_kind_without_the_secret() {
        let r = Report {
            findings: vec![
                finding("jwt", "e1", "s1"),
                finding("github-pat", "e2", "s2"),
                finding("jwt", "e3", "s1"),
            ],
        };
        let by = r.by_kind();
        assert_eq!(by[0].kind, "jwt");
        assert_eq!((by[0].count, by[0].distinct), (2, 1));
        let text = r.to_string();
        assert!(text.starts_with("redacted 3 secrets:\n"), "{text}");
        assert!(
            text.contains("  - jwt (2x, first at entry e1 content[0].text)"),
            "{text}"
        );
        assert!(!text.contains("s1"));
    }
}
