use super::sanitize::{sanitize, sanitize_line};
use super::{pretty_value, short_time, title};
use agentlog_model::{Block, BlockKind, Entry, EntryKind, Role, Session};
use std::fmt::Write;

/// Options of the terminal rendering.
#[derive(Clone, Copy, Debug, Default)]
pub struct TextOptions {
    /// Use ANSI colours.
    pub color: bool,
    /// Show thinking text in full (otherwise its first line).
    pub full_thinking: bool,
    /// Cut tool inputs and outputs to this many lines (0: no limit).
    pub max_tool_lines: usize,
}

struct Style {
    color: bool,
}

impl Style {
    /// Returns `s` sanitized as one line, in colour when colours are on.
    fn paint(&self, code: &str, s: &str) -> String {
        let s = sanitize_line(s);
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.into_owned()
        }
    }
}

/// Renders the session's active branch for a terminal.
pub fn text(session: &Session, opts: TextOptions) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = text_to(session, opts, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// Writes [`text`] to `w` an entry at a time, so that a long session's
/// rendering is never in memory whole.
pub fn text_to(
    session: &Session,
    opts: TextOptions,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let st = Style { color: opts.color };
    let mut out = String::new();
    let m = &session.meta;
    let _ = writeln!(out, "{}", st.paint("1", &title(session)));
    let mut facts = vec![format!("{} session {}", m.agent, m.id)];
    if let Some(cwd) = &m.cwd {
        facts.push(cwd.clone());
    }
    if let Some(t) = &m.created_at {
        facts.push(short_time(t));
    }
    let _ = writeln!(out, "{}", st.paint("2", &facts.join(" · ")));
    for entry in session.active_branch() {
        entry_text(&mut out, &st, entry, opts);
        if out.len() >= 1 << 16 {
            w.write_all(out.as_bytes())?;
            out.clear();
        }
    }
    w.write_all(out.as_bytes())
}

fn head(out: &mut String, st: &Style, color: &str, label: &str, entry: &Entry) {
    match entry.timestamp.as_ref().map(short_time) {
        Some(time) => {
            let _ = writeln!(out, "\n{} {}", st.paint(color, label), st.paint("2", &time));
        }
        None => {
            let _ = writeln!(out, "\n{}", st.paint(color, label));
        }
    }
}

fn entry_text(out: &mut String, st: &Style, entry: &Entry, opts: TextOptions) {
    match &entry.kind {
        EntryKind::Message(msg) => {
            let (color, mut label) = match &msg.role {
                Role::User => ("1;32", "user".to_string()),
                Role::Assistant => ("1;34", "assistant".to_string()),
                Role::Tool => (
                    "1;33",
                    format!("tool result {}", msg.tool_name.as_deref().unwrap_or("")),
                ),
                other => ("1;35", other.as_str().to_string()),
            };
            if let Some(model) = msg.model.as_ref().filter(|_| msg.role == Role::Assistant) {
                label.push_str(&format!(" ({model})"));
            }
            if let Some(k) = &msg.injected {
                label.push_str(&format!(" [injected {k}]"));
            }
            if msg.is_error == Some(true) {
                label.push_str(" [error]");
            }
            head(out, st, color, label.trim_end(), entry);
            for b in &msg.content {
                match &b.kind {
                    // Harness-injected context (instructions, reminders,
                    // command output) is long and rarely what one reads:
                    // cut it like tool output unless asked for in full.
                    BlockKind::Text { text } if msg.injected.is_some() => {
                        indent(out, text, if opts.max_tool_lines == 0 { 0 } else { 4 })
                    }
                    _ => block_text(out, st, b, opts),
                }
            }
        }
        EntryKind::ModelChange {
            provider, model, ..
        } => {
            let full = provider
                .as_ref()
                .map(|p| format!("{p}/{model}"))
                .unwrap_or_else(|| model.clone());
            let _ = writeln!(
                out,
                "\n{}",
                st.paint("2", &format!("— model changed to {full}"))
            );
        }
        EntryKind::ThinkingLevelChange { level } => {
            let _ = writeln!(
                out,
                "\n{}",
                st.paint("2", &format!("— thinking level {level}"))
            );
        }
        EntryKind::Compaction { summary, .. } => {
            head(out, st, "1;36", "compaction", entry);
            indent(out, summary, 0);
        }
        EntryKind::BranchSummary { summary, .. } => {
            head(out, st, "1;36", "branch summary", entry);
            indent(out, summary, 0);
        }
        EntryKind::CustomMessage {
            custom_type,
            content,
            ..
        } => {
            head(
                out,
                st,
                "1;35",
                &format!("custom message {custom_type}"),
                entry,
            );
            for b in content {
                block_text(out, st, b, opts);
            }
        }
        EntryKind::RunStart { input, .. } => {
            head(out, st, "1;32", "run start", entry);
            let t = input
                .get("text")
                .and_then(|t| t.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| pretty_value(input));
            indent(out, &t, 0);
        }
        EntryKind::RunEnd {
            outcome,
            final_text,
            ..
        } => {
            head(
                out,
                st,
                "1;36",
                &format!("run end ({outcome:?})").to_lowercase(),
                entry,
            );
            if let Some(f) = final_text {
                indent(out, f, 0);
            }
        }
        EntryKind::RunError { name, message, .. } => {
            head(out, st, "1;31", "run error", entry);
            indent(out, &format!("{name}: {message}"), 0);
        }
        EntryKind::ToolOutput { tool, output, .. } => {
            head(out, st, "1;33", &format!("tool output {tool}"), entry);
            indent(out, output, opts.max_tool_lines);
        }
        _ => {}
    }
}

fn block_text(out: &mut String, st: &Style, b: &Block, opts: TextOptions) {
    match &b.kind {
        BlockKind::Text { text } => indent(out, text, 0),
        BlockKind::Thinking { text, .. } => {
            let shown = if opts.full_thinking {
                text.clone()
            } else {
                super::one_line(text, 100)
            };
            let shown = if shown.is_empty() {
                "(hidden)".to_string()
            } else {
                shown
            };
            indent_painted(out, &st.paint("2;3", &format!("thinking: {shown}")));
        }
        BlockKind::ToolCall { name, input, .. } => {
            indent_painted(out, &st.paint("33", &format!("→ {name}")));
            indent(out, &pretty_value(input), opts.max_tool_lines);
        }
        BlockKind::ToolResult {
            content, is_error, ..
        } => {
            let label = if *is_error { "← error" } else { "← result" };
            indent_painted(out, &st.paint("33", label));
            let t: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
            indent(out, &t.join("\n"), opts.max_tool_lines);
        }
        BlockKind::Image { media_type, .. } => {
            indent(
                out,
                &format!("[image {}]", media_type.as_deref().unwrap_or("")),
                0,
            );
        }
        BlockKind::Other { value } => {
            indent(
                out,
                &format!(
                    "[{}]",
                    value
                        .get("type")
                        .and_then(|t| t.as_str())
                        .unwrap_or("block")
                ),
                0,
            );
        }
    }
}

/// Writes a line already painted (and so sanitized) by [`Style::paint`].
fn indent_painted(out: &mut String, painted: &str) {
    let _ = writeln!(out, "  {painted}");
}

/// Writes `text` sanitized, indented, cut to `max_lines` (0: all).
fn indent(out: &mut String, text: &str, max_lines: usize) {
    let text = sanitize(text);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let shown = if max_lines == 0 {
        lines.len()
    } else {
        lines.len().min(max_lines)
    };
    for l in &lines[..shown] {
        let _ = writeln!(out, "  {l}");
    }
    if shown < lines.len() {
        let _ = writeln!(out, "  … {} more lines", lines.len() - shown);
    }
}
