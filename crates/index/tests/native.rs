#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The index over native session files: a generated corpus of every agent,
//! the real fixtures, and incremental updates of the append-only formats.

use agentlog_bench::gen;
use agentlog_formats::discover::{discover_all, DiscoverEnv, Found};
use agentlog_index::{Index, ListParams, SearchParams};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn open(dir: &Path) -> Index {
    Index::open(&dir.join("ix/index.sqlite")).unwrap().0
}

#[test]
fn a_generated_corpus_is_discovered_and_cataloged() {
    let home = tempfile::tempdir().unwrap();
    let g = gen::generate(home.path(), 3_000_000, 7).unwrap();
    let found = discover_all(&DiscoverEnv::with_home(home.path()), None);
    let mut want: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, a) in &g.files {
        *want.entry(a).or_default() += 1;
    }
    let mut got: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &found {
        *got.entry(f.format).or_default() += 1;
    }
    assert_eq!(got, want, "discovery finds exactly the generated sessions");

    let work = tempfile::tempdir().unwrap();
    let mut ix = open(work.path());
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!(r.failed, 0, "{:?}", ix.failed_files().unwrap());
    assert_eq!(r.read_full, g.files.len());
    let list = ix.sessions(&ListParams::default()).unwrap();
    assert_eq!(list.len(), g.files.len());
    let by_path: BTreeMap<&str, _> = list.iter().map(|s| (s.path.as_str(), s)).collect();
    for (n, (path, agent)) in g.files.iter().enumerate() {
        let c = gen::conv(7, n as u64);
        let s = by_path[path.to_str().unwrap()];
        assert_eq!(
            s.project.as_deref(),
            Some(c.project.as_str()),
            "{agent} {}",
            path.display()
        );
        assert!(
            s.created_ms.is_some() && s.updated_ms >= s.created_ms,
            "{agent}"
        );
        if *agent != "codelia" {
            // codelia names runs, not sessions; every other agent keeps the id.
            assert!(
                s.session_id.contains(&c.id[..8]),
                "{agent}: {} vs {}",
                s.session_id,
                c.id
            );
        }
        let prompt = s.first_prompt.as_deref().unwrap_or("");
        assert!(
            prompt.starts_with(&c.turns[0].user[..20]),
            "{agent}: {prompt:?}"
        );
        if *agent == "claude" || *agent == "pi" {
            // One usage per model response: the tool-calling responses and
            // the answer of every turn, never the repeated streamed lines.
            let responses: usize = c.turns.iter().map(|t| t.steps.len() + 1).sum();
            let mut output = 0;
            for t in &c.turns {
                output += t.usage.output + t.steps.iter().map(|s| s.usage.output).sum::<u64>();
            }
            let tok: u64 = s.tokens.iter().map(|t| t.responses).sum();
            let out: u64 = s.tokens.iter().map(|t| t.output).sum();
            assert_eq!(
                (tok, out),
                (responses as u64, output),
                "{agent} {}",
                path.display()
            );
            let calls: usize = c.turns.iter().map(|t| t.steps.len()).sum();
            assert_eq!(s.tool_calls, calls as u64, "{agent}");
            // Thinking (its own line in Claude's files) is not a message:
            // one reply per model response.
            assert_eq!(s.assistant_messages, responses as u64, "{agent}");
        }
        // One rule for every agent: each turn's prompt is one user prompt;
        // injected context (Codex's <environment_context>), reasoning items
        // and tool results are not; codelia's follow-up prompts are.
        assert_eq!(
            s.user_messages,
            c.turns.len() as u64,
            "{agent} {}",
            path.display()
        );
        assert_eq!(
            s.messages,
            s.user_messages + s.assistant_messages,
            "{agent} {}",
            path.display()
        );
        // The catalog counts what the model counts (what `ls` shows).
        let session = agentlog_formats::registry::detect(path)
            .unwrap()
            .read_path(path)
            .unwrap()
            .session;
        assert_eq!(s.messages, session.message_count() as u64, "{agent}");
        assert_eq!(s.user_messages, session.prompt_count() as u64, "{agent}");
        assert_eq!(
            s.tokens
                .iter()
                .map(|t| t.input + t.output + t.cache_read + t.cache_write)
                .sum::<u64>(),
            session.total_usage().sum(),
            "{agent}"
        );
    }
    // Every agent's text is searchable, and thinking is marked.
    let first = &gen::conv(7, 0).turns[0].user;
    let word = first
        .split_whitespace()
        .find(|w| w.len() > 6)
        .unwrap_or("the");
    let hits = ix
        .search(&SearchParams::new(
            word.trim_matches(|c: char| !c.is_alphanumeric()),
        ))
        .unwrap();
    assert!(!hits.is_empty());
    let mut p = SearchParams::new("the");
    p.roles = vec!["thinking".into()];
    p.limit = 50;
    let hits = ix.search(&p).unwrap();
    assert!(
        !hits.is_empty()
            && hits
                .iter()
                .all(|h| h.field == "thinking" || h.field == "text")
    );
    assert!(hits.iter().any(|h| h.field == "thinking"));
}

