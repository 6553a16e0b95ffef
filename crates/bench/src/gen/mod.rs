//! A deterministic corpus of agent sessions, laid out like a real home
//! directory so discovery finds them.
//!
//! Each session is first drawn as an agent-neutral conversation ([`Conv`]:
//! turns of a prompt, thinking, tool calls with output, an answer, and the
//! usage of every model response) from a random generator seeded with the
//! corpus seed and the session number, then written in one agent's native
//! format by that format's module. The same seed and size give the same
//! files byte for byte.

mod claude;
mod codex;
mod gemini;
mod pi;
mod seeds;
pub mod story;

use crate::words;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// 2025-03-01T00:00:00Z: the first day sessions start in [`generate`]'s
/// corpus, whose dates tests depend on; `agentlog-bench gen` dates its
/// corpus before today instead ([`GenOptions::recent`]).
pub const EPOCH_MS: i64 = 1_740_787_200_000;
/// Sessions start within this many days after [`EPOCH_MS`].
pub const SPAN_DAYS: i64 = 180;

/// One tool call and its output.
#[derive(Clone, Debug)]
pub struct Step {
    /// A generic tool kind: `bash`, `read`, `edit`, `grep`.
    pub kind: &'static str,
    /// The command, path or pattern.
    pub arg: String,
    /// Second argument (the replacement for edits).
    pub arg2: String,
    /// The output.
    pub output: String,
    /// Text the model says before calling the tool.
    pub preface: Option<String>,
    /// Usage of the response that made the call.
    pub usage: Usage,
}

/// Token usage of one model response (input excludes cache reads).
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    /// Input tokens not read from cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache reads.
    pub cache_read: u64,
    /// Cache writes.
    pub cache_write: u64,
}

/// One user turn.
#[derive(Clone, Debug)]
pub struct Turn {
    /// The prompt.
    pub user: String,
    /// The model's thinking, when shown.
    pub thinking: Option<String>,
    /// Tool calls, in order.
    pub steps: Vec<Step>,
    /// The final answer.
    pub answer: String,
    /// Usage of the final answer.
    pub usage: Usage,
    /// True when the prompt was asked again from where the previous turn
    /// started (the user edited it): a new branch of the session tree.
    pub branch: bool,
}

/// An agent-neutral conversation.
#[derive(Clone, Debug)]
pub struct Conv {
    /// The session number in the corpus.
    pub number: u64,
    /// A UUID.
    pub id: String,
    /// The project directory.
    pub project: String,
    /// Start time, ms since the epoch.
    pub start_ms: i64,
    /// The turns.
    pub turns: Vec<Turn>,
}

impl Conv {
    /// Returns the time of the `k`-th record (records are 2–9 s apart).
    pub fn at(&self, k: u64) -> i64 {
        self.start_ms + (k as i64) * 5_000 + ((k * 7919) % 4000) as i64
    }
}

/// Returns an RFC 3339 UTC time with milliseconds.
pub fn iso(ms: i64) -> String {
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default()
}

