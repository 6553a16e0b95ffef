//! One conformance suite for every [`Backend`] implementation.
//!
//! Enable the `conformance` feature (as a dev-dependency) and call [`run`]
//! from a test with a factory that returns a fresh, empty backend each
//! time, a scratch directory and the sessions to check with (usually
//! [`sessions`]). The suite writes the sessions as files in agentlog's JSON
//! format, brings each new backend up to date with them and checks every
//! operation against what the sessions say; it panics with a message naming
//! the operation, the parameters and the difference.
//!
//! ```
//! use agentlog_index::{conformance, Backend, Index};
//!
//! let dir = std::env::temp_dir().join(format!("agentlog-conf-doc-{}", std::process::id()));
//! let mut n = 0;
//! let ix = dir.join("ix");
//! conformance::run(
//!     &mut || -> Box<dyn Backend> {
//!         n += 1;
//!         Box::new(Index::open(&ix.join(format!("{n}.sqlite"))).map(|o| o.0).unwrap())
//!     },
//!     &dir.join("sessions"),
//!     &conformance::sessions(1_750_000_000_000),
//! );
//! # std::fs::remove_dir_all(&dir).ok();
//! ```

use crate::backend::{Backend, ResolveParams, UpdateParams};
use crate::title::listed_title;
use crate::{
    Facet, GroupBy, IndexError, ListParams, Listed, ListingQuery, PageParams, SearchParams,
    SessionInfo, SessionOrder, SessionTokens, SortBy, StatsParams,
};
use agentlog_formats::discover::Found;
use agentlog_formats::Format;
use agentlog_model::{
    Agent, Block, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp, Usage,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const MINUTE: i64 = 60_000;
const DAY: i64 = 86_400_000;

/// The agents, projects and models the generated sessions use.
const CAST: [(Agent, &str, &str); 4] = [
    (
        Agent::Claude,
        "/home/dev/parser",
        "claude-sonnet-4-20250514",
    ),
    (Agent::Codex, "/home/dev/WebApp", "gpt-5-codex"),
    (Agent::Gemini, "/srv/tools/parser-cli", "gemini-2.5-pro"),
    (Agent::Pi, "/home/dev/notes", "unpriced-local-model"),
];

/// Returns a deterministic set of sessions for the suite: several agents
/// and projects, ids sharing prefixes, tool calls, thinking, usage by
/// model, a session without times, hostile text (terminal escapes, HTML,
/// a long line, a prompt with 300 spaces in its first line), and one word found in exactly one session each
/// (`markerN`, N the session's position).
pub fn sessions(now_ms: i64) -> Vec<Session> {
    let mut out = Vec::new();
    for n in 0..9usize {
        let (agent, project, model) = &CAST[n % CAST.len()];
        // Ids `c0ffee00-…` to `c0ffee08-…` share the prefix `c0ffee0`.
        let id = format!("c0ffee{n:02}-7d1e-4f00-8000-{:012}", n * 7919);
        let mut s = Session::new(SessionMeta::new(&id, agent.clone()));
        s.meta.cwd = Some(project.to_string());
        let start = now_ms - (n as i64) * DAY - (n as i64 % 3) * 7 * MINUTE;
        let timed = n != 8;
        let mut parent: Option<String> = None;
        let mut k = 0u64;
        let mut push = |s: &mut Session, m: Message| {
            k += 1;
            let eid = format!("{id}-e{k}");
            let mut e = Entry::new(&eid, parent.clone(), EntryKind::Message(m));
            if timed {
                e = e.at(Timestamp::Millis(start + k as i64 * MINUTE));
            }
            e.line = Some(k);
            s.push(e);
            parent = Some(eid);
        };
        let turns = 1 + n % 3;
        for t in 0..turns {
            let prompt = match (n, t) {
                (5, 0) => "fix the \u{1b}[31mred\u{1b}[0m build <script>alert(1)</script> marker5"
                    .to_string(),
                // A first line with a long blank stretch: listed, it is
                // cut within the stretch.
                (6, 0) => format!(
                    "fix{}the tokenizer fails on unicode input marker{n}",
                    " ".repeat(300)
                ),
                (_, 0) => format!("the tokenizer fails on unicode input marker{n}"),
                _ => format!("now run the tests for turn {t}"),
            };
            push(&mut s, Message::text(Role::User, prompt));
            let mut a = Message::new(Role::Assistant);
            if n % 2 == 0 {
                a.content.push(Block::thinking(
                    "the lexer probably slices bytes instead of chars",
                    None,
                ));
            }
            let tool = n % 3 != 2;
            if tool {
                a.content.push(Block::tool_call(
                    Some(format!("call-{t}")),
                    "Bash",
                    serde_json::json!({"command": format!("cargo test -p crate{n}")}),
                ));
            }
            let answer = if n == 7 && t == 0 {
                format!("{} borrow checker", "long line ".repeat(4000))
            } else {
                "The borrow checker rejected the slice; fixed the lexer".to_string()
            };
            a.content.push(Block::text(answer));
            a.model = Some(model.to_string());
            a.usage = Some(Usage {
                input: 100 + n as u64 * 10 + t as u64,
                output: 50 + n as u64,
                cache_read: 1000 * (n as u64 % 2),
                cache_write: 20 * t as u64,
                ..Usage::default()
            });
            push(&mut s, a);
            if tool {
                let mut r = Message::new(Role::User);
                r.content.push(Block::tool_result(
                    Some(format!("call-{t}")),
                    vec![Block::text(format!("test result: ok. {} passed", n + t))],
                    false,
                ));
                r.tool_name = Some("Bash".to_string());
                push(&mut s, r);
            }
        }
        out.push(s);
    }
    out
}

/// Writes each session to `dir` in agentlog's JSON format; returns the
/// files as discovery would.
pub fn write(dir: &Path, sessions: &[Session]) -> Vec<Found> {
    if let Err(e) = std::fs::create_dir_all(dir) {
        panic!("conformance: creating {}: {e}", dir.display());
    }
    sessions
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let path = dir.join(format!("session-{i:03}.json"));
            let mut bytes = Vec::new();
            if let Err(e) = agentlog_formats::json::FORMAT.write(s, &mut bytes) {
                panic!("conformance: writing session {}: {e}", s.meta.id);
            }
            if let Err(e) = std::fs::write(&path, bytes) {
                panic!("conformance: writing {}: {e}", path.display());
            }
            Found {
                path,
                format: "json",
            }
        })
        .collect()
}

