//! pi records -> the unified model.
//!
//! Every conversion works on the parsed JSON object: the keys the model has a
//! place for are mapped, everything else goes to the matching `extra` map.
//! A record whose known keys do not have the expected types is kept whole as
//! [`EntryKind::Unknown`], so reading then writing gives it back verbatim.

use super::wire::{
    header_version, is_raw_lines, is_v1, ABSENT_KEY, CURRENT_VERSION, ENTRY_TYPES, RAW_LINES,
};
use crate::{jsonl, Diagnostic, FormatError, Read};
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta,
    Timestamp, Usage,
};
use serde_json::{Map, Value};
use std::path::Path;

/// Keys every tree entry has.
const ENTRY_KEYS: &[&str] = &["type", "id", "parentId", "timestamp"];

/// Message roles whose `content` is always written, even when empty.
pub(crate) const CONTENT_ROLES: &[&str] =
    &["user", "assistant", "toolResult", "custom", "hookMessage"];

/// Returns the fields of `obj` whose keys are not in `known`.
pub(crate) fn rest(obj: &Map<String, Value>, known: &[&str]) -> Extra {
    obj.iter()
        .filter(|(k, _)| !known.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn str_of(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key).and_then(Value::as_str).map(str::to_string)
}

/// Records in `extra` that the native record had no `key`, where the model
/// cannot tell an absent key from a default value.
pub(crate) fn mark_absent(extra: &mut Extra, key: &str) {
    let list = extra
        .entry(ABSENT_KEY.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(items) = list {
        items.push(Value::String(key.to_string()));
    }
}

/// Moves `key` into `extra` when the model could not take its value, so the
/// writer gives back exactly what was read.
fn keep_unmapped(obj: &Map<String, Value>, key: &str, mapped: bool, extra: &mut Extra) {
    if !mapped {
        if let Some(v) = obj.get(key) {
            extra.insert(key.to_string(), v.clone());
        }
    }
}

/// Returns the session metadata of a header record.
pub fn meta_from_header(header: &Map<String, Value>, fallback_id: &str) -> SessionMeta {
    const KNOWN: &[&str] = &[
        "type",
        "version",
        "id",
        "timestamp",
        "cwd",
        "title",
        "parentSession",
        "provider",
        "modelId",
        "thinkingLevel",
    ];
    let id = str_of(header, "id");
    let mut meta = SessionMeta::new(
        id.clone().unwrap_or_else(|| fallback_id.to_string()),
        Agent::Pi,
    );
    meta.format = Some("pi".into());
    meta.format_version = header.get("version").cloned();
    meta.cwd = str_of(header, "cwd");
    meta.title = str_of(header, "title");
    meta.created_at = header.get("timestamp").and_then(Timestamp::from_json);
    meta.parent_session = str_of(header, "parentSession");
    meta.model.provider = str_of(header, "provider");
    meta.model.model = str_of(header, "modelId");
    meta.model.thinking_level = str_of(header, "thinkingLevel");
    let mut extra = rest(header, KNOWN);
    keep_unmapped(header, "id", id.is_some(), &mut extra);
    keep_unmapped(header, "cwd", meta.cwd.is_some(), &mut extra);
    keep_unmapped(header, "title", meta.title.is_some(), &mut extra);
    keep_unmapped(header, "timestamp", meta.created_at.is_some(), &mut extra);
    keep_unmapped(
        header,
        "parentSession",
        meta.parent_session.is_some(),
        &mut extra,
    );
    keep_unmapped(
        header,
        "provider",
        meta.model.provider.is_some(),
        &mut extra,
    );
    keep_unmapped(header, "modelId", meta.model.model.is_some(), &mut extra);
    keep_unmapped(
        header,
        "thinkingLevel",
        meta.model.thinking_level.is_some(),
        &mut extra,
    );
    meta.extra = extra;
    meta
}

/// Where an entry's id and parent come from when the record has none.
pub struct Ids {
    /// The id to use when the record has no string `id`.
    pub fallback_id: String,
    /// The parent to use in a v1 (linear) file.
    pub v1_parent: Option<String>,
    /// The file's version (1 when the header has none).
    pub version: u64,
}

/// Converts one tree record (anything but the header) into an entry.
/// Returns the entry and whether its shape was recognised (`false` means
/// the record is kept as [`EntryKind::Unknown`]).
pub fn entry_from_record(obj: &Map<String, Value>, line: Option<u64>, ids: &Ids) -> (Entry, bool) {
    let v1 = is_v1(ids.version);
    let native_id = str_of(obj, "id");
    let id = native_id.clone().unwrap_or_else(|| ids.fallback_id.clone());
    let parent_id = if v1 && native_id.is_none() {
        ids.v1_parent.clone()
    } else {
        str_of(obj, "parentId")
    };
    let timestamp = obj.get("timestamp").and_then(Timestamp::from_json);
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    let typed = kind_from_record(ty, obj);
    let recognised = typed.is_some();
    let (kind, mut extra) = match typed {
        Some(pair) => pair,
        None => (
            EntryKind::Unknown {
                record_type: obj.get("type").and_then(Value::as_str).map(str::to_string),
                raw: Value::Object(obj.clone()),
            },
            Extra::new(),
        ),
    };
    if recognised {
        if v1 {
            // v1 files carry no tree: ids in the model are derived, and any
            // native id/parentId keys stay as they were.
            for k in ["id", "parentId"] {
                if let Some(v) = obj.get(k) {
                    extra.insert(k.to_string(), v.clone());
                }
            }
        } else {
            keep_unmapped(obj, "id", native_id.is_some(), &mut extra);
            let parent_mapped = matches!(
                obj.get("parentId"),
                Some(Value::String(_)) | Some(Value::Null)
            );
            keep_unmapped(obj, "parentId", parent_mapped, &mut extra);
            if obj.get("parentId").is_none() {
                mark_absent(&mut extra, "parentId");
            }
        }
        keep_unmapped(obj, "timestamp", timestamp.is_some(), &mut extra);
    }
    let entry = Entry {
        id,
        parent_id,
        timestamp,
        kind,
        extra,
        line,
    };
    (entry, recognised)
}

fn kind_from_record(ty: &str, obj: &Map<String, Value>) -> Option<(EntryKind, Extra)> {
    fn known<'k>(more: &[&'k str]) -> Vec<&'k str> {
        let mut k: Vec<&str> = ENTRY_KEYS.to_vec();
        k.extend_from_slice(more);
        k
    }
    let opt_str = |key: &str, extra: &mut Extra| -> Option<String> {
        let v = str_of(obj, key);
        keep_unmapped(obj, key, v.is_some(), extra);
        v
    };
    match ty {
        "message" => {
            let msg = message_from_value(obj.get("message")?)?;
            Some((EntryKind::Message(msg), rest(obj, &known(&["message"]))))
        }
        "model_change" => {
            if let (Some(provider), Some(model_id)) =
                (str_of(obj, "provider"), str_of(obj, "modelId"))
            {
                let mut extra = rest(obj, &known(&["provider", "modelId", "role"]));
                let role = opt_str("role", &mut extra);
                Some((
                    EntryKind::ModelChange {
                        provider: Some(provider),
                        model: model_id,
                        role,
                    },
                    extra,
                ))
            } else {
                let model = str_of(obj, "model")?;
                let mut extra = rest(obj, &known(&["model", "role"]));
                let role = opt_str("role", &mut extra);
                Some((
                    EntryKind::ModelChange {
                        provider: None,
                        model,
                        role,
                    },
                    extra,
                ))
            }
        }
        "thinking_level_change" => {
            let level = str_of(obj, "thinkingLevel")?;
            Some((
                EntryKind::ThinkingLevelChange { level },
                rest(obj, &known(&["thinkingLevel"])),
            ))
        }
        "compaction" => {
            let summary = str_of(obj, "summary")?;
            let mut extra = rest(
                obj,
                &known(&[
                    "summary",
                    "shortSummary",
                    "firstKeptEntryId",
                    "tokensBefore",
                    "details",
                    "fromExtension",
                    "preserveData",
                ]),
            );
            let short_summary = opt_str("shortSummary", &mut extra);
            let first_kept_entry_id = opt_str("firstKeptEntryId", &mut extra);
            let tokens_before = obj.get("tokensBefore").and_then(Value::as_u64);
            keep_unmapped(obj, "tokensBefore", tokens_before.is_some(), &mut extra);
            let from_extension = obj.get("fromExtension").and_then(Value::as_bool);
            keep_unmapped(obj, "fromExtension", from_extension.is_some(), &mut extra);
            Some((
                EntryKind::Compaction {
                    summary,
                    short_summary,
                    first_kept_entry_id,
                    tokens_before,
                    details: obj.get("details").cloned(),
                    from_extension,
                    preserve_data: obj.get("preserveData").cloned(),
                },
                extra,
            ))
        }
        "branch_summary" => {
            let from_id = str_of(obj, "fromId")?;
            let summary = str_of(obj, "summary")?;
            let mut extra = rest(
                obj,
                &known(&["fromId", "summary", "details", "fromExtension"]),
            );
            let from_extension = obj.get("fromExtension").and_then(Value::as_bool);
            keep_unmapped(obj, "fromExtension", from_extension.is_some(), &mut extra);
            Some((
                EntryKind::BranchSummary {
                    from_id,
                    summary,
                    details: obj.get("details").cloned(),
                    from_extension,
                },
                extra,
            ))
        }
        "custom" => {
            let custom_type = str_of(obj, "customType")?;
            let extra = rest(obj, &known(&["customType", "data"]));
            if let Some(kind) = carried_kind(&custom_type, obj.get("data")) {
                return Some((kind, extra));
            }
            Some((
                EntryKind::Custom {
                    custom_type,
                    data: obj.get("data").cloned(),
                },
                extra,
            ))
        }
        "custom_message" => {
            let custom_type = str_of(obj, "customType")?;
            let display = obj.get("display").and_then(Value::as_bool)?;
            let (content, content_is_text) = content_from_value(obj.get("content")?)?;
            Some((
                EntryKind::CustomMessage {
                    custom_type,
                    content,
                    content_is_text,
                    display,
                    details: obj.get("details").cloned(),
                },
                rest(
                    obj,
                    &known(&["customType", "content", "display", "details"]),
                ),
            ))
        }
        "label" => {
            let target_id = str_of(obj, "targetId")?;
            let mut extra = rest(obj, &known(&["targetId", "label"]));
            let label = opt_str("label", &mut extra);
            Some((EntryKind::Label { target_id, label }, extra))
        }
        "session_info" => {
            let mut extra = rest(obj, &known(&["name"]));
            let name = opt_str("name", &mut extra);
            Some((EntryKind::SessionInfo { name }, extra))
        }
        "ttsr_injection" => {
            let rules = string_list(obj.get("injectedRules")?)?;
            Some((
                EntryKind::TtsrInjection { rules },
                rest(obj, &known(&["injectedRules"])),
            ))
        }
        "session_init" => {
            let tools = string_list(obj.get("tools")?)?;
            let mut extra = rest(
                obj,
                &known(&["systemPrompt", "task", "tools", "outputSchema"]),
            );
            let system_prompt = opt_str("systemPrompt", &mut extra);
            let task = opt_str("task", &mut extra);
            Some((
                EntryKind::SessionInit {
                    system_prompt,
                    task,
                    tools,
                    output_schema: obj.get("outputSchema").cloned(),
                },
                extra,
            ))
        }
        _ => None,
    }
}

