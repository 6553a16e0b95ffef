//! The first page of a large session, read from the lines that hold it.
//!
//! A served session page shows the first [`crate::pages::PAGE`] entries of the session's
//! branch under a header that counts the whole session. For a file the
//! index keeps a shape of ([`agentlog_index::shape`]), the branch, its
//! length, the branch points and the token sums come from the shape, and
//! the file is read only up to the line before the first entry that comes
//! after the page's entries: a 100 MB session shows its first page after
//! reading a few hundred kilobytes, where reading it all took a second.
//!
//! The shortcut is taken only where it shows what reading the whole file
//! shows (the tests compare the two pages byte for byte); otherwise the
//! caller reads the whole file:
//! - the format reads an entry from its own lines and the ones before them
//!   ([`agentlog_index::shape::by_line`]);
//! - no entry of the page is one of several children (its branch links
//!   name leaves anywhere in the file);
//! - the branch read from the lines is the page the shape names, entry for
//!   entry (same ids, same lines, same content by the shape's
//!   fingerprints: a reader may still change an entry for a line after the
//!   ones read).

use agentlog_formats::Format;
use agentlog_index::shape::{fingerprint, Shape};
use agentlog_model::{Entry, Session, Usage};
use std::io::BufRead;
use std::path::Path;

/// What a page's header says of the whole session when only the first
/// page of it was read.
#[derive(Clone, Debug, PartialEq)]
pub struct Whole {
    /// The leaf of the shown branch (the session's, when it has one).
    pub leaf: Option<String>,
    /// The entries on the shown branch.
    pub branch: usize,
    /// The entries of the session.
    pub entries: usize,
    /// The branch points of the session.
    pub branch_points: usize,
    /// The usage of every model response, summed.
    pub usage: Usage,
    /// Each (tool call id, subagent id) of the session.
    pub subagent_calls: Vec<(String, String)>,
    /// Each (tool call id, tool name) of the session.
    pub tool_names: Vec<(String, String)>,
}

/// The first page of a session and what its header says of the whole.
pub struct FirstPage {
    /// The session as read up to the end of the first page's entries, with
    /// the whole session's metadata, its leaf the page's last entry.
    pub session: Session,
    /// The whole session's counts.
    pub whole: Whole,
}

impl FirstPage {
    /// Redacts the page as the whole session is redacted for a page: its
    /// entries and metadata (the first prompt among them), and the subagent
    /// ids (read from the tool results' native fields, where the whole
    /// session's are redacted); tool names and call ids never are.
    pub fn redact(&mut self, r: &agentlog_redact::Redactor) {
        r.session(&mut self.session);
        for (_, agent) in &mut self.whole.subagent_calls {
            let mut v = serde_json::json!({ agentlog_model::TOOL_USE_RESULT: { "agentId": agent.as_str() } });
            r.value(&mut v, "extra");
            if let Some(a) = v[agentlog_model::TOOL_USE_RESULT]["agentId"].as_str() {
                *agent = a.to_string();
            }
        }
    }
}

/// A prefix longer than this is no shortcut: the whole file is read.
const MAX_PREFIX: u64 = 64 << 20;

