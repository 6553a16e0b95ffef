//! Reads SessionData, or a SpecStory markdown transcript, into a session.
//!
//! Reading keeps everything: exchange boundaries and fields ride on the
//! first message entry of each exchange (`extra["specstory_exchange"]`, or
//! a `specstory.exchange` custom entry for an exchange without messages),
//! root fields the model has no place for sit in `meta.extra`, and a tool's
//! output becomes a tool-result entry right after its call.

pub(in crate::specstory) mod markdown;

use super::wire::types::{Message, SessionData};
use super::wire::{EXCHANGE_CUSTOM, EXCHANGE_KEY, OUTPUT_KEY, USAGE_KEY};
use crate::specstory::write::markdown::GENERATED_BY;
use crate::{Diagnostic, FormatError, Read};
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Extra, Message as ModelMessage, Role, Session,
    SessionMeta, Timestamp, Usage,
};
use markdown::parse_markdown;
use serde_json::{json, Value};
use std::path::Path;

/// Converts SessionData to a unified session, keeping every field.
pub fn session_from(data: &SessionData) -> Session {
    let mut meta = SessionMeta::new(data.session_id.clone(), Agent::SpecStory);
    meta.format = Some("specstory".into());
    meta.format_version = Some(Value::String(data.schema_version.clone()));
    meta.agent_version = Some(data.provider.version.clone()).filter(|v| !v.is_empty());
    meta.cwd = Some(data.workspace_root.clone());
    meta.title = data.title.clone();
    meta.created_at = Some(Timestamp::Text(data.created_at.clone()));
    meta.updated_at = data.updated_at.clone().map(Timestamp::Text);
    if let Ok(Value::Object(p)) = serde_json::to_value(&data.provider) {
        meta.extra.insert("provider".into(), Value::Object(p));
    }
    if let Some(slug) = &data.slug {
        meta.extra
            .insert("slug".into(), Value::String(slug.clone()));
    }
    if !data.extra.is_empty() {
        meta.extra
            .insert("root_extra".into(), Value::Object(data.extra.clone()));
    }
    let mut session = Session::new(meta);
    let mut ids = IdMaker::default();
    for (i, ex) in data.exchanges.iter().enumerate() {
        let mut header = Extra::new();
        header.insert("exchangeId".into(), Value::String(ex.exchange_id.clone()));
        if let Some(t) = &ex.start_time {
            header.insert("startTime".into(), Value::String(t.clone()));
        }
        if let Some(t) = &ex.end_time {
            header.insert("endTime".into(), Value::String(t.clone()));
        }
        if let Some(m) = &ex.metadata {
            header.insert("metadata".into(), Value::Object(m.clone()));
        }
        for (k, v) in &ex.extra {
            header.insert(k.clone(), v.clone());
        }
        if ex.messages.is_empty() {
            let id = ids.make(None, &format!("x{i}"));
            let parent = session.leaf_id.clone();
            session.push(Entry::new(
                id,
                parent,
                EntryKind::Custom {
                    custom_type: EXCHANGE_CUSTOM.into(),
                    data: Some(Value::Object(header)),
                },
            ));
            continue;
        }
        for (j, m) in ex.messages.iter().enumerate() {
            let id = ids.make(m.id.as_deref(), &format!("m{i}-{j}"));
            let parent = session.leaf_id.clone();
            let mut entry = Entry::new(id.clone(), parent, EntryKind::Message(model_message(m)));
            entry.timestamp = m.timestamp.clone().map(Timestamp::Text);
            if j == 0 {
                entry
                    .extra
                    .insert(EXCHANGE_KEY.into(), Value::Object(header.clone()));
            }
            session.push(entry);
            if let Some(output) = m.tool.as_ref().and_then(|t| t.output.as_ref()) {
                let use_id = m.tool.as_ref().and_then(|t| t.use_id.clone());
                let result_id = ids.make(None, &format!("{id}:result"));
                let parent = session.leaf_id.clone();
                let mut block = Block::tool_result(
                    use_id.clone(),
                    output_text(output).map(Block::text).into_iter().collect(),
                    output.get("is_error").and_then(Value::as_bool) == Some(true),
                );
                block.extra.insert(OUTPUT_KEY.into(), output.clone());
                let mut msg = ModelMessage::new(Role::Tool);
                msg.tool_call_id = use_id;
                msg.tool_name = m.tool.as_ref().map(|t| t.name.clone());
                msg.content.push(block);
                session.push(Entry::new(result_id, parent, EntryKind::Message(msg)));
            }
        }
    }
    session
}

