use crate::{config, out};
use agentlog_formats::discover::{discover_report, Found};
use agentlog_index::{Index, Plan, Progress, UpdateReport};
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

/// How often `agentlog index` checks the whole file for damage.
const CHECK_EVERY: Duration = Duration::from_secs(7 * 24 * 3600);

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
    /// Returns the discovery settings and the index path.
    pub fn resolve(&self) -> anyhow::Result<(config::Settings, PathBuf)> {
        let settings = config::settings(&self.roots)?;
        let path = match &self.index {
            Some(p) => p.clone(),
            None => settings
                .env
                .xdg_data_home()
                .join("agentlog")
                .join("index.sqlite"),
        };
        Ok((settings, path))
    }
}

/// Returns every session discovered with `settings`, printing discovery
/// problems when `warn`.
pub fn discover(settings: &config::Settings, warn: bool) -> anyhow::Result<Vec<Found>> {
    let formats = settings.formats(&[])?;
    let report = discover_report(&settings.env, Some(&formats));
    if warn {
        for d in &report.diagnostics {
            eprintln!("agentlog: warning: {d}");
        }
    }
    Ok(report.found)
}

/// Opens the index at `path`, telling the user when it had to be replaced.
pub fn open(path: &std::path::Path) -> anyhow::Result<Index> {
    let (index, notice) = Index::open(path)?;
    if let Some(n) = notice {
        eprintln!("agentlog: {n}");
    }
    Ok(index)
}

/// A refresh reads at most this much before a command runs; beyond it the
/// command uses the index as it is and says to run `agentlog index`.
const CHEAP_FILES: usize = 200;
const CHEAP_BYTES: u64 = 64 * 1024 * 1024;

/// Returns the index, brought up to date first when that is cheap (a stat of
/// every file shows little to read) or when it is empty; for `search`,
/// `stats` and `ls`.
pub fn refreshed(loc: &IndexLocation) -> anyhow::Result<Index> {
    let (settings, path) = loc.resolve()?;
    let mut index = open(&path)?;
    let found = discover(&settings, false)?;
    let plan = index.plan(&found)?;
    if plan.is_empty() {
        return Ok(index);
    }
    let empty = index.counts()?.1 == 0 && index.file_state_count()? == 0;
    if empty || (plan.files_to_read() <= CHEAP_FILES && plan.bytes <= CHEAP_BYTES) {
        let tty = std::io::stderr().is_terminal();
        if empty && tty {
            eprintln!(
                "agentlog: building the index of {} sessions at {}",
                plan.files_to_read(),
                path.display()
            );
        }
        run_with_progress(&mut index, plan, empty && tty)?;
    } else {
        eprintln!(
            "agentlog: the index is behind by {} files ({} MB); results may be stale. Run `agentlog index` to update it.",
            plan.files_to_read() + plan.files_to_remove(),
            plan.bytes / 1_000_000
        );
    }
    Ok(index)
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

fn run_with_progress(index: &mut Index, plan: Plan, show: bool) -> anyhow::Result<UpdateReport> {
    if !show {
        return Ok(index.apply(plan, &mut |_| {})?);
    }
    let pb = bar(plan.bytes);
    let report = index.apply(plan, &mut |p: Progress| {
        pb.set_length(p.bytes_total.max(1));
        pb.set_position(p.bytes_done);
        pb.set_message(format!("{}/{} files", p.done, p.total));
    });
    pb.finish_and_clear();
    Ok(report?)
}

/// Runs `agentlog index`.
pub fn cmd_index(args: Args) -> anyhow::Result<ExitCode> {
    let (settings, path) = args.loc.resolve()?;
    let tty = std::io::stderr().is_terminal();
    if args.watch {
        return watch(&settings, &path, args.json);
    }
    let started = Instant::now();
    let found = discover(&settings, true)?;
    let (index, report) = if args.rebuild {
        let pb = tty.then(|| bar(0));
        let r = Index::rebuild(&path, &found, &mut |p: Progress| {
            if let Some(pb) = &pb {
                pb.set_length(p.bytes_total.max(1));
                pb.set_position(p.bytes_done);
                pb.set_message(format!("{}/{} files", p.done, p.total));
            }
        })
        .with_context(|| format!("rebuilding the index at {}", path.display()))?;
        if let Some(pb) = pb {
            pb.finish_and_clear();
        }
        r
    } else {
        let mut index = open(&path)?;
        let plan = index.plan(&found)?;
        let report = run_with_progress(&mut index, plan, tty)?;
        (index, report)
    };
    // Damage in the middle of the file can go unnoticed by queries (they
    // return what they can read): look for it on a schedule.
    index.check_if_due(if args.check {
        Duration::ZERO
    } else {
        CHECK_EVERY
    })?;
    print_report(&index, &report, started.elapsed(), args.json)?;
    Ok(if report.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_report(index: &Index, r: &UpdateReport, took: Duration, json: bool) -> anyhow::Result<()> {
    let (entries, sessions, failed) = index.counts()?;
    if json {
        let v = serde_json::json!({
            "index": index.path(),
            "sessions": sessions,
            "entries": entries,
            "files_with_errors": failed,
            "update": r,
            "seconds": took.as_secs_f64(),
        });
        return out::print_json(&v);
    }
    out::print(&format!(
        "{} sessions, {} entries in {}\nthis run: {} files read in full, {} appended, {} unchanged, {} removed, {} failed ({:.1} MB in {:.2} s)\n",
        sessions,
        entries,
        index.path().display(),
        r.read_full,
        r.appended,
        r.unchanged,
        r.removed,
        r.failed,
        r.bytes_read as f64 / 1e6,
        took.as_secs_f64()
    ))?;
    if failed > 0 {
        for (p, e) in index.failed_files()? {
            eprintln!("agentlog: warning: {p}: {e}");
        }
    }
    Ok(())
}

fn watch(
    settings: &config::Settings,
    path: &std::path::Path,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut index = open(path)?;
    eprintln!(
        "agentlog: watching sessions; index at {} (Ctrl-C to stop)",
        path.display()
    );
    let min = Duration::from_millis(500);
    let max = Duration::from_secs(16);
    let mut wait = min;
    loop {
        let started = Instant::now();
        let found = discover(settings, false)?;
        let plan = index.plan(&found)?;
        if plan.is_empty() {
            wait = (wait * 2).min(max);
        } else {
            let r = index.apply(plan, &mut |_| {})?;
            if json {
                let line = serde_json::to_string(&r)?;
                out::print(&format!("{line}\n"))?;
            } else {
                out::print(&format!(
                    "{} files updated ({} appended, {} removed, {} entries) in {:.0} ms\n",
                    r.read_full + r.appended + r.failed,
                    r.appended,
                    r.removed,
                    r.entries,
                    started.elapsed().as_secs_f64() * 1000.0
                ))?;
            }
            wait = min;
        }
        std::thread::sleep(wait);
    }
}
