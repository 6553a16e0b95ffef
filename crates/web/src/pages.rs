//! Whole pages: the session list, a session, search results, statistics,
//! and the exported files. Every value from a session or the index is
//! escaped here or in [`crate::render`].

use crate::assets;
use crate::charts::{self, Bar};
use crate::escape::{anchor, clip, clip_title, esc, url_enc};
use crate::render::{num, resume_commands, Target, View};
use agentlog_index::{Facet, Hit, PageParams, SessionInfo, SessionPage, SortBy, Stats};
use agentlog_model::Session;
use std::fmt::Write;

/// Entries on one page of a served session.
pub const PAGE: usize = 100;

/// How a page gets its style and script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// From the server (`/assets/…`), under the server's policy header.
    Served,
    /// Inline, allowed by hash in a policy meta tag (a standalone file).
    Export,
}

/// Returns a whole HTML document around `body`.
pub fn shell(title: &str, body: &str, mode: Mode, search: &str) -> String {
    let mut s = String::with_capacity(body.len() + assets::CSS.len() + assets::JS.len() + 2048);
    s.push_str("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><meta name=\"referrer\" content=\"no-referrer\">");
    match mode {
        Mode::Served => s.push_str("<link rel=\"stylesheet\" href=\"/assets/app.css\"><script src=\"/assets/app.js\" defer></script>"),
        Mode::Export => {
            let _ = write!(s, "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\"><style>{}</style>", assets::export_csp(), assets::CSS);
        }
    }
    let _ = write!(s, "<title>{}</title></head><body><div class=\"top\"><a class=\"brand\" href=\"{}\">agentlog</a>", esc(title), if mode == Mode::Served { "/" } else { "#" });
    if mode == Mode::Served {
        let _ = write!(s, "<nav><a href=\"/\">sessions</a><a href=\"/stats\">stats</a></nav><form action=\"/search\" method=\"get\" role=\"search\"><input type=\"search\" id=\"q\" name=\"q\" placeholder=\"search every session  ( / )\" value=\"{}\" aria-label=\"search\"></form>", esc(search));
    }
    s.push_str("<span id=\"live\" class=\"live\">● live</span><button id=\"theme\" type=\"button\" title=\"dark / light (t)\">◐</button></div>");
    s.push_str(body);
    s.push_str("<div id=\"help\" class=\"help\"><kbd>j</kbd>/<kbd>k</kbd> next / previous · <kbd>o</kbd> open · <kbd>g</kbd>/<kbd>G</kbd> first / last · <kbd>n</kbd>/<kbd>p</kbd> next / previous page · <kbd>/</kbd> search · <kbd>t</kbd> theme · <kbd>?</kbd> this help</div>");
    if mode == Mode::Export {
        let _ = write!(s, "<script>{}</script>", assets::JS);
    }
    s.push_str("</body></html>");
    s
}

fn date(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

fn title_of(s: &SessionInfo) -> String {
    let t = s
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| s.first_prompt.clone())
        .unwrap_or_else(|| s.session_id.clone());
    let line = t
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    clip_title(line, 140)
}

/// The filters of the list page, as given in its URL.
#[derive(Clone, Debug, Default)]
pub struct ListQuery {
    /// Agent filter.
    pub agent: String,
    /// Project filter.
    pub project: String,
    /// Model filter.
    pub model: String,
    /// From this day (YYYY-MM-DD).
    pub from: String,
    /// Before the end of this day (YYYY-MM-DD).
    pub to: String,
    /// Sort key.
    pub sort: String,
    /// Ascending.
    pub asc: bool,
    /// Page number from 1.
    pub page: usize,
    /// Every session: headless runs and subagent transcripts too.
    pub all: bool,
}

impl ListQuery {
    /// Returns the catalog query, or the problem with a filter.
    pub fn params(&self, per_page: usize) -> Result<PageParams, String> {
        let day = |s: &str, what: &str| -> Result<Option<i64>, String> {
            if s.is_empty() {
                return Ok(None);
            }
            chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .map(|d| {
                    d.and_hms_opt(0, 0, 0)
                        .map(|t| t.and_utc().timestamp_millis())
                })
                .map_err(|_| format!("{what}: {s:?} is not a date like 2026-01-31"))
        };
        Ok(PageParams {
            agents: if self.agent.is_empty() {
                Vec::new()
            } else {
                vec![self.agent.clone()]
            },
            project: Some(self.project.clone()).filter(|s| !s.is_empty()),
            model: Some(self.model.clone()).filter(|s| !s.is_empty()),
            since_ms: day(&self.from, "from")?,
            until_ms: day(&self.to, "to")?.map(|t| t + 86_400_000),
            sort: SortBy::parse(&self.sort).unwrap_or_default(),
            ascending: self.asc,
            offset: self.page.saturating_sub(1) * per_page,
            limit: per_page,
            conversations_only: !self.all,
        })
    }

