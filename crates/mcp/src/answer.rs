//! What each tool answers: one library call (through [`Library`] and the
//! api's modules), its result cut to a budget, paged, and redacted.
//!
//! Every answer is a JSON object. A list in it holds what fits in the
//! budget (`max_chars` of JSON text, about four characters a token); what
//! did not fit is counted (`more`) and a `next_cursor` (or `next_start`)
//! asks for it. No single text in an answer is longer than the budget.

use crate::args::*;
use agentlog_api::refresh::{self, Refreshed};
use agentlog_api::{ApiError, Library, ListOptions, ListOrder, Matches};
use agentlog_formats::registry;
use agentlog_index::backend::ResolveParams;
use agentlog_index::time::{now_ms, parse_time};
use agentlog_index::{Backend, GroupBy, Index, SearchParams, StatsParams};
use agentlog_model::{BlockKind, Entry, Message, Session, Timestamp};
use agentlog_redact::Redactor;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// A tool's failure, said so that a model can act on it.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments cannot be used as given (the message says which and
    /// what to do).
    #[error("{0}")]
    Arguments(String),
    /// The library failed (an unreadable file, a damaged index).
    #[error("{0}")]
    Failed(String),
}

fn bad(msg: impl Into<String>) -> ToolError {
    ToolError::Arguments(msg.into())
}

fn failed(e: ApiError) -> ToolError {
    ToolError::Failed(e.to_string())
}

/// How many tool calls `sessions_touching` reads for each session it is
/// asked for: the newest calls, grouped into sessions.
const CANDIDATES_PER_SESSION: usize = 20;

/// The answers' defaults and bounds.
pub const DEFAULT_CHARS: usize = 12_000;
/// The largest budget a call may ask for.
pub const MAX_CHARS: usize = 100_000;
/// The smallest.
pub const MIN_CHARS: usize = 500;

/// Where answers come from and how they leave.
#[derive(Clone)]
pub struct Answers {
    /// The library over this machine's sessions.
    pub lib: Arc<Library>,
    /// Redact secrets in everything returned (on unless turned off).
    pub redact: bool,
    /// Set while a full check of the index runs in the background.
    checking: Arc<AtomicBool>,
    /// The index, opened at the first call and kept open between calls
    /// (each call still checks its freshness).
    open: Arc<Mutex<Option<Index>>>,
}

/// The index for one call, and what its freshness check did.
struct Held<'a> {
    slot: MutexGuard<'a, Option<Index>>,
    refreshed: Refreshed,
}

impl Held<'_> {
    fn index(&self) -> &Index {
        match self.slot.as_ref() {
            Some(index) => index,
            // `Answers::index` fills the slot before it hands it out.
            None => unreachable!("the index is opened before it is held"),
        }
    }
}

impl Answers {
    /// Answers from `lib`, redacted when `redact`.
    pub fn new(lib: Library, redact: bool) -> Answers {
        Answers {
            lib: Arc::new(lib),
            redact,
            checking: Arc::new(AtomicBool::new(false)),
            open: Arc::new(Mutex::new(None)),
        }
    }

