//! The storage backend trait: catalog, full-text search and statistics
//! behind one interface, so front ends work the same over the embedded
//! SQLite index and a shared server (PostgreSQL).
//!
//! Every operation takes a `*Params` struct (new fields get defaults, so
//! callers written today keep compiling). Operations a backend cannot do
//! return [`IndexError::Unsupported`] by default. Errors never name the
//! command line: they say which backend, file or value failed.
//!
//! The SQLite [`Index`] is the first implementation. The conformance suite
//! (`conformance` module, behind the `conformance` cargo feature) runs the
//! same checks against any implementation.
//!
//! ```
//! use agentlog_index::backend::{Backend, ResolveParams};
//! use agentlog_index::{Index, ListParams};
//!
//! let dir = std::env::temp_dir().join(format!("agentlog-doc-{}", std::process::id()));
//! let (index, _notice) = Index::open(&dir.join("index.sqlite"))?;
//! let backend: Box<dyn Backend> = Box::new(index);
//! assert!(backend.list_sessions(&ListParams::default())?.is_empty());
//! assert!(backend.resolve_session(&ResolveParams::new("abc"))?.is_empty());
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), agentlog_index::IndexError>(())
//! ```

use crate::title::listed_title;
use crate::{
    Facet, Hit, Index, IndexError, ListParams, Listed, ListingQuery, PageParams, Progress,
    SearchParams, SessionInfo, SessionOrder, SessionPage, SessionTokens, Stats, StatsParams,
    UpdateReport,
};
use agentlog_formats::discover::Found;
use serde::Serialize;

/// Which session files to bring into the backend.
#[derive(Clone, Debug, Default)]
pub struct UpdateParams {
    /// Every session file the backend should hold: new and changed files
    /// are read, unchanged ones skipped, and files the backend holds that
    /// are not listed here are removed.
    pub found: Vec<Found>,
}

/// Which sessions an id or id prefix names.
#[derive(Clone, Debug, Default)]
pub struct ResolveParams {
    /// A session id, or the start of one.
    pub prefix: String,
    /// At most this many (0: all).
    pub limit: usize,
}

impl ResolveParams {
    /// Returns parameters resolving `prefix` with no limit.
    pub fn new(prefix: impl Into<String>) -> ResolveParams {
        ResolveParams {
            prefix: prefix.into(),
            limit: 0,
        }
    }
}

/// A session an id prefix resolved to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionRef {
    /// The full session id.
    pub session_id: String,
    /// The agent.
    pub agent: String,
    /// The format it was read as (a registry name).
    pub format: String,
    /// The session file.
    pub path: String,
    /// Last change (ms since the epoch).
    pub updated_ms: Option<i64>,
}

/// What a backend holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BackendStatus {
    /// Sessions in the catalog.
    pub sessions: u64,
    /// Entries (searchable documents).
    pub entries: u64,
    /// Session files known (read or failed).
    pub files: u64,
    /// Files whose last read failed.
    pub failed_files: u64,
}

/// How many sessions match `p` (its `limit` and `offset` left aside), by
/// listing them bare with `list` and counting those of `p.formats`: what a
/// backend without a count of its own, or a filter it cannot count, does.
pub(crate) fn count_listed(
    p: &ListParams,
    list: impl FnOnce(&ListParams) -> Result<Vec<SessionInfo>, IndexError>,
) -> Result<usize, IndexError> {
    let all = ListParams {
        bare: true,
        limit: 0,
        offset: 0,
        ..p.clone()
    };
    Ok(list(&all)?
        .iter()
        .filter(|s| p.formats.is_empty() || p.formats.contains(&s.format))
        .count())
}