    fn url(&self, page: usize) -> String {
        let mut u = format!("/?page={page}");
        for (k, v) in [
            ("agent", &self.agent),
            ("project", &self.project),
            ("model", &self.model),
            ("from", &self.from),
            ("to", &self.to),
            ("sort", &self.sort),
        ] {
            if !v.is_empty() {
                let _ = write!(u, "&amp;{k}={}", url_enc(v));
            }
        }
        if self.asc {
            u.push_str("&amp;asc=1");
        }
        if self.all {
            u.push_str("&amp;all=1");
        }
        u
    }
}

/// Returns the body of the session list.
pub fn list_body(
    q: &ListQuery,
    page: &SessionPage,
    agents: &[Facet],
    models: &[Facet],
    per_page: usize,
    error: Option<&str>,
    banner: Option<&str>,
) -> String {
    let mut s = String::from("<main>");
    if let Some(b) = banner {
        let _ = write!(s, "<div class=\"banner\">{}</div>", esc(b));
    }
    let _ = write!(
        s,
        "<h1>Sessions <span class=\"dim\" id=\"count\">{} found</span></h1>",
        num(page.total)
    );
    if let Some(e) = error {
        let _ = write!(s, "<div class=\"banner\">{}</div>", esc(e));
    }
    // The user's conversations first; the others a link away.
    if page.others > 0 {
        let mut all = q.clone();
        all.all = true;
        let _ = write!(
            s,
            "<p class=\"dim\" id=\"others\">and {} <a href=\"{}\">show all</a></p>",
            if page.others == 1 {
                "1 headless run or subagent transcript:".to_string()
            } else {
                format!(
                    "{} headless runs and subagent transcripts:",
                    num(page.others)
                )
            },
            all.url(1)
        );
    }
    s.push_str("<form class=\"filters\" method=\"get\" action=\"/\"><label>agent<select name=\"agent\"><option value=\"\">all</option>");
    for f in agents {
        let sel = if f.value == q.agent { " selected" } else { "" };
        let _ = write!(
            s,
            "<option value=\"{}\"{sel}>{} ({})</option>",
            esc(&f.value),
            esc(&f.value),
            num(f.count)
        );
    }
    s.push_str(
        "</select></label><label>model<select name=\"model\"><option value=\"\">all</option>",
    );
    for f in models.iter().take(200) {
        let sel = if f.value == q.model { " selected" } else { "" };
        let _ = write!(
            s,
            "<option value=\"{}\"{sel}>{} ({})</option>",
            esc(&f.value),
            esc(clip(&f.value, 60)),
            num(f.count)
        );
    }
    let _ = write!(s, "</select></label><label>project<input name=\"project\" value=\"{}\" placeholder=\"part of the path\"></label><label>from<input type=\"date\" name=\"from\" value=\"{}\"></label><label>to<input type=\"date\" name=\"to\" value=\"{}\"></label><label>sort<select name=\"sort\">", esc(&q.project), esc(&q.from), esc(&q.to));
    for k in ["updated", "created", "messages", "agent", "project"] {
        let sel = if k == q.sort || (q.sort.is_empty() && k == "updated") {
            " selected"
        } else {
            ""
        };
        let _ = write!(s, "<option{sel}>{k}</option>");
    }
    let _ = write!(s, "</select></label><label>order<select name=\"asc\"><option value=\"\">descending</option><option value=\"1\"{}>ascending</option></select></label><label>show<select name=\"all\"><option value=\"\">conversations</option><option value=\"1\"{}>every session</option></select></label><button type=\"submit\">apply</button></form>", if q.asc { " selected" } else { "" }, if q.all { " selected" } else { "" });
    s.push_str("<div class=\"facets\">");
    for f in agents {
        let _ = write!(
            s,
            "<a href=\"/?agent={}\">{} <span class=\"dim\">{}</span></a>",
            url_enc(&f.value),
            esc(&f.value),
            num(f.count)
        );
    }
    s.push_str("</div><table class=\"list\"><thead><tr><th>session</th><th>agent</th><th class=\"hide-s\">updated</th><th class=\"n\">messages</th><th class=\"n hide-s\">tools</th></tr></thead><tbody>");
    for x in &page.sessions {
        let _ = write!(
            s,
            "<tr><td><a class=\"title\" href=\"/session?p={}\">{}</a><div class=\"sub\">{}{}</div></td><td><span class=\"agent\">{}</span></td><td class=\"hide-s n\">{}</td><td class=\"n\">{}</td><td class=\"n hide-s\">{}</td></tr>",
            url_enc(&x.path),
            esc(&title_of(x)),
            esc(x.project.as_deref().unwrap_or("")),
            // Its agent deleted the file; this machine's archive keeps it.
            if agentlog_formats::archived::is_kept_only(std::path::Path::new(&x.path)) {
                " <span class=\"dim\">· deleted by its agent, kept in the archive</span>"
            } else {
                ""
            },
            esc(&x.agent),
            date(x.updated_ms),
            num(x.messages),
            num(x.tool_calls)
        );
    }
    s.push_str("</tbody></table><div class=\"pager\">");
    let pages = (page.total as usize).div_ceil(per_page.max(1)).max(1);
    let cur = q.page.max(1);
    if cur > 1 {
        let _ = write!(s, "<a rel=\"prev\" href=\"{}\">← newer</a>", q.url(cur - 1));
    }
    let _ = write!(s, "<span class=\"dim\">page {cur} of {pages}</span>");
    if cur < pages {
        let _ = write!(s, "<a rel=\"next\" href=\"{}\">older →</a>", q.url(cur + 1));
    }
    s.push_str("</div></main>");
    s
}