/// Returns the entry kind an `agentlog.<kind>` custom entry carries (how
/// the writer keeps kinds pi has no record for), when its data is exactly
/// the model's JSON of that kind.
fn carried_kind(custom_type: &str, data: Option<&Value>) -> Option<EntryKind> {
    let name = custom_type.strip_prefix("agentlog.")?;
    let data = data?;
    let kind: EntryKind = serde_json::from_value(data.clone()).ok()?;
    let carried = !matches!(
        kind,
        EntryKind::Message(_) | EntryKind::Custom { .. } | EntryKind::Unknown { .. }
    ) && !super::ENTRY_TYPES.contains(&kind.name());
    (carried && kind.name() == name && serde_json::to_value(&kind).ok().as_ref() == Some(data))
        .then_some(kind)
}

fn string_list(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_str().map(str::to_string))
        .collect()
}

/// Returns the blocks of a `content` value (a string or a block array) and
/// whether it was a bare string.
pub(crate) fn content_from_value(v: &Value) -> Option<(Vec<Block>, bool)> {
    match v {
        Value::String(s) => Some((vec![Block::text(s.clone())], true)),
        Value::Array(items) => Some((items.iter().map(block_from_value).collect(), false)),
        _ => None,
    }
}

/// Converts a pi message (`AgentMessage`) into a model message.
pub fn message_from_value(v: &Value) -> Option<Message> {
    const KNOWN: &[&str] = &[
        "role",
        "content",
        "timestamp",
        "provider",
        "model",
        "usage",
        "stopReason",
        "toolCallId",
        "toolName",
        "isError",
    ];
    let obj = v.as_object()?;
    let role_name = obj.get("role")?.as_str()?;
    let role = match role_name {
        "toolResult" => Role::Tool,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        other => Role::Custom(other.to_string()),
    };
    let mut m = Message::new(role);
    let mut extra = rest(obj, KNOWN);
    match obj.get("content").map(content_from_value) {
        Some(Some((blocks, is_text))) => {
            // An empty list where the writer would leave the key out must
            // be kept as written.
            if blocks.is_empty() && !is_text && !CONTENT_ROLES.contains(&role_name) {
                extra.insert("content".into(), Value::Array(Vec::new()));
            }
            m.content = blocks;
            m.content_is_text = is_text;
        }
        Some(None) => keep_unmapped(obj, "content", false, &mut extra),
        None if CONTENT_ROLES.contains(&role_name) => mark_absent(&mut extra, "content"),
        None => {}
    }
    m.timestamp = obj.get("timestamp").and_then(Timestamp::from_json);
    keep_unmapped(obj, "timestamp", m.timestamp.is_some(), &mut extra);
    let take_str = |key: &str, extra: &mut Extra| {
        let v = str_of(obj, key);
        keep_unmapped(obj, key, v.is_some(), extra);
        v
    };
    m.provider = take_str("provider", &mut extra);
    m.model = take_str("model", &mut extra);
    m.stop_reason = take_str("stopReason", &mut extra);
    m.tool_call_id = take_str("toolCallId", &mut extra);
    m.tool_name = take_str("toolName", &mut extra);
    m.is_error = obj.get("isError").and_then(Value::as_bool);
    keep_unmapped(obj, "isError", m.is_error.is_some(), &mut extra);
    m.usage = obj.get("usage").and_then(usage_from_value);
    keep_unmapped(obj, "usage", m.usage.is_some(), &mut extra);
    m.extra = extra;
    Some(m)
}

