//! `agentlog serve`: the HTTP server over a catalog backend and the
//! sessions' bytes: this machine's index and files, or a team server.

use crate::assets;
use crate::escape::url_enc;
use crate::pages::{self, ListQuery, Mode, PAGE};
use crate::render::{Target, View};
use crate::WebError;
use agentlog_formats::discover::Found;
use agentlog_index::backend::ResolveParams;
use agentlog_index::follow::Follow;
use agentlog_index::{Backend, GroupBy, Index, IndexError, SearchParams, StatsParams};
use agentlog_model::Session;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// Opens a connection to a shared backend.
pub type OpenBackend = Arc<dyn Fn() -> Result<Box<dyn Backend>, IndexError> + Send + Sync>;

/// Where the served sessions come from.
#[derive(Clone)]
pub enum Source {
    /// This machine: the local index, kept fresh from the session files,
    /// which are read where they are.
    Local {
        /// Where the index is, where sessions are found and which formats
        /// (after the user's exclusions).
        settings: agentlog_api::Settings,
    },
    /// A shared backend (a team server): its catalog, and the bytes it
    /// keeps of each session ([`Backend::original`]); nothing is read from
    /// this machine's disk.
    Shared {
        /// Opens a connection (a few are kept open).
        open: OpenBackend,
    },
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Local { settings } => write!(f, "Local({})", settings.index_path.display()),
            Source::Shared { .. } => write!(f, "Shared"),
        }
    }
}

/// What `serve` needs: where sessions come from and how to listen.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Where sessions come from.
    pub source: Source,
    /// The address to listen on.
    pub addr: SocketAddr,
    /// The token every request must carry (`?token=` once, then a cookie);
    /// required when listening beyond loopback.
    pub token: Option<String>,
    /// Seconds between catalog refreshes of a local source (0: never).
    pub refresh_secs: u64,
    /// Replace secrets (API keys, tokens, passwords, private keys) in
    /// everything served; on by default beyond loopback.
    pub redact: bool,
}

/// What a session's version is told by: its file's size and modification
/// time (local), or its catalog row's entries and last change (shared).
type Stamp = (u64, Option<SystemTime>, Option<i64>);

struct CachedSession {
    stamp: Stamp,
    session: Arc<Session>,
    subagents: Subagents,
}

/// The subagent sessions kept beside a session: (file, session).
type Subagents = Arc<Vec<(String, Session)>>;

/// The values the list's filters offer (agents, models), with when they
/// were counted.
type Facets = (
    Instant,
    Vec<agentlog_index::Facet>,
    Vec<agentlog_index::Facet>,
);

/// How long counted facets are shown before they are counted again (the
/// refresher counts them again as soon as it reads a change).
const FACETS_FOR: Duration = Duration::from_secs(10);

struct App {
    cfg: ServeConfig,
    facets: Mutex<Option<Facets>>,
    pool: Mutex<Vec<Box<dyn Backend>>>,
    sessions: Mutex<Vec<(PathBuf, CachedSession)>>,
    /// One lock per session file read whole: a second request for a file
    /// being read waits for it and takes it from `sessions`, instead of
    /// reading it again beside it.
    reading: Mutex<std::collections::HashMap<PathBuf, Arc<Mutex<()>>>>,
    keys: Mutex<std::collections::HashMap<String, String>>,
}

impl App {
    /// Runs `f` with an open backend (one from the pool, or a new one).
    fn with_index<T>(
        &self,
        f: impl FnOnce(&dyn Backend) -> Result<T, WebError>,
    ) -> Result<T, WebError> {
        let idx = self.pool.lock().ok().and_then(|mut p| p.pop());
        let idx = match idx {
            Some(i) => i,
            None => match &self.cfg.source {
                Source::Local { settings } => Box::new(Index::open(&settings.index_path)?.0),
                Source::Shared { open } => open()?,
            },
        };
        let r = f(idx.as_ref());
        // A backend whose call failed may have lost its connection: it is
        // not kept.
        if r.is_ok() {
            if let Ok(mut p) = self.pool.lock() {
                if p.len() < 4 {
                    p.push(idx);
                }
            }
        }
        r
    }

    /// Returns the agents and models with their session counts: counting
    /// models reads every usage row (150 ms at 100,000 sessions), so the
    /// counts are kept for [`FACETS_FOR`] or until the refresher reads a
    /// change.
    fn facets(&self) -> Result<(Vec<agentlog_index::Facet>, Vec<agentlog_index::Facet>), WebError> {
        if let Some((at, a, m)) = self.facets.lock().ok().and_then(|f| f.clone()) {
            if at.elapsed() < FACETS_FOR {
                return Ok((a, m));
            }
        }
        self.count_facets()
    }

    /// Counts the facets anew and keeps them.
    fn count_facets(
        &self,
    ) -> Result<(Vec<agentlog_index::Facet>, Vec<agentlog_index::Facet>), WebError> {
        let (a, m) = self.with_index(|i| Ok((i.agent_facets()?, i.model_facets()?)))?;
        if let Ok(mut f) = self.facets.lock() {
            *f = Some((Instant::now(), a.clone(), m.clone()));
        }
        Ok((a, m))
    }

