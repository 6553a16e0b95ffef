use crate::out;
use agentlog_formats::acpx::events::AuditLine;
use agentlog_formats::acpx::{self, record_to_value, Layout, SessionRecord, ThreadMessage};
use agentlog_store::acpx::AcpxStore;
use clap::Subcommand;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// acpx session records and their audit event logs.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the session records of a sessions directory.
    Ls {
        /// The sessions directory (default: ~/.acpx/sessions).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a session record: ids, times, the event log state and the
    /// thread.
    #[command(alias = "record")]
    Show {
        /// The record id (`<id>.json` in the directory).
        id: String,
        /// The sessions directory (default: ~/.acpx/sessions).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Print the record as JSON in the seed's shape.
        #[arg(long)]
        json: bool,
    },
    /// Print the audit events of a session, oldest segment first.
    Events {
        /// The record id.
        id: String,
        /// The sessions directory (default: ~/.acpx/sessions).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Print one JSON object per line, as stored.
        #[arg(long)]
        json: bool,
    },
    /// Check a record file against the strict rules; exits 1 when anything
    /// is wrong.
    Validate {
        /// The record file.
        file: PathBuf,
    },
}

/// Runs `agentlog seed acpx`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Ls { dir, json } => cmd_ls(store(dir), json),
        Command::Show { id, dir, json } => {
            let store = store(dir);
            let id = full_id(&store, &id)?;
            cmd_record(store, &id, json)
        }
        Command::Events { id, dir, json } => {
            let store = store(dir);
            let id = full_id(&store, &id)?;
            cmd_events(store, &id, json)
        }
        Command::Validate { file } => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let diags = acpx::validate_text(&file, &text);
            if diags.is_empty() {
                out::print(&format!(
                    "{}: valid acpx.session.v1 record\n",
                    file.display()
                ))?;
                return Ok(ExitCode::SUCCESS);
            }
            let mut s = String::new();
            for d in &diags {
                let _ = writeln!(s, "{d}");
            }
            out::print(&s)?;
            Ok(ExitCode::FAILURE)
        }
    }
}

fn store(dir: Option<PathBuf>) -> AcpxStore {
    let dir = dir.unwrap_or_else(|| {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(dirs::home_dir)
            .unwrap_or_default();
        AcpxStore::default_dir(&home)
    });
    AcpxStore::new(dir)
}

