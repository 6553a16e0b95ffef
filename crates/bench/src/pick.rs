//! The picker benchmark: `agentlog pick` in a real terminal (tmux) on a
//! generated corpus with its index warm, beside fast-resume's picker (`fr`,
//! `scripts/install-bench-peers.sh`) in the same run and the same way:
//!
//! - first screen: from starting the picker in a new tmux session until
//!   the pane shows a list of sessions;
//! - each keystroke: from `send-keys` until the pane's list reaches the
//!   state it then keeps (no change for [`SETTLE`]), typing each query of
//!   [`QUERIES`] a letter at a time and taking it back a letter at a time.
//!
//! The pane is read with `capture-pane` in a loop; each read is a tmux
//! client process, so every figure includes up to one read's time (a few
//! ms). The preview pane is left out of the comparison: both pickers fill
//! it after the list.

use crate::e2e::{ensure_corpus, home_for, ms, num_cpus, percentile, uptime, Options};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The words typed.
const QUERIES: [&str; 6] = [
    "parser",
    "timeout",
    "deadlock",
    "serialize",
    "webhook",
    "migration",
];

/// How long the list must stay the same to count as the keystroke's answer.
const SETTLE: Duration = Duration::from_millis(500);

/// The pane's size.
const SIZE: (u16, u16) = (100, 30);

/// Targets: first screen and keystroke p99.
const FIRST_MS: f64 = 100.0;
const KEY_P99_MS: f64 = 30.0;

/// One picker under test.
struct Picker {
    name: &'static str,
    /// The command that starts it.
    command: String,
    home: PathBuf,
    /// True when the pane shows its first list.
    ready: fn(&str) -> bool,
    /// The part of the pane compared after a keystroke (the list, not the
    /// preview).
    list: fn(&str) -> String,
}

/// A tmux server of its own, killed when dropped.
struct Tmux {
    sock: PathBuf,
}

