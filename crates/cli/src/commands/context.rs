use crate::{load, out};
use agentlog_formats::render::one_line;
use agentlog_model::{BlockKind, Message};
use agentlog_store::pi::SessionManager;
use serde::Serialize;
use serde_json::Value;
use std::process::ExitCode;

/// Print the context (messages) the model would see at the leaf.
///
/// For pi files this is pi's context: the last compaction's summary, the
/// entries it kept, branch summaries and custom messages, with the model
/// and thinking level in effect. For other formats it is the messages of
/// the branch from the root to the leaf. The file is not changed (an old pi
/// file is migrated in memory only).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session file, or session id (prefix).
    pub session: String,
    /// Build the context at this entry instead of the current leaf.
    #[arg(long, value_name = "ID")]
    pub leaf: Option<String>,
    /// Read as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// Print the context as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The context of a non-pi session, for `--json`.
#[derive(Serialize)]
struct BranchContext<'a> {
    leaf_id: Option<&'a str>,
    model: Option<&'a str>,
    thinking_level: Option<&'a str>,
    messages: Vec<&'a Message>,
}

/// Runs `agentlog context`.
pub fn cmd_context(args: Args) -> anyhow::Result<ExitCode> {
    let path = load::resolve(&args.session)?;
    let format = match args.from.as_deref() {
        Some(name) => load::format_named(name)?,
        None => agentlog_formats::registry::detect(&path)?,
    };
    if format.name() == "pi" {
        return pi_context(&path, &args);
    }
    let (_path, _format, mut read) = load::read(&args.session, Some(format.name()))?;
    if let Some(leaf) = &args.leaf {
        read.session
            .set_leaf(Some(leaf))
            .map_err(anyhow::Error::msg)?;
    }
    let session = &read.session;
    let branch = session.active_branch();
    let messages: Vec<&Message> = branch.iter().filter_map(|e| e.message()).collect();
    let model = messages.iter().rev().find_map(|m| m.model.as_deref());
    let model = model.or(session.meta.model.model.as_deref());
    let thinking = session.meta.model.thinking_level.as_deref();
    if args.json {
        out::print_json(&BranchContext {
            leaf_id: session.leaf_id.as_deref(),
            model,
            thinking_level: thinking,
            messages,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    text.push_str(&format!("model: {}\n", model.unwrap_or("(unknown)")));
    text.push_str(&format!("thinking: {}\n", thinking.unwrap_or("(unknown)")));
    text.push_str(&format!("messages: {}\n\n", messages.len()));
    for m in messages {
        text.push_str(&format!(
            "[{}] {}\n",
            m.role,
            one_line(&message_summary(m), 160)
        ));
    }
    out::print(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn pi_context(path: &std::path::Path, args: &Args) -> anyhow::Result<ExitCode> {
    let sm = SessionManager::load(path)?;
    for d in sm.diagnostics() {
        crate::eprintln_clean!("{d}");
    }
    let ctx = match &args.leaf {
        Some(id) => sm.build_session_context_at(Some(id)).map_err(|e| {
            anyhow::anyhow!(
                "{}: {e}; `agentlog tree {}` lists the entry ids",
                path.display(),
                path.display()
            )
        })?,
        None => sm.build_session_context(),
    };
    if args.json {
        out::print_json(&ctx)?;
        return Ok(ExitCode::SUCCESS);
    }
    let model = match &ctx.model {
        Some(m) => format!(
            "{}/{}",
            m.provider.as_deref().unwrap_or("?"),
            m.model_id.as_deref().unwrap_or("?")
        ),
        None => "(none)".into(),
    };
    let mut text = String::new();
    text.push_str(&format!(
        "leaf: {}\n",
        args.leaf
            .as_deref()
            .or(sm.get_leaf_id())
            .unwrap_or("(none)")
    ));
    text.push_str(&format!("model: {model}\n"));
    text.push_str(&format!("thinking: {}\n", ctx.thinking_level_str()));
    if !ctx.injected_ttsr_rules.is_empty() {
        text.push_str(&format!(
            "ttsr rules: {}\n",
            ctx.injected_ttsr_rules.join(", ")
        ));
    }
    text.push_str(&format!("messages: {}\n\n", ctx.messages.len()));
    for m in &ctx.message_values() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("?");
        text.push_str(&format!("[{role}] {}\n", one_line(&pi_summary(m), 160)));
    }
    out::print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Returns a short text for a pi context message.
fn pi_summary(m: &Value) -> String {
    if let Some(s) = m.get("summary").and_then(Value::as_str) {
        return s.to_string();
    }
    if let Some(c) = m.get("command").and_then(Value::as_str) {
        return format!("$ {c}");
    }
    match agentlog_formats::pi::message_from_value(m) {
        Some(msg) => message_summary(&msg),
        None => String::new(),
    }
}

fn message_summary(m: &Message) -> String {
    let mut parts = Vec::new();
    for b in &m.content {
        match &b.kind {
            BlockKind::Text { text } => parts.push(text.clone()),
            BlockKind::Thinking { .. } => parts.push("(thinking)".into()),
            BlockKind::ToolCall { name, input, .. } => {
                parts.push(format!("{name}({})", one_line(&input.to_string(), 60)))
            }
            BlockKind::ToolResult { content, .. } => parts.push(
                content
                    .iter()
                    .filter_map(|c| c.plain_text())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            BlockKind::Image { .. } => parts.push("(image)".into()),
            BlockKind::Other { .. } => {}
        }
    }
    parts.join(" ")
}
