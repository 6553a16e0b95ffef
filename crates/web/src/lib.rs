//! The web viewer of agentlog (`agentlog serve`) and its self-contained
//! HTML export.
//!
//! Pages are rendered on the server from the unified model: every piece of
//! session text is escaped ([`escape`]), markdown is rendered with raw HTML
//! shown as text and only web links kept ([`markdown`]), and pages run
//! under a Content-Security-Policy that allows no inline script (served
//! pages load `/assets/app.js`; exported files allow their one inline
//! script by hash). A session page shows a page of entries at a time and
//! fetches more as the reader scrolls, so a session of any size opens at
//! once; the list, search and statistics come from the index catalog.
//!
//! ```
//! use agentlog_model::{Agent, Entry, EntryKind, Message, Role, Session, SessionMeta};
//!
//! let mut s = Session::new(SessionMeta::new("s1", Agent::Claude));
//! s.push(Entry::new("a", None, EntryKind::Message(Message::text(Role::User, "**hi** <script>alert(1)</script>"))));
//! let html = agentlog_web::export_session(&s, "/tmp/s1.jsonl");
//! assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
//! assert!(html.contains("<strong>hi</strong>"));
//! ```
#![forbid(unsafe_code)]

pub mod assets;
pub mod charts;
pub mod escape;
pub mod files;
pub mod first;
pub mod markdown;
pub mod pages;
pub mod render;
mod server;

pub use pages::{export_index, export_session, Exported};
pub use server::{new_token, serve, OpenBackend, ServeConfig, Source};

use std::path::{Path, PathBuf};

/// What can go wrong serving or exporting.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// A file or socket operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file, or what was being opened.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The index failed.
    #[error(transparent)]
    Index(#[from] agentlog_index::IndexError),
    /// A session could not be read.
    #[error("{0}")]
    Read(String),
    /// Nothing there.
    #[error("{0}")]
    NotFound(String),
    /// A request that makes no sense.
    #[error("{0}")]
    BadRequest(String),
}

impl WebError {
    fn io(path: &Path, source: std::io::Error) -> WebError {
        WebError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
