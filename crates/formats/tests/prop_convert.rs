//! Property tests over random sessions: random trees survive the formats
//! that hold trees exactly, and every writable format keeps the
//! conversation of the active branch when a session is converted to it and
//! read back. `PROPTEST_CASES` bounds the run (default 48 per format).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agentlog_formats::{registry, Format};
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::Path;

#[derive(Debug, Clone)]
enum Step {
    User(String),
    Assistant {
        text: String,
        thinking: Option<String>,
        tool: Option<(String, String)>,
    },
}

fn words() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "fix",
            "the",
            "parser",
            "bug",
            "in",
            "src/main.rs",
            "run",
            "tests",
            "again",
            "why",
            "does",
            "it",
            "fail",
            "é",
            "日本",
            "\"quoted\"",
            "line\nbreak",
            "`code`",
            "<tag>",
            "50%",
            "{json}",
        ]),
        1..8,
    )
    .prop_map(|w| w.join(" "))
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        words().prop_map(Step::User),
        (
            words(),
            prop::option::of(words()),
            prop::option::of((prop::sample::select(vec!["bash", "read", "edit"]), words()))
        )
            .prop_map(|(text, thinking, tool)| Step::Assistant {
                text,
                thinking,
                tool: tool.map(|(n, a)| (n.to_string(), a)),
            }),
    ]
}

/// A conversation: steps, and for each step after the first whether it
/// branches back to an earlier user turn instead of following the last one.
fn session() -> impl Strategy<Value = Session> {
    (prop::collection::vec((step(), any::<Option<prop::sample::Index>>()), 1..14)).prop_map(
        |steps| {
            let mut meta =
                SessionMeta::new("0f8fad5b-d9cb-469f-a165-70867728950e", Agent::Agentlog);
            meta.cwd = Some("/work/project".into());
            meta.created_at = Some(Timestamp::Text("2026-03-01T10:00:00.000Z".into()));
            let mut s = Session::new(meta);
            let mut n = 0u32;
            let mut user_ids: Vec<String> = Vec::new();
            let mut parent: Option<String> = None;
            // Every session starts with a user turn.
            let steps: Vec<(Step, Option<prop::sample::Index>)> =
                std::iter::once((Step::User("start the work".into()), None))
                    .chain(steps)
                    .collect();
            for (st, branch) in steps {
                let mut push = |s: &mut Session, parent: &mut Option<String>, kind: EntryKind| {
                    n += 1;
                    let id = format!("{:08x}", 0x1000_0000u32 + n);
                    let ts =
                        Timestamp::Text(format!("2026-03-01T10:{:02}:{:02}.000Z", n / 60, n % 60));
                    s.push(Entry::new(id.clone(), parent.clone(), kind).at(ts));
                    *parent = Some(id.clone());
                    id
                };
                match st {
                    Step::User(text) => {
                        if let (Some(ix), false) = (branch, user_ids.is_empty()) {
                            // Branch: continue from before an earlier user turn.
                            let target = &user_ids[ix.index(user_ids.len())];
                            parent = s
                                .entries
                                .iter()
                                .find(|e| &e.id == target)
                                .and_then(|e| e.parent_id.clone());
                        }
                        let id = push(
                            &mut s,
                            &mut parent,
                            EntryKind::Message(Message::text(Role::User, text)),
                        );
                        user_ids.push(id);
                    }
                    Step::Assistant {
                        text,
                        thinking,
                        tool,
                    } => {
                        let mut m = Message::new(Role::Assistant);
                        m.model = Some("claude-sonnet-4-5".into());
                        m.provider = Some("anthropic".into());
                        if let Some(t) = thinking {
                            m.content.push(Block::thinking(t, None));
                        }
                        m.content.push(Block::text(text));
                        let call = tool.map(|(name, arg)| {
                            let id = format!("call_{}", s.entries.len());
                            m.content.push(Block::tool_call(
                                Some(id.clone()),
                                name.clone(),
                                serde_json::json!({ "arg": arg }),
                            ));
                            (id, name, arg)
                        });
                        push(&mut s, &mut parent, EntryKind::Message(m));
                        if let Some((id, name, arg)) = call {
                            let mut r = Message::text(Role::Tool, format!("output of {arg}"));
                            r.tool_call_id = Some(id);
                            r.tool_name = Some(name);
                            r.is_error = Some(false);
                            push(&mut s, &mut parent, EntryKind::Message(r));
                        }
                    }
                }
            }
            s
        },
    )
}

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// The user and assistant texts of the active branch, in order.
fn said(s: &Session) -> Vec<(String, String)> {
    s.active_branch()
        .into_iter()
        .filter_map(Entry::message)
        .filter(|m| matches!(m.role, Role::User | Role::Assistant) && m.injected.is_none())
        .flat_map(|m| {
            m.content.iter().filter_map(move |b| match &b.kind {
                BlockKind::Text { text } if !text.trim().is_empty() => {
                    Some((m.role.to_string(), text.trim().to_string()))
                }
                _ => None,
            })
        })
        .collect()
}

