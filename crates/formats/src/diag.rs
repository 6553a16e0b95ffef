//! Diagnostics: problems found in one place of one file.

use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing was lost.
    Info,
    /// Something unexpected was kept or skipped; read on.
    Warning,
    /// A record could not be read and was skipped.
    Error,
}

/// A problem found in one place of one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line, when the problem is on one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// How bad it is.
    pub severity: Severity,
    /// A short stable code (`invalid-json`, `torn-tail`, `unknown-type`, …).
    pub code: &'static str,
    /// What is wrong, for a person.
    pub message: String,
}

impl Diagnostic {
    /// Returns a diagnostic.
    pub fn new(
        path: &Path,
        line: Option<u64>,
        severity: Severity,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            path: path.to_path_buf(),
            line,
            severity,
            code,
            message: message.into(),
        }
    }

    /// Returns an error-level diagnostic.
    pub fn error(
        path: &Path,
        line: Option<u64>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self::new(path, line, Severity::Error, code, message)
    }

    /// Returns a warning-level diagnostic.
    pub fn warning(
        path: &Path,
        line: Option<u64>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self::new(path, line, Severity::Warning, code, message)
    }

    /// Returns an info-level diagnostic.
    pub fn info(
        path: &Path,
        line: Option<u64>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self::new(path, line, Severity::Info, code, message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{}", self.path.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        write!(f, ": {sev}[{}]: {}", self.code, self.message)
    }
}

/// Keeps at most `per_code` diagnostics of each code (the first ones) and
/// replaces the rest of each code with one diagnostic saying how many more
/// there were ("… and 2,999,990 more like this"), at the severity of the
/// worst one dropped.
pub fn summarize(diags: Vec<Diagnostic>, per_code: usize) -> Vec<Diagnostic> {
    let mut diags = diags;
    let mut capper = Capper::new(per_code);
    capper.cap(&mut diags);
    capper.finish(&mut diags);
    diags
}

/// Caps diagnostics while a reader collects them, so a file with millions
/// of bad lines keeps only a summary in memory: call [`Capper::cap`] as
/// diagnostics are pushed and [`Capper::finish`] at the end.
#[derive(Debug)]
pub struct Capper {
    per_code: usize,
    seen: std::collections::HashMap<&'static str, usize>,
    dropped: Vec<(&'static str, usize, Severity, PathBuf)>,
    checked: usize,
}

impl Capper {
    /// Returns a capper keeping `per_code` diagnostics of each code.
    pub fn new(per_code: usize) -> Capper {
        Capper {
            per_code,
            seen: std::collections::HashMap::new(),
            dropped: Vec::new(),
            checked: 0,
        }
    }

    /// Looks at the diagnostics pushed since the last call and drops those
    /// over the cap of their code, counting them.
    pub fn cap(&mut self, diags: &mut Vec<Diagnostic>) {
        if diags.len() <= self.checked {
            self.checked = diags.len();
            return;
        }
        let new: Vec<Diagnostic> = diags.drain(self.checked..).collect();
        for d in new {
            // A summary made earlier is kept as it is.
            if d.line.is_none() && d.message.starts_with("… and ") {
                diags.push(d);
                continue;
            }
            let n = self.seen.entry(d.code).or_insert(0);
            *n += 1;
            if *n <= self.per_code {
                diags.push(d);
                continue;
            }
            match self.dropped.iter_mut().find(|m| m.0 == d.code) {
                Some(m) => {
                    m.1 += 1;
                    m.2 = m.2.max(d.severity);
                }
                None => self.dropped.push((d.code, 1, d.severity, d.path)),
            }
        }
        self.checked = diags.len();
    }

