//! pi / oh-my-pi session trees (JSONL, versions 1 to 3).
//!
//! A pi session file starts with a header record (`{"type":"session",…}`)
//! followed by one entry per line. Since version 2 the entries form a tree
//! through `id`/`parentId`; version 1 files are linear and have no ids.
//! Version 3 renamed the legacy `hookMessage` role to `custom`.
//!
//! Reading does not migrate: a version 1 file reads with ids derived from
//! line numbers (`line<N>`) and a linear parent chain, and writes back
//! without ids, as it was. Migration (what pi does on open) lives in
//! `agentlog_store::pi`.
//!
//! The mapping keeps every field. Where the model cannot tell a missing key
//! from a default (`content` of a message, the token counts of `usage`, an
//! entry's `parentId`), the missing key names are listed under the
//! [`ABSENT_KEY`] of the matching `extra` map. Message roles map as
//! `user`/`assistant` to [`Role::User`]/[`Role::Assistant`], `toolResult` to
//! [`Role::Tool`], and every other role (`bashExecution`, `custom`,
//! `hookMessage`, `branchSummary`, `compactionSummary`) to
//! [`Role::Custom`]. Usage maps `input`, `output`, `cacheRead`, `cacheWrite`,
//! `totalTokens` and `cost.total`; the whole `cost` object stays in the
//! usage's `extra`.
//!
//! Writing a session that did not come from a pi file produces a version 3
//! file. Entry kinds pi has no record for (run lifecycle, LLM snapshots,
//! tool outputs, events, resume markers, unknown records) are carried as pi
//! `custom` entries with `customType` `agentlog.<kind>` and the model's JSON
//! of the entry as `data`; pi keeps them and leaves them out of the context.
//! A message holding several tool results becomes one `toolResult` message
//! per result (ids `<id>`, `<id>-1`, …).
//!
//! [`Role::User`]: agentlog_model::Role::User
//! [`Role::Assistant`]: agentlog_model::Role::Assistant
//! [`Role::Tool`]: agentlog_model::Role::Tool
//! [`Role::Custom`]: agentlog_model::Role::Custom

mod paths;
mod read;
mod write;

pub use paths::{encode_cwd, session_file_name};
pub use read::{entry_from_record, message_from_value, meta_from_header, Ids};

use crate::env::DiscoverEnv;
use crate::jsonl;
use crate::{Diagnostic, Fidelity, Format, FormatError, Read, ResumePlan};
use agentlog_model::{Agent, EntryKind, Session, SessionMeta};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The newest session version pi writes.
pub const CURRENT_VERSION: u64 = 3;

/// The `extra` key listing keys the native record did not have.
pub const ABSENT_KEY: &str = "agentlog:absent";

/// The record type of an entry holding consecutive records that are not
/// part of the tree (no id, no type pi knows), as their lines of text.
pub const RAW_LINES: &str = "agentlog:lines";

/// True for an entry of [`RAW_LINES`].
pub fn is_raw_lines(e: &agentlog_model::Entry) -> bool {
    matches!(&e.kind, EntryKind::Unknown { record_type: Some(rt), .. } if rt == RAW_LINES)
}

/// The record types of pi and oh-my-pi entries the model maps.
pub const ENTRY_TYPES: &[&str] = &[
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "ttsr_injection",
    "session_init",
];

/// True for a version that has no tree (1, or the header has no version).
pub fn is_v1(version: u64) -> bool {
    version < 2
}

/// Returns the version a header declares: 1 when it has none; unreadable
/// values count as the current version.
pub fn header_version(v: Option<&Value>) -> u64 {
    match v {
        None | Some(Value::Null) => 1,
        Some(x) => x.as_u64().unwrap_or(CURRENT_VERSION),
    }
}

pub(crate) fn version_of_meta(meta: &SessionMeta) -> u64 {
    header_version(meta.format_version.as_ref())
}

/// The pi format.
pub struct PiFormat;

/// The registry entry.
pub static FORMAT: PiFormat = PiFormat;

