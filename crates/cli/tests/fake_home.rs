#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `agentlog ls`, `show <id prefix>` and `resume` against a fake HOME laid
//! out like a real machine with every agent's sessions in their usual
//! places, the binary run with an empty environment apart from HOME.
//!
//! Formats whose reader is still missing are skipped where noted: an agent
//! is expected in the listing when its reader reads the sample file.

use agentlog_formats::discover::DiscoverEnv;
use agentlog_formats::{registry, Format};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

const CURSOR_CWD: &str = "/home/me/proj";
const CURSOR_STORE_ID: &str = "a1b2c3d4-e5f6-7890-abcd-ef1234567890";
const CURSOR_TRANSCRIPT_ID: &str = "5d0c2f1e-7b7a-4c41-9d3e-0e6f1a2b3c4d";

/// One sample session: the format, the fixture, and where it goes under
/// HOME.
struct Place {
    format: &'static str,
    fixture: &'static str,
    dest: String,
}

fn md5_hex(s: &str) -> String {
    use md5::Digest as _;
    hex::encode(md5::Md5::digest(s.as_bytes()))
}

fn places() -> Vec<Place> {
    let p = |format, fixture, dest: &str| Place {
        format,
        fixture,
        dest: dest.to_string(),
    };
    vec![
        p(
            "claude",
            "native/claude/ccv-sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
            ".claude/projects/-path-to-Demo/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
        ),
        p(
            "codex",
            "native/codex/vct-test_conversation_oai.jsonl",
            ".codex/sessions/2025/09/19/rollout-2025-09-19T09-02-12-01996135-afde-7911-97f0-d863511eca56.jsonl",
        ),
        p(
            "gemini",
            "native/gemini/vct-gemini.jsonl",
            ".gemini/tmp/9da8b3dfb8655182ac1f0e66601c367e34f8d18447a29759eeba4d7e45dc60ea/chats/session-2026-04-23T12-52-0ab84937.jsonl",
        ),
        p(
            "gemini",
            "native/gemini/vct-test_conversation_gemini.2026-03.json",
            ".gemini/tmp/ab14fe397f91d5f283525b3178d2314aef552f761131c42172a21b7bf735e73d/chats/session-2026-03-27T10-19-8a20078e.json",
        ),
        p(
            "cursor",
            "native/cursor/as-test-store.db",
            &format!(".cursor/chats/{}/{CURSOR_STORE_ID}/store.db", md5_hex(CURSOR_CWD)),
        ),
        p(
            "cursor",
            "native/cursor/as-test-session.jsonl",
            &format!(
                ".cursor/projects/home-me-proj/agent-transcripts/{CURSOR_TRANSCRIPT_ID}/{CURSOR_TRANSCRIPT_ID}.jsonl"
            ),
        ),
        p(
            "pi",
            "native/secondary/pi/as-stage0-small.jsonl",
            ".pi/agent/sessions/--tmp-as-agent-fixture-project--/2026-05-12T01-02-27-657Z_019e19b4-eb48-746a-aa6b-8dfcfa37954b.jsonl",
        ),
        p(
            "codelia",
            "seeds/codelia/session-store-spec-example.jsonl",
            ".codelia/sessions/2026/02/03/8f1d7b7a-7e8f-4e0f-9a7c-1c5d0e6b2b7a.jsonl",
        ),
        p(
            "jido",
            "seeds/jido_code/persistence-format-example.json",
            ".jido_code/sessions/550e8400-e29b-41d4-a716-446655440000.json",
        ),
        p(
            "acpx",
            "seeds/acpx/record.json",
            ".acpx/sessions/fb5d3eb7-4a1c-406b-a3dd-67551aa67794.json",
        ),
    ]
}

struct Home {
    dir: tempfile::TempDir,
}