/// Returns a UUID (version 4 layout) from the generator.
pub fn uuid(rng: &mut impl Rng) -> String {
    let a: u64 = rng.gen();
    let b: u64 = rng.gen();
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

fn usage(rng: &mut impl Rng, k: u64) -> Usage {
    Usage {
        input: rng.gen_range(1..400),
        output: rng.gen_range(20..1500),
        cache_read: 2_000 + k * rng.gen_range(500..3000),
        cache_write: if rng.gen_ratio(1, 3) {
            rng.gen_range(100..5000)
        } else {
            0
        },
    }
}

fn step(rng: &mut impl Rng, project: &str, k: u64) -> Step {
    let file = format!("{project}/{}", words::pick(rng, words::FILES));
    let (kind, arg, arg2, output) = match rng.gen_range(0..10) {
        0..=3 => {
            let cmd = words::pick(rng, words::COMMANDS).to_string();
            let lines = words::skewed(rng, 60) + 2;
            let mut out = words::code(rng, lines);
            if rng.gen_ratio(1, 4) {
                out.push_str("error: ");
                out.push_str(&words::prose(rng, 12));
            }
            ("bash", cmd, String::new(), out)
        }
        4..=6 => {
            let lines = words::skewed(rng, 120) + 5;
            ("read", file, String::new(), words::code(rng, lines))
        }
        7..=8 => {
            let old = words::code(rng, 2);
            let new = words::code(rng, 3);
            (
                "edit",
                file.clone(),
                format!("{old}\u{0}{new}"),
                format!("The file {file} has been updated."),
            )
        }
        _ => {
            let pat = words::CODE[words::skewed(rng, words::CODE.len())].to_string();
            let n = rng.gen_range(1..12);
            let mut out = String::new();
            for i in 0..n {
                out.push_str(&format!(
                    "{project}/{}:{}: {pat}\n",
                    words::pick(rng, words::FILES),
                    i * 7 + 3
                ));
            }
            ("grep", pat, String::new(), out)
        }
    };
    Step {
        kind,
        arg,
        arg2,
        output,
        preface: rng.gen_ratio(1, 2).then(|| {
            let n = rng.gen_range(6..30);
            words::prose(rng, n)
        }),
        usage: usage(rng, k),
    }
}

/// How a corpus is drawn.
#[derive(Clone, Copy, Debug)]
pub struct GenOptions {
    /// The first day sessions start (ms since the epoch).
    pub epoch_ms: i64,
    /// Sessions start within this many days after `epoch_ms`.
    pub span_days: i64,
    /// Scripted, plausible conversations (for demos) instead of the
    /// vocabulary of every word frequency (for search benchmarks).
    pub plausible: bool,
}

impl Default for GenOptions {
    fn default() -> GenOptions {
        GenOptions {
            epoch_ms: EPOCH_MS,
            span_days: SPAN_DAYS,
            plausible: false,
        }
    }
}

impl GenOptions {
    /// Returns options dating the corpus over the [`SPAN_DAYS`] days before
    /// `now_ms`'s day (the same all day long; the default's sessions, moved
    /// in time): what `agentlog-bench gen` writes, so that `ls --since 30d`
    /// finds the last month's sessions.
    pub fn recent(now_ms: i64) -> GenOptions {
        const DAY: i64 = 86_400_000;
        // A session starts up to SPAN_DAYS days and one day (of jitter)
        // after the epoch: all before today.
        GenOptions {
            epoch_ms: now_ms - now_ms.rem_euclid(DAY) - (SPAN_DAYS + 1) * DAY,
            ..GenOptions::default()
        }
    }

    /// Returns options for a demo: plausible conversations over the
    /// `span_days` days before `now_ms`'s day (the same all day long).
    pub fn demo(now_ms: i64, span_days: i64) -> GenOptions {
        const DAY: i64 = 86_400_000;
        GenOptions {
            epoch_ms: now_ms - now_ms.rem_euclid(DAY) - span_days * DAY,
            span_days: span_days - 1,
            plausible: true,
        }
    }
}

/// Draws conversation number `n` of the corpus with `seed`.
pub fn conv(seed: u64, n: u64) -> Conv {
    conv_with(seed, n, &GenOptions::default())
}

/// Returns a conversation of at least `turns` turns: conversation 1 of the
/// corpus with `seed`, continued with the turns of the ones after it (a
/// long session, for what only long sessions show).
pub fn long_conv(seed: u64, turns: usize) -> Conv {
    let mut c = conv(seed, 1);
    let mut n = 2;
    while c.turns.len() < turns {
        c.turns.extend(conv(seed, n).turns);
        n += 1;
    }
    c
}

/// Draws conversation number `n` of the corpus with `seed` and `opts`.
pub fn conv_with(seed: u64, n: u64, opts: &GenOptions) -> Conv {
    let mut rng = StdRng::seed_from_u64(seed ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let id = uuid(&mut rng);
    let project = format!(
        "/home/dev/src/{}",
        words::PROJECTS[words::skewed(&mut rng, words::PROJECTS.len())]
    );
    // Later sessions are newer, with jitter.
    let span = opts.span_days.max(1);
    let day = ((n as i64 * 7) % span + rng.gen_range(0..3)).min(span);
    let start_ms = opts.epoch_ms + day * 86_400_000 + rng.gen_range(0..86_400_000);
    if opts.plausible {
        return scripted(&mut rng, n, id, project, start_ms);
    }
    let nturns = rng.gen_range(3..28);
    let mut turns = Vec::with_capacity(nturns);
    let mut k = 0u64;
    for _ in 0..nturns {
        let n = rng.gen_range(8..70);
        let user = words::prose(&mut rng, n);
        let thinking = rng.gen_ratio(3, 5).then(|| {
            let n = rng.gen_range(15..160);
            words::prose(&mut rng, n)
        });
        let nsteps = words::skewed(&mut rng, 7);
        let steps = (0..nsteps)
            .map(|_| {
                k += 1;
                step(&mut rng, &project, k)
            })
            .collect();
        k += 1;
        let n = rng.gen_range(10..220);
        let answer = words::prose(&mut rng, n);
        turns.push(Turn {
            user,
            thinking,
            steps,
            answer,
            usage: usage(&mut rng, k),
            branch: false,
        });
    }
    Conv {
        number: n,
        id,
        project,
        start_ms,
        turns,
    }
}

/// Returns a conversation following one of the [`story::STORIES`]; one in
/// three asks its last prompt again differently (a branch).
fn scripted(rng: &mut StdRng, n: u64, id: String, project: String, start_ms: i64) -> Conv {
    let st = &story::STORIES[(n as usize) % story::STORIES.len()];
    let mut turns = Vec::new();
    let mut k = 0u64;
    for b in st.beats {
        let steps = b
            .calls
            .iter()
            .map(|(kind, arg, output)| {
                k += 1;
                let (arg2, preface) = if *kind == "edit" {
                    ("old\u{0}new".to_string(), None)
                } else {
                    (String::new(), None)
                };
                Step {
                    kind,
                    arg: arg.to_string(),
                    arg2,
                    output: output.to_string(),
                    preface,
                    usage: usage(rng, k),
                }
            })
            .collect();
        k += 1;
        turns.push(Turn {
            user: b.user.to_string(),
            thinking: Some(b.thinking.to_string()),
            steps,
            answer: b.answer.to_string(),
            usage: usage(rng, k),
            branch: false,
        });
    }
    if rng.gen_ratio(1, 3) {
        k += 1;
        turns.push(Turn {
            user: st.retry.to_string(),
            thinking: Some("The user wants a different approach to the same step.".to_string()),
            steps: Vec::new(),
            answer: "Done that way instead; the earlier attempt stays on its own branch."
                .to_string(),
            usage: usage(rng, k),
            branch: true,
        });
    }
    Conv {
        number: n,
        id,
        project,
        start_ms,
        turns,
    }
}

/// The agents sessions are written for, with their share of sessions.
pub const AGENTS: &[(&str, u32)] = &[
    ("claude", 34),
    ("codex", 24),
    ("pi", 16),
    ("gemini", 12),
    ("codelia", 8),
    ("jido", 6),
];

/// Returns the agent of session `n`.
pub fn agent_of(seed: u64, n: u64) -> &'static str {
    let total: u32 = AGENTS.iter().map(|a| a.1).sum();
    let mut rng = StdRng::seed_from_u64(seed.wrapping_add(n).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let mut r = rng.gen_range(0..total);
    for (a, w) in AGENTS {
        if r < *w {
            return a;
        }
        r -= w;
    }
    "claude"
}

/// Writes one session under `home` in `agent`'s native layout; returns the
/// file written.
pub fn write_session(home: &Path, agent: &str, c: &Conv) -> std::io::Result<PathBuf> {
    match agent {
        "claude" => claude::write(home, c),
        "codex" => codex::write(home, c),
        "gemini" => gemini::write(home, c),
        "pi" => pi::write(home, c),
        "codelia" => seeds::write_codelia(home, c),
        "jido" => seeds::write_jido(home, c),
        other => Err(std::io::Error::other(format!("no generator for {other}"))),
    }
}

/// What a corpus generation wrote.
#[derive(Clone, Debug, Default)]
pub struct Generated {
    /// Session files written, with their agent.
    pub files: Vec<(PathBuf, &'static str)>,
    /// Bytes written.
    pub bytes: u64,
}

/// Writes sessions under `home` until they reach `size` bytes.
pub fn generate(home: &Path, size: u64, seed: u64) -> std::io::Result<Generated> {
    generate_with(home, size, seed, &GenOptions::default())
}

/// Writes sessions drawn with `opts` under `home` until they reach `size`
/// bytes.
pub fn generate_with(
    home: &Path,
    size: u64,
    seed: u64,
    opts: &GenOptions,
) -> std::io::Result<Generated> {
    let mut g = Generated::default();
    let mut n = 0u64;
    while g.bytes < size {
        let agent = agent_of(seed, n);
        let c = conv_with(seed, n, opts);
        let path = write_session(home, agent, &c)?;
        g.bytes += std::fs::metadata(&path)?.len();
        g.files.push((path, agent));
        n += 1;
    }
    Ok(g)
}

/// Writes JSON values as lines to a new file (creating its directory).
pub(crate) fn write_lines(path: &Path, lines: &[Value]) -> std::io::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let mut w = std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(path)?);
    for v in lines {
        serde_json::to_writer(&mut w, v).map_err(std::io::Error::other)?;
        w.write_all(b"\n")?;
    }
    w.flush()?;
    let mtime = std::time::UNIX_EPOCH
        + std::time::Duration::from_millis(
            lines
                .iter()
                .rev()
                .find_map(record_time)
                .unwrap_or(EPOCH_MS)
                .max(0) as u64,
        );
    w.get_ref().set_modified(mtime)?;
    Ok(())
}

/// Writes one JSON document to a new file.
pub(crate) fn write_doc(path: &Path, doc: &Value, mtime_ms: i64) -> std::io::Result<()> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    let f = std::fs::File::create(path)?;
    let mut w = std::io::BufWriter::new(&f);
    serde_json::to_writer_pretty(&mut w, doc).map_err(std::io::Error::other)?;
    w.write_all(b"\n")?;
    w.flush()?;
    drop(w);
    f.set_modified(
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(mtime_ms.max(0) as u64),
    )?;
    Ok(())
}