impl Tmux {
    fn new(work: &Path) -> anyhow::Result<Tmux> {
        let conf = work.join("tmux.conf");
        std::fs::write(&conf, "set -g status off\nset -g escape-time 0\n")?;
        let sock = work.join("tmux.sock");
        let t = Tmux { sock };
        // A server that outlives the pickers it runs.
        let ok = t
            .cmd()
            .arg("-f")
            .arg(&conf)
            .args(["new-session", "-d", "-s", "keep", "sleep 100000"])
            .status()?
            .success();
        anyhow::ensure!(ok, "tmux could not start (scripts/install-tmux.sh)");
        Ok(t)
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&self.sock);
        c
    }

    fn capture(&self, target: &str) -> String {
        self.cmd()
            .args(["capture-pane", "-p", "-t", target])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    fn send(&self, target: &str, literal: Option<&str>, key: Option<&str>) {
        let mut c = self.cmd();
        c.args(["send-keys", "-t", target]);
        match (literal, key) {
            (Some(l), _) => c.args(["-l", l]),
            (None, Some(k)) => c.arg(k),
            (None, None) => &mut c,
        };
        let _ = c.status();
    }

    /// Starts `p` in a new session named `name`; returns when tmux has
    /// started it.
    fn start(&self, p: &Picker, name: &str) {
        let home = p.home.display().to_string();
        let mut c = self.cmd();
        c.args(["new-session", "-d", "-s", name]).args([
            "-x",
            &SIZE.0.to_string(),
            "-y",
            &SIZE.1.to_string(),
        ]);
        for (k, v) in [
            ("HOME", home.clone()),
            ("XDG_DATA_HOME", format!("{home}/.local/share")),
            ("XDG_CONFIG_HOME", format!("{home}/.config")),
            ("XDG_CACHE_HOME", format!("{home}/.cache")),
            ("XDG_STATE_HOME", format!("{home}/.local/state")),
            ("TZ", "UTC".into()),
            ("LANG", "C.UTF-8".into()),
            ("AGENTLOG_NO_BACKGROUND", "1".into()),
        ] {
            c.arg("-e").arg(format!("{k}={v}"));
        }
        c.arg(&p.command);
        let _ = c.status();
    }

    fn kill(&self, name: &str) {
        let _ = self.cmd().args(["kill-session", "-t", name]).status();
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

/// Polls the pane until `ok`; the time from `t0`, or `None` after `limit`.
fn until(
    t: &Tmux,
    target: &str,
    t0: Instant,
    limit: Duration,
    ok: &dyn Fn(&str) -> bool,
) -> Option<f64> {
    loop {
        let s = t.capture(target);
        if ok(&s) {
            return Some(t0.elapsed().as_secs_f64());
        }
        if t0.elapsed() > limit {
            return None;
        }
    }
}

/// Sends one keystroke and returns the time until the list settles: the
/// first time the pane showed the list it then kept for [`SETTLE`].
fn keystroke(t: &Tmux, target: &str, p: &Picker, literal: Option<&str>, key: Option<&str>) -> f64 {
    let before = (p.list)(&t.capture(target));
    let t0 = Instant::now();
    t.send(target, literal, key);
    let mut last = before;
    let mut last_at = 0.0;
    let mut changed = false;
    let mut seen = Instant::now();
    loop {
        let s = (p.list)(&t.capture(target));
        let now = t0.elapsed().as_secs_f64();
        if s != last {
            last = s;
            last_at = now;
            changed = true;
            seen = Instant::now();
        } else if seen.elapsed() >= SETTLE {
            break;
        }
    }
    if changed {
        last_at
    } else {
        // Nothing changed on screen (the same list): as fast as a read.
        0.0
    }
}

/// Runs the benchmark on `p`: first screens and keystrokes.
fn measure(
    t: &Tmux,
    p: &Picker,
    runs: usize,
    missed: &mut Vec<String>,
    ours: bool,
) -> Option<(f64, f64, f64)> {
    let mut first = Vec::new();
    for n in 0..runs {
        let name = format!("{}-{n}", p.name);
        let t0 = Instant::now();
        t.start(p, &name);
        match until(t, &name, t0, Duration::from_secs(120), &|s| (p.ready)(s)) {
            Some(s) => first.push(s),
            None => {
                println!(
                    "{}: no first screen in 120 s:\n{}",
                    p.name,
                    t.capture(&name)
                );
                t.kill(&name);
                return None;
            }
        }
        t.kill(&name);
    }
    let name = format!("{}-keys", p.name);
    t.start(p, &name);
    until(t, &name, Instant::now(), Duration::from_secs(120), &|s| {
        (p.ready)(s)
    })?;
    // Its first list settles (a picker may fill it in steps).
    std::thread::sleep(SETTLE);
    let mut keys = Vec::new();
    for q in QUERIES {
        for c in q.chars() {
            keys.push(keystroke(t, &name, p, Some(&c.to_string()), None));
        }
        for _ in q.chars() {
            keys.push(keystroke(t, &name, p, None, Some("BSpace")));
        }
    }
    t.kill(&name);
    let f50 = percentile(&mut first, 0.5);
    let k50 = percentile(&mut keys, 0.5);
    let k99 = percentile(&mut keys, 0.99);
    println!(
        "{}: first screen p50 {} (of {} starts), keystroke p50 {} p99 {} max {} (of {} keys)",
        p.name,
        ms(f50),
        first.len(),
        ms(k50),
        ms(k99),
        ms(keys.last().copied().unwrap_or(f64::NAN)),
        keys.len()
    );
    if ours {
        if f50 * 1000.0 > FIRST_MS {
            missed.push(format!(
                "pick first screen {} (target {FIRST_MS} ms)",
                ms(f50)
            ));
        }
        if k99 * 1000.0 > KEY_P99_MS {
            missed.push(format!(
                "pick keystroke p99 {} (target {KEY_P99_MS} ms)",
                ms(k99)
            ));
        }
    }
    Some((f50, k50, k99))
}

fn agentlog_ready(s: &str) -> bool {
    let mut lines = s.lines();
    let top = lines.next().unwrap_or("");
    top.trim_end().ends_with("sessions") && lines.nth(1).is_some_and(|l| !l.trim().is_empty())
}

/// The query line and the list: the pane above the preview (at
/// [`SIZE`], two fifths of the rows below the query line).
fn agentlog_list(s: &str) -> String {
    let rows = 1 + (SIZE.1 as usize - 2) * 2 / 5;
    s.lines().take(rows).collect::<Vec<_>>().join("\n")
}

fn fr_ready(s: &str) -> bool {
    s.contains(" shown / ") && s.contains('▸')
}

/// fast-resume's header, search box and list, down to the list's bottom
/// border, without the header's timing figure.
fn fr_list(s: &str) -> String {
    let mut out = Vec::new();
    let mut in_list = false;
    for (i, l) in s.lines().enumerate() {
        if i == 0 {
            continue; // "… 100 shown / 555 indexed 0.4ms": the time changes
        }
        out.push(l);
        if l.contains("Sessions") {
            in_list = true;
        } else if in_list && l.starts_with('╰') {
            break;
        }
    }
    out.join("\n")
}

/// Runs the picker benchmark; returns the targets missed.
pub fn run(o: &Options) -> anyhow::Result<Vec<String>> {
    let mut missed = Vec::new();
    println!(
        "== agentlog pick benchmark, {} corpus, through tmux",
        o.size_text
    );
    println!("machine: {} cores, {} (start)", num_cpus(), uptime());
    let corpus = ensure_corpus(&o.dir, &o.size_text, o.size)?;
    let work = o.dir.join(format!("work-pick-{}", o.size_text));
    std::fs::create_dir_all(&work)?;
    let al_home = work.join("agentlog");
    if !al_home.join(".local/share/agentlog/index.sqlite").exists() {
        home_for(&corpus, &al_home)?;
        let mut c = crate::e2e::agentlog(o, &al_home, &["index"]);
        let t = Instant::now();
        let ok = c.status()?.success();
        anyhow::ensure!(ok, "agentlog index failed");
        println!(
            "agentlog index (cold, once): {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
    // Warm: a search and a listing read the index once before timing.
    let _ = crate::e2e::agentlog(o, &al_home, &["search", "parser"]).output();
    let t = Tmux::new(&work)?;
    let ours = Picker {
        name: "agentlog pick",
        command: format!("exec '{}' pick", o.agentlog.display()),
        home: al_home,
        ready: agentlog_ready,
        list: agentlog_list,
    };
    let runs = o.runs.clamp(1, 20);
    let a = measure(&t, &ours, runs, &mut missed, true);
    let fr = o
        .peers_bin
        .as_ref()
        .map(|b| b.join("fr"))
        .filter(|p| p.exists());
    let f = match &fr {
        Some(fr) => {
            let fr_home = work.join("fast-resume");
            if !fr_home.join(".done-fr").exists() {
                home_for(&corpus, &fr_home)?;
                let mut c = Command::new(fr);
                c.args(["--rebuild", "--list", "--limit", "1"]);
                crate::e2e::with_home(&mut c, &fr_home);
                let t0 = Instant::now();
                let _ = c.output();
                println!(
                    "fast-resume --rebuild (cold, once): {:.1} s",
                    t0.elapsed().as_secs_f64()
                );
                std::fs::write(fr_home.join(".done-fr"), b"")?;
            }
            let theirs = Picker {
                name: "fast-resume (fr)",
                command: format!("exec '{}'", fr.display()),
                home: fr_home,
                ready: fr_ready,
                list: fr_list,
            };
            measure(&t, &theirs, runs, &mut missed, false)
        }
        None => {
            println!("fast-resume skipped (not installed: scripts/install-bench-peers.sh)");
            None
        }
    };
    if let (Some(a), Some(f)) = (a, f) {
        println!(
            "ratio (fast-resume / agentlog): first screen {:.2}x, keystroke p50 {:.2}x, p99 {:.2}x",
            f.0 / a.0,
            f.1 / a.1.max(1e-4),
            f.2 / a.2.max(1e-4)
        );
    }
    println!("machine: {} (end)", uptime());
    Ok(missed)
}