    /// The index as the library's freshness policy leaves it (what
    /// [`refresh::for_reading`] does, on the index kept open): brought up
    /// to date when that is cheap; a full check found due runs in the
    /// background (one at a time). Calls take turns with the index.
    fn index(&self) -> Result<Held<'_>, ToolError> {
        // A call that panicked while it held the index left it as it was:
        // SQLite's own transactions keep the file whole.
        let mut slot = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let mut index = match slot.take() {
            Some(index) => index,
            None => refresh::open(&self.lib.settings, &mut |_| {}).map_err(failed)?,
        };
        let refreshed = refresh::refresh(&self.lib.settings, &mut index, &mut |_| {});
        // Kept open even when its refresh failed: the next call tries again.
        *slot = Some(index);
        let refreshed = refreshed.map_err(failed)?;
        let held = Held { slot, refreshed };
        let due = self.lib.settings.background_checks && refresh::full_check_due(held.index());
        if due && !self.checking.swap(true, Ordering::SeqCst) {
            let settings = self.lib.settings.clone();
            let checking = self.checking.clone();
            let started = std::thread::Builder::new()
                .name("agentlog-check".into())
                .spawn(move || {
                    if let Ok(d) = refresh::discover_full(&settings) {
                        let _ = refresh::update(&settings, &d, false, &mut |_| {});
                    }
                    checking.store(false, Ordering::SeqCst);
                });
            if started.is_err() {
                self.checking.store(false, Ordering::SeqCst);
            }
        }
        Ok(held)
    }

    /// Redacts every string of `v` (when redaction is on).
    fn clean(&self, v: &mut Value) -> Result<(), ToolError> {
        if self.redact {
            let r = Redactor::builtin().map_err(|e| ToolError::Failed(e.to_string()))?;
            r.value(v, "answer");
        }
        Ok(())
    }

    /// Redacts a snippet cut out of a longer text: a secret cut at the
    /// snippet's edge no longer looks like one, so a long word of letters
    /// and digits at a cut edge is masked too.
    fn clean_snippet(&self, s: &str) -> String {
        let mut v = Value::String(s.to_string());
        let _ = self.clean(&mut v);
        let s = v.as_str().unwrap_or_default().to_string();
        if self.redact {
            mask_cut_edges(&s)
        } else {
            s
        }
    }

    /// `search`.
    pub fn search(&self, a: &SearchArgs) -> Result<Value, ToolError> {
        let now = now_ms();
        let query = if a.phrase.unwrap_or(false) {
            format!("\"{}\"", a.query.replace('"', " "))
        } else {
            a.query.clone()
        };
        if query.trim().is_empty() {
            return Err(bad(
                "the query is empty: give one or more words to look for",
            ));
        }
        agentlog_index::to_fts(&query).map_err(|e| {
            bad(format!(
                "the query cannot be searched: {e}. Use plain words, \"exact phrases\", prefix*, a OR b, -excluded"
            ))
        })?;
        let limit = a.limit.unwrap_or(10).clamp(1, 50);
        let offset = cursor(a.cursor.as_deref())?;
        let p = SearchParams {
            query,
            agents: agents(&a.agent)?,
            projects: a.project.iter().cloned().collect(),
            roles: Vec::new(),
            tools: Vec::new(),
            sessions: a.session.iter().cloned().collect(),
            since_ms: time("since", a.since.as_deref(), now)?,
            until_ms: time("until", a.until.as_deref(), now)?,
            limit: offset + limit,
            candidates: 0,
            now_ms: Some(now),
        };
        let fresh = self.index()?;
        let found = agentlog_api::search(fresh.index(), &p).map_err(failed)?;
        let budget = budget(a.max_chars);
        let mut page = Page::new(budget);
        for h in found.hits.iter().skip(offset) {
            let mut item = json!({
                "session_id": h.session_id,
                "entry_id": h.entry_id,
                "agent": h.agent,
                "project": h.project,
                "title": h.title.as_deref().map(|t| cut(t, 120)),
                "role": h.role,
                "field": h.field,
                "time": h.ts_ms.and_then(Timestamp::rfc3339_millis),
                "snippet": self.clean_snippet(&cut(&h.snippet, budget / 2)),
            });
            self.clean(&mut item)?;
            if !page.push(item) {
                break;
            }
        }
        let shown = page.items.len();
        let total = match found.matches {
            Some(Matches::Exactly(n)) => json!(n),
            Some(Matches::AtLeast(n)) => json!(format!("{n}+")),
            None => Value::Null,
        };
        let more_here = found.hits.len().saturating_sub(offset + shown);
        let more = more_here > 0 || found.more;
        let mut out = json!({
            "hits": page.items,
            "total_matches": total,
        });
        if shown == 0 {
            out["note"] = json!(if offset > 0 {
                "no more hits past this cursor"
            } else {
                "no matches; try fewer or other words, a prefix (pars*), or drop the filters"
            });
        } else {
            out["note"] =
                json!("read a hit's message with read_session(session=SESSION_ID, at=ENTRY_ID)");
        }
        if more {
            out["next_cursor"] = json!((offset + shown).to_string());
            out["more"] = json!(if found.more {
                "more hits: call again with cursor".to_string()
            } else {
                format!("{more_here} more hits: call again with cursor")
            });
        }
        self.note_behind(&mut out, &fresh.refreshed);
        Ok(out)
    }

    /// `list_sessions`.
    pub fn list_sessions(&self, a: &ListArgs) -> Result<Value, ToolError> {
        let now = now_ms();
        let limit = a.limit.unwrap_or(20).clamp(1, 100);
        let offset = cursor(a.cursor.as_deref())?;
        let opts = ListOptions {
            agents: agents(&a.agent)?,
            project: a.project.clone(),
            since_ms: time("since", a.since.as_deref(), now)?,
            limit: Some(offset + limit),
            order: match a.order {
                Some(Order::Updated) => ListOrder::Updated,
                _ => ListOrder::Started,
            },
            source: agentlog_api::Source::Index,
            deleted_only: false,
            // The user's conversations first, as `ls` lists them.
            all_kinds: false,
        };
        let fresh = self.index()?;
        let listing = agentlog_api::list::list_in(&self.lib.settings, &opts, fresh.index())
            .map_err(failed)?;
        let mut page = Page::new(budget(a.max_chars));
        for s in listing.sessions.iter().skip(offset) {
            let mut item = json!({
                "session_id": s.id,
                "agent": s.agent,
                "project": s.project,
                "title": s.title.as_deref().map(|t| cut(t, 200)),
                "started": s.started_ms.and_then(Timestamp::rfc3339_millis),
                "updated": s.updated_ms.and_then(Timestamp::rfc3339_millis),
                "messages": s.messages,
                "tokens": s.tokens,
            });
            if s.deleted.is_some() {
                item["deleted_by_its_agent"] = json!(true);
            }
            self.clean(&mut item)?;
            if !page.push(item) {
                break;
            }
        }
        let shown = page.items.len();
        let mut out = json!({ "sessions": page.items, "matching": listing.matched });
        let more = listing.matched.saturating_sub(offset + shown);
        if more > 0 {
            out["more"] = json!(format!("{more} more sessions: call again with cursor"));
            out["next_cursor"] = json!((offset + shown).to_string());
        }
        if listing.matched == 0 {
            out["note"] = json!(match &listing.emptied_by {
                Some(e) => format!(
                    "no sessions: the filters left none ({})",
                    serde_json::to_string(e).unwrap_or_default()
                ),
                None => "no sessions found on this machine".to_string(),
            });
        }
        self.note_behind(&mut out, &fresh.refreshed);
        Ok(out)
    }

    /// Finds the session `arg` names (an id, an id prefix, `AGENT:ID`, or a
    /// path) through the index first, then as the library resolves.
    fn find(&self, fresh: &Held<'_>, arg: &str) -> Result<(String, String), ToolError> {
        let arg = arg.trim();
        if arg.is_empty() {
            return Err(bad("the session is empty: give a session id (or its first characters) from search or list_sessions"));
        }
        let (agent, id) = agentlog_api::resolve::split_agent(arg);
        let refs = fresh
            .index()
            .resolve_session(&ResolveParams {
                prefix: id.to_string(),
                limit: 50,
            })
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        let refs: Vec<_> = refs
            .into_iter()
            .filter(|r| agent.is_none_or(|a| r.agent == a || r.format == a))
            .collect();
        let exact: Vec<_> = refs.iter().filter(|r| r.session_id == id).collect();
        let mut ids: Vec<&str> = refs.iter().map(|r| r.session_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let one = if exact.len() == 1 {
            Some(exact[0])
        } else if exact.is_empty() && ids.len() == 1 && refs.len() == 1 {
            Some(&refs[0])
        } else {
            None
        };
        if let Some(r) = one {
            return Ok((r.path.clone(), r.format.clone()));
        }
        if exact.is_empty() && ids.len() > 1 {
            let listed: Vec<String> = refs
                .iter()
                .take(10)
                .map(|r| format!("{}:{}", r.agent, r.session_id))
                .collect();
            return Err(bad(format!(
                "'{arg}' matches {} sessions: {}; give more characters of the id, or AGENT:ID",
                ids.len(),
                listed.join(", ")
            )));
        }
        // Copies of one session in several agents, paths, ids only inside
        // files: the library's own resolution.
        match self.lib.resolve(arg) {
            Ok(f) => Ok((f.path.to_string_lossy().into_owned(), f.format.to_string())),
            Err(ApiError::NotFound { .. }) => Err(bad(format!(
                "no session matches '{arg}'; call list_sessions or search to find its id"
            ))),
            Err(e @ ApiError::Ambiguous { .. }) => Err(bad(format!(
                "{e}; give more characters of the id, or AGENT:ID"
            ))),
            Err(e) => Err(failed(e)),
        }
    }

    /// Reads the session `arg` names.
    fn read(&self, arg: &str) -> Result<(Session, Refreshed, String, String), ToolError> {
        // The index is let go before the file is read.
        let (path, format, refreshed) = {
            let fresh = self.index()?;
            let (path, format) = self.find(&fresh, arg)?;
            (path, format, fresh.refreshed)
        };
        let f = registry::by_name(&format)
            .ok_or_else(|| ToolError::Failed(format!("{path}: unknown format {format}")))?;
        let read = f
            .read_path(std::path::Path::new(&path))
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        Ok((read.session, refreshed, path, format))
    }

    /// `read_session`.
    pub fn read_session(&self, a: &ReadArgs) -> Result<Value, ToolError> {
        let (mut session, refreshed, _, _) = self.read(&a.session)?;
        let budget = budget(a.max_chars);
        let thinking = a.thinking.unwrap_or(false);
        let outputs = a.tool_output.unwrap_or(false);
        // The entry asked for may sit on another branch: read that branch.
        if let Some(at) = &a.at {
            if !session.entries.iter().any(|e| &e.id == at) {
                return Err(bad(format!(
                    "session {} has no entry '{at}'; entry ids come from search hits (entry_id) or from read_session",
                    session.meta.id
                )));
            }
            let on_branch = session.active_branch().iter().any(|e| &e.id == at);
            if !on_branch {
                let _ = session.set_leaf(Some(at));
            }
        }
        let branch: Vec<&Entry> = session
            .active_branch()
            .into_iter()
            .filter(|e| e.message().is_some())
            .collect();
        let total = branch.len();
        let start = match (&a.at, a.start) {
            (_, Some(s)) => s,
            (Some(at), None) => branch
                .iter()
                .position(|e| &e.id == at)
                .map_or(0, |p| p.saturating_sub(1)),
            (None, None) => 0,
        };
        if start > 0 && start >= total {
            return Err(bad(format!(
                "start {start} is past the end: the session has {total} messages on its branch (0 to {})",
                total.saturating_sub(1)
            )));
        }
        let max = a.max_messages.unwrap_or(30).clamp(1, 200);
        let mut page = Page::new(budget);
        let per_block = (budget / 4).max(200);
        for (n, e) in branch.iter().enumerate().skip(start).take(max) {
            let Some(m) = e.message() else { continue };
            let mut item = json!({
                "n": n,
                "entry_id": e.id,
                "role": m.role.as_str(),
                "time": e.timestamp.as_ref().and_then(Timestamp::millis).and_then(Timestamp::rfc3339_millis),
                "text": message_text(m, thinking, outputs, per_block),
            });
            if a.at.as_deref() == Some(e.id.as_str()) {
                item["asked_for"] = json!(true);
            }
            self.clean(&mut item)?;
            if !page.push(item) {
                break;
            }
        }
        let shown = page.items.len();
        let meta = &session.meta;
        let mut head = json!({
            "session_id": meta.id,
            "agent": meta.agent.to_string(),
            "project": meta.cwd,
            "title": meta.title,
            "started": meta.created_at.as_ref().map(Timestamp::to_rfc3339),
            "messages_on_branch": total,
            "leaf": session.leaf_id,
        });
        self.clean(&mut head)?;
        let mut out = json!({ "session": head, "messages": page.items });
        let next = start + shown;
        if next < total {
            out["more"] = json!(format!(
                "{} more messages: call again with start={next}",
                total - next
            ));
            out["next_start"] = json!(next);
        }
        if !thinking || !outputs {
            out["note"] = json!(format!(
                "{}{}",
                if thinking {
                    ""
                } else {
                    "thinking left out (thinking=true shows it). "
                },
                if outputs {
                    ""
                } else {
                    "tool outputs left out (tool_output=true shows them)."
                }
            )
            .trim()
            .to_string());
        }
        self.note_behind(&mut out, &refreshed);
        Ok(out)
    }

    /// `context`.
    pub fn context(&self, a: &ContextArgs) -> Result<Value, ToolError> {
        let (path, format, refreshed) = {
            let fresh = self.index()?;
            let (path, format) = self.find(&fresh, &a.session)?;
            (path, format, fresh.refreshed)
        };
        let f = registry::by_name(&format)
            .ok_or_else(|| ToolError::Failed(format!("{path}: unknown format {format}")))?;
        let ctx = agentlog_api::context::context(std::path::Path::new(&path), f, a.leaf.as_deref())
            .map_err(|e| match e {
                ApiError::Format(fe) if a.leaf.is_some() => bad(format!(
                    "{fe}; leaf must be an entry id of this session (from read_session or search)"
                )),
                e => failed(e),
            })?;
        let budget = budget(a.max_chars);
        let start = a.start.unwrap_or(0);
        let total = ctx.messages.len();
        let mut page = Page::new(budget);
        for (n, m) in ctx.messages.iter().enumerate().skip(start) {
            let mut item =
                json!({ "n": n, "role": m.role, "summary": cut(&m.summary, budget / 2) });
            self.clean(&mut item)?;
            if !page.push(item) {
                break;
            }
        }
        let shown = page.items.len();
        let mut out = json!({
            "leaf": ctx.leaf_id,
            "model": ctx.model,
            "thinking_level": ctx.thinking_level,
            "messages_in_context": total,
            "messages": page.items,
        });
        if !ctx.ttsr_rules.is_empty() {
            out["rules"] = json!(ctx.ttsr_rules);
        }
        if start + shown < total {
            out["more"] = json!(format!(
                "{} more messages: call again with start={}",
                total - start - shown,
                start + shown
            ));
            out["next_start"] = json!(start + shown);
        }
        self.clean(&mut out)?;
        self.note_behind(&mut out, &refreshed);
        Ok(out)
    }

    /// `sessions_touching`.
    pub fn touching(&self, a: &TouchingArgs) -> Result<Value, ToolError> {
        let now = now_ms();
        let what =
            match (&a.path, &a.command) {
                (Some(p), None) if !p.trim().is_empty() => p.trim(),
                (None, Some(c)) if !c.trim().is_empty() => c.trim(),
                (Some(_), Some(_)) => return Err(bad("give either path or command, not both")),
                _ => return Err(bad(
                    "give path (a file or folder, e.g. src/main.rs) or command (e.g. cargo test)",
                )),
            };
        if !what.chars().any(char::is_alphanumeric) {
            return Err(bad(format!(
                "'{what}' has no letters or digits to search for"
            )));
        }
        let limit = a.limit.unwrap_or(20).clamp(1, 100);
        let p = SearchParams {
            query: format!("\"{}\"", what.replace('"', " ")),
            agents: agents(&a.agent)?,
            projects: a.project.iter().cloned().collect(),
            since_ms: time("since", a.since.as_deref(), now)?,
            until_ms: time("until", a.until.as_deref(), now)?,
            // Entries, newest first; grouped into sessions below. Twenty
            // calls a session on average fill the page; past that the
            // count of sessions says "N+".
            limit: CANDIDATES_PER_SESSION * limit,
            now_ms: Some(now),
            ..SearchParams::default()
        };
        let fresh = self.index()?;
        let hits = fresh
            .index()
            .search_tool_inputs(&p)
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        let mut order: Vec<String> = Vec::new();
        let mut by: std::collections::HashMap<
            String,
            (usize, &agentlog_index::Hit, &agentlog_index::Hit),
        > = std::collections::HashMap::new();
        for h in &hits {
            let e = by.entry(h.session_id.clone()).or_insert_with(|| {
                order.push(h.session_id.clone());
                (0, h, h)
            });
            e.0 += 1;
            e.2 = h; // hits come newest first: the last seen is the earliest
        }
        let budget = budget(a.max_chars);
        let mut page = Page::new(budget);
        for id in order.iter().take(limit) {
            let Some((n, newest, earliest)) = by.get(id) else {
                continue;
            };
            let mut item = json!({
                "session_id": id,
                "agent": newest.agent,
                "project": newest.project,
                "title": newest.title.as_deref().map(|t| cut(t, 120)),
                "tool_calls": n,
                "last": { "entry_id": newest.entry_id, "time": newest.ts_ms.and_then(Timestamp::rfc3339_millis) },
                "first": { "entry_id": earliest.entry_id, "time": earliest.ts_ms.and_then(Timestamp::rfc3339_millis) },
                "example": self.clean_snippet(&cut(&newest.snippet, 400)),
            });
            self.clean(&mut item)?;
            if !page.push(item) {
                break;
            }
        }
        let shown = page.items.len();
        let mut out = json!({ "sessions": page.items, "sessions_found": order.len() });
        if hits.len() >= CANDIDATES_PER_SESSION * limit {
            out["sessions_found"] = json!(format!("{}+", order.len()));
        }
        if order.len() > shown {
            out["more"] = json!(format!(
                "{} more sessions: narrow with agent, project or since, or raise limit",
                order.len() - shown
            ));
        }
        out["note"] = json!(if shown == 0 {
            "no tool call was given this path or command; try a shorter part of it (a file name, a command's first words)"
        } else {
            "tool calls whose inputs hold these words in this order (paths read or written, commands run); read one with read_session(session=SESSION_ID, at=ENTRY_ID, tool_output=true)"
        });
        self.note_behind(&mut out, &fresh.refreshed);
        Ok(out)
    }

    /// `stats`.
    pub fn stats(&self, a: &StatsArgs) -> Result<Value, ToolError> {
        let now = now_ms();
        let by = match a.by {
            Some(By::Day) => GroupBy::Day,
            Some(By::Project) => GroupBy::Project,
            Some(By::Agent) => GroupBy::Agent,
            Some(By::Model) | None => GroupBy::Model,
        };
        let p = StatsParams {
            by,
            since_ms: time("since", a.since.as_deref(), now)?,
            until_ms: time("until", a.until.as_deref(), now)?,
            agents: agents(&a.agent)?,
            projects: a.project.iter().cloned().collect(),
        };
        let fresh = self.index()?;
        let stats = fresh
            .index()
            .stats(&p)
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        let limit = a.limit.unwrap_or(30).clamp(1, 400);
        let mut page = Page::new(budget(a.max_chars));
        // Days are in order: the latest are the ones asked about.
        let rows: Vec<_> = if by == GroupBy::Day {
            let skip = stats.rows.len().saturating_sub(limit);
            stats.rows.iter().skip(skip).collect()
        } else {
            stats.rows.iter().take(limit).collect()
        };
        for r in &rows {
            let mut item = serde_json::to_value(r).unwrap_or(Value::Null);
            self.clean(&mut item)?;
            if !page.push(item) {
                break;
            }
        }
        let shown = page.items.len();
        let mut total = serde_json::to_value(&stats.total).unwrap_or(Value::Null);
        if let Some(o) = total.as_object_mut() {
            o.remove("key");
        }
        let mut out = json!({
            "by": format!("{by:?}").to_lowercase(),
            "rows": page.items,
            "total": total,
        });
        if stats.rows.len() > shown {
            out["more"] = json!(format!(
                "{} more rows{}: raise limit or narrow with since/until, agent, project",
                stats.rows.len() - shown,
                if by == GroupBy::Day {
                    " (earlier days)"
                } else {
                    " (smaller ones)"
                }
            ));
        }
        self.note_behind(&mut out, &fresh.refreshed);
        Ok(out)
    }

    /// `resume_command`.
    pub fn resume_command(&self, a: &ResumeArgs) -> Result<Value, ToolError> {
        let (session, refreshed, path, format) = self.read(&a.session)?;
        let target = a.agent.clone().unwrap_or_else(|| format.clone());
        let f = agentlog_api::resolve::format_named(&target).map_err(|e| bad(e.to_string()))?;
        let own = f.name() == format;
        let mut out = if own {
            let plan = f
                .resume_plan(&session, &self.lib.settings.env)
                .map_err(|e| bad(format!("{e}")))?;
            let command = match &plan.cwd {
                Some(dir) => format!(
                    "cd {} && {}",
                    agentlog_formats::shell::quote(&dir.to_string_lossy()),
                    plan.command
                ),
                None => plan.command.clone(),
            };
            json!({ "agent": f.name(), "command": command, "steps": [command] })
        } else {
            let params = agentlog_api::resume::ResumeParams {
                target: f.name().to_string(),
                cwd: None,
                dry_run: true,
                source: Some(path.clone().into()),
            };
            let plan = agentlog_api::resume::resume(&self.lib.settings, &session, &params)
                .map_err(|e| bad(format!("cannot continue it in {}: {e}", f.name())))?;
            let prepare = format!(
                "agentlog resume {} --in {}",
                agentlog_formats::shell::quote(&format!("{format}:{}", session.meta.id)),
                f.name()
            );
            let lost = plan.fidelity.to_string();
            json!({
                "agent": f.name(),
                "command": plan.command,
                "steps": [prepare, plan.command],
                "writes": plan.path,
                "conversion_loses": if lost.trim().is_empty() { Value::Null } else { json!(lost.trim()) },
            })
        };
        out["note"] =
            json!("returned, not run: show the steps to the user, who runs them in a terminal");
        self.clean(&mut out)?;
        self.note_behind(&mut out, &refreshed);
        Ok(out)
    }

    fn note_behind(&self, out: &mut Value, r: &Refreshed) {
        if let Refreshed::Behind { files, .. } = r {
            out["index_behind"] = json!(format!(
                "{files} session files changed since the index was updated and are not searched yet; it catches up in the background"
            ));
        }
    }
}

