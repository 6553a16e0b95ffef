//! A session as HTML: messages, thinking, tool calls with their results,
//! edits as diffs, images, subagent traffic, compactions, usage per turn and
//! branch navigation. Used by `serve` (a page of entries at a time) and by
//! the HTML export (every entry of the branch).

use crate::escape::{anchor, clip, esc, push_esc, url_enc};
use crate::markdown;
use agentlog_model::{
    Block, BlockKind, Entry, EntryKind, Message, Role, Session, Tree, Usage, TOOL_USE_RESULT,
};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write;

/// Text longer than this is shown as preformatted text, not markdown.
const MARKDOWN_MAX: usize = 256 * 1024;
/// Tool output and raw records are cut here on a served page.
const OUTPUT_MAX: usize = 64 * 1024;

/// Where the rendered HTML goes: links differ.
#[derive(Clone, Debug)]
pub enum Target {
    /// A page of `agentlog serve`; `path` is the session file.
    Served {
        /// The session file (the `p` parameter of session links).
        path: String,
    },
    /// A self-contained exported file.
    Export,
}

/// A session and the branch being shown.
pub struct View<'a> {
    /// The session.
    pub session: &'a Session,
    tree: Tree<'a>,
    /// The entries from the root to the shown leaf.
    pub path: Vec<&'a Entry>,
    /// The shown leaf.
    pub leaf: Option<String>,
    tool_names: HashMap<&'a str, &'a str>,
    /// The subagent each tool call started (Claude Code's `Task`/`Agent`
    /// results name it: `toolUseResult.agentId`), by call id.
    agent_of_call: HashMap<&'a str, &'a str>,
    /// The subagent sessions kept beside this one, by agent id.
    subagents: HashMap<String, Subagent>,
    /// True for a subagent's own session (its entries are all side-chain:
    /// not wrapped again).
    nested: bool,
    /// What the header says of the whole session when `session` holds only
    /// its first page ([`crate::first`]).
    whole: Option<&'a crate::first::Whole>,
}

/// A subagent's session, shown inside the tool call that started it.
#[derive(Clone, Debug)]
pub struct Subagent {
    /// Its agent id (the `<id>` of its `agent-<id>.jsonl`).
    pub id: String,
    /// Its first prompt (or title).
    pub title: String,
    /// Its messages.
    pub messages: usize,
    /// Its entries, rendered (the first [`SUBAGENT_ENTRIES`] of its branch).
    pub html: String,
}

/// Entries of a subagent shown inside its call.
pub const SUBAGENT_ENTRIES: usize = 200;

/// Drops from `session` the native fields no page shows: every key of an
/// entry's `extra` map but the subagent a tool result names and the mark of
/// a derived entry, and the `extra` maps of its message and of the
/// message's blocks (those of blocks nested in a tool result, and of usage,
/// stay). A page rendered from the session after this is the same page (a
/// test checks it on every sample file), and redacting the session after
/// this searches less that no page shows: Claude Code keeps each tool's
/// output twice (in the result block and again in `toolUseResult`), and
/// dropping the second copy takes about a fifth off an export's redaction.
pub fn keep_shown(session: &mut Session) {
    session.entries.iter_mut().for_each(keep_shown_entry);
}

/// [`keep_shown`] for one entry: what a reader may apply to each entry as
/// it reads ([`agentlog_formats::Format::read_path_to_show_with`]).
pub fn keep_shown_entry(e: &mut Entry) {
    if !e.extra.is_empty() {
        let agent = e
            .extra
            .get(TOOL_USE_RESULT)
            .and_then(|t| t.get("agentId"))
            .filter(|a| a.is_string())
            .cloned();
        // A new map, not the old one retained: its table would stay the
        // size of every field the record had.
        let derived = e.extra.swap_remove(agentlog_model::DERIVED_FROM);
        e.extra = Default::default();
        if let Some(d) = derived {
            e.extra.insert(agentlog_model::DERIVED_FROM.into(), d);
        }
        if let Some(agent) = agent {
            e.extra.insert(
                TOOL_USE_RESULT.into(),
                Value::Object([("agentId".to_string(), agent)].into_iter().collect()),
            );
        }
    }
    if let EntryKind::Message(m) = &mut e.kind {
        m.extra = Default::default();
        for b in &mut m.content {
            b.extra = Default::default();
        }
    }
}

impl Subagent {
    /// Renders the subagent session `sub` read from `path`.
    pub fn of(sub: &Session, path: &str, target: &Target) -> Subagent {
        let mut view = View::new(sub, None, None);
        view.nested = true;
        let n = view.path.len();
        let mut html = view.entries_html(0, n.min(SUBAGENT_ENTRIES), target);
        if n > SUBAGENT_ENTRIES {
            let _ = write!(
                html,
                "<p class=\"dim\">… {} more entries of this subagent</p>",
                num((n - SUBAGENT_ENTRIES) as u64)
            );
        }
        Subagent {
            id: subagent_id(sub, path),
            title: sub
                .entries
                .iter()
                .filter_map(Entry::message)
                .find(|m| m.role == Role::User)
                .map(|m| {
                    m.content
                        .iter()
                        .filter_map(Block::plain_text)
                        .collect::<String>()
                })
                .filter(|t| !t.trim().is_empty())
                .or_else(|| sub.meta.title.clone())
                .unwrap_or_else(|| sub.meta.id.clone()),
            messages: sub.entries.iter().filter(|e| e.message().is_some()).count(),
            html,
        }
    }

