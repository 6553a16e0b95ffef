//! The team backend of agentlog: every machine pushes its sessions into one
//! PostgreSQL database, where they are listed, searched, counted, shown,
//! exported and resumed like the local SQLite index's.
//!
//! - [`PgIndex::connect`] opens the database and checks (or migrates) its
//!   schema ([`schema`]: versioned migrations, refused when the server is
//!   newer than this agentlog).
//! - [`PgIndex::push`] sends what changed since the last push of each file
//!   of this machine: for append-only formats only the bytes after what the
//!   server holds, else the whole file. One transaction per file: a push
//!   killed or cut off keeps every file it finished and none of the one it
//!   was sending, so the next push completes it without duplicates. The
//!   original bytes are kept (deflate) so a session can be exported in its
//!   native format or resumed from the server.
//! - [`PgIndex::sessions`], [`PgIndex::search`], [`PgIndex::stats`] answer
//!   with the SQLite index's types and the same results on the same
//!   sessions: words are cut the same way ([`words`]) and queries read by
//!   the same parser ([`agentlog_index::terms`]).
//! - [`grant`] sets up roles: pushers add and see only their own rows
//!   (row-level security), readers read everything.
//!
//! ```no_run
//! use agentlog_postgres::PgIndex;
//! use agentlog_index::SearchParams;
//!
//! let mut db = PgIndex::connect("postgres://agentlog:secret@127.0.0.1:5433/agentlog", true)?;
//! for hit in db.search(&SearchParams::new("\"borrow checker\" lifetime*"))? {
//!     println!("{} {} {}", hit.session_id, hit.entry_id, hit.snippet);
//! }
//! # Ok::<(), agentlog_postgres::PgError>(())
//! ```
#![forbid(unsafe_code)]

mod backend;
mod copy;
pub mod grant;
mod page;
mod push;
mod read;
pub mod schema;
mod search;
mod stats;
pub mod throwaway;
mod typed;
pub mod words;

pub use push::{PushOptions, PushProgress, PushReport};
pub use read::ServerSession;

use std::path::PathBuf;
use std::time::Duration;

/// An error of the PostgreSQL backend. URLs in messages never show the
/// password.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The URL could not be read.
    #[error("{url}: not a PostgreSQL URL ({message}); expected postgres://USER:PASSWORD@HOST:PORT/DATABASE")]
    Url {
        /// The URL, without its password.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// The server could not be reached or refused the login.
    #[error("{url}: cannot connect: {message}")]
    Connect {
        /// The URL, without its password.
        url: String,
        /// Why.
        message: String,
    },
    /// The server's schema is newer than this agentlog.
    #[error("{url}: the database has schema version {server}, newer than this agentlog's {ours}; upgrade agentlog (nothing was changed)")]
    NewerSchema {
        /// The URL, without its password.
        url: String,
        /// The server's version.
        server: u32,
        /// This agentlog's version.
        ours: u32,
    },
    /// The server's schema is older and migrating was not asked for.
    #[error("{url}: the database has schema version {server}, this agentlog needs {ours}; run `agentlog db migrate --db URL` as the database owner")]
    NotMigrated {
        /// The URL, without its password.
        url: String,
        /// The server's version.
        server: u32,
        /// This agentlog's version.
        ours: u32,
    },
    /// A migration failed.
    #[error("{url}: migrating the schema failed: {message}")]
    Migration {
        /// The URL, without its password.
        url: String,
        /// Why.
        message: String,
    },
    /// The machine name belongs to another role on the server: nothing was
    /// pushed.
    #[error("{url}: the machine name {machine:?} belongs to another role on this server; nothing was pushed (push under this machine's own name, or have the database owner bind the name to this role)")]
    MachineTaken {
        /// The URL, without its password.
        url: String,
        /// The machine name.
        machine: String,
    },
    /// A statement failed (or the connection was lost during one).
    #[error("{url}: {context}: {message}")]
    Sql {
        /// The URL, without its password.
        url: String,
        /// What was being done.
        context: String,
        /// The server's message.
        message: String,
    },
    /// A local file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A query the backend cannot run.
    #[error(transparent)]
    Index(#[from] agentlog_index::IndexError),
    /// Something stored on the server is not what this agentlog wrote.
    #[error("{url}: {message}")]
    Data {
        /// The URL, without its password.
        url: String,
        /// What is wrong.
        message: String,
    },
}

impl PgError {
    pub(crate) fn sql(url: &str, context: &str, e: &postgres::Error) -> PgError {
        PgError::Sql {
            url: url.to_string(),
            context: context.to_string(),
            message: describe(e),
        }
    }
}

/// Returns the server's message of `e` (the driver's `Display` says only
/// "db error"), or the connection problem.
pub(crate) fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut s = format!("{}: {}", db.severity(), db.message());
        if let Some(d) = db.detail() {
            s.push_str(&format!(" ({d})"));
        }
        if let Some(h) = db.hint() {
            s.push_str(&format!("; hint: {h}"));
        }
        return s;
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(&format!(": {c}"));
        src = c.source();
    }
    if e.is_closed() && !s.contains("closed") {
        s.push_str(" (the connection was closed)");
    }
    s
}

