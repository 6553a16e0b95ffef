//! The `agentlog` command line.
//!
//! `main()` calls [`run`], `run()` dispatches over subcommands; each
//! subcommand is one file in `commands/` with its `Args` (doc comments are
//! the help text) and a `cmd_*` function.

mod commands;
mod config;
mod fresh;
mod load;
mod out;
mod redact;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// mimalloc instead of the system allocator: reading sessions and indexing
/// them make many small allocations (JSON values), and it reads Claude Code
/// sessions about 1.4x as fast here.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// agentlog: the durable, fast and faithful home for AI coding-agent sessions.
///
/// Reads and writes the session files of Claude Code, Codex CLI, Gemini CLI,
/// Cursor, pi and the seed designs (codelia, jido_code, SpecStory, acpx)
/// around one model: show, convert, validate, search and count them all.
#[derive(Parser, Debug)]
#[command(
    name = "agentlog",
    version,
    about,
    long_about,
    propagate_version = true,
    max_term_width = 100
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Ls(commands::ls::Args),
    Show(commands::show::Args),
    Search(commands::search::Args),
    Export(commands::export::Args),
    Convert(commands::convert::Args),
    Dataset(commands::dataset::Args),
    Validate(commands::validate::Args),
    Migrate(commands::migrate::Args),
    Tree(commands::tree::Args),
    Context(commands::context::Args),
    Append(commands::append::Args),
    Stats(commands::stats::Args),
    Prices(commands::prices::Args),
    Index(commands::index::Args),
    Doctor(commands::doctor::Args),
    Serve(commands::serve::Args),
    Mcp(commands::mcp::Args),
    Resume(commands::resume::Args),
    Formats(commands::formats::Args),
    Seed(commands::seed::Args),
    Scan(commands::scan::Args),
    Scrub(commands::scrub::Args),
    Push(commands::push::Args),
    Db(commands::db::Args),
    Archive(commands::archive::Args),
    Restore(commands::restore::Args),
    Forget(commands::forget::Args),
    Capture(commands::capture::Args),
    Hooks(commands::hooks::Args),
    Pick(commands::pick::Args),
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Ls(a) => commands::ls::cmd_ls(a),
        Command::Show(a) => commands::show::cmd_show(a),
        Command::Search(a) => commands::search::cmd_search(a),
        Command::Export(a) => commands::export::cmd_export(a),
        Command::Convert(a) => commands::convert::cmd_convert(a),
        Command::Dataset(a) => commands::dataset::cmd_dataset(a),
        Command::Validate(a) => commands::validate::cmd_validate(a),
        Command::Migrate(a) => commands::migrate::cmd_migrate(a),
        Command::Tree(a) => commands::tree::cmd_tree(a),
        Command::Context(a) => commands::context::cmd_context(a),
        Command::Append(a) => commands::append::cmd_append(a),
        Command::Stats(a) => commands::stats::cmd_stats(a),
        Command::Prices(a) => commands::prices::cmd_prices(a),
        Command::Index(a) => commands::index::cmd_index(a),
        Command::Doctor(a) => commands::doctor::cmd_doctor(a),
        Command::Serve(a) => commands::serve::cmd_serve(a),
        Command::Mcp(a) => commands::mcp::cmd_mcp(a),
        Command::Resume(a) => commands::resume::cmd_resume(a),
        Command::Formats(a) => commands::formats::cmd_formats(a),
        Command::Seed(a) => commands::seed::cmd_seed(a),
        Command::Scan(a) => commands::scan::cmd_scan(a),
        Command::Scrub(a) => commands::scrub::cmd_scrub(a),
        Command::Push(a) => commands::push::cmd_push(a),
        Command::Db(a) => commands::db::cmd_db(a),
        Command::Archive(a) => commands::archive::cmd_archive(a),
        Command::Restore(a) => commands::restore::cmd_restore(a),
        Command::Forget(a) => commands::forget::cmd_forget(a),
        Command::Capture(a) => commands::capture::cmd_capture(a),
        Command::Hooks(a) => commands::hooks::cmd_hooks(a),
        Command::Pick(a) => commands::pick::cmd_pick(a),
    }
}