    /// Writes it as a collapsed block.
    pub fn write_html(&self, out: &mut String) {
        let _ = write!(
            out,
            "<details class=\"subagent\"><summary>subagent: {} <span class=\"dim\">· {} messages</span></summary>{}</details>",
            esc(&crate::escape::clip_title(self.title.lines().next().unwrap_or(""), 140)),
            num(self.messages as u64),
            self.html
        );
    }
}

/// Returns the agent id of the subagent session `sub` read from `path`:
/// that of its file's name, else the one it records.
pub fn subagent_id(sub: &Session, path: &str) -> String {
    agent_id_of_path(path)
        .map(str::to_string)
        .or_else(|| {
            sub.meta
                .extra
                .get("agentId")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_default()
}

/// Returns the agent id of a subagent session file (`agent-<id>.jsonl`).
pub fn agent_id_of_path(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next()?;
    let stem = name.strip_suffix(".jsonl")?;
    stem.strip_prefix("agent-").filter(|s| !s.is_empty())
}

impl<'a> View<'a> {
    /// Returns the view of `session` on the branch ending at `leaf` (the
    /// session's own leaf when `None` or unknown), or the branch through
    /// entry `at` when `at` is not on it (its newest leaf below `at`).
    pub fn new(session: &'a Session, leaf: Option<&str>, at: Option<&str>) -> View<'a> {
        let tree = session.tree();
        let mut leaf = leaf
            .filter(|l| tree.get(l).is_some())
            .map(str::to_string)
            .or_else(|| session.leaf_id.clone().filter(|l| tree.get(l).is_some()));
        let mut path = match &leaf {
            Some(l) => tree.path_to_root(l),
            None => session.entries.iter().collect(),
        };
        if let Some(at) = at {
            if tree.get(at).is_some() && !path.iter().any(|e| e.id == at) {
                let l = newest_leaf(&tree, at);
                path = tree.path_to_root(&l);
                leaf = Some(l);
            }
        }
        let mut tool_names = HashMap::new();
        let mut agent_of_call = HashMap::new();
        for e in &session.entries {
            agent_of_call.extend(e.subagent_calls());
            tool_names.extend(e.tool_call_names());
        }
        View {
            session,
            tree,
            path,
            leaf,
            tool_names,
            agent_of_call,
            subagents: HashMap::new(),
            nested: false,
            whole: None,
        }
    }

    /// Returns the view with `whole` for what it says of the whole session,
    /// of which [`View::session`] holds only the first page
    /// ([`crate::first::first_page`]).
    pub fn with_whole(mut self, whole: &'a crate::first::Whole) -> View<'a> {
        self.tool_names = whole
            .tool_names
            .iter()
            .map(|(c, n)| (c.as_str(), n.as_str()))
            .collect();
        self.agent_of_call = whole
            .subagent_calls
            .iter()
            .map(|(c, a)| (c.as_str(), a.as_str()))
            .collect();
        self.leaf = whole.leaf.clone();
        self.whole = Some(whole);
        self
    }

    /// Returns the number of entries on the shown branch.
    pub fn branch_len(&self) -> usize {
        self.whole.map_or(self.path.len(), |w| w.branch)
    }

    /// Returns the number of entries of the session.
    pub fn entry_count(&self) -> usize {
        self.whole.map_or(self.session.entries.len(), |w| w.entries)
    }

    /// Returns the usage of every model response of the session, summed.
    pub fn total_usage(&self) -> Usage {
        match self.whole {
            Some(w) => w.usage.clone(),
            None => self.session.total_usage(),
        }
    }

    /// Shows each of `subagents` inside the tool call that started it;
    /// returns those no call of the session names.
    pub fn set_subagents(&mut self, subagents: Vec<Subagent>) -> Vec<Subagent> {
        let called: std::collections::HashSet<&str> =
            self.agent_of_call.values().copied().collect();
        let (placed, unplaced): (Vec<Subagent>, Vec<Subagent>) = subagents
            .into_iter()
            .partition(|s| called.contains(s.id.as_str()));
        self.subagents = placed.into_iter().map(|s| (s.id.clone(), s)).collect();
        unplaced
    }

    /// Returns the position of entry `id` on the shown branch.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.path.iter().position(|e| e.id == id)
    }

    /// Returns the position on the shown branch of the entry whose tool
    /// call started subagent `agent` (where its session is nested).
    pub fn position_of_subagent(&self, agent: &str) -> Option<usize> {
        let calls: Vec<&str> = self
            .agent_of_call
            .iter()
            .filter(|(_, a)| **a == agent)
            .map(|(c, _)| *c)
            .collect();
        self.path
            .iter()
            .position(|e| e.tool_call_names().iter().any(|(c, _)| calls.contains(c)))
    }

    /// Returns the number of branch points of the whole session.
    pub fn branch_points(&self) -> usize {
        match self.whole {
            Some(w) => w.branch_points,
            None => self.tree.branch_points().len(),
        }
    }

    /// Returns the HTML of the shown branch's entries `from..to`.
    pub fn entries_html(&self, from: usize, to: usize, target: &Target) -> String {
        let to = to.min(self.path.len());
        let from = from.min(to);
        let entries = self.path[from..to]
            .iter()
            .enumerate()
            .map(|(k, e)| (from + k, *e));
        let mut out = String::new();
        self.write_entries(&mut out, entries, target, None);
        out
    }

    /// Writes `entries` (position, entry) in order, each run of side-chain
    /// (subagent) entries in one collapsed block; with `shown`, each entry
    /// in a node naming its parent, hidden unless it is in `shown`.
    fn write_entries<'e>(
        &self,
        out: &mut String,
        entries: impl Iterator<Item = (usize, &'e Entry)>,
        target: &Target,
        shown: Option<&std::collections::HashSet<&str>>,
    ) {
        let mut in_sub = false;
        for (i, e) in entries {
            let side = !self.nested && e.message().is_some_and(|m| m.sidechain);
            if side && !in_sub {
                out.push_str("<details class=\"subagent\"><summary>Subagent</summary>");
                in_sub = true;
            } else if !side && in_sub {
                out.push_str("</details>");
                in_sub = false;
            }
            if let Some(shown) = shown {
                let _ = write!(
                    out,
                    "<div class=\"node\" data-eid=\"{}\" data-parent=\"{}\"{}>",
                    esc(&e.id),
                    esc(e.parent_id.as_deref().unwrap_or("")),
                    if shown.contains(e.id.as_str()) {
                        ""
                    } else {
                        " hidden"
                    }
                );
            }
            self.branch_nav(out, e, target);
            self.entry(out, i, e, target);
            if shown.is_some() {
                out.push_str("</div>");
            }
        }
        if in_sub {
            out.push_str("</details>");
        }
    }

    /// The subagent session a tool call started, nested in the call.
    fn subagent_at(&self, out: &mut String, call: Option<&str>) {
        if let Some(sub) = call
            .and_then(|c| self.agent_of_call.get(c))
            .and_then(|a| self.subagents.get(*a))
        {
            sub.write_html(out);
        }
    }

    /// Returns the HTML of every entry of the session, in file order, each
    /// in a node naming its parent; the entries off the shown branch are
    /// hidden. A self-contained export switches branches with it: a click
    /// on another branch shows the entries from the root to that branch's
    /// leaf (the page's script follows the parents).
    pub fn all_entries_html(&self, target: &Target) -> String {
        let shown: std::collections::HashSet<&str> =
            self.path.iter().map(|e| e.id.as_str()).collect();
        let mut out = String::new();
        self.write_entries(
            &mut out,
            self.session.entries.iter().enumerate(),
            target,
            Some(&shown),
        );
        out
    }

    fn branch_nav(&self, out: &mut String, e: &Entry, target: &Target) {
        let Some(parent) = e.parent_id.as_deref() else {
            return;
        };
        let siblings = self.tree.children(parent);
        if siblings.len() < 2 {
            return;
        }
        let me = siblings.iter().position(|s| s.id == e.id).unwrap_or(0);
        let _ = write!(
            out,
            "<nav class=\"branches\" aria-label=\"branches\">branch {} of {}:",
            me + 1,
            siblings.len()
        );
        for (i, s) in siblings.iter().enumerate() {
            let label = i + 1;
            if i == me {
                let _ = write!(out, " <b class=\"cur\">{label}</b>");
                continue;
            }
            match target {
                Target::Served { path } => {
                    let leaf = newest_leaf(&self.tree, &s.id);
                    let _ = write!(
                        out,
                        " <a class=\"branch\" href=\"/session?p={}&amp;leaf={}#{}\">{label}</a>",
                        url_enc(path),
                        url_enc(&leaf),
                        anchor(&s.id)
                    );
                }
                Target::Export => {
                    let leaf = newest_leaf(&self.tree, &s.id);
                    let _ = write!(
                        out,
                        " <a class=\"branch\" href=\"#{}\" data-leaf=\"{}\">{label}</a>",
                        anchor(&s.id),
                        esc(&leaf)
                    );
                }
            }
        }
        out.push_str("</nav>");
    }

    fn entry(&self, out: &mut String, i: usize, e: &Entry, target: &Target) {
        let id = anchor(&e.id);
        match &e.kind {
            EntryKind::Message(m) => self.message(out, i, e, m, &id, target),
            EntryKind::CustomMessage {
                custom_type,
                content,
                ..
            } => {
                let _ = write!(
                    out,
                    "<article class=\"msg role-custom\" id=\"{id}\" data-i=\"{i}\">"
                );
                header(out, custom_type, e, None, &id, target);
                out.push_str("<div class=\"body\">");
                for b in content {
                    self.block(out, b, &Role::User);
                }
                out.push_str("</div></article>");
            }
            EntryKind::Compaction {
                summary,
                tokens_before,
                ..
            } => {
                let _ = write!(out, "<section class=\"compaction\" id=\"{id}\" data-i=\"{i}\"><div class=\"mark\">context compacted");
                if let Some(t) = tokens_before {
                    let _ = write!(out, " · {} tokens before", num(*t));
                }
                let _ = write!(out, " <a class=\"permalink\" href=\"#{id}\">#</a></div><details><summary>summary</summary><div class=\"md\">{}</div></details></section>", md(summary));
            }
            EntryKind::BranchSummary { summary, .. } => {
                let _ = write!(out, "<section class=\"compaction\" id=\"{id}\" data-i=\"{i}\"><div class=\"mark\">summary of a branch left <a class=\"permalink\" href=\"#{id}\">#</a></div><details><summary>summary</summary><div class=\"md\">{}</div></details></section>", md(summary));
            }
            EntryKind::ModelChange { model, .. } => {
                notice(out, i, &id, &format!("model → {model}"));
            }
            EntryKind::ThinkingLevelChange { level } => {
                notice(out, i, &id, &format!("thinking level → {level}"));
            }
            EntryKind::SessionInfo { name: Some(n) } => {
                notice(out, i, &id, &format!("session named “{n}”"))
            }
            EntryKind::Label { label, target_id } => notice(
                out,
                i,
                &id,
                &format!(
                    "label {} on {target_id}",
                    label.as_deref().unwrap_or("(cleared)")
                ),
            ),
            EntryKind::RunError { name, message, .. } => {
                let _ = write!(
                    out,
                    "<div class=\"notice error\" id=\"{id}\" data-i=\"{i}\">run error {}: {}</div>",
                    esc(name),
                    esc(message)
                );
            }
            EntryKind::ToolOutput {
                tool,
                output,
                is_error,
                ..
            } => {
                let err = if *is_error == Some(true) {
                    " error"
                } else {
                    ""
                };
                let _ = write!(out, "<details class=\"result{err}\" id=\"{id}\" data-i=\"{i}\"><summary>output of {}</summary>", esc(tool));
                pre(out, output, target);
                out.push_str("</details>");
            }
            other => {
                let json = serde_json::to_string_pretty(other).unwrap_or_default();
                let _ = write!(
                    out,
                    "<details class=\"raw\" id=\"{id}\" data-i=\"{i}\"><summary>{}</summary>",
                    esc(&raw_summary(e))
                );
                pre(out, &json, target);
                out.push_str("</details>");
            }
        }
    }

    fn message(
        &self,
        out: &mut String,
        i: usize,
        e: &Entry,
        m: &Message,
        id: &str,
        target: &Target,
    ) {
        let only_results = !m.content.is_empty()
            && m.content
                .iter()
                .all(|b| matches!(b.kind, BlockKind::ToolResult { .. }));
        let role = if only_results {
            "tool"
        } else {
            role_class(&m.role)
        };
        let label_role = if matches!(m.role, Role::Tool) {
            "tool result"
        } else {
            m.role.as_str()
        };
        let side = if m.sidechain { " sidechain" } else { "" };
        let _ = write!(
            out,
            "<article class=\"msg role-{role}{side}\" id=\"{id}\" data-i=\"{i}\">"
        );
        let label = if only_results {
            "tool result"
        } else {
            label_role
        };
        header(out, label, e, m.model.as_deref(), id, target);
        out.push_str("<div class=\"body\">");
        if let Some(kind) = &m.injected {
            let _ = write!(
                out,
                "<details class=\"injected\"><summary>injected context ({})</summary>",
                esc(kind)
            );
            for b in &m.content {
                self.block(out, b, &m.role);
            }
            out.push_str("</details>");
        } else if matches!(m.role, Role::Tool) && !only_results {
            let name = m
                .tool_name
                .as_deref()
                .or_else(|| {
                    m.tool_call_id
                        .as_deref()
                        .and_then(|c| self.tool_names.get(c).copied())
                })
                .unwrap_or("tool");
            let text: String = m
                .content
                .iter()
                .filter_map(Block::plain_text)
                .collect::<Vec<_>>()
                .join("\n");
            let lines = text.lines().count();
            let failed = m.is_error == Some(true);
            let _ = write!(
                out,
                "<details class=\"result{}\"><summary>result of <span class=\"tname\">{}</span> · {lines} line{}{}</summary>",
                if failed { " error" } else { "" },
                esc(name),
                if lines == 1 { "" } else { "s" },
                if failed { " · error" } else { "" }
            );
            for b in &m.content {
                self.block(out, b, &m.role);
            }
            out.push_str("</details>");
        } else {
            for b in &m.content {
                self.block(out, b, &m.role);
            }
            if let Some(call) = &m.tool_call_id {
                if m.content.is_empty() {
                    let _ = write!(
                        out,
                        "<p class=\"dim\">(empty result of {})</p>",
                        esc(self.tool_names.get(call.as_str()).unwrap_or(&"a tool"))
                    );
                }
            }
        }
        out.push_str("</div>");
        if let Some(u) = &m.usage {
            usage(out, u);
        }
        out.push_str("</article>");
    }

    fn block(&self, out: &mut String, b: &Block, role: &Role) {
        match &b.kind {
            BlockKind::Text { text } => {
                if matches!(role, Role::Tool) {
                    plain(out, text);
                } else {
                    let _ = write!(out, "<div class=\"md\">{}</div>", md(text));
                }
            }
            BlockKind::Thinking { text, redacted, .. } => {
                if *redacted && text.is_empty() {
                    out.push_str("<details class=\"thinking\"><summary>thinking (redacted by the provider)</summary></details>");
                } else if !text.is_empty() {
                    let _ = write!(out, "<details class=\"thinking\"><summary>thinking</summary><div class=\"md\">{}</div></details>", md(text));
                }
            }
            BlockKind::ToolCall { name, input, id } => {
                let _ = write!(out, "<details class=\"tool\"><summary><span class=\"tname\">{}</span> <code>{}</code></summary>", esc(name), esc(&summary_of(input)));
                self.subagent_at(out, id.as_deref());
                if !diff(out, name, input) {
                    let json = match input {
                        Value::String(s) => s.clone(),
                        v => serde_json::to_string_pretty(v).unwrap_or_default(),
                    };
                    plain(out, &json);
                }
                out.push_str("</details>");
            }
            BlockKind::ToolResult {
                tool_call_id,
                content,
                is_error,
            } => {
                let name = tool_call_id
                    .as_deref()
                    .and_then(|c| self.tool_names.get(c))
                    .copied()
                    .unwrap_or("tool");
                let text: String = content
                    .iter()
                    .filter_map(Block::plain_text)
                    .collect::<Vec<_>>()
                    .join("\n");
                let lines = text.lines().count();
                let err = if *is_error { " error" } else { "" };
                let _ = write!(out, "<details class=\"result{err}\"><summary>result of <span class=\"tname\">{}</span> · {lines} line{}{}</summary>", esc(name), if lines == 1 { "" } else { "s" }, if *is_error { " · error" } else { "" });
                plain(out, &text);
                for c in content {
                    if matches!(c.kind, BlockKind::Image { .. }) {
                        self.block(out, c, role);
                    }
                }
                out.push_str("</details>");
            }
            BlockKind::Image {
                media_type,
                data,
                url,
            } => image(out, media_type.as_deref(), data.as_deref(), url.as_deref()),
            BlockKind::Other { value } => {
                out.push_str("<details class=\"raw\"><summary>block</summary>");
                plain(
                    out,
                    &serde_json::to_string_pretty(value).unwrap_or_default(),
                );
                out.push_str("</details>");
            }
        }
    }
}

/// The one-line summary of an entry shown as its JSON: its kind and,
/// where it has one, what it is of that kind (an event's type, a custom
/// entry's or an unknown record's type, a run's status), so a reader sees
/// `event · token_count`, not a row of `event`s.
fn raw_summary(e: &Entry) -> String {
    let what = match &e.kind {
        EntryKind::Event { event_type, .. } => Some(event_type.as_str()),
        EntryKind::Custom { custom_type, .. } => Some(custom_type.as_str()),
        EntryKind::Unknown {
            record_type: Some(t),
            ..
        } => Some(t.as_str()),
        EntryKind::RunStatus { status, .. } => Some(status.as_str()),
        _ => None,
    };
    let what = what
        .map(|w| clip(w.lines().next().unwrap_or(""), 80))
        .filter(|w| !w.is_empty());
    match what {
        Some(w) => format!("{} · {w}", e.kind_name()),
        None => e.kind_name().to_string(),
    }
}

/// Returns the newest leaf below `id` (the last child at every step).
pub fn newest_leaf(tree: &Tree<'_>, id: &str) -> String {
    let mut cur = id.to_string();
    let mut steps = 0usize;
    while let Some(last) = tree.children(&cur).last() {
        if last.id == cur || steps > 10_000_000 {
            break;
        }
        cur = last.id.clone();
        steps += 1;
    }
    cur
}

fn role_class(r: &Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
        Role::Developer => "system",
        Role::Tool => "tool",
        _ => "custom",
    }
}

fn header(
    out: &mut String,
    label: &str,
    e: &Entry,
    model: Option<&str>,
    id: &str,
    target: &Target,
) {
    let _ = write!(out, "<header><span class=\"role\">{}</span>", esc(label));
    if let Some(t) = e.timestamp.as_ref().and_then(|t| t.to_utc()) {
        let _ = write!(
            out,
            " <time datetime=\"{}\">{}</time>",
            t.to_rfc3339(),
            t.format("%Y-%m-%d %H:%M:%S")
        );
    }
    if let Some(m) = model {
        let _ = write!(out, " <span class=\"model\">{}</span>", esc(m));
    }
    let href = match target {
        Target::Served { path } => format!(
            "/session?p={}&amp;at={}#{id}",
            url_enc(path),
            url_enc(&e.id)
        ),
        Target::Export => format!("#{id}"),
    };
    let _ = write!(
        out,
        " <a class=\"permalink\" href=\"{href}\" title=\"link to this message\">#</a></header>"
    );
}

fn notice(out: &mut String, i: usize, id: &str, text: &str) {
    let _ = write!(
        out,
        "<div class=\"notice\" id=\"{id}\" data-i=\"{i}\">{}</div>",
        esc(text)
    );
}

fn usage(out: &mut String, u: &Usage) {
    let _ = write!(
        out,
        "<footer class=\"usage\">in {} · out {}",
        num(u.input),
        num(u.output)
    );
    if u.cache_read > 0 || u.cache_write > 0 {
        let _ = write!(
            out,
            " · cache read {} · cache write {}",
            num(u.cache_read),
            num(u.cache_write)
        );
    }
    if let Some(c) = u.cost_usd.filter(|c| *c > 0.0) {
        let _ = write!(out, " · ${c:.4}");
    }
    out.push_str("</footer>");
}

/// Returns `n` with thousands separators.
pub fn num(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn md(text: &str) -> String {
    if text.len() > MARKDOWN_MAX {
        let mut s = String::from("<pre class=\"plain\">");
        push_esc(&mut s, text);
        s.push_str("</pre>");
        s
    } else {
        markdown::render(text)
    }
}

fn plain(out: &mut String, text: &str) {
    out.push_str("<pre class=\"plain\">");
    push_esc(out, text);
    out.push_str("</pre>");
}

fn pre(out: &mut String, text: &str, target: &Target) {
    match target {
        Target::Served { .. } if text.len() > OUTPUT_MAX => {
            plain(out, clip(text, OUTPUT_MAX));
            let _ = write!(
                out,
                "<p class=\"dim\">… {} more bytes (the HTML export has all of it)</p>",
                num((text.len() - clip(text, OUTPUT_MAX).len()) as u64)
            );
        }
        _ => plain(out, text),
    }
}

fn image(out: &mut String, media: Option<&str>, data: Option<&str>, url: Option<&str>) {
    const OK: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
    let media = media.map(str::to_ascii_lowercase);
    if let (Some(m), Some(d)) = (media.as_deref(), data) {
        if OK.contains(&m)
            && d.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'\n' | b'\r')
            })
        {
            let d: String = d.chars().filter(|c| !c.is_whitespace()).collect();
            let _ = write!(
                out,
                "<img class=\"inline\" alt=\"image\" src=\"data:{m};base64,{d}\">"
            );
            return;
        }
    }
    if let Some(u) = url {
        let _ = write!(out, "<p class=\"dim\">image: {}</p>", esc(clip(u, 300)));
    } else {
        out.push_str("<p class=\"dim\">(image)</p>");
    }
}