fn cmd_ls(store: AcpxStore, json: bool) -> anyhow::Result<ExitCode> {
    let mut rows = Vec::new();
    for id in store.list()? {
        match store.load(&id) {
            Ok(r) => rows.push(summary(&id, &r)),
            Err(e) => crate::eprintln_clean!("agentlog: skipping {id}: {e}"),
        }
    }
    if json {
        out::print_json(&rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut s = String::new();
    for r in &rows {
        let _ = writeln!(
            s,
            "{}  {}  {} messages  {}",
            r["acpxRecordId"].as_str().unwrap_or(""),
            r["lastUsedAt"].as_str().unwrap_or("-"),
            r["messages"],
            r["cwd"].as_str().unwrap_or("")
        );
    }
    out::print(&s)?;
    Ok(ExitCode::SUCCESS)
}

fn summary(id: &str, r: &SessionRecord) -> Value {
    let log = r.acpx.get().and_then(|a| a.event_log.get());
    json!({
        "acpxRecordId": id,
        "acpSessionId": r.acp_session_id.get(),
        "cwd": r.cwd.get(),
        "name": r.name.get(),
        "createdAt": r.created_at.get(),
        "lastUsedAt": r.last_used_at.get(),
        "closed": r.closed.get(),
        "title": r.thread.get().and_then(|t| t.title.get()),
        "messages": r.messages().len(),
        "auditSeq": r.acpx.get().and_then(|a| a.audit_seq.get()),
        "segments": log.and_then(|l| l.segment_count.get()),
        "lastWriteError": log.and_then(|l| l.last_write_error.get()),
    })
}

/// Returns the record id that `arg` names (the id, or the only id starting
/// with it), like session ids everywhere else.
fn full_id(store: &AcpxStore, arg: &str) -> anyhow::Result<String> {
    let ids = store.list()?;
    let id = agentlog_api::resolve::pick_id("acpx", arg, &ids, |id| store.record_path(id))
        .map_err(anyhow::Error::new)
        .map_err(|e| {
            e.context(format!(
                "no acpx session {arg:?} in {}; `agentlog seed acpx ls` lists them",
                store.dir().display()
            ))
        })?;
    Ok(id.to_string())
}

fn cmd_record(store: AcpxStore, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let r = store.load(id)?;
    if json {
        out::print_json(&record_to_value(&r, Layout::Seed, &[]))?;
        return Ok(ExitCode::SUCCESS);
    }
    let sum = summary(id, &r);
    let mut s = String::new();
    for (k, v) in sum.as_object().into_iter().flatten() {
        if !v.is_null() {
            let _ = writeln!(
                s,
                "{k}: {}",
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            );
        }
    }
    s.push('\n');
    for m in r.messages() {
        match m {
            ThreadMessage::User(u) => {
                let _ = writeln!(s, "user ({}):", u.id);
                for c in &u.content {
                    if let acpx::Content::Text(t) = c {
                        let _ = writeln!(s, "  {}", t.replace('\n', "\n  "));
                    }
                }
            }
            ThreadMessage::Agent(a) => {
                let _ = writeln!(s, "agent:");
                for c in &a.content {
                    match c {
                        acpx::Content::Text(t) => {
                            let _ = writeln!(s, "  {}", t.replace('\n', "\n  "));
                        }
                        acpx::Content::Thinking { text, .. } => {
                            let _ = writeln!(s, "  [thinking] {}", text.replace('\n', " "));
                        }
                        acpx::Content::ToolUse(t) => {
                            let _ = writeln!(s, "  [tool {}] {}", t.id, t.name);
                        }
                        acpx::Content::Other(v) => {
                            let _ = writeln!(
                                s,
                                "  [{}]",
                                v.as_object()
                                    .and_then(|o| o.keys().next())
                                    .map(String::as_str)
                                    .unwrap_or("item")
                            );
                        }
                    }
                }
            }
            ThreadMessage::Resume => s.push_str("-- resumed --\n"),
            ThreadMessage::Invalid(_) => s.push_str("[invalid message]\n"),
        }
    }
    out::print(&s)?;
    Ok(ExitCode::SUCCESS)
}

fn cmd_events(store: AcpxStore, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let (events, diags) = store.read_events(id)?;
    if events.is_empty() && diags.is_empty() && !store.record_path(id).exists() {
        anyhow::bail!(
            "no acpx session {id:?} in {}; `agentlog seed acpx ls` lists them",
            store.dir().display()
        );
    }
    for d in &diags {
        crate::eprintln_clean!("{d}");
    }
    let mut s = String::new();
    for e in &events {
        if json {
            let v = match &e.event {
                AuditLine::Envelope(env) => serde_json::to_value(env)?,
                AuditLine::FlowTrace {
                    seq,
                    at,
                    direction,
                    message,
                } => {
                    json!({"seq": seq, "at": at, "direction": direction, "message": message})
                }
                AuditLine::JsonRpc(v) => v.clone(),
            };
            let _ = writeln!(s, "{}", serde_json::to_string(&v)?);
            continue;
        }
        match &e.event {
            AuditLine::Envelope(env) => {
                let _ = writeln!(
                    s,
                    "{:>6}  {}  {:<9} {:<7} {}{}",
                    env.seq,
                    env.timestamp,
                    env.stream,
                    env.source,
                    env.kind,
                    env.request_id
                        .as_deref()
                        .map(|r| format!("  [{r}]"))
                        .unwrap_or_default()
                );
            }
            AuditLine::FlowTrace {
                seq,
                at,
                direction,
                message,
            } => {
                let what = message
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("response");
                let _ = writeln!(s, "{seq:>6}  {at}  {direction:<9} {what}");
            }
            AuditLine::JsonRpc(v) => {
                let what = v
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("response");
                let _ = writeln!(s, "     -  {what}");
            }
        }
    }
    out::print(&s)?;
    Ok(
        if diags
            .iter()
            .any(|d| d.severity == agentlog_formats::Severity::Error)
        {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        },
    )
}
