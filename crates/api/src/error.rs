//! The error type of the library API.

use std::path::PathBuf;

/// One candidate of an ambiguous id prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The format that reads it.
    pub format: String,
    /// Its full id.
    pub id: String,
    /// Its file.
    pub path: PathBuf,
    /// When the file was last written, when known.
    pub modified: Option<std::time::SystemTime>,
    /// True when `resume` wrote it as a copy of a session of another agent.
    pub copy: bool,
}

impl Candidate {
    /// Its last write as `YYYY-MM-DD HH:MM` UTC, or `?`.
    pub fn when(&self) -> String {
        self.modified
            .map(|t| {
                chrono::DateTime::<chrono::Utc>::from(t)
                    .format("%Y-%m-%d %H:%M")
                    .to_string()
            })
            .unwrap_or_else(|| "?".to_string())
    }
}

/// Errors of the library API. None names a command-line flag: front ends
/// add their own words (which flag, what to run next).
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// An agent name no format has.
    #[error("unknown agent {name:?}; known agents: {known}")]
    UnknownAgent {
        /// The name as given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A format name the registry does not have.
    #[error("unknown format {name:?}; known formats: {known}")]
    UnknownFormat {
        /// The name as given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A root that is not `AGENT=PATH`.
    #[error("root {value:?}: expected AGENT=PATH, e.g. claude=/backup/.claude")]
    BadRoot {
        /// The value as given.
        value: String,
    },
    /// The configuration file cannot be understood.
    #[error("{}{}: invalid configuration: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Config {
        /// The file.
        path: PathBuf,
        /// The line, when known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// No session file or id matches.
    #[error("{id}: no such file, and {}", none_of(*searched))]
    NotFound {
        /// The id or path as given.
        id: String,
        /// How many sessions were looked at.
        searched: usize,
    },
    /// An id prefix matches several sessions.
    #[error("{}", ambiguous(prefix, candidates))]
    Ambiguous {
        /// The prefix as given.
        prefix: String,
        /// The sessions it matches.
        candidates: Vec<Candidate>,
    },
    /// A session file cannot be read or written.
    #[error(transparent)]
    Format(#[from] agentlog_formats::FormatError),
    /// The index failed.
    #[error(transparent)]
    Index(#[from] agentlog_index::IndexError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] agentlog_store::StoreError),
    /// The archive failed.
    #[error(transparent)]
    Archive(#[from] agentlog_archive::ArchiveError),
    /// An agent's hook gave input agentlog cannot use.
    #[error("the {agent} hook's input: {why}")]
    HookInput {
        /// The agent.
        agent: String,
        /// What is wrong with it.
        why: String,
    },
    /// There is no archive to read from.
    #[error("no archive: {why}")]
    NoArchive {
        /// Why.
        why: String,
    },
    /// A session kept inside its agent's database was named where only
    /// the whole database can be acted on.
    #[error("{}: this session is kept inside its agent's database {}, with that database's other sessions; forgetting it would forget them all: name the database's path to do that", session.display(), database.display())]
    InDatabase {
        /// The session (`file.db#id`).
        session: PathBuf,
        /// The database.
        database: PathBuf,
    },
    /// An OTLP endpoint could not be reached or refused what was sent.
    #[error("{url}: {why}")]
    Otlp {
        /// The URL posted to.
        url: String,
        /// What went wrong.
        why: String,
    },
    /// A data set cannot be written as asked.
    #[error("dataset: {message}")]
    Dataset {
        /// What is wrong.
        message: String,
    },
    /// A session cannot be continued the way asked.
    #[error("{id}: cannot be continued here: {why}")]
    NotResumable {
        /// The session id.
        id: String,
        /// Why, and what to do instead.
        why: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// That none of the `searched` sessions has the id, in English for every
/// count.
fn none_of(searched: usize) -> String {
    match searched {
        0 => "no sessions were found".to_string(),
        1 => "the one session found has no id starting with it".to_string(),
        n => format!("none of the {n} sessions found has an id starting with it"),
    }
}

fn ambiguous(prefix: &str, cands: &[Candidate]) -> String {
    let mut msg = format!(
        "{prefix}: the id prefix is ambiguous; it matches {} sessions:",
        cands.len()
    );
    for c in cands.iter().take(20) {
        msg.push_str(&format!(
            "\n  {:<9} {}  {}  {}{}",
            c.format,
            c.id,
            c.when(),
            c.path.display(),
            if c.copy { "  (resumed copy)" } else { "" }
        ));
    }
    if cands.len() > 20 {
        msg.push_str(&format!("\n  … and {} more", cands.len() - 20));
    }
    msg.push_str("\ngive more characters of the id, AGENT:ID, or the path");
    msg
}

impl ApiError {
    /// Returns an `Io` error for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> ApiError {
        ApiError::Io {
            path: path.into(),
            source,
        }
    }

    /// True when the error is in what the caller asked (an unknown name, a
    /// value that cannot be parsed, a bad query) rather than in the data or
    /// the machine: command lines exit with status 2 for these.
    pub fn is_usage(&self) -> bool {
        match self {
            ApiError::UnknownAgent { .. }
            | ApiError::UnknownFormat { .. }
            | ApiError::BadRoot { .. }
            | ApiError::InDatabase { .. } => true,
            ApiError::Index(e) => is_usage_index(e),
            _ => false,
        }
    }
}

/// True for index errors in what the caller asked (a filter value, a query).
pub fn is_usage_index(e: &agentlog_index::IndexError) -> bool {
    matches!(
        e,
        agentlog_index::IndexError::Filter { .. } | agentlog_index::IndexError::Query { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_not_found_is_said_in_english_for_every_count() {
        let say = |searched| {
            ApiError::NotFound {
                id: "zz".into(),
                searched,
            }
            .to_string()
        };
        assert_eq!(say(0), "zz: no such file, and no sessions were found");
        assert_eq!(
            say(1),
            "zz: no such file, and the one session found has no id starting with it"
        );
        assert_eq!(
            say(2),
            "zz: no such file, and none of the 2 sessions found has an id starting with it"
        );
    }
}