struct Out {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Home {
    /// A HOME with every sample in place, and the meta.json Cursor writes
    /// beside the transcript's chat store.
    fn new() -> Home {
        let home = Home {
            dir: tempfile::tempdir().unwrap(),
        };
        for p in places() {
            home.copy(p.fixture, &p.dest);
        }
        home.copy(
            "seeds/acpx/events.ndjson",
            ".acpx/sessions/fb5d3eb7-4a1c-406b-a3dd-67551aa67794.events.ndjson",
        );
        home.write(
            &format!(
                ".cursor/chats/{}/{CURSOR_TRANSCRIPT_ID}/meta.json",
                md5_hex(CURSOR_CWD)
            ),
            &serde_json::json!({
                "title": "Look around the repo",
                "cwd": CURSOR_CWD,
                "createdAtMs": 1_780_000_000_000_i64,
                "lastUsedModel": "claude-4-sonnet",
                "blobEncryptionKey": "do-not-leak-this-key",
            })
            .to_string(),
        );
        home
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn copy(&self, fixture: &str, dest: &str) -> PathBuf {
        let to = self.path().join(dest);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(Path::new(FIXTURES).join(fixture), &to).unwrap();
        to
    }

    fn write(&self, dest: &str, text: &str) -> PathBuf {
        let to = self.path().join(dest);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(&to, text).unwrap();
        to
    }

    fn run_with(&self, args: &[&str], vars: &[(&str, &Path)]) -> Out {
        let mut c = Command::new(env!("CARGO_BIN_EXE_agentlog"));
        c.args(args)
            .env_clear()
            .env("HOME", self.path())
            .current_dir(self.path());
        for (k, v) in vars {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        Out {
            ok: o.status.success(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    fn run(&self, args: &[&str]) -> Out {
        self.run_with(args, &[])
    }

    fn ls_json(&self, args: &[&str]) -> Vec<Value> {
        let mut all = vec!["ls", "--json"];
        all.extend_from_slice(args);
        let out = self.run(&all);
        assert!(out.ok, "ls failed: {}", out.stderr);
        match serde_json::from_str(&out.stdout).unwrap() {
            Value::Array(rows) => rows,
            other => panic!("ls --json printed {other}"),
        }
    }
}

/// True when the format's reader reads the sample (readers still being
/// written report "does not support reading").
fn reads(place: &Place) -> bool {
    let f = registry::by_name(place.format).unwrap();
    f.read_path(&Path::new(FIXTURES).join(place.fixture))
        .is_ok()
}

fn row_paths(rows: &[Value]) -> BTreeSet<String> {
    rows.iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn ls_lists_the_sessions_of_every_agent_with_a_reader() {
    let home = Home::new();
    let rows = home.ls_json(&[]);
    let listed = row_paths(&rows);
    let mut expected_agents = BTreeSet::new();
    for p in places().iter().filter(|p| reads(p)) {
        let path = home.path().join(&p.dest);
        let path = path.to_string_lossy();
        assert!(
            listed.contains(&*path),
            "{} session {} is not listed; ls gave {listed:#?}",
            p.format,
            p.dest
        );
        expected_agents.insert(
            registry::by_name(p.format)
                .unwrap()
                .agent()
                .as_str()
                .to_string(),
        );
    }
    let agents: BTreeSet<String> = rows
        .iter()
        .map(|r| r["agent"].as_str().unwrap().to_string())
        .collect();
    assert!(
        agents.is_superset(&expected_agents),
        "{agents:?} vs {expected_agents:?}"
    );
    assert!(agents.contains("cursor"));
    // Newest first.
    let started: Vec<&str> = rows.iter().filter_map(|r| r["started"].as_str()).collect();
    let mut sorted = started.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(started, sorted);
    // The Cursor transcript carries its chat directory's metadata, not its key.
    let t = rows
        .iter()
        .find(|r| r["id"] == CURSOR_TRANSCRIPT_ID)
        .unwrap();
    assert_eq!(t["title"], "Look around the repo");
    assert_eq!(t["project"], CURSOR_CWD);
    assert_eq!(t["messages"], 6);
    assert_eq!(t["started"], "2026-05-28T20:26:40.000Z");
    let s = rows.iter().find(|r| r["id"] == CURSOR_STORE_ID).unwrap();
    assert_eq!(s["title"], "Test Session");
    assert!(!serde_json::to_string(&rows)
        .unwrap()
        .contains("do-not-leak-this-key"));
}

#[test]
fn ls_filters_by_agent_project_time_and_count() {
    let home = Home::new();
    let all = home.ls_json(&[]);
    assert!(all.len() >= 2);

    let cursor = home.ls_json(&["--agent", "cursor"]);
    assert_eq!(cursor.len(), 2);
    assert!(cursor.iter().all(|r| r["agent"] == "cursor"));

    let proj = home.ls_json(&["--project", "me/proj"]);
    let want: BTreeSet<String> = row_paths(
        &all.iter()
            .filter(|r| r["project"].as_str().is_some_and(|p| p.contains("me/proj")))
            .cloned()
            .collect::<Vec<_>>(),
    );
    assert_eq!(row_paths(&proj), want);
    assert!(!want.is_empty());

    let since = "2026-04-10";
    let recent = home.ls_json(&["--since", since]);
    let want: BTreeSet<String> = row_paths(
        &all.iter()
            .filter(|r| r["started"].as_str().is_some_and(|s| s >= "2026-04-10"))
            .cloned()
            .collect::<Vec<_>>(),
    );
    assert_eq!(row_paths(&recent), want);
    assert!(
        row_paths(&recent).len() < all.len(),
        "the store started 2026-04-07 and must be filtered out"
    );

    let one = home.ls_json(&["--limit", "1"]);
    assert_eq!(one.len(), 1);
    assert_eq!(one[0]["path"], all[0]["path"]);

    let bad = home.run(&["ls", "--agent", "nope"]);
    assert!(!bad.ok);
    assert!(
        bad.stderr.contains("unknown agent \"nope\""),
        "{}",
        bad.stderr
    );
    let bad = home.run(&["ls", "--since", "whenever"]);
    assert!(!bad.ok && bad.stderr.contains("--since"), "{}", bad.stderr);
}

#[test]
fn ls_from_the_index_catalog_lists_the_same_sessions() {
    let home = Home::new();
    let direct = home.ls_json(&[]);
    let cached = home.ls_json(&["--cached"]);
    assert!(home
        .path()
        .join(".local/share/agentlog/index.sqlite")
        .is_file());
    assert_eq!(row_paths(&cached), row_paths(&direct));
    for r in &direct {
        let c = cached.iter().find(|c| c["path"] == r["path"]).unwrap();
        for key in ["agent", "id", "project", "messages", "tokens"] {
            assert_eq!(c[key], r[key], "{key} of {}", r["path"]);
        }
    }
    // The whole catalog is read in one go; a cut listing reads the rows it
    // keeps: the same rows either way, every field.
    let cut = home.ls_json(&["--cached", "--limit", "100000"]);
    assert_eq!(cut, cached);
    // A shorter cut is read in the listing's order from the catalog's
    // index of it: the first rows of the whole listing, every field, and
    // the count of all of them said.
    for n in [1, 2, 5, cached.len() - 1] {
        let n = n.to_string();
        let out = home.run(&["ls", "--cached", "--json", "--limit", &n]);
        assert!(out.ok, "{}", out.stderr);
        let cut: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(cut[..], cached[..cut.len()], "--limit {n}");
        assert_eq!(cut.len().to_string(), n);
        let text = home.run(&["ls", "--cached", "--limit", &n]);
        assert!(
            text.stderr
                .contains(&format!("showing {n} of {} sessions", cached.len())),
            "{}",
            text.stderr
        );
    }
    // Every agent with two sessions or more.
    let mut per_agent = std::collections::BTreeMap::<&str, usize>::new();
    for r in &cached {
        *per_agent.entry(r["agent"].as_str().unwrap()).or_default() += 1;
    }
    per_agent.retain(|_, n| *n >= 2);
    assert!(per_agent.len() >= 2, "{per_agent:?}");
    for agent in per_agent.keys().copied() {
        let of_agent = home.ls_json(&["--cached", "--agent", agent]);
        let cut = home.ls_json(&["--cached", "--agent", agent, "--limit", "2"]);
        assert_eq!(cut[..], of_agent[..2], "{agent}");
    }
    let cursor = home.ls_json(&[
        "--cached",
        "--agent",
        "cursor",
        "--project",
        "me/proj",
        "--limit",
        "1",
    ]);
    assert_eq!(cursor.len(), 1);
    assert_eq!(cursor[0]["id"], CURSOR_TRANSCRIPT_ID);
    // Filtered in the index as in the files: by project, by start, both,
    // cut; and a filter that empties the list is named the same way.
    let started: Vec<&str> = cached
        .iter()
        .filter_map(|r| r["started"].as_str())
        .collect();
    let middle = started[started.len() / 2];
    for flags in [
        vec!["--project", "proj"],
        vec!["--since", middle],
        vec!["--project", "/", "--since", middle],
        vec!["--project", "/", "--since", middle, "--limit", "1"],
        vec!["--agent", "codex,claude", "--project", "/"],
    ] {
        let from_files = home.ls_json(&[&["--files"], &flags[..]].concat());
        let from_index = home.ls_json(&[&["--cached"], &flags[..]].concat());
        assert!(!from_index.is_empty(), "{flags:?}");
        // The fields both sources know alike (a file's last change is its
        // modification time when the session does not say).
        let fields = |rows: &[Value]| -> Vec<Vec<Value>> {
            rows.iter()
                .map(|r| {
                    [
                        "path", "agent", "id", "project", "title", "started", "messages", "tokens",
                    ]
                    .map(|k| r[k].clone())
                    .to_vec()
                })
                .collect()
        };
        assert_eq!(fields(&from_index), fields(&from_files), "{flags:?}");
    }
    for flags in [
        vec!["--project", "no-such-project"],
        vec!["--since", "2100-01-01"],
    ] {
        let from_files = home.run(&[&["ls", "--files"], &flags[..]].concat());
        let from_index = home.run(&[&["ls", "--cached"], &flags[..]].concat());
        assert!(
            from_index.stdout.contains(" found, none "),
            "{flags:?}: {}",
            from_index.stdout
        );
        assert_eq!(from_index.stdout, from_files.stdout, "{flags:?}");
    }
    // Emptied by the start after the project: the sessions of the project
    // counted (the files' listing counts the files it did not read too).
    let in_project = cached
        .iter()
        .filter(|r| r["project"].as_str().is_some_and(|p| p.contains('/')))
        .count();
    let out = home.run(&["ls", "--cached", "--project", "/", "--since", "2100-01-01"]);
    assert!(
        out.stdout.starts_with(&format!(
            "{in_project} sessions found in a project containing \"/\", none started since"
        )),
        "{}",
        out.stdout
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_command_widens_the_pipe_it_writes_to() {
    let home = Home::new();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentlog"))
        .args(["ls", "--json"])
        .env_clear()
        .env("HOME", home.path())
        .current_dir(home.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(text.starts_with('['), "{text}");
    let size = rustix::pipe::fcntl_getpipe_size(&stdout).unwrap();
    assert!(size > 64 * 1024, "{size}");
}

#[test]
fn ls_prints_a_table() {
    let home = Home::new();
    let out = home.run(&["ls", "--agent", "cursor"]);
    assert!(out.ok, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert!(lines[0].starts_with("STARTED"));
    assert!(out.stdout.contains("Look around the repo"));
    assert!(out.stdout.contains("Test Session"));
    assert!(out.stdout.contains("5d0c2f1e"));
}

#[test]
fn config_file_and_root_flags_choose_where_to_look() {
    let home = Home::new();
    let elsewhere = home.path().join("elsewhere/.cursor");
    std::fs::create_dir_all(elsewhere.join("projects/x/agent-transcripts")).unwrap();
    std::fs::copy(
        Path::new(FIXTURES).join("native/cursor/as-stage0/small.jsonl"),
        elsewhere.join("projects/x/agent-transcripts/moved.jsonl"),
    )
    .unwrap();
    let config = home.write(
        "cfg/agentlog.toml",
        &format!(
            "exclude = [\"claude\"]\n[roots]\ncursor = [\"{}\"]\n",
            elsewhere.display()
        ),
    );
    let out = home.run_with(&["ls", "--json"], &[("AGENTLOG_CONFIG", &config)]);
    assert!(out.ok, "{}", out.stderr);
    let rows: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let cursor_ids: Vec<&str> = rows
        .iter()
        .filter(|r| r["agent"] == "cursor")
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(cursor_ids, ["moved"]);
    assert!(rows.iter().all(|r| r["agent"] != "claude"));

    // The default config file, overridden for cursor by --root.
    home.write(".config/agentlog/config.toml", "exclude = [\"claude\"]\n");
    let root = format!("cursor={}", elsewhere.display());
    let rows = home.ls_json(&["--root", &root, "--agent", "cursor,claude"]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], "moved");

    home.write(".config/agentlog/config.toml", "exclude = \"claude\n");
    let out = home.run(&["ls"]);
    assert!(!out.ok);
    assert!(
        out.stderr.contains(".config/agentlog/config.toml:1"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_unlistable_directory_is_a_warning_not_a_failure() {
    let home = Home::new();
    std::fs::remove_dir_all(home.path().join(".cursor/chats")).unwrap();
    home.write(".cursor/chats", "not a directory");
    let out = home.run(&["ls", "--json", "--agent", "cursor"]);
    assert!(out.ok, "{}", out.stderr);
    assert!(
        out.stderr.contains(".cursor/chats") && out.stderr.contains("unreadable-dir"),
        "{}",
        out.stderr
    );
    let rows: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(rows.len(), 1);
}

#[test]
fn show_resolves_id_prefixes_for_every_agent() {
    let home = Home::new();
    let out = home.run(&["show", "5d0c2f"]);
    assert!(out.ok, "{}", out.stderr);
    assert!(out.stdout.contains("run ls command"), "{}", out.stdout);
    assert!(!out.stdout.contains("<user_query>"));

    // Every listed session can be shown by a prefix of its id.
    for row in home.ls_json(&[]) {
        let id = row["id"].as_str().unwrap();
        let prefix: String = id.chars().take(12).collect();
        let out = home.run(&["show", "--json", &prefix]);
        assert!(out.ok, "show {prefix} ({}): {}", row["path"], out.stderr);
        let shown: Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(shown["meta"]["id"], row["id"], "show {prefix}");
    }

    let out = home.run(&["show", "ffffffffffff"]);
    assert!(!out.ok);
    assert!(
        out.stderr.contains("ffffffffffff: no such file"),
        "{}",
        out.stderr
    );
}

#[test]
fn ids_only_inside_the_file_are_found_too() {
    let home = Home::new();
    // A chat directory whose name is not the session id recorded inside.
    let from = home.path().join(&places()[4].dest);
    let to = from.parent().unwrap().with_file_name("renamed-chat");
    std::fs::rename(from.parent().unwrap(), &to).unwrap();
    let out = home.run(&["show", "--json", "a1b2c3d4-e5f6"]);
    assert!(out.ok, "{}", out.stderr);
    let shown: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(shown["meta"]["id"], CURSOR_STORE_ID);
    assert_eq!(shown["meta"]["title"], "Test Session");
}

#[test]
fn an_ambiguous_prefix_lists_the_candidates() {
    let home = Home::new();
    let t = ".cursor/projects/p/agent-transcripts";
    home.copy(
        "native/cursor/as-stage0/small.jsonl",
        &format!("{t}/dup0aaaa-1.jsonl"),
    );
    home.copy(
        "native/cursor/as-stage0/large.jsonl",
        &format!("{t}/dup0bbbb-2.jsonl"),
    );
    let out = home.run(&["show", "dup0"]);
    assert!(!out.ok);
    assert!(out.stderr.contains("ambiguous"), "{}", out.stderr);
    assert!(
        out.stderr.contains("dup0aaaa-1") && out.stderr.contains("dup0bbbb-2"),
        "{}",
        out.stderr
    );
    let out = home.run(&["show", "dup0b"]);
    assert!(out.ok, "{}", out.stderr);
    assert!(out.stdout.contains("What files are here?"));
}

#[test]
fn resume_writes_the_native_file_where_the_agent_looks() {
    let home = Home::new();
    let source = home.path().join(&places()[5].dest);
    let session = registry::by_name("cursor")
        .unwrap()
        .read_path(&source)
        .unwrap()
        .session;
    let env = DiscoverEnv::with_home(home.path());
    // By id prefix, before any copy with the same id exists.
    let by_id = home.run(&["resume", "5d0c2f1e", "--in", "json", "--dry-run"]);
    assert!(
        !by_id.ok && by_id.stderr.contains("does not support resuming"),
        "{}",
        by_id.stderr
    );
    // Once resumed, the id names two sessions (the source and the copy), so
    // the loop names the source by path.
    let src = source.to_string_lossy().into_owned();
    let mut written = 0;
    for target in ["claude", "codex", "gemini", "pi"] {
        let f: &dyn Format = registry::by_name(target).unwrap();
        let planned = f
            .can_write()
            .then(|| f.resume_plan(&session, &env).ok())
            .flatten();
        let dry = home.run(&["resume", &src, "--in", target, "--dry-run", "--json"]);
        let Some(_) = planned else {
            assert!(
                !dry.ok,
                "resume --in {target} should fail while {target} cannot write or plan"
            );
            assert!(
                dry.stderr.contains("cannot write") || dry.stderr.contains("does not support"),
                "{target}: {}",
                dry.stderr
            );
            continue;
        };
        assert!(dry.ok, "{target}: {}", dry.stderr);
        written += 1;
        let plan: Value = serde_json::from_str(&dry.stdout).unwrap();
        assert_eq!(plan["written"], false);
        assert!(
            !Path::new(plan["path"].as_str().unwrap()).exists(),
            "{target}: dry run wrote"
        );

        let out = home.run(&["resume", &src, "--in", target, "--json"]);
        assert!(out.ok, "{target}: {}", out.stderr);
        let done: Value = serde_json::from_str(&out.stdout).unwrap();
        let path = PathBuf::from(done["path"].as_str().unwrap());
        assert!(
            path.starts_with(home.path()),
            "{target}: {path:?} is outside HOME"
        );
        assert!(path.is_file(), "{target}: {path:?} was not written");
        let command = done["command"].as_str().unwrap();
        assert!(!command.is_empty());
        assert!(
            command.matches("cd ").count() <= 1,
            "{target}: more than one cd in {command:?}"
        );
        if done["cwd"].is_string() {
            assert!(command.starts_with("cd "), "{target}: {command:?}");
        }
        assert_eq!(registry::detect(&path).unwrap().name(), target);
        let back = f.read_path(&path).unwrap().session;
        assert!(
            back.message_count() > 0,
            "{target}: the written session has no messages"
        );

        // The target's own discovery finds the written session.
        assert!(
            f.discover(&env).contains(&path),
            "{target} does not discover {path:?}"
        );

        // Text output names the file and the command.
        let again = home.run(&["resume", &src, "--in", target, "--dry-run"]);
        if again.ok {
            assert!(again.stdout.contains("continue with:"), "{}", again.stdout);
        } else {
            // Plans with fixed paths refuse the second time.
            assert!(again.stderr.contains("already exists"), "{}", again.stderr);
        }
    }
    assert!(written > 0, "no target agent can resume yet");
}

#[test]
fn resume_takes_the_working_directory_from_cwd_when_the_session_has_none() {
    let home = Home::new();
    let store = home.path().join(&places()[4].dest);
    let session = registry::by_name("cursor")
        .unwrap()
        .read_path(&store)
        .unwrap()
        .session;
    assert!(session.meta.cwd.is_none());
    let dir = home.path().join("work/other");
    let mut with_cwd = session.clone();
    with_cwd.meta.cwd = Some(dir.to_string_lossy().into_owned());
    let env = DiscoverEnv::with_home(home.path());
    let mut tried = 0;
    for target in ["claude", "codex", "gemini", "pi"] {
        let f = registry::by_name(target).unwrap();
        if !f.can_write() || f.resume_plan(&with_cwd, &env).is_err() {
            continue;
        }
        tried += 1;
        let out = home.run(&[
            "resume",
            &store.to_string_lossy(),
            "--in",
            target,
            "--cwd",
            &dir.to_string_lossy(),
            "--dry-run",
            "--json",
        ]);
        assert!(out.ok, "{target}: {}", out.stderr);
        let plan: Value = serde_json::from_str(&out.stdout).unwrap();
        let shown = format!("{} {}", plan["cwd"], plan["command"]);
        assert!(shown.contains("work/other"), "{target}: {shown}");
    }
    assert!(tried > 0, "no target agent can resume yet");
}

#[test]
fn resume_into_an_agent_that_cannot_write_is_a_clear_error() {
    let home = Home::new();
    let out = home.run(&["resume", "5d0c2f1e", "--in", "cursor"]);
    assert!(!out.ok);
    assert!(out.stderr.contains("cursor"), "{}", out.stderr);
    let out = home.run(&["resume", "5d0c2f1e", "--in", "nope"]);
    assert!(
        !out.ok && out.stderr.contains("unknown format"),
        "{}",
        out.stderr
    );
}
