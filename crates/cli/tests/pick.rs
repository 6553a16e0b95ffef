//! `agentlog pick` in a real terminal: tmux runs it, `send-keys` types,
//! `capture-pane` reads the screen. Typing narrows the list to a planted
//! session and the preview shows the hit; Enter replaces the picker with
//! the session's own agent in its folder (a fake `claude` on PATH records
//! its arguments and folder); Tab continues it in another agent; Ctrl-Y
//! copies the command; Ctrl-O serves it in the web viewer; hostile session
//! text never reaches the terminal; the screen fits 80x24; `?` shows the
//! keys.
//!
//! Needs tmux (`scripts/install-tmux.sh`); under CI its absence fails the
//! tests, elsewhere they skip with a message.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use agentlog_formats::discover::DiscoverEnv;
use agentlog_formats::registry;
use agentlog_model::{
    Agent, Block, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp,
};
use common::TestEnv;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const WORD: &str = "quasarflux";
const ID: &str = "7c1d9a52-3b8e-4f6a-9d21-5e0c4b7a1f33";
const HOSTILE_WORD: &str = "hostilemarker";
const HOSTILE_ID: &str = "0bad0bad-3b8e-4f6a-9d21-5e0c4b7a1f34";
const PLANTED_TITLE: &str = "PWNEDTITLE";
const PLANTED_CLIP: &str = "PWNEDCLIP";

/// Session text that would drive a terminal that obeyed it.
fn hostile_text() -> String {
    // PLANTED_CLIP in base64, as OSC 52 carries it.
    let clip = "UFdORURDTElQ";
    format!(
        "{HOSTILE_WORD} \x1b[2J\x1b[H\x1b[31mred\x1b[0m \x1b]0;{PLANTED_TITLE}\x07 \
         \x1b]52;c;{clip}\x07 \x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\ \
         bell\x07 \u{9b}41m c1 \u{202e}desrever\u{202c} \u{2066}iso\u{2069} \
         <script>alert(1)</script> back\x08space\rreturn"
    )
}

/// How long anything may take on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(90);

fn tmux_ok() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// False (after saying why) when tmux is missing outside CI; a failure
/// under CI.
fn have_tmux(test: &str) -> bool {
    if tmux_ok() {
        return true;
    }
    assert!(
        !common::in_ci(),
        "tmux is missing (scripts/install-tmux.sh installs it), and CI is set"
    );
    eprintln!("skipped {test}: tmux is missing; run scripts/install-tmux.sh");
    false
}

fn ts(k: i64) -> Timestamp {
    Timestamp::Millis(1_767_000_000_000 + k * 60_000)
}

fn text_msg(role: Role, text: &str) -> Message {
    let mut m = Message::new(role);
    m.content.push(Block::text(text));
    m
}

/// A Claude Code session in `cwd` whose `at`-th of `turns` answers holds
/// `word`, far below the first screen of its transcript.
fn session(
    id: &str,
    cwd: &Path,
    prompt: &str,
    word_text: &str,
    turns: usize,
    at: usize,
) -> Session {
    let mut s = Session::new(SessionMeta::new(id, Agent::Claude));
    s.meta.cwd = Some(cwd.to_string_lossy().into_owned());
    s.meta.created_at = Some(ts(0));
    let mut parent: Option<String> = None;
    for i in 0..turns {
        for (j, role) in [Role::User, Role::Assistant].into_iter().enumerate() {
            let n = i * 2 + j;
            let id = format!("00000000-0000-4000-8000-{n:012}");
            let text = match (i, &role) {
                (0, Role::User) => prompt.to_string(),
                (i, Role::Assistant) if i == at => {
                    format!("Found it. {word_text}\nThe retry loop now backs off.")
                }
                (_, Role::User) => format!("Step {i}: keep going with the parser work."),
                _ => format!(
                    "Done with step {i}; the tests of the lexer pass.\nNothing else changed."
                ),
            };
            let e = Entry::new(
                &id,
                parent.clone(),
                EntryKind::Message(text_msg(role, &text)),
            )
            .at(ts(n as i64));
            s.push(e);
            parent = Some(id);
        }
    }
    s
}

