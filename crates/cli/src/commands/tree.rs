use crate::{load, out};
use agentlog_formats::render::sanitize::sanitize_line;
use std::process::ExitCode;

/// Show the branch structure of a session.
///
/// One line per entry, indented under its parent; branch points, labels
/// and the current leaf are marked.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session file, or session id (prefix), or AGENT:ID.
    pub session: String,
    #[command(flatten)]
    pub which: crate::load::Which,
    /// Read as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// Print the tree as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `agentlog tree`.
pub fn cmd_tree(args: Args) -> anyhow::Result<ExitCode> {
    load::small_heap(&args.session);
    let (_path, _format, read) =
        load::read_which(&args.session, args.from.as_deref(), &args.which)?;
    let t = agentlog_api::tree::layout(&read.session);
    if args.json {
        out::print_json(&t)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    let id_width = t
        .nodes
        .iter()
        .map(|n| sanitize_line(&n.id).chars().count())
        .max()
        .unwrap_or(0);
    for n in &t.nodes {
        let marker = if n.is_leaf {
            "●"
        } else if n.children > 1 {
            "┬"
        } else if n.on_active_branch {
            "│"
        } else {
            "·"
        };
        let mut line = format!(
            "{}{marker} {:<id_width$} {:<21} {}",
            "  ".repeat(n.depth.min(40)),
            sanitize_line(&n.id),
            n.kind,
            n.summary
        );
        if let Some(l) = &n.label {
            line.push_str(&format!("  [{}]", sanitize_line(l)));
        }
        if n.is_leaf {
            line.push_str("  ← leaf");
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text.push_str(&format!(
        "{}, {}, {}, {} {}\n",
        out::count(t.nodes.len() as u64, "entry"),
        out::count(t.roots as u64, "root"),
        out::count(t.branch_points.len() as u64, "branch point"),
        out::group(t.leaves as u64),
        if t.leaves == 1 { "leaf" } else { "leaves" }
    ));
    out::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
