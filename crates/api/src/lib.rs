//! The library every agentlog front end calls: the command line, the web
//! viewer, a team server, an editor plugin.
//!
//! A [`Library`] holds [`Settings`] (where sessions are found, where the
//! index is) and offers the services each front end needs: list sessions
//! ([`Library::list`], one [`SessionSummary`] each), resolve an id or id
//! prefix ([`Library::resolve`]), read a session ([`Library::read`]),
//! search and count through the index (refreshed first when that is cheap,
//! [`refresh`]), and convert ([`Library::convert`]). Front ends parse their
//! input, make one call, and print the result.
//!
//! ```
//! use agentlog_api::{Library, ListOptions, Settings};
//! # let home = tempfile::tempdir()?;
//! # agentlog_api::example::write_claude_session(home.path())?;
//! let lib = Library::new(Settings::with_home(home.path()));
//! let listing = lib.list(&ListOptions::default())?;
//! let first = &listing.sessions[0];
//! println!("{} {} {:?}", first.agent, first.id, first.title);
//! let read = lib.read(&first.id[..8])?;
//! let hits = lib.search(&agentlog_index::SearchParams::new("tokenizer"))?;
//! assert_eq!(hits.hits[0].session_id, read.session.meta.id);
//! let (codex, report) = lib.convert(&read.session, "codex")?;
//! assert!(!codex.files()[0].1.is_empty());
//! println!("lost in conversion: {report}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

pub mod append;
pub mod archive;
pub mod context;
pub mod copies;
pub mod dataset;
pub mod doctor;
pub mod drift;
mod error;
pub mod example;
pub mod export;
pub mod hooks;
mod kept;
pub mod list;
pub mod migrate;
pub mod otel;
pub mod output;
pub mod pick;
pub mod refresh;
pub mod resolve;
pub mod resume;
pub mod secrets;
pub mod settings;
pub mod training;
pub mod tree;
pub mod validate;
pub mod walk;

pub use error::{is_usage_index, ApiError, Candidate};
pub use list::{EmptiedBy, ListOptions, ListOrder, Listing, SessionSummary, Source};
pub use settings::Settings;

use agentlog_formats::discover::Found;
use agentlog_formats::{Fidelity, Read, Written};
use agentlog_index::{Hit, SearchParams, Stats, StatsParams};
use agentlog_model::Session;

/// The services of agentlog over one machine's sessions.
#[derive(Debug, Clone)]
pub struct Library {
    /// Where sessions are found and where the index is.
    pub settings: Settings,
}

/// Search hits, and how many entries match in all.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SearchResults {
    /// The best hits first.
    pub hits: Vec<Hit>,
    /// True when more entries match than `hits` holds.
    pub more: bool,
    /// How many entries match in all; `None` when the backend cannot
    /// count them.
    pub matches: Option<Matches>,
}

/// How many entries a search matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Matches {
    /// This many.
    Exactly(u64),
    /// At least this many (counting stopped there: common words match
    /// much of every corpus, and counting them all would cost a scan).
    AtLeast(u64),
}

/// Where counting the matches of a search stops.
pub const MATCHES_COUNTED_UP_TO: u64 = 1000;

impl Library {
    /// Returns a library over `settings`.
    pub fn new(settings: Settings) -> Library {
        Library { settings }
    }

    /// Returns a library over this process's settings (see
    /// [`Settings::from_process`]).
    pub fn from_process() -> Result<Library, ApiError> {
        Ok(Library::new(Settings::from_process(&[])?))
    }

    /// Lists sessions (see [`list::list`]).
    pub fn list(&self, opts: &ListOptions) -> Result<Listing, ApiError> {
        list::list(&self.settings, opts, &|_, _| {})
    }

    /// Returns the session file a path, id or id prefix names.
    pub fn resolve(&self, id: &str) -> Result<Found, ApiError> {
        resolve::resolve(&self.settings, id)
    }

    /// Reads the session a path, id or id prefix names.
    pub fn read(&self, id: &str) -> Result<Read, ApiError> {
        Ok(resolve::read(&self.settings, id, None)?.2)
    }

    /// Searches every session through the index (refreshed first when that
    /// is cheap).
    pub fn search(&self, p: &SearchParams) -> Result<SearchResults, ApiError> {
        agentlog_index::to_fts(&p.query)?;
        let (index, _) = refresh::refreshed(&self.settings, &mut |_| {})?;
        search(&index, p)
    }

    /// Counts tokens and cost through the index (refreshed first when that
    /// is cheap).
    pub fn stats(&self, p: &StatsParams) -> Result<Stats, ApiError> {
        let (index, _) = refresh::refreshed(&self.settings, &mut |_| {})?;
        Ok(agentlog_index::Backend::stats(&index, p)?)
    }

    /// Writes `session` in the format `to` (or as training data,
    /// `openai-chat` or `sharegpt`); returns the file's bytes (or,
    /// for a format whose sessions are folders, the folder's files) and
    /// what the format could not hold.
    pub fn convert(&self, session: &Session, to: &str) -> Result<(Written, Fidelity), ApiError> {
        if let Some(target) = training::Target::named(to) {
            let (line, fidelity) = training::example(session, target);
            return Ok((Written::File((line + "\n").into_bytes()), fidelity));
        }
        let format = resolve::format_named(to)?;
        Ok(format.write_session(session)?)
    }
}

/// Searches `backend`, asking for one hit more than the limit to tell
/// whether more match; when more do, counts them up to
/// [`MATCHES_COUNTED_UP_TO`].
pub fn search(
    backend: &dyn agentlog_index::Backend,
    p: &SearchParams,
) -> Result<SearchResults, ApiError> {
    let limit = if p.limit == 0 { 20 } else { p.limit };
    let mut q = p.clone();
    q.limit = limit + 1;
    let (mut hits, counted) = backend.search_and_count(&q, MATCHES_COUNTED_UP_TO)?;
    let more = hits.len() > limit;
    hits.truncate(limit);
    let matches = match counted {
        _ if !more => Some(Matches::Exactly(hits.len() as u64)),
        Some(n) if n >= MATCHES_COUNTED_UP_TO => Some(Matches::AtLeast(n)),
        // Entries written between the search and the count can make the
        // count the smaller; the hits shown are a floor.
        Some(n) => Some(Matches::Exactly(n.max(hits.len() as u64 + 1))),
        None => None,
    };
    Ok(SearchResults {
        hits,
        more,
        matches,
    })
}
