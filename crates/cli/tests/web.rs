//! `agentlog serve` over HTTP and `agentlog export --to html`, without a
//! browser: redaction of planted secrets (on by default for HTML export,
//! with --redact on serve), the token, the security headers, and refusal of
//! other host names.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use agentlog_formats::discover::DiscoverEnv;
use agentlog_formats::registry;
use common::TestEnv;
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Stdio};

/// Writes the planted-secret session where pi keeps its sessions.
fn plant(env: &TestEnv) -> (PathBuf, Vec<String>) {
    let session = agentlog_bench::secrets::planted_session(3);
    let secrets: Vec<String> = agentlog_bench::secrets::planted(3)
        .into_iter()
        .map(|p| p.secret)
        .collect();
    (place_pi(env, &session), secrets)
}

/// Writes `session` where pi keeps its sessions; returns the file.
fn place_pi(env: &TestEnv, session: &agentlog_model::Session) -> PathBuf {
    let pi = registry::by_name("pi").unwrap();
    let plan = pi
        .resume_plan(session, &DiscoverEnv::with_home(env.home()))
        .unwrap();
    std::fs::create_dir_all(plan.path.parent().unwrap()).unwrap();
    let mut bytes = Vec::new();
    pi.write(session, &mut bytes).unwrap();
    std::fs::write(&plan.path, bytes).unwrap();
    plan.path
}

/// Writes, where pi keeps its sessions, a pi session `id` in `cwd` of one
/// prompt, `text`.
fn place_one_prompt(env: &TestEnv, id: &str, cwd: &str, text: &str) -> PathBuf {
    let mut meta = agentlog_model::SessionMeta::new(id, agentlog_model::Agent::Pi);
    meta.cwd = Some(cwd.into());
    let mut session = agentlog_model::Session::new(meta);
    session.push(agentlog_model::Entry::new(
        "p0",
        None,
        agentlog_model::EntryKind::Message(agentlog_model::Message::text(
            agentlog_model::Role::User,
            text,
        )),
    ));
    place_pi(env, &session)
}

fn leaked<'a>(text: &str, secrets: &'a [String]) -> Vec<&'a str> {
    secrets
        .iter()
        .filter(|s| text.contains(s.as_str()))
        .map(String::as_str)
        .collect()
}

