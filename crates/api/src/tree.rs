//! A session's tree laid out for display (`agentlog tree`): every entry in
//! order with its depth (indented only below branch points, so a long
//! linear chain stays flat), a one-line summary, its label, and whether it
//! is on the active branch or the leaf.
//!
//! ```
//! use agentlog_api::tree::layout;
//! let s = agentlog_api::example::session(0);
//! let t = layout(&s);
//! assert_eq!(t.nodes.len(), s.entries.len());
//! assert_eq!(t.leaves, 1);
//! ```

use agentlog_formats::render::one_line;
use agentlog_model::{BlockKind, Entry, EntryKind, Session};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// One entry of the tree.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    /// The entry's id.
    pub id: String,
    /// Its parent's id.
    pub parent_id: Option<String>,
    /// How far to indent it.
    pub depth: usize,
    /// The kind of entry (`message`, `compaction`, …).
    pub kind: &'static str,
    /// What it holds, on one line.
    pub summary: String,
    /// The label set on it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// How many children it has.
    pub children: usize,
    /// True when it is on the branch from the root to the leaf.
    pub on_active_branch: bool,
    /// True for the current leaf.
    pub is_leaf: bool,
}

/// The laid-out tree.
#[derive(Debug, Clone, Serialize)]
pub struct Tree {
    /// The session's id.
    pub session: String,
    /// The current leaf.
    pub leaf_id: Option<String>,
    /// Entries with more than one child.
    pub branch_points: Vec<String>,
    /// Every entry, parents before children.
    pub nodes: Vec<Node>,
    /// How many roots.
    #[serde(skip)]
    pub roots: usize,
    /// How many leaves.
    #[serde(skip)]
    pub leaves: usize,
}

/// Lays out the tree of `session`.
pub fn layout(session: &Session) -> Tree {
    let tree = session.tree();
    let mut labels: HashMap<&str, Option<&str>> = HashMap::new();
    for e in &session.entries {
        if let EntryKind::Label { target_id, label } = &e.kind {
            labels.insert(target_id, label.as_deref());
        }
    }
    let active: HashSet<&str> = session
        .active_branch()
        .iter()
        .map(|e| e.id.as_str())
        .collect();
    let leaf = session.leaf_id.as_deref();
    let mut level: HashMap<&str, usize> = HashMap::new();
    let mut nodes = Vec::new();
    for n in tree.nodes() {
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
        nodes.push(Node {
            id: n.entry.id.clone(),
            parent_id: n.entry.parent_id.clone(),
            depth,
            kind: n.entry.kind_name(),
            summary: summary(n.entry),
            label: labels
                .get(n.entry.id.as_str())
                .copied()
                .flatten()
                .map(str::to_string),
            children: tree.children(&n.entry.id).len(),
            on_active_branch: active.contains(n.entry.id.as_str()),
            is_leaf: Some(n.entry.id.as_str()) == leaf,
        });
    }
    Tree {
        session: session.meta.id.clone(),
        leaf_id: leaf.map(str::to_string),
        branch_points: tree.branch_points().iter().map(|e| e.id.clone()).collect(),
        nodes,
        roots: tree.roots().len(),
        leaves: tree.leaves().len(),
    }
}

/// What an entry holds, on one line.
pub fn summary(e: &Entry) -> String {
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