/// Native lines of another generated conversation of `agent`, header
/// excluded.
#[test]
fn a_build_leaves_one_segment_however_many_fts5_wrote() {
    // A build that makes FTS5 write many segments (here: a tiny in-memory
    // buffer) ends with one per full-text table, so that later small
    // updates never make FTS5 merge the large ones all at once.
    let home = tempfile::tempdir().unwrap();
    gen::generate(home.path(), 6_000_000, 5).unwrap();
    let found = discover_all(&DiscoverEnv::with_home(home.path()), None);
    let work = tempfile::tempdir().unwrap();
    let ix = open(work.path());
    let segments = |c: &rusqlite::Connection, table: &str| -> i64 {
        c.query_row(
            &format!("SELECT count(DISTINCT segid) FROM {table}_idx"),
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let c = rusqlite::Connection::open(ix.path()).unwrap();
    c.execute_batch(
        "INSERT INTO fts(fts, rank) VALUES('hashsize', 65536);
         INSERT INTO words(words, rank) VALUES('hashsize', 65536);",
    )
    .unwrap();
    drop(ix);
    let mut ix = open(work.path());
    ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!((segments(&c, "fts"), segments(&c, "words")), (1, 1));
    // Just written: not due for the check that reads the whole file.
    assert!(!ix
        .check_if_due(std::time::Duration::from_secs(3600))
        .unwrap());
    // A small update after it writes a segment of its own.
    let claude = found.iter().find(|f| f.format == "claude").unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&claude.path)
        .unwrap();
    for l in more_lines("claude", 3) {
        writeln!(f, "{l}").unwrap();
    }
    drop(f);
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!(r.appended, 1);
    assert_eq!(segments(&c, "fts"), 2);
    // Many small updates: each merges a little, so segments stay few
    // (FTS5's own merging is off; without ours every update would add
    // one).
    for l in more_lines("claude", 40) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&claude.path)
            .unwrap();
        writeln!(f, "{l}").unwrap();
        drop(f);
        assert_eq!(ix.update(&found, &mut |_| {}).unwrap().appended, 1);
    }
    let n = segments(&c, "fts");
    assert!((2..=8).contains(&n), "{n} segments after 41 updates");
    assert_derived_tables_consistent(ix.path(), "after the build");
}

fn more_lines(agent: &str, n: usize) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let c = gen::conv(99, 5);
    let p = gen::write_session(tmp.path(), agent, &c).unwrap();
    let text = std::fs::read_to_string(p).unwrap();
    let skip = usize::from(agent != "claude");
    text.lines().skip(skip).take(n).map(String::from).collect()
}

fn entry_ids_full(path: &Path, format: &'static str) -> (Vec<String>, u64) {
    let work = tempfile::tempdir().unwrap();
    let mut ix = open(work.path());
    ix.update(
        &[Found {
            path: path.to_path_buf(),
            format,
        }],
        &mut |_| {},
    )
    .unwrap();
    let s = &ix.sessions(&ListParams::default()).unwrap()[0];
    (ix.entry_ids(path.to_str().unwrap()).unwrap(), s.messages)
}

