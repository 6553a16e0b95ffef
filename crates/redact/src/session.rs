//! Redacting a unified-model session, field by field.
//!
//! Every variant and field is named (no `..`), so a field added to the model
//! does not compile here until someone decides whether it can hold a secret.
//! Left alone: ids, timestamps, role and provider names, thinking
//! signatures (opaque provider tokens that must stay byte-exact) and inline
//! image data (binary, base64). Model names are searched: a key pasted
//! where a model id goes is still a key. A secret split between two
//! consecutive text (or thinking) blocks, which a reader shows as one text,
//! is found across the two.

use crate::walk::Walk;
use agentlog_model::{
    Block, BlockKind, Entry, EntryKind, Message, ModelConfig, Session, SessionMeta, Todo, Usage,
};

fn field(name: &'static str) -> impl Fn() -> String {
    move || name.to_string()
}

pub(crate) fn session(w: &mut Walk<'_>, s: &mut Session) {
    let Session {
        meta,
        entries,
        leaf_id: _,
    } = s;
    meta_fields(w, meta);
    for e in entries.iter_mut() {
        entry(w, e);
    }
}

fn meta_fields(w: &mut Walk<'_>, m: &mut SessionMeta) {
    let SessionMeta {
        id: _,
        agent: _,
        agent_version,
        format: _,
        format_version,
        cwd,
        title,
        created_at: _,
        updated_at: _,
        closed_at: _,
        model,
        parent_session,
        todos,
        extra,
    } = m;
    w.entry = None;
    w.line = None;
    w.opt(agent_version, &field("meta.agent_version"));
    if let Some(v) = format_version {
        w.value(v, &field("meta.format_version"));
    }
    w.opt(cwd, &field("meta.cwd"));
    w.opt(title, &field("meta.title"));
    let ModelConfig {
        provider: _,
        model: config_model,
        thinking_level: _,
        temperature: _,
        max_tokens: _,
        extra: model_extra,
    } = model;
    w.opt(config_model, &field("meta.model.model"));
    w.map(model_extra, &field("meta.model.extra"));
    w.opt(parent_session, &field("meta.parent_session"));
    for (i, t) in todos.iter_mut().enumerate() {
        let Todo {
            content,
            status,
            active_form,
            extra,
        } = t;
        w.string(content, &|| format!("meta.todos[{i}].content"));
        w.string(status, &|| format!("meta.todos[{i}].status"));
        w.opt(active_form, &|| format!("meta.todos[{i}].active_form"));
        w.map(extra, &|| format!("meta.todos[{i}].extra"));
    }
    w.map(extra, &field("meta.extra"));
}

fn entry(w: &mut Walk<'_>, e: &mut Entry) {
    let Entry {
        id,
        parent_id: _,
        timestamp: _,
        kind,
        extra,
        line,
    } = e;
    // The walk borrows the id for the findings; a copy keeps the borrow short.
    let id: &str = id;
    let mut inner = Walk {
        rules: w.rules,
        report: &mut *w.report,
        clean: &mut *w.clean,
        entry: Some(id),
        line: *line,
    };
    entry_kind(&mut inner, kind);
    inner.map(extra, &field("extra"));
}

