use crate::fresh::IndexLocation;
use agentlog_api::Library;
use agentlog_mcp::Answers;
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

/// Serve past sessions to agents over the Model Context Protocol.
///
/// An MCP server with read-only tools over every session on this machine:
/// search, list_sessions, read_session, context, sessions_touching, stats
/// and resume_command (which returns a command, never runs one). Answers
/// are JSON cut to a budget, with paging; secrets in them are redacted
/// unless --no-redact is given.
///
/// Speaks over standard input and output (what an agent's MCP settings
/// start: `agentlog mcp`), or, with --http, streamable HTTP at
/// http://ADDR/mcp. On loopback no token is needed; on any other address
/// every request needs the token (given, or a new random one, printed):
/// `Authorization: Bearer TOKEN`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Serve streamable HTTP at this address (e.g. 127.0.0.1:8765; port 0:
    /// a free one) instead of standard input and output.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// With --http: require this token on every request (default beyond
    /// loopback: a new random token).
    #[arg(
        long,
        env = "AGENTLOG_MCP_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Return secrets as they are (by default API keys, tokens, passwords
    /// and private keys are replaced by [REDACTED:<kind>]: answers go into
    /// a model's context).
    #[arg(long)]
    pub no_redact: bool,
    #[command(flatten)]
    pub loc: IndexLocation,
}

/// Runs `agentlog mcp`.
pub fn cmd_mcp(args: Args) -> anyhow::Result<ExitCode> {
    let settings = args.loc.resolve()?;
    let answers = Answers::new(Library::new(settings), !args.no_redact);
    let Some(addr) = args.http else {
        agentlog_mcp::serve_stdio(answers)?;
        return Ok(ExitCode::SUCCESS);
    };
    let token = super::serve::token_rule(args.token.as_deref(), addr.ip().is_loopback())?;
    let shown = token.clone();
    agentlog_mcp::serve_http(answers, addr, token, move |at| {
        let host = super::serve::url_host(at);
        let mut err = std::io::stdout().lock();
        let _ = writeln!(
            err,
            "agentlog: MCP over streamable HTTP at http://{host}:{}/mcp",
            at.port()
        );
        if let Some(t) = &shown {
            let _ = writeln!(
                err,
                "agentlog: every request needs the header: Authorization: Bearer {t}"
            );
        }
        let _ = writeln!(err, "agentlog: press Ctrl-C to stop");
        let _ = err.flush();
    })?;
    Ok(ExitCode::SUCCESS)
}
