use crate::{config, load, out};
use agentlog_formats::Fidelity;
use agentlog_store::snapshot::{create_private, ensure_dir, parent_dir, sync_dir};
use anyhow::{bail, Context};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Continue a session in another agent.
///
/// Reads SESSION (a file of any format, or a session id or id prefix),
/// converts it to the native format of the agent named by --in, writes it
/// where that agent keeps its sessions (never over an existing file),
/// reports what the conversion could not carry, and prints the command
/// that continues the session there.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session file, or session id (prefix).
    pub session: String,
    /// The agent to continue in: claude, codex, gemini or pi.
    #[arg(long = "in", value_name = "AGENT")]
    pub target: String,
    /// Read the session as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// Read from the team database (SESSION is an id there):
    /// postgres://USER:PASSWORD@HOST:PORT/DATABASE.
    #[arg(long, value_name = "URL", env = "AGENTLOG_DB", hide_env_values = true)]
    pub db: Option<String>,
    /// Continue in this directory (default: the session's own working
    /// directory; needed when the source recorded none).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<std::path::PathBuf>,
    /// Show what would be written and run, without writing.
    #[arg(long)]
    pub dry_run: bool,
    /// Replace secrets (API keys, tokens, passwords, private keys) with
    /// [REDACTED:<kind>] and report what was found on stderr.
    #[arg(long)]
    pub redact: bool,
    /// Print the plan and the fidelity report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Use PATH as AGENT's data directory (repeatable), e.g. claude=/tmp/c.
    #[arg(long = "root", value_name = "AGENT=PATH")]
    pub roots: Vec<String>,
}

/// What `resume` did, for `--json`.
#[derive(Debug, Serialize)]
struct Report<'a> {
    source: &'a Path,
    source_format: &'a str,
    target: &'a str,
    path: &'a Path,
    cwd: Option<&'a Path>,
    command: String,
    written: bool,
    fidelity: &'a Fidelity,
}

/// Runs `agentlog resume`.
pub fn cmd_resume(args: Args) -> anyhow::Result<ExitCode> {
    let target = load::format_named(&args.target)?;
    if !target.can_write() {
        bail!(
            "agentlog cannot write {} sessions yet, so it cannot resume in {}",
            target.name(),
            target.name()
        );
    }
    let settings = config::settings(&args.roots)?;
    let fetched = match &args.db {
        Some(url) => crate::commands::db::fetch(url, &args.session)?,
        None => None,
    };
    let (session_arg, from) = match &fetched {
        Some(f) => (
            f.path.to_string_lossy().into_owned(),
            Some(args.from.clone().unwrap_or(f.format.clone())),
        ),
        None => (args.session.clone(), args.from.clone()),
    };
    let (source, format, read) = load::read(&session_arg, from.as_deref())?;
    for d in &read.diagnostics {
        crate::eprintln_clean!("{d}");
    }
    let mut session = read.session;
    crate::redact::apply(&mut session, args.redact, args.json)?;
    if let Some(dir) = &args.cwd {
        let dir = std::path::absolute(dir).with_context(|| format!("--cwd {}", dir.display()))?;
        session.meta.cwd = Some(dir.to_string_lossy().into_owned());
    }
    let plan = target
        .resume_plan(&session, &settings.env)
        .with_context(|| format!("planning where {} keeps the session", target.name()))?;
    let mut bytes = Vec::new();
    let fidelity = target
        .write(&session, &mut bytes)
        .with_context(|| format!("converting {} to {}", source.display(), target.name()))?;
    if plan.path.exists() {
        bail!(
            "{}: already exists; agentlog never overwrites a session (was it resumed before?)",
            plan.path.display()
        );
    }
    if !args.dry_run {
        write_new(&plan.path, &bytes)?;
    }
    let command = match &plan.cwd {
        Some(dir) => format!(
            "cd {} && {}",
            shell_quote(&dir.to_string_lossy()),
            plan.command
        ),
        None => plan.command.clone(),
    };
    if args.json {
        out::print_json(&Report {
            source: &source,
            source_format: format.name(),
            target: target.name(),
            path: &plan.path,
            cwd: plan.cwd.as_deref(),
            command,
            written: !args.dry_run,
            fidelity: &fidelity,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    let verb = if args.dry_run { "would write" } else { "wrote" };
    text.push_str(&format!("{verb} {}\n", plan.path.display()));
    text.push_str(&fidelity.to_string());
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("continue with:\n  {command}\n"));
    out::print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Quotes `s` for a POSIX shell when it needs it.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Writes `bytes` as the new file `path`: a private temp file in the same
/// directory, synced, then linked into place (which fails when `path`
/// exists, so nothing is ever overwritten), and the directory synced. A
/// reader sees no file or the whole file.
fn write_new(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = parent_dir(path);
    ensure_dir(&dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.0.tmp", std::process::id()));
    let result = (|| -> anyhow::Result<()> {
        let mut f = create_private(&tmp)?;
        f.write_all(bytes)
            .and_then(|()| f.sync_all())
            .with_context(|| format!("writing {}", tmp.display()))?;
        drop(f);
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                bail!(
                    "{}: already exists; agentlog never overwrites a session",
                    path.display()
                )
            }
            Err(_) if !path.exists() => {
                // File systems without hard links: rename (checked above).
                std::fs::rename(&tmp, path)
                    .with_context(|| format!("creating {}", path.display()))?;
            }
            Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
        }
        sync_dir(&dir)?;
        Ok(())
    })();
    let _ = std::fs::remove_file(&tmp);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(shell_quote("/home/me/proj"), "/home/me/proj");
        assert_eq!(shell_quote("/home/me/my proj"), "'/home/me/my proj'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }

    #[test]
    fn never_overwrites() {
        let Ok(tmp) = tempfile::tempdir() else { return };
        let p = tmp.path().join("a/b/s.jsonl");
        assert!(write_new(&p, b"one\n").is_ok());
        assert!(write_new(&p, b"two\n").is_err());
        assert_eq!(std::fs::read(&p).unwrap_or_default(), b"one\n");
        let left: Vec<_> = std::fs::read_dir(tmp.path().join("a/b"))
            .map(|rd| rd.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert_eq!(left.len(), 1);
    }
}
