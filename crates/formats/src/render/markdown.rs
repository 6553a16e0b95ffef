use super::{fence_for, pretty_value, short_time, title};
use agentlog_model::{Block, BlockKind, Entry, EntryKind, Message, Role, Session};
use std::fmt::Write;

/// Renders the session's active branch (root to leaf) as a markdown
/// transcript: roles, timestamps, thinking, tool calls with their inputs and
/// outputs, and the session events (model changes, compactions, …) between.
pub fn markdown(session: &Session) -> String {
    let mut out = String::new();
    let m = &session.meta;
    let _ = writeln!(
        out,
        "# {}\n",
        super::sanitize::sanitize_line(&title(session))
    );
    let mut facts = vec![format!("**Agent:** {}", m.agent)];
    if let Some(v) = &m.agent_version {
        facts[0].push_str(&format!(" {v}"));
    }
    facts.push(format!("**Session:** `{}`", m.id));
    if let Some(cwd) = &m.cwd {
        facts.push(format!("**Project:** `{cwd}`"));
    }
    if let Some(t) = &m.created_at {
        facts.push(format!("**Started:** {}", short_time(t)));
    }
    if let Some(model) = &m.model.model {
        facts.push(format!("**Model:** {model}"));
    }
    for f in facts {
        let _ = writeln!(out, "- {f}");
    }
    for entry in session.active_branch() {
        render_entry(&mut out, entry);
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    // Read in terminals and previews too: no control sequence gets through.
    match super::sanitize::sanitize(&out) {
        std::borrow::Cow::Borrowed(_) => out,
        std::borrow::Cow::Owned(clean) => clean,
    }
}

/// Ends what came before with exactly one blank line.
fn sep(out: &mut String) {
    while out.ends_with('\n') {
        out.pop();
    }
    if !out.is_empty() {
        out.push_str("\n\n");
    }
}

/// [`sep`], returning `out` for a write.
fn sepd(out: &mut String) -> &mut String {
    sep(out);
    out
}

fn heading(out: &mut String, label: &str, entry: &Entry) {
    sep(out);
    let _ = write!(out, "---\n\n### {label}");
    if let Some(t) = &entry.timestamp {
        let _ = write!(out, " · {}", short_time(t));
    }
    out.push_str("\n\n");
}

fn render_entry(out: &mut String, entry: &Entry) {
    match &entry.kind {
        EntryKind::Message(msg) => render_message(out, entry, msg),
        EntryKind::ModelChange {
            provider, model, ..
        } => {
            let full = match provider {
                Some(p) => format!("{p}/{model}"),
                None => model.clone(),
            };
            let _ = writeln!(sepd(out), "> _Model changed to **{full}**_\n");
        }
        EntryKind::ThinkingLevelChange { level } => {
            let _ = writeln!(sepd(out), "> _Thinking level set to **{level}**_\n");
        }
        EntryKind::Compaction {
            summary,
            tokens_before,
            ..
        } => {
            heading(out, "Compaction", entry);
            if let Some(t) = tokens_before {
                let _ = writeln!(
                    sepd(out),
                    "_Earlier context ({t} tokens) was summarised:_\n"
                );
            }
            quote(out, summary);
        }
        EntryKind::BranchSummary {
            summary, from_id, ..
        } => {
            heading(out, &format!("Branch summary (from {from_id})"), entry);
            quote(out, summary);
        }
        EntryKind::CustomMessage {
            custom_type,
            content,
            ..
        } => {
            heading(out, &format!("Custom message: {custom_type}"), entry);
            blocks(out, content);
        }
        EntryKind::Label { target_id, label } => {
            let _ = match label {
                Some(l) => writeln!(sepd(out), "> _Label **{l}** on entry `{target_id}`_\n"),
                None => writeln!(sepd(out), "> _Label cleared on entry `{target_id}`_\n"),
            };
        }
        EntryKind::SessionInfo { name: Some(n) } => {
            let _ = writeln!(sepd(out), "> _Session named **{n}**_\n");
        }
        EntryKind::RunStart { run_id, input } => {
            heading(out, &format!("Run started `{run_id}`"), entry);
            let text = input
                .get("text")
                .and_then(|t| t.as_str())
                .map(str::to_string)
                .unwrap_or_else(|| pretty_value(input));
            let _ = writeln!(sepd(out), "{text}\n");
        }
        EntryKind::RunEnd {
            outcome,
            final_text,
            ..
        } => {
            heading(
                out,
                &format!("Run ended: {outcome:?}").to_lowercase(),
                entry,
            );
            if let Some(f) = final_text {
                let _ = writeln!(sepd(out), "{f}\n");
            }
        }
        EntryKind::RunError { name, message, .. } => {
            heading(out, "Run error", entry);
            let _ = writeln!(sepd(out), "**{name}:** {message}\n");
        }
        EntryKind::ToolOutput {
            tool,
            tool_call_id,
            output,
            is_error,
        } => {
            let label = if *is_error == Some(true) {
                "Tool error"
            } else {
                "Tool output"
            };
            heading(out, &format!("{label}: {tool} (`{tool_call_id}`)"), entry);
            code(out, "", output);
        }
        EntryKind::Resume => {
            let _ = writeln!(sepd(out), "> _Session resumed_\n");
        }
        _ => {}
    }
}

fn render_message(out: &mut String, entry: &Entry, msg: &Message) {
    let mut label = match &msg.role {
        Role::User => "User".to_string(),
        Role::Assistant => "Assistant".to_string(),
        Role::System => "System".to_string(),
        Role::Developer => "Developer".to_string(),
        Role::Tool => match &msg.tool_name {
            Some(n) => format!("Tool result: {n}"),
            None => "Tool result".to_string(),
        },
        Role::Custom(r) => r.clone(),
    };
    if msg.role == Role::Assistant {
        if let Some(model) = &msg.model {
            label.push_str(&format!(" ({model})"));
        }
    }
    if msg.is_error == Some(true) {
        label.push_str(" — error");
    }
    if let Some(kind) = &msg.injected {
        label.push_str(&format!(" — injected {kind}"));
    }
    if msg.sidechain {
        label.push_str(" — sidechain");
    }
    heading(out, &label, entry);
    if msg.role == Role::Tool {
        let text: Vec<String> = msg.content.iter().filter_map(Block::plain_text).collect();
        code(out, "", &text.join("\n"));
        for b in msg
            .content
            .iter()
            .filter(|b| matches!(b.kind, BlockKind::Image { .. }))
        {
            block(out, b);
        }
    } else {
        blocks(out, &msg.content);
    }
}

fn blocks(out: &mut String, content: &[Block]) {
    for b in content {
        block(out, b);
    }
}

fn block(out: &mut String, b: &Block) {
    match &b.kind {
        BlockKind::Text { text } => {
            let _ = writeln!(sepd(out), "{}\n", text.trim_end());
        }
        BlockKind::Thinking { text, redacted, .. } => {
            if text.trim().is_empty() {
                let note = if *redacted { "redacted" } else { "hidden" };
                let _ = writeln!(sepd(out), "_Thinking ({note})_\n");
            } else {
                let _ = writeln!(
                    out,
                    "<details><summary>Thinking</summary>\n\n{}\n\n</details>\n",
                    text.trim_end()
                );
            }
        }
        BlockKind::ToolCall { id, name, input } => {
            let _ = match id {
                Some(id) => writeln!(sepd(out), "**Tool call:** `{name}` (`{id}`)\n"),
                None => writeln!(sepd(out), "**Tool call:** `{name}`\n"),
            };
            code(out, "json", &pretty_value(input));
        }
        BlockKind::ToolResult {
            tool_call_id,
            content,
            is_error,
        } => {
            let label = if *is_error {
                "Tool error"
            } else {
                "Tool result"
            };
            let _ = match tool_call_id {
                Some(id) => writeln!(sepd(out), "**{label}** (`{id}`):\n"),
                None => writeln!(sepd(out), "**{label}:**\n"),
            };
            let text: Vec<String> = content.iter().filter_map(Block::plain_text).collect();
            code(out, "", &text.join("\n"));
        }
        BlockKind::Image {
            media_type,
            url,
            data,
        } => {
            let what = media_type.as_deref().unwrap_or("image");
            let _ = match (url, data) {
                (Some(u), _) if !u.starts_with("data:") => writeln!(sepd(out), "![{what}]({u})\n"),
                (_, Some(d)) => writeln!(sepd(out), "_[{what}, {} bytes base64]_\n", d.len()),
                _ => writeln!(sepd(out), "_[{what}]_\n"),
            };
        }
        BlockKind::Other { value } => {
            let kind = value
                .get("type")
                .and_then(|t| t.as_str())
                .unwrap_or("block");
            let _ = writeln!(sepd(out), "_[{kind}]_\n");
        }
    }
}

fn code(out: &mut String, lang: &str, body: &str) {
    let body = body.trim_end_matches('\n');
    let fence = fence_for(body);
    let _ = writeln!(sepd(out), "{fence}{lang}\n{body}\n{fence}\n");
}

fn quote(out: &mut String, text: &str) {
    sep(out);
    for line in text.trim_end().lines() {
        let _ = writeln!(out, "> {line}");
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentlog_model::{Agent, SessionMeta, Timestamp};
    use serde_json::json;

    #[test]
    fn renders_roles_thinking_tools_and_events() {
        let mut s = Session::new(SessionMeta::new("s1", Agent::Pi));
        s.meta.cwd = Some("/repo".into());
        let t = Timestamp::Text("2024-12-03T14:00:01.000Z".into());
        s.push(
            Entry::new(
                "u",
                None,
                EntryKind::Message(Message::text(Role::User, "list files")),
            )
            .at(t),
        );
        let mut a = Message::new(Role::Assistant);
        a.model = Some("claude-x".into());
        a.content.push(Block::thinking("I should run ls", None));
        a.content.push(Block::tool_call(
            Some("c1".into()),
            "bash",
            json!({"cmd": "ls"}),
        ));
        s.push(Entry::new("a", Some("u".into()), EntryKind::Message(a)));
        let mut r = Message::text(Role::Tool, "README.md\n```");
        r.tool_name = Some("bash".into());
        s.push(Entry::new("r", Some("a".into()), EntryKind::Message(r)));
        s.push(Entry::new(
            "m",
            Some("r".into()),
            EntryKind::ModelChange {
                provider: None,
                model: "x/y".into(),
                role: None,
            },
        ));
        let md = markdown(&s);
        assert!(md.starts_with("# list files\n"), "{md}");
        assert!(md.contains("### User · 2024-12-03 14:00:01"));
        assert!(md.contains("### Assistant (claude-x)"));
        assert!(md.contains("<summary>Thinking</summary>\n\nI should run ls"));
        assert!(
            md.contains("**Tool call:** `bash` (`c1`)\n\n```json\n{\n  \"cmd\": \"ls\"\n}\n```")
        );
        assert!(md.contains("### Tool result: bash\n\n````\nREADME.md\n```\n````"));
        assert!(md.contains("_Model changed to **x/y**_"));
    }
}