/// Returns a one-line summary of a tool call's input: its command, path,
/// pattern or first string field.
fn summary_of(input: &Value) -> String {
    const KEYS: [&str; 10] = [
        "command",
        "cmd",
        "file_path",
        "path",
        "pattern",
        "query",
        "url",
        "description",
        "prompt",
        "filePath",
    ];
    let s = match input {
        Value::String(s) => s.clone(),
        Value::Object(o) => KEYS
            .iter()
            .find_map(|k| o.get(*k))
            .or_else(|| o.values().find(|v| v.is_string()))
            .map(|v| match v {
                Value::String(s) => s.clone(),
                Value::Array(a) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
                v => v.to_string(),
            })
            .unwrap_or_default(),
        _ => String::new(),
    };
    let first = s.lines().next().unwrap_or("");
    let c = clip(first, 160);
    if c.len() < s.len() {
        format!("{c}…")
    } else {
        c.to_string()
    }
}

/// Renders an edit tool call as a diff; false when `input` is no edit.
fn diff(out: &mut String, name: &str, input: &Value) -> bool {
    let Some(o) = input.as_object() else {
        if let Value::String(s) = input {
            if s.contains("*** Begin Patch") {
                patch(out, s);
                return true;
            }
        }
        return false;
    };
    let str_of = |k: &str| o.get(k).and_then(Value::as_str);
    let file = str_of("file_path")
        .or_else(|| str_of("path"))
        .or_else(|| str_of("filePath"));
    let pairs: Vec<(&str, &str)> =
        if let (Some(a), Some(b)) = (str_of("old_string"), str_of("new_string")) {
            vec![(a, b)]
        } else if let (Some(a), Some(b)) = (str_of("oldText"), str_of("newText")) {
            vec![(a, b)]
        } else if let (Some(a), Some(b)) = (str_of("old_str"), str_of("new_str")) {
            vec![(a, b)]
        } else if let Some(Value::Array(edits)) = o.get("edits") {
            edits
                .iter()
                .filter_map(|e| {
                    let a = e
                        .get("old_string")
                        .or_else(|| e.get("oldText"))
                        .and_then(Value::as_str)?;
                    let b = e
                        .get("new_string")
                        .or_else(|| e.get("newText"))
                        .and_then(Value::as_str)?;
                    Some((a, b))
                })
                .collect()
        } else if let Some(p) = str_of("patch")
            .or_else(|| str_of("input"))
            .filter(|p| p.contains("*** Begin Patch") || p.starts_with("--- "))
        {
            patch(out, p);
            return true;
        } else {
            return false;
        };
    if pairs.is_empty() {
        return false;
    }
    let _ = name;
    if let Some(f) = file {
        let _ = write!(out, "<div class=\"file\">{}</div>", esc(f));
    }
    out.push_str("<pre class=\"diff\">");
    for (a, b) in pairs {
        let d = similar::TextDiff::from_lines(a, b);
        for ch in d.iter_all_changes() {
            let (cls, sign) = match ch.tag() {
                similar::ChangeTag::Delete => ("del", '-'),
                similar::ChangeTag::Insert => ("add", '+'),
                similar::ChangeTag::Equal => ("ctx", ' '),
            };
            let _ = write!(out, "<span class=\"{cls}\">{sign} ");
            push_esc(out, ch.value().trim_end_matches('\n'));
            out.push_str("</span>");
        }
        out.push_str("<span class=\"sep\">⋯</span>");
    }
    out.push_str("</pre>");
    true
}