#[test]
fn html_export_redacts_by_default() {
    let env = TestEnv::new();
    let (path, secrets) = plant(&env);
    let out = env.home().join("out.html");
    let r = env.run(&[
        "export",
        path.to_str().unwrap(),
        "--to",
        "html",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stderr.contains("redacted"), "{}", r.stderr);
    let html = std::fs::read_to_string(&out).unwrap();
    assert_eq!(leaked(&html, &secrets), Vec::<&str>::new());
    assert!(html.contains("[REDACTED:"));

    let raw = env.home().join("raw.html");
    let r = env.run(&[
        "export",
        path.to_str().unwrap(),
        "--to",
        "html",
        "--no-redact",
        "-o",
        raw.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&raw).unwrap();
    assert!(
        leaked(&html, &secrets).len() > secrets.len() / 2,
        "--no-redact keeps the secrets"
    );

    // Several sessions: the files and the index page.
    let dir = env.home().join("all");
    let r = env.run(&[
        "export",
        "--all",
        "--to",
        "html",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    for f in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        assert_eq!(leaked(&text, &secrets), Vec::<&str>::new());
    }
    // The report names the session, its page, each kind and where; never
    // a secret.
    assert_eq!(
        leaked(&r.stderr, &secrets),
        Vec::<&str>::new(),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("planted-0001.jsonl (pi-"), "{}", r.stderr);
    for kind in ["github-pat", "aws-access-key-id", "jwt"] {
        assert!(
            r.stderr.contains(&format!("  - {kind} (")),
            "{kind}: {}",
            r.stderr
        );
    }
}

#[test]
fn html_export_never_overwrites_foreign_files() {
    let env = TestEnv::new();
    let (path, _) = plant(&env);
    let mine = env.write("notes.html", b"my own notes");
    let r = env.run(&[
        "export",
        path.to_str().unwrap(),
        "--to",
        "html",
        "-o",
        mine.to_str().unwrap(),
    ]);
    assert_ne!(r.status, 0);
    assert!(r.stderr.contains("not overwriting"), "{}", r.stderr);
    assert_eq!(std::fs::read(&mine).unwrap(), b"my own notes");
}

struct Server {
    child: Child,
    port: u16,
    first: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(env: &TestEnv, extra: &[&str]) -> Server {
    start_with(env, extra, &[])
}

/// [`start`] with environment variables `vars`.
fn start_with(env: &TestEnv, extra: &[&str], vars: &[(&str, &str)]) -> Server {
    let mut args = vec!["serve", "--port", "0"];
    if !extra.contains(&"--refresh") {
        args.extend_from_slice(&["--refresh", "0"]);
    }
    args.extend_from_slice(extra);
    let mut child = env
        .command(&args)
        .envs(vars.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // Everything up to the last line of the banner.
    let mut first = String::new();
    for l in lines.by_ref().map_while(Result::ok) {
        first.push_str(&l);
        first.push('\n');
        if l.contains("Ctrl-C") {
            break;
        }
    }
    let port = first
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {first:?}"));
    Server { child, port, first }
}

/// Returns the status line, headers and body of a GET.
fn get(port: u16, path: &str, host: &str, cookie: Option<&str>) -> (String, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let cookie = cookie
        .map(|c| format!("Cookie: {c}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\n{cookie}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    (head.to_string(), body.to_string())
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'/' || b == b'.' || b == b'-' || b == b'_' {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[test]
fn serve_redacts_when_asked_and_sends_a_strict_policy() {
    let env = TestEnv::new();
    let (path, secrets) = plant(&env);
    let page = format!("/session?p={}", enc(path.to_str().unwrap()));

    let plain = start(&env, &[]);
    let host = format!("127.0.0.1:{}", plain.port);
    let (head, body) = get(plain.port, &page, &host, None);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        !leaked(&body, &secrets).is_empty(),
        "without --redact the page shows the session as it is"
    );
    let csp = head
        .lines()
        .find(|l| {
            l.to_ascii_lowercase()
                .starts_with("content-security-policy")
        })
        .unwrap_or("");
    assert!(
        csp.contains("script-src 'self'") && csp.contains("default-src 'none'"),
        "{head}"
    );
    assert!(!csp.contains("unsafe-inline"), "{head}");
    // Another host name (DNS rebinding) is refused.
    let (head, _) = get(plain.port, "/", "evil.example:80", None);
    assert!(head.starts_with("HTTP/1.1 421"), "{head}");
    // Files the index does not know are not served.
    let (head, _) = get(plain.port, "/session?p=/etc/passwd", &host, None);
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    drop(plain);

    let red = start(&env, &["--redact"]);
    assert!(red.first.contains("redacted"), "{}", red.first);
    let host = format!("127.0.0.1:{}", red.port);
    let (head, body) = get(red.port, &page, &host, None);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(leaked(&body, &secrets), Vec::<&str>::new());
    assert!(body.contains("[REDACTED:"));
    // Search snippets, the list and the stats are redacted too.
    for p in ["/search?q=token", "/search?q=key", "/", "/stats"] {
        let (head, body) = get(red.port, p, &host, None);
        assert!(head.starts_with("HTTP/1.1 200"), "{p}: {head}");
        assert_eq!(leaked(&body, &secrets), Vec::<&str>::new(), "{p}");
    }
}

#[test]
fn every_answer_of_serve_carries_the_security_headers() {
    let env = TestEnv::new();
    plant(&env);
    let server = start(&env, &[]);
    let host = format!("127.0.0.1:{}", server.port);
    for (path, status) in [
        ("/", "200"),
        // The framework's own answers: an unknown route, a query it cannot
        // extract.
        ("/no/such/route", "404"),
        ("/session?from=not-a-number", "400"),
        ("/assets/app.css", "200"),
    ] {
        let (head, _) = get(server.port, path, &host, None);
        assert!(
            head.starts_with(&format!("HTTP/1.1 {status}")),
            "{path}: {head}"
        );
        let lower = head.to_ascii_lowercase();
        for wanted in [
            "content-security-policy: default-src 'none'",
            "x-content-type-options: nosniff",
            "x-frame-options: deny",
            "referrer-policy: no-referrer",
        ] {
            assert!(lower.contains(wanted), "{path}: no {wanted:?} in\n{head}");
        }
    }
}

#[cfg(unix)]
#[test]
fn serve_does_not_follow_a_session_path_swapped_for_a_link_after_indexing() {
    let env = TestEnv::new();
    let path = place_one_prompt(&env, "swap-1", "/work/a", "the indexed words");
    // A file outside every session folder, in a format serve reads.
    let outside = place_one_prompt(&env, "outside-1", "/work/b", "outside-secret-words");
    let kept = env.home().join("kept-outside.jsonl");
    std::fs::rename(&outside, &kept).unwrap();
    let server = start(&env, &[]);
    let host = format!("127.0.0.1:{}", server.port);
    let page = format!("/session?p={}", enc(path.to_str().unwrap()));
    let entries = format!("/entries?p={}", enc(path.to_str().unwrap()));
    let (head, body) = get(server.port, &page, &host, None);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(body.contains("the indexed words"));
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&kept, &path).unwrap();
    for p in [&page, &entries] {
        let (head, body) = get(server.port, p, &host, None);
        assert!(head.starts_with("HTTP/1.1 404"), "{p}: {head}\n{body}");
        assert!(
            !body.contains("outside-secret-words"),
            "{p} shows the link's target"
        );
        assert!(body.contains("symbolic link"), "{p}: {body}");
    }
}

#[test]
fn serve_shows_a_session_its_agent_deleted_from_the_archive_and_says_so() {
    let env = TestEnv::new();
    let path = place_one_prompt(&env, "gone-1", "/work/a", "the words of a deleted session");
    assert_eq!(env.run(&["index"]).status, 0);
    std::fs::remove_file(&path).unwrap();
    let server = start(&env, &[]);
    let host = format!("127.0.0.1:{}", server.port);
    let page = format!("/session?p={}", enc(path.to_str().unwrap()));
    let (head, body) = get(server.port, &page, &host, None);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    assert!(body.contains("the words of a deleted session"), "{body}");
    assert!(
        body.contains("agentlog&#39;s archive keeps it")
            || body.contains("agentlog's archive keeps it"),
        "{body}"
    );
    let (_, list) = get(server.port, "/", &host, None);
    assert!(
        list.contains("deleted by its agent, kept in the archive"),
        "{list}"
    );
}

#[test]
fn serve_with_a_token_refuses_requests_without_it() {
    let env = TestEnv::new();
    plant(&env);
    let token = "0123456789abcdef0123456789abcdef";
    let s = start(&env, &["--token", token]);
    assert!(s.first.contains(&format!("?token={token}")), "{}", s.first);
    let host = format!("127.0.0.1:{}", s.port);
    let (head, _) = get(s.port, "/", &host, None);
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    let (head, _) = get(
        s.port,
        "/?token=wrongwrongwrongwrongwrongwrong12",
        &host,
        None,
    );
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    let (head, _) = get(s.port, &format!("/?token={token}"), &host, None);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("set-cookie: agentlog_token="),
        "{head}"
    );
    let (head, _) = get(
        s.port,
        "/stats",
        &host,
        Some(&format!("agentlog_token={token}")),
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let r = env.run(&["serve", "--token", "short"]);
    assert_eq!(r.status, 1);
    assert!(r.stderr.contains("at least 16"), "{}", r.stderr);
}

/// Polls the search page until it lists a hit for `word` (true) or six
/// seconds pass (false): less than the refresher's full round, so what the
/// quick round misses fails the test.
fn found_by_search(port: u16, word: &str) -> bool {
    let host = format!("127.0.0.1:{port}");
    for _ in 0..60 {
        let (head, body) = get(port, &format!("/search?q={word}"), &host, None);
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        if body.contains("href=\"/session?p=") {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

#[test]
fn serve_sees_new_sessions_and_appends_while_it_runs() {
    let env = TestEnv::new();
    let (first, _) = plant(&env);
    let s = start(&env, &["--refresh", "1"]);
    let host = format!("127.0.0.1:{}", s.port);
    let (_, body) = get(s.port, "/search?q=orchardlantern", &host, None);
    assert!(!body.contains("href=\"/session?p="), "nothing to find yet");

    // A session in a folder discovery has not seen (a new project).
    place_one_prompt(
        &env,
        "0199bbbb-0000-7000-8000-000000000001",
        "/home/dev/src/brand-new",
        "please plant the orchardlantern",
    );
    assert!(
        found_by_search(s.port, "orchardlantern"),
        "a new session is found while serve runs"
    );

    // An append to a session written a moment ago (the quick round).
    let line = serde_json::json!({"type":"message","id":"zz-appended","parentId":null,"timestamp":"2026-05-01T11:00:00.000Z","message":{"role":"user","content":"and now the quincewharf","timestamp":1_777_633_200_000u64}});
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&first)
        .unwrap();
    writeln!(f, "{line}").unwrap();
    drop(f);
    assert!(
        found_by_search(s.port, "quincewharf"),
        "an append is found while serve runs"
    );
}

/// The session links of a page (`/session?p=…`), in order.
fn session_links(body: &str) -> Vec<String> {
    body.split("href=\"/session?p=")
        .skip(1)
        .filter_map(|r| r.split('"').next())
        .map(|l| l.split("&amp;").next().unwrap_or(l).to_string())
        .collect()
}

#[test]
fn serve_db_shows_the_team_database_as_serve_shows_this_machine() {
    use agentlog_postgres::throwaway::Throwaway;
    let Some(pg) = Throwaway::for_test("serve_db_shows_the_team_database") else {
        return;
    };
    let url = pg.database("served").unwrap();
    let env = TestEnv::new();
    agentlog_bench::gen::generate(env.home(), 1_000_000, 9).unwrap();
    let r = env.run(&["push", "--db", &url, "--no-redact"]);
    assert_eq!(r.status, 0, "{}", r.stderr);

    let local = start(&env, &[]);
    // The team server runs where no session file is: everything it shows
    // comes from the database.
    let elsewhere = TestEnv::new();
    let team = start(&elsewhere, &["--db", &url]);
    assert!(team.first.contains("team database"), "{}", team.first);
    assert!(!team.first.contains(pg.url()), "the password is printed");
    let (lh, th) = (
        format!("127.0.0.1:{}", local.port),
        format!("127.0.0.1:{}", team.port),
    );
    let both = |p: &str| {
        let (h1, b1) = get(local.port, p, &lh, None);
        let (h2, b2) = get(team.port, p, &th, None);
        assert!(h1.starts_with("HTTP/1.1 200"), "{p}: {h1}");
        assert!(
            h2.starts_with("HTTP/1.1 200"),
            "{p} from the database: {h2}\n{b2}"
        );
        (b1, b2)
    };
    let (first_page, _) = both("/");
    let listed = session_links(&first_page);
    assert!(listed.len() > 5, "{first_page}");
    for p in [
        "/",
        "/?agent=claude",
        "/?agent=pi",
        "/?sort=messages",
        "/?sort=agent&asc=1",
        "/?project=a",
        "/search?q=error",
        "/search?q=%22cargo+test%22",
        "/search?q=lexer",
        "/search?q=pars*",
    ] {
        let (a, b) = both(p);
        let (mut la, mut lb) = (session_links(&a), session_links(&b));
        assert!(!la.is_empty(), "nothing on {p}");
        // The best 100 hits of a search depend on each engine's ranking:
        // the same hits are asked for only when there are fewer.
        if p.starts_with("/search") && la.len() >= 100 {
            assert_eq!(la.len(), lb.len(), "the hits on {p}");
            continue;
        }
        la.sort();
        lb.sort();
        assert!(
            la == lb,
            "the sessions on {p}: {la:?}\nfrom the database: {lb:?}"
        );
        let count = |s: &str| {
            s.split("<main")
                .nth(1)
                .and_then(|m| m.split("</h1>").next().map(str::to_string))
        };
        assert_eq!(count(&a), count(&b), "the heading of {p}");
    }
    let (a, b) = both("/stats");
    assert_eq!(a, b, "the stats page");
    // Each session page, from the pushed bytes, as from the file.
    for l in listed.iter().take(8) {
        let (a, b) = both(&format!("/session?p={l}"));
        assert_eq!(a, b, "the page of {l}");
    }
    // /s/<id> finds a session by id on the server too.
    let (page, _) = both(&format!("/session?p={}", listed[0]));
    let id = page
        .split("<dt>id</dt><dd>")
        .nth(1)
        .and_then(|r| r.split("</dd>").next())
        .expect("the session page names its id");
    let (head, _) = get(team.port, &format!("/s/{id}"), &th, None);
    assert!(head.starts_with("HTTP/1.1 303"), "{head}");
    assert!(head.contains(&listed[0]), "{head}");

    // export --all --to html --db: the same pages as from this machine.
    let here = env.home().join("html-here");
    let there = elsewhere.home().join("html-there");
    let r = env.run(&[
        "export",
        "--all",
        "--to",
        "html",
        "-o",
        here.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let r = elsewhere.run(&[
        "export",
        "--all",
        "--to",
        "html",
        "--db",
        &url,
        "-o",
        there.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let files = |d: &std::path::Path| {
        let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let (a, b) = (files(&here), files(&there));
    assert!(a.len() > 5);
    assert_eq!(
        a.iter().map(|x| &x.0).collect::<Vec<_>>(),
        b.iter().map(|x| &x.0).collect::<Vec<_>>()
    );
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs");
    }

    // Live tail follows pushes: a message appended on the machine and
    // pushed reaches a page watching the session on the team server.
    let pi = agentlog_formats::discover::discover_all(
        &DiscoverEnv::with_home(env.home()),
        Some(&["pi".to_string()]),
    );
    let file = pi.first().expect("a pi session").path.clone();
    let text = std::fs::read_to_string(&file).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", team.port)).unwrap();
    write!(
        s,
        "GET /tail?p={}&n=0 HTTP/1.1\r\nHost: {th}\r\n\r\n",
        enc(file.to_str().unwrap())
    )
    .unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_millis(200)))
        .unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 65536];
    let read_some = |s: &mut std::net::TcpStream, seen: &mut String, buf: &mut [u8]| {
        if let Ok(n) = s.read(buf) {
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    };
    for _ in 0..10 {
        read_some(&mut s, &mut seen, &mut buf);
    }
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    let line = serde_json::json!({"type":"message","id":"pushed-later","parentId":last["id"],"timestamp":"2026-06-01T10:00:00.000Z","message":{"role":"user","content":"a pushed plumtrellis","timestamp":1_780_308_000_000u64}});
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    writeln!(f, "{line}").unwrap();
    drop(f);
    let r = env.run(&["push", "--db", &url, "--no-redact"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    for _ in 0..75 {
        if seen.contains("plumtrellis") {
            break;
        }
        read_some(&mut s, &mut seen, &mut buf);
    }
    assert!(
        seen.contains("event: entries") && seen.contains("plumtrellis"),
        "the pushed message reached the page: {seen}"
    );
}

#[test]
fn serve_and_the_html_export_show_a_subagent_inside_its_call() {
    let env = TestEnv::new();
    let fixture = common::fixtures().join("native/claude/as-subagent-project");
    let id = "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f";
    let agent = "a0ad4f44468bdf20d";
    let proj = env.home().join(".claude/projects/-tmp");
    let sub = proj.join(id).join("subagents");
    std::fs::create_dir_all(&sub).unwrap();
    for ext in ["jsonl", "meta.json"] {
        let name = format!("agent-{agent}.{ext}");
        std::fs::copy(
            fixture.join(id).join("subagents").join(&name),
            sub.join(&name),
        )
        .unwrap();
    }
    // The parent as Claude Code writes it: the Task call has an id, and its
    // result names the agent it started.
    let mut lines: Vec<serde_json::Value> =
        std::fs::read_to_string(fixture.join(format!("{id}.jsonl")))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let call = lines
        .iter_mut()
        .find(|l| l.to_string().contains("\"Task\""))
        .unwrap();
    let call_uuid = call["uuid"].clone();
    for b in call["message"]["content"].as_array_mut().unwrap() {
        if b["type"] == "tool_use" {
            b["id"] = "toolu_sub1".into();
        }
    }
    lines.push(serde_json::json!({
        "parentUuid": call_uuid, "isSidechain": false, "type": "user",
        "sessionId": id, "cwd": "/tmp", "uuid": "pres1",
        "timestamp": "2025-12-16T00:00:09.000Z",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_sub1", "content": "found 3 TODOs"}]},
        "toolUseResult": {"status": "completed", "agentId": agent}
    }));
    let main = proj.join(format!("{id}.jsonl"));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&main, text).unwrap();
    // A secret the subagent saw (redacted wherever the parent is).
    let planted = agentlog_bench::secrets::planted(5)
        .into_iter()
        .find(|p| p.kind == "github-pat")
        .unwrap();
    let sub_file = sub.join(format!("agent-{agent}.jsonl"));
    let mut sub_lines = std::fs::read_to_string(&sub_file).unwrap();
    let last: serde_json::Value = serde_json::from_str(sub_lines.lines().last().unwrap()).unwrap();
    sub_lines.push_str(&format!(
        "{}\n",
        serde_json::json!({
            "parentUuid": last["uuid"], "isSidechain": true, "type": "user",
            "sessionId": format!("agent-{agent}"), "agentId": agent, "uuid": "cu9",
            "timestamp": "2025-12-16T00:00:05.000Z",
            "message": {"role": "user", "content": planted.text}
        })
    ));
    std::fs::write(&sub_file, sub_lines).unwrap();

    let s = start(&env, &[]);
    let host = format!("127.0.0.1:{}", s.port);
    let (head, body) = get(
        s.port,
        &format!("/session?p={}", enc(main.to_str().unwrap())),
        &host,
        None,
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    let call = body.find("<span class=\"tname\">Task</span>").expect(&body);
    let sub = body
        .find("subagent: Search the repo for TODO comments")
        .unwrap_or_else(|| panic!("no subagent at the call: {body}"));
    // Its own messages (its tool's output) come inside the call, before
    // the call's result in the parent.
    let inner = body.find("a.txt:1: TODO fix").expect(&body);
    let result = body.find("id=\"e-pres1\"").expect(&body);
    assert!(
        call < sub && sub < inner && inner < result,
        "not inside the call: {body}"
    );
    // Shown at its call, it is not listed again at the top.
    assert!(!body.contains("Subagent sessions"), "{body}");
    drop(s);

    // The HTML export nests it the same way.
    let r = env.run(&["export", main.to_str().unwrap(), "--to", "html"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let page = r.stdout;
    let call = page.find("<span class=\"tname\">Task</span>").expect(&page);
    let sub = page
        .find("subagent: Search the repo for TODO comments")
        .expect(&page);
    let inner = page.find("a.txt:1: TODO fix").expect(&page);
    let result = page.find("id=\"e-pres1\"").expect(&page);
    assert!(call < sub && sub < inner && inner < result, "{page}");
    assert!(
        !page.contains(&planted.secret) && page.contains("[REDACTED:"),
        "the subagent's secret is redacted: {page}"
    );
    let r = env.run(&[
        "export",
        main.to_str().unwrap(),
        "--to",
        "html",
        "--no-redact",
    ]);
    assert!(r.stdout.contains(&planted.secret), "the secret was planted");

    // With 150 entries before the call, a link to a message of the
    // subagent lands on the page of the call, with the message on it.
    let mut prev = serde_json::Value::Null;
    let mut long: Vec<serde_json::Value> = (0..150)
        .map(|i| {
            let uuid = format!("fill{i}");
            let l = serde_json::json!({
                "parentUuid": prev, "isSidechain": false, "type": "user",
                "sessionId": id, "cwd": "/tmp", "uuid": uuid,
                "timestamp": "2025-12-15T00:00:00.000Z",
                "message": {"role": "user", "content": format!("filler {i}")}
            });
            prev = uuid.into();
            l
        })
        .collect();
    lines[0]["parentUuid"] = prev;
    long.extend(lines);
    let text: String = long.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&main, text).unwrap();
    let s = start(&env, &[]);
    let link = body
        .split("href=\"")
        .map(|h| h.split('"').next().unwrap().replace("&amp;", "&"))
        .find(|h| h.contains("at=cu9"))
        .unwrap_or_else(|| panic!("no link to the subagent's message: {body}"));
    let (head, page) = get(s.port, &link, &host_of(&s), None);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        page.contains("id=\"e-cu9\""),
        "the message is not on the page: {link}"
    );
    assert!(
        !page.contains("id=\"e-fill0\""),
        "the first page, not the call's"
    );
}

fn host_of(s: &Server) -> String {
    format!("127.0.0.1:{}", s.port)
}

/// Returns how a session page was read (the description of its
/// `Server-Timing` header), and its body.
fn read_page(port: u16, path: &str) -> (String, String) {
    let host = format!("127.0.0.1:{port}");
    let (head, body) = get(port, path, &host, None);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let how = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("server-timing: ")
                .map(str::to_string)
        })
        .and_then(|t| {
            t.split("desc=\"")
                .nth(1)
                .map(|d| d.split('"').next().unwrap_or("").to_string())
        })
        .unwrap_or_else(|| panic!("no Server-Timing in {head}"));
    (how, body)
}

/// Runs `agentlog index`, every file keeping its shape (files of 8 MB and
/// more do by default).
fn index_keeping_shapes(env: &TestEnv) {
    let out = env
        .command(&["index"])
        .env("AGENTLOG_SHAPE_MIN", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn serve_shows_a_long_sessions_first_page_from_its_first_lines_as_from_the_whole_file() {
    let env = TestEnv::new();
    let mut paths = Vec::new();
    for agent in ["claude", "codex", "pi", "gemini"] {
        let c = agentlog_bench::gen::long_conv(5, 120);
        paths.push(agentlog_bench::gen::write_session(env.home(), agent, &c).unwrap());
    }
    index_keeping_shapes(&env);
    let s = start(&env, &[]);
    for p in &paths {
        let url = format!("/session?p={}", enc(p.to_str().unwrap()));
        let (how, first) = read_page(s.port, &url);
        assert_eq!(how, "first lines", "{}", p.display());
        assert!(
            first.contains("show more ("),
            "{}: one page of many",
            p.display()
        );
        // The server reads the whole file behind the first page; then the
        // page comes from it, the same.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let whole = loop {
            let (how, body) = read_page(s.port, &url);
            if how == "whole file" {
                break body;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{}: never read whole",
                p.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert!(
            first == whole,
            "{}: the first page differs from the whole file's",
            p.display()
        );
    }
    drop(s);
    // A file changed since the index read it is read whole.
    let f = std::fs::File::options()
        .write(true)
        .open(&paths[0])
        .unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(f);
    let s = start(&env, &[]);
    let url = format!("/session?p={}", enc(paths[0].to_str().unwrap()));
    assert_eq!(read_page(s.port, &url).0, "whole file");
}

#[test]
fn serve_makes_the_shape_a_long_session_lost_to_an_append_once_it_is_quiet() {
    let env = TestEnv::new();
    let c = agentlog_bench::gen::long_conv(6, 120);
    let path = agentlog_bench::gen::write_session(env.home(), "claude", &c).unwrap();
    let db = env.home().join(".local/share/agentlog/index.sqlite");
    let shapes = || -> i64 {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.query_row("SELECT count(*) FROM shapes", [], |r| r.get(0))
            .unwrap()
    };
    index_keeping_shapes(&env);
    assert_eq!(shapes(), 1, "a file read in full keeps its shape");
    // A line appended (ten minutes ago): the update reads only it, and the
    // shape of the file as it was is dropped.
    let last = std::fs::read_to_string(&path).unwrap();
    let last = last.lines().last().unwrap().to_string();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(f, "{}", last.replace("\"uuid\":\"", "\"uuid\":\"appended-")).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(600))
        .unwrap();
    drop(f);
    index_keeping_shapes(&env);
    assert_eq!(
        shapes(),
        0,
        "the shape of the file before the append is gone"
    );
    // The viewer's refresher reads the quiet file whole for a new shape,
    // and the first page comes from the first lines again.
    let s = start_with(&env, &["--refresh", "1"], &[("AGENTLOG_SHAPE_MIN", "1")]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while shapes() == 0 {
        assert!(std::time::Instant::now() < deadline, "no shape was made");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let url = format!("/session?p={}", enc(path.to_str().unwrap()));
    assert_eq!(read_page(s.port, &url).0, "first lines");
}

#[test]
fn what_serve_indexes_is_seen_by_other_processes_after_they_close_the_index() {
    let env = TestEnv::new();
    let (_, _) = plant(&env);
    assert_eq!(env.run(&["index"]).status, 0);
    let db = env.home().join(".local/share/agentlog/index.sqlite");
    let sessions = || -> i64 {
        rusqlite::Connection::open(&db)
            .unwrap()
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
            .unwrap()
    };
    let s = start(&env, &["--refresh", "1"]);
    let host = format!("127.0.0.1:{}", s.port);
    // Pages open more connections to the index in the server; this
    // process opens and closes its own, as any agentlog command does.
    for _ in 0..3 {
        let _ = get(s.port, "/", &host, None);
        assert_eq!(sessions(), 1);
    }
    place_one_prompt(
        &env,
        "0199cccc-0000-7000-8000-000000000002",
        "/home/dev/src/seen-elsewhere",
        "written while serve runs",
    );
    // The server's refresher indexes it; another process sees it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while sessions() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the server's update was never seen by another process"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Reads what the server sends on `s` until `until` holds for it or ten
/// seconds pass.
fn read_until(s: &mut std::net::TcpStream, got: &mut String, until: &dyn Fn(&str) -> bool) -> bool {
    s.set_read_timeout(Some(std::time::Duration::from_millis(200)))
        .unwrap();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut buf = [0u8; 65536];
    while std::time::Instant::now() < end {
        match s.read(&mut buf) {
            Ok(0) => return until(got),
            Ok(n) => got.push_str(&String::from_utf8_lossy(&buf[..n])),
            Err(_) => {}
        }
        if until(got) {
            return true;
        }
    }
    false
}

#[test]
fn serve_beyond_loopback_needs_its_token_and_redacts_what_is_appended() {
    let env = TestEnv::new();
    let (path, secrets) = plant(&env);
    let s = start(&env, &["--host", "0.0.0.0"]);
    assert!(
        s.first.contains("listening beyond this machine")
            && s.first.contains("every request needs the token")
            && s.first.contains("redacted"),
        "{}",
        s.first
    );
    let token = s
        .first
        .split("?token=")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .to_string();
    assert!(token.len() >= 32, "{token}");
    let host = format!("127.0.0.1:{}", s.port);
    let cookie = format!("agentlog_token={token}");
    let page = format!("/session?p={}", enc(path.to_str().unwrap()));
    let (head, _) = get(s.port, &page, &host, None);
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    let (head, body) = get(s.port, &page, &host, Some(&cookie));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(leaked(&body, &secrets), Vec::<&str>::new());
    assert!(body.contains("[REDACTED:"));

    // The live tail of the page: what is appended arrives, redacted, one
    // append after another (which of them are read from the last turn is
    // the index's follow tests' to check).
    let tail = body
        .split("data-tail=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap()
        .replace("&amp;", "&");
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    write!(
        stream,
        "GET {tail} HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\n\r\n"
    )
    .unwrap();
    let mut got = String::new();
    assert!(
        read_until(&mut stream, &mut got, &|g| g.contains("\r\n\r\n")),
        "{got}"
    );
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    let last_id = |p: &std::path::Path| -> String {
        let text = std::fs::read_to_string(p).unwrap();
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        last["id"].as_str().unwrap().to_string()
    };
    for (k, (word, secret)) in [("firstmarmot", &secrets[0]), ("secondheron", &secrets[1])]
        .into_iter()
        .enumerate()
    {
        let line = serde_json::json!({"type":"message","id":format!("appended-{k}"),"parentId":last_id(&path),"timestamp":"2026-05-01T11:00:00.000Z","message":{"role":"user","content":format!("{word}: the key is {secret}"),"timestamp":1_777_633_200_000u64}});
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(f, "{line}").unwrap();
        drop(f);
        assert!(
            read_until(&mut stream, &mut got, &|g| g.contains(word)),
            "{word} never arrived: {got}"
        );
    }
    assert_eq!(leaked(&got, &secrets), Vec::<&str>::new());
    assert!(got.matches("[REDACTED:").count() >= 2, "{got}");
}

#[test]
fn serve_search_counts_the_hits_as_the_command_line_does() {
    let env = TestEnv::new();
    let mut session = agentlog_model::Session::new(agentlog_model::SessionMeta::new(
        "5ea4c400-0000-4000-8000-000000000001",
        agentlog_model::Agent::Pi,
    ));
    session.meta.cwd = Some("/home/dev/zoo".into());
    let mut parent: Option<String> = None;
    for n in 0..150 {
        let id = format!("p{n}");
        session.push(agentlog_model::Entry::new(
            &id,
            parent.clone(),
            agentlog_model::EntryKind::Message(agentlog_model::Message::text(
                agentlog_model::Role::User,
                format!("feed the zebra number {n}"),
            )),
        ));
        parent = Some(id);
    }
    place_pi(&env, &session);
    let cli = env.run(&["search", "zebra", "--limit", "100"]);
    assert!(
        cli.stdout.contains("showing the best 100 of 150 hits"),
        "{}",
        cli.stdout
    );
    let s = start(&env, &[]);
    let (_, body) = get(s.port, "/search?q=zebra", &host_of(&s), None);
    assert!(body.contains("the best 100 of 150 hits"), "{body}");
}

#[test]
fn serve_stats_count_a_resumed_sessions_responses_once() {
    let env = TestEnv::new();
    let mut session = agentlog_model::Session::new(agentlog_model::SessionMeta::new(
        "5ea4c400-0000-4000-8000-000000000002",
        agentlog_model::Agent::Pi,
    ));
    session.meta.cwd = Some("/home/dev/zoo".into());
    let prompt = agentlog_model::Message::text(agentlog_model::Role::User, "count me once");
    let mut answer = agentlog_model::Message::text(agentlog_model::Role::Assistant, "once");
    answer.model = Some("gpt-5-codex".into());
    answer.usage = Some(agentlog_model::Usage {
        input: 100,
        output: 10,
        ..Default::default()
    });
    for (i, (id, m)) in [("p0", prompt), ("a0", answer)].into_iter().enumerate() {
        let parent = (i > 0).then(|| "p0".to_string());
        session.push(
            agentlog_model::Entry::new(id, parent, agentlog_model::EntryKind::Message(m)).at(
                agentlog_model::Timestamp::Millis(1_790_000_000_000 + i as i64 * 60_000),
            ),
        );
    }
    let path = place_pi(&env, &session);
    let r = env.run(&["resume", path.to_str().unwrap(), "--in", "codex"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let s = start(&env, &[]);
    let (_, body) = get(s.port, "/stats", &host_of(&s), None);
    assert!(
        body.contains("<dt>responses</dt><dd>1</dd>"),
        "the copy's response counted again: {body}"
    );
}

#[test]
fn serve_lists_conversations_first_and_links_to_every_session() {
    let env = TestEnv::new();
    place_one_prompt(&env, "talk-1", "/work/a", "a conversation with the user");
    // `claude -p` as Claude Code 2.1.330 wrote it (entrypoint sdk-cli).
    let headless = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../harness/fixtures/claude-2.1.330.jsonl"
    ))
    .unwrap();
    env.write(
        ".claude/projects/-tmp-p/6215620c-6219-453f-a09e-7ac5800146b1.jsonl",
        &headless,
    );
    assert_eq!(env.run(&["index"]).status, 0);
    let server = start(&env, &[]);
    let host = format!("127.0.0.1:{}", server.port);
    let rows = |body: &str| body.matches("class=\"title\"").count();
    let (head, list) = get(server.port, "/", &host, None);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(rows(&list), 1, "{list}");
    assert!(list.contains("1 found"), "{list}");
    assert!(
        list.contains("and 1 headless run or subagent transcript: <a href=\"/?page=1&amp;all=1\">show all</a>"),
        "{list}"
    );
    let (_, all) = get(server.port, "/?all=1", &host, None);
    assert_eq!(rows(&all), 2, "{all}");
    assert!(!all.contains("id=\"others\""), "{all}");
    assert!(all.contains("value=\"1\" selected>every session"), "{all}");
}