/// Runs every check of the suite, each on a new backend from `make`.
pub fn run(make: &mut dyn FnMut() -> Box<dyn Backend>, dir: &Path, sessions: &[Session]) {
    let found = write(dir, sessions);
    let expected: Vec<Expected> = sessions.iter().map(Expected::of).collect();
    let mut fresh = || {
        let mut b = make();
        let p = UpdateParams {
            found: found.clone(),
        };
        if let Err(e) = b.update(&p, &mut |_| {}) {
            panic!("conformance: {} update: {e}", b.name());
        }
        b
    };
    check_status(fresh().as_ref(), &expected);
    check_list(fresh().as_ref(), &expected);
    check_listing(fresh().as_ref(), &expected);
    check_resolve(fresh().as_ref(), &expected);
    check_search(fresh().as_ref(), &expected);
    check_stats(fresh().as_ref(), &expected);
    check_pages(fresh().as_ref(), &expected);
    check_under(fresh().as_ref(), dir, &expected);
    check_update(fresh(), &found, &expected);
    check_resumed_copy(make, &dir.join("resumed"));
}

/// A session resumed in another agent: the copy keeps the session id and
/// replays the original's responses (without their response ids, which
/// the target format had no place for), then adds one of its own. Each
/// response counts once, the replayed ones at the original's agent.
fn check_resumed_copy(make: &mut dyn FnMut() -> Box<dyn Backend>, dir: &Path) {
    let id = "5e5510ed-0000-4000-8000-000000000001";
    let t0 = 1_750_000_000_000;
    let answer = |n: i64, rid: Option<&str>| {
        let mut a = Message::text(Role::Assistant, format!("answer {n}"));
        a.id = rid.map(String::from);
        a.model = Some("gpt-5-codex".to_string());
        a.usage = Some(Usage {
            input: 100 + n as u64,
            output: 10,
            ..Usage::default()
        });
        Entry::new(format!("a{n}"), None, EntryKind::Message(a)).at(Timestamp::Millis(t0 + n))
    };
    let mut original = Session::new(SessionMeta::new(id, Agent::Claude));
    let mut copy = Session::new(SessionMeta::new(id, Agent::Codex));
    for n in 1..=2 {
        original.push(answer(n, Some(&format!("resp-{n}"))));
        copy.push(answer(n, None));
    }
    copy.push(answer(3, None));
    let found = write(dir, &[copy, original]);
    let mut b = make();
    let name = b.name();
    if let Err(e) = b.update(&UpdateParams { found }, &mut |_| {}) {
        panic!("conformance: {name} update: {e}");
    }
    let b = b.as_ref();
    let st = ok(b, "stats", b.stats(&StatsParams::default()));
    assert_eq!(
        (st.total.responses, st.total.input),
        (3, 101 + 102 + 103),
        "{name}: a resumed copy's replayed responses count once: {st:?}"
    );
    let agents = ok(
        b,
        "stats by agent",
        b.stats(&StatsParams {
            by: GroupBy::Agent,
            ..StatsParams::default()
        }),
    );
    let got: BTreeMap<String, u64> = agents
        .rows
        .iter()
        .map(|r| (r.key.clone(), r.responses))
        .collect();
    let want: BTreeMap<String, u64> = [("claude".to_string(), 2), ("codex".to_string(), 1)].into();
    assert_eq!(
        got, want,
        "{name}: replayed responses count at the original's agent"
    );
}

/// What the suite expects of one session, computed from the model.
#[derive(Clone)]
struct Expected {
    id: String,
    agent: String,
    project: Option<String>,
    created_ms: Option<i64>,
    updated_ms: Option<i64>,
    entries: u64,
    tokens: BTreeMap<String, [u64; 5]>,
}

impl Expected {
    fn of(s: &Session) -> Expected {
        let times: Vec<i64> = s
            .entries
            .iter()
            .filter_map(|e| e.timestamp.as_ref().and_then(Timestamp::millis))
            .collect();
        let mut tokens: BTreeMap<String, [u64; 5]> = BTreeMap::new();
        for m in s.entries.iter().filter_map(Entry::message) {
            if let Some(u) = &m.usage {
                let model = m.model.clone().unwrap_or_else(|| "unknown".to_string());
                let t = tokens.entry(model).or_default();
                t[0] += 1;
                t[1] += u.input;
                t[2] += u.output;
                t[3] += u.cache_read;
                t[4] += u.cache_write;
            }
        }
        Expected {
            id: s.meta.id.clone(),
            agent: s.meta.agent.as_str().to_string(),
            project: s.meta.cwd.clone(),
            created_ms: times.iter().min().copied(),
            updated_ms: times.iter().max().copied(),
            entries: s.entries.len() as u64,
            tokens,
        }
    }
}

fn ok<T>(b: &dyn Backend, what: &str, r: Result<T, IndexError>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("conformance: {} {what}: {e}", b.name()),
    }
}

