use crate::fresh::{bar, show_progress, warn_not_kept, IndexLocation};
use crate::{config, out};
use agentlog_api::refresh;
use agentlog_index::{Index, UpdateReport};
use anyhow::Context;
use std::io::IsTerminal;
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
///
/// When a file holds record types, fields or a layout agentlog does not
/// know (an agent's newer version), or cannot be read at all, this (or
/// the refresh of the next command) says so once, per agent version;
/// `agentlog doctor` lists it all.
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
    let (mut index, report) =
        refresh::update(&settings, &discovered, args.rebuild, &mut |e| match e {
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
    crate::fresh::tell_drift(&mut index);
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