/// Reads the first page (the first `page` entries of the branch; a served
/// page shows [`crate::pages::PAGE`]) of the session file at `path` of `format`, whose
/// shape is `shape`, applying `trim` to each entry; `None` when the page
/// cannot be shown from the file's first lines (see the module
/// documentation) or they cannot be read.
pub fn first_page(
    shape: &Shape,
    path: &Path,
    format: &dyn Format,
    trim: &dyn Fn(&mut Entry),
    page: usize,
) -> Option<FirstPage> {
    // The first lines give the first entries, mostly as the whole file
    // does (Claude Code and pi always, on every sample file; a Codex or
    // Gemini CLI entry may still change for a later line, which the
    // fingerprints catch).
    if !agentlog_index::shape::by_line(format.name(), path) {
        return None;
    }
    let skeleton = shape.skeleton();
    let tree = skeleton.tree();
    let leaf = skeleton.leaf_id.clone().filter(|l| tree.get(l).is_some());
    let branch = match &leaf {
        Some(l) => tree.path_to_root(l),
        None => skeleton.entries.iter().collect(),
    };
    let page = &branch[..branch.len().min(page)];
    let last = page.last()?;
    if page.iter().any(|e| {
        e.parent_id
            .as_deref()
            .is_some_and(|p| tree.children(p).len() > 1)
    }) {
        return None;
    }
    let end_of_page = page.iter().filter_map(|e| e.line).max()?;
    // The branch read from the first lines must be the page, entry for
    // entry: each the entry of the whole file (same id, line and content).
    // No entry of it may have a sibling read ahead (its branch links would
    // differ); the first prompt, which names a page without a title, must
    // be the whole session's.
    let is_page = |session: &Session| {
        let t = session.tree();
        let got = t.path_to_root(&last.id);
        got.len() == page.len()
            && got.iter().zip(page).all(|(a, b)| {
                a.id == b.id
                    && a.line == b.line
                    && tree.index_of(&b.id).and_then(|i| shape.fingerprints.get(i))
                        == Some(&fingerprint(a))
                    && a.parent_id
                        .as_deref()
                        .is_none_or(|p| t.children(p).len() == 1)
            })
            && session.first_prompt() == shape.first_prompt
    };
    // A reader may finish an entry at a later line (Codex gives a response
    // the tokens counted before the next one, and the rest at the end of
    // the file to the last): the lines of one entry after the page are read
    // first, then of more.
    let after = starts_after(&skeleton, end_of_page);
    let mut session = None;
    for ahead in LOOK_AHEAD {
        let lines = after.get(ahead)? - 1;
        let prefix = read_lines(path, lines)?;
        let read = format.read_bytes_to_show(path, &prefix).ok()?.session;
        if is_page(&read) {
            session = Some(read);
            break;
        }
    }
    let mut session = session?;
    session.entries.iter_mut().for_each(trim);
    session.meta = shape.meta.clone();
    session.leaf_id = Some(last.id.clone());
    Some(FirstPage {
        session,
        whole: Whole {
            leaf,
            branch: branch.len(),
            entries: skeleton.entries.len(),
            branch_points: tree.branch_points().len(),
            usage: shape.usage.clone(),
            subagent_calls: shape.subagent_calls.clone(),
            tool_names: shape.tool_names.clone(),
        },
    })
}

/// How many entries after the page's are read with it, tried in turn until
/// the page read is the whole file's.
const LOOK_AHEAD: [usize; 3] = [1, 16, 256];

/// Returns how many of the first lines of a file to read for every entry
/// of `session` that starts at line `end` or before it, and `ahead` entries
/// after those: up to the line before the entry after them. An entry's
/// lines follow its first one, and the next entry's may still say what it
/// holds (a Claude Code compaction's summary is the message after it; a
/// Codex event is a copy of the item after it). `None` when that is the
/// whole file.
pub fn prefix_lines(session: &Session, end: u64, ahead: usize) -> Option<u64> {
    starts_after(session, end).get(ahead).map(|l| l - 1)
}

/// Returns the lines after line `end` at which entries of `session` start,
/// in order.
fn starts_after(session: &Session, end: u64) -> Vec<u64> {
    let mut after: Vec<u64> = session
        .entries
        .iter()
        .filter_map(|e| e.line)
        .filter(|&l| l > end)
        .collect();
    after.sort_unstable();
    after.dedup();
    after
}

/// Returns the first `lines` lines of the file at `path` (each with its
/// newline), or `None` when the file cannot be read, ends sooner, or they
/// are longer than [`MAX_PREFIX`].
fn read_lines(path: &Path, lines: u64) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let mut input = std::io::BufReader::with_capacity(1 << 16, file);
    let mut out = Vec::new();
    for _ in 0..lines {
        let n = std::io::Read::take(&mut input, MAX_PREFIX + 1 - out.len() as u64)
            .read_until(b'\n', &mut out)
            .ok()?;
        if n == 0 || out.len() as u64 > MAX_PREFIX || out.last() != Some(&b'\n') {
            return None;
        }
    }
    Some(out)
}
