use crate::fresh::{self, IndexLocation};
use agentlog_web::{serve, ServeConfig, Source};
use anyhow::Context;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;

/// Browse every session in a web browser (a local web app).
///
/// Serves the session list (filters, sort, paging), search with
/// highlighted snippets that link to the message, each session (markdown,
/// thinking, tool calls, diffs, images, subagents, compactions, branches,
/// a link per message, resume commands), token and cost charts, and a live
/// tail of sessions being written. Everything is embedded in the binary;
/// nothing is fetched from the internet.
///
/// Listens on 127.0.0.1 (this machine only) by default, on a free port
/// unless --port is given. Listening on any other address requires a
/// token: the one given, or a new random one, printed in the URL.
///
/// With --db, serves the team database instead of this machine: its
/// catalog, search and statistics, and each session from the bytes that
/// were pushed (live tail follows new pushes).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The address to listen on (127.0.0.1: this machine only).
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub host: IpAddr,
    /// The port (0: a free one).
    #[arg(long, short = 'p', default_value_t = 0)]
    pub port: u16,
    /// Require this token on every request (default beyond loopback: a new
    /// random token).
    #[arg(
        long,
        env = "AGENTLOG_SERVE_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Replace secrets (API keys, tokens, passwords, private keys) in every
    /// page; always on when listening beyond loopback.
    #[arg(long)]
    pub redact: bool,
    /// Seconds between scans for new and changed sessions (0: never).
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub refresh: u64,
    /// Serve the team database instead of this machine:
    /// postgres://USER:PASSWORD@HOST:PORT/DATABASE.
    #[arg(long, value_name = "URL", env = "AGENTLOG_DB", hide_env_values = true)]
    pub db: Option<String>,
    #[command(flatten)]
    pub loc: IndexLocation,
}

/// Runs `agentlog serve`.
pub fn cmd_serve(args: Args) -> anyhow::Result<ExitCode> {
    let source = match &args.db {
        Some(url) => shared(url)?,
        None => local(&args)?,
    };
    let token = token_rule(args.token.as_deref(), args.host.is_loopback())?;
    let from = match &args.db {
        Some(url) => format!(
            " (the team database {})",
            agentlog_postgres::hide_password(url)
        ),
        None => String::new(),
    };
    let cfg = ServeConfig {
        source,
        addr: SocketAddr::new(args.host, args.port),
        token: token.clone(),
        refresh_secs: args.refresh,
        redact: args.redact || !args.host.is_loopback(),
    };
    let redact = cfg.redact;
    serve(cfg, |addr| {
        let host = url_host(addr);
        let mut out = std::io::stdout().lock();
        match &token {
            Some(t) => {
                let _ = writeln!(out, "agentlog: serving at http://{host}:{}/?token={t}{from}", addr.port());
                if !addr.ip().is_loopback() {
                    let _ = writeln!(out, "agentlog: listening beyond this machine ({}); every request needs the token above", addr.ip());
                }
            }
            None => {
                let _ = writeln!(out, "agentlog: serving at http://{host}:{}/{from}", addr.port());
            }
        }
        if redact {
            let _ = writeln!(out, "agentlog: secrets in sessions are redacted on every page");
        }
        let _ = writeln!(out, "agentlog: press Ctrl-C to stop");
        let _ = out.flush();
    })
    .context("serving")?;
    Ok(ExitCode::SUCCESS)
}

/// The token a server listening on `loopback` or beyond takes: the one
/// given (checked: at least 16 printable characters, none that would break
/// a URL's query), none on loopback, else a new random one. `serve` and
/// `mcp --http` follow the same rule.
pub(crate) fn token_rule(given: Option<&str>, loopback: bool) -> anyhow::Result<Option<String>> {
    Ok(match (given, loopback) {
        (Some(t), _)
            if t.len() < 16
                || !t
                    .bytes()
                    .all(|b| b.is_ascii_graphic() && b != b';' && b != b'&') =>
        {
            anyhow::bail!("--token must be at least 16 printable characters without `;` or `&`")
        }
        (Some(t), _) => Some(t.to_string()),
        (None, true) => None,
        (None, false) => Some(agentlog_web::new_token()?),
    })
}

/// The host part of a URL a user can open for a server bound to `addr`
/// (an unspecified address is reached at 127.0.0.1; IPv6 in brackets).
pub(crate) fn url_host(addr: SocketAddr) -> String {
    let host = if addr.ip().is_unspecified() {
        "127.0.0.1".to_string()
    } else {
        addr.ip().to_string()
    };
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    }
}

/// The team database at `url`, checked once before serving (a wrong
/// address or password is said at start, not on the first page).
fn shared(url: &str) -> anyhow::Result<Source> {
    drop(agentlog_postgres::PgIndex::connect(url, false)?);
    let url = url.to_string();
    Ok(Source::Shared {
        open: std::sync::Arc::new(move || {
            Ok(Box::new(agentlog_postgres::PgIndex::connect(&url, false)?)
                as Box<dyn agentlog_index::Backend>)
        }),
    })
}

/// This machine's index, brought up to date before serving.
fn local(args: &Args) -> anyhow::Result<Source> {
    let settings = args.loc.resolve()?;
    // Sessions whose files their agents deleted are read from the archive.
    agentlog_api::archive::attach(&settings);
    let path = settings.index_path.clone();
    let mut idx = fresh::open(&path)?;
    let found = fresh::discover(&settings, true)?;
    // The plan holds the index's update lock until it is applied or dropped:
    // it must not outlive this block (the server updates the index too).
    let plan = idx.plan(&found)?;
    if plan.is_empty() {
        drop(plan);
    } else {
        crate::eprintln_clean!(
            "agentlog: indexing {} session files ({} MB) at {}",
            plan.files_to_read(),
            plan.bytes / 1_000_000,
            path.display()
        );
        // The archive keeps the files first, as every refresh does.
        if let Some(k) =
            agentlog_api::archive::capture(&settings, &plan.found(), false, &mut |_, _| {})?
        {
            for f in &k.report.failed {
                crate::eprintln_clean!("agentlog: warning: not archived: {}", f.message);
            }
        }
        idx.apply(plan, &mut |_| {})?;
    }
    drop(idx);
    Ok(Source::Local { settings })
}
