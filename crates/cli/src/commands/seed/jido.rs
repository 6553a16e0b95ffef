use crate::out;
use agentlog_store::jido::JidoStore;
use clap::Subcommand;
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// jido_code session files: list, restore, delete and clear them.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The sessions directory (default: ~/.jido_code/sessions).
    #[arg(long, global = true, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Print JSON.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the saved sessions, most recently closed first.
    List,
    /// Check a saved session as /resume would: migrate it to the current
    /// version, validate it and check its project directory. The file is
    /// not changed.
    Restore {
        /// The session id (the file name without `.json`).
        id: String,
    },
    /// Delete one saved session.
    Delete {
        /// The session id.
        id: String,
    },
    /// Delete every saved session (`*.json`) of the directory.
    Clear {
        /// Really delete them.
        #[arg(long)]
        yes: bool,
    },
}

/// Runs `agentlog seed jido`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let env = crate::config::process_env();
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| JidoStore::default_dir(&env.home));
    let store = JidoStore::new(dir).with_home(env.home.clone());
    match args.command {
        Command::List => cmd_list(&store, args.json),
        Command::Restore { id } => cmd_restore(&store, &id, args.json),
        Command::Delete { id } => cmd_delete(&store, &id, args.json),
        Command::Clear { yes } => cmd_clear(&store, yes, args.json),
    }
}

fn cmd_list(store: &JidoStore, as_json: bool) -> anyhow::Result<ExitCode> {
    let listing = store.list_persisted()?;
    for (p, why) in &listing.skipped {
        crate::eprintln_clean!("agentlog: warning: {}: skipped: {why}", p.display());
    }
    if as_json {
        out::print_json(&listing.sessions)?;
        return Ok(ExitCode::SUCCESS);
    }
    if listing.sessions.is_empty() {
        crate::eprintln_clean!("no saved jido sessions in {}", store.dir().display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut s = String::new();
    for (i, x) in listing.sessions.iter().enumerate() {
        let _ = writeln!(
            s,
            "{:>3}  {:<25}  {:<36}  {}  {}",
            i + 1,
            x.closed_at,
            x.id,
            x.name,
            x.project_path.as_deref().unwrap_or("")
        );
    }
    out::print(&s)?;
    Ok(ExitCode::SUCCESS)
}

fn cmd_restore(store: &JidoStore, id: &str, as_json: bool) -> anyhow::Result<ExitCode> {
    let r = store.restore(id)?;
    if as_json {
        out::print_json(&json!({
            "path": r.path,
            "from_version": r.from_version,
            "migrations": r.migrations,
            "project_dir": r.project_dir,
            "document": r.document,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let meta = &r.session.meta;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "session {}: {}",
        meta.id,
        meta.title.as_deref().unwrap_or("")
    );
    let _ = writeln!(s, "file: {}", r.path.display());
    let _ = writeln!(s, "project: {}", r.project_dir.display());
    if r.migrations.is_empty() {
        let _ = writeln!(s, "version: {} (current)", r.from_version);
    } else {
        let _ = writeln!(s, "version: {} migrated to current:", r.from_version);
        for m in &r.migrations {
            let _ = writeln!(s, "  - {m}");
        }
    }
    let _ = writeln!(
        s,
        "messages: {}, todos: {}",
        r.session.message_count(),
        meta.todos.len()
    );
    s.push_str("ready to resume\n");
    out::print(&s)?;
    Ok(ExitCode::SUCCESS)
}

fn cmd_delete(store: &JidoStore, id: &str, as_json: bool) -> anyhow::Result<ExitCode> {
    let path = store.path_of(id)?;
    if !store.delete(id)? {
        anyhow::bail!(
            "no saved session {id:?} in {}; `agentlog seed jido list` shows them",
            store.dir().display()
        );
    }
    if as_json {
        out::print_json(&json!({"deleted": path}))?;
    } else {
        out::print(&format!("deleted {}\n", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_clear(store: &JidoStore, yes: bool, as_json: bool) -> anyhow::Result<ExitCode> {
    if !yes {
        let n = store.list_persisted()?;
        let count = n.sessions.len() + n.skipped.len();
        anyhow::bail!(
            "this deletes {count} session file(s) in {}; run again with --yes to do it",
            store.dir().display()
        );
    }
    let n = store.clear_all()?;
    if as_json {
        out::print_json(&json!({"deleted": n}))?;
    } else {
        out::print(&format!(
            "deleted {n} session file(s) from {}\n",
            store.dir().display()
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
