use crate::{load, out};
use agentlog_formats::render::one_line;
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
    /// Session file, or session id (prefix), or AGENT:ID.
    pub session: String,
    #[command(flatten)]
    pub which: crate::load::Which,
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

/// Runs `agentlog context`.
pub fn cmd_context(args: Args) -> anyhow::Result<ExitCode> {
    let path = load::resolve_which(&args.session, &args.which)?;
    let format = match args.from.as_deref() {
        Some(name) => load::format_named(name)?,
        None => agentlog_formats::registry::detect(&path)?,
    };
    let ctx = agentlog_api::context::context(&path, format, args.leaf.as_deref()).map_err(|e| {
        let e = anyhow::Error::new(e);
        match &args.leaf {
            Some(_) => crate::out::hinted(
                e,
                format!("`agentlog tree {}` lists the entry ids", path.display()),
            ),
            None => e,
        }
    })?;
    for d in &ctx.diagnostics {
        crate::eprintln_clean!("{d}");
    }
    if args.json {
        out::print_json(&ctx.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    if format.name() == "pi" {
        text.push_str(&format!(
            "leaf: {}\n",
            ctx.leaf_id.as_deref().unwrap_or("(none)")
        ));
        text.push_str(&format!(
            "model: {}\n",
            ctx.model.as_deref().unwrap_or("(none)")
        ));
    } else {
        text.push_str(&format!(
            "model: {}\n",
            ctx.model.as_deref().unwrap_or("(unknown)")
        ));
    }
    text.push_str(&format!(
        "thinking: {}\n",
        ctx.thinking_level.as_deref().unwrap_or("(unknown)")
    ));
    if !ctx.ttsr_rules.is_empty() {
        text.push_str(&format!("ttsr rules: {}\n", ctx.ttsr_rules.join(", ")));
    }
    text.push_str(&format!("messages: {}\n\n", ctx.messages.len()));
    for m in &ctx.messages {
        text.push_str(&format!("[{}] {}\n", m.role, one_line(&m.summary, 160)));
    }
    out::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
