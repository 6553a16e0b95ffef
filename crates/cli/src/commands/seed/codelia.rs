use crate::out;
use agentlog_formats::codelia::{sessions_dir, FORMAT};
use agentlog_formats::Format;
use agentlog_store::codelia::{self as store, replay, Prompt, SessionStateStore};
use anyhow::Context;
use clap::Subcommand;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// codelia run logs: list runs and resume snapshots, replay a prompt.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show the exact prompt of one LLM invocation of a run, rebuilt from
    /// its llm.request snapshot (messages, tools, tool choice, model).
    Replay {
        /// The run log (`sessions/YYYY/MM/DD/<run_id>.jsonl`).
        file: PathBuf,
        /// The invocation number (`seq`); without it, the invocations are
        /// listed.
        #[arg(long, short = 'n', value_name = "N")]
        invocation: Option<u64>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the runs of a sessions directory, oldest first (with --states,
    /// the resume snapshots, most recent first).
    #[command(alias = "runs")]
    Ls {
        /// The sessions directory (default: ~/.codelia/sessions, or
        /// $XDG_STATE_HOME/codelia/sessions with CODELIA_LAYOUT=xdg).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// List the resume snapshots (`state/<session_id>.json`) instead.
        #[arg(long)]
        states: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The same as `ls --states`.
    #[command(hide = true)]
    States {
        /// The sessions directory.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `agentlog seed codelia`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Replay {
            file,
            invocation,
            json,
        } => cmd_replay(file, invocation, json),
        Command::Ls {
            dir,
            states: false,
            json,
        } => cmd_runs(dir, json),
        Command::Ls {
            dir,
            states: true,
            json,
        }
        | Command::States { dir, json } => cmd_states(dir, json),
    }
}

fn default_dir(dir: Option<PathBuf>) -> PathBuf {
    dir.unwrap_or_else(|| sessions_dir(&crate::config::process_env()))
}

fn cmd_replay(file: PathBuf, invocation: Option<u64>, json: bool) -> anyhow::Result<ExitCode> {
    let Some(seq) = invocation else {
        let read = FORMAT
            .read_path(&file)
            .with_context(|| format!("reading {}", file.display()))?;
        let seqs = replay::invocations(&read.session);
        if json {
            out::print_json(&seqs)?;
        } else if seqs.is_empty() {
            out::print(&format!("{}: no llm.request records\n", file.display()))?;
        } else {
            let list: Vec<String> = seqs.iter().map(u64::to_string).collect();
            out::print(&format!(
                "invocations: {}\nshow one with --invocation N\n",
                list.join(", ")
            ))?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    let (prompt, diags) = replay::replay(&file, seq)?;
    for d in &diags {
        crate::eprintln_clean!("{d}");
    }
    if json {
        out::print_json(&prompt)?;
    } else {
        out::print(&render_prompt(&prompt))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Returns a prompt as text for a person.
fn render_prompt(p: &Prompt) -> String {
    let mut s = String::new();
    let _ = write!(s, "invocation {}", p.seq);
    if let Some(l) = p.line {
        let _ = write!(s, " (line {l}");
        if let Some(ts) = &p.ts {
            let _ = write!(s, ", {ts}");
        }
        s.push(')');
    }
    s.push('\n');
    let provider = p
        .model_info
        .as_ref()
        .and_then(|m| m.get("provider"))
        .and_then(Value::as_str);
    let model = p.model.clone().or_else(|| {
        p.model_info
            .as_ref()
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    if let Some(m) = model {
        let _ = write!(s, "model: {m}");
        if let Some(pv) = provider {
            let _ = write!(s, " ({pv})");
        }
        s.push('\n');
    }
    let tools: Vec<&str> = p
        .tools
        .as_ref()
        .and_then(Value::as_array)
        .map(|t| t.iter().filter_map(tool_name).collect())
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "tools: {}",
        if tools.is_empty() {
            "(none)".to_string()
        } else {
            tools.join(", ")
        }
    );
    match &p.tool_choice {
        None | Some(Value::Null) => s.push_str("tool choice: (default)\n"),
        Some(v) => {
            let _ = writeln!(s, "tool choice: {v}");
        }
    }
    let _ = writeln!(s, "messages: {}", p.messages.len());
    for m in &p.messages {
        s.push('\n');
        s.push_str(&render_message(m));
    }
    s
}

fn tool_name(t: &Value) -> Option<&str> {
    t.get("function")
        .and_then(|f| f.get("name"))
        .or_else(|| t.get("name"))
        .and_then(Value::as_str)
}

fn render_message(m: &Value) -> String {
    let role = m.get("role").and_then(Value::as_str).unwrap_or("?");
    let mut s = format!("[{role}");
    if let Some(id) = m.get("tool_call_id").and_then(Value::as_str) {
        let _ = write!(s, " {id}");
    }
    s.push_str("]\n");
    match m.get("content") {
        Some(Value::String(t)) => s.push_str(t),
        Some(Value::Array(parts)) => {
            let texts: Vec<String> = parts
                .iter()
                .map(|p| match p.get("text").and_then(Value::as_str) {
                    Some(t) => t.to_string(),
                    None => format!(
                        "[{}]",
                        p.get("type").and_then(Value::as_str).unwrap_or("part")
                    ),
                })
                .collect();
            s.push_str(&texts.join("\n"));
        }
        _ => {}
    }
    if !s.ends_with('\n') {
        s.push('\n');
    }
    for c in m
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let f = c.get("function");
        let name = f
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("?");
        let args = match f.and_then(|f| f.get("arguments")) {
            Some(Value::String(a)) => a.clone(),
            Some(v) => v.to_string(),
            None => String::new(),
        };
        let _ = writeln!(s, "-> {name}({args})");
    }
    s
}

fn cmd_runs(dir: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let dir = default_dir(dir);
    let (runs, skipped) = store::list_runs(&dir);
    for (p, why) in &skipped {
        crate::eprintln_clean!("agentlog: warning: {}: skipped: {why}", p.display());
    }
    if json {
        out::print_json(&runs)?;
        return Ok(ExitCode::SUCCESS);
    }
    if runs.is_empty() {
        crate::eprintln_clean!("no codelia runs under {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut s = String::new();
    for r in &runs {
        let _ = writeln!(
            s,
            "{:<26}  {:<10}  {:>3} calls  {}  {}",
            r.started_at.as_deref().unwrap_or("-"),
            r.outcome,
            r.invocations,
            r.run_id,
            r.input.as_deref().unwrap_or("")
        );
    }
    out::print(&s)?;
    Ok(ExitCode::SUCCESS)
}

fn cmd_states(dir: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let dir = default_dir(dir);
    let listing = SessionStateStore::new(&dir).list()?;
    for (p, why) in &listing.skipped {
        crate::eprintln_clean!("agentlog: warning: {}: skipped: {why}", p.display());
    }
    if json {
        out::print_json(&listing.states)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut s = String::new();
    for st in &listing.states {
        let _ = writeln!(
            s,
            "{:<26}  {:>4} messages  {}",
            st.updated_at, st.message_count, st.session_id
        );
    }
    out::print(&s)?;
    Ok(ExitCode::SUCCESS)
}