/// Returns the body of a session page showing entries `from..to` of the
/// branch, with paging controls (served) or every entry (export). `path`
/// names the session in links, `shown_path` is the file shown.
pub fn session_body(
    view: &View<'_>,
    info: Option<&SessionInfo>,
    (path, shown_path): (&str, &str),
    from: usize,
    to: usize,
    target: &Target,
    subagents: &[crate::render::Subagent],
) -> String {
    let session: &Session = view.session;
    let meta = &session.meta;
    let mut s = String::from("<main");
    let served = matches!(target, Target::Served { .. });
    if served {
        let _ = write!(
            s,
            " data-tail=\"/tail?p={}&amp;leaf={}&amp;n={}\"",
            url_enc(path),
            url_enc(view.leaf.as_deref().unwrap_or("")),
            view.branch_len()
        );
    }
    s.push('>');
    let title = meta
        .title
        .clone()
        .or_else(|| info.and_then(|i| i.title.clone()))
        .or_else(|| session.first_prompt())
        .unwrap_or_else(|| meta.id.clone());
    let line = title
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string();
    let _ = write!(
        s,
        "<h1>{}</h1><dl class=\"meta-grid\">",
        esc(&clip_title(&line, 200))
    );
    let mut row = |k: &str, v: &str| {
        if !v.is_empty() {
            let _ = write!(s, "<dt>{k}</dt><dd>{}</dd>", esc(v));
        }
    };
    row("agent", meta.agent.as_str());
    row("id", &meta.id);
    row("project", meta.cwd.as_deref().unwrap_or(""));
    row("model", meta.model.model.as_deref().unwrap_or(""));
    row("file", shown_path);
    row(
        "started",
        &meta
            .created_at
            .as_ref()
            .and_then(|t| t.to_utc())
            .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
            .unwrap_or_default(),
    );
    let u = view.total_usage();
    let counted = [u.input, u.output, u.cache_read, u.cache_write]
        .iter()
        .any(|&n| n > 0);
    row(
        "tokens",
        &if counted {
            format!(
                "in {} · out {} · cache read {} · cache write {}",
                num(u.input),
                num(u.output),
                num(u.cache_read),
                num(u.cache_write)
            )
        } else {
            // Some agents (jido_code, Aider, …) keep no token counts.
            "none recorded".to_string()
        },
    );
    let bp = view.branch_points();
    row(
        "entries",
        &format!(
            "{} on this branch, {} in all{}",
            num(view.branch_len() as u64),
            num(view.entry_count() as u64),
            match bp {
                0 => String::new(),
                1 => ", 1 branch point".to_string(),
                n => format!(", {n} branch points"),
            }
        ),
    );
    s.push_str("</dl>");
    if !subagents.is_empty() {
        // Subagents no tool call of the session names (older files).
        s.push_str("<section class=\"subagents\"><h2>Subagent sessions</h2>");
        for x in subagents {
            x.write_html(&mut s);
        }
        s.push_str("</section>");
    }
    // An exported page names the session by its id (its file is on
    // another machine, or elsewhere).
    let named = match target {
        Target::Export => meta.id.as_str(),
        _ => path,
    };
    let cmds = resume_commands(session, named);
    if !cmds.is_empty() {
        s.push_str("<details class=\"resume\"><summary>continue in another agent</summary>");
        for (_, c) in cmds {
            let _ = write!(
                s,
                "<div><code>{}</code><button type=\"button\" class=\"copy\">copy</button></div>",
                esc(&c)
            );
        }
        s.push_str("</details>");
    }
    if served && from > 0 {
        let start = from.saturating_sub(PAGE);
        let _ = write!(s, "<button id=\"earlier\" class=\"more\" type=\"button\" data-url=\"{}&amp;back=1\">show earlier entries ({} before)</button>", entries_url(path, view.leaf.as_deref(), start, from), num(from as u64));
    }
    s.push_str("<div id=\"entries\">");
    // An export of a tree holds every branch (one shown, the others a
    // click away); a served page shows one branch, paged.
    if !served && view.branch_points() > 0 {
        s.push_str(&view.all_entries_html(target));
    } else {
        s.push_str(&view.entries_html(from, to, target));
    }
    s.push_str("</div>");
    if served && to < view.branch_len() {
        let _ = write!(s, "<button id=\"more\" class=\"more\" type=\"button\" data-url=\"{}\">show more ({} after)</button>", entries_url(path, view.leaf.as_deref(), to, to + PAGE), num((view.branch_len() - to) as u64));
    }
    s.push_str("</main>");
    s
}