/// Returns `url` with its password replaced by `***`.
pub fn hide_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let Some(at) = rest.find('@') else {
        return url.to_string();
    };
    let userinfo = &rest[..at];
    match userinfo.find(':') {
        Some(c) => format!(
            "{}{}:***{}",
            &url[..scheme_end + 3],
            &userinfo[..c],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

/// A connection to the team database.
///
/// The connection is behind a mutex so that the backend is shared by
/// reference (as [`agentlog_index::Backend`] asks); one statement runs at a
/// time.
pub struct PgIndex {
    client: std::sync::Mutex<postgres::Client>,
    /// Whether the server's schema version was found to be this
    /// agentlog's (see [`PgIndex::connect_lazily`]).
    checked: std::sync::atomic::AtomicBool,
    /// How to connect again (a push opens a second connection).
    config: postgres::Config,
    url: String,
    machine: String,
    user: String,
}

impl std::fmt::Debug for PgIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgIndex").field("url", &self.url).finish()
    }
}

impl PgIndex {
    /// Connects to `url` (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`) and
    /// checks the schema: a newer one is refused; an older one (or none) is
    /// migrated when `migrate` is set, else refused with what to run.
    pub fn connect(url: &str, migrate: bool) -> Result<PgIndex, PgError> {
        let db = PgIndex::open(url)?;
        schema::ensure(&mut db.db_unchecked(), &db.url, migrate)?;
        db.checked.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(db)
    }

    /// Connects to `url` for reading, checking the schema with the first
    /// statement instead of before it: a search asks for the version in
    /// its own statement (one round trip fewer, which a distant server
    /// feels most); anything else checks first, as [`PgIndex::connect`]
    /// does. Never migrates.
    pub fn connect_lazily(url: &str) -> Result<PgIndex, PgError> {
        PgIndex::open(url)
    }

    fn open(url: &str) -> Result<PgIndex, PgError> {
        let shown = hide_password(url);
        let mut config: postgres::Config =
            url.parse().map_err(|e: postgres::Error| PgError::Url {
                url: shown.clone(),
                message: e.to_string(),
            })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.keepalives_idle(Duration::from_secs(30));
        config.application_name("agentlog");
        // Just-in-time compilation costs more than it saves on these
        // queries (250 ms of a 1.1 s stats query at 1 GB); sorts and
        // groups of a stats query fit in memory.
        config.options("-c jit=off -c work_mem=64MB");
        let client = config
            .connect(postgres::NoTls)
            .map_err(|e| PgError::Connect {
                url: shown.clone(),
                message: describe(&e),
            })?;
        Ok(PgIndex {
            client: std::sync::Mutex::new(client),
            checked: std::sync::atomic::AtomicBool::new(false),
            config,
            url: shown,
            machine: default_machine(),
            user: default_user(),
        })
    }

    /// Sets the machine and user that [`Backend::update`](agentlog_index::Backend::update)
    /// pushes as (default: the host name and the login name).
    pub fn set_identity(&mut self, machine: &str, user: &str) {
        self.machine = machine.to_string();
        self.user = user.to_string();
    }

    /// Returns the connection (one statement at a time), after checking
    /// the server's schema if that is not done yet.
    pub(crate) fn db(&self) -> Result<std::sync::MutexGuard<'_, postgres::Client>, PgError> {
        let mut db = self.db_unchecked();
        if !self.checked.load(std::sync::atomic::Ordering::Relaxed) {
            schema::ensure(&mut db, &self.url, false)?;
            self.checked
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(db)
    }

    /// Returns the connection without checking the schema: for statements
    /// that check it themselves ([`PgIndex::schema_seen`]).
    pub(crate) fn db_unchecked(&self) -> std::sync::MutexGuard<'_, postgres::Client> {
        // A panic while holding the lock leaves the connection usable: any
        // open transaction was dropped (rolled back) on the way out.
        self.client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes the schema version a statement read alongside its answer:
    /// refuses a server this agentlog cannot read.
    pub(crate) fn schema_seen(&self, version: Option<i32>) -> Result<(), PgError> {
        schema::verdict(&self.url, version.unwrap_or(0).max(0) as u32)?;
        self.checked
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Whether the schema is known to be this agentlog's.
    pub(crate) fn schema_checked(&self) -> bool {
        self.checked.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Returns the URL (without its password).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Runs the missing migrations; returns the versions applied.
    pub fn migrate(&self) -> Result<Vec<u32>, PgError> {
        schema::ensure(&mut self.db_unchecked(), &self.url, true)
    }

    pub(crate) fn err(&self, context: &str, e: &postgres::Error) -> PgError {
        PgError::sql(&self.url, context, e)
    }
}

/// Returns this machine's name: `$AGENTLOG_MACHINE`, else the host name.
pub fn default_machine() -> String {
    std::env::var("AGENTLOG_MACHINE")
        .ok()
        .filter(|m| !m.trim().is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .or_else(|_| std::fs::read_to_string("/etc/hostname"))
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        })
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-machine".to_string())
}

/// Returns the login name: `$USER`, else `$LOGNAME`, else `unknown`.
pub fn default_user() -> String {
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.trim().is_empty()))
        .unwrap_or_else(|| "unknown".to_string())
}

/// Returns the database URL from `--db`, else `$AGENTLOG_DB`.
pub fn url_from(flag: Option<&str>, vars: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    flag.map(str::to_string)
        .or_else(|| vars("AGENTLOG_DB"))
        .filter(|u| !u.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hides_passwords() {
        assert_eq!(
            hide_password("postgres://me:s3cret@h:5/db"),
            "postgres://me:***@h:5/db"
        );
        assert_eq!(hide_password("postgres://me@h/db"), "postgres://me@h/db");
        assert_eq!(hide_password("host=x"), "host=x");
    }
}