/// [`Backend::visit_listing`] over what every backend has: its list of
/// sessions, filtered and sorted here (or, for the newest few of some
/// formats, its own limited list and count).
fn listing_of_list(
    b: &(impl Backend + ?Sized),
    q: &ListingQuery,
    f: &mut dyn FnMut(&Listed<'_>),
) -> Result<usize, IndexError> {
    let give = |info: &SessionInfo, f: &mut dyn FnMut(&Listed<'_>)| {
        // The listed title, whether the backend gave it (a brief row) or
        // the whole title and first prompt.
        let title = listed_title(info.title.as_deref(), info.first_prompt.as_deref());
        f(&Listed {
            session_id: &info.session_id,
            agent: &info.agent,
            format: &info.format,
            path: &info.path,
            project: info.project.as_deref(),
            title: title.as_deref(),
            started_ms: info.started_ms(),
            updated_ms: info.updated_ms,
            messages: info.messages,
            tokens: info.tokens.iter().map(SessionTokens::total).sum(),
            kind: info.kind,
        })
    };
    if q.formats.is_empty() {
        // No format: no session (an empty `ListParams::formats` is all).
        return Ok(0);
    }
    let brief = ListParams {
        formats: q.formats.clone(),
        order: q.order,
        brief: true,
        // A count reads no title and no tokens.
        bare: q.limit == Some(0),
        ..ListParams::default()
    };
    if let (Some(limit @ 1..), None, None, false) = (
        q.limit,
        &q.project,
        q.started_since_ms,
        q.conversations_only,
    ) {
        let params = ListParams { limit, ..brief };
        let mut given = 0;
        for info in b.list_sessions(&params)? {
            if q.matches(&info) && given < limit {
                give(&info, f);
                given += 1;
            }
        }
        return Ok(if given < limit {
            given
        } else {
            b.count_sessions(&params)?
        });
    }
    let mut rows: Vec<SessionInfo> = Vec::new();
    b.for_each_session(
        &ListParams {
            unordered: true,
            ..brief
        },
        &mut |info| {
            if q.matches(&info) {
                rows.push(info);
            }
        },
    )?;
    let key = |s: &SessionInfo| match q.order {
        SessionOrder::Created => s.started_ms(),
        SessionOrder::Updated => s.updated_ms,
    };
    rows.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.path.cmp(&b.path)));
    for info in rows.iter().take(q.limit.unwrap_or(usize::MAX)) {
        give(info, f);
    }
    Ok(rows.len())
}

/// A store of the session catalog, full-text search and token statistics.
///
/// Required: [`name`](Backend::name), [`status`](Backend::status),
/// [`list_sessions`](Backend::list_sessions) and
/// [`resolve_session`](Backend::resolve_session). The others return
/// [`IndexError::Unsupported`] unless implemented.
pub trait Backend: Send {
    /// Returns the backend's name (`sqlite`, `postgres`), used in errors.
    fn name(&self) -> &'static str;

    /// Returns how much the backend holds.
    fn status(&self) -> Result<BackendStatus, IndexError>;

    /// Returns the sessions matching `p`, ordered by `p.order`, newest
    /// first.
    fn list_sessions(&self, p: &ListParams) -> Result<Vec<SessionInfo>, IndexError>;

    /// Gives `f` the sessions [`list_sessions`](Backend::list_sessions)
    /// returns, one at a time, as they are read: a caller that turns each
    /// into something else holds one list, not two (a backend may read
    /// them all first).
    fn for_each_session(
        &self,
        p: &ListParams,
        f: &mut dyn FnMut(SessionInfo),
    ) -> Result<(), IndexError> {
        self.list_sessions(p)?.into_iter().for_each(f);
        Ok(())
    }

    /// Returns how many sessions match `p` (its `limit` and `offset` left
    /// aside), counting only those of `p.formats` when it is not empty.
    fn count_sessions(&self, p: &ListParams) -> Result<usize, IndexError> {
        count_listed(p, |all| self.list_sessions(all))
    }

