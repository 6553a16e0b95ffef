use crate::out;
use agentlog_postgres::grant::Access;
use agentlog_postgres::PgIndex;
use anyhow::{anyhow, bail, Context};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Set up a team database (PostgreSQL): migrate its schema, add roles.
///
/// The database is named by --db or $AGENTLOG_DB
/// (postgres://USER:PASSWORD@HOST:PORT/DATABASE). `migrate` and `grant` need
/// the database owner's login; `status` any role.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: DbCommand,
}

/// What to do with the database.
#[derive(clap::Subcommand, Debug)]
pub enum DbCommand {
    /// Create or upgrade the schema (also done on the owner's first push).
    Migrate(DbArgs),
    /// Add a login role that pushes its own sessions (--push) or reads
    /// everyone's (--read); its password is read from standard input.
    Grant(GrantArgs),
    /// Print what the database holds: sessions, entries, machines.
    Status(StatusArgs),
}

/// The database to use.
#[derive(clap::Args, Debug, Clone)]
pub struct DbArgs {
    /// The database URL: postgres://USER:PASSWORD@HOST:PORT/DATABASE.
    #[arg(long, value_name = "URL", env = "AGENTLOG_DB", hide_env_values = true)]
    pub db: Option<String>,
}

/// `agentlog db grant`.
#[derive(clap::Args, Debug)]
pub struct GrantArgs {
    /// The role (login name) to create or update.
    pub role: String,
    /// It may push its own sessions and see only those.
    #[arg(long, conflicts_with = "read", required_unless_present = "read")]
    pub push: bool,
    /// It may read every session.
    #[arg(long)]
    pub read: bool,
    /// Bind this machine name to the role (repeatable): only it may push
    /// under the name, which is otherwise the first role's to push under
    /// it. Sessions another role pushed under the name are removed.
    #[arg(long, value_name = "NAME", requires = "push")]
    pub machine: Vec<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

/// `agentlog db status`.
#[derive(clap::Args, Debug)]
pub struct StatusArgs {
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub db: DbArgs,
}

/// Runs `agentlog db`.
pub fn cmd_db(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        DbCommand::Migrate(a) => {
            let url = required(a.db.as_deref())?;
            // Connecting with `migrate` runs the missing migrations.
            let (db, from) = match PgIndex::connect(&url, false) {
                Ok(db) => (db, None),
                Err(agentlog_postgres::PgError::NotMigrated { server, .. }) => {
                    (PgIndex::connect(&url, true)?, Some(server))
                }
                Err(e) => return Err(e.into()),
            };
            let ours = agentlog_postgres::schema::SCHEMA_VERSION;
            println!(
                "{}: schema version {ours} ({})",
                db.url(),
                match from {
                    None => "already current".to_string(),
                    Some(0) => "created".to_string(),
                    Some(v) => format!("migrated from version {v}"),
                }
            );
        }
        DbCommand::Grant(a) => {
            let url = required(a.db.db.as_deref())?;
            let db = PgIndex::connect(&url, true)?;
            let mut password = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut password)
                .context("reading the password from standard input")?;
            let password = password.trim_end_matches(['\n', '\r']);
            if password.is_empty() {
                bail!("give the role's password on standard input (one line)");
            }
            let access = if a.read { Access::Read } else { Access::Push };
            db.grant(&a.role, password, access)?;
            println!(
                "{}: role {} may {}",
                db.url(),
                a.role,
                if a.read {
                    "read every session"
                } else {
                    "push its own sessions (and see only those)"
                }
            );
            for m in &a.machine {
                let removed = db.bind_machine(m, &a.role)?;
                println!(
                    "{}: machine name {} is {}'s{}",
                    db.url(),
                    agentlog_formats::render::sanitize::sanitize_line(m),
                    a.role,
                    if removed > 0 {
                        format!(
                            " (removed {} another role had pushed under it)",
                            out::count(removed, "file")
                        )
                    } else {
                        String::new()
                    }
                );
            }
        }
        DbCommand::Status(a) => {
            let url = required(a.db.db.as_deref())?;
            let db = PgIndex::connect(&url, false)?;
            let (entries, sessions, files) = db.counts()?;
            let machines = db.machines()?;
            if a.json {
                out::print_json(&serde_json::json!({
                    "url": db.url(),
                    "schema_version": agentlog_postgres::schema::SCHEMA_VERSION,
                    "sessions": sessions,
                    "entries": entries,
                    "files": files,
                    "machines": machines.iter().map(|(m, n)| serde_json::json!({"machine": m, "sessions": n})).collect::<Vec<_>>(),
                }))?;
            } else {
                let mut s = format!(
                    "{}\n  {sessions} sessions, {entries} entries, {files} files\n",
                    db.url()
                );
                for (m, n) in machines {
                    s.push_str(&format!(
                        "  {:<24} {n} sessions\n",
                        agentlog_formats::render::sanitize::sanitize_line(&m)
                    ));
                }
                out::print(&s)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Returns the URL or an error saying how to give one.
pub fn required(url: Option<&str>) -> anyhow::Result<String> {
    agentlog_postgres::url_from(url, &|_| None).ok_or_else(|| {
        anyhow!("give the team database with --db postgres://USER:PASSWORD@HOST:PORT/DATABASE or $AGENTLOG_DB")
    })
}

/// Connects to the team database for reading (the schema is checked with
/// the first statement).
pub fn connect(url: &str) -> anyhow::Result<PgIndex> {
    Ok(PgIndex::connect_lazily(url)?)
}

/// A session fetched from the server into a temporary directory (removed
/// when dropped).
pub struct Fetched {
    dir: PathBuf,
    /// The session file.
    pub path: PathBuf,
    /// Its format.
    pub format: String,
}

impl Drop for Fetched {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Returns `session` as a local file: an existing path as is (`None`),
/// otherwise the session with that id (or id prefix) on the server, its
/// original bytes written to a private temporary directory under the
/// file's own name.
pub fn fetch(url: &str, session: &str) -> anyhow::Result<Option<Fetched>> {
    if Path::new(session).exists() {
        return Ok(None);
    }
    let db = connect(url)?;
    let mut found = db.find_session(session)?;
    if found.len() > 1 {
        if let Some(i) = found.iter().position(|s| s.session_id == session) {
            found = vec![found.swap_remove(i)];
        }
    }
    let s = match found.len() {
        0 => bail!(
            "{session}: no session on {} has an id starting with this; `agentlog ls --db URL` lists them",
            db.url()
        ),
        1 => found.remove(0),
        n => {
            let mut msg = format!("{session}: the id prefix matches {n} sessions on {}:", db.url());
            for s in found.iter().take(20) {
                msg.push_str(&format!(
                    "\n  {:<9} {}  {}:{}",
                    s.format,
                    agentlog_formats::render::sanitize::sanitize_line(&s.session_id),
                    agentlog_formats::render::sanitize::sanitize_line(&s.machine),
                    agentlog_formats::render::sanitize::sanitize_line(&s.path)
                ));
            }
            msg.push_str("\ngive more characters of the id");
            bail!(msg)
        }
    };
    let bytes = db.original(s.file_id)?;
    let dir =
        std::env::temp_dir().join(format!("agentlog-db-{}-{}", std::process::id(), s.file_id));
    agentlog_store::snapshot::ensure_dir(&dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    // The file's own name (its last component, never a path from the
    // server) keeps what formats read from names (ids, dates).
    let name = Path::new(&s.path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty() && n != ".." && n != ".")
        .unwrap_or_else(|| format!("session.{}", s.format));
    let path = dir.join(name);
    let fetched = Fetched {
        dir,
        path,
        format: s.format,
    };
    agentlog_store::snapshot::write_atomic(&fetched.path, &bytes)
        .with_context(|| format!("writing {}", fetched.path.display()))?;
    Ok(Some(fetched))
}
