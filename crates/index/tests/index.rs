#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The index over sessions in agentlog's own JSON format (always readable),
//! the fixtures of every agent, and a generated corpus.

use agentlog_formats::discover::Found;
use agentlog_formats::Format;
use agentlog_index::{GroupBy, Index, ListParams, SearchParams, StatsParams};
use agentlog_model::{
    Agent, Block, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp, Usage,
};
use std::path::{Path, PathBuf};

const DAY: i64 = 86_400_000;
const NOW: i64 = 1_750_000_000_000;

fn ts(ms: i64) -> Timestamp {
    Timestamp::Millis(ms)
}

struct Turn<'a> {
    user: &'a str,
    thinking: Option<&'a str>,
    tool: Option<(&'a str, serde_json::Value, &'a str)>,
    answer: &'a str,
    model: &'a str,
    usage: (u64, u64, u64, u64),
}

fn session(id: &str, agent: Agent, cwd: &str, at: i64, turns: &[Turn<'_>]) -> Session {
    let mut s = Session::new(SessionMeta::new(id, agent));
    s.meta.cwd = Some(cwd.to_string());
    s.meta.created_at = Some(ts(at));
    let mut n = 0;
    let mut parent: Option<String> = None;
    let mut push = |s: &mut Session, m: Message| {
        n += 1;
        let eid = format!("{id}-e{n}");
        let mut e = Entry::new(&eid, parent.clone(), EntryKind::Message(m)).at(ts(at + n * 1000));
        e.line = Some(n as u64);
        s.push(e);
        parent = Some(eid);
    };
    for t in turns {
        push(&mut s, Message::text(Role::User, t.user));
        let mut a = Message::new(Role::Assistant);
        if let Some(th) = t.thinking {
            a.content.push(Block::thinking(th, None));
        }
        if let Some((name, input, _)) = &t.tool {
            a.content
                .push(Block::tool_call(Some("call".into()), *name, input.clone()));
        }
        a.content.push(Block::text(t.answer));
        a.model = Some(t.model.to_string());
        a.usage = Some(Usage {
            input: t.usage.0,
            output: t.usage.1,
            cache_read: t.usage.2,
            cache_write: t.usage.3,
            ..Usage::default()
        });
        push(&mut s, a);
        if let Some((name, _, out)) = &t.tool {
            let mut r = Message::new(Role::User);
            r.content.push(Block::tool_result(
                Some("call".into()),
                vec![Block::text(*out)],
                false,
            ));
            r.tool_name = Some(name.to_string());
            push(&mut s, r);
        }
    }
    s
}

fn write_json(dir: &Path, name: &str, s: &Session) -> Found {
    let p = dir.join(format!("{name}.json"));
    let mut out = Vec::new();
    agentlog_formats::json::FORMAT.write(s, &mut out).unwrap();
    std::fs::write(&p, out).unwrap();
    Found {
        path: p,
        format: "json",
    }
}

fn corpus(dir: &Path) -> Vec<Found> {
    let a = session(
        "alpha-1111",
        Agent::Claude,
        "/home/u/parser",
        NOW - 40 * DAY,
        &[
            Turn {
                user: "the tokenizer panics on unicode input",
                thinking: Some("maybe the lexer slices bytes"),
                tool: Some((
                    "Read",
                    serde_json::json!({"file_path": "/home/u/parser/src/lexer.rs"}),
                    "fn next_token() {}",
                )),
                answer: "The borrow checker rejects the slice; fixed the lexer",
                model: "claude-sonnet-4-20250514",
                usage: (100, 50, 1000, 200),
            },
            Turn {
                user: "now run the tests",
                thinking: None,
                tool: Some((
                    "Bash",
                    serde_json::json!({"command": "cargo test --workspace"}),
                    "test result: ok. 12 passed",
                )),
                answer: "All tests pass.",
                model: "claude-sonnet-4-20250514",
                usage: (10, 5, 2000, 0),
            },
        ],
    );
    let b = session(
        "beta-2222",
        Agent::Codex,
        "/home/u/webapp",
        NOW - DAY,
        &[Turn {
            user: "why does the borrow checker complain about this closure",
            thinking: Some("the closure captures by reference"),
            tool: Some((
                "shell",
                serde_json::json!({"command": ["rg", "tokenizer"]}),
                "src/tokenizer.ts:3",
            )),
            answer: "Move the value into the closure: borrow checker rules.",
            model: "gpt-5-codex",
            usage: (300, 70, 500, 0),
        }],
    );
    let c = session(
        "gamma-3333",
        Agent::Other("mystery".into()),
        "/srv/other",
        NOW - 3 * DAY,
        &[Turn {
            user: "summarise the configuration loader",
            thinking: None,
            tool: None,
            answer: "The configuration loader reads TOML.",
            model: "mystery-model-1",
            usage: (7, 3, 0, 0),
        }],
    );
    vec![
        write_json(dir, "a", &a),
        write_json(dir, "b", &b),
        write_json(dir, "c", &c),
    ]
}

fn search(
    ix: &Index,
    q: &str,
    f: impl FnOnce(&mut SearchParams),
) -> Vec<(String, String, &'static str)> {
    let mut p = SearchParams::new(q);
    p.now_ms = Some(NOW);
    f(&mut p);
    ix.search(&p)
        .unwrap()
        .into_iter()
        .map(|h| (h.session_id, h.entry_id, h.field))
        .collect()
}

fn open(dir: &Path) -> Index {
    Index::open(&dir.join("index.sqlite")).unwrap().0
}

#[test]
fn catalog_holds_every_session_with_counts_and_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let mut ix = open(dir.path());
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!((r.read_full, r.unchanged, r.failed), (3, 0, 0));
    let list = ix.sessions(&ListParams::default()).unwrap();
    let ids: Vec<&str> = list.iter().map(|s| s.session_id.as_str()).collect();
    assert_eq!(
        ids,
        ["beta-2222", "gamma-3333", "alpha-1111"],
        "newest first"
    );
    let a = &list[2];
    assert_eq!(a.agent, "claude");
    assert_eq!(a.format, "json");
    assert_eq!(a.project.as_deref(), Some("/home/u/parser"));
    assert_eq!(
        a.first_prompt.as_deref(),
        Some("the tokenizer panics on unicode input")
    );
    assert_eq!(a.created_ms, Some(NOW - 40 * DAY));
    assert_eq!(a.updated_ms, Some(NOW - 40 * DAY + 6000));
    assert_eq!(
        (
            a.entries,
            a.messages,
            a.user_messages,
            a.assistant_messages,
            a.tool_calls
        ),
        (6, 4, 2, 2, 2)
    );
    assert_eq!(a.tokens.len(), 1);
    assert_eq!(a.tokens[0].model, "claude-sonnet-4-20250514");
    assert_eq!(
        (
            a.tokens[0].responses,
            a.tokens[0].input,
            a.tokens[0].cache_read
        ),
        (2, 110, 3000)
    );
    // Filters of the catalog.
    let only = ix
        .sessions(&ListParams {
            projects: vec!["webapp".into()],
            ..ListParams::default()
        })
        .unwrap();
    assert_eq!(only.len(), 1);
    // By format, in each kind of listing.
    let all = ix.sessions(&ListParams::default()).unwrap();
    for kind in [(false, false), (true, false), (false, true)] {
        let listed = |formats: &[&str]| -> Vec<String> {
            let mut v: Vec<String> = ix
                .sessions(&ListParams {
                    formats: formats.iter().map(|f| f.to_string()).collect(),
                    bare: kind.0,
                    unordered: kind.1,
                    ..ListParams::default()
                })
                .unwrap()
                .into_iter()
                .map(|s| s.format)
                .collect();
            v.sort();
            v
        };
        let mut every: Vec<String> = all.iter().map(|s| s.format.clone()).collect();
        every.sort();
        assert_eq!(listed(&[]), every, "{kind:?}");
        let first = every[0].as_str();
        let want: Vec<String> = every.iter().filter(|f| *f == first).cloned().collect();
        assert_eq!(listed(&[first]), want, "{kind:?}");
        assert_eq!(listed(&[first, "nope"]), want, "{kind:?}");
        // A name that only contains a format's is not that format.
        assert!(listed(&[&first[1..]]).is_empty(), "{kind:?}");
    }
    // A second update reads nothing.
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!((r.read_full, r.unchanged), (0, 3));
}