    /// True when sessions are read from this machine's files.
    fn local(&self) -> bool {
        matches!(self.cfg.source, Source::Local { .. })
    }

    /// Returns the catalog row of the session file at `path`.
    fn info(&self, path: &str) -> Result<agentlog_index::SessionInfo, WebError> {
        self.check_open(path)?;
        self.with_index(|i| Ok(i.sessions_at(&[path.to_string()])?))?
            .into_iter()
            .next()
            .flatten()
            .ok_or_else(|| WebError::NotFound(format!("no session file {path} in the index")))
    }

    /// Checks, before every read of a session on this machine, that `path`
    /// is still the file (or session folder) the index found, not a
    /// symbolic link or anything else put in its place since: a link
    /// swapped in after indexing would show whatever file it points to.
    fn check_open(&self, path: &str) -> Result<(), WebError> {
        if !self.local() {
            return Ok(());
        }
        let p = Path::new(path);
        let md = match std::fs::symlink_metadata(p) {
            Ok(md) => md,
            // Its agent deleted it: read from agentlog's archive.
            Err(_) if agentlog_formats::archived::is_kept_only(p) => return Ok(()),
            Err(e) => return Err(WebError::io(p, e)),
        };
        let t = md.file_type();
        if t.is_file() || t.is_dir() {
            return Ok(());
        }
        let what = if t.is_symlink() {
            "a symbolic link"
        } else {
            "not a regular file"
        };
        Err(WebError::NotFound(format!(
            "{path} is {what} now: served pages are read only from session files themselves"
        )))
    }

    /// Returns what tells whether the session at `path` changed.
    fn stamp(&self, path: &str, info: &agentlog_index::SessionInfo) -> Result<Stamp, WebError> {
        if self.local() {
            let p = Path::new(path);
            match std::fs::metadata(p) {
                Ok(md) => Ok((md.len(), md.modified().ok(), None)),
                Err(e) => match agentlog_formats::archived::stat(p) {
                    // Kept in the archive: it changes only when captured.
                    Some(k) => Ok((k.size, None, Some(k.mtime_ns / 1_000_000))),
                    None => Err(WebError::io(p, e)),
                },
            }
        } else {
            Ok((info.entries, None, info.updated_ms))
        }
    }