/// The integer usage keys and the model field each maps to.
pub(crate) const USAGE_COUNTS: [&str; 4] = ["input", "output", "cacheRead", "cacheWrite"];

/// Converts pi's `usage` object. `cost` stays verbatim in `extra` (its
/// `total` is also `cost_usd`); counts the object lacks are listed under
/// [`ABSENT_KEY`] so they are not written back as zeros.
pub(crate) fn usage_from_value(v: &Value) -> Option<Usage> {
    let obj = v.as_object()?;
    let mut u = Usage::default();
    let mut extra = rest(
        obj,
        &["input", "output", "cacheRead", "cacheWrite", "totalTokens"],
    );
    for key in USAGE_COUNTS {
        let slot = match key {
            "input" => &mut u.input,
            "output" => &mut u.output,
            "cacheRead" => &mut u.cache_read,
            _ => &mut u.cache_write,
        };
        match obj.get(key) {
            None => mark_absent(&mut extra, key),
            Some(x) => match x.as_u64() {
                Some(n) => *slot = n,
                None => {
                    extra.insert(key.into(), x.clone());
                }
            },
        }
    }
    u.total = obj.get("totalTokens").and_then(Value::as_u64);
    keep_unmapped(obj, "totalTokens", u.total.is_some(), &mut extra);
    u.cost_usd = obj
        .get("cost")
        .and_then(|c| c.get("total"))
        .and_then(Value::as_f64);
    u.extra = extra;
    Some(u)
}