/// The names of the tool calls on the active branch, in order.
fn tool_calls(s: &Session) -> Vec<String> {
    s.active_branch()
        .into_iter()
        .filter_map(Entry::message)
        .flat_map(|m| {
            m.tool_calls()
                .map(|(_, name, _)| name.to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Joins consecutive texts of one role with a blank line.
fn merged(texts: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (role, text) in texts {
        match out.last_mut() {
            Some((r, t)) if *r == role => {
                t.push_str("\n\n");
                t.push_str(&text);
            }
            _ => out.push((role, text)),
        }
    }
    out
}

fn write_read(
    format: &dyn Format,
    s: &Session,
) -> Result<(Session, agentlog_formats::Fidelity), String> {
    let (written, fidelity) = format.write_session(s).map_err(|e| format!("write: {e}"))?;
    let (read, out) = match written {
        agentlog_formats::Written::File(out) => {
            let path = Path::new("converted").with_extension(format.extension());
            let read = format
                .read_bytes(&path, &out)
                .map_err(|e| format!("read back: {e}\n{}", String::from_utf8_lossy(&out)))?;
            (read, out)
        }
        // A folder is read back from the disk.
        folder => {
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let path = dir.path().join("converted");
            folder.write_plain(&path).map_err(|e| e.to_string())?;
            let all: Vec<u8> = folder
                .files()
                .iter()
                .flat_map(|(_, b)| b.to_vec())
                .collect();
            let read = format
                .read_path(&path)
                .map_err(|e| format!("read back: {e}\n{}", String::from_utf8_lossy(&all)))?;
            (read, all)
        }
    };
    let errors: Vec<String> = read
        .diagnostics
        .iter()
        .filter(|d| d.severity == agentlog_formats::Severity::Error)
        .map(|d| d.to_string())
        .collect();
    if !errors.is_empty() {
        return Err(format!(
            "read back with errors: {errors:?}\n{}",
            String::from_utf8_lossy(&out)
        ));
    }
    Ok((read.session, fidelity))
}

#[test]
fn random_sessions_survive_the_json_format_exactly() {
    let json = registry::by_name("json").unwrap();
    TestRunner::new(config())
        .run(&session(), |s| {
            let (back, fidelity) = write_read(json, &s).map_err(TestCaseError::fail)?;
            prop_assert!(fidelity.is_lossless());
            prop_assert_eq!(back, s);
            Ok(())
        })
        .unwrap();
}

#[test]
fn random_trees_survive_pi_with_their_shape() {
    let pi = registry::by_name("pi").unwrap();
    TestRunner::new(config())
        .run(&session(), |s| {
            let (back, _) = write_read(pi, &s).map_err(TestCaseError::fail)?;
            let shape = |s: &Session| -> Vec<(String, Option<String>)> {
                s.entries
                    .iter()
                    .map(|e| (e.id.clone(), e.parent_id.clone()))
                    .collect()
            };
            prop_assert_eq!(shape(&back), shape(&s));
            prop_assert_eq!(back.leaf_id.clone(), s.leaf_id.clone());
            prop_assert_eq!(said(&back), said(&s));
            // And pi's own round-trip of what it wrote is exact.
            let (again, fidelity) = write_read(pi, &back).map_err(TestCaseError::fail)?;
            prop_assert!(fidelity.is_lossless(), "{}", fidelity);
            prop_assert_eq!(again, back);
            Ok(())
        })
        .unwrap();
}

#[test]
fn every_writable_format_keeps_the_conversation_of_the_active_branch() {
    for format in registry::all().iter().filter(|f| f.can_write()) {
        let result = TestRunner::new(config()).run(&session(), |s| {
            let (back, fidelity) = write_read(*format, &s).map_err(TestCaseError::fail)?;
            // Formats that allow one message per turn merge consecutive
            // messages of one role; the words must all be there, in order.
            let (want, got) = (merged(said(&s)), merged(said(&back)));
            prop_assert_eq!(
                &got,
                &want,
                "{} lost or changed text; its report: {}",
                format.name(),
                fidelity
            );
            // Tool calls survive, or the report says they did not.
            let (calls, back_calls) = (tool_calls(&s), tool_calls(&back));
            if calls != back_calls {
                prop_assert!(
                    fidelity.losses.iter().any(|l| l.what.contains("tool")),
                    "{} changed the tool calls {:?} -> {:?} without saying so: {}",
                    format.name(),
                    calls,
                    back_calls,
                    fidelity
                );
            }
            Ok(())
        });
        assert!(result.is_ok(), "{}: {result:?}", format.name());
    }
}