impl Format for PiFormat {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn description(&self) -> &'static str {
        "pi / oh-my-pi session tree (JSONL, versions 1-3)"
    }

    fn agent(&self) -> Agent {
        Agent::Pi
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        if let Some(v) = jsonl::first_value(head) {
            let is_header = jsonl::str_field(&v, "type") == Some("session")
                && v.get("id").is_some_and(Value::is_string);
            return if is_header { 95 } else { 0 };
        }
        // A header longer than the detection window.
        let text = jsonl::head_text(head, 64);
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        if compact.starts_with("{\"type\":\"session\"") {
            return if path.extension().is_some_and(|e| e == "jsonl") {
                80
            } else {
                60
            };
        }
        0
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots: Vec<PathBuf> = match env.roots_for("pi") {
            Some(r) => r.to_vec(),
            None => paths::default_roots(env),
        };
        let mut out = Vec::new();
        for root in roots {
            out.extend(crate::env::walk_files(&root, 2, &|p| {
                p.extension().is_some_and(|e| e == "jsonl")
            }));
        }
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read_session(path, bytes)
    }

    /// Streams the file a line at a time (it is never in memory whole).
    fn read_path(&self, path: &Path) -> Result<Read, FormatError> {
        read_session_streaming(path)
    }

    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        paths::resume_plan(session, env)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        let mut w = write::Writer::new(session);
        let line = |out: &mut dyn Write,
                    record: &serde_json::Map<String, Value>|
         -> Result<(), FormatError> {
            let mut buf = serde_json::to_vec(record)
                .map_err(|e| FormatError::write("a pi record", std::io::Error::from(e)))?;
            buf.push(b'\n');
            out.write_all(&buf)
                .map_err(|e| FormatError::write("a pi session", e))
        };
        if let Some(header) = w.header() {
            line(out, &header)?;
        }
        let mut prev: Option<&str> = None;
        for e in &session.entries {
            for record in w.entry(e, prev) {
                line(out, &record)?;
            }
            prev = Some(&e.id);
        }
        Ok(w.fidelity)
    }
}

/// Returns pi's JSON form of a message (`AgentMessage`): the fields a pi
/// message had when it was read are kept; a message without a timestamp
/// gets the current time in milliseconds.
pub fn message_to_value(m: &agentlog_model::Message) -> Value {
    let mut meta = SessionMeta::new("", Agent::Pi);
    meta.format = Some("pi".into());
    meta.format_version = Some(CURRENT_VERSION.into());
    let session = Session::new(meta);
    let mut w = write::Writer::new(&session);
    let e = agentlog_model::Entry::new("", None, EntryKind::Resume);
    let mut v = w.message_value(m, &e);
    if !v.contains_key("timestamp") {
        let now = agentlog_model::Timestamp::now().millis().unwrap_or(0);
        v.insert("timestamp".into(), now.into());
    }
    Value::Object(v)
}

/// Reads a pi session from the bytes of `path`.
pub fn read_session(path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
    let mut r = Reader::new(path);
    for line in jsonl::lines(bytes) {
        r.line(&line);
    }
    r.finish()
}

/// Reads the pi file at `path` a line at a time: the file is never held in
/// memory whole, only the session read from it.
pub fn read_session_streaming(path: &Path) -> Result<Read, FormatError> {
    let (file, _) = crate::input::open_file(path)?;
    let mut r = Reader::new(path);
    jsonl::for_each_line(std::io::BufReader::with_capacity(1 << 16, file), |line| {
        r.line(line)
    })
    .map_err(|e| FormatError::io(path, e))?;
    let mut read = r.finish()?;
    read.diagnostics = crate::diag::summarize(std::mem::take(&mut read.diagnostics), 100);
    Ok(read)
}

/// The reader's state between lines.
struct Reader<'p> {
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
    fn new(path: &'p Path) -> Reader<'p> {
        Reader {
            path,
            diags: Vec::new(),
            fallback_id: path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            meta: None,
            version: CURRENT_VERSION,
            entries: Vec::new(),
            first: true,
            prev_id: None,
            capper: crate::diag::Capper::new(100),
        }
    }

    /// Reads one line.
    fn line(&mut self, line: &jsonl::Line<'_>) {
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
        if jsonl::is_blank(line.bytes) {
            return;
        }
        let Some(value) = jsonl::parse_line(path, line, diags) else {
            return;
        };
        let n = line.number;
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
                    read::mark_absent(&mut m.extra, "id");
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
            let text = String::from_utf8_lossy(line.bytes);
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
                read::mark_absent(&mut m.extra, "header");
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