/// Converts one content block.
pub(crate) fn block_from_value(v: &Value) -> Block {
    let other = || Block {
        kind: BlockKind::Other { value: v.clone() },
        extra: Extra::new(),
    };
    let Some(obj) = v.as_object() else {
        return other();
    };
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    match ty {
        "text" => match str_of(obj, "text") {
            Some(text) => Block {
                kind: BlockKind::Text { text },
                extra: rest(obj, &["type", "text"]),
            },
            None => other(),
        },
        "thinking" => {
            let Some(text) = str_of(obj, "thinking") else {
                return other();
            };
            let mut extra = rest(obj, &["type", "thinking", "thinkingSignature", "redacted"]);
            let signature = str_of(obj, "thinkingSignature");
            keep_unmapped(obj, "thinkingSignature", signature.is_some(), &mut extra);
            let redacted = obj.get("redacted") == Some(&Value::Bool(true));
            keep_unmapped(obj, "redacted", redacted, &mut extra);
            Block {
                kind: BlockKind::Thinking {
                    text,
                    signature,
                    redacted,
                },
                extra,
            }
        }
        "toolCall" => {
            let (Some(name), Some(input)) = (str_of(obj, "name"), obj.get("arguments")) else {
                return other();
            };
            let mut extra = rest(obj, &["type", "id", "name", "arguments"]);
            let id = str_of(obj, "id");
            keep_unmapped(obj, "id", id.is_some(), &mut extra);
            Block {
                kind: BlockKind::ToolCall {
                    id,
                    name,
                    input: input.clone(),
                },
                extra,
            }
        }
        "image" => {
            let (Some(data), Some(mime)) = (str_of(obj, "data"), str_of(obj, "mimeType")) else {
                return other();
            };
            Block {
                kind: BlockKind::Image {
                    media_type: Some(mime),
                    data: Some(data),
                    url: None,
                },
                extra: rest(obj, &["type", "data", "mimeType"]),
            }
        }
        _ => other(),
    }
}