/// The items that fit in a budget of JSON text.
struct Page {
    items: Vec<Value>,
    used: usize,
    budget: usize,
}

impl Page {
    fn new(budget: usize) -> Page {
        Page {
            items: Vec::new(),
            used: 0,
            budget,
        }
    }

    /// Adds `v` when it fits (the first always does: every text in it is
    /// already cut to the budget); false when it did not.
    fn push(&mut self, v: Value) -> bool {
        let n = serde_json::to_string(&v).map_or(0, |s| s.len()) + 1;
        if !self.items.is_empty() && self.used + n > self.budget {
            return false;
        }
        self.used += n;
        self.items.push(v);
        true
    }
}

fn budget(asked: Option<usize>) -> usize {
    asked.unwrap_or(DEFAULT_CHARS).clamp(MIN_CHARS, MAX_CHARS)
}

fn cursor(c: Option<&str>) -> Result<usize, ToolError> {
    match c.map(str::trim) {
        None | Some("") => Ok(0),
        Some(c) => c.parse().map_err(|_| {
            bad(format!(
                "cursor '{c}' is not one this server gave; pass the next_cursor of the previous answer, or none for the first page"
            ))
        }),
    }
}

fn time(what: &'static str, s: Option<&str>, now: i64) -> Result<Option<i64>, ToolError> {
    s.map(|s| parse_time(what, s, now))
        .transpose()
        .map_err(|e| bad(format!("{e}")))
}

