//! Peak memory of whole `agentlog` commands per MB of input
//! (`agentlog-bench rss`): a large pi session (`show`, `validate`, `tree`,
//! `index`) and a pi header followed by millions of tiny records. Each
//! command runs as a user runs it; its peak resident set comes from the
//! kernel (`wait4`), so the figure is the process's, allocator included.
#![allow(unsafe_code)] // wait4 and its rusage: the kernel's peak memory of a child

use anyhow::{bail, Context};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One measured command.
#[derive(Debug, Clone)]
pub struct Measured {
    /// What ran on what.
    pub label: String,
    /// The input's size in MB.
    pub input_mb: f64,
    /// The peak resident set in MB.
    pub peak_mb: f64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// The target, in words.
    pub target: String,
    /// True when the target is met.
    pub met: bool,
}

/// Writes a pi session of about `bytes` bytes: a chain of user prompts,
/// assistant answers with a tool call, and tool results.
pub fn write_large_pi(path: &Path, bytes: u64) -> std::io::Result<u64> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut written = 0u64;
    let header = "{\"type\":\"session\",\"version\":3,\"id\":\"5e55f00d-1111-4222-8333-444455556666\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/home/dev/src/big\"}\n";
    w.write_all(header.as_bytes())?;
    written += header.len() as u64;
    let words = crate::words::PROJECTS;
    let mut parent = String::from("null");
    let mut k = 0u64;
    while written < bytes {
        let mut text = String::new();
        for i in 0..300 {
            text.push_str(words[(k as usize + i) % words.len()]);
            text.push(' ');
        }
        let lines = [
            format!("{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":\"step {k}: {text}\"}}],\"timestamp\":1767225600000}}"),
            format!("{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}},{{\"type\":\"toolCall\",\"id\":\"call_{k}\",\"name\":\"bash\",\"arguments\":{{\"command\":\"grep -rn step{k} src\"}}}}],\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\",\"usage\":{{\"input\":1200,\"output\":300,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":1500,\"cost\":{{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}}},\"stopReason\":\"toolUse\",\"timestamp\":1767225600000}}"),
            format!("{{\"role\":\"toolResult\",\"toolCallId\":\"call_{k}\",\"toolName\":\"bash\",\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}],\"isError\":false,\"timestamp\":1767225600000}}"),
        ];
        for message in lines {
            k += 1;
            let id = format!("{k:08x}");
            let parent_json = if parent == "null" {
                "null".to_string()
            } else {
                format!("\"{parent}\"")
            };
            let line = format!(
                "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent_json},\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{message}}}\n"
            );
            w.write_all(line.as_bytes())?;
            written += line.len() as u64;
            parent = id;
        }
    }
    w.flush()?;
    Ok(written)
}

/// Writes a pi header followed by `records` lines of `{}`.
pub fn write_tiny(path: &Path, records: u64) -> std::io::Result<u64> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    let header = "{\"type\":\"session\",\"version\":3,\"id\":\"11111111-2222-3333-4444-555555555555\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/tmp/x\"}\n";
    w.write_all(header.as_bytes())?;
    for _ in 0..records {
        w.write_all(b"{}\n")?;
    }
    w.flush()?;
    Ok(header.len() as u64 + 3 * records)
}

/// What [`reap`] found of a child.
pub(crate) enum Reaped {
    /// Still running.
    Running,
    /// Gone: its exit code (`None` when a signal ended it), the peak of
    /// its resident set in KiB and its CPU time (user and system) in
    /// seconds, as the kernel counted them.
    Exited {
        code: Option<i32>,
        max_kib: u64,
        cpu_s: f64,
    },
    /// Not a child of this process any more (reaped elsewhere).
    Lost,
}

/// Reaps the child `pid` if it has ended, without waiting.
pub(crate) fn reap(pid: u32) -> Reaped {
    wait(pid, libc::WNOHANG)
}

/// `wait4` on the child `pid` with `flags`.
fn wait(pid: u32, flags: libc::c_int) -> Reaped {
    let mut status = 0;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: wait4 on our own child's pid, with valid pointers for the
    // status and the usage it fills.
    let rc = unsafe { libc::wait4(pid as libc::pid_t, &mut status, flags, usage.as_mut_ptr()) };
    match rc {
        0 => Reaped::Running,
        rc if rc == pid as libc::pid_t => {
            // SAFETY: filled by the successful wait4 above.
            let usage = unsafe { usage.assume_init() };
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            Reaped::Exited {
                code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
                max_kib: usage.ru_maxrss.max(0) as u64,
                cpu_s: secs(usage.ru_utime) + secs(usage.ru_stime),
            }
        }
        _ => Reaped::Lost,
    }
}