    /// Returns the redactor when served pages are redacted.
    fn redactor(&self) -> Result<Option<&'static agentlog_redact::Redactor>, WebError> {
        if !self.cfg.redact {
            return Ok(None);
        }
        agentlog_redact::Redactor::builtin()
            .map(Some)
            .map_err(|e| WebError::Read(e.to_string()))
    }

    /// Replaces secrets in a piece of catalog text when pages are redacted.
    fn scrub(&self, text: &mut Option<String>) -> Result<(), WebError> {
        if let (Some(r), Some(t)) = (self.redactor()?, text.as_mut()) {
            r.text(t, "catalog");
        }
        Ok(())
    }

    /// Replaces secrets in a search hit (its snippet piece by piece, so the
    /// marks stay on the words found).
    fn scrub_hit(&self, h: &mut agentlog_index::Hit) -> Result<(), WebError> {
        let Some(r) = self.redactor()? else {
            return Ok(());
        };
        // The whole snippet at once (a key name and its value may fall on
        // either side of a mark), then the marks found again in order.
        let words: Vec<String> = h
            .segments()
            .into_iter()
            .filter(|s| s.hit)
            .map(|s| s.text)
            .collect();
        let mut text = h.text.clone();
        r.text(&mut text, "snippet");
        // A snippet is a window of the text: a key name that marks the
        // value as a secret may lie outside it. Long tokens of letters and
        // digits (what keys and tokens look like) are masked as well.
        let text = mask_tokens(&text);
        let mut marks = Vec::new();
        let mut pos = 0;
        for w in words {
            if let Some(k) = text.get(pos..).and_then(|t| t.find(w.as_str())) {
                let start = pos + k;
                marks.push(agentlog_index::Mark {
                    start,
                    end: start + w.len(),
                });
                pos = start + w.len();
            }
        }
        h.text = text;
        h.marks = marks;
        h.snippet = h.text.clone();
        self.scrub(&mut h.title)?;
        self.scrub(&mut h.project)?;
        Ok(())
    }

    /// Returns what links carry to name the session file at `path`: the
    /// path itself, or when pages are redacted an opaque key (`k:` and 16
    /// hex digits of its SHA-256), since a path can hold a secret.
    fn key_of(&self, path: &str) -> String {
        if !self.cfg.redact {
            return path.to_string();
        }
        use sha2::{Digest, Sha256};
        let d = Sha256::digest(path.as_bytes());
        let hex: String = d.iter().take(8).map(|b| format!("{b:02x}")).collect();
        format!("k:{hex}")
    }

    /// Returns the session file a link names (see [`App::key_of`]).
    fn resolve(&self, p: &str) -> Result<String, WebError> {
        if !p.starts_with("k:") || !self.cfg.redact {
            return Ok(p.to_string());
        }
        if let Some(found) = self.keys.lock().ok().and_then(|k| k.get(p).cloned()) {
            return Ok(found);
        }
        let all = self.with_index(|i| {
            Ok(i.session_page(&agentlog_index::PageParams {
                limit: usize::MAX / 2,
                ..Default::default()
            })?)
        })?;
        let mut found = None;
        if let Ok(mut keys) = self.keys.lock() {
            keys.clear();
            for s in all.sessions {
                let k = self.key_of(&s.path);
                if k == p {
                    found = Some(s.path.clone());
                }
                keys.insert(k, s.path);
            }
        }
        found.ok_or_else(|| WebError::NotFound("no such session in the index".into()))
    }

    /// Returns the parsed session at `path` (kept for the next request while
    /// it does not change), when the catalog knows the file.
    fn session(&self, path: &str) -> Result<(Arc<Session>, agentlog_index::SessionInfo), WebError> {
        self.session_and_subagents(path).map(|(s, i, _)| (s, i))
    }

    /// Returns the session at `path` as [`App::session`] does, with the
    /// subagent sessions kept beside it (Claude Code's
    /// `<session>/subagents/agent-*.jsonl`, read from this machine's files;
    /// none from a team server).
    fn session_and_subagents(
        &self,
        path: &str,
    ) -> Result<(Arc<Session>, agentlog_index::SessionInfo, Subagents), WebError> {
        self.session_with(path, self.info(path)?)
    }

    /// [`App::session_and_subagents`] of the catalog row `info` of `path`.
    fn session_with(
        &self,
        path: &str,
        info: agentlog_index::SessionInfo,
    ) -> Result<(Arc<Session>, agentlog_index::SessionInfo, Subagents), WebError> {
        let p = PathBuf::from(path);
        let stamp = self.stamp(path, &info)?;
        if let Some((s, subs)) = self.cached(&p, &stamp) {
            return Ok((s, info, subs));
        }
        let gate = self
            .reading
            .lock()
            .map(|mut r| r.entry(p.clone()).or_default().clone())
            .unwrap_or_default();
        let held = gate.lock();
        let read = self.read_whole(path, &p, info, stamp);
        drop(held);
        // The last to read it: later requests find it in the cache.
        if let Ok(mut r) = self.reading.lock() {
            if r.get(&p).is_some_and(|g| Arc::ptr_eq(g, &gate)) {
                r.remove(&p);
            }
        }
        read
    }

    /// True while a request reads the session file at `path` whole.
    fn being_read(&self, path: &Path) -> bool {
        self.reading.lock().is_ok_and(|r| r.contains_key(path))
    }

    /// [`App::session_and_subagents`] once the file's gate is held: from
    /// the cache when another request read it meanwhile, else read.
    fn read_whole(
        &self,
        path: &str,
        p: &Path,
        info: agentlog_index::SessionInfo,
        stamp: Stamp,
    ) -> Result<(Arc<Session>, agentlog_index::SessionInfo, Subagents), WebError> {
        if let Some((s, subs)) = self.cached(p, &stamp) {
            return Ok((s, info, subs));
        }
        let kept = self.with_index(|i| Ok(i.original(path)?))?;
        if kept.is_none() && !self.local() {
            return Err(WebError::NotFound(format!(
                "the server keeps no bytes of {path}"
            )));
        }
        // What no page shows is dropped as the session is read: a long
        // session's extras never pile up in memory.
        let mut read = agentlog_index::backend::read_session(
            &info,
            kept.as_deref(),
            &crate::render::keep_shown_entry,
        )?;
        if let Some(r) = self.redactor()? {
            r.session(&mut read.session);
        }
        let session = Arc::new(read.session);
        let subagents = self.subagents(p, &info)?;
        if let Ok(mut cache) = self.sessions.lock() {
            cache.retain(|(q, _)| q != p);
            cache.insert(
                0,
                (
                    p.to_path_buf(),
                    CachedSession {
                        stamp,
                        session: session.clone(),
                        subagents: subagents.clone(),
                    },
                ),
            );
            cache.truncate(3);
        }
        Ok((session, info, subagents))
    }

    /// Returns the session at `path` from the cache when it is there in the
    /// state `stamp`.
    fn cached(&self, path: &Path, stamp: &Stamp) -> Option<(Arc<Session>, Subagents)> {
        let cache = self.sessions.lock().ok()?;
        let (_, c) = cache.iter().find(|(q, c)| q == path && c.stamp == *stamp)?;
        Some((c.session.clone(), c.subagents.clone()))
    }

    /// Returns the session file at `path` (of format `format`) followed as
    /// an agent writes it ([`Follow`]): `prev` advanced to what the file
    /// holds now, or the file read whole; trimmed and redacted as pages
    /// are. `None` from a team server, whose sessions are read whole.
    fn follow(
        &self,
        path: &str,
        format: &str,
        prev: Option<Follow>,
    ) -> Result<Option<Follow>, WebError> {
        let Some(format) = agentlog_formats::registry::by_name(format).filter(|_| self.local())
        else {
            return Ok(None);
        };
        self.check_open(path)?;
        let redactor = self.redactor()?;
        let prepare = |s: &mut Session| {
            s.entries
                .iter_mut()
                .for_each(crate::render::keep_shown_entry);
            if let Some(r) = redactor {
                r.session(s);
            }
        };
        Ok(Some(match prev {
            Some(mut f) => {
                f.advance(&prepare)?;
                f
            }
            None => Follow::start(Path::new(path), format, &prepare)?,
        }))
    }

    /// Calls `f` with the session a live tail of `path` shows: `follow`'s,
    /// or (from a team server, which follows no file) the session read
    /// whole.
    fn with_tailed<T>(
        &self,
        path: &str,
        follow: Option<&Follow>,
        f: impl FnOnce(&Session) -> T,
    ) -> Result<T, WebError> {
        Ok(match follow {
            Some(followed) => f(followed.session()),
            None => f(&self.session(path)?.0),
        })
    }

    /// Returns the subagent sessions kept beside the session at `path`
    /// (none from a team server), trimmed and redacted as pages show them.
    fn subagents(
        &self,
        path: &Path,
        info: &agentlog_index::SessionInfo,
    ) -> Result<Subagents, WebError> {
        let mut subagents = if self.local() {
            crate::files::read_subagents(path, &info.format)
        } else {
            Vec::new()
        };
        for (_, sub) in &mut subagents {
            crate::render::keep_shown(sub);
            if let Some(r) = self.redactor()? {
                r.session(sub);
            }
        }
        Ok(Arc::new(subagents))
    }

    /// Returns the first page of the session at `path` (catalog row
    /// `info`) read from the file's first lines ([`crate::first`]), when
    /// the index keeps the shape of the file as it is and the session is
    /// not in the cache already; `None` when the whole file is to be read.
    fn first_page(
        &self,
        path: &str,
        info: &agentlog_index::SessionInfo,
    ) -> Result<Option<(crate::first::FirstPage, Subagents)>, WebError> {
        if !self.local() {
            return Ok(None);
        }
        let p = PathBuf::from(path);
        if self.cached(&p, &self.stamp(path, info)?).is_some() {
            return Ok(None);
        }
        let Some(shape) = self.with_index(|i| Ok(i.shape(path)?))? else {
            return Ok(None);
        };
        let Some(format) = agentlog_formats::registry::by_name(&info.format) else {
            return Ok(None);
        };
        let Some(mut first) =
            crate::first::first_page(&shape, &p, format, &crate::render::keep_shown_entry, PAGE)
        else {
            return Ok(None);
        };
        if let Some(r) = self.redactor()? {
            first.redact(r);
        }
        let subagents = self.subagents(&p, info)?;
        Ok(Some((first, subagents)))
    }
}