/// Reads a pi session from the bytes of `path`.
pub fn read_session(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let mut r = Reader::new(path, bytes.len() as u64);
    jsonl::each_value_keeping(path, bytes, &may_stay_outside, |n, v, text| {
        r.record(n, v, text)
    });
    r.finish()
}

/// Reads the pi file at `path` a line at a time: the file is never held in
/// memory whole, only the session read from it. A large file's lines are
/// parsed on a second thread while this one reads the records (parsing
/// was half of reading a 112 MB session, all on one thread).
pub fn read_session_streaming(path: &Path) -> Result<Read, FormatError> {
    let (file, len) = crate::input::open_file(path)?;
    let mut read = if len < jsonl::PIPELINE_MIN as u64 {
        // A small file is read whole and parsed here: a thread per file
        // would slow an index of thousands of them.
        let bytes = crate::input::read_capped(path, file, len)?;
        read_session(path, &bytes)?
    } else {
        let mut r = Reader::new(path, len);
        jsonl::each_value_read_keeping(
            path,
            std::io::BufReader::with_capacity(1 << 16, file),
            &may_stay_outside,
            |n, v, text| r.record(n, v, text),
        )
        .map_err(|e| FormatError::io(path, e))?;
        r.finish()?
    };
    read.diagnostics = crate::diag::summarize(std::mem::take(&mut read.diagnostics), 100);
    Ok(read)
}

/// True when the record `v` may be one kept outside the tree, as the text
/// of its line ([`Reader::record`]): one with no id and no type pi knows.
fn may_stay_outside(v: &Value) -> bool {
    let Some(obj) = v.as_object() else {
        return false;
    };
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
    ty != "session" && !ENTRY_TYPES.contains(&ty) && !obj.contains_key("id")
}