/// Runs `cmd` to its end; returns whether it exited with 0, its wall time
/// and its own CPU time (user and system, in microseconds as the kernel
/// counts them: the process-wide count of finished children has clock-tick
/// steps, too coarse for a command of a few milliseconds).
pub fn timed(cmd: &mut std::process::Command) -> anyhow::Result<(bool, f64, f64)> {
    let t = std::time::Instant::now();
    let child = cmd.spawn()?;
    match wait(child.id(), 0) {
        Reaped::Exited { code, cpu_s, .. } => {
            Ok((code == Some(0), t.elapsed().as_secs_f64(), cpu_s))
        }
        Reaped::Running | Reaped::Lost => anyhow::bail!("lost the child {}", child.id()),
    }
}

/// Runs `exe args` with output discarded and `HOME` at `home`; returns the
/// peak resident set in bytes and the wall time.
pub fn peak_of(exe: &Path, args: &[&str], home: &Path) -> anyhow::Result<(u64, f64)> {
    let started = std::time::Instant::now();
    let child = Command::new(exe)
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("AGENTLOG_INDEX", home.join("index.sqlite"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running {}", exe.display()))?;
    let (code, kib) = match wait(child.id(), 0) {
        Reaped::Exited { code, max_kib, .. } => (code, max_kib),
        Reaped::Running | Reaped::Lost => bail!("wait4 failed for {args:?}"),
    };
    let seconds = started.elapsed().as_secs_f64();
    if code.is_none_or(|c| c > 1) {
        bail!("agentlog {args:?} failed (exit status {code:?})");
    }
    Ok((kib * 1024, seconds))
}

/// Runs the whole benchmark: a pi session of `big_bytes` and a tiny-lines
/// file of `tiny_records` records, in `dir`, with the binary `exe`.
pub fn run(
    exe: &Path,
    dir: &Path,
    big_bytes: u64,
    tiny_records: u64,
) -> anyhow::Result<Vec<Measured>> {
    std::fs::create_dir_all(dir)?;
    let home = dir.join("home");
    std::fs::create_dir_all(&home)?;
    let big: PathBuf = dir.join("large-pi-session.jsonl");
    let tiny: PathBuf = dir.join("tiny-records.jsonl");
    eprintln!("writing {} …", big.display());
    let big_size = write_large_pi(&big, big_bytes)?;
    let tiny_size = write_tiny(&tiny, tiny_records)?;
    let mb = |b: u64| b as f64 / 1e6;
    let mut out = Vec::new();
    let big_s = big.display().to_string();
    for cmd in ["show", "validate", "tree", "index"] {
        let args: Vec<&str> = if cmd == "index" {
            // Index the one file (its folder as the pi root).
            vec!["index", "--rebuild", "--root"]
        } else {
            vec![cmd, big_s.as_str()]
        };
        let root = format!("pi={}", dir.display());
        let mut full = args.clone();
        if cmd == "index" {
            full.push(&root);
        }
        eprintln!("agentlog {} …", full.join(" "));
        let (peak, seconds) = peak_of(exe, &full, &home)?;
        let ratio = peak as f64 / big_size as f64;
        let (target, met) = match cmd {
            "index" => ("(no target; streamed into the index)".to_string(), true),
            _ => ("≤ 2.0x the file".to_string(), ratio <= 2.0),
        };
        out.push(Measured {
            label: format!("{cmd} of a {:.0} MB pi session", mb(big_size)),
            input_mb: mb(big_size),
            peak_mb: mb(peak),
            seconds,
            target,
            met,
        });
    }
    let tiny_s = tiny.display().to_string();
    for cmd in ["validate", "show", "tree"] {
        eprintln!("agentlog {cmd} {tiny_s} …");
        let (peak, seconds) = peak_of(exe, &[cmd, &tiny_s], &home)?;
        out.push(Measured {
            label: format!("{cmd} of a pi header + {tiny_records} `{{}}` lines"),
            input_mb: mb(tiny_size),
            peak_mb: mb(peak),
            seconds,
            target: "≤ 500 MB".into(),
            met: mb(peak) <= 500.0,
        });
    }
    let _ = std::fs::remove_file(&big);
    let _ = std::fs::remove_file(&tiny);
    let _ = std::fs::remove_dir_all(&home);
    Ok(out)
}

/// The figures as a table.
pub fn table(rows: &[Measured]) -> String {
    let mut s = format!(
        "{:<48} {:>9} {:>10} {:>8} {:>8}  {}\n",
        "command", "input MB", "peak MB", "peak/in", "seconds", "target"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<48} {:>9.1} {:>10.1} {:>8.2} {:>8.1}  {} {}\n",
            r.label,
            r.input_mb,
            r.peak_mb,
            r.peak_mb / r.input_mb,
            r.seconds,
            r.target,
            if r.met { "met" } else { "MISSED" }
        ));
    }
    s
}