/// Asserts that the full-text index holds exactly the text `texts` keeps
/// (FTS5's own check, comparing with the content it reads through the
/// view), that every text block belongs to an entry and every entry's
/// block exists, that each session's entry count is its documents', and
/// that the token sums per session are the sums of the responses.
fn assert_derived_tables_consistent(index: &Path, what: &str) {
    let c = rusqlite::Connection::open(index).unwrap();
    agentlog_index::register_functions(&c).unwrap();
    c.execute(
        "INSERT INTO fts(fts, rank) VALUES('integrity-check', 1)",
        [],
    )
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    let (orphans, missing): (i64, i64) = c
        .query_row(
            "SELECT (SELECT count(*) FROM texts t
                     WHERE NOT EXISTS (SELECT 1 FROM docs d WHERE d.block = t.id)),
                    (SELECT count(*) FROM docs d
                     WHERE d.block IS NOT NULL
                       AND NOT EXISTS (SELECT 1 FROM texts t WHERE t.id = d.block))",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((orphans, missing), (0, 0), "{what}");
    // The vocabulary has one row per block.
    let (extra, lacking): (i64, i64) = c
        .query_row(
            "SELECT (SELECT count(*) FROM words WHERE rowid NOT IN (SELECT id FROM texts)),
                    (SELECT count(*) FROM texts WHERE id NOT IN (SELECT rowid FROM words))",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((extra, lacking), (0, 0), "{what}");
    // Each session's entry count is its documents' (`counts` sums them).
    let (docs, entries, stray): (i64, i64, i64) = c
        .query_row(
            "SELECT (SELECT count(*) FROM docs),
                    (SELECT coalesce(sum(entries), 0) FROM sessions),
                    (SELECT count(*) FROM sessions s
                     WHERE entries <> (SELECT count(*) FROM docs d WHERE d.session = s.id))",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((docs, stray), (entries, 0), "{what}");
    let sums = |sql: &str| -> Vec<(i64, String, i64, i64)> {
        c.prepare(sql)
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(
        sums(
            "SELECT session, model, responses, input + output + cache_read + cache_write
             FROM session_tokens ORDER BY 1, 2"
        ),
        sums(
            "SELECT session, coalesce(model, 'unknown'), count(*),
                    sum(input + output + cache_read + cache_write)
             FROM usage GROUP BY 1, 2 ORDER BY 1, 2"
        ),
        "{what}"
    );
    // The catalog's listed title and tokens are made from what it holds.
    let mut st = c
        .prepare(
            "SELECT id, title, first_prompt, listed, tokens,
                    (SELECT coalesce(sum(input + output + cache_read + cache_write), 0)
                     FROM session_tokens WHERE session = sessions.id)
             FROM sessions",
        )
        .unwrap();
    type Row = (
        i64,
        Option<String>,
        Option<String>,
        Option<String>,
        i64,
        i64,
    );
    let rows: Vec<Row> = st
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (id, title, prompt, listed, tokens, summed) in rows {
        let want = agentlog_index::title::listed_title(title.as_deref(), prompt.as_deref());
        assert_eq!(listed, want, "{what}: session {id}");
        assert_eq!(tokens, summed, "{what}: session {id}");
    }
}

#[test]
fn a_title_named_in_appended_lines_is_listed() {
    let home = tempfile::tempdir().unwrap();
    let c = gen::conv(5, 3);
    let path = gen::write_session(home.path(), "claude", &c).unwrap();
    let found = vec![Found {
        path: path.clone(),
        format: "claude",
    }];
    let work = tempfile::tempdir().unwrap();
    let mut ix = open(work.path());
    ix.update(&found, &mut |_| {}).unwrap();
    let listed = |ix: &Index| -> (Option<String>, u64) {
        let q = agentlog_index::ListingQuery {
            formats: vec!["claude".into()],
            ..Default::default()
        };
        let mut got = Vec::new();
        ix.visit_listing(&q, &mut |l| got.push((l.title.map(String::from), l.tokens)))
            .unwrap();
        assert_eq!(got.len(), 1);
        got.remove(0)
    };
    let (before, tokens) = listed(&ix);
    assert!(tokens > 0);
    assert!(before.is_some());
    // Lines of another conversation, with prompts and replies of their
    // own: the listed title stays the first prompt's, the tokens grow.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    for l in more_lines("claude", 6) {
        writeln!(f, "{l}").unwrap();
    }
    drop(f);
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!((r.appended, r.read_full), (1, 0), "{r:?}");
    let (after, grown) = listed(&ix);
    assert_eq!(after, before);
    assert!(grown > tokens, "{grown} after {tokens}");
    let tokens = grown;
    let id = ix.sessions(&ListParams::default()).unwrap()[0]
        .session_id
        .clone();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(
        f,
        "{}",
        serde_json::json!({"type": "custom-title", "customTitle": "  Renamed\nsecond line", "sessionId": id})
    )
    .unwrap();
    drop(f);
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!((r.appended, r.read_full), (1, 0), "{r:?}");
    assert_eq!(
        listed(&ix),
        (Some("Renamed".into()), tokens),
        "was {before:?}"
    );
    assert_derived_tables_consistent(ix.path(), "after a new title");
}

#[test]
fn appended_lines_are_indexed_incrementally_like_a_full_read() {
    for (n, agent) in [(3u64, "claude"), (4, "codex"), (5, "pi")] {
        let home = tempfile::tempdir().unwrap();
        let c = gen::conv(11, n);
        let path = gen::write_session(home.path(), agent, &c).unwrap();
        let found = vec![Found {
            path: path.clone(),
            format: agent,
        }];
        let work = tempfile::tempdir().unwrap();
        let mut ix = open(work.path());
        ix.update(&found, &mut |_| {}).unwrap();
        let before = std::fs::read(&path).unwrap();
        let st = ix.file_state(&path).unwrap().unwrap();
        assert_eq!(st.indexed_to, before.len() as u64, "{agent}");
        assert!(st.tail_line > 1 && st.tail_offset > 0, "{agent}: {st:?}");
        let docs_before = ix.counts().unwrap().0;

        // Append whole lines and a torn one (a write in progress).
        let extra = more_lines(agent, 40);
        let mut grown = before.clone();
        for l in &extra {
            grown.extend_from_slice(l.as_bytes());
            grown.push(b'\n');
        }
        let whole = grown.len();
        grown.extend_from_slice(b"{\"type\":\"mess");
        std::fs::write(&path, &grown).unwrap();
        let r = ix.update(&found, &mut |_| {}).unwrap();
        assert_eq!((r.appended, r.read_full), (1, 0), "{agent}: {r:?}");
        // Only the tail was read: from the last turn's start to the end.
        assert!(
            r.bytes_read < (whole as u64 - st.tail_offset) + 1,
            "{agent}: {r:?}"
        );
        assert_eq!(r.bytes_read, whole as u64 - st.tail_offset, "{agent}");
        let st2 = ix.file_state(&path).unwrap().unwrap();
        assert_eq!(st2.indexed_to, whole as u64, "{agent}: the torn tail waits");
        assert!(st2.tail_offset >= st.tail_offset, "{agent}");
        assert!(ix.counts().unwrap().0 > docs_before, "{agent}");
        assert_derived_tables_consistent(ix.path(), agent);

        // Same entries and counts as reading the whole file afresh.
        std::fs::write(&path, &grown[..whole]).unwrap();
        let (full_ids, full_messages) = entry_ids_full(&path, agent);
        std::fs::write(&path, &grown).unwrap();
        assert_eq!(
            ix.entry_ids(path.to_str().unwrap()).unwrap(),
            full_ids,
            "{agent}"
        );
        let s = &ix.sessions(&ListParams::default()).unwrap()[0];
        assert_eq!(s.messages, full_messages, "{agent}");

        // The torn line completed later is read then.
        let mut done = grown[..whole].to_vec();
        done.extend_from_slice(extra[0].as_bytes());
        done.push(b'\n');
        std::fs::write(&path, &done).unwrap();
        let r = ix.update(&found, &mut |_| {}).unwrap();
        assert_eq!(r.appended, 1, "{agent}");
        assert_eq!(
            ix.file_state(&path).unwrap().unwrap().indexed_to,
            done.len() as u64
        );
        assert_derived_tables_consistent(ix.path(), agent);

        // A rewrite (shorter file) is read in full; a deleted file leaves.
        std::fs::write(&path, &before[..before.len() / 2 + 1]).unwrap();
        let cut = before[..before.len() / 2 + 1].to_vec();
        let cut_whole = cut.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let r = ix.update(&found, &mut |_| {}).unwrap();
        assert_eq!(r.read_full, 1, "{agent}");
        assert_eq!(
            ix.file_state(&path).unwrap().unwrap().indexed_to,
            cut_whole as u64
        );
        assert_derived_tables_consistent(ix.path(), agent);
        std::fs::remove_file(&path).unwrap();
        let r = ix.update(&found, &mut |_| {}).unwrap();
        assert_eq!(r.removed, 1);
        assert_eq!(ix.counts().unwrap(), (0, 0, 0));
        assert_derived_tables_consistent(ix.path(), agent);
    }
}

fn fixture_files() -> Vec<Found> {
    let root = PathBuf::from(FIXTURES).join("native");
    let mut out = Vec::new();
    for (dir, format) in [
        ("claude", "claude"),
        ("codex", "codex"),
        ("gemini", "gemini"),
        ("cursor", "cursor"),
    ] {
        for p in agentlog_formats::discover::walk_files(&root.join(dir), 4, &|p: &Path| {
            p.extension().is_some_and(|e| e == "jsonl" || e == "json")
        }) {
            if agentlog_formats::registry::detect(&p)
                .ok()
                .map(|f| f.name())
                == Some(format)
            {
                out.push(Found { path: p, format });
            }
        }
    }
    let pi = PathBuf::from(FIXTURES).join("seeds/pi-mono/large-session.jsonl");
    out.push(Found {
        path: pi,
        format: "pi",
    });
    out
}

#[test]
fn the_fixtures_of_every_agent_are_cataloged_and_searchable() {
    let found = fixture_files();
    assert!(found.iter().any(|f| f.format == "claude"));
    let work = tempfile::tempdir().unwrap();
    let mut ix = open(work.path());
    let r = ix.update(&found, &mut |_| {}).unwrap();
    assert_eq!(r.read_full + r.failed, found.len());
    let list = ix.sessions(&ListParams::default()).unwrap();
    assert!(!list.is_empty());
    // The Claude Code fixture used for the viewer: project, prompt, tokens.
    let s = list
        .iter()
        .find(|s| {
            s.path
                .ends_with("1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
        })
        .expect("claude fixture indexed");
    assert_eq!(s.agent, "claude");
    assert_eq!(s.project.as_deref(), Some("/path/to/Demo"));
    assert!(s
        .tokens
        .iter()
        .any(|t| t.model == "claude-sonnet-4-20250514"));
    // pi's large session: the session cwd and a phrase from it.
    let pi = list
        .iter()
        .find(|s| s.agent == "pi")
        .expect("pi fixture indexed");
    assert_eq!(
        pi.project.as_deref(),
        Some("/Users/badlogic/workspaces/pi-mono")
    );
    let mut p = SearchParams::new("\"user-message-selector.ts\"");
    p.agents = vec!["pi".into()];
    let hits = ix.search(&p).unwrap();
    assert!(!hits.is_empty());
    assert_eq!(hits[0].session_id, pi.session_id);
    let mut p = SearchParams::new("CLAUDE.md");
    p.agents = vec!["claude".into()];
    assert!(!ix.search(&p).unwrap().is_empty());
}