/// The reader's state between lines.
pub(super) struct Reader<'p> {
    path: &'p Path,
    diags: Vec<Diagnostic>,
    fallback_id: String,
    meta: Option<SessionMeta>,
    version: u64,
    entries: Vec<agentlog_model::Entry>,
    first: bool,
    prev_id: Option<String>,
    /// Millions of bad lines keep a summary, not a diagnostic each.
    capper: crate::diag::Capper,
}

impl<'p> Reader<'p> {
    /// A reader of a file of `len` bytes.
    fn new(path: &'p Path, len: u64) -> Reader<'p> {
        // Room for an entry per 512 bytes, more than a session has: grown
        // by doubling, the entries were copied into fresh memory again and
        // again (a tenth of reading a 112 MB session). At most 2^20; only
        // what is filled is ever touched.
        let mut entries = Vec::new();
        let _ = entries.try_reserve_exact((len / 512).min(1 << 20) as usize);
        Reader {
            path,
            diags: Vec::new(),
            fallback_id: path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            meta: None,
            version: CURRENT_VERSION,
            entries,
            first: true,
            prev_id: None,
            capper: crate::diag::Capper::new(100),
        }
    }

    /// Reads the record on line `n`: its value, or why it is not JSON, and
    /// the line's text when the record may stay outside the tree
    /// ([`may_stay_outside`]).
    fn record(&mut self, n: u64, value: Result<Value, Diagnostic>, text: Option<String>) {
        let Reader {
            path,
            diags,
            meta,
            version,
            entries,
            first,
            prev_id,
            capper,
            fallback_id,
        } = self;
        let path: &Path = path;

        capper.cap(diags);
        let value = match value {
            Ok(v) => v,
            Err(d) => return diags.push(d),
        };
        let Value::Object(obj) = value else {
            diags.push(Diagnostic::warning(
                path,
                Some(n),
                "not-an-object",
                "line is JSON but not an object; kept verbatim as an unknown record",
            ));
            let e = agentlog_model::Entry::new(
                format!("line{n}"),
                None,
                EntryKind::Unknown {
                    record_type: None,
                    raw: value,
                },
            );
            entries.push(agentlog_model::Entry { line: Some(n), ..e });
            return;
        };
        let ty = obj.get("type").and_then(Value::as_str).unwrap_or("");
        if *first {
            *first = false;
            if ty == "session" {
                *version = header_version(obj.get("version"));
                match obj.get("version") {
                    None | Some(Value::Null) => diags.push(Diagnostic::info(
                        path,
                        Some(n),
                        "v1",
                        "version 1 session (no ids): entry ids are derived from line numbers and form a linear chain; `agentlog migrate` upgrades the file",
                    )),
                    Some(v) if v.as_u64().is_some_and(|x| x > CURRENT_VERSION) => diags.push(Diagnostic::warning(
                        path,
                        Some(n),
                        "unknown-version",
                        format!("session version {v} is newer than {CURRENT_VERSION}, the newest known; read as version {CURRENT_VERSION}"),
                    )),
                    Some(v) if v.as_u64().is_none() => diags.push(Diagnostic::warning(
                        path,
                        Some(n),
                        "unknown-version",
                        format!("session version {v} is not a number; read as version {CURRENT_VERSION}"),
                    )),
                    Some(_) => {}
                }
                if !obj.get("id").is_some_and(Value::is_string) {
                    diags.push(Diagnostic::warning(
                        path,
                        Some(n),
                        "invalid-header",
                        "the session header has no string id (pi rejects such files); the file name is used",
                    ));
                }
                let mut m = meta_from_header(&obj, fallback_id);
                if obj.get("id").is_none() {
                    mark_absent(&mut m.extra, "id");
                }
                *meta = Some(m);
                return;
            }
            diags.push(Diagnostic::error(
                path,
                Some(n),
                "missing-header",
                "the first record is not a session header ({\"type\":\"session\",…}); pi would not open this file; read on",
            ));
        } else if ty == "session" {
            diags.push(Diagnostic::warning(
                path,
                Some(n),
                "extra-header",
                "a second session header; kept verbatim as an unknown record",
            ));
        }
        let ids = Ids {
            fallback_id: format!("line{n}"),
            v1_parent: prev_id.clone(),
            version: *version,
        };
        let (entry, recognised) = if ty == "session" {
            let e = agentlog_model::Entry::new(
                obj.get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("line{n}")),
                None,
                EntryKind::Unknown {
                    record_type: Some("session".into()),
                    raw: Value::Object(obj.clone()),
                },
            );
            (agentlog_model::Entry { line: Some(n), ..e }, true)
        } else {
            entry_from_record(&obj, Some(n), &ids)
        };
        // Records outside the tree (no id in a file whose entries have
        // ids, and of no type pi knows) are kept as text, consecutive ones
        // in one entry: a file of millions of `{}` lines costs its bytes,
        // not an entry each.
        let outside = !recognised
            && !is_v1(*version)
            && ty != "session"
            && !ENTRY_TYPES.contains(&ty)
            && !obj.contains_key("id");
        if !recognised {
            if outside {
                diags.push(Diagnostic::info(
                    path,
                    Some(n),
                    "outside-tree",
                    "a record with no id and no type pi knows; kept verbatim, outside the tree",
                ));
            } else if ENTRY_TYPES.contains(&ty) {
                diags.push(Diagnostic::warning(
                    path,
                    Some(n),
                    "unexpected-shape",
                    format!("a {ty:?} record lacks fields pi requires or has them with other types; kept verbatim"),
                ));
            } else {
                diags.push(Diagnostic::info(
                    path,
                    Some(n),
                    "unknown-type",
                    format!("record type {ty:?} is not known; kept verbatim"),
                ));
            }
        }
        if !is_v1(*version)
            && !outside
            && !obj.get("id").is_some_and(Value::is_string)
            && ty != "session"
        {
            diags.push(Diagnostic::warning(
                path,
                Some(n),
                "missing-id",
                format!(
                    "entry has no string id in a version {version} file; using {}",
                    entry.id
                ),
            ));
        }
        if outside {
            // The text is there (`may_stay_outside` holds for every record
            // outside); were it not, the record written out stands for it.
            debug_assert!(
                text.is_some(),
                "line {n} outside the tree came without its text"
            );
            let text = text.unwrap_or_else(|| Value::Object(obj.clone()).to_string());
            match entries.last_mut() {
                Some(agentlog_model::Entry {
                    kind:
                        EntryKind::Unknown {
                            record_type: Some(rt),
                            raw: Value::String(lines),
                        },
                    ..
                }) if rt == RAW_LINES => {
                    lines.push('\n');
                    lines.push_str(text.trim_end_matches('\r'));
                }
                _ => {
                    let e = agentlog_model::Entry::new(
                        format!("line{n}"),
                        None,
                        EntryKind::Unknown {
                            record_type: Some(RAW_LINES.into()),
                            raw: Value::String(text.trim_end_matches('\r').to_string()),
                        },
                    );
                    entries.push(agentlog_model::Entry { line: Some(n), ..e });
                }
            }
            return;
        }
        *prev_id = Some(entry.id.clone());
        entries.push(entry);
    }

    /// Returns the session read.
    fn finish(self) -> Result<Read, FormatError> {
        let Reader {
            path,
            mut diags,
            meta,
            entries,
            capper,
            fallback_id,
            ..
        } = self;
        capper.finish(&mut diags);
        let meta = match meta {
            Some(m) => m,
            None if entries.is_empty() => {
                return Err(FormatError::invalid(
                    path,
                    None,
                    "no pi records (the file is empty or no line is valid JSON)",
                ))
            }
            None => {
                let mut m = SessionMeta::new(fallback_id, Agent::Pi);
                m.format = Some("pi".into());
                m.format_version = Some(CURRENT_VERSION.into());
                mark_absent(&mut m.extra, "header");
                m
            }
        };
        let mut session = Session::new(meta);
        // The leaf is the last entry of the tree, not a run of records outside
        // it.
        session.leaf_id = entries
            .iter()
            .rev()
            .find(|e| !is_raw_lines(e))
            .or(entries.last())
            .map(|e| e.id.clone());
        session.meta.updated_at = entries.iter().rev().find_map(|e| e.timestamp.clone());
        session.entries = entries;
        Ok(Read {
            session,
            diagnostics: diags,
        })
    }
}
