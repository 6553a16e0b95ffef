use crate::out;
use agentlog_api::secrets::scrub;
use agentlog_redact::Report;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Redact the secrets in a session file in place.
///
/// Rewrites FILE with every secret replaced by [REDACTED:<kind>], in its
/// own format: in JSON and JSON Lines files only the values that held a
/// secret change, every other byte stays. The original is first copied to
/// FILE.agentlog-backup-<time> (private, never overwritten); the new file
/// is checked with the format's own reader before it atomically replaces
/// the old one. Do not scrub a session an agent is still writing: a file
/// that changes meanwhile is left alone. A session stored as a folder (an
/// OpenHands conversation) is scrubbed in its own files only, the
/// originals of those that change kept in FOLDER.agentlog-backup-<time>.
/// The tool outputs a Claude Code session keeps in its tool-results folder
/// are scrubbed with it, each original kept beside it. Every state
/// agentlog's archive keeps of the file is scrubbed too (the pages they
/// used are overwritten), and a session whose file its agent deleted is
/// scrubbed in the archive alone. Exits 1 when secrets remain that could
/// not be rewritten.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The session file (or a session folder, or a file in one).
    pub file: PathBuf,
    /// Read as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// Report what would be redacted; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `agentlog scrub`.
pub fn cmd_scrub(args: Args) -> anyhow::Result<ExitCode> {
    let path = &args.file;
    let settings = crate::config::settings(&[])?;
    agentlog_api::archive::attach(&settings);
    // The states agentlog's archive keeps of the file hold its secrets too.
    let states = |text: &mut String| -> anyhow::Result<()> {
        let s = agentlog_api::archive::scrub(&settings, path, args.dry_run)?;
        if s.rewritten > 0 {
            text.push_str(&format!(
                "{} {} of the {} agentlog's archive keeps of {}\n",
                if args.dry_run {
                    "would scrub"
                } else {
                    "scrubbed"
                },
                out::count(s.rewritten as u64, "state"),
                out::count(s.versions as u64, "state"),
                path.display()
            ));
        }
        Ok(())
    };
    if agentlog_formats::archived::is_kept_only(path) {
        // Its agent deleted the file: only the archive holds it.
        let mut text = String::new();
        states(&mut text)?;
        if text.is_empty() {
            text = format!(
                "{}: no secrets found in agentlog's archive; nothing changed\n",
                path.display()
            );
        }
        out::print(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let done = scrub(path, args.from.as_deref(), args.dry_run)?;
    // Secrets that remain make the command fail: the session is not safe
    // to share yet.
    let status = if done.remaining.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    if args.json {
        out::print_json(&done)?;
        return Ok(status);
    }
    let mut text = String::new();
    for b in &done.beside {
        text.push_str(&format!("{}: ", b.path.display()));
        said(&mut text, &b.path, &b.report, b.backup.as_deref());
    }
    // When only the files beside it held secrets, the lines above say all.
    if !done.report.is_empty() {
        said(&mut text, path, &done.report, done.backup.as_deref());
    } else if done.beside.is_empty() {
        let what = if done.remaining.is_empty() {
            "no secrets found"
        } else {
            "nothing could be rewritten in place"
        };
        text.push_str(&format!("{}: {what}; nothing changed\n", path.display()));
    }
    if !done.remaining.is_empty() {
        text.push_str(&format!(
            "error: {} remain that could not be rewritten in place (in files the session reads beside {}, or in values scrub cannot rewrite):\n",
            out::count(done.remaining.len() as u64, "secret"),
            path.display()
        ));
        text.push_str(&crate::redact::sanitized(&done.remaining.to_string()));
    }
    states(&mut text)?;
    out::print(&text)?;
    Ok(status)
}

/// Writes to `text` what was redacted in the file at `path` (`report`) and
/// where its original is (`backup`; none in a dry run).
fn said(text: &mut String, path: &Path, report: &Report, backup: Option<&Path>) {
    text.push_str(&crate::redact::sanitized(&report.to_string()));
    match backup {
        Some(b) => text.push_str(&format!(
            "scrubbed {} (the original is in {})\n",
            path.display(),
            b.display()
        )),
        None => text.push_str(&format!(
            "would scrub {} (--dry-run: nothing changed)\n",
            path.display()
        )),
    }
}