fn patch(out: &mut String, p: &str) {
    out.push_str("<pre class=\"diff\">");
    for line in p.lines() {
        let cls = if line.starts_with("+++") || line.starts_with("---") || line.starts_with("***") {
            "hdr"
        } else if line.starts_with('+') {
            "add"
        } else if line.starts_with('-') {
            "del"
        } else {
            "ctx"
        };
        let _ = write!(out, "<span class=\"{cls}\">");
        push_esc(out, line);
        out.push_str("</span>");
    }
    out.push_str("</pre>");
}

/// Returns the `agentlog resume` commands that continue `session` in each
/// agent that can take it.
pub fn resume_commands(session: &Session, path: &str) -> Vec<(String, String)> {
    let arg = if session.meta.id.is_empty() {
        path
    } else {
        session.meta.id.as_str()
    };
    // Every agent `resume --in` can write the session for: its plan asks
    // only the session's metadata (a session with no working directory is
    // asked as if it had one, which `--cwd` gives it).
    let mut meta = Session::new(session.meta.clone());
    if !matches!(meta.meta.cwd.as_deref(), Some(c) if !c.is_empty()) {
        meta.meta.cwd = Some("/".into());
    }
    let env = agentlog_formats::env::DiscoverEnv::with_home(std::path::Path::new("/"));
    let mut out = Vec::new();
    for f in agentlog_formats::registry::all() {
        if f.can_write() && f.resume_plan(&meta, &env).is_ok() {
            let agent = f.name();
            out.push((
                agent.to_string(),
                format!(
                    "agentlog resume {} --in {agent}",
                    agentlog_formats::shell::quote(arg)
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use agentlog_model::{Agent, SessionMeta};

    #[test]
    fn every_agent_resume_can_write_for_is_offered() {
        let mut s = Session::new(SessionMeta::new("5e55f0 x", Agent::Claude));
        let agents = |s: &Session| -> Vec<String> {
            resume_commands(s, "p")
                .into_iter()
                .map(|(a, _)| a)
                .collect()
        };
        // No working directory: offered all the same (`--cwd` gives one).
        let without = agents(&s);
        s.meta.cwd = Some("/work/project".into());
        let with = agents(&s);
        for a in [
            "claude",
            "codex",
            "gemini",
            "pi",
            "copilot",
            "qwen",
            "droid",
            "kimi",
            "vibe",
            "continue",
            "openhands",
        ] {
            assert!(with.iter().any(|w| w == a), "{a}: {with:?}");
            assert!(without.iter().any(|w| w == a), "{a}: {without:?}");
        }
        // Not the formats no agent continues from a file agentlog writes.
        for a in ["json", "cline"] {
            assert!(!with.iter().any(|w| w == a), "{a}: {with:?}");
        }
        // Aider keeps its history in the project: offered when the
        // project is on this machine.
        s.meta.cwd = Some("/no/such/agentlog/project".into());
        assert!(!agents(&s).iter().any(|w| w == "aider"), "{:?}", agents(&s));
        let here = std::env::temp_dir();
        s.meta.cwd = Some(here.to_string_lossy().into_owned());
        assert!(agents(&s).iter().any(|w| w == "aider"), "{:?}", agents(&s));
        s.meta.cwd = Some("/work/project".into());
        let (_, cmd) = &resume_commands(&s, "p")[0];
        assert!(cmd.starts_with("agentlog resume '5e55f0 x' --in "), "{cmd}");
    }

    /// A session whose one tool call starts a subagent (`toolUseResult`
    /// names it, as Claude Code writes).
    fn with_subagent_call() -> Session {
        let mut s = Session::new(SessionMeta::new("s1", Agent::Claude));
        let mut call = Message::new(Role::Assistant);
        call.content.push(Block::tool_call(
            Some("toolu_1".into()),
            "Task",
            serde_json::json!({"description": "search files"}),
        ));
        s.push(Entry::new("a1", None, EntryKind::Message(call)));
        let mut result = Message::new(Role::User);
        result.content.push(Block::tool_result(
            Some("toolu_1".into()),
            vec![Block::text("found 3 TODOs")],
            false,
        ));
        let mut e = Entry::new("u1", Some("a1".into()), EntryKind::Message(result));
        e.extra.insert(
            "toolUseResult".into(),
            serde_json::json!({"agentId": "abc123", "status": "completed"}),
        );
        s.push(e);
        s
    }

    fn subagent(id: &str, prompt: &str) -> Subagent {
        Subagent::of(
            &subagent_session(id, prompt),
            &format!("/h/s1/subagents/agent-{id}.jsonl"),
            &Target::Export,
        )
    }

    fn subagent_session(id: &str, prompt: &str) -> Session {
        let mut sub = Session::new(SessionMeta::new(format!("agent-{id}"), Agent::Claude));
        sub.push(Entry::new(
            "c1",
            None,
            EntryKind::Message(Message::text(Role::User, prompt)),
        ));
        sub.push(Entry::new(
            "c2",
            Some("c1".into()),
            EntryKind::Message(Message::text(Role::Assistant, "three TODOs, in lexer.rs")),
        ));
        sub
    }

    #[test]
    fn a_subagent_named_by_a_tool_result_is_still_shown_after_keep_shown() {
        let mut s = with_subagent_call();
        s.entries[0]
            .extra
            .insert("cwd".into(), serde_json::json!("/home/dev/src/app"));
        let subs = vec![(
            "/h/s1/subagents/agent-abc123.jsonl".to_string(),
            subagent_session("abc123", "find the TODOs"),
        )];
        let before = crate::pages::export_session_with(&s, "/h/s1.jsonl", &subs);
        assert!(before.contains("subagent: find the TODOs"), "{before}");
        let mut pruned = s.clone();
        keep_shown(&mut pruned);
        let mut pruned_subs = subs.clone();
        keep_shown(&mut pruned_subs[0].1);
        let after = crate::pages::export_session_with(&pruned, "/h/s1.jsonl", &pruned_subs);
        assert!(before == after, "the page changed");
        assert_eq!(
            Value::Object(pruned.entries[1].extra.clone()),
            serde_json::json!({"toolUseResult": {"agentId": "abc123"}})
        );
        assert!(pruned.entries[0].extra.is_empty());
    }

    #[test]
    fn a_subagent_is_shown_inside_the_call_that_started_it() {
        let s = with_subagent_call();
        let mut v = View::new(&s, None, None);
        let unplaced = v.set_subagents(vec![
            subagent("abc123", "Search the repo <b>for</b> TODOs"),
            subagent("other", "never called"),
        ]);
        assert_eq!(
            unplaced.iter().map(|u| u.id.as_str()).collect::<Vec<_>>(),
            ["other"]
        );
        let html = v.entries_html(0, 2, &Target::Export);
        let call = html.find("<span class=\"tname\">Task</span>").unwrap();
        let sub = html
            .find("subagent: Search the repo &lt;b&gt;for&lt;/b&gt; TODOs")
            .unwrap();
        let answer = html.find("three TODOs, in lexer.rs").unwrap();
        let result = html.find("found 3 TODOs").unwrap();
        assert!(call < sub && sub < answer && answer < result, "{html}");
        assert!(!html.contains("never called"));
    }

    #[test]
    fn without_subagent_files_a_call_shows_no_link() {
        let s = with_subagent_call();
        let v = View::new(&s, None, None);
        assert!(!v.entries_html(0, 2, &Target::Export).contains("subagent:"));
    }

    #[test]
    fn an_entry_shown_as_json_is_summarized_by_its_type() {
        let mut s = Session::new(SessionMeta::new("s1", Agent::Codex));
        let event = |t: &str| EntryKind::Event {
            source: "codex".into(),
            event_type: t.into(),
            seq: None,
            payload: serde_json::json!({"type": t}),
        };
        s.push(Entry::new("e1", None, event("token_count")));
        s.push(Entry::new(
            "e2",
            Some("e1".into()),
            event("<b onclick=x>\nsecond line"),
        ));
        s.push(Entry::new(
            "e3",
            Some("e2".into()),
            EntryKind::Unknown {
                record_type: None,
                raw: serde_json::json!({}),
            },
        ));
        let html = View::new(&s, None, None).entries_html(0, 3, &Target::Export);
        assert!(
            html.contains("<summary>event · token_count</summary>"),
            "{html}"
        );
        // Escaped, its first line only.
        assert!(
            html.contains("<summary>event · &lt;b onclick=x&gt;</summary>"),
            "{html}"
        );
        // No type: the kind alone.
        assert!(html.contains("<summary>unknown</summary>"), "{html}");
    }

    #[test]
    fn the_page_header_says_what_the_session_has() {
        let mut s = Session::new(SessionMeta::new("s1", Agent::JidoCode));
        s.push(Entry::new(
            "m1",
            None,
            EntryKind::Message(Message::text(Role::Assistant, "hi")),
        ));
        let page = crate::pages::export_session_with(&s, "/h/s1.json", &[]);
        assert!(
            page.contains("<dt>tokens</dt><dd>none recorded</dd>"),
            "{page}"
        );
        // Counts that add up past u64 are shown, not summed.
        let mut m = Message::text(Role::Assistant, "hi");
        m.usage = Some(Usage {
            input: u64::MAX,
            output: 5,
            ..Usage::default()
        });
        s.entries[0].kind = EntryKind::Message(m);
        let page = crate::pages::export_session_with(&s, "/h/s1.json", &[]);
        assert!(page.contains(" · out 5 · "), "{page}");
        // One branch point, named so.
        for id in ["m2", "m3"] {
            s.push(Entry::new(
                id,
                Some("m1".into()),
                EntryKind::Message(Message::text(Role::User, id)),
            ));
        }
        let page = crate::pages::export_session_with(&s, "/h/s1.json", &[]);
        assert!(page.contains(", 1 branch point<"), "{page}");
    }

    #[test]
    fn agent_ids_come_from_subagent_file_names() {
        assert_eq!(
            agent_id_of_path("/h/p/s1/subagents/agent-a0ad4f44.jsonl"),
            Some("a0ad4f44")
        );
        assert_eq!(agent_id_of_path("/h/p/s1.jsonl"), None);
        assert_eq!(agent_id_of_path("/h/agent-.jsonl"), None);
    }
}