    /// Gives `f` the sessions `q` lists, in its order, as they are read
    /// (a backend may read them all first); returns how many match, its
    /// limit aside.
    fn visit_listing(
        &self,
        q: &ListingQuery,
        f: &mut dyn FnMut(&Listed<'_>),
    ) -> Result<usize, IndexError> {
        listing_of_list(self, q, f)
    }

    /// Returns the sessions whose id starts with `p.prefix` (an exact id
    /// first, then most recently updated first).
    fn resolve_session(&self, p: &ResolveParams) -> Result<Vec<SessionRef>, IndexError>;

    /// Brings the backend up to date with the files of `p`, reporting
    /// progress as files are read.
    fn update(
        &mut self,
        p: &UpdateParams,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<UpdateReport, IndexError> {
        let _ = (p, progress);
        Err(unsupported(self.name(), "update"))
    }

    /// Returns the catalog row (tokens included) of the session of each
    /// file of `paths`, `None` for a path not in the catalog: what a
    /// listing made with [`ListParams::bare`] reads for the rows it keeps.
    fn sessions_at(&self, paths: &[String]) -> Result<Vec<Option<SessionInfo>>, IndexError> {
        let all = self.list_sessions(&ListParams::default())?;
        let by_path: std::collections::HashMap<String, SessionInfo> =
            all.into_iter().map(|s| (s.path.clone(), s)).collect();
        Ok(paths.iter().map(|p| by_path.get(p).cloned()).collect())
    }

    /// Searches every entry; returns the best hits first.
    fn search(&self, p: &SearchParams) -> Result<Vec<Hit>, IndexError> {
        let _ = p;
        Err(unsupported(self.name(), "full-text search"))
    }

    /// Counts the entries matching `p`, stopping at `cap`.
    fn count_matches(&self, p: &SearchParams, cap: u64) -> Result<u64, IndexError> {
        let _ = (p, cap);
        Err(unsupported(self.name(), "counting search matches"))
    }

    /// Searches as [`search`](Backend::search) does and counts the entries
    /// matching `p`, up to `cap` (`None` when the backend cannot count).
    /// A backend that reads the matches while searching answers both at
    /// once; by default the count is a second query, made only when the
    /// hits fill `p.limit` (fewer hits are every match).
    fn search_and_count(
        &self,
        p: &SearchParams,
        cap: u64,
    ) -> Result<(Vec<Hit>, Option<u64>), IndexError> {
        let hits = self.search(p)?;
        let limit = if p.limit == 0 { 20 } else { p.limit };
        if hits.len() < limit {
            let n = hits.len() as u64;
            return Ok((hits, Some(n.min(cap))));
        }
        match self.count_matches(p, cap) {
            Ok(n) => Ok((hits, Some(n))),
            Err(IndexError::Unsupported { .. }) => Ok((hits, None)),
            Err(e) => Err(e),
        }
    }

    /// Counts tokens and cost.
    fn stats(&self, p: &StatsParams) -> Result<Stats, IndexError> {
        let _ = p;
        Err(unsupported(self.name(), "token statistics"))
    }

    /// Returns the files whose last read failed, with the reason.
    fn failed_files(&self) -> Result<Vec<(String, String)>, IndexError> {
        Err(unsupported(self.name(), "listing failed files"))
    }

    /// Returns one page of the catalog for `p`, with the number of sessions
    /// matching its filters: what a session browser shows.
    fn session_page(&self, p: &PageParams) -> Result<SessionPage, IndexError> {
        let _ = p;
        Err(unsupported(self.name(), "paging the catalog"))
    }

    /// Returns the agents with their session counts, most sessions first
    /// (then by name).
    fn agent_facets(&self) -> Result<Vec<Facet>, IndexError> {
        Err(unsupported(self.name(), "counting sessions per agent"))
    }

    /// Returns the models that answered with the number of sessions each
    /// answered in, most sessions first (then by name).
    fn model_facets(&self) -> Result<Vec<Facet>, IndexError> {
        Err(unsupported(self.name(), "counting sessions per model"))
    }

    /// Returns the sessions whose file lies under the folder `dir` (the
    /// subagent files kept beside a session), oldest first, at most 500.
    fn sessions_under(&self, dir: &str) -> Result<Vec<SessionInfo>, IndexError> {
        let _ = dir;
        Err(unsupported(self.name(), "listing the sessions of a folder"))
    }

    /// Returns the bytes of the session file at `path` as the backend keeps
    /// them, or `None` when it keeps none and the file itself is to be
    /// read (the local index reads files where they are; a team server
    /// keeps what machines pushed).
    fn original(&self, path: &str) -> Result<Option<Vec<u8>>, IndexError> {
        let _ = path;
        Ok(None)
    }

    /// Returns the shape of the session file at `path` as it is now
    /// ([`crate::shape`]), when the backend keeps one: the local index does
    /// for large files; a team server keeps none.
    fn shape(&self, path: &str) -> Result<Option<crate::shape::Shape>, IndexError> {
        let _ = path;
        Ok(None)
    }
}

/// Reads the session of the catalog row `info` to show it (the web viewer,
/// the HTML export: [`agentlog_formats::Format::read_bytes_to_show`], so it
/// is not to be written back into its own format): from `kept`, the bytes
/// a backend keeps of it ([`Backend::original`]), else from its file.
///
/// `trim` is applied to every entry (to drop what is not shown; see
/// [`agentlog_formats::Format::read_path_to_show_with`]).
///
/// Kept bytes are read under a folder that cannot exist (`/dev/null` is
/// not one) by the file's own name: what formats take from names (ids,
/// dates) stays, and no file beside it on this machine is taken for part
/// of the session. What the pushing machine found beside the file (such as
/// Gemini's project root) comes from the catalog row instead.
pub fn read_session(
    info: &SessionInfo,
    kept: Option<&[u8]>,
    trim: &dyn Fn(&mut agentlog_model::Entry),
) -> Result<agentlog_formats::Read, IndexError> {
    let fail = |message: String| IndexError::Session {
        path: info.path.clone(),
        message,
    };
    let format = agentlog_formats::registry::by_name(&info.format)
        .ok_or_else(|| fail(format!("{}: unknown format {}", info.path, info.format)))?;
    let path = std::path::Path::new(&info.path);
    let Some(bytes) = kept else {
        return format
            .read_path_to_show_with(path, trim)
            .map_err(|e| fail(e.to_string()));
    };
    let name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "session".into());
    let mut read = format
        .read_bytes_to_show(&std::path::Path::new("/dev/null").join(name), bytes)
        .map_err(|e| fail(format!("{} (the bytes kept of it): {e}", info.path)))?;
    read.session.entries.iter_mut().for_each(trim);
    if read.session.meta.cwd.is_none() {
        read.session.meta.cwd = info.project.clone();
    }
    Ok(read)
}

/// Returns the error of an operation `backend` does not support.
pub fn unsupported(backend: &'static str, operation: &'static str) -> IndexError {
    IndexError::Unsupported { backend, operation }
}

impl Backend for Index {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn shape(&self, path: &str) -> Result<Option<crate::shape::Shape>, IndexError> {
        Index::shape(self, path)
    }

