use crate::{load, out};
use agentlog_formats::{registry, Format, Severity};
use agentlog_redact::{Redactor, Report};
use agentlog_store::snapshot::{create_private, write_atomic};
use anyhow::{bail, Context};
use serde::Serialize;
use std::io::Write;
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
/// that changes meanwhile is left alone.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The session file.
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

#[derive(Serialize)]
struct Outcome<'a> {
    path: &'a Path,
    format: &'a str,
    written: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    backup: Option<&'a Path>,
    report: &'a Report,
    /// Secrets the format's reader still sees after scrubbing (none unless
    /// a format encodes text in a way the byte scrubber cannot reach).
    remaining: &'a Report,
}

fn errors(format: &dyn Format, path: &Path, bytes: &[u8]) -> anyhow::Result<(usize, usize)> {
    let read = format
        .read_bytes(path, bytes)
        .with_context(|| format!("reading {} as {}", path.display(), format.name()))?;
    let errors = read
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    Ok((errors, read.session.entries.len()))
}

/// Runs `agentlog scrub`.
pub fn cmd_scrub(args: Args) -> anyhow::Result<ExitCode> {
    let path = &args.file;
    if !path.is_file() {
        bail!(
            "{}: not a session file (scrub rewrites one file; `agentlog scan` finds the sessions with secrets)",
            path.display()
        );
    }
    let format = match &args.from {
        Some(name) => load::format_named(name)?,
        None => registry::detect(path)?,
    };
    let before = std::fs::metadata(path).with_context(|| format!("{}", path.display()))?;
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let redactor = Redactor::builtin()?;
    let (scrubbed, report) = redactor
        .bytes(&bytes)
        .with_context(|| format!("{}: cannot scrub", path.display()))?;
    // The scrubbed file must read as well as the original did.
    let (old_errors, old_entries) = errors(format, path, &bytes)?;
    let (new_errors, new_entries) = errors(format, path, &scrubbed)?;
    if new_errors > old_errors || new_entries != old_entries {
        bail!(
            "{}: the scrubbed file would not read back as {} ({} errors instead of {}, {} entries instead of {}); nothing changed",
            path.display(),
            format.name(),
            new_errors,
            old_errors,
            new_entries,
            old_entries
        );
    }
    let remaining = redactor.scan_session(&format.read_bytes(path, &scrubbed)?.session);
    let mut backup = None;
    let write = !report.is_empty() && !args.dry_run;
    if write {
        let now = std::fs::metadata(path).with_context(|| format!("{}", path.display()))?;
        if now.len() != before.len() || now.modified().ok() != before.modified().ok() {
            bail!(
                "{}: changed while being scrubbed (is an agent writing it?); nothing changed",
                path.display()
            );
        }
        let b = backup_path(path);
        let mut f = create_private(&b)?;
        f.write_all(&bytes)
            .and_then(|()| f.sync_all())
            .with_context(|| format!("writing the backup {}", b.display()))?;
        write_atomic(path, &scrubbed)?;
        backup = Some(b);
    }
    if args.json {
        out::print_json(&Outcome {
            path,
            format: format.name(),
            written: write,
            backup: backup.as_deref(),
            report: &report,
            remaining: &remaining,
        })?;
    } else {
        let mut text = String::new();
        if report.is_empty() {
            text.push_str(&format!(
                "{}: no secrets found; nothing changed\n",
                path.display()
            ));
        } else {
            text.push_str(&crate::redact::sanitized(&report.to_string()));
            match &backup {
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
        if !remaining.is_empty() {
            text.push_str(&format!(
                "warning: {} secret(s) remain that could not be rewritten in place:\n",
                remaining.len()
            ));
            text.push_str(&crate::redact::sanitized(&remaining.to_string()));
        }
        out::print(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Returns `FILE.agentlog-backup-<UTC time>` (with a counter when taken).
fn backup_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stamp = chrono::Utc::now().format("%Y-%m-%dT%H-%M-%SZ");
    let mut p = path.with_file_name(format!("{name}.agentlog-backup-{stamp}"));
    let mut n = 1;
    while p.exists() {
        n += 1;
        p = path.with_file_name(format!("{name}.agentlog-backup-{stamp}-{n}"));
    }
    p
}