/// Renders the subagents of a session for a page of it.
fn rendered(subagents: &[(String, Session)], target: &Target) -> Vec<crate::render::Subagent> {
    subagents
        .iter()
        .map(|(path, s)| crate::render::Subagent::of(s, path, target))
        .collect()
}

/// Serves until the process ends; calls `ready` with the bound address
/// once the server accepts connections.
pub fn serve(cfg: ServeConfig, ready: impl FnOnce(SocketAddr)) -> Result<(), WebError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| WebError::io(Path::new("tokio runtime"), e))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(cfg.addr)
            .await
            .map_err(|e| WebError::io(Path::new(&cfg.addr.to_string()), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| WebError::io(Path::new("socket"), e))?;
        let app = Arc::new(App {
            cfg: cfg.clone(),
            facets: Mutex::new(None),
            pool: Mutex::new(Vec::new()),
            sessions: Mutex::new(Vec::new()),
            reading: Mutex::new(Default::default()),
            keys: Mutex::new(Default::default()),
        });
        if cfg.refresh_secs > 0 && app.local() {
            let a = app.clone();
            std::thread::spawn(move || refresher(&a));
        } else {
            // Counted once ahead of the first list.
            let a = app.clone();
            std::thread::spawn(move || {
                let _ = a.count_facets();
            });
        }
        ready(addr);
        axum::serve(listener, router(app, addr))
            .await
            .map_err(|e| WebError::io(Path::new("server"), e))
    })
}

/// How long a large session file must be left unchanged before the
/// refresher reads it whole for its shape (a session still being written
/// would lose it again at its next line).
const QUIET: Duration = Duration::from_secs(120);

/// Keeps the catalog current: new, grown and vanished session files; and
/// makes the shape of a large file that lost its own when lines were
/// appended to it (one per round: [`agentlog_index::shape`]), so that its
/// first page is read from its first lines again.
fn refresher(app: &App) {
    let Source::Local { settings } = &app.cfg.source else {
        return;
    };
    let Ok((mut index, _)) = Index::open(&settings.index_path) else {
        return;
    };
    let _ = app.count_facets();
    loop {
        std::thread::sleep(Duration::from_secs(app.cfg.refresh_secs));
        if let Ok(Some(_)) = agentlog_api::refresh::keep_fresh(&mut index, settings) {
            let _ = app.count_facets();
        }
        let _ = index.make_shapes(QUIET, 1);
    }
}