fn entry_kind(w: &mut Walk<'_>, kind: &mut EntryKind) {
    match kind {
        EntryKind::Message(m) => message(w, m),
        EntryKind::ModelChange {
            provider: _,
            model,
            role: _,
        } => w.string(model, &field("model")),
        EntryKind::ThinkingLevelChange { level: _ }
        | EntryKind::RunContext {
            run_id: _,
            context_left_percent: _,
        }
        | EntryKind::Resume => {}
        EntryKind::Compaction {
            summary,
            short_summary,
            first_kept_entry_id: _,
            tokens_before: _,
            details,
            from_extension: _,
            preserve_data,
        } => {
            w.string(summary, &field("summary"));
            w.opt(short_summary, &field("short_summary"));
            if let Some(v) = details {
                w.value(v, &field("details"));
            }
            if let Some(v) = preserve_data {
                w.value(v, &field("preserve_data"));
            }
        }
        EntryKind::BranchSummary {
            from_id: _,
            summary,
            details,
            from_extension: _,
        } => {
            w.string(summary, &field("summary"));
            if let Some(v) = details {
                w.value(v, &field("details"));
            }
        }
        EntryKind::Label {
            target_id: _,
            label,
        } => w.opt(label, &field("label")),
        EntryKind::Custom {
            custom_type: _,
            data,
        } => {
            if let Some(v) = data {
                w.value(v, &field("data"));
            }
        }
        EntryKind::CustomMessage {
            custom_type: _,
            content,
            content_is_text: _,
            display: _,
            details,
        } => {
            blocks(w, content, "content");
            if let Some(v) = details {
                w.value(v, &field("details"));
            }
        }
        EntryKind::SessionInfo { name } => w.opt(name, &field("name")),
        EntryKind::TtsrInjection { rules } => {
            for (i, r) in rules.iter_mut().enumerate() {
                w.string(r, &|| format!("rules[{i}]"));
            }
        }
        EntryKind::SessionInit {
            system_prompt,
            task,
            tools: _,
            output_schema,
        } => {
            w.opt(system_prompt, &field("system_prompt"));
            w.opt(task, &field("task"));
            if let Some(v) = output_schema {
                w.value(v, &field("output_schema"));
            }
        }
        EntryKind::RunStart { run_id: _, input } => w.value(input, &field("input")),
        EntryKind::RunStatus {
            run_id: _,
            status: _,
            message,
        } => w.opt(message, &field("message")),
        EntryKind::RunError {
            run_id: _,
            name: _,
            message,
            stack,
        } => {
            w.string(message, &field("message"));
            w.opt(stack, &field("stack"));
        }
        EntryKind::RunEnd {
            run_id: _,
            outcome: _,
            final_text,
        } => w.opt(final_text, &field("final_text")),
        EntryKind::LlmRequest {
            seq: _,
            model,
            input,
        } => {
            if let Some(v) = model {
                w.value(v, &field("model"));
            }
            w.value(input, &field("input"));
        }
        EntryKind::LlmResponse {
            seq: _,
            output,
            usage,
        } => {
            w.value(output, &field("output"));
            if let Some(u) = usage {
                usage_fields(w, u, "usage");
            }
        }
        EntryKind::ToolOutput {
            tool: _,
            tool_call_id: _,
            output,
            is_error: _,
        } => w.string(output, &field("output")),
        EntryKind::Event {
            source: _,
            event_type: _,
            seq: _,
            payload,
        } => w.value(payload, &field("payload")),
        EntryKind::Unknown {
            record_type: _,
            raw,
        } => w.value(raw, &field("raw")),
    }
}

fn usage_fields(w: &mut Walk<'_>, u: &mut Usage, at: &str) {
    let Usage {
        input: _,
        output: _,
        cache_read: _,
        cache_write: _,
        reasoning: _,
        total: _,
        cost_usd: _,
        extra,
    } = u;
    w.map(extra, &|| format!("{at}.extra"));
}

fn message(w: &mut Walk<'_>, m: &mut Message) {
    let Message {
        role: _,
        content,
        content_is_text: _,
        id: _,
        model,
        provider: _,
        usage,
        stop_reason: _,
        tool_call_id: _,
        tool_name: _,
        is_error: _,
        timestamp: _,
        injected: _,
        sidechain: _,
        extra,
    } = m;
    blocks(w, content, "content");
    w.opt(model, &field("model"));
    if let Some(u) = usage {
        usage_fields(w, u, "usage");
    }
    w.map(extra, &field("message_extra"));
}

fn blocks(w: &mut Walk<'_>, content: &mut [Block], at: &str) {
    for (i, b) in content.iter_mut().enumerate() {
        let here = format!("{at}[{i}]");
        block(w, b, &here);
    }
    // A secret split between two blocks shown as one text.
    for i in 1..content.len() {
        let (before, after) = content.split_at_mut(i);
        if let (Some(a), Some(b)) = (shown_text(&mut before[i - 1]), shown_text(&mut after[0])) {
            w.across(a, b, &|| format!("{at}[{}..={i}]", i - 1));
        }
    }
}

/// The text of a block a reader shows joined with its neighbours' (text
/// and thinking).
fn shown_text(b: &mut Block) -> Option<&mut String> {
    match &mut b.kind {
        BlockKind::Text { text } => Some(text),
        BlockKind::Thinking { text, .. } => Some(text),
        _ => None,
    }
}

fn block(w: &mut Walk<'_>, b: &mut Block, at: &str) {
    let Block { kind, extra } = b;
    match kind {
        BlockKind::Text { text } => w.string(text, &|| format!("{at}.text")),
        BlockKind::Thinking {
            text,
            signature: _,
            redacted: _,
        } => w.string(text, &|| format!("{at}.thinking")),
        BlockKind::ToolCall {
            id: _,
            name: _,
            input,
        } => w.value(input, &|| format!("{at}.input")),
        BlockKind::ToolResult {
            tool_call_id: _,
            content,
            is_error: _,
        } => blocks(w, content, &format!("{at}.content")),
        BlockKind::Image {
            media_type: _,
            data: _,
            url,
        } => {
            // A data URL is the image itself; any other URL may carry a
            // token or a password.
            if url.as_deref().is_some_and(|u| !u.starts_with("data:")) {
                w.opt(url, &|| format!("{at}.url"));
            }
        }
        BlockKind::Other { value } => w.value(value, &|| format!("{at}.value")),
    }
    w.map(extra, &|| format!("{at}.extra"));
}