/// Returns the URL of the entries `from..to` of a branch.
pub fn entries_url(path: &str, leaf: Option<&str>, from: usize, to: usize) -> String {
    format!(
        "/entries?p={}&amp;leaf={}&amp;from={from}&amp;to={to}",
        url_enc(path),
        url_enc(leaf.unwrap_or(""))
    )
}

/// Returns the body of a search result page.
/// `matches` is how many entries match in all (the command line's count).
pub fn search_body(
    q: &str,
    hits: &[Hit],
    matches: Option<agentlog_api::Matches>,
    error: Option<&str>,
) -> String {
    use agentlog_api::Matches;
    let mut s = String::from("<main class=\"hits\">");
    let shown = hits.len() as u64;
    let hit_s = |n: u64| if n == 1 { "hit" } else { "hits" };
    let found = match matches {
        _ if hits.is_empty() => "nothing found".to_string(),
        Some(Matches::Exactly(n)) if n > shown => {
            format!("the best {} of {} {}", num(shown), num(n), hit_s(n))
        }
        Some(Matches::AtLeast(n)) => format!("the best {} of {}+ hits", num(shown), num(n)),
        None => format!("the best {} {}; more match", num(shown), hit_s(shown)),
        Some(Matches::Exactly(_)) => format!("{} {}", num(shown), hit_s(shown)),
    };
    let _ = write!(
        s,
        "<h1>Search <span class=\"dim\">{} for “{}”</span></h1>",
        found,
        esc(q)
    );
    if let Some(e) = error {
        let _ = write!(s, "<div class=\"banner\">{}</div>", esc(e));
    }
    for h in hits {
        let _ = write!(
            s,
            "<div class=\"hit-row\"><div><a class=\"title\" href=\"/session?p={}&amp;at={}#{}\">{}</a> <span class=\"agent\">{}</span> <span class=\"dim\">{} · {} · {}</span></div><div class=\"snip\">",
            url_enc(&h.path),
            url_enc(&h.entry_id),
            anchor(&h.entry_id),
            esc(h.title.as_deref().filter(|t| !t.is_empty()).unwrap_or(&h.session_id)),
            esc(&h.agent),
            esc(h.role.as_deref().unwrap_or(h.field)),
            esc(h.project.as_deref().unwrap_or("")),
            date(h.ts_ms)
        );
        for seg in h.segments() {
            if seg.hit {
                let _ = write!(s, "<mark>{}</mark>", esc(&seg.text));
            } else {
                s.push_str(&esc(&seg.text));
            }
        }
        s.push_str("</div></div>");
    }
    s.push_str("</main>");
    s
}

fn tok(n: f64) -> String {
    if n >= 1e9 {
        format!("{:.1}B", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.1}M", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1}k", n / 1e3)
    } else {
        format!("{n:.0}")
    }
}