#[test]
fn search_phrases_prefixes_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let mut ix = open(dir.path());
    ix.update(&found, &mut |_| {}).unwrap();

    // A phrase matches the words in order only.
    let hits = search(&ix, "\"borrow checker\"", |_| {});
    assert_eq!(hits.len(), 3);
    assert!(search(&ix, "\"checker borrow\"", |_| {}).is_empty());
    // Ranking: at equal relevance the newer session comes first.
    assert_eq!(hits[0].0, "beta-2222");
    // Prefix.
    let hits = search(&ix, "tokeni*", |_| {});
    let mut sessions: Vec<&str> = hits.iter().map(|h| h.0.as_str()).collect();
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions, ["alpha-1111", "beta-2222"]);
    // Thinking is found and marked as such.
    let hits = search(&ix, "lexer slices", |_| {});
    assert_eq!(
        hits,
        [(
            "alpha-1111".to_string(),
            "alpha-1111-e2".to_string(),
            "thinking"
        )]
    );
    // Tool inputs, paths and outputs are searchable.
    assert_eq!(search(&ix, "lexer.rs", |_| {})[0].2, "tools");
    assert_eq!(search(&ix, "\"12 passed\"", |_| {})[0].2, "output");
    // Filters.
    assert_eq!(
        search(&ix, "borrow", |p| p.agents = vec!["codex".into()]).len(),
        2
    );
    assert_eq!(
        search(&ix, "borrow", |p| p.projects = vec!["parser".into()]).len(),
        1
    );
    assert!(search(&ix, "borrow", |p| p.projects = vec!["nowhere".into()]).is_empty());
    let users = search(&ix, "borrow", |p| p.roles = vec!["user".into()]);
    assert_eq!(
        users,
        [("beta-2222".to_string(), "beta-2222-e1".to_string(), "text")]
    );
    assert_eq!(
        search(&ix, "test*", |p| p.tools = vec!["bash".into()]).len(),
        2
    );
    assert_eq!(
        search(&ix, "borrow", |p| p.sessions = vec!["alpha".into()]).len(),
        1
    );
    assert_eq!(
        search(&ix, "borrow", |p| p.since_ms = Some(NOW - 10 * DAY)).len(),
        2
    );
    assert_eq!(
        search(&ix, "borrow", |p| p.until_ms = Some(NOW - 10 * DAY)).len(),
        1
    );
    // Exclusion and alternatives.
    assert_eq!(search(&ix, "borrow -closure", |_| {}).len(), 1);
    assert_eq!(search(&ix, "TOML OR unicode", |_| {}).len(), 2);
    // Punctuation is searched as words, never as query syntax.
    assert!(search(&ix, "\"cargo test --workspace\"", |_| {}).len() == 1);
    assert!(search(&ix, "AND ( NEAR", |_| {}).is_empty());
    // Snippets mark the match.
    let mut p = SearchParams::new("configuration");
    p.now_ms = Some(NOW);
    let h = &ix.search(&p).unwrap()[0];
    assert!(h.snippet.contains("«configuration»"), "{}", h.snippet);
    assert_eq!(&h.text[h.marks[0].start..h.marks[0].end], "configuration");
}