fn router(app: Arc<App>, addr: SocketAddr) -> Router {
    let guard_app = app.clone();
    Router::new()
        .route("/", get(list))
        .route("/session", get(session))
        .route("/s/{id}", get(by_id))
        .route("/entries", get(entries))
        .route("/search", get(search))
        .route("/stats", get(stats))
        .route("/tail", get(tail))
        .route(
            "/assets/app.css",
            get(|| async { asset(assets::CSS, "text/css; charset=utf-8") }),
        )
        .route(
            "/assets/app.js",
            get(|| async { asset(assets::JS, "text/javascript; charset=utf-8") }),
        )
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let app = guard_app.clone();
                async move {
                    match check(&app, addr, &req) {
                        Check::Pass => next.run(req).await,
                        Check::SetCookie(t) => {
                            let mut r = next.run(req).await;
                            if let Ok(v) = HeaderValue::from_str(&format!(
                                "agentlog_token={t}; Path=/; HttpOnly; SameSite=Strict"
                            )) {
                                r.headers_mut().insert(header::SET_COOKIE, v);
                            }
                            r
                        }
                        Check::Deny(code, why) => (code, secure_headers(), why).into_response(),
                    }
                }
            },
        ))
        .with_state(app)
        // Outermost, so every response gets the headers: the pages', and
        // also the framework's own (404 for an unknown route, 400 for a
        // query or path it cannot extract) and the guard's refusals.
        .layer(axum::middleware::map_response(with_secure_headers))
}

/// Adds each of [`secure_headers`] a response does not set itself.
async fn with_secure_headers(mut r: Response) -> Response {
    let h = r.headers_mut();
    for (name, value) in secure_headers() {
        if let Some(name) = name {
            h.entry(name).or_insert(value);
        }
    }
    r
}

enum Check {
    Pass,
    SetCookie(String),
    Deny(StatusCode, &'static str),
}

/// Refuses requests for another host name (DNS rebinding) and, when a
/// token is set, requests without it.
fn check(app: &App, addr: SocketAddr, req: &axum::extract::Request) -> Check {
    if addr.ip().is_loopback() {
        let host = req
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        let name = host.rsplit_once(':').map_or(host, |(h, _)| h);
        if !matches!(name, "127.0.0.1" | "localhost" | "[::1]") {
            return Check::Deny(
                StatusCode::MISDIRECTED_REQUEST,
                "this server answers only to 127.0.0.1 and localhost\n",
            );
        }
    }
    let Some(token) = &app.cfg.token else {
        return Check::Pass;
    };
    let cookie_ok = req
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .any(|c| {
            c.trim()
                .strip_prefix("agentlog_token=")
                .is_some_and(|v| ct_eq(v, token))
        });
    if cookie_ok {
        return Check::Pass;
    }
    let query_tok = req
        .uri()
        .query()
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("token="))
        .map(|v| v.to_string());
    match query_tok {
        Some(t) if ct_eq(&t, token) => Check::SetCookie(t),
        _ => Check::Deny(
            StatusCode::UNAUTHORIZED,
            "a token is required: open the URL `agentlog serve` printed (it ends in ?token=…)\n",
        ),
    }
}

/// Compares without stopping at the first difference.
fn ct_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn secure_headers() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(assets::SERVE_CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h
}

fn asset(body: &'static str, ty: &'static str) -> Response {
    let mut h = secure_headers();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ty));
    (h, body).into_response()
}

fn html(body: String) -> Response {
    let mut h = secure_headers();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    (h, body).into_response()
}

