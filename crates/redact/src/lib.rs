//! Finding and redacting secrets in agent sessions.
//!
//! Agents see API keys, tokens, passwords and private keys (in `.env` files
//! they read, commands they run, tool output) and their session files keep
//! them. This crate is the one redaction used by every path where a session
//! leaves the terminal: `--redact` on `show`/`export`/`convert`/`resume`,
//! HTML export, `serve` beyond loopback, `push`, `scan` and `scrub`.
//!
//! The detectors are data: a rules file ([`BUILTIN_RULES`], TOML) of
//! regular expressions with keywords for a prefilter, entropy thresholds and
//! placeholder allowlists, plus field rules for JSON values under keys such
//! as `password` or `api_key`. A keyword prefilter (Aho-Corasick) decides
//! which rules run on a piece of text at all, so text without any keyword
//! costs one scan.
//!
//! Each secret is replaced by `[REDACTED:<kind>]`, and a [`Report`] says
//! what was found where (entry id and field), with a short [`fingerprint`]
//! (8 hex digits of its SHA-256), never the secret.
//!
//! ```
//! use agentlog_model::{Agent, Entry, EntryKind, Message, Role, Session, SessionMeta};
//! use agentlog_redact::Redactor;
//!
//! let key = ["ghp_", "abcdefghijklmnopqrstuvwxyz0123456789"].concat();
//! let mut session = Session::new(SessionMeta::new("s1", Agent::Claude));
//! session.push(Entry::new("e1", None, EntryKind::Message(Message::text(
//!     Role::User,
//!     format!("push with {key}"),
//! ))));
//!
//! let report = Redactor::builtin()?.session(&mut session);
//! assert_eq!(report.len(), 1);
//! assert_eq!(report.findings[0].kind, "github-pat");
//! assert_eq!(report.findings[0].location.entry.as_deref(), Some("e1"));
//! assert_eq!(report.findings[0].location.field, "content[0].text");
//! let text = session.entries[0].message().map(|m| m.text_content());
//! assert_eq!(text.as_deref(), Some("push with [REDACTED:github-pat]"));
//! # Ok::<(), agentlog_redact::RedactError>(())
//! ```
#![forbid(unsafe_code)]

mod raw;
mod report;
mod rules;
mod session;
mod spec;
mod walk;

pub use report::{fingerprint, Finding, KindCount, Location, Report};
pub use rules::{RuleInfo, BUILTIN_RULES};
pub use walk::marker;

use agentlog_model::Session;
use std::sync::OnceLock;

/// What can go wrong redacting.
#[derive(Debug, thiserror::Error)]
pub enum RedactError {
    /// The rules file is not valid (a regex, a missing field, …).
    #[error("redaction rules: {message}")]
    Rules {
        /// What is wrong, naming the rule.
        message: String,
    },
    /// The bytes hold a NUL: a binary file (a database), not a text file.
    #[error(
        "a binary file (it holds NUL bytes); only text session files can be redacted in place"
    )]
    Binary,
    /// The bytes are not UTF-8 text.
    #[error("not UTF-8 text (invalid byte at offset {offset})")]
    NotUtf8 {
        /// The offset of the first invalid byte.
        offset: usize,
    },
}

/// Finds and replaces secrets with a set of rules.
#[derive(Debug)]
pub struct Redactor {
    rules: rules::Rules,
}

impl Redactor {
    /// Returns a redactor with the built-in rules.
    pub fn new() -> Result<Redactor, RedactError> {
        Ok(Redactor {
            rules: rules::Rules::builtin()?,
        })
    }

    /// Returns a redactor with the rules of a rules file (the format of
    /// [`BUILTIN_RULES`]).
    pub fn from_rules(text: &str) -> Result<Redactor, RedactError> {
        Ok(Redactor {
            rules: rules::Rules::parse(text)?,
        })
    }

    /// Returns the shared redactor with the built-in rules, compiled once.
    pub fn builtin() -> Result<&'static Redactor, RedactError> {
        static BUILTIN: OnceLock<Result<Redactor, String>> = OnceLock::new();
        BUILTIN
            .get_or_init(|| Redactor::new().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|message| RedactError::Rules {
                message: message.clone(),
            })
    }

    /// Returns the kinds of secrets the rules find, in rule order (text rules,
    /// then field rules not already named).
    pub fn kinds(&self) -> Vec<RuleInfo> {
        let mut out: Vec<RuleInfo> = self
            .rules
            .rules
            .iter()
            .map(|r| RuleInfo {
                id: r.id.to_string(),
                description: r.description.to_string(),
            })
            .collect();
        for f in &self.rules.fields {
            if !out.iter().any(|r| r.id == f.id) {
                out.push(RuleInfo {
                    id: f.id.to_string(),
                    description: "a value under a key that names a secret".into(),
                });
            }
        }
        out
    }

    /// Redacts every text field of `session` in place (message text,
    /// thinking, tool call arguments as JSON, tool results, titles, cwd,
    /// extra maps, unknown records) and returns what was found.
    pub fn session(&self, session: &mut Session) -> Report {
        let mut report = Report::default();
        let mut w = walk::Walk {
            rules: &self.rules,
            report: &mut report,
            clean: &mut walk::Clean::default(),
            entry: None,
            line: None,
        };
        session::session(&mut w, session);
        report
    }

    /// Returns the secrets in `session` without changing it.
    pub fn scan_session(&self, session: &Session) -> Report {
        self.session(&mut session.clone())
    }

    /// Redacts one string in place; findings name `field`.
    pub fn text(&self, text: &mut String, field: &str) -> Report {
        let mut report = Report::default();
        let mut w = walk::Walk {
            rules: &self.rules,
            report: &mut report,
            clean: &mut walk::Clean::default(),
            entry: None,
            line: None,
        };
        w.string(text, &|| field.to_string());
        report
    }

    /// Redacts every string of a JSON value in place; findings name the path
    /// from `field`.
    pub fn value(&self, value: &mut serde_json::Value, field: &str) -> Report {
        let mut report = Report::default();
        let mut w = walk::Walk {
            rules: &self.rules,
            report: &mut report,
            clean: &mut walk::Clean::default(),
            entry: None,
            line: None,
        };
        w.value(value, &|| field.to_string());
        report
    }

    /// True when `text` holds a secret.
    pub fn contains_secret(&self, text: &str) -> bool {
        !self.rules.find(text).is_empty()
    }

    /// Redacts the bytes of a native session file, keeping its structure:
    /// in JSON and JSON Lines only the string values holding a secret are
    /// re-encoded, every other byte is kept; other text is redacted as text.
    /// Findings carry the line and the JSON key. Binary and non-UTF-8 input
    /// is an error.
    pub fn bytes(&self, bytes: &[u8]) -> Result<(Vec<u8>, Report), RedactError> {
        raw::redact(&self.rules, bytes)
    }
}
