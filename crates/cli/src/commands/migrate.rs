use crate::commands::export::write_output;
use crate::load;
use agentlog_api::migrate::{migrate_in_place, migrated_bytes};
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
    /// Session file, or session id (prefix), or AGENT:ID.
    pub session: String,
    #[command(flatten)]
    pub which: crate::load::Which,
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
    let path = load::resolve_which(&args.session, &args.which)?;
    if args.in_place {
        let done = migrate_in_place(&path)?;
        match done.migrated_from {
            Some(v) => crate::eprintln_clean!(
                "{}: migrated from version {v} to {}",
                path.display(),
                done.to
            ),
            None => {
                crate::eprintln_clean!("{}: already version {} or newer", path.display(), done.to)
            }
        }
        if let Some(r) = done.recovery {
            crate::eprintln_clean!("{}: {r}", path.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let m = migrated_bytes(&path)?;
    write_output(args.output.as_deref(), args.force, |w| {
        Ok(w.write_all(&m.bytes)?)
    })?;
    if let Some(outp) = &args.output {
        crate::eprintln_clean!(
            "{}: version {} -> {} written to {}",
            path.display(),
            m.from,
            m.to,
            outp.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