    /// Adds one summary per code that went over the cap.
    pub fn finish(mut self, diags: &mut Vec<Diagnostic>) {
        self.cap(diags);
        for (code, n, severity, path) in self.dropped {
            diags.push(Diagnostic::new(
                &path,
                None,
                severity,
                code,
                format!("… and {} more like this", thousands(n)),
            ));
        }
    }
}

/// Returns `n` with commas between thousands.
fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Returns an error for every entry that is its own parent and for every
/// cycle of parent links (naming its ids): their entries can never be
/// reached from a root, so a reader would silently lose them.
pub fn tree_diagnostics(path: &Path, session: &agentlog_model::Session) -> Vec<Diagnostic> {
    use std::collections::HashMap;
    let mut out = Vec::new();
    let index: HashMap<&str, usize> = session
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    // 0: not seen, 1: on the current walk, 2: done.
    let mut state = vec![0u8; session.entries.len()];
    for start in 0..session.entries.len() {
        if state[start] != 0 {
            continue;
        }
        let mut walk: Vec<usize> = Vec::new();
        let mut at = Some(start);
        while let Some(i) = at {
            match state[i] {
                2 => break,
                1 => {
                    // A cycle: the part of the walk from `i` on.
                    let from = walk.iter().position(|&w| w == i).unwrap_or(0);
                    let ids: Vec<&str> = walk[from..]
                        .iter()
                        .map(|&w| session.entries[w].id.as_str())
                        .collect();
                    let e = &session.entries[i];
                    if ids.len() == 1 {
                        out.push(Diagnostic::error(
                            path,
                            e.line,
                            "self-parent",
                            format!(
                                "entry {} is its own parent; it cannot be reached from the root",
                                e.id
                            ),
                        ));
                    } else {
                        let shown: Vec<&str> = ids.iter().copied().take(20).collect();
                        out.push(Diagnostic::error(
                            path,
                            e.line,
                            "parent-cycle",
                            format!(
                                "parent links form a cycle: {} -> {}{}; these entries cannot be reached from the root",
                                shown.join(" -> "),
                                ids[0],
                                if ids.len() > 20 {
                                    format!(" (and {} more)", ids.len() - 20)
                                } else {
                                    String::new()
                                }
                            ),
                        ));
                    }
                    break;
                }
                _ => {
                    state[i] = 1;
                    walk.push(i);
                    at = session.entries[i]
                        .parent_id
                        .as_deref()
                        .and_then(|p| index.get(p).copied());
                }
            }
        }
        for w in walk {
            state[w] = 2;
        }
    }
    out
}

/// Reads `path` as `format` and returns the session with the checks every
/// format shares: the reader's diagnostics and the parent links
/// ([`tree_diagnostics`]). Each format's `validate` adds its own rules.
pub fn read_and_check(
    format: &(impl crate::Format + ?Sized),
    path: &Path,
) -> Result<(agentlog_model::Session, Vec<Diagnostic>), crate::FormatError> {
    let read = format.read_path(path)?;
    let mut diags = read.diagnostics;
    diags.extend(tree_diagnostics(path, &read.session));
    Ok((read.session, diags))
}

/// Returns a warning for every tool result that names a call id no earlier
/// tool call of `session` has: the reader keeps it, but an agent that
/// continues the session may refuse it (the model API pairs results with
/// calls).
pub fn orphan_results(path: &Path, session: &agentlog_model::Session) -> Vec<Diagnostic> {
    use agentlog_model::{BlockKind, EntryKind};
    let mut calls = std::collections::HashSet::new();
    let mut out = Vec::new();
    for e in &session.entries {
        let EntryKind::Message(m) = &e.kind else {
            continue;
        };
        // A tool message (pi's `toolResult`, …) names its call on the
        // message rather than in a result block.
        let in_blocks = m
            .content
            .iter()
            .any(|b| matches!(b.kind, BlockKind::ToolResult { .. }));
        if let (Some(id), false) = (&m.tool_call_id, in_blocks) {
            if m.role != agentlog_model::Role::Assistant && !calls.contains(id.as_str()) {
                out.push(Diagnostic::warning(
                    path,
                    e.line,
                    "orphan-result",
                    format!("a tool result names call {id}, which no earlier tool call has"),
                ));
            }
        }
        for b in &m.content {
            match &b.kind {
                BlockKind::ToolCall { id: Some(id), .. } => {
                    calls.insert(id.as_str());
                }
                BlockKind::ToolResult {
                    tool_call_id: Some(id),
                    ..
                } if !calls.contains(id.as_str()) => {
                    out.push(Diagnostic::warning(
                        path,
                        e.line,
                        "orphan-result",
                        format!("a tool result names call {id}, which no earlier tool call has"),
                    ));
                }
                _ => {}
            }
        }
    }
    out
}

/// An `unknown-role` warning for every message whose role is not one of
/// `roles`, which `agent` writes.
pub fn roles_outside(
    path: &Path,
    session: &agentlog_model::Session,
    roles: &[agentlog_model::Role],
    agent: &str,
) -> Vec<Diagnostic> {
    use agentlog_model::EntryKind;
    let names: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
    let said = match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    session
        .entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Message(m) if !roles.contains(&m.role) => Some(Diagnostic::warning(
                path,
                e.line,
                "unknown-role",
                format!(
                    "message {} has role \"{}\"; {agent} writes {said}",
                    e.id,
                    m.role.as_str()
                ),
            )),
            _ => None,
        })
        .collect()
}