fn error_page(e: &WebError) -> Response {
    let code = match e {
        WebError::NotFound(_) => StatusCode::NOT_FOUND,
        WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let body = format!(
        "<main><h1>{}</h1><p>{}</p><p><a href=\"/\">all sessions</a></p></main>",
        code.as_u16(),
        crate::escape::esc(&e.to_string())
    );
    let mut r = html(pages::shell("agentlog: error", &body, Mode::Served, ""));
    *r.status_mut() = code;
    r
}

async fn blocking(
    app: Arc<App>,
    f: impl FnOnce(&App) -> Result<Response, WebError> + Send + 'static,
) -> Response {
    match tokio::task::spawn_blocking(move || f(&app)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => error_page(&e),
        Err(_) => error_page(&WebError::Read("the request failed".into())),
    }
}

#[derive(Deserialize, Default)]
struct ListArgs {
    #[serde(default)]
    agent: String,
    #[serde(default)]
    project: String,
    #[serde(default)]
    model: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    sort: String,
    #[serde(default)]
    asc: String,
    #[serde(default)]
    all: String,
    #[serde(default)]
    page: Option<usize>,
}

const PER_PAGE: usize = 50;

async fn list(State(app): State<Arc<App>>, Query(a): Query<ListArgs>) -> Response {
    blocking(app, move |app| {
        let q = ListQuery {
            agent: a.agent,
            project: a.project,
            model: a.model,
            from: a.from,
            to: a.to,
            sort: a.sort,
            asc: !a.asc.is_empty(),
            page: a.page.unwrap_or(1).max(1),
            all: !a.all.is_empty(),
        };
        let (params, err) = match q.params(PER_PAGE) {
            Ok(p) => (p, None),
            Err(e) => (
                agentlog_index::PageParams {
                    limit: PER_PAGE,
                    ..Default::default()
                },
                Some(e),
            ),
        };
        let mut page = app.with_index(|i| Ok(i.session_page(&params)?))?;
        let (agents, models) = app.facets()?;
        for x in &mut page.sessions {
            app.scrub(&mut x.title)?;
            app.scrub(&mut x.first_prompt)?;
            app.scrub(&mut x.project)?;
            x.path = app.key_of(&x.path);
        }
        let body = pages::list_body(&q, &page, &agents, &models, PER_PAGE, err.as_deref(), None);
        Ok(html(pages::shell(
            "agentlog: sessions",
            &body,
            Mode::Served,
            "",
        )))
    })
    .await
}

#[derive(Deserialize, Default)]
struct SessionArgs {
    #[serde(default)]
    p: String,
    #[serde(default)]
    leaf: String,
    #[serde(default)]
    at: String,
    #[serde(default)]
    from: Option<usize>,
    #[serde(default)]
    to: Option<usize>,
    #[serde(default)]
    n: Option<usize>,
    #[serde(default)]
    back: String,
}

fn opt(s: &str) -> Option<&str> {
    Some(s).filter(|s| !s.is_empty())
}

async fn session(State(app): State<Arc<App>>, Query(a): Query<SessionArgs>) -> Response {
    let behind = app.clone();
    blocking(app, move |app| {
        let real = app.resolve(&a.p)?;
        let link = app.key_of(&real);
        // The first page of the branch of a large session, from the file's
        // first lines; the whole file is read behind it, for the pages
        // after.
        let started = Instant::now();
        let info = app.info(&real)?;
        if opt(&a.leaf).is_none() && opt(&a.at).is_none() {
            if let Some((first, subs)) = app.first_page(&real, &info)? {
                let read = Read("first lines", started.elapsed());
                let view = View::new(&first.session, None, None).with_whole(&first.whole);
                let page = session_page(app, &real, &link, view, info, &subs, None, read);
                if !app.being_read(Path::new(&real)) {
                    std::thread::spawn(move || {
                        let _ = behind.session_and_subagents(&real);
                    });
                }
                return page;
            }
        }
        let started = Instant::now();
        let (session, info, subs) = app.session_with(&real, info)?;
        let read = Read("whole file", started.elapsed());
        let view = View::new(&session, opt(&a.leaf), opt(&a.at));
        session_page(app, &real, &link, view, info, &subs, opt(&a.at), read)
    })
    .await
}

/// How a session page's entries were had: what was read (`first lines`,
/// or `whole file`, now or for an earlier request), and how long that
/// took. A page says so in its `Server-Timing` header, which a
/// browser's developer tools show.
struct Read(&'static str, Duration);

/// Renders the page of the session at `real` (linked as `link`) that
/// `view` shows, from entry `at` when given.
#[allow(clippy::too_many_arguments)]
fn session_page(
    app: &App,
    real: &str,
    link: &str,
    mut view: View<'_>,
    mut info: agentlog_index::SessionInfo,
    subs: &[(String, Session)],
    at: Option<&str>,
    read: Read,
) -> Result<Response, WebError> {
    app.scrub(&mut info.title)?;
    app.scrub(&mut info.first_prompt)?;
    let mut shown = Some(real.to_string());
    app.scrub(&mut shown)?;
    // An entry of a subagent is on the page of the call that started it.
    let at = at.and_then(|id| {
        view.position(id).or_else(|| {
            let (path, sub) = subs
                .iter()
                .find(|(_, s)| s.entries.iter().any(|e| e.id == id))?;
            view.position_of_subagent(&crate::render::subagent_id(sub, path))
        })
    });
    let from = match at {
        Some(i) => i / PAGE * PAGE,
        None => 0,
    };
    let to = from + PAGE;
    // Subagents are shown inside the call that started them; the
    // others at the top.
    let target = Target::Served {
        path: link.to_string(),
    };
    let unplaced = view.set_subagents(rendered(subs, &target));
    let body = pages::session_body(
        &view,
        Some(&info),
        (link, shown.as_deref().unwrap_or("")),
        from,
        to,
        &target,
        &unplaced,
    );
    // Its agent deleted the file: say so, above the session.
    let mut body = body;
    if app.local() && agentlog_formats::archived::is_kept_only(Path::new(real)) {
        let notice = format!(
            "<p class=\"notice\" role=\"status\">{}</p>",
            crate::escape::esc(&format!(
                "Its agent deleted this session's file; agentlog's archive keeps it. `agentlog restore {}` puts it back.",
                info.session_id
            ))
        );
        // Inside the page's column, first.
        let at = body
            .find("<main")
            .and_then(|m| body[m..].find('>').map(|e| m + e + 1));
        body.insert_str(at.unwrap_or(0), &notice);
    }
    let title = info
        .title
        .clone()
        .or(info.first_prompt.clone())
        .unwrap_or(info.session_id.clone());
    let mut page = html(pages::shell(
        &crate::escape::clip_title(title.lines().next().unwrap_or(""), 100),
        &body,
        Mode::Served,
        "",
    ));
    let timing = format!(
        "read;desc=\"{}\";dur={:.1}",
        read.0,
        read.1.as_secs_f64() * 1e3
    );
    if let Ok(v) = HeaderValue::from_str(&timing) {
        page.headers_mut().insert("server-timing", v);
    }
    Ok(page)
}

async fn by_id(
    State(app): State<Arc<App>>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Response {
    blocking(app, move |app| {
        let found = app.with_index(|i| Ok(i.resolve_session(&ResolveParams::new(&id))?))?;
        let Some(p) = found
            .iter()
            .find(|r| r.session_id == id)
            .map(|r| app.key_of(&r.path))
        else {
            return Err(WebError::NotFound(format!("no session with id {id}")));
        };
        let mut h = secure_headers();
        if let Ok(v) = HeaderValue::from_str(&format!("/session?p={}", url_enc(&p))) {
            h.insert(header::LOCATION, v);
        }
        Ok((StatusCode::SEE_OTHER, h).into_response())
    })
    .await
}

async fn entries(State(app): State<Arc<App>>, Query(a): Query<SessionArgs>) -> Response {
    blocking(app, move |app| {
        let real = app.resolve(&a.p)?;
        let link = app.key_of(&real);
        let (session, _, subs) = app.session_and_subagents(&real)?;
        let mut view = View::new(&session, opt(&a.leaf), None);
        view.set_subagents(rendered(&subs, &Target::Served { path: link.clone() }));
        let from = a.from.unwrap_or(0).min(view.path.len());
        let to =
            a.to.unwrap_or(from + PAGE)
                .min(view.path.len())
                .min(from + PAGE);
        let target = Target::Served { path: link.clone() };
        let body = view.entries_html(from, to, &target);
        let mut r = html(body);
        // Forward pages name the next page; backward pages the one before.
        let next = if a.back.is_empty() {
            (to < view.path.len())
                .then(|| pages::entries_url(&link, view.leaf.as_deref(), to, to + PAGE))
        } else {
            (from > 0).then(|| {
                pages::entries_url(&link, view.leaf.as_deref(), from.saturating_sub(PAGE), from)
                    + "&amp;back=1"
            })
        };
        if let Some(n) = next.map(|n| n.replace("&amp;", "&")) {
            if let Ok(v) = HeaderValue::from_str(&n) {
                r.headers_mut().insert("x-next", v);
            }
        }
        Ok(r)
    })
    .await
}

#[derive(Deserialize, Default)]
struct SearchArgs {
    #[serde(default)]
    q: String,
    #[serde(default)]
    agent: String,
}

async fn search(State(app): State<Arc<App>>, Query(a): Query<SearchArgs>) -> Response {
    blocking(app, move |app| {
        let mut p = SearchParams::new(a.q.clone());
        p.limit = 100;
        if !a.agent.is_empty() {
            p.agents = vec![a.agent.clone()];
        }
        let (hits, matches, err) = if a.q.trim().is_empty() {
            (Vec::new(), None, None)
        } else {
            // Counted as the command line counts them (the same words).
            let found = app.with_index(|i| {
                agentlog_api::search(i, &p).map_err(|e| match e {
                    agentlog_api::ApiError::Index(e) => WebError::Index(e),
                    e => WebError::Read(e.to_string()),
                })
            });
            match found {
                Ok(found) => {
                    let mut h = found.hits;
                    for x in &mut h {
                        app.scrub_hit(x)?;
                        x.path = app.key_of(&x.path);
                    }
                    (h, found.matches, None)
                }
                Err(e) => (Vec::new(), None, Some(e.to_string())),
            }
        };
        let body = pages::search_body(&a.q, &hits, matches, err.as_deref());
        Ok(html(pages::shell(
            "agentlog: search",
            &body,
            Mode::Served,
            &a.q,
        )))
    })
    .await
}

async fn stats(State(app): State<Arc<App>>) -> Response {
    blocking(app, move |app| {
        let by = |g: GroupBy| -> Result<agentlog_index::Stats, WebError> {
            let mut st = app.with_index(|i| {
                Ok(i.stats(&StatsParams {
                    by: g,
                    ..Default::default()
                })?)
            })?;
            for r in &mut st.rows {
                let mut k = Some(std::mem::take(&mut r.key));
                app.scrub(&mut k)?;
                r.key = k.unwrap_or_default();
            }
            Ok(st)
        };
        let body = pages::stats_body(
            &by(GroupBy::Day)?,
            &by(GroupBy::Model)?,
            &by(GroupBy::Project)?,
            &by(GroupBy::Agent)?,
        );
        Ok(html(pages::shell(
            "agentlog: stats",
            &body,
            Mode::Served,
            "",
        )))
    })
    .await
}

/// What a tail sends of a change: the entries' HTML, the entries the page
/// then shows, the last one's id.
type Sending = (String, usize, Option<String>);

/// What a live tail has sent so far.
struct TailState {
    app: Arc<App>,
    path: String,
    link: String,
    format: &'static str,
    sent: usize,
    last_id: Option<String>,
    stat: Stamp,
    /// The file as last read, once it changed (this machine's files only):
    /// what is appended to it is read from its last turn, not the whole
    /// file again.
    follow: Option<Follow>,
}

async fn tail(State(app): State<Arc<App>>, Query(a): Query<SessionArgs>) -> Response {
    let prepared = {
        let app = app.clone();
        let p = a.p.clone();
        let leaf = a.leaf.clone();
        let n = a.n.unwrap_or(0);
        tokio::task::spawn_blocking(move || -> Result<TailState, WebError> {
            let p = app.resolve(&p)?;
            let link = app.key_of(&p);
            let info = app.info(&p)?;
            let stat = app.stamp(&p, &info)?;
            let format = agentlog_formats::registry::by_name(&info.format)
                .map(|f| f.name())
                .unwrap_or("json");
            let follow = app.follow(&p, format, None)?;
            let (sent, last_id) = app.with_tailed(&p, follow.as_ref(), |session| {
                let view = View::new(session, opt(&leaf), None);
                let sent = n.min(view.path.len());
                (sent, sent.checked_sub(1).map(|i| view.path[i].id.clone()))
            })?;
            Ok(TailState {
                app: app.clone(),
                path: p,
                link,
                format,
                sent,
                last_id,
                stat,
                follow,
            })
        })
        .await
    };
    let st = match prepared {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return error_page(&e),
        Err(_) => return error_page(&WebError::Read("the request failed".into())),
    };
    let stream = futures_util::stream::unfold(st, |mut st| async move {
        loop {
            // A file is looked at four times a second; a team server's row
            // once a second.
            let local = st.app.local();
            tokio::time::sleep(Duration::from_millis(if local { 250 } else { 1000 })).await;
            let now = if local {
                std::fs::metadata(&st.path)
                    .map(|m| (m.len(), m.modified().ok(), None))
                    .ok()
            } else {
                let (app, path) = (st.app.clone(), st.path.clone());
                tokio::task::spawn_blocking(move || {
                    app.info(&path)
                        .ok()
                        .map(|i| (i.entries, None, i.updated_ms))
                })
                .await
                .ok()
                .flatten()
            };
            let Some(now) = now else {
                continue;
            };
            if now == st.stat {
                continue;
            }
            let app = st.app.clone();
            let path = st.path.clone();
            let link = st.link.clone();
            let format = st.format;
            let (sent, last) = (st.sent, st.last_id.clone());
            let follow = st.follow.take();
            let r = tokio::task::spawn_blocking(
                move || -> Result<(Option<Sending>, Option<Follow>), WebError> {
                    // The catalog follows the file (read from where it stopped).
                    // A busy index (another update running) does not hold
                    // the page back: the catalog catches up on the next change.
                    if let Source::Local { settings } = &app.cfg.source {
                        if let Ok((mut w, _)) = Index::open(&settings.index_path) {
                            let _ = w.update_files(&[Found {
                                path: PathBuf::from(&path),
                                format,
                            }]);
                        }
                    }
                    let follow = app.follow(&path, format, follow)?;
                    let sending = app.with_tailed(&path, follow.as_ref(), |session| {
                        let view = View::new(session, None, None);
                        let continues = match &last {
                            Some(id) => view
                                .path
                                .get(sent.wrapping_sub(1))
                                .is_some_and(|e| &e.id == id),
                            None => true,
                        };
                        if !continues || view.path.len() <= sent {
                            return None;
                        }
                        let html = view.entries_html(
                            sent,
                            view.path.len(),
                            &Target::Served { path: link.clone() },
                        );
                        Some((
                            html,
                            view.path.len(),
                            view.path.last().map(|e| e.id.clone()),
                        ))
                    })?;
                    Ok((sending, follow))
                },
            )
            .await;
            let r = match r {
                Ok(Ok((sending, follow))) => {
                    st.follow = follow;
                    sending
                }
                _ => None,
            };
            // The file is looked at again until what it holds was sent (a
            // line may still be on its way).
            if let Some((html, n, last)) = r {
                st.stat = now;
                st.sent = n;
                st.last_id = last;
                let data = serde_json::json!({ "html": html, "n": n }).to_string();
                return Some((
                    Ok::<Event, std::convert::Infallible>(
                        Event::default().event("entries").data(data),
                    ),
                    st,
                ));
            }
        }
    });
    let mut r = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    r.headers_mut().extend(secure_headers());
    r
}

/// Returns `text` with every token of at least 20 characters that mixes
/// letters and digits (and is not a UUID) replaced by `[REDACTED]`.
fn mask_tokens(text: &str) -> String {
    let sep = |c: char| c.is_whitespace() || "\"'`,;=:()[]{}<>|".contains(c);
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let uuid = word.len() == 36 && word.matches('-').count() == 4;
        let risky = word.chars().count() >= 20
            && word.chars().any(|c| c.is_ascii_digit())
            && word.chars().any(|c| c.is_ascii_alphabetic())
            && !uuid
            && !word.starts_with("[REDACTED");
        out.push_str(if risky { "[REDACTED]" } else { word.as_str() });
        word.clear();
    };
    for c in text.chars() {
        if sep(c) {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Returns a token of 32 random hex digits from the system's random source.
pub fn new_token() -> Result<String, WebError> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| WebError::io(Path::new("/dev/urandom"), e))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}
