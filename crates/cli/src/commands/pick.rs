use crate::fresh::{self, IndexLocation};
use crate::out;
use agentlog_api::pick::Launch;
use agentlog_pick::{Options, Outcome};
use std::ffi::OsString;
use std::io::IsTerminal;
use std::process::ExitCode;

/// Pick a session as you type, and continue it.
///
/// Opens a full-screen picker over the search index: type words to search
/// what was said (`word`, `"a phrase"`, `prefix*`, `-not`; the word being
/// typed is a prefix), with filters among them: `agent:claude`,
/// `dir:TEXT`, `since:7d`, `until:2026-01-31`. The highlighted session's
/// transcript is shown with the hit in view.
///
/// Enter continues the session in its own agent, in its own folder: the
/// picker is replaced by the agent (`claude --resume ID`, `codex resume
/// ID`, …). Standard output that is not a terminal, or --print, gets
/// the command instead (`eval "$(agentlog pick --print)"`). Tab continues it
/// in another agent (as `resume --in` does), Ctrl-Y copies the command
/// (OSC 52), Ctrl-O opens it in the web viewer, ? shows every key.
///
/// Exits 1 when left without choosing.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The query to start with.
    #[arg(value_name = "QUERY")]
    pub query: Vec<String>,
    /// Print the command that continues the chosen session instead of
    /// running it.
    #[arg(long)]
    pub print: bool,
    /// List at most this many sessions.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub limit: usize,
    #[command(flatten)]
    pub loc: IndexLocation,
}

/// Runs `agentlog pick`.
pub fn cmd_pick(args: Args) -> anyhow::Result<ExitCode> {
    if let Err(e) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    {
        anyhow::bail!("agentlog pick needs a terminal (/dev/tty: {e}); `agentlog search` and `agentlog ls` work without one");
    }
    let settings = args.loc.resolve()?;
    // Sessions whose files their agents deleted are read from the archive.
    agentlog_api::archive::attach(&settings);
    let index = fresh::refreshed(&args.loc)?;
    let mut serve: Vec<OsString> = vec!["serve".into(), "--port".into(), "0".into()];
    serve.push("--index".into());
    serve.push(settings.index_path.clone().into_os_string());
    for r in &args.loc.roots {
        serve.push("--root".into());
        serve.push(r.into());
    }
    let opts = Options {
        query: args.query.join(" "),
        limit: args.limit,
        serve,
    };
    match agentlog_pick::run(settings, index, opts)? {
        Outcome::Quit { notes } => {
            for n in notes {
                crate::eprintln_clean!("agentlog: {n}");
            }
            Ok(ExitCode::FAILURE)
        }
        Outcome::Run { launch, notes } => {
            for n in notes {
                crate::eprintln_clean!("agentlog: {n}");
            }
            if args.print || !std::io::stdout().is_terminal() {
                out::print_exact(&format!("{}\n", launch.command))?;
                return Ok(ExitCode::SUCCESS);
            }
            run(&launch)
        }
    }
}

/// Replaces this process with `launch`'s program in its folder; says why
/// and prints the command when that cannot be done.
fn run(launch: &Launch) -> anyhow::Result<ExitCode> {
    use std::os::unix::process::CommandExt as _;
    crate::eprintln_clean!("agentlog: {}", launch.command);
    // The full check of the index a refresh found due would start when
    // this process ends, which it does not.
    fresh::start_pending_check();
    let mut cmd = std::process::Command::new(&launch.program);
    cmd.args(&launch.args);
    if let Some(dir) = &launch.cwd {
        cmd.current_dir(dir);
    }
    let err = cmd.exec();
    crate::eprintln_clean!("agentlog: error: cannot run {}: {err}", launch.program);
    crate::eprintln_clean!("  hint: run it yourself: {}", launch.command);
    Ok(ExitCode::FAILURE)
}
