use crate::{config, out};
use agentlog_api::refresh;
use agentlog_formats::discover::Found;
use agentlog_index::{Index, Progress, UpdateReport};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use std::time::{Duration, Instant};

/// Build or refresh the search index of every session.
///
/// The index is one SQLite file (full-text search with FTS5), by default
/// $XDG_DATA_HOME/agentlog/index.sqlite (~/.local/share/agentlog/...). It is
/// a cache of the session files: unchanged files are skipped, append-only
/// files (pi, Claude Code, Codex) are read from where the last run stopped,
/// rewritten files are read again and deleted ones removed. `search`,
/// `stats` and `ls` refresh it themselves when that is cheap.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Read every session file again into a new index.
    #[arg(long)]
    pub rebuild: bool,
    /// Keep the index fresh: poll for changes (backing off to every 16 s
    /// when idle) until interrupted with Ctrl-C. An update interrupted
    /// half-way is rolled back; nothing is lost.
    #[arg(long, conflicts_with = "rebuild")]
    pub watch: bool,
    /// Check the whole index file for damage (SQLite's quick_check) now;
    /// without it the check runs when the last one is a week old.
    #[arg(long, conflicts_with = "watch")]
    pub check: bool,
    /// Print what was done as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub loc: IndexLocation,
}

/// Where the index is and where sessions are found.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct IndexLocation {
    /// The index file.
    #[arg(long = "index", value_name = "PATH", env = "AGENTLOG_INDEX")]
    pub index: Option<PathBuf>,
    /// Search PATH instead of AGENT's default locations (repeatable).
    #[arg(long = "root", value_name = "AGENT=PATH")]
    pub roots: Vec<String>,
}

impl IndexLocation {
    /// Returns the settings: discovery with the `--root` flags, and the
    /// index path (`--index`, else the default).
    pub fn resolve(&self) -> anyhow::Result<config::Settings> {
        let mut settings = config::settings(&self.roots)?;
        if let Some(p) = &self.index {
            settings.index_path = p.clone();
        }
        Ok(settings)
    }
}

/// Returns every session discovered with `settings`, printing discovery
/// problems when `warn`.
pub fn discover(settings: &config::Settings, warn: bool) -> anyhow::Result<Vec<Found>> {
    let (found, problems) = refresh::discover(settings)?;
    if warn {
        for d in &problems {
            crate::eprintln_clean!("agentlog: warning: {d}");
        }
    }
    Ok(found)
}

/// Opens the index at `path`, telling the user when it had to be replaced.
pub fn open(path: &std::path::Path) -> anyhow::Result<Index> {
    let (index, notice) = Index::open(path)?;
    if let Some(n) = notice {
        crate::eprintln_clean!("agentlog: {n}");
    }
    Ok(index)
}

/// Prints what happens while the index is opened and refreshed: notices,
/// and a progress bar while an empty index is built (on a terminal).
struct Shown {
    bar: Option<ProgressBar>,
    tty: bool,
}

impl Shown {
    fn new(tty: bool) -> Shown {
        Shown { bar: None, tty }
    }

    fn event(&mut self, e: refresh::Event<'_>) {
        match e {
            refresh::Event::Replaced { notice } => crate::eprintln_clean!("agentlog: {notice}"),
            refresh::Event::Building { files, path } if self.tty => {
                crate::eprintln_clean!(
                    "agentlog: building the index of {} at {}",
                    out::count(files as u64, "session"),
                    path.display()
                );
                self.bar = Some(bar(0));
            }
            refresh::Event::Building { .. } => {}
            refresh::Event::Progress(p) => show_progress(self.bar.as_ref(), p),
            refresh::Event::Archived(k) => warn_not_kept(k),
        }
    }

    fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// Says which files the archive could not keep, and why.
fn warn_not_kept(k: &agentlog_api::archive::Kept) {
    for f in &k.report.failed {
        crate::eprintln_clean!("agentlog: warning: not archived: {}", f.message);
    }
}

fn show_progress(pb: Option<&ProgressBar>, p: Progress) {
    if let Some(pb) = pb {
        pb.set_length(p.bytes_total.max(1));
        pb.set_position(p.bytes_done);
        pb.set_message(format!("{}/{} files", p.done, p.total));
    }
}

/// Returns the index, brought up to date first when that is cheap (see
/// [`refresh::refreshed`]); for `search`, `stats` and `ls --cached`.
pub fn refreshed(loc: &IndexLocation) -> anyhow::Result<Index> {
    let settings = loc.resolve()?;
    let mut shown = Shown::new(std::io::stderr().is_terminal());
    let (index, what) = refresh::refreshed(&settings, &mut |e| shown.event(e))?;
    shown.finish();
    if std::env::var_os("AGENTLOG_NO_BACKGROUND").is_none() && refresh::full_check_due(&index) {
        if let Ok(mut pending) = PENDING_CHECK.lock() {
            *pending = Some(loc.clone());
        }
    }
    if let refresh::Refreshed::Behind { files, bytes } = what {
        crate::eprintln_clean!(
            "agentlog: the index is behind by {} ({} MB); results may be stale. Run `agentlog index` to update it.",
            out::count(files as u64, "file"),
            bytes / 1_000_000
        );
    }
    Ok(index)
}

/// The full check a command found due ([`refreshed`]), started by
/// [`start_pending_check`] once the command has answered.
static PENDING_CHECK: std::sync::Mutex<Option<IndexLocation>> = std::sync::Mutex::new(None);

/// Starts the full check a command found due, if any: called when the
/// command has printed its answer, because the check's `stat` of every
/// session file takes both cores of a small machine for a while (a search
/// that started it first took 0.1–0.3 s instead of 13 ms at 1 GB).
pub fn start_pending_check() {
    let pending = PENDING_CHECK.lock().ok().and_then(|mut p| p.take());
    if let Some(loc) = pending {
        check_in_background(&loc);
    }
}

/// Starts `agentlog index` (same index, same roots) as a process of its
/// own that outlives this one, at the lowest CPU priority (through
/// `nice`, when there is one): the full check that finds appends to
/// sessions not written recently, without making this command or the next
/// wait.
fn check_in_background(loc: &IndexLocation) {
    use std::os::unix::process::CommandExt as _;
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let command = |niced: bool| {
        let mut cmd = if niced {
            let mut c = std::process::Command::new("nice");
            c.args(["-n", "19"]).arg(&exe);
            c
        } else {
            std::process::Command::new(&exe)
        };
        cmd.arg("index");
        for r in &loc.roots {
            cmd.arg("--root").arg(r);
        }
        if let Some(p) = &loc.index {
            cmd.arg("--index").arg(p);
        }
        cmd.env("AGENTLOG_NO_BACKGROUND", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            // Its own process group: a Ctrl-C meant for the next command
            // does not stop it half-way (it could not lose data, but would
            // redo).
            .process_group(0);
        cmd
    };
    // Not waited for: it finishes on its own, and the index's lock keeps
    // two updates from interleaving.
    if command(true).spawn().is_err() {
        let _ = command(false).spawn();
    }
}

fn bar(total_bytes: u64) -> ProgressBar {
    let pb =
        ProgressBar::with_draw_target(Some(total_bytes), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} indexing {msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}

/// Runs `agentlog index`.
pub fn cmd_index(args: Args) -> anyhow::Result<ExitCode> {
    let settings = args.loc.resolve()?;
    let tty = std::io::stderr().is_terminal();
    if args.watch {
        return watch(&settings, args.json);
    }
    let started = Instant::now();
    let discovered = refresh::discover_full(&settings)?;
    for d in &discovered.problems {
        crate::eprintln_clean!("agentlog: warning: {d}");
    }
    let pb = tty.then(|| bar(0));
    let mut kept = None;
    let (index, report) = refresh::update(&settings, &discovered, args.rebuild, &mut |e| match e {
        refresh::Event::Progress(p) => show_progress(pb.as_ref(), p),
        refresh::Event::Replaced { notice } => crate::eprintln_clean!("agentlog: {notice}"),
        refresh::Event::Archived(k) => {
            warn_not_kept(k);
            kept = Some(k.clone());
        }
        refresh::Event::Building { .. } => {}
    })
    .with_context(|| format!("updating the index at {}", settings.index_path.display()))?;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    // Damage in the middle of the file can go unnoticed by queries (they
    // return what they can read): look for it on a schedule.
    index.check_if_due(if args.check {
        Duration::ZERO
    } else {
        refresh::CHECK_EVERY
    })?;
    print_report(&index, &report, kept.as_ref(), started.elapsed(), args.json)?;
    Ok(if report.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_report(
    index: &Index,
    r: &UpdateReport,
    kept: Option<&agentlog_api::archive::Kept>,
    took: Duration,
    json: bool,
) -> anyhow::Result<()> {
    let (entries, sessions, failed) = index.counts()?;
    if json {
        let v = serde_json::json!({
            "index": index.path(),
            "sessions": sessions,
            "entries": entries,
            "files_with_errors": failed,
            "update": r,
            "archive": kept.map(|k| &k.report),
            "seconds": took.as_secs_f64(),
        });
        return out::print_json(&v);
    }
    out::print(&format!(
        "{}, {} in {}\nthis run: {} read in full, {} appended, {} unchanged, {} removed, {} failed ({:.1} MB in {:.2} s)\n",
        out::count(sessions, "session"),
        out::count(entries, "entry"),
        index.path().display(),
        out::count(r.read_full as u64, "file"),
        out::group(r.appended as u64),
        out::group(r.unchanged as u64),
        out::group(r.removed as u64),
        out::group(r.failed as u64),
        r.bytes_read as f64 / 1e6,
        took.as_secs_f64()
    ))?;
    if let Some(k) = kept {
        let a = &k.report;
        if a.new + a.appended + a.rewritten + a.failed.len() + k.pruned > 0 || k.noticed > 0 {
            out::print(&format!(
                "archive: {} new, {} grew, {} rewritten (a new version each), {} not kept; {} stored{}\n",
                out::count(a.new as u64, "file"),
                out::group(a.appended as u64),
                out::group(a.rewritten as u64),
                out::group(a.failed.len() as u64),
                crate::commands::archive::bytes(a.bytes_stored),
                match k.noticed {
                    0 => String::new(),
                    n => format!("; {} noticed deleted or back", out::count(n as u64, "session")),
                } + &match k.pruned {
                    0 => String::new(),
                    n => format!("; {} dropped (archive_keep_days)", out::count(n as u64, "old state")),
                }
            ))?;
        }
    }
    if failed > 0 {
        for (p, e) in index.failed_files()? {
            crate::eprintln_clean!("agentlog: warning: {p}: {e}");
        }
    }
    Ok(())
}

fn watch(settings: &config::Settings, json: bool) -> anyhow::Result<ExitCode> {
    crate::eprintln_clean!(
        "agentlog: watching sessions; index at {} (Ctrl-C to stop)",
        settings.index_path.display()
    );
    let mut events = |e: refresh::Event<'_>| {
        if let refresh::Event::Replaced { notice } = e {
            crate::eprintln_clean!("agentlog: {notice}");
        }
    };
    refresh::watch(settings, &mut events, &mut |r, took| {
        let printed = if json {
            serde_json::to_string(r)
                .map_err(anyhow::Error::from)
                .and_then(|line| out::print(&format!("{line}\n")))
        } else {
            out::print(&format!(
                "{} updated ({} appended, {} removed, {}) in {:.0} ms\n",
                out::count((r.read_full + r.appended + r.failed) as u64, "file"),
                r.appended,
                r.removed,
                out::count(r.entries, "entry"),
                took.as_secs_f64() * 1000.0
            ))
        };
        // A closed standard output ends the watch.
        Ok(printed.is_ok())
    })?;
    Ok(ExitCode::SUCCESS)
}