/// True when the error is in what the user asked (an unknown name, a value
/// that cannot be parsed, a bad query): exit status 2, like clap's own
/// usage errors.
fn is_usage(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<agentlog_api::ApiError>()
            .is_some_and(agentlog_api::ApiError::is_usage)
            || c.downcast_ref::<agentlog_index::IndexError>()
                .is_some_and(agentlog_api::is_usage_index)
            || c.downcast_ref::<agentlog_formats::FormatError>()
                .is_some_and(|e| matches!(e, agentlog_formats::FormatError::Unsupported { .. }))
    })
}

/// What to do about an error, in terms of this command line's flags and
/// commands (the libraries' errors name neither).
fn hint(err: &anyhow::Error) -> Option<&'static str> {
    use agentlog_api::ApiError;
    use agentlog_formats::FormatError;
    use agentlog_index::IndexError;
    use agentlog_store::StoreError;
    let index = |e: &IndexError| match e {
        IndexError::Sqlite { .. } => Some("if this persists, run `agentlog index --rebuild`"),
        IndexError::Damaged { .. } => Some("run `agentlog index --rebuild`"),
        IndexError::NotAnIndex { .. } => {
            Some("point --index (or AGENTLOG_INDEX) at another path, or move the file away")
        }
        _ => None,
    };
    let format = |e: &FormatError| match e {
        FormatError::UnknownFormat { .. } => Some("name the format with --from FORMAT"),
        _ => None,
    };
    let store = |e: &StoreError| match e {
        StoreError::Locked { .. } => Some("`agentlog append --wait` waits for the other writer"),
        _ => None,
    };
    err.chain().find_map(|c| {
        if let Some(e) = c.downcast_ref::<ApiError>() {
            return match e {
                ApiError::Index(e) => index(e),
                ApiError::Format(e) => format(e),
                ApiError::Store(e) => store(e),
                _ => None,
            };
        }
        if let Some(e) = c.downcast_ref::<IndexError>() {
            return index(e);
        }
        if let Some(e) = c.downcast_ref::<FormatError>() {
            return format(e);
        }
        if let Some(e) = c.downcast_ref::<StoreError>() {
            return store(e);
        }
        if let Some(agentlog_postgres::PgError::MachineTaken { .. }) = c.downcast_ref() {
            return Some(
                "push with --machine NAME under a name of this machine's own, or have the database owner run `agentlog db grant ROLE --push --machine NAME`",
            );
        }
        None
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(max) = std::env::var_os("AGENTLOG_MAX_INPUT") {
        match max.to_str().and_then(agentlog_formats::input::parse_size) {
            Some(n) => agentlog_formats::input::set_max_bytes(n),
            None => {
                crate::eprintln_clean!(
                    "agentlog: error: AGENTLOG_MAX_INPUT={}: not a size (e.g. 512M, 8G)",
                    max.to_string_lossy()
                );
                return ExitCode::from(2);
            }
        }
    }
    // Listings, sessions and exports can be megabytes through a pipe.
    out::widen_stdout_pipe();
    let result = run(cli);
    // A full check of the index a command found due starts now that the
    // command has answered (fresh::start_pending_check).
    fresh::start_pending_check();
    match result {
        Ok(code) => code,
        Err(err) if out::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // What went wrong first, then its causes, then what to do
            // about it (a hint attached as context is not the error).
            let hints: Vec<String> = err
                .downcast_ref::<out::Hint>()
                .map(|h| h.0.clone())
                .into_iter()
                .collect();
            let chain: Vec<String> = err
                .chain()
                .map(|c| c.to_string())
                .filter(|t| !hints.contains(t))
                .collect();
            let mut chain = chain.into_iter().peekable();
            let mut said = chain.next().unwrap_or_else(|| err.to_string());
            // A flag's name alone (`--agent`) says where, not what: it
            // leads the cause (`--agent: unknown agent "x"; …`).
            if said.starts_with("--") && !said.contains(char::is_whitespace) {
                if let Some(next) = chain.next() {
                    said = format!("{said}: {next}");
                }
            }
            crate::eprintln_clean!("agentlog: error: {said}");
            // A cause the line above ends with (`PATH: CAUSE`, then
            // `CAUSE`) is not said twice.
            for text in chain {
                if !said.ends_with(&text) {
                    crate::eprintln_clean!("  caused by: {text}");
                }
                said = text;
            }
            for hint in hints.iter().map(String::as_str).chain(hint(&err)) {
                crate::eprintln_clean!("  hint: {hint}");
            }
            if is_usage(&err) {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