/// Returns the body of the statistics page from stats grouped by day,
/// model, project and agent.
pub fn stats_body(day: &Stats, model: &Stats, project: &Stats, agent: &Stats) -> String {
    let mut s = String::from("<main><h1>Statistics</h1>");
    let t = &agent.total;
    let _ = write!(
        s,
        "<dl class=\"meta-grid\"><dt>responses</dt><dd>{}</dd><dt>tokens</dt><dd>{} (in {}, out {}, cache read {}, cache write {})</dd><dt>estimated cost</dt><dd>{}</dd></dl><div class=\"charts\">",
        num(t.responses),
        num(t.total),
        num(t.input),
        num(t.output),
        num(t.cache_read),
        num(t.cache_write),
        t.cost_usd.map(|c| format!("${c:.2}")).unwrap_or_else(|| "unknown".into())
    );
    let bars = |st: &Stats, limit: usize| -> Vec<Bar> {
        st.rows
            .iter()
            .take(limit)
            .map(|r| Bar {
                label: r.key.clone(),
                a: (r.input + r.output) as f64,
                b: (r.cache_read + r.cache_write) as f64,
                note: format!(
                    "{} · {}",
                    tok(r.total as f64),
                    r.cost_usd
                        .map(|c| format!("${c:.2}"))
                        .unwrap_or_else(|| "$?".into())
                ),
            })
            .collect()
    };
    let legend = ("input + output", "cache");
    let mut days: Vec<Bar> = bars(day, usize::MAX)
        .into_iter()
        .filter(|b| b.label != "unknown")
        .collect();
    if days.len() > 120 {
        days.drain(..days.len() - 120);
    }
    let maxday = days.iter().map(|b| b.a + b.b).fold(0.0, f64::max);
    s.push_str(&charts::columns(
        "Tokens by day",
        legend,
        &days,
        &tok(maxday),
    ));
    let mut cost_days: Vec<Bar> = day
        .rows
        .iter()
        .filter(|r| r.key != "unknown")
        .map(|r| Bar {
            label: r.key.clone(),
            a: r.cost_usd.unwrap_or(0.0),
            b: 0.0,
            note: r.cost_usd.map(|c| format!("${c:.2}")).unwrap_or_default(),
        })
        .collect();
    if cost_days.len() > 120 {
        cost_days.drain(..cost_days.len() - 120);
    }
    let maxc = cost_days.iter().map(|b| b.a).fold(0.0, f64::max);
    s.push_str(&charts::columns(
        "Cost by day (USD)",
        ("cost", ""),
        &cost_days,
        &format!("${maxc:.2}"),
    ));
    s.push_str(&charts::hbars("By model", legend, &bars(model, 15)));
    s.push_str(&charts::hbars("By project", legend, &bars(project, 15)));
    s.push_str(&charts::hbars("By agent", legend, &bars(agent, 15)));
    s.push_str("</div></main>");
    s
}

/// One exported session, for the index page of an export.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The file name written.
    pub file: String,
    /// The session's title.
    pub title: String,
    /// The agent.
    pub agent: String,
    /// The project.
    pub project: String,
    /// Start time.
    pub started: String,
    /// Messages.
    pub messages: usize,
}

/// Returns the whole self-contained HTML of `session` (every entry of its
/// current branch).
pub fn export_session(session: &Session, path: &str) -> String {
    export_session_with(session, path, &[])
}

/// Returns the whole self-contained HTML of `session` with its subagents'
/// sessions (file, session) shown inside the calls that started them.
pub fn export_session_with(
    session: &Session,
    path: &str,
    subagents: &[(String, Session)],
) -> String {
    let mut view = View::new(session, None, None);
    let unplaced = view.set_subagents(
        subagents
            .iter()
            .map(|(p, s)| crate::render::Subagent::of(s, p, &Target::Export))
            .collect(),
    );
    let body = session_body(
        &view,
        None,
        (path, path),
        0,
        view.path.len(),
        &Target::Export,
        &unplaced,
    );
    let title = session
        .meta
        .title
        .clone()
        .or_else(|| session.first_prompt())
        .unwrap_or_else(|| session.meta.id.clone());
    let line = title.lines().next().unwrap_or("").to_string();
    shell(&clip_title(&line, 120), &body, Mode::Export, "")
}

/// Returns the self-contained index page of an export of several sessions.
pub fn export_index(items: &[Exported]) -> String {
    let mut s = format!("<main><h1>Sessions <span class=\"dim\">{} exported</span></h1><table class=\"list\"><thead><tr><th>session</th><th>agent</th><th class=\"hide-s\">started</th><th class=\"n\">messages</th></tr></thead><tbody>", items.len());
    for x in items {
        let _ = write!(
            s,
            "<tr><td><a class=\"title\" href=\"{}\">{}</a><div class=\"sub\">{}</div></td><td><span class=\"agent\">{}</span></td><td class=\"hide-s n\">{}</td><td class=\"n\">{}</td></tr>",
            url_enc(&x.file),
            esc(&x.title),
            esc(&x.project),
            esc(&x.agent),
            esc(&x.started),
            num(x.messages as u64)
        );
    }
    s.push_str("</tbody></table></main>");
    shell("agentlog export", &s, Mode::Export, "")
}
