use crate::load;
use agentlog_store::pi::{migrate, SessionManager};
use anyhow::Context;
use std::path::PathBuf;
use std::process::ExitCode;

/// Migrate a session file to the newest version of its format.
///
/// pi files (versions 1 and 2) become version 3 exactly as pi migrates them
/// on load: ids and parent links for version 1 files, kept-entry indexes
/// turned into ids, the `hookMessage` role renamed to `custom`. Without
/// `-o` or `--in-place` the migrated file is printed.
#[derive(clap::Args, Debug)]
#[command(group = clap::ArgGroup::new("target").args(["output", "in_place"]))]
pub struct Args {
    /// Session file, or session id (prefix).
    pub session: String,
    /// Write the migrated file here instead of printing it (a new file: an
    /// existing one is an error unless --force).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Replace the -o file when it exists (atomically).
    #[arg(long, requires = "output")]
    pub force: bool,
    /// Rewrite the file itself (atomically, holding its lock).
    #[arg(long)]
    pub in_place: bool,
}

/// Runs `agentlog migrate`.
pub fn cmd_migrate(args: Args) -> anyhow::Result<ExitCode> {
    let path = load::resolve(&args.session)?;
    let format = agentlog_formats::registry::detect(&path)?;
    if format.name() != "pi" {
        anyhow::bail!(
            "{}: {} files have a single version; only pi files are migrated",
            path.display(),
            format.name()
        );
    }
    if args.in_place {
        let mut sm = SessionManager::open(&path, None)?;
        // Opening migrates in memory; flushing performs the atomic rewrite.
        sm.flush()?;
        match sm.migrated_from() {
            Some(v) => crate::eprintln_clean!(
                "{}: migrated from version {v} to {}",
                path.display(),
                migrate::CURRENT_VERSION
            ),
            None => crate::eprintln_clean!(
                "{}: already version {} or newer",
                path.display(),
                migrate::CURRENT_VERSION
            ),
        }
        if let Some(r) = sm.recovery().filter(|r| !r.is_clean()) {
            crate::eprintln_clean!("{}: {r}", path.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let header = bytes
        .split(|&b| b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
        .and_then(|l| serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(l).ok())
        .filter(|h| h.get("type").and_then(|t| t.as_str()) == Some("session"))
        .with_context(|| format!("{}:1: not a pi session header", path.display()))?;
    let version = migrate::version_of(&header);
    let migrated = if version < migrate::CURRENT_VERSION {
        migrate::migrate_bytes(&bytes, version)
    } else {
        bytes
    };
    match &args.output {
        Some(outp) => {
            use agentlog_store::snapshot::{write_file_with, Existing};
            let existing = if args.force {
                Existing::Replace
            } else {
                Existing::Refuse
            };
            write_file_with(outp, existing, |w| {
                w.write_all(&migrated)
                    .map_err(|e| agentlog_store::StoreError::io(outp, "write", e))
            })?;
            crate::eprintln_clean!(
                "{}: version {version} -> {} written to {}",
                path.display(),
                migrate::CURRENT_VERSION.max(version),
                outp.display()
            );
        }
        None => {
            use std::io::Write;
            let mut o = std::io::stdout().lock();
            o.write_all(&migrated)?;
            o.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
