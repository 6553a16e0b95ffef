use agentlog_api::append::{append_stream, AppendEvent, AppendParams};
use agentlog_store::SyncPolicy;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Append JSONL entries from standard input to a session file, durably.
///
/// Each input line must be one JSON object; it is appended as one whole
/// line. The entry's id (its `id`, else its `uuid`, else its input line
/// number) is printed on standard output once the entry is durable under
/// the sync policy, so a caller that reads an id back knows the entry
/// survives a crash. Invalid lines are reported on standard error with
/// their input line number and not written; the exit status is then 1.
///
/// The file is created (0600, in 0700 directories) if missing. A torn last
/// line left by a crashed writer is first moved to a sidecar file beside
/// it. Only one writer appends to a file at a time.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The session file to append to.
    pub file: PathBuf,
    /// When entries are forced to disk: `every` entry (an acknowledged
    /// entry survives a power loss), `grouped` (one sync per group of
    /// entries; ids are printed after their group's sync), or `none`
    /// (acknowledged once handed to the OS: survives the process, not a
    /// power loss).
    #[arg(long, value_enum, default_value_t = Sync::Every)]
    pub sync: Sync,
    /// Entries per sync under `--sync grouped`.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub group_entries: usize,
    /// Longest wait in milliseconds before a sync under `--sync grouped`.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    pub group_ms: u64,
    /// Wait for another writer of the file to finish instead of failing.
    #[arg(long)]
    pub wait: bool,
}

/// The `--sync` policies.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    /// fsync after every entry.
    Every,
    /// fsync per group of entries (see --group-entries, --group-ms).
    Grouped,
    /// Never fsync explicitly.
    None,
}

/// Runs `agentlog append`: ids go to standard output as they become
/// durable, problems to standard error.
pub fn cmd_append(args: Args) -> anyhow::Result<ExitCode> {
    let sync = match args.sync {
        Sync::Every => SyncPolicy::EveryEntry,
        Sync::Grouped => SyncPolicy::Grouped {
            entries: args.group_entries.max(1),
            interval: Duration::from_millis(args.group_ms),
        },
        Sync::None => SyncPolicy::None,
    };
    let file = args.file.display().to_string();
    let mut stdout = std::io::stdout().lock();
    let mut failed_write = None;
    let mut events = |e: AppendEvent| {
        let r = match e {
            AppendEvent::Durable(id) => writeln!(stdout, "{id}").and_then(|()| stdout.flush()),
            AppendEvent::Recovered(what) => {
                crate::eprintln_clean!("agentlog: {file}: {what}");
                Ok(())
            }
            AppendEvent::Waiting(holder) => {
                crate::eprintln_clean!(
                    "agentlog: {file}: waiting for the writer holding it ({holder})"
                );
                Ok(())
            }
            AppendEvent::Invalid { line, why } => {
                crate::eprintln_clean!("agentlog: <stdin>:{line}: {why}; not written");
                Ok(())
            }
        };
        if let Err(e) = r {
            failed_write.get_or_insert(e);
        }
    };
    let done = append_stream(
        &args.file,
        &AppendParams {
            sync,
            wait: args.wait,
        },
        Box::new(std::io::BufReader::new(std::io::stdin())),
        &mut events,
    )?;
    if let Some(e) = failed_write {
        return Err(anyhow::Error::new(e).context("writing the acknowledged ids"));
    }
    if done.invalid > 0 {
        crate::eprintln_clean!(
            "agentlog: {file}: {} appended, {} not written",
            crate::out::count(done.written, "entry"),
            crate::out::count(done.invalid, "invalid input line")
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
