use crate::{load, out};
use agentlog_formats::render::{self, TextOptions};
use std::process::ExitCode;

/// Show a session as a readable transcript.
///
/// FILE is a session file of any known format (detected from its content),
/// or a session id or id prefix of a discovered session. The active branch,
/// from the root to the current leaf, is shown.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session file, or session id (prefix), or AGENT:ID.
    pub session: String,
    #[command(flatten)]
    pub which: crate::load::Which,
    /// Read as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// Read from the team database (SESSION is an id there):
    /// postgres://USER:PASSWORD@HOST:PORT/DATABASE.
    #[arg(long, value_name = "URL", env = "AGENTLOG_DB", hide_env_values = true)]
    pub db: Option<String>,
    /// Print the unified session model as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print markdown instead of terminal text.
    #[arg(long, conflicts_with = "json")]
    pub markdown: bool,
    /// Show the branch that ends at this entry instead of the current leaf.
    #[arg(long, value_name = "ENTRY")]
    pub at: Option<String>,
    /// Show thinking in full and tool inputs/outputs uncut.
    #[arg(long)]
    pub full: bool,
    /// Replace secrets (API keys, tokens, passwords, private keys) with
    /// [REDACTED:<kind>] and report what was found on stderr.
    #[arg(long)]
    pub redact: bool,
}

/// Runs `agentlog show`.
pub fn cmd_show(args: Args) -> anyhow::Result<ExitCode> {
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
    load::small_heap(&session_arg);
    let (_path, _format, read) = load::read_which(&session_arg, from.as_deref(), &args.which)?;
    let mut session = read.session;
    if let Some(at) = &args.at {
        session.set_leaf(Some(at)).map_err(anyhow::Error::msg)?;
    }
    for d in &read.diagnostics {
        crate::eprintln_clean!("{d}");
    }
    crate::redact::apply(&mut session, args.redact, false)?;
    if args.json {
        out::print_json(&session)?;
    } else if args.markdown {
        out::print(&render::markdown(&session))?;
        out::print("\n")?;
    } else {
        let opts = TextOptions {
            color: out::use_color(),
            full_thinking: args.full,
            max_tool_lines: if args.full { 0 } else { 12 },
        };
        // render::text sanitizes every field and adds colours of its own;
        // it is written as it is made, an entry at a time.
        let mut stdout = std::io::stdout().lock();
        render::text_to(&session, opts, &mut stdout)?;
        std::io::Write::flush(&mut stdout)?;
    }
    Ok(ExitCode::SUCCESS)
}
