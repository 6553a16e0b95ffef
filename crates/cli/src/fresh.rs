//! What the CLI shows and starts around the index a command reads (the
//! policy is [`agentlog_api::refresh`]'s): where the index is from the
//! flags, notices and progress bars while it is refreshed, and the full
//! check a command found due, started in the background once it has
//! answered.

use crate::{config, out};
use agentlog_api::refresh;
use agentlog_formats::discover::Found;
use agentlog_index::{Index, Progress};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;

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
        config::settings_at(self.index.as_deref(), &self.roots)
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
pub fn warn_not_kept(k: &agentlog_api::archive::Kept) {
    for f in &k.report.failed {
        crate::eprintln_clean!("agentlog: warning: not archived: {}", f.message);
    }
}

/// Shows `p` on the progress bar, when there is one.
pub fn show_progress(pb: Option<&ProgressBar>, p: Progress) {
    if let Some(pb) = pb {
        pb.set_length(p.bytes_total.max(1));
        pb.set_position(p.bytes_done);
        pb.set_message(format!("{}/{} files", p.done, p.total));
    }
}

/// Returns the index at `loc` as [`refresh::for_reading`] leaves it,
/// showing what it does; for `search`, `stats`, `ls --cached` and
/// `export --all`. A full check found due starts once the command has
/// answered ([`start_pending_check`]).
pub fn refreshed(loc: &IndexLocation) -> anyhow::Result<Index> {
    let settings = loc.resolve()?;
    let mut shown = Shown::new(std::io::stderr().is_terminal());
    let fresh = refresh::for_reading(&settings, &mut |e| shown.event(e))?;
    shown.finish();
    if fresh.check_due {
        if let Ok(mut pending) = PENDING_CHECK.lock() {
            *pending = Some(loc.clone());
        }
    }
    let mut index = fresh.index;
    tell_drift(&mut index);
    if let refresh::Refreshed::Behind { files, bytes } = fresh.refreshed {
        crate::eprintln_clean!(
            "agentlog: the index is behind by {} ({} MB); results may be stale. Run `agentlog index` to update it.",
            out::count(files as u64, "file"),
            bytes / 1_000_000
        );
    }
    Ok(index)
}

/// Set for the `agentlog index` a command starts in the background, whose
/// standard error nobody reads: it leaves the drift alarm to the next
/// command.
const BACKGROUND_CHECK: &str = "AGENTLOG_BACKGROUND_CHECK";

/// Says, once, what the index found that agentlog does not know (the
/// drift alarm, [`agentlog_api::drift`]); not in a background check. A
/// failure to say it is no failure of the command.
pub fn tell_drift(index: &mut Index) {
    if std::env::var_os(BACKGROUND_CHECK).is_some() {
        return;
    }
    match agentlog_api::drift::tell(index) {
        Ok(alarms) => {
            for a in alarms {
                crate::eprintln_clean!(
                    "agentlog: {} (said once; `agentlog doctor` lists it again)",
                    a.message()
                );
            }
        }
        Err(e) => crate::eprintln_clean!("agentlog: warning: the drift alarm: {e}"),
    }
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
            .env(BACKGROUND_CHECK, "1")
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

/// A progress bar of indexing on standard error.
pub fn bar(total_bytes: u64) -> ProgressBar {
    let pb =
        ProgressBar::with_draw_target(Some(total_bytes), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} indexing {msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}
