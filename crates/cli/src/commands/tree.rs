use crate::{load, out};
use agentlog_formats::render::one_line;
use agentlog_formats::render::sanitize::sanitize_line;
use agentlog_model::{BlockKind, Entry, EntryKind};
use serde::Serialize;
use std::collections::HashMap;
use std::process::ExitCode;

/// Show the branch structure of a session.
///
/// One line per entry, indented under its parent; branch points, labels
/// and the current leaf are marked.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session file, or session id (prefix).
    pub session: String,
    /// Read as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// Print the tree as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Node<'a> {
    id: &'a str,
    parent_id: Option<&'a str>,
    depth: usize,
    kind: &'static str,
    summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<&'a str>,
    children: usize,
    on_active_branch: bool,
    is_leaf: bool,
}

/// Runs `agentlog tree`.
pub fn cmd_tree(args: Args) -> anyhow::Result<ExitCode> {
    let (_path, _format, read) = load::read(&args.session, args.from.as_deref())?;
    let session = &read.session;
    let tree = session.tree();
    let mut labels: HashMap<&str, Option<&str>> = HashMap::new();
    for e in &session.entries {
        if let EntryKind::Label { target_id, label } = &e.kind {
            labels.insert(target_id, label.as_deref());
        }
    }
    let active: std::collections::HashSet<&str> = session
        .active_branch()
        .iter()
        .map(|e| e.id.as_str())
        .collect();
    let leaf = session.leaf_id.as_deref();
    // Indent only below branch points, so a long linear chain stays flat.
    let mut level: HashMap<&str, usize> = HashMap::new();
    let nodes: Vec<Node<'_>> = tree
        .nodes()
        .into_iter()
        .map(|n| {
            let depth = match n
                .entry
                .parent_id
                .as_deref()
                .and_then(|p| level.get(p).map(|l| (p, *l)))
            {
                Some((p, l)) => l + usize::from(tree.children(p).len() > 1),
                None => 0,
            };
            level.insert(&n.entry.id, depth);
            (n, depth)
        })
        .map(|(n, depth)| Node {
            id: &n.entry.id,
            parent_id: n.entry.parent_id.as_deref(),
            depth,
            kind: n.entry.kind_name(),
            summary: summary(n.entry),
            label: labels.get(n.entry.id.as_str()).copied().flatten(),
            children: tree.children(&n.entry.id).len(),
            on_active_branch: active.contains(n.entry.id.as_str()),
            is_leaf: Some(n.entry.id.as_str()) == leaf,
        })
        .collect();
    if args.json {
        out::print_json(&serde_json::json!({
            "session": session.meta.id,
            "leaf_id": leaf,
            "branch_points": tree.branch_points().iter().map(|e| &e.id).collect::<Vec<_>>(),
            "nodes": nodes,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    let id_width = nodes
        .iter()
        .map(|n| sanitize_line(n.id).chars().count())
        .max()
        .unwrap_or(0);
    for n in &nodes {
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
            sanitize_line(n.id),
            n.kind,
            n.summary
        );
        if let Some(l) = n.label {
            line.push_str(&format!("  [{}]", sanitize_line(l)));
        }
        if n.is_leaf {
            line.push_str("  ← leaf");
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    let points = tree.branch_points().len();
    let leaves = tree.leaves().len();
    text.push_str(&format!(
        "{}, {}, {}, {leaves} {}\n",
        out::count(session.entries.len() as u64, "entry"),
        out::count(tree.roots().len() as u64, "root"),
        out::count(points as u64, "branch point"),
        if leaves == 1 { "leaf" } else { "leaves" }
    ));
    out::print(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn summary(e: &Entry) -> String {
    match &e.kind {
        EntryKind::Message(m) => {
            let text = m
                .content
                .iter()
                .find_map(|b| match &b.kind {
                    BlockKind::Text { text } if !text.trim().is_empty() => Some(text.clone()),
                    BlockKind::ToolCall { name, .. } => Some(format!("→ {name}")),
                    _ => None,
                })
                .unwrap_or_default();
            format!("{}: {}", m.role, one_line(&text, 60))
        }
        EntryKind::ModelChange { model, .. } => model.clone(),
        EntryKind::ThinkingLevelChange { level } => level.clone(),
        EntryKind::Compaction { summary, .. } | EntryKind::BranchSummary { summary, .. } => {
            one_line(summary, 60)
        }
        EntryKind::Label { target_id, label } => {
            format!("{target_id} = {}", label.as_deref().unwrap_or("(cleared)"))
        }
        EntryKind::Custom { custom_type, .. } | EntryKind::CustomMessage { custom_type, .. } => {
            custom_type.clone()
        }
        _ => String::new(),
    }
}
