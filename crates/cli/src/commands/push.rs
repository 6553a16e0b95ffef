use crate::commands::db::required;
use crate::fresh::discover;
use crate::{config, out};
use agentlog_postgres::{PgIndex, PushOptions};
use std::io::IsTerminal;
use std::process::ExitCode;

/// Send this machine's sessions to a team database (PostgreSQL), or as
/// OpenTelemetry traces to an OTLP/HTTP endpoint (--otlp).
///
/// Sends what changed since the last push: new and rewritten session files
/// whole, and of append-only files (pi, Claude Code, Codex) only the lines
/// added since. Each file is sent in one transaction, so a push that is
/// killed or loses its connection can simply be run again: nothing is sent
/// twice and nothing is lost. A second push with no change sends nothing.
/// The original bytes are kept (compressed) so sessions can be shown,
/// exported and resumed from the server (`--db` on those commands).
/// Sessions are tagged with this machine's name and the user. Secrets are
/// redacted before anything is sent (see --no-redact). Exits 1 when any
/// file was not sent (each is named on standard error with the reason).
///
/// With --otlp URL each session is a trace (a span per model call and per
/// tool call, the GenAI semantic conventions) posted to URL/v1/traces:
/// Arize Phoenix, Langfuse, Jaeger or any OpenTelemetry collector. Only
/// what the endpoint has not accepted before is sent (kept per endpoint in
/// $XDG_DATA_HOME/agentlog/otlp/): a second push sends nothing, turns
/// appended since send their new spans, and a turn still running waits
/// for a later push (or for its file to be an hour old).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The database URL: postgres://USER:PASSWORD@HOST:PORT/DATABASE.
    #[arg(long, value_name = "URL", env = "AGENTLOG_DB", hide_env_values = true)]
    pub db: Option<String>,
    /// This machine's name on the server (default: $AGENTLOG_MACHINE, else
    /// the host name).
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    /// The user the sessions belong to (default: the login name).
    #[arg(long, value_name = "NAME")]
    pub user: Option<String>,
    /// Search PATH instead of AGENT's default locations (repeatable).
    #[arg(long = "root", value_name = "AGENT=PATH")]
    pub roots: Vec<String>,
    /// Send secrets as they are. By default API keys, tokens, passwords and
    /// private keys are replaced by `[REDACTED:kind]` in everything sent
    /// (the bytes kept and the searchable text), and a report says what
    /// was replaced.
    #[arg(long)]
    pub no_redact: bool,
    /// Send the sessions as traces to this OTLP/HTTP endpoint instead of
    /// the team database: a base URL (http://127.0.0.1:6006 for Phoenix,
    /// http://127.0.0.1:4318 for a collector or Jaeger) to which /v1/traces
    /// is added, or the traces URL itself.
    #[arg(long, value_name = "URL")]
    pub otlp: Option<String>,
    /// With --otlp: a header sent with every request (repeatable), as
    /// NAME=VALUE, e.g. "Authorization=Basic …" for Langfuse. Headers in
    /// $OTEL_EXPORTER_OTLP_HEADERS (NAME=VALUE,NAME=VALUE) are sent too.
    #[arg(long = "header", value_name = "NAME=VALUE", requires = "otlp")]
    pub headers: Vec<String>,
    /// With --otlp: protobuf (every OTLP/HTTP receiver takes it; Phoenix
    /// takes only it) or json.
    #[arg(long, value_name = "ENCODING", default_value = "protobuf", value_parser = ["protobuf", "json"], requires = "otlp")]
    pub encoding: String,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `agentlog push`.
pub fn cmd_push(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(endpoint) = args.otlp.clone() {
        return super::push_otlp::cmd_push_otlp(&args, endpoint);
    }
    let url = required(args.db.as_deref())?;
    let settings = config::settings(&args.roots)?;
    let found = discover(&settings, true)?;
    let db = PgIndex::connect(&url, true)?;
    let opts = PushOptions {
        machine: args
            .machine
            .clone()
            .unwrap_or_else(agentlog_postgres::default_machine),
        user: args
            .user
            .clone()
            .unwrap_or_else(agentlog_postgres::default_user),
        redact: !args.no_redact,
    };
    let bar = progress_bar(found.len(), args.json);
    let report = db.push(&found, &opts, &mut |p| bar.set_position(p.done as u64));
    bar.finish_and_clear();
    let report = report?;
    for (path, why) in &report.skipped {
        eprintln!("agentlog: warning: {path}: not pushed: {why}");
    }
    for (path, why) in &report.without_original {
        eprintln!(
            "agentlog: note: {path}: searchable on the server, but its file is not kept: {why}"
        );
    }
    if !report.redactions.is_empty() && !args.json {
        eprint!("{}", report.redactions);
    }
    if args.json {
        out::print_json(&serde_json::json!({
            "url": db.url(),
            "machine": opts.machine,
            "user": opts.user,
            "report": report,
        }))?;
    } else {
        let mb = |b: u64| b as f64 / 1e6;
        out::print(&format!(
            "pushed to {} as {}/{}: {} files looked at, {} unchanged, {} sent whole, {} appended; {:.1} MB ({:.1} MB compressed), {} entries, {} usage rows\n",
            db.url(),
            opts.machine,
            opts.user,
            report.files,
            report.unchanged,
            report.sent_whole,
            report.appended,
            mb(report.bytes),
            mb(report.compressed_bytes),
            report.entries,
            report.usage,
        ))?;
    }
    // A file not sent is a failed push, whatever else went through: a
    // fleet's cron must see it.
    if !report.skipped.is_empty() {
        let mut why: Vec<&str> = report.skipped.iter().map(|(_, w)| w.as_str()).collect();
        why.sort_unstable();
        why.dedup();
        eprintln!(
            "agentlog: error: {} of {} not pushed ({}); the others were",
            report.skipped.len(),
            out::count(report.files as u64, "file"),
            why.join("; ")
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The progress bar of a push of `files` files (hidden off a terminal, for
/// one file, or with --json).
pub fn progress_bar(files: usize, json: bool) -> indicatif::ProgressBar {
    if std::io::stderr().is_terminal() && !json && files > 1 {
        let b = indicatif::ProgressBar::with_draw_target(
            Some(files as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{spinner} pushing {pos}/{len} {wide_bar}")
        {
            b.set_style(style);
        }
        b
    } else {
        indicatif::ProgressBar::hidden()
    }
}
