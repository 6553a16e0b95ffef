use crate::out;
use agentlog_store::jido::JidoStore;
use anyhow::Context;
use clap::Subcommand;
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// jido_code session files: list, show (restore-check), remove and clear them.
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
    #[command(alias = "list")]
    Ls,
    /// Check a saved session as /resume would: migrate it to the current
    /// version, validate it and check its project directory. The file is
    /// not changed.
    #[command(alias = "restore")]
    Show {
        /// The session id or a prefix of it (the file name without `.json`).
        id: String,
    },
    /// Delete one saved session.
    #[command(alias = "delete")]
    Rm {
        /// The session id or a prefix of it.
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
        Command::Ls => cmd_list(&store, args.json),
        Command::Show { id } => cmd_restore(&store, &full_id(&store, &id)?, args.json),
        Command::Rm { id } => cmd_delete(&store, &full_id(&store, &id)?, args.json),
        Command::Clear { yes } => cmd_clear(&store, yes, args.json),
    }
}

/// Returns the saved session's id that `arg` names (the id, or the only id
/// starting with it), like session ids everywhere else.
fn full_id(store: &JidoStore, arg: &str) -> anyhow::Result<String> {
    let listing = store.list_persisted()?;
    let ids: Vec<&str> = listing
        .sessions
        .iter()
        .map(|s| s.id.as_str())
        .chain(
            listing
                .skipped
                .iter()
                .filter_map(|(p, _)| p.file_stem().and_then(|s| s.to_str())),
        )
        .collect();
    let id = agentlog_api::resolve::pick_id("jido", arg, &ids, |id| {
        store.path_of(id).unwrap_or_default()
    })
    .with_context(|| {
        format!(
            "no saved jido session {arg:?} in {}; `agentlog seed jido ls` lists them",
            store.dir().display()
        )
    })?;
    Ok(id.to_string())
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
    let rows: Vec<[String; 4]> = listing
        .sessions
        .iter()
        .map(|x| {
            [
                x.closed_at.clone(),
                x.id.clone(),
                x.name.clone(),
                x.project_path.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let s = crate::out::table(&["closed", "id", "name", "project"], &rows);
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
            "no saved session {id:?} in {}; `agentlog seed jido ls` lists them",
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