fn record_time(v: &Value) -> Option<i64> {
    ["timestamp", "ts"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .map(|d| d.timestamp_millis())
}

/// Returns the bash/read/edit/grep call of a step in a common JSON shape.
pub(crate) fn generic_input(s: &Step) -> Value {
    match s.kind {
        "bash" => json!({ "command": s.arg }),
        "read" => json!({ "path": s.arg }),
        "edit" => {
            let (old, new) = s.arg2.split_once('\u{0}').unwrap_or(("", ""));
            json!({ "path": s.arg, "oldText": old, "newText": new })
        }
        _ => json!({ "pattern": s.arg }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_conversation() {
        let a = conv(7, 3);
        let b = conv(7, 3);
        assert_eq!(a.id, b.id);
        assert_eq!(a.turns.len(), b.turns.len());
        assert_eq!(a.turns[0].user, b.turns[0].user);
        assert_ne!(conv(8, 3).id, a.id);
    }

    #[test]
    fn a_recent_corpus_is_the_default_one_dated_before_now() {
        let now = 1_800_000_000_000;
        let opts = GenOptions::recent(now);
        let month_ago = now - 30 * 86_400_000;
        let convs: Vec<Conv> = (0..200).map(|n| conv_with(7, n, &opts)).collect();
        assert!(convs.iter().all(|c| c.start_ms < now), "all before now");
        assert!(
            convs.iter().any(|c| c.start_ms >= month_ago),
            "some this month"
        );
        assert!(convs.iter().any(|c| c.start_ms < month_ago), "some older");
        let fixed = conv(7, 3);
        let moved = conv_with(7, 3, &opts);
        assert_eq!(fixed.id, moved.id);
        assert_eq!(fixed.turns[0].user, moved.turns[0].user);
        assert_eq!(
            (moved.start_ms - fixed.start_ms) % 86_400_000,
            0,
            "moved by whole days"
        );
    }

    #[test]
    fn demo_conversations_are_recent_scripted_and_some_branch() {
        let now = 1_800_000_000_000;
        let opts = GenOptions::demo(now, 14);
        let convs: Vec<Conv> = (0..30).map(|n| conv_with(7, n, &opts)).collect();
        for c in &convs {
            assert!(
                c.start_ms < now && c.start_ms > now - 15 * 86_400_000,
                "{}",
                c.start_ms
            );
            assert!(story::STORIES
                .iter()
                .any(|s| s.beats[0].user == c.turns[0].user));
        }
        assert!(convs.iter().any(|c| c.turns.iter().any(|t| t.branch)));
        assert!(convs.iter().any(|c| c.turns.iter().all(|t| !t.branch)));
    }
}