fn agents(a: &Option<String>) -> Result<Vec<String>, ToolError> {
    let mut out = Vec::new();
    for name in a.iter().flat_map(|s| s.split(',')).map(str::trim) {
        if name.is_empty() {
            continue;
        }
        let f = agentlog_api::resolve::format_named(name).map_err(|e| bad(e.to_string()))?;
        out.push(f.name().to_string());
    }
    Ok(out)
}

/// `s` cut to at most `max` characters, saying how much was left out.
pub(crate) fn cut(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let keep: String = s.chars().take(max.saturating_sub(40)).collect();
    format!("{keep}… [{} more characters]", n - keep.chars().count())
}

/// The text of one message: its text, and (when asked) thinking and tool
/// outputs, each part cut to `per`.
fn message_text(m: &Message, thinking: bool, outputs: bool, per: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    let tool_message = matches!(m.role.as_str(), "tool" | "toolResult") || m.tool_call_id.is_some();
    for b in &m.content {
        match &b.kind {
            BlockKind::Text { text } if tool_message && !outputs => parts.push(format!(
                "[tool output: {} characters left out]",
                text.chars().count()
            )),
            BlockKind::Text { text } => parts.push(cut(text, per)),
            BlockKind::Thinking { text, .. } if thinking => {
                parts.push(format!("[thinking] {}", cut(text, per)))
            }
            BlockKind::Thinking { .. } => {}
            BlockKind::ToolCall { name, input, .. } => {
                let input = serde_json::to_string(input).unwrap_or_default();
                parts.push(format!("[tool call {name}] {}", cut(&input, per.min(2000))));
            }
            BlockKind::ToolResult {
                content, is_error, ..
            } => {
                let text: String = content
                    .iter()
                    .filter_map(|c| match &c.kind {
                        BlockKind::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                let err = if *is_error { " (error)" } else { "" };
                if outputs {
                    parts.push(format!("[tool result{err}] {}", cut(&text, per)));
                } else {
                    parts.push(format!(
                        "[tool result{err}: {} characters left out]",
                        text.chars().count()
                    ));
                }
            }
            BlockKind::Image { .. } => parts.push("[image]".to_string()),
            BlockKind::Other { .. } => {}
        }
    }
    cut(&parts.join("\n"), per * 2)
}

/// `s` with the first and last words masked when the snippet was cut there
/// (`…`) and they are long runs of letters and digits: what remains of a
/// key cut in half.
fn mask_cut_edges(s: &str) -> String {
    let risky = |w: &str| {
        w.chars().count() >= 12
            && w.chars().any(|c| c.is_ascii_digit())
            && w.chars().any(|c| c.is_ascii_alphabetic())
            && !w.starts_with("[REDACTED")
    };
    let mut words: Vec<String> = s.split(' ').map(str::to_string).collect();
    let n = words.len();
    let mask = |i: usize, words: &mut Vec<String>| {
        let w = words[i].trim_matches('…');
        if risky(w) {
            words[i] = words[i].replace(w, "[REDACTED]");
        }
    };
    if s.starts_with('…') && n > 0 {
        mask(0, &mut words);
    }
    if s.ends_with('…') && n > 0 {
        mask(n - 1, &mut words);
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_says_how_much_it_left_out() {
        let s = "x".repeat(1000);
        let c = cut(&s, 100);
        assert!(c.chars().count() <= 100, "{c}");
        assert!(c.ends_with("[940 more characters]"), "{c}");
        assert_eq!(cut("short", 100), "short");
    }

    #[test]
    fn a_key_cut_at_a_snippets_edge_is_masked() {
        assert_eq!(
            mask_cut_edges("…p3kR9xQ2mLw8vT5 was used"),
            "…[REDACTED] was used"
        );
        assert_eq!(
            mask_cut_edges("the key was ab12cd34ef56gh78…"),
            "the key was [REDACTED]…"
        );
        assert_eq!(mask_cut_edges("…plain words here…"), "…plain words here…");
    }

    #[test]
    fn a_cursor_not_given_by_the_server_is_refused() {
        assert_eq!(cursor(None).ok(), Some(0));
        assert_eq!(cursor(Some("20")).ok(), Some(20));
        assert!(cursor(Some("abc"))
            .unwrap_err()
            .to_string()
            .contains("next_cursor"));
    }
}