/// Writes `session` where Claude Code keeps it under `home`.
fn place(home: &Path, session: &Session) -> PathBuf {
    let f = registry::by_name("claude").unwrap();
    let plan = f
        .resume_plan(session, &DiscoverEnv::with_home(home))
        .unwrap();
    std::fs::create_dir_all(plan.path.parent().unwrap()).unwrap();
    let mut bytes = Vec::new();
    f.write(session, &mut bytes).unwrap();
    std::fs::write(&plan.path, bytes).unwrap();
    plan.path
}

/// A home with generated sessions of every agent, the planted session, a
/// hostile one, an index of them all, and fake `claude` and `codex`
/// programs that write their arguments and folder to `record`.
struct World {
    env: TestEnv,
    project: PathBuf,
    bin: PathBuf,
    record: PathBuf,
}

impl World {
    fn new() -> World {
        let env = TestEnv::new();
        let home = env.home().to_path_buf();
        agentlog_bench::gen::generate(&home, 300_000, 5).unwrap();
        let project = home.join("work/parser project");
        std::fs::create_dir_all(&project).unwrap();
        let project = project.canonicalize().unwrap();
        place(
            &home,
            &session(
                ID,
                &project,
                "The retry logic of the fetcher loops forever; find out why",
                &format!("The {WORD} counter was never reset."),
                30,
                25,
            ),
        );
        place(
            &home,
            &session(
                HOSTILE_ID,
                &project,
                &format!("Hostile {}", hostile_text()),
                &hostile_text(),
                3,
                1,
            ),
        );
        let bin = home.join("fakebin");
        std::fs::create_dir_all(&bin).unwrap();
        let record = home.join("agent-record.txt");
        for agent in ["claude", "codex"] {
            let script = format!(
                "#!/bin/sh\n{{ echo {agent}; pwd -P; for a in \"$@\"; do printf '%s\\n' \"$a\"; done; }} > '{}.tmp'\nmv '{}.tmp' '{}'\n",
                record.display(),
                record.display(),
                record.display()
            );
            let p = bin.join(agent);
            std::fs::write(&p, script).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let r = env.run(&["index"]);
        assert_eq!(r.status, 0, "{}", r.stderr);
        World {
            env,
            project,
            bin,
            record,
        }
    }

    /// Starts `agentlog pick ARGS` (through `sh -c`, `then` after it) in a
    /// new tmux of `w` x `h`.
    fn pick(&self, args: &str, then: &str, w: u16, h: u16) -> Tmux {
        let home = self.env.home();
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("tmux.conf");
        std::fs::write(
            &conf,
            "set -g remain-on-exit on\nset -g set-clipboard on\nset -g status off\nset -g escape-time 0\n",
        )
        .unwrap();
        let sock = dir.path().join("sock");
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let cmd = format!("'{}' pick {args} {then}", env!("CARGO_BIN_EXE_agentlog"));
        let out = Command::new("tmux")
            .env_clear()
            .env("HOME", home)
            .env("PATH", &path)
            .env("TERM", "xterm-256color")
            .env("LANG", "C.UTF-8")
            .env("TZ", "UTC")
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("AGENTLOG_NO_BACKGROUND", "1")
            .current_dir(home)
            .arg("-S")
            .arg(&sock)
            .arg("-f")
            .arg(&conf)
            .args([
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                &w.to_string(),
                "-y",
                &h.to_string(),
            ])
            .arg(&cmd)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tmux did not start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmux { sock, _dir: dir }
    }

    fn home(&self) -> &Path {
        self.env.home()
    }

    /// Waits for the fake agent's record: which agent, its folder, its
    /// arguments.
    fn recorded(&self, t: &Tmux) -> (String, PathBuf, Vec<String>) {
        let start = Instant::now();
        while !self.record.exists() {
            assert!(
                start.elapsed() < PATIENCE,
                "no agent ran; the screen:\n{}",
                t.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let text = std::fs::read_to_string(&self.record).unwrap();
        let mut lines = text.lines().map(str::to_string);
        let agent = lines.next().unwrap();
        let cwd = PathBuf::from(lines.next().unwrap());
        (agent, cwd, lines.collect())
    }
}

/// One tmux server with the picker in its only pane.
struct Tmux {
    sock: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmux {
    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.sock)
            .args(args)
            .output()
            .unwrap()
    }

    /// Types `text` as it is.
    fn type_text(&self, text: &str) {
        assert!(self
            .tmux(&["send-keys", "-t", "t", "-l", text])
            .status
            .success());
    }

    /// Presses the keys named (tmux names: Enter, Tab, Escape, C-y, …).
    fn press(&self, key: &str) {
        assert!(self.tmux(&["send-keys", "-t", "t", key]).status.success());
    }

    /// The screen as text.
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    /// The screen with its attributes as escape sequences (what tmux
    /// holds for each cell).
    fn raw(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-e", "-p", "-t", "t"]).stdout)
            .into_owned()
    }

    fn display(&self, format: &str) -> String {
        String::from_utf8_lossy(
            &self
                .tmux(&["display-message", "-p", "-t", "t", format])
                .stdout,
        )
        .trim()
        .to_string()
    }

    /// Waits until the screen satisfies `ok`; returns it.
    fn wait(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "waited {PATIENCE:?} for {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn wait_for(&self, text: &str) -> String {
        self.wait(&format!("{text:?}"), |s| s.contains(text))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// The list's count, as the query line says it (`1 session`).
fn one_session(s: &str) -> bool {
    s.lines()
        .next()
        .is_some_and(|l| l.trim_end().ends_with(" 1 session"))
}

#[test]
fn typing_narrows_the_list_and_enter_resumes_in_the_sessions_folder() {
    if !have_tmux("typing_narrows_the_list_and_enter_resumes_in_the_sessions_folder") {
        return;
    }
    let w = World::new();
    let t = w.pick("", "", 80, 24);
    let first = t.wait_for(" newest first ");
    assert!(first.lines().next().unwrap().starts_with("> "), "{first}");
    // Typing narrows: a prefix of the planted word while it is typed.
    t.type_text(&WORD[..7]);
    let s = t.wait(&format!("one session for {}*", &WORD[..7]), |s| {
        s.contains(&format!(" {}* ", &WORD[..7])) && one_session(s)
    });
    assert!(s.contains("The retry logic of the fetcher"), "{s}");
    // The preview shows the hit, 25 turns into the session.
    // (Once in the list's snippet, once in the preview.)
    let s = t.wait("the hit in the preview", |s| {
        s.matches(&format!("The {WORD} counter was never reset"))
            .count()
            >= 2
    });
    assert!(
        !s.contains("Step 1: keep going"),
        "the preview is not at the hit:\n{s}"
    );
    t.press("Enter");
    let (agent, cwd, args) = w.recorded(&t);
    assert_eq!(agent, "claude");
    assert_eq!(cwd, w.project);
    assert_eq!(args, ["--resume", ID]);
}

#[test]
fn tab_continues_the_session_in_another_agent() {
    if !have_tmux("tab_continues_the_session_in_another_agent") {
        return;
    }
    let w = World::new();
    let t = w.pick(WORD, "", 80, 24);
    t.wait("the planted session alone", one_session);
    t.press("Tab");
    // Waited for with its last rows: a capture can catch it half drawn.
    let s = t.wait("the agents offered, codex among them", |s| {
        s.contains("continue in")
            && s.lines()
                .any(|l| l.split('│').nth(1).is_some_and(|c| c.trim() == "codex"))
    });
    // The agents offered, in order; codex among them.
    let offered: Vec<String> = s
        .lines()
        .filter_map(|l| l.split('│').nth(1))
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    let at = offered
        .iter()
        .position(|a| a == "codex")
        .unwrap_or_else(|| panic!("{s}"));
    assert!(
        !offered.contains(&"claude".to_string()),
        "its own agent offered: {offered:?}"
    );
    for _ in 0..at {
        t.press("Down");
    }
    t.press("Enter");
    let (agent, cwd, args) = w.recorded(&t);
    assert_eq!(agent, "codex");
    assert_eq!(cwd, w.project);
    assert_eq!(args[0], "resume", "{args:?}");
    // The copy Codex resumes is where it looks, and holds the session.
    let mut found = false;
    for e in walk(&w.home().join(".codex/sessions")) {
        let name = e.file_name().unwrap().to_string_lossy().into_owned();
        if name.contains(&args[1]) {
            let text = std::fs::read_to_string(&e).unwrap();
            assert!(text.contains(WORD), "{}", e.display());
            found = true;
        }
    }
    assert!(found, "no Codex rollout named {}", args[1]);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn the_command_is_printed_when_standard_output_is_not_a_terminal() {
    if !have_tmux("the_command_is_printed_when_standard_output_is_not_a_terminal") {
        return;
    }
    let w = World::new();
    let out = w.home().join("printed.txt");
    let t = w.pick(WORD, &format!("> '{}'", out.display()), 80, 24);
    t.wait("the planted session alone", one_session);
    t.press("Enter");
    t.wait("the picker to end", |_| t.display("#{pane_dead}") == "1");
    let printed = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        printed.trim_end(),
        format!("cd '{}' && claude --resume {ID}", w.project.display())
    );
    assert!(!w.record.exists(), "the agent ran");
}

#[test]
fn ctrl_y_copies_the_command_through_the_terminal() {
    if !have_tmux("ctrl_y_copies_the_command_through_the_terminal") {
        return;
    }
    let w = World::new();
    let t = w.pick(WORD, "", 80, 24);
    t.wait("the planted session alone", one_session);
    t.press("C-y");
    t.wait_for("copied: cd ");
    // tmux keeps what OSC 52 set as its newest paste buffer.
    let start = Instant::now();
    let want = format!("cd '{}' && claude --resume {ID}", w.project.display());
    loop {
        let buf = String::from_utf8_lossy(&t.tmux(&["show-buffer"]).stdout).into_owned();
        if buf == want {
            break;
        }
        assert!(start.elapsed() < PATIENCE, "the clipboard holds {buf:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn ctrl_o_serves_the_session_in_the_web_viewer() {
    if !have_tmux("ctrl_o_serves_the_session_in_the_web_viewer") {
        return;
    }
    let w = World::new();
    // What it says on leaving goes to a file (the picker draws on the
    // terminal itself).
    let said = w.home().join("said.txt");
    let t = w.pick(WORD, &format!("2> '{}'", said.display()), 120, 30);
    t.wait("the planted session alone", one_session);
    t.press("C-o");
    let s = t.wait_for("web viewer: http://");
    let url = s
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    assert!(url.ends_with(&format!("/s/{ID}")), "{url}");
    let (addr, path) = url["http://".len()..].split_once('/').unwrap();
    let reply = http_get(addr, &format!("/{path}"));
    assert!(reply.starts_with("HTTP/1.1 303"), "{reply}");
    assert!(reply.contains(&format!("{ID}.jsonl")), "{reply}");
    // Leaving says the server goes on, and how to stop it.
    t.press("Escape");
    t.wait("the picker to end", |_| t.display("#{pane_dead}") == "1");
    let s = std::fs::read_to_string(&said).unwrap();
    assert!(
        s.contains(&format!("still serving at http://{addr}/")),
        "{s}"
    );
    let pid: String = s
        .split("`kill ")
        .nth(1)
        .unwrap()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    assert!(!pid.is_empty(), "{s}");
    let _ = Command::new("kill").arg(&pid).status();
}

fn http_get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(PATIENCE)).unwrap();
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = c.read_to_string(&mut out);
    out
}

/// True when every escape sequence in `raw` is a tmux SGR that sets no
/// colour (bold, underline, reverse, dim and their resets).
fn only_plain_attributes(raw: &str) -> Result<(), String> {
    let mut rest = raw;
    while let Some(at) = rest.find('\x1b') {
        let seq = &rest[at..];
        let Some(body) = seq.strip_prefix("\x1b[") else {
            return Err(format!("not an SGR: {:?}", &seq[..seq.len().min(12)]));
        };
        let end = body
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .ok_or("an unterminated sequence")?;
        if !body[end..].starts_with('m') {
            return Err(format!(
                "not an SGR: {:?}",
                &seq[..(end + 3).min(seq.len())]
            ));
        }
        for p in body[..end].split(';').filter(|p| !p.is_empty()) {
            let n: u32 = p.parse().map_err(|_| p.to_string())?;
            if matches!(n, 30..=49 | 90..=107) && n != 39 && n != 49 {
                return Err(format!("a colour is set: {:?}", &body[..end]));
            }
        }
        rest = &body[end + 1..];
    }
    Ok(())
}

#[test]
fn hostile_session_text_never_reaches_the_terminal() {
    if !have_tmux("hostile_session_text_never_reaches_the_terminal") {
        return;
    }
    let w = World::new();
    let t = w.pick("", "", 100, 30);
    t.wait_for(" newest first ");
    let title = t.display("#{pane_title}");
    t.type_text(HOSTILE_WORD);
    t.wait("the hostile session alone", one_session);
    let s = t.wait("the hostile text in the preview", |s| {
        s.matches(HOSTILE_WORD).count() >= 3 && s.contains("<script>alert(1)</script>")
    });
    // Shown as text: every control visible.
    for shown in [
        r"\x1b[2J",
        r"\x1b]0;",
        r"\x07",
        r"\u{9b}",
        r"\u{202e}",
        r"\x08",
        r"\x0d",
    ] {
        assert!(s.contains(shown), "{shown} not shown:\n{s}");
    }
    // Obeyed, none: the screen was not cleared, no title or clipboard set.
    assert!(
        s.lines().next().unwrap().starts_with("> hostilemarker"),
        "{s}"
    );
    assert_eq!(t.display("#{pane_title}"), title);
    assert!(!t.display("#{pane_title}").contains(PLANTED_TITLE));
    let buffers = String::from_utf8_lossy(&t.tmux(&["list-buffers"]).stdout).into_owned();
    assert!(!buffers.contains(PLANTED_CLIP), "{buffers}");
    let raw = t.raw();
    for c in [
        '\x07', '\u{9b}', '\u{202e}', '\u{202c}', '\u{2066}', '\u{2069}', '\x08', '\r',
    ] {
        assert!(!raw.contains(c), "{c:?} reached the terminal");
    }
    only_plain_attributes(&raw).unwrap_or_else(|e| panic!("{e}\n{raw:?}"));
    assert!(
        !raw.contains("evil.example/\x1b"),
        "a hyperlink reached the terminal"
    );
}

#[test]
fn the_screen_fits_80x24_and_question_mark_shows_the_keys() {
    if !have_tmux("the_screen_fits_80x24_and_question_mark_shows_the_keys") {
        return;
    }
    let w = World::new();
    let t = w.pick("", "", 80, 24);
    // Several sessions in view, and the preview below them: the rows
    // before the first line that starts with a space.
    let rows = |s: &str| {
        s.lines()
            .skip(2)
            .take_while(|l| !l.starts_with(' ') && !l.is_empty())
            .count()
    };
    // Waited for whole: a capture taken while the picker draws its first
    // screen (on a loaded machine) shows a part of it.
    let s = t.wait(
        "the first screen with five rows, a preview and the keys",
        |s| {
            s.contains(" newest first ")
                && s.contains(" · ")
                && s.contains("sessions")
                && rows(s) >= 5
                && s.lines().nth(23).is_some_and(|l| l.contains("? help"))
        },
    );
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 24, "{s}");
    for l in &lines {
        assert!(l.chars().count() <= 80, "{l:?}");
    }
    assert!(lines[0].starts_with("> "), "{s}");
    assert!(
        lines[23].contains("? help") && lines[23].contains("Enter"),
        "{s}"
    );
    // Bold and reverse only: no colour that one theme would hide.
    only_plain_attributes(&t.raw()).unwrap();
    t.press("?");
    let keys = [
        "agent:NAME",
        "dir:TEXT",
        "since:7d",
        "Enter",
        "Tab",
        "Ctrl-Y",
        "Ctrl-O",
        "Esc",
    ];
    // Waited for whole, as the first screen: a capture can catch the
    // help half drawn.
    let s = t.wait("the help with every key", |s| {
        s.contains("keys (any key closes)") && keys.iter().all(|k| s.contains(k))
    });
    for l in s.lines() {
        assert!(l.chars().count() <= 80, "{l:?}");
    }
    t.press("x");
    t.wait("the help to close", |s| {
        !s.contains("keys (any key closes)")
    });
    // Esc leaves, and the terminal is given back.
    t.press("Escape");
    t.wait("the picker to end", |_| t.display("#{pane_dead}") == "1");
    assert!(!t.screen().contains(" newest first "), "{}", t.screen());
}
