//! The filter tags of a session's entries: tokens no real word looks
//! like, stored with each entry's text in `fts`, so that a filter (agent,
//! project, session, role, tool) becomes full-text terms intersected in
//! the index.

use crate::extract::Doc;

/// Returns the filter tag for `value` of a kind: a token no real word
/// looks like, so filters become full-text terms intersected in the index.
pub(crate) fn tag(kind: char, value: &str) -> String {
    let h = crate::files::hash(value.trim().to_lowercase().as_bytes()) as u64;
    format!("x{kind}{:012x}", h & 0xffff_ffff_ffff)
}

/// Returns the project tag value: the path without a trailing separator.
pub(crate) fn project_key(project: &str) -> &str {
    let t = project.trim_end_matches(['/', '\\']);
    if t.is_empty() {
        project
    } else {
        t
    }
}

/// The tags of every entry of a session: its agent and session (`id`),
/// and its project when it has one.
pub(crate) fn session_tags(id: i64, agent: &str, project: Option<&str>) -> String {
    let mut tags = format!("{} {}", tag('a', agent), tag('s', &id.to_string()));
    if let Some(p) = project {
        tags.push(' ');
        tags.push_str(&tag('p', project_key(p)));
    }
    tags
}

/// The tags of one entry: its session's (`base`), its role, whether it
/// holds thinking, and the tools it calls.
pub(crate) fn doc_tags(base: &str, d: &Doc) -> String {
    let mut t = String::with_capacity(base.len() + 48);
    t.push_str(base);
    if let Some(r) = &d.role {
        t.push(' ');
        t.push_str(&tag('r', r));
    }
    if !d.thinking.is_empty() {
        t.push(' ');
        t.push_str(&tag('r', "thinking"));
    }
    for n in &d.tool_names {
        t.push(' ');
        t.push_str(&tag('t', n));
    }
    t
}