#[test]
fn tool_inputs_alone_are_searched_for_paths_and_commands() {
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let mut ix = open(dir.path());
    ix.update(&found, &mut |_| {}).unwrap();
    let tools = |q: &str, f: &dyn Fn(&mut SearchParams)| -> Vec<(String, String)> {
        let mut p = SearchParams::new(q);
        p.now_ms = Some(NOW);
        f(&mut p);
        ix.search_tool_inputs(&p)
            .unwrap()
            .into_iter()
            .map(|h| {
                assert_eq!(h.field, "tools", "{h:?}");
                (h.session_id, h.entry_id)
            })
            .collect()
    };
    // The path a Read was given; the command a Bash call ran.
    assert_eq!(
        tools("\"src/lexer.rs\"", &|_| {}),
        [("alpha-1111".to_string(), "alpha-1111-e2".to_string())]
    );
    assert_eq!(
        tools("\"cargo test\"", &|_| {}),
        [("alpha-1111".to_string(), "alpha-1111-e5".to_string())]
    );
    // "tokenizer" is said in prompts and outputs of two sessions, and given
    // to a tool (rg) in one.
    assert_eq!(search(&ix, "tokenizer", |_| {}).len(), 3);
    assert_eq!(
        tools("tokenizer", &|_| {}),
        [("beta-2222".to_string(), "beta-2222-e2".to_string())]
    );
    // Text the tools returned is not what they were given.
    assert!(tools("\"12 passed\"", &|_| {}).is_empty());
    // The filters hold.
    assert!(tools("\"cargo test\"", &|p| p.agents = vec!["codex".into()]).is_empty());
    assert!(tools("\"cargo test\"", &|p| p.since_ms = Some(NOW - DAY)).is_empty());
}

