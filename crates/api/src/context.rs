//! What the model would see at a leaf of a session (`agentlog context`).
//!
//! For pi files this is pi's own context: the last compaction's summary,
//! the entries it kept, branch summaries and custom messages, with the
//! model and thinking level in effect (built by the store's
//! `SessionManager`, an old file migrated in memory only). For every other
//! format it is the messages of the branch from the root to the leaf.
//!
//! ```
//! use agentlog_api::context::context;
//! use agentlog_api::Settings;
//! # let home = tempfile::tempdir()?;
//! # agentlog_api::example::write_claude_session(home.path())?;
//! let settings = Settings::with_home(home.path());
//! let found = agentlog_api::resolve::resolve(&settings, "5e55f0")?;
//! let ctx = context(&found.path, agentlog_formats::registry::by_name(found.format).unwrap(), None)?;
//! assert!(ctx.messages.iter().any(|m| m.role == "user"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::ApiError;
use agentlog_formats::render::one_line;
use agentlog_formats::{Diagnostic, Format};
use agentlog_model::{BlockKind, Message};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// One message of a context, summarized on one line.
#[derive(Debug, Clone, Serialize)]
pub struct ContextLine {
    /// `user`, `assistant`, `toolResult`, …
    pub role: String,
    /// Its text, tool calls and results on one line (uncut; cut it to
    /// the width you print).
    pub summary: String,
}

/// The context at a leaf.
#[derive(Debug, Clone)]
pub struct Context {
    /// The leaf the context was built at.
    pub leaf_id: Option<String>,
    /// The model in effect (`provider/model` for pi).
    pub model: Option<String>,
    /// The thinking level in effect.
    pub thinking_level: Option<String>,
    /// Rules injected by pi's time-traveling stream rules.
    pub ttsr_rules: Vec<String>,
    /// The messages, in order.
    pub messages: Vec<ContextLine>,
    /// The context as the format's own structure (pi's context, or the
    /// unified messages), for `--json`.
    pub json: Value,
    /// What reading the file reported.
    pub diagnostics: Vec<Diagnostic>,
}

/// The context of a non-pi session, for JSON.
#[derive(Serialize)]
struct BranchJson<'a> {
    leaf_id: Option<&'a str>,
    model: Option<&'a str>,
    thinking_level: Option<&'a str>,
    messages: Vec<&'a Message>,
}

/// Builds the context of the session at `path` (read as `format`) at
/// `leaf`, or at its current leaf.
pub fn context(
    path: &Path,
    format: &'static dyn Format,
    leaf: Option<&str>,
) -> Result<Context, ApiError> {
    if format.name() == "pi" {
        return pi_context(path, leaf);
    }
    let mut read = format.read_path(path)?;
    if let Some(leaf) = leaf {
        read.session
            .set_leaf(Some(leaf))
            .map_err(|e| ApiError::Format(agentlog_formats::FormatError::invalid(path, None, e)))?;
    }
    let session = &read.session;
    let branch = session.active_branch();
    let messages: Vec<&Message> = branch.iter().filter_map(|e| e.message()).collect();
    let model = messages
        .iter()
        .rev()
        .find_map(|m| m.model.as_deref())
        .or(session.meta.model.model.as_deref());
    let thinking = session.meta.model.thinking_level.as_deref();
    let json = serde_json::to_value(BranchJson {
        leaf_id: session.leaf_id.as_deref(),
        model,
        thinking_level: thinking,
        messages: messages.clone(),
    })
    .unwrap_or(Value::Null);
    Ok(Context {
        leaf_id: session.leaf_id.clone(),
        model: model.map(str::to_string),
        thinking_level: thinking.map(str::to_string),
        ttsr_rules: Vec::new(),
        messages: messages
            .iter()
            .map(|m| ContextLine {
                role: m.role.to_string(),
                summary: message_summary(m),
            })
            .collect(),
        json,
        diagnostics: read.diagnostics,
    })
}

fn pi_context(path: &Path, leaf: Option<&str>) -> Result<Context, ApiError> {
    use agentlog_store::pi::SessionManager;
    let sm = SessionManager::load(path)?;
    let ctx = match leaf {
        Some(id) => sm.build_session_context_at(Some(id)).map_err(|e| {
            ApiError::Format(agentlog_formats::FormatError::invalid(
                path,
                None,
                e.to_string(),
            ))
        })?,
        None => sm.build_session_context(),
    };
    let model = ctx.model.as_ref().map(|m| {
        format!(
            "{}/{}",
            m.provider.as_deref().unwrap_or("?"),
            m.model_id.as_deref().unwrap_or("?")
        )
    });
    let messages = ctx
        .message_values()
        .iter()
        .map(|m| ContextLine {
            role: m
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string(),
            summary: pi_summary(m),
        })
        .collect();
    Ok(Context {
        leaf_id: leaf
            .map(str::to_string)
            .or(sm.get_leaf_id().map(str::to_string)),
        model,
        thinking_level: Some(ctx.thinking_level_str().to_string()),
        ttsr_rules: ctx.injected_ttsr_rules.clone(),
        messages,
        json: serde_json::to_value(&ctx).unwrap_or(Value::Null),
        diagnostics: sm.diagnostics().to_vec(),
    })
}

fn pi_summary(m: &Value) -> String {
    if let Some(s) = m.get("summary").and_then(Value::as_str) {
        return s.to_string();
    }
    if let Some(c) = m.get("command").and_then(Value::as_str) {
        return format!("$ {c}");
    }
    match agentlog_formats::pi::message_from_value(m) {
        Some(msg) => message_summary(&msg),
        None => String::new(),
    }
}

/// A message's text, tool calls (name and arguments) and results on one
/// line.
pub fn message_summary(m: &Message) -> String {
    let mut parts = Vec::new();
    for b in &m.content {
        match &b.kind {
            BlockKind::Text { text } => parts.push(text.clone()),
            BlockKind::Thinking { .. } => parts.push("(thinking)".into()),
            BlockKind::ToolCall { name, input, .. } => {
                parts.push(format!("{name}({})", one_line(&input.to_string(), 60)))
            }
            BlockKind::ToolResult { content, .. } => parts.push(
                content
                    .iter()
                    .filter_map(|c| c.plain_text())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            BlockKind::Image { .. } => parts.push("(image)".into()),
            BlockKind::Other { .. } => {}
        }
    }
    parts.join(" ")
}