fn ids(v: &[SessionInfo]) -> Vec<&str> {
    v.iter().map(|s| s.session_id.as_str()).collect()
}

/// Orders like the catalog: newest first, no time last, then by id.
fn newest_first(e: &[Expected], key: impl Fn(&Expected) -> Option<i64>) -> Vec<&str> {
    let mut v: Vec<&Expected> = e.iter().collect();
    v.sort_by(|a, b| {
        key(a)
            .is_none()
            .cmp(&key(b).is_none())
            .then(key(b).cmp(&key(a)))
            .then(a.id.cmp(&b.id))
    });
    v.into_iter().map(|x| x.id.as_str()).collect()
}

fn check_status(b: &dyn Backend, e: &[Expected]) {
    let st = ok(b, "status", b.status());
    assert_eq!(
        st.sessions,
        e.len() as u64,
        "{}: sessions in status",
        b.name()
    );
    assert_eq!(
        st.entries,
        e.iter().map(|x| x.entries).sum::<u64>(),
        "{}: entries in status",
        b.name()
    );
    assert_eq!(st.files, e.len() as u64, "{}: files in status", b.name());
    assert_eq!(st.failed_files, 0, "{}: failed files in status", b.name());
}

fn list(b: &dyn Backend, p: &ListParams) -> Vec<SessionInfo> {
    ok(b, &format!("list_sessions({p:?})"), b.list_sessions(p))
}

fn page(b: &dyn Backend, p: &PageParams) -> (u64, Vec<SessionInfo>) {
    let r = ok(b, &format!("session_page({p:?})"), b.session_page(p));
    (r.total, r.sessions)
}

fn check_pages(b: &dyn Backend, e: &[Expected]) {
    let name = b.name();
    let order = newest_first(e, |x| x.updated_ms);
    // Pages of three cut the catalog in order, each knowing the total.
    let mut seen = Vec::new();
    for k in 0..4 {
        let (total, rows) = page(
            b,
            &PageParams {
                offset: 3 * k,
                limit: 3,
                ..PageParams::default()
            },
        );
        assert_eq!(total, e.len() as u64, "{name}: total of page {k}");
        seen.extend(ids(&rows).into_iter().map(str::to_string));
    }
    assert_eq!(seen, order, "{name}: pages of three, last updated first");
    // Filters: agents, a project by part of its name in any case, the
    // model that answered, a time range.
    let want = |f: &dyn Fn(&Expected) -> bool| -> Vec<&str> {
        let kept: Vec<&str> = e.iter().filter(|x| f(x)).map(|x| x.id.as_str()).collect();
        order
            .iter()
            .copied()
            .filter(|id| kept.contains(id))
            .collect()
    };
    let cases: Vec<(PageParams, Vec<&str>)> = vec![
        (
            PageParams {
                agents: vec!["codex".into(), "pi".into()],
                ..PageParams::default()
            },
            want(&|x| x.agent == "codex" || x.agent == "pi"),
        ),
        (
            PageParams {
                project: Some("PARSER".into()),
                ..PageParams::default()
            },
            want(&|x| {
                x.project
                    .as_deref()
                    .is_some_and(|p| p.to_lowercase().contains("parser"))
            }),
        ),
        (
            PageParams {
                model: Some("gpt-5-codex".into()),
                ..PageParams::default()
            },
            want(&|x| x.tokens.contains_key("gpt-5-codex")),
        ),
    ];
    // A project filter is text as written: `_` and `%` are no wildcards
    // (`dev/_otes` would be `dev/notes`, `%arser` any parser).
    let mut cases = cases;
    for literal in ["dev/_otes", "%arser", "par\\ser"] {
        cases.push((
            PageParams {
                project: Some(literal.into()),
                ..PageParams::default()
            },
            want(&|x| {
                x.project
                    .as_deref()
                    .is_some_and(|p| p.to_lowercase().contains(literal))
            }),
        ));
    }
    let mut times: Vec<i64> = e.iter().filter_map(|x| x.updated_ms).collect();
    times.sort_unstable();
    if times.len() >= 4 {
        let (from, to) = (times[1], times[times.len() - 2]);
        cases.push((
            PageParams {
                since_ms: Some(from),
                until_ms: Some(to),
                ..PageParams::default()
            },
            want(&|x| x.updated_ms.is_some_and(|t| t >= from && t < to)),
        ));
    }
    for (p, want) in cases {
        let (total, rows) = page(
            b,
            &PageParams {
                limit: 100,
                ..p.clone()
            },
        );
        assert_eq!(ids(&rows), want, "{name}: session_page({p:?})");
        assert_eq!(total, want.len() as u64, "{name}: total of {p:?}");
    }
    // Other orders: oldest first, most messages, agent A to Z.
    let (_, rows) = page(
        b,
        &PageParams {
            sort: SortBy::Updated,
            ascending: true,
            limit: 100,
            ..PageParams::default()
        },
    );
    let mut oldest: Vec<&str> = order[..order.len() - 1].to_vec();
    oldest.reverse();
    if let Some(untimed) = order.last() {
        oldest.push(untimed);
    }
    assert_eq!(ids(&rows), oldest, "{name}: oldest first, no time last");
    let (_, rows) = page(
        b,
        &PageParams {
            sort: SortBy::Messages,
            limit: 100,
            ..PageParams::default()
        },
    );
    assert_eq!(rows.len(), e.len(), "{name}: sorted by messages");
    assert!(
        rows.windows(2).all(|w| w[0].messages >= w[1].messages),
        "{name}: most messages first: {:?}",
        rows.iter().map(|r| r.messages).collect::<Vec<_>>()
    );
    let (_, rows) = page(
        b,
        &PageParams {
            sort: SortBy::Agent,
            ascending: true,
            limit: 100,
            ..PageParams::default()
        },
    );
    assert!(
        rows.windows(2).all(|w| w[0].agent <= w[1].agent),
        "{name}: agents A to Z: {:?}",
        rows.iter().map(|r| &r.agent).collect::<Vec<_>>()
    );
    // Facets: sessions per agent and per model that answered.
    let facets = |counts: BTreeMap<String, u64>| -> Vec<Facet> {
        let mut v: Vec<Facet> = counts
            .into_iter()
            .map(|(value, count)| Facet { value, count })
            .collect();
        v.sort_by(|a, b| b.count.cmp(&a.count).then(a.value.cmp(&b.value)));
        v
    };
    let mut agents = BTreeMap::new();
    let mut models = BTreeMap::new();
    for x in e {
        *agents.entry(x.agent.clone()).or_insert(0) += 1;
        for m in x.tokens.keys().filter(|m| *m != "unknown") {
            *models.entry(m.clone()).or_insert(0) += 1;
        }
    }
    assert_eq!(
        ok(b, "agent_facets", b.agent_facets()),
        facets(agents),
        "{name}: sessions per agent"
    );
    assert_eq!(
        ok(b, "model_facets", b.model_facets()),
        facets(models),
        "{name}: sessions per model"
    );
}