#[test]
fn one_update_writes_one_full_text_segment() {
    // FTS5 writes its pending entries out as a new segment whenever a
    // statement runs in a statement transaction; the writer runs none, so
    // an update's entries form one segment, not one per session (which
    // FTS5 would merge over and over).
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let mut ix = open(dir.path());
    ix.update(&found, &mut |_| {}).unwrap();
    drop(ix);
    let c = rusqlite::Connection::open(dir.path().join("index.sqlite")).unwrap();
    let segments: i64 = c
        .query_row("SELECT count(DISTINCT segid) FROM fts_idx", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(segments, 1);
}

#[test]
fn newer_files_get_higher_document_ids_whatever_the_parse_order() {
    // Unweighed matches (here a phrase) are listed newest document first;
    // files are stored oldest first even though they are parsed in
    // parallel.
    let dir = tempfile::tempdir().unwrap();
    let base = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    let mut found = Vec::new();
    for k in (0..40).rev() {
        let s = session(
            &format!("s{k:02}"),
            Agent::Claude,
            "/p",
            NOW - DAY,
            &[Turn {
                user: &format!("the borrow checker again, take {k}"),
                thinking: None,
                tool: None,
                answer: "ok",
                model: "m",
                usage: (1, 1, 0, 0),
            }],
        );
        let f = write_json(dir.path(), &format!("f{k:02}"), &s);
        std::fs::File::options()
            .write(true)
            .open(&f.path)
            .unwrap()
            .set_modified(base + std::time::Duration::from_secs(k))
            .unwrap();
        found.push(f);
    }
    let mut ix = open(dir.path());
    ix.update(&found, &mut |_| {}).unwrap();
    let got: Vec<String> = search(&ix, "\"borrow checker\"", |p| p.limit = 100)
        .into_iter()
        .map(|h| h.0)
        .collect();
    let want: Vec<String> = (0..40).rev().map(|k| format!("s{k:02}")).collect();
    assert_eq!(got, want);
}

#[test]
fn prefixes_of_every_length_find_the_entries_with_a_word_they_start() {
    // The index keeps no prefix indexes: FTS5 gathers every word a prefix
    // starts, which must find exactly the entries holding such a word.
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let mut ix = open(dir.path());
    ix.update(&found, &mut |_| {}).unwrap();
    let c = rusqlite::Connection::open(dir.path().join("index.sqlite")).unwrap();
    agentlog_index::register_functions(&c).unwrap();
    // The words of each entry, read back from the index (the corpus is
    // ASCII, so splitting on what is not a letter or digit is what the
    // tokenizer does).
    let mut stmt = c
        .prepare(
            "SELECT s.session_id, d.entry_id, f.text, f.thinking, f.tools, f.output
             FROM fts f JOIN docs d ON d.id = f.rowid JOIN sessions s ON s.id = d.session",
        )
        .unwrap();
    let docs: Vec<((String, String), Vec<String>)> = stmt
        .query_map([], |r| {
            let mut words = Vec::new();
            for i in 2..6 {
                let field: Option<String> = r.get(i)?;
                words.extend(
                    field
                        .unwrap_or_default()
                        .split(|c: char| !c.is_ascii_alphanumeric())
                        .filter(|w| !w.is_empty())
                        .map(str::to_ascii_lowercase),
                );
            }
            Ok(((r.get(0)?, r.get(1)?), words))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut prefixes = std::collections::BTreeSet::new();
    for (_, words) in &docs {
        for w in words {
            for n in 1..=w.len().min(8) {
                prefixes.insert(w[..n].to_string());
            }
        }
    }
    assert!(prefixes.len() > 100, "{}", prefixes.len());
    for p in &prefixes {
        let mut want: Vec<(String, String)> = docs
            .iter()
            .filter(|(_, words)| words.iter().any(|w| w.starts_with(p.as_str())))
            .map(|(k, _)| k.clone())
            .collect();
        want.sort();
        let mut got: Vec<(String, String)> = search(&ix, &format!("{p}*"), |q| q.limit = 1000)
            .into_iter()
            .map(|h| (h.0, h.1))
            .collect();
        got.sort();
        assert_eq!(got, want, "{p}*");
    }
}

#[test]
fn prefixes_find_words_with_accents_and_other_scripts() {
    // Prefixes of ASCII letters are searched as the words of the index
    // they start; the words are cut from the text as FTS5 cuts it, accents
    // and all.
    let dir = tempfile::tempdir().unwrap();
    let s = session(
        "delta-4444",
        Agent::Other("mystery".into()),
        "/srv/accents",
        NOW - DAY,
        &[Turn {
            user: "Éclair—naïve Straße über-Größe 東京タワー",
            thinking: None,
            tool: None,
            answer: "done",
            model: "mystery-model-1",
            usage: (1, 1, 0, 0),
        }],
    );
    let found = vec![write_json(dir.path(), "d", &s)];
    let mut ix = open(dir.path());
    ix.update(&found, &mut |_| {}).unwrap();
    for q in [
        "ecl*", "ECLA*", "éclair*", "nai*", "naïv*", "stra*", "straße*", "uber*", "gro*", "größe*",
        "東京*",
    ] {
        assert_eq!(search(&ix, q, |_| {}).len(), 1, "{q}");
    }
    for q in ["eclairs*", "strasse*", "x*"] {
        assert!(search(&ix, q, |_| {}).is_empty(), "{q}");
    }
}

#[test]
fn stats_count_tokens_and_cost_by_model_agent_and_day() {
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let mut ix = open(dir.path());
    ix.update(&found, &mut |_| {}).unwrap();
    let s = ix
        .stats(&StatsParams {
            by: GroupBy::Model,
            ..StatsParams::default()
        })
        .unwrap();
    let keys: Vec<&str> = s.rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        ["claude-sonnet-4-20250514", "gpt-5-codex", "mystery-model-1"]
    );
    let sonnet = &s.rows[0];
    assert_eq!(
        (
            sonnet.responses,
            sonnet.input,
            sonnet.output,
            sonnet.cache_read,
            sonnet.cache_write
        ),
        (2, 110, 55, 3000, 200)
    );
    // 110 × 3 + 55 × 15 + 3000 × 0.3 + 200 × 3.75 per million.
    let want = (110.0 * 3.0 + 55.0 * 15.0 + 3000.0 * 0.3 + 200.0 * 3.75) / 1e6;
    assert!((sonnet.cost_usd.unwrap() - want).abs() < 1e-12);
    let codex = &s.rows[1];
    let want_codex = (300.0 * 1.25 + 70.0 * 10.0 + 500.0 * 0.125) / 1e6;
    assert!((codex.cost_usd.unwrap() - want_codex).abs() < 1e-12);
    assert_eq!(s.rows[2].cost_usd, None);
    assert_eq!(s.rows[2].unpriced_responses, 1);
    assert_eq!(s.total.responses, 4);
    assert_eq!(
        s.total.total,
        110 + 55 + 3000 + 200 + 300 + 70 + 500 + 7 + 3
    );
    assert_eq!(s.total.unpriced_responses, 1);
    let by_agent = ix
        .stats(&StatsParams {
            by: GroupBy::Agent,
            ..StatsParams::default()
        })
        .unwrap();
    let agents: Vec<(&str, u64)> = by_agent
        .rows
        .iter()
        .map(|r| (r.key.as_str(), r.responses))
        .collect();
    assert_eq!(agents, [("claude", 2), ("codex", 1), ("mystery", 1)]);
    let by_day = ix
        .stats(&StatsParams {
            by: GroupBy::Day,
            since_ms: Some(NOW - 5 * DAY),
            ..StatsParams::default()
        })
        .unwrap();
    assert_eq!(by_day.rows.len(), 2);
    assert!(by_day.rows[0].key < by_day.rows[1].key);
    let by_project = ix
        .stats(&StatsParams {
            by: GroupBy::Project,
            projects: vec!["webapp".into()],
            ..StatsParams::default()
        })
        .unwrap();
    assert_eq!(by_project.rows.len(), 1);
    assert_eq!(by_project.total.input, 300);
}

#[test]
fn rewritten_and_deleted_files_are_reindexed_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let mut found = corpus(dir.path());
    let mut ix = open(dir.path());
    ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!(search(&ix, "TOML", |_| {}).len(), 1);
    // Rewrite c with other content.
    let c2 = session(
        "gamma-3333",
        Agent::Other("mystery".into()),
        "/srv/other",
        NOW - 3 * DAY,
        &[Turn {
            user: "explain the YAML loader instead",
            thinking: None,
            tool: None,
            answer: "It parses YAML.",
            model: "mystery-model-1",
            usage: (1, 1, 0, 0),
        }],
    );
    write_json(dir.path(), "c", &c2);
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!((r.read_full, r.unchanged), (1, 2));
    assert!(search(&ix, "TOML", |_| {}).is_empty());
    assert_eq!(search(&ix, "YAML", |_| {}).len(), 2);
    // Delete b: gone from the catalog, the search and the stats.
    std::fs::remove_file(&found[1].path).unwrap();
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!(r.removed, 1);
    found.remove(1);
    assert!(search(&ix, "closure", |_| {}).is_empty());
    assert_eq!(ix.sessions(&ListParams::default()).unwrap().len(), 2);
    let s = ix.stats(&StatsParams::default()).unwrap();
    assert!(s.rows.iter().all(|r| r.key != "gpt-5-codex"));
    // A file that cannot be read is recorded with its error, not fatal.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, b"{ not json").unwrap();
    found.push(Found {
        path: bad.clone(),
        format: "json",
    });
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!(r.failed, 1, "{r:?}");
    let st = ix.file_state(&bad).unwrap().unwrap();
    assert!(st.error.unwrap().contains("bad.json"));
}

#[test]
fn a_file_that_is_not_an_index_is_never_touched() {
    let dir = tempfile::tempdir().unwrap();
    // A typo'd --index naming a session file, and someone else's database.
    let garbage = dir.path().join("session.jsonl");
    let bytes = b"{\"type\":\"session\",\"id\":\"x\"}\n".repeat(200);
    std::fs::write(&garbage, &bytes).unwrap();
    let theirs = dir.path().join("theirs.sqlite");
    {
        let c = rusqlite::Connection::open(&theirs).unwrap();
        c.execute_batch(
            "CREATE TABLE files(x); INSERT INTO files VALUES(1); PRAGMA user_version = 4;",
        )
        .unwrap();
    }
    let theirs_bytes = std::fs::read(&theirs).unwrap();
    for (path, expect) in [
        (&garbage, "not a SQLite database"),
        (&theirs, "not an agentlog index"),
    ] {
        let err = Index::open(path).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains(expect), "{err}");
        let err = Index::rebuild(path, &[], &mut |_| {})
            .unwrap_err()
            .to_string();
        assert!(err.contains("not an agentlog index"), "{err}");
    }
    assert_eq!(std::fs::read(&garbage).unwrap(), bytes);
    assert_eq!(std::fs::read(&theirs).unwrap(), theirs_bytes);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn an_old_or_damaged_index_is_renamed_aside_never_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let path = dir.path().join("index.sqlite");
    {
        let (mut ix, notice) = Index::open(&path).unwrap();
        assert!(notice.is_none());
        ix.update(&found, &mut |_| {}).unwrap();
    }
    // An index written by another version (and one made before the
    // application id was set).
    // (The version just before is brought to this one in place: below.)
    for (old, legacy) in [(1, false), (agentlog_index::SCHEMA_VERSION - 2, true)] {
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            c.execute_batch(&format!("PRAGMA user_version = {old}"))
                .unwrap();
            if legacy {
                c.execute_batch("PRAGMA application_id = 0; DROP TABLE agentlog_index;")
                    .unwrap();
            }
        }
        let before = std::fs::read(&path).unwrap();
        let (mut ix, notice) = Index::open(&path).unwrap();
        let notice = notice.unwrap();
        assert!(
            notice.contains(&format!(
                "schema version {old}, this agentlog uses {}",
                agentlog_index::SCHEMA_VERSION
            )),
            "{notice}"
        );
        let aside: Vec<PathBuf> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy().into_owned();
                n.starts_with("index.sqlite.broken-")
                    && !n.ends_with("-wal")
                    && !n.ends_with("-shm")
            })
            .collect();
        assert!(!aside.is_empty(), "nothing renamed aside");
        assert!(notice.contains("moved to"), "{notice}");
        assert!(aside.iter().any(|p| std::fs::read(p).unwrap() == before));
        for p in aside {
            std::fs::remove_file(p).unwrap();
        }
        assert!(ix.sessions(&ListParams::default()).unwrap().is_empty());
        ix.update(&found, &mut |_| {}).unwrap();
        assert_eq!(ix.sessions(&ListParams::default()).unwrap().len(), 3);
    }
    // An index of this version without the application id (made by the
    // agentlog before it) is marked in place, not rebuilt.
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA application_id = 0; DROP TABLE agentlog_index;")
            .unwrap();
    }
    let (ix, notice) = Index::open(&path).unwrap();
    assert!(notice.is_none(), "{notice:?}");
    assert_eq!(ix.sessions(&ListParams::default()).unwrap().len(), 3);
    drop(ix);
    let c = rusqlite::Connection::open(&path).unwrap();
    let app: i32 = c
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app, agentlog_index::APPLICATION_ID);
}