    fn status(&self) -> Result<BackendStatus, IndexError> {
        let (entries, sessions, failed_files) = self.counts()?;
        Ok(BackendStatus {
            sessions,
            entries,
            files: self.file_state_count()?,
            failed_files,
        })
    }

    fn list_sessions(&self, p: &ListParams) -> Result<Vec<SessionInfo>, IndexError> {
        self.sessions(p)
    }

    fn for_each_session(
        &self,
        p: &ListParams,
        f: &mut dyn FnMut(SessionInfo),
    ) -> Result<(), IndexError> {
        self.visit_sessions(p, f)
    }

    fn count_sessions(&self, p: &ListParams) -> Result<usize, IndexError> {
        Index::count_sessions(self, p)
    }

    fn visit_listing(
        &self,
        q: &ListingQuery,
        f: &mut dyn FnMut(&Listed<'_>),
    ) -> Result<usize, IndexError> {
        Index::visit_listing(self, q, f)
    }

    fn resolve_session(&self, p: &ResolveParams) -> Result<Vec<SessionRef>, IndexError> {
        self.resolve(p)
    }

    fn update(
        &mut self,
        p: &UpdateParams,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<UpdateReport, IndexError> {
        Index::update(self, &p.found, progress)
    }

    fn search(&self, p: &SearchParams) -> Result<Vec<Hit>, IndexError> {
        Index::search(self, p)
    }

    fn count_matches(&self, p: &SearchParams, cap: u64) -> Result<u64, IndexError> {
        Index::count_matches(self, p, cap)
    }

    fn sessions_at(&self, paths: &[String]) -> Result<Vec<Option<SessionInfo>>, IndexError> {
        Index::sessions_at(self, paths)
    }

    fn stats(&self, p: &StatsParams) -> Result<Stats, IndexError> {
        Index::stats(self, p)
    }

    fn failed_files(&self) -> Result<Vec<(String, String)>, IndexError> {
        Index::failed_files(self)
    }

    fn session_page(&self, p: &PageParams) -> Result<SessionPage, IndexError> {
        Index::session_page(self, p)
    }

    fn agent_facets(&self) -> Result<Vec<Facet>, IndexError> {
        Index::agent_facets(self)
    }

    fn model_facets(&self) -> Result<Vec<Facet>, IndexError> {
        Index::model_facets(self)
    }

    fn sessions_under(&self, dir: &str) -> Result<Vec<SessionInfo>, IndexError> {
        Index::sessions_under(self, dir)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    struct CatalogOnly;

    impl Backend for CatalogOnly {
        fn name(&self) -> &'static str {
            "catalog-only"
        }
        fn status(&self) -> Result<BackendStatus, IndexError> {
            Ok(BackendStatus::default())
        }
        fn list_sessions(&self, _: &ListParams) -> Result<Vec<SessionInfo>, IndexError> {
            Ok(Vec::new())
        }
        fn resolve_session(&self, _: &ResolveParams) -> Result<Vec<SessionRef>, IndexError> {
            Ok(Vec::new())
        }
    }

    #[test]
    fn the_sqlite_index_passes_the_conformance_suite() {
        let dir = tempfile::tempdir().unwrap();
        let ix = dir.path().join("ix");
        let mut n = 0;
        crate::conformance::run(
            &mut || -> Box<dyn Backend> {
                n += 1;
                Box::new(Index::open(&ix.join(format!("{n}.sqlite"))).unwrap().0)
            },
            &dir.path().join("sessions"),
            &crate::conformance::sessions(1_750_000_000_000),
        );
    }

    #[test]
    fn optional_operations_say_which_backend_and_operation() {
        let b = CatalogOnly;
        let e = b
            .search(&SearchParams::new("x"))
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("the catalog-only index backend does not support full-text search")
        );
        assert!(matches!(
            b.stats(&StatsParams::default()),
            Err(IndexError::Unsupported {
                backend: "catalog-only",
                operation: "token statistics"
            })
        ));
    }
}