fn check_under(b: &dyn Backend, dir: &Path, e: &[Expected]) {
    let name = b.name();
    let d = dir.to_string_lossy();
    let under = ok(b, "sessions_under", b.sessions_under(&d));
    let mut want: Vec<&Expected> = e.iter().collect();
    want.sort_by(|a, b| {
        a.created_ms
            .is_none()
            .cmp(&b.created_ms.is_none())
            .then(a.created_ms.cmp(&b.created_ms))
    });
    assert_eq!(
        ids(&under),
        want.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(),
        "{name}: sessions under {d}, oldest first, no time last"
    );
    // A folder whose name only starts like it holds none of them.
    let sibling = format!("{}x", d.trim_end_matches('/'));
    assert!(
        ok(b, "sessions_under", b.sessions_under(&sibling)).is_empty(),
        "{name}: sessions under {sibling}"
    );
    assert!(
        ok(b, "sessions_under", b.sessions_under(&format!("{d}/sub"))).is_empty(),
        "{name}: sessions under {d}/sub"
    );
}

fn check_list(b: &dyn Backend, e: &[Expected]) {
    let name = b.name();
    let all = list(b, &ListParams::default());
    assert_eq!(
        ids(&all),
        newest_first(e, |x| x.updated_ms),
        "{name}: every session, last updated first"
    );
    // Without tokens: the same sessions, tokens left out. Bare: the same
    // sessions in any order. `sessions_at` gives each whole row (and
    // nothing for a path not in the catalog).
    let bare_tokens = list(
        b,
        &ListParams {
            without_tokens: true,
            ..ListParams::default()
        },
    );
    assert_eq!(
        ids(&bare_tokens),
        ids(&all),
        "{name}: listing without tokens"
    );
    assert!(
        bare_tokens.iter().all(|s| s.tokens.is_empty()),
        "{name}: tokens left out"
    );
    let bare = list(
        b,
        &ListParams {
            bare: true,
            ..ListParams::default()
        },
    );
    let mut got: Vec<&str> = ids(&bare);
    let mut want: Vec<&str> = ids(&all);
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{name}: bare listing");
    for x in &bare {
        let Some(full) = all.iter().find(|a| a.session_id == x.session_id) else {
            panic!(
                "{name}: bare listing has an unknown session {}",
                x.session_id
            );
        };
        assert_eq!(
            (&x.path, x.created_ms, x.updated_ms, &x.project, &x.agent),
            (
                &full.path,
                full.created_ms,
                full.updated_ms,
                &full.project,
                &full.agent
            ),
            "{name}: bare row of {}",
            x.session_id
        );
    }
    // Brief: what a list shows, the title as listed and the tokens summed
    // (a backend may give the whole row); given one at a time, the same.
    let brief = list(
        b,
        &ListParams {
            brief: true,
            ..ListParams::default()
        },
    );
    assert_eq!(ids(&brief), ids(&all), "{name}: brief listing");
    let sum = |t: &[SessionTokens]| {
        t.iter().fold([0; 5], |a, t| {
            [
                a[0] + t.responses,
                a[1] + t.input,
                a[2] + t.output,
                a[3] + t.cache_read,
                a[4] + t.cache_write,
            ]
        })
    };
    for (x, full) in brief.iter().zip(&all) {
        assert_eq!(
            crate::title::listed_title_owned(x.title.clone(), x.first_prompt.clone()),
            crate::title::listed_title(full.title.as_deref(), full.first_prompt.as_deref()),
            "{name}: brief title of {}",
            x.session_id
        );
        assert_eq!(
            sum(&x.tokens),
            sum(&full.tokens),
            "{name}: brief tokens of {}",
            x.session_id
        );
        assert_eq!(
            (&x.path, x.updated_ms, x.messages),
            (&full.path, full.updated_ms, full.messages),
            "{name}: brief row of {}",
            x.session_id
        );
    }
    let mut given = Vec::new();
    ok(
        b,
        "for_each_session",
        b.for_each_session(&ListParams::default(), &mut |s| given.push(s)),
    );
    assert_eq!(given, all, "{name}: sessions given one at a time");
    let mut paths: Vec<String> = all.iter().map(|s| s.path.clone()).collect();
    paths.push("/no/such/session.json".into());
    let rows = ok(b, "sessions_at", b.sessions_at(&paths));
    assert_eq!(rows.len(), paths.len(), "{name}: sessions_at");
    for (info, row) in all.iter().zip(&rows) {
        assert_eq!(
            Some(info),
            row.as_ref(),
            "{name}: sessions_at {}",
            info.session_id
        );
    }
    assert!(
        rows[all.len()].is_none(),
        "{name}: sessions_at an unknown path"
    );
    // As many paths as a listing of a large catalog asks for (a backend may
    // read them otherwise), each several times, the unknown one too.
    let many: Vec<String> = paths
        .iter()
        .cycle()
        .take(40 * paths.len())
        .cloned()
        .collect();
    let rows = ok(b, "sessions_at", b.sessions_at(&many));
    assert_eq!(rows.len(), many.len(), "{name}: sessions_at of many paths");
    for (p, row) in many.iter().zip(&rows) {
        assert_eq!(
            all.iter().find(|s| &s.path == p),
            row.as_ref(),
            "{name}: sessions_at of many paths, {p}"
        );
    }
    for info in &all {
        let Some(x) = e.iter().find(|x| x.id == info.session_id) else {
            panic!("{name}: listed an unknown session {}", info.session_id);
        };
        assert_eq!(info.agent, x.agent, "{name}: agent of {}", x.id);
        assert_eq!(info.format, "json", "{name}: format of {}", x.id);
        assert_eq!(info.project, x.project, "{name}: project of {}", x.id);
        assert_eq!(info.created_ms, x.created_ms, "{name}: start of {}", x.id);
        assert_eq!(
            info.updated_ms, x.updated_ms,
            "{name}: last change of {}",
            x.id
        );
        assert_eq!(info.entries, x.entries, "{name}: entries of {}", x.id);
        assert!(info.path.ends_with(".json"), "{name}: path of {}", x.id);
        assert!(
            info.first_prompt
                .as_deref()
                .is_some_and(|p| p.contains("marker")),
            "{name}: first prompt of {}: {:?}",
            x.id,
            info.first_prompt
        );
        let tokens: BTreeMap<String, [u64; 5]> = info
            .tokens
            .iter()
            .map(|t| {
                (
                    t.model.clone(),
                    [t.responses, t.input, t.output, t.cache_read, t.cache_write],
                )
            })
            .collect();
        assert_eq!(tokens, x.tokens, "{name}: tokens of {}", x.id);
    }
    let by_start = list(
        b,
        &ListParams {
            order: SessionOrder::Created,
            ..ListParams::default()
        },
    );
    assert_eq!(
        ids(&by_start),
        newest_first(e, |x| x.created_ms.or(x.updated_ms)),
        "{name}: ordered by start"
    );
    // Agents match whatever the case; several are alternatives.
    let agents = ListParams {
        agents: vec!["CLAUDE".to_string(), "codex".to_string()],
        ..ListParams::default()
    };
    // Counted as listed, whatever the limit; by format too, the first of
    // a format being the newest of that format.
    let every = list(b, &ListParams::default());
    let format = every[every.len() / 2].format.clone();
    let of_format: Vec<&SessionInfo> = every.iter().filter(|s| s.format == format).collect();
    let one_format = ListParams {
        formats: vec![format.clone()],
        limit: 1,
        ..ListParams::default()
    };
    for (p, want) in [
        (&ListParams::default(), e.len()),
        (&agents, list(b, &agents).len()),
        (&one_format, of_format.len()),
    ] {
        assert_eq!(ok(b, "count", b.count_sessions(p)), want, "{name}: {p:?}");
    }
    let first = list(b, &one_format);
    assert_eq!(
        ids(&first),
        [of_format[0].session_id.as_str()],
        "{name}: {one_format:?}"
    );
    let want: Vec<&str> = newest_first(e, |x| x.updated_ms)
        .into_iter()
        .filter(|id| {
            e.iter()
                .any(|x| x.id == *id && (x.agent == "claude" || x.agent == "codex"))
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(ids(&list(b, &agents)), want, "{name}: {agents:?}");
    // Projects match by substring, whatever the case.
    let projects = ListParams {
        projects: vec!["PARSER".to_string()],
        ..ListParams::default()
    };
    let want: Vec<&str> = newest_first(e, |x| x.updated_ms)
        .into_iter()
        .filter(|id| {
            e.iter().any(|x| {
                x.id == *id
                    && x.project
                        .as_deref()
                        .is_some_and(|p| p.to_lowercase().contains("parser"))
            })
        })
        .collect();
    assert!(want.len() >= 2);
    assert_eq!(ids(&list(b, &projects)), want, "{name}: {projects:?}");
    // Since: updated at or after; sessions without a time are left out.
    let mut times: Vec<i64> = e.iter().filter_map(|x| x.updated_ms).collect();
    times.sort_unstable();
    let since = times[times.len() / 2];
    let p = ListParams {
        since_ms: Some(since),
        ..ListParams::default()
    };
    let want: Vec<&str> = newest_first(e, |x| x.updated_ms)
        .into_iter()
        .filter(|id| {
            e.iter()
                .any(|x| x.id == *id && x.updated_ms.is_some_and(|t| t >= since))
        })
        .collect();
    assert_eq!(ids(&list(b, &p)), want, "{name}: {p:?}");
    // Pages: limit and offset cut the same order.
    let mut paged = Vec::new();
    for page in 0.. {
        let p = ListParams {
            limit: 4,
            offset: page * 4,
            ..ListParams::default()
        };
        let got = list(b, &p);
        assert!(got.len() <= 4, "{name}: {p:?} gave {}", got.len());
        if got.is_empty() {
            break;
        }
        paged.extend(got.into_iter().map(|s| s.session_id));
    }
    assert_eq!(paged, ids(&all), "{name}: pages of 4");
    let none = ListParams {
        agents: vec!["no-such-agent".to_string()],
        ..ListParams::default()
    };
    assert!(list(b, &none).is_empty(), "{name}: {none:?}");
}

/// What a listing gave: the ids in order, each with its start, tokens and
/// title, and how many matched.
type Listing = (Vec<(String, Option<i64>, u64, Option<String>)>, usize);

fn listing(b: &dyn Backend, q: &ListingQuery) -> Listing {
    let mut rows = Vec::new();
    let matched = ok(
        b,
        "visit_listing",
        b.visit_listing(q, &mut |l: &Listed<'_>| {
            rows.push((
                l.session_id.to_string(),
                l.started_ms,
                l.tokens,
                l.title.map(String::from),
            ))
        }),
    );
    (rows, matched)
}

fn check_listing(b: &dyn Backend, e: &[Expected]) {
    let name = b.name();
    // The formats, and the listed titles made here from the whole rows'
    // titles and first prompts.
    let whole = list(b, &ListParams::default());
    let formats: Vec<String> = whole
        .iter()
        .map(|s| s.format.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let title = |id: &str| {
        whole
            .iter()
            .find(|s| s.session_id == id)
            .and_then(|s| listed_title(s.title.as_deref(), s.first_prompt.as_deref()))
    };
    assert!(
        whole.iter().all(|s| title(&s.session_id).is_some()),
        "{name}: every session has a prompt to list"
    );
    let started = |x: &Expected| x.created_ms.or(x.updated_ms);
    let times: Vec<i64> = e.iter().filter_map(started).collect();
    let middle =
        times.iter().copied().min().unwrap_or(0) / 2 + times.iter().copied().max().unwrap_or(0) / 2;
    let all = ListingQuery {
        formats: formats.clone(),
        order: SessionOrder::Created,
        ..ListingQuery::default()
    };
    for (q, keep, order) in [
        (all.clone(), None, SessionOrder::Created),
        (
            ListingQuery {
                order: SessionOrder::Updated,
                ..all.clone()
            },
            None,
            SessionOrder::Updated,
        ),
        (
            ListingQuery {
                project: Some("parser".into()),
                ..all.clone()
            },
            Some((Some("parser"), None)),
            SessionOrder::Created,
        ),
        (
            ListingQuery {
                started_since_ms: Some(middle),
                ..all.clone()
            },
            Some((None, Some(middle))),
            SessionOrder::Created,
        ),
        (
            ListingQuery {
                limit: Some(2),
                ..all.clone()
            },
            None,
            SessionOrder::Created,
        ),
        (
            ListingQuery {
                project: Some("/home/".into()),
                started_since_ms: Some(middle),
                limit: Some(1),
                ..all.clone()
            },
            Some((Some("/home/"), Some(middle))),
            SessionOrder::Created,
        ),
        (
            ListingQuery {
                limit: Some(0),
                ..all.clone()
            },
            None,
            SessionOrder::Created,
        ),
    ] {
        let kept: Vec<Expected> = e
            .iter()
            .filter(|x| {
                keep.is_none_or(|(project, since): (Option<&str>, Option<i64>)| {
                    project.is_none_or(|project| {
                        x.project.as_deref().is_some_and(|p| p.contains(project))
                    }) && since.is_none_or(|since| started(x).is_some_and(|t| t >= since))
                })
            })
            .cloned()
            .collect();
        let mut want = newest_first(&kept, |x| match order {
            SessionOrder::Created => started(x),
            SessionOrder::Updated => x.updated_ms,
        });
        want.truncate(q.limit.unwrap_or(usize::MAX));
        let (rows, matched) = listing(b, &q);
        let got: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(got, want, "{name}: listing {q:?}");
        assert_eq!(matched, kept.len(), "{name}: listing {q:?}, matched");
        for (id, start, tokens, t) in &rows {
            let x = kept
                .iter()
                .find(|x| &x.id == id)
                .unwrap_or_else(|| panic!("{id}"));
            assert_eq!(*start, started(x), "{name}: start of {id}");
            let want_tokens: u64 = x.tokens.values().map(|t| t[1] + t[2] + t[3] + t[4]).sum();
            assert_eq!(*tokens, want_tokens, "{name}: tokens of {id}");
            assert_eq!(*t, title(id), "{name}: title of {id}");
        }
    }
    // No format: nothing, listed or counted.
    for formats in [vec!["no-such-format".to_string()], Vec::new()] {
        for limit in [None, Some(0), Some(3)] {
            let none = ListingQuery {
                formats: formats.clone(),
                limit,
                ..all.clone()
            };
            assert_eq!(
                listing(b, &none),
                (Vec::new(), 0),
                "{name}: listing {none:?}"
            );
        }
    }
}

fn check_resolve(b: &dyn Backend, e: &[Expected]) {
    let name = b.name();
    let resolve =
        |p: &ResolveParams| ok(b, &format!("resolve_session({p:?})"), b.resolve_session(p));
    for x in e {
        let got = resolve(&ResolveParams::new(&x.id[..8]));
        assert_eq!(
            got.iter()
                .map(|r| r.session_id.as_str())
                .collect::<Vec<_>>(),
            vec![x.id.as_str()],
            "{name}: the 8-character prefix of {}",
            x.id
        );
        assert_eq!(got[0].agent, x.agent);
        assert_eq!(got[0].format, "json");
        assert_eq!(got[0].updated_ms, x.updated_ms);
        assert!(got[0].path.ends_with(".json"));
    }
    let shared = resolve(&ResolveParams::new("c0ffee0"));
    let want: BTreeSet<&str> = e
        .iter()
        .filter(|x| x.id.starts_with("c0ffee0"))
        .map(|x| x.id.as_str())
        .collect();
    assert!(want.len() > 1);
    assert_eq!(
        shared
            .iter()
            .map(|r| r.session_id.as_str())
            .collect::<BTreeSet<_>>(),
        want,
        "{name}: a prefix shared by several sessions"
    );
    let limited = resolve(&ResolveParams {
        prefix: "c0ffee0".to_string(),
        limit: 2,
    });
    assert_eq!(limited.len(), 2, "{name}: resolve with limit 2");
    let exact = &e[0].id;
    let got = resolve(&ResolveParams::new(exact.as_str()));
    assert_eq!(
        got.first().map(|r| r.session_id.as_str()),
        Some(exact.as_str())
    );
    assert!(resolve(&ResolveParams::new("no-such-id")).is_empty());
    // A prefix is not a pattern.
    assert!(resolve(&ResolveParams::new("c0ffee%")).is_empty());
    assert!(resolve(&ResolveParams::new("c0ffee_")).is_empty());
}

fn check_search(b: &dyn Backend, e: &[Expected]) {
    let name = b.name();
    let search = |p: &SearchParams| ok(b, &format!("search({:?})", p.query), b.search(p));
    for (n, x) in e.iter().enumerate() {
        let hits = search(&SearchParams::new(format!("marker{n}")));
        assert!(!hits.is_empty(), "{name}: marker{n} not found");
        for h in &hits {
            assert_eq!(h.session_id, x.id, "{name}: marker{n} found elsewhere");
            assert_eq!(h.agent, x.agent);
            assert_eq!(h.role.as_deref(), Some("user"));
            assert!(
                h.text.contains(&format!("marker{n}")),
                "{name}: snippet {h:?}"
            );
        }
    }
    // Words in every session; a limit; filters by agent and role.
    let all = search(&SearchParams {
        limit: 1000,
        ..SearchParams::new("borrow checker")
    });
    let sessions: BTreeSet<&str> = all.iter().map(|h| h.session_id.as_str()).collect();
    assert_eq!(
        sessions.len(),
        e.len(),
        "{name}: borrow checker in every session"
    );
    let two = search(&SearchParams {
        limit: 2,
        ..SearchParams::new("borrow checker")
    });
    assert_eq!(two.len(), 2, "{name}: search limit 2");
    // Counting the matches: every one, or stopping at the cap; filters
    // count as they search.
    let count = |p: &SearchParams, cap: u64| {
        ok(
            b,
            &format!("count_matches({:?}, {cap})", p.query),
            b.count_matches(p, cap),
        )
    };
    let every = SearchParams::new("borrow checker");
    assert_eq!(
        count(&every, 100_000),
        all.len() as u64,
        "{name}: count of borrow checker"
    );
    assert_eq!(count(&every, 2), 2, "{name}: count stops at its cap");
    let codex_only = SearchParams {
        agents: vec!["codex".to_string()],
        ..SearchParams::new("borrow")
    };
    let codex_all = search(&SearchParams {
        limit: 100_000,
        ..codex_only.clone()
    });
    assert_eq!(
        count(&codex_only, 100_000),
        codex_all.len() as u64,
        "{name}: count with an agent filter"
    );
    assert_eq!(
        count(&SearchParams::new("marker0"), 100_000),
        1,
        "{name}: count of marker0"
    );
    assert_eq!(count(&SearchParams::new("nowhereword"), 100_000), 0);
    // Searching and counting at once: the same hits as a search, the same
    // count as count_matches, whatever the limit, the cap and the window
    // of candidates.
    for (p, cap) in [
        (SearchParams::new("borrow checker"), 100_000),
        (SearchParams::new("borrow checker"), 2),
        (
            SearchParams {
                limit: 3,
                ..SearchParams::new("borrow checker")
            },
            5,
        ),
        (
            SearchParams {
                limit: 2,
                candidates: 4,
                ..SearchParams::new("borrow checker")
            },
            3,
        ),
        (
            SearchParams {
                limit: 2,
                candidates: 4,
                ..SearchParams::new("borrow checker")
            },
            100,
        ),
        (codex_only.clone(), 100_000),
        (SearchParams::new("marker0"), 100_000),
        (SearchParams::new("nowhereword"), 10),
    ] {
        let what = format!(
            "search_and_count({:?}, limit {}, candidates {}, cap {cap})",
            p.query, p.limit, p.candidates
        );
        let (hits, n) = ok(b, &what, b.search_and_count(&p, cap));
        let keys = |v: &[crate::Hit]| -> Vec<(String, String)> {
            v.iter()
                .map(|h| (h.session_id.clone(), h.entry_id.clone()))
                .collect()
        };
        assert_eq!(keys(&hits), keys(&search(&p)), "{name}: hits of {what}");
        assert_eq!(n, Some(count(&p, cap)), "{name}: count of {what}");
    }
    let codex = search(&SearchParams {
        agents: vec!["codex".to_string()],
        limit: 1000,
        ..SearchParams::new("borrow")
    });
    assert!(!codex.is_empty());
    assert!(
        codex.iter().all(|h| h.agent == "codex"),
        "{name}: agent filter"
    );
    let thinking = search(&SearchParams {
        limit: 1000,
        ..SearchParams::new("slices")
    });
    assert!(
        !thinking.is_empty() && thinking.iter().all(|h| h.field == "thinking"),
        "{name}: `slices` is only in thinking: {thinking:?}"
    );
    let but3 = search(&SearchParams {
        limit: 1000,
        ..SearchParams::new("tokenizer -marker3")
    });
    assert!(
        !but3.is_empty() && but3.iter().all(|h| h.session_id != e[3].id),
        "{name}: `tokenizer -marker3`: {but3:?}"
    );
    let prefix = search(&SearchParams::new("tokeniz*"));
    assert!(!prefix.is_empty(), "{name}: prefix search");
    let one = search(&SearchParams {
        sessions: vec![e[1].id[..8].to_string()],
        limit: 1000,
        ..SearchParams::new("borrow")
    });
    assert!(!one.is_empty() && one.iter().all(|h| h.session_id == e[1].id));
    // Punctuation is searched as words, never read as query syntax.
    for q in ["crate1\"", "-p crate1 (", "cargo:test*", "<script>"] {
        if let Err(err) = b.search(&SearchParams::new(q)) {
            panic!("{name}: query {q:?} failed: {err}");
        }
    }
    assert!(
        matches!(
            b.search(&SearchParams::new("-only")),
            Err(IndexError::Query { .. })
        ),
        "{name}: a query of exclusions only is a query error"
    );
}

fn check_stats(b: &dyn Backend, e: &[Expected]) {
    let name = b.name();
    let stats = |p: &StatsParams| ok(b, &format!("stats({p:?})"), b.stats(p));
    let mut by_model: BTreeMap<String, [u64; 5]> = BTreeMap::new();
    let mut by_agent: BTreeMap<String, u64> = BTreeMap::new();
    for x in e {
        for (m, t) in &x.tokens {
            let s = by_model.entry(m.clone()).or_default();
            for i in 0..5 {
                s[i] += t[i];
            }
            *by_agent.entry(x.agent.clone()).or_default() += t[1] + t[2] + t[3] + t[4];
        }
    }
    let st = stats(&StatsParams::default());
    let got: BTreeMap<String, [u64; 5]> = st
        .rows
        .iter()
        .map(|r| {
            (
                r.key.clone(),
                [r.responses, r.input, r.output, r.cache_read, r.cache_write],
            )
        })
        .collect();
    assert_eq!(got, by_model, "{name}: stats by model");
    let total: u64 = by_model.values().map(|t| t[1] + t[2] + t[3] + t[4]).sum();
    assert_eq!(st.total.total, total, "{name}: total tokens");
    assert!(
        st.rows.windows(2).all(|w| w[0].total >= w[1].total),
        "{name}: rows by total, largest first"
    );
    let unpriced = st.rows.iter().find(|r| r.key == "unpriced-local-model");
    assert!(
        unpriced.is_some_and(|r| r.cost_usd.is_none() && r.unpriced_responses == r.responses),
        "{name}: a model without a price has no cost: {unpriced:?}"
    );
    let agents = stats(&StatsParams {
        by: GroupBy::Agent,
        ..StatsParams::default()
    });
    let got: BTreeMap<String, u64> = agents
        .rows
        .iter()
        .map(|r| (r.key.clone(), r.total))
        .collect();
    assert_eq!(got, by_agent, "{name}: stats by agent");
    let codex = stats(&StatsParams {
        agents: vec!["Codex".to_string()],
        ..StatsParams::default()
    });
    assert_eq!(
        codex.total.total,
        by_agent.get("codex").copied().unwrap_or(0),
        "{name}: stats of one agent"
    );
    let days = stats(&StatsParams {
        by: GroupBy::Day,
        ..StatsParams::default()
    });
    assert!(
        days.rows.windows(2).all(|w| w[0].key <= w[1].key),
        "{name}: days in order"
    );
    assert_eq!(days.total.total, total, "{name}: days add up");
    // Until excludes everything before the first response.
    let first = e.iter().filter_map(|x| x.created_ms).min().unwrap_or(0);
    let none = stats(&StatsParams {
        until_ms: Some(first),
        ..StatsParams::default()
    });
    assert_eq!(none.total.responses, 0, "{name}: until before everything");
}

fn check_update(mut b: Box<dyn Backend>, found: &[Found], e: &[Expected]) {
    let name = b.name();
    // Unchanged files are not read again.
    let again = UpdateParams {
        found: found.to_vec(),
    };
    let r = match b.update(&again, &mut |_| {}) {
        Ok(r) => r,
        Err(err) => panic!("{name}: second update: {err}"),
    };
    assert_eq!(r.unchanged, found.len(), "{name}: unchanged files: {r:?}");
    assert_eq!(
        r.read_full + r.appended,
        0,
        "{name}: nothing re-read: {r:?}"
    );
    // Files left out are removed with their entries and usage.
    let keep = UpdateParams {
        found: found[1..].to_vec(),
    };
    let r = match b.update(&keep, &mut |_| {}) {
        Ok(r) => r,
        Err(err) => panic!("{name}: update without one file: {err}"),
    };
    assert_eq!(r.removed, 1, "{name}: one file removed: {r:?}");
    let b = b.as_ref();
    let listed = list(b, &ListParams::default());
    assert_eq!(listed.len(), e.len() - 1);
    assert!(listed.iter().all(|s| s.session_id != e[0].id));
    let hits = ok(b, "search", b.search(&SearchParams::new("marker0")));
    assert!(
        hits.is_empty(),
        "{name}: entries of a removed file: {hits:?}"
    );
    let st = ok(b, "stats", b.stats(&StatsParams::default()));
    let gone: u64 = e[0].tokens.values().map(|t| t[0]).sum();
    let all: u64 = e.iter().flat_map(|x| x.tokens.values()).map(|t| t[0]).sum();
    assert_eq!(
        st.total.responses,
        all - gone,
        "{name}: usage of a removed file"
    );
}