/// What `ls` lists of an index: every session's listed row.
fn listing(ix: &Index) -> Vec<String> {
    let q = agentlog_index::ListingQuery {
        formats: vec!["json".into()],
        ..Default::default()
    };
    let mut rows = Vec::new();
    ix.visit_listing(&q, &mut |l| rows.push(format!("{l:?}")))
        .unwrap();
    rows
}

/// The listing index of schema version 9.
const VERSION_9_LISTING_INDEX: &str =
    "CREATE INDEX sessions_listed ON sessions(coalesce(created_ms, updated_ms), path DESC,
       format, agent, session_id, project, messages, updated_ms, listed, tokens);";

/// Turns the index at `path` back into one of schema version 9: no kind in
/// the catalog, no drift tables, and the listing index of then.
fn as_version_9(path: &Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(&format!(
        "DROP INDEX sessions_listed;
         ALTER TABLE sessions DROP COLUMN kind;
         DROP TABLE drift; DROP TABLE drift_said;
         {VERSION_9_LISTING_INDEX}
         PRAGMA user_version = 9;"
    ))
    .unwrap();
}

#[test]
fn an_index_of_the_version_before_is_brought_up_to_date_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let path = dir.path().join("index.sqlite");
    let (mut ix, _) = Index::open(&path).unwrap();
    ix.update(&found, &mut |_| {}).unwrap();
    let want = listing(&ix);
    assert_eq!(want.len(), 3);
    assert!(want.iter().all(|r| !r.contains("tokens: 0")), "{want:?}");
    let counts = ix.counts().unwrap();
    drop(ix);
    as_version_9(&path);
    // Opened twice at once: one brings it up to date, the other finds it
    // done.
    let opened: Vec<_> = std::thread::scope(|s| {
        let a = s.spawn(|| Index::open(&path).unwrap());
        let b = s.spawn(|| Index::open(&path).unwrap());
        vec![a.join().unwrap(), b.join().unwrap()]
    });
    for (ix, notice) in &opened {
        assert!(notice.is_none(), "rebuilt: {notice:?}");
        // Answers as it did meanwhile (every session a conversation).
        assert_eq!(listing(ix), want);
        assert_eq!(ix.counts().unwrap(), counts, "kept, not rebuilt");
        assert!(ix.drift().unwrap().is_empty());
    }
    drop(opened);
    let aside = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().contains(".broken-")
        })
        .count();
    assert_eq!(aside, 0);
    let c = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, agentlog_index::SCHEMA_VERSION);
    drop(c);
    // The next update reads every file again (what a session is and what
    // its reader did not know come from its file), in place.
    let (mut ix, _) = Index::open(&path).unwrap();
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!((r.unchanged, r.read_full), (0, 3), "{r:?}");
    assert_eq!(listing(&ix), want);
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!((r.unchanged, r.read_full), (3, 0), "{r:?}");

    // One that cannot be brought up to date (here: it says version 9 but
    // has the new column already) is renamed aside and rebuilt, as any
    // unusable index is.
    drop(ix);
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("PRAGMA user_version = 9")
        .unwrap();
    let (mut ix, notice) = Index::open(&path).unwrap();
    let notice = notice.unwrap();
    assert!(
        notice.contains("schema version 9, which could not be brought to")
            && notice.contains("duplicate column"),
        "{notice}"
    );
    ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!(listing(&ix), want);
}