pub(super) fn model_message(m: &Message) -> ModelMessage {
    let role = match m.role.as_str() {
        "user" => Role::User,
        "agent" => Role::Assistant,
        other => Role::Custom(other.to_string()),
    };
    let mut out = ModelMessage::new(role);
    out.id = m.id.clone();
    out.model = m.model.clone();
    out.sidechain = m.is_sidechain();
    if let Some(parts) = &m.content {
        for p in parts {
            let mut b = match p.kind.as_str() {
                "text" => Block::text(p.text.clone()),
                "thinking" => Block::thinking(p.text.clone(), None),
                other => Block {
                    kind: BlockKind::Other {
                        value: json!({"type": other, "text": p.text}),
                    },
                    extra: Extra::new(),
                },
            };
            b.extra.extend(p.extra.clone());
            out.content.push(b);
        }
    } else {
        out.extra.insert("content_absent".into(), Value::Bool(true));
    }
    if let Some(tool) = &m.tool {
        let mut b = Block::tool_call(
            tool.use_id.clone(),
            tool.name.clone(),
            tool.input.clone().unwrap_or(Value::Null),
        );
        b.extra
            .insert("type".into(), Value::String(tool.kind.clone()));
        if tool.input.is_none() {
            b.extra.insert("input_absent".into(), Value::Bool(true));
        }
        if let Some(s) = &tool.summary {
            b.extra.insert("summary".into(), Value::String(s.clone()));
        }
        if let Some(s) = &tool.formatted_markdown {
            b.extra
                .insert("formattedMarkdown".into(), Value::String(s.clone()));
        }
        if !tool.extra.is_empty() {
            b.extra
                .insert("tool_extra".into(), Value::Object(tool.extra.clone()));
        }
        out.content.push(b);
    }
    if let Some(h) = &m.path_hints {
        out.extra.insert("pathHints".into(), json!(h));
    }
    if let Some(u) = &m.usage {
        out.usage = Some(usage_from(u));
        out.extra.insert(USAGE_KEY.into(), Value::Object(u.clone()));
    }
    if let Some(md) = &m.metadata {
        out.extra
            .insert("metadata".into(), Value::Object(md.clone()));
    }
    for (k, v) in &m.extra {
        out.extra.insert(k.clone(), v.clone());
    }
    out
}

pub(super) fn usage_from(u: &Extra) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    let mut usage = Usage {
        input: n("inputTokens"),
        output: n("outputTokens"),
        cache_read: n("cacheReadInputTokens") + n("cachedInputTokens") + n("cachedTokens"),
        cache_write: n("cacheCreationInputTokens"),
        reasoning: n("reasoningOutputTokens") + n("thoughtTokens") + n("thinkingTokens"),
        ..Usage::default()
    };
    for (k, v) in u {
        if !matches!(
            k.as_str(),
            "inputTokens" | "outputTokens" | "cacheReadInputTokens" | "cacheCreationInputTokens"
        ) {
            usage.extra.insert(k.clone(), v.clone());
        }
    }
    usage
}

pub(super) fn output_text(output: &Value) -> Option<String> {
    match output {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("content").and_then(Value::as_str).map(str::to_string),
        _ => None,
    }
}

#[derive(Default)]
pub(super) struct IdMaker {
    used: std::collections::HashSet<String>,
}

impl IdMaker {
    fn make(&mut self, preferred: Option<&str>, fallback: &str) -> String {
        let mut id = preferred
            .filter(|s| !s.is_empty())
            .unwrap_or(fallback)
            .to_string();
        let mut n = 1;
        while self.used.contains(&id) {
            n += 1;
            id = format!("{}~{n}", preferred.unwrap_or(fallback));
        }
        self.used.insert(id.clone());
        id
    }
}

/// Reads the SessionData or transcript at `path`, whose bytes are `bytes`.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| FormatError::invalid(path, None, format!("not UTF-8 text: {e}")))?;
    if text.trim_start().starts_with(GENERATED_BY) {
        let parsed = parse_markdown(text.trim_start()).ok_or_else(|| {
            FormatError::invalid(
                path,
                Some(1),
                "a SpecStory transcript without its header lines",
            )
        })?;
        let mut session = session_from(&parsed.data);
        session.meta.extra.insert(
            "source".into(),
            serde_json::Value::String("markdown".into()),
        );
        let diagnostics = vec![Diagnostic::info(
            path,
            None,
            "from-markdown",
            "read from a rendered transcript: ids, tool inputs and outputs, path hints and usage are not in it",
        )];
        return Ok(Read {
            session,
            diagnostics,
        });
    }
    let data = read_session_data(path, bytes)?;
    let diagnostics = super::validate::rule_violations(&data)
        .into_iter()
        .map(|v| Diagnostic::warning(path, v.line_in(text), "rule", v.to_string()))
        .collect();
    Ok(Read {
        session: session_from(&data),
        diagnostics,
    })
}

/// Parses SessionData JSON, naming the file and line on failure.
pub fn read_session_data(path: &Path, bytes: &[u8]) -> Result<SessionData, FormatError> {
    serde_json::from_slice(bytes).map_err(|e| {
        FormatError::invalid(
            path,
            Some(e.line() as u64),
            format!("not SpecStory SessionData: {e}"),
        )
    })
}