#[test]
fn a_busy_index_is_reported_never_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let path = dir.path().join("index.sqlite");
    {
        let (mut ix, _) = Index::open(&path).unwrap();
        ix.update(&found, &mut |_| {}).unwrap();
    }
    // Another process holding the file exclusively.
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder
        .execute_batch("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; DELETE FROM usage;")
        .unwrap();
    let err = Index::open_waiting(&path, std::time::Duration::from_millis(200))
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(err, agentlog_index::IndexError::Busy { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("busy"), "{err}");
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    let (ix, notice) = Index::open(&path).unwrap();
    assert!(notice.is_none(), "{notice:?}");
    assert_eq!(ix.sessions(&ListParams::default()).unwrap().len(), 3);
}

#[test]
fn concurrent_cold_starts_make_one_index() {
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let path = dir.path().join("new/index.sqlite");
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let (path, found) = (path.clone(), found.clone());
            std::thread::spawn(move || -> Result<usize, String> {
                let (mut ix, notice) = Index::open(&path).map_err(|e| e.to_string())?;
                if let Some(n) = notice {
                    return Err(n);
                }
                ix.update(&found, &mut |_| {}).map_err(|e| e.to_string())?;
                Ok(ix
                    .sessions(&ListParams::default())
                    .map_err(|e| e.to_string())?
                    .len())
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), Ok(3));
    }
    let names: Vec<String> = std::fs::read_dir(dir.path().join("new"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("building") || n.contains("broken"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[cfg(unix)]
#[test]
fn the_index_is_private_and_dead_builders_leave_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let path = dir.path().join("a/b/index.sqlite");
    // A builder that died: its pid no longer runs.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    std::fs::set_permissions(
        dir.path().join("a/b"),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    for suffix in ["", "-wal", "-journal"] {
        std::fs::write(
            dir.path()
                .join(format!("a/b/index.sqlite.building-{dead}{suffix}")),
            b"half",
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("a/b/index.sqlite.building-notes"), b"mine").unwrap();
    let (mut ix, _) = Index::open(&path).unwrap();
    ix.update(&found, &mut |_| {}).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    let fresh = dir.path().join("x/y/index.sqlite");
    drop(Index::open(&fresh).unwrap());
    assert_eq!(mode(&fresh), 0o600);
    assert_eq!(mode(&dir.path().join("x/y")), 0o700);
    assert_eq!(mode(&dir.path().join("x")), 0o700);
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("building"))
        .collect();
    names.sort();
    assert_eq!(names, ["index.sqlite.building-notes"]);
    for entry in std::fs::read_dir(dir.path().join("a/b")).unwrap() {
        let p = entry.unwrap().path();
        let n = p.file_name().unwrap().to_string_lossy().into_owned();
        if n.starts_with("index.sqlite") && !n.ends_with("notes") {
            assert_eq!(mode(&p) & 0o077, 0, "{}", p.display());
        }
    }
    // An index made 0644 by an older agentlog is made private on open.
    drop(ix);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let _ = Index::open(&path).unwrap();
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn mid_file_damage_is_found_and_reported_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let path = dir.path().join("index.sqlite");
    {
        let (mut ix, _) = Index::open(&path).unwrap();
        ix.update(&found, &mut |_| {}).unwrap();
        assert!(ix.check().unwrap().is_empty());
        // Checked just now: not due again.
        assert!(!ix
            .check_if_due(std::time::Duration::from_secs(3600))
            .unwrap());
        drop(ix);
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;")
            .unwrap();
    }
    // Scribble over the root page of the `usage` table, as a bad disk
    // sector would (opening the index reads the first rows of the tables
    // through their indexes and `fts_text`, not this page).
    let page: u64 = {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = 'usage'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.seek(SeekFrom::Start((page - 1) * 4096)).unwrap();
        f.write_all(&[0xa5; 4096]).unwrap();
    }
    let (ix, notice) = match Index::open(&path) {
        Ok(x) => x,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(notice, None, "opening reads no page of `usage`");
    let err = ix
        .check_if_due(std::time::Duration::from_secs(0))
        .unwrap_err()
        .to_string();
    assert!(err.contains("damaged"), "{err}");
    assert!(err.contains("a rebuild makes a new index"), "{err}");
    assert!(!err.contains("--"), "the library names no flag: {err}");
    // The fix works.
    drop(ix);
    let (ix, _) = Index::rebuild(&path, &found, &mut |_| {}).unwrap();
    assert!(ix.check().unwrap().is_empty());
    assert_eq!(ix.sessions(&ListParams::default()).unwrap().len(), 3);
}

#[test]
fn rebuild_replaces_the_index_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let found = corpus(dir.path());
    let path = dir.path().join("sub/index.sqlite");
    let (ix, report) = Index::rebuild(&path, &found, &mut |_| {}).unwrap();
    assert_eq!(report.read_full, 3);
    assert_eq!(ix.sessions(&ListParams::default()).unwrap().len(), 3);
    let leftovers: Vec<PathBuf> = std::fs::read_dir(dir.path().join("sub"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("building"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_listing_of_some_formats_gives_the_rows_of_those_formats() {
    // Few formats of many are found through the catalog's format index,
    // many by reading every row: the same rows either way, brief or not.
    let dir = tempfile::tempdir().unwrap();
    let formats = ["json", "claude", "codex", "pi"];
    let mut found = Vec::new();
    for i in 0..24 {
        let f = formats[i % formats.len()];
        let format = agentlog_formats::registry::by_name(f).unwrap();
        let turn = Turn {
            user: "first line\nsecond line",
            thinking: None,
            tool: None,
            answer: "done",
            model: if i % 3 == 0 { "model-a" } else { "model-b" },
            usage: (10 + i as u64, 5, 3, 1),
        };
        let agent = match f {
            "claude" => Agent::Claude,
            "codex" => Agent::Codex,
            "pi" => Agent::Pi,
            _ => Agent::Gemini,
        };
        let mut s = session(
            &format!("{f}-{i:04}"),
            agent,
            "/home/u/p",
            NOW - i as i64 * DAY,
            &[turn],
        );
        if i % 2 == 0 {
            s.meta.title = Some(format!("  title {i}\nmore"));
        }
        let p = dir.path().join(format!(
            "s{i}.{}",
            if f == "json" { "json" } else { "jsonl" }
        ));
        let mut out = Vec::new();
        format.write(&s, &mut out).unwrap();
        std::fs::write(&p, out).unwrap();
        found.push(Found { path: p, format: f });
    }
    let mut ix = open(dir.path());
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!((r.read_full, r.failed), (24, 0));
    let all = ix.sessions(&ListParams::default()).unwrap();
    assert_eq!(all.len(), 24);
    let choices: [&[&str]; 5] = [
        &["codex"],
        &["pi", "json"],
        &["claude", "codex", "pi"],
        &["json", "claude", "codex", "pi"],
        &["gemini"],
    ];
    for want in choices {
        for brief in [false, true] {
            let p = ListParams {
                formats: want.iter().map(|f| f.to_string()).collect(),
                unordered: true,
                brief,
                ..ListParams::default()
            };
            let mut got = ix.sessions(&p).unwrap();
            got.sort_by(|a, b| a.path.cmp(&b.path));
            let mut of: Vec<&agentlog_index::SessionInfo> = all
                .iter()
                .filter(|s| want.contains(&s.format.as_str()))
                .collect();
            of.sort_by(|a, b| a.path.cmp(&b.path));
            assert_eq!(got.len(), of.len(), "{want:?} brief {brief}");
            assert_eq!(ix.count_sessions(&p).unwrap(), of.len(), "{want:?}");
            for (g, a) in got.iter().zip(of) {
                let total = |s: &agentlog_index::SessionInfo| {
                    s.tokens
                        .iter()
                        .map(|t| t.responses + t.input + t.output + t.cache_read + t.cache_write)
                        .sum::<u64>()
                };
                assert_eq!(
                    (&g.session_id, &g.format, g.updated_ms, total(g)),
                    (&a.session_id, &a.format, a.updated_ms, total(a)),
                    "{want:?} brief {brief}"
                );
                if brief {
                    assert_eq!(g.first_prompt, None);
                    assert_eq!(
                        g.title,
                        agentlog_index::title::listed_title(
                            a.title.as_deref(),
                            a.first_prompt.as_deref()
                        )
                    );
                    assert!(g.tokens.len() <= 1, "summed: {:?}", g.tokens);
                } else {
                    assert_eq!(g, a);
                }
            }
        }
    }
}
