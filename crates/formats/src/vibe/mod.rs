//! Mistral Vibe sessions, in both layouts its CLI has written:
//!
//! - **3.x, the unified session store** (`~/.vibe/logs/session/unified/<id>/`,
//!   also written by 2.21 and later): `meta.json` (id, times, working
//!   directory, title, model, parent and child sessions), `CURRENT` (the
//!   newest generation), `generations/<n>/manifest.json` (which
//!   content-addressed `chunks/<sha256>.json` hold each state), and
//!   `journal/<n>.jsonl`, the records written since that generation. The
//!   conversation is the projection's history, the transcript the user saw
//!   (it survives compaction): `message`, `reasoning` and `effect` entries
//!   (a tool run: its input, approval and output). The journal's
//!   `projection_delta` records after the generation (`append_entry`,
//!   `replace_entry`, `remove_entry`, `set_history_entries`,
//!   `set_envelope`) are applied, so a running or interrupted session reads
//!   up to its last record. Tool calls get the id and name the model used
//!   and their results the text the model was sent, from the checkpoint's
//!   model context where the call is still in it. The session is named by
//!   its `meta.json`.
//! - **2.x** (`~/.vibe/logs/session/session_<date>_<time>_<id8>/`, up to
//!   2.20): `messages.jsonl`, one OpenAI-style chat message a line (`role`,
//!   `content`, `reasoning_content`, `tool_calls`, `tool_call_id`, `name`,
//!   `message_id`, `injected`), and `meta.json` beside it. `--continue`
//!   starts a new directory holding the whole conversation so far. The
//!   session is named by its `messages.jsonl`.
//!
//! Vibe keeps no usage per answer in either layout, only the session's
//! totals (3.x: the projection's `tokenUsage`; 2.x: `meta.json`'s `stats`):
//! the total is put on the last answer. Every field not mapped is kept in
//! the entry's or the session's extra fields; entries of an unknown type are
//! kept verbatim.
//!
//! Written in the 2.x layout (the 3.x store is hash-chained and
//! content-addressed, and Vibe imports 2.x sessions into it itself): 2.x
//! sessions line for line, others as 2.x chat messages; `resume --in vibe`
//! puts them where `vibe --resume <id>` finds them, with a `meta.json`.

mod legacy;
mod read;
mod unified;
mod validate;
mod wire;
mod write;

use crate::env::{list_dirs, DiscoverEnv};
use crate::{Diagnostic, Fidelity, Format, FormatError, Read, ResumePlan};
use agentlog_model::Agent;
use agentlog_model::Session;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "vibe";

/// The Mistral Vibe format.
pub struct VibeFormat;

/// The registry entry.
pub static FORMAT: VibeFormat = VibeFormat;

/// Returns Vibe's home: `$VIBE_HOME`, else `~/.vibe`.
pub fn vibe_home(env: &DiscoverEnv) -> PathBuf {
    env.var_path("VIBE_HOME")
        .unwrap_or_else(|| env.home.join(".vibe"))
}

/// True when `path` is a 3.x session's `meta.json` (a `CURRENT` beside it).
fn is_store_meta(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == wire::META)
        && path.with_file_name(wire::CURRENT).is_file()
}

/// True when `path` is a 2.x session's `messages.jsonl`.
fn is_legacy_messages(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == wire::MESSAGES)
}

impl Format for VibeFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Mistral Vibe session (unified/<id>/meta.json, or 2.x session_*/messages.jsonl)"
    }

    fn agent(&self) -> Agent {
        Agent::Other("vibe".into())
    }

    fn extension(&self) -> &'static str {
        "jsonl"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let text = crate::jsonl::head_text(head, head.len());
        if is_store_meta(path) && text.contains("\"session_id\"") {
            return 95;
        }
        if is_legacy_messages(path) && text.contains("\"role\"") {
            let in_session_dir = path
                .parent()
                .and_then(|d| d.file_name())
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("session_"));
            return if in_session_dir { 90 } else { 30 };
        }
        0
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => vec![vibe_home(env).join("logs").join("session")],
        };
        let mut out = Vec::new();
        for root in roots {
            crate::env::note_dir(&root);
            for dir in list_dirs(&root) {
                let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                if name.starts_with("session_") {
                    let f = dir.join(wire::MESSAGES);
                    if f.is_file() {
                        out.push(f);
                    }
                }
            }
            let unified = root.join("unified");
            crate::env::note_dir(&unified);
            for dir in list_dirs(&unified) {
                let f = dir.join(wire::META);
                if is_store_meta(&f) {
                    out.push(f);
                }
            }
        }
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read(path, bytes)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn drift(&self, read: &Read) -> Vec<crate::drift::Drift> {
        drift(read)
    }

    fn resume_plan(&self, session: &Session, env: &DiscoverEnv) -> Result<ResumePlan, FormatError> {
        let cwd = crate::format::resume_cwd(session, FORMAT_NAME)?;
        let id = crate::safe_path::component(&session.meta.id);
        // Vibe finds a 2.x session by its id's first eight characters.
        let short: String = id.chars().take(8).collect();
        let started = chrono::Utc::now().format("%Y%m%d_%H%M%S");
        let root = vibe_home(env).join("logs").join("session");
        let path = root
            .join(format!("session_{started}_{short}"))
            .join(wire::MESSAGES);
        crate::safe_path::inside(&root, &path)?;
        Ok(ResumePlan {
            path,
            command: format!("vibe --resume {}", crate::shell::quote(&id)),
            cwd: Some(PathBuf::from(cwd)),
        })
    }

    fn register_resumed(
        &self,
        session: &Session,
        plan: &ResumePlan,
        _env: &DiscoverEnv,
    ) -> Result<(), FormatError> {
        let cwd = plan
            .cwd
            .as_ref()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        write::write_meta(session, &plan.path, &cwd)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }
}

/// Unknown records, and the fields of messages (2.x lines, 3.x history
/// entries) that the versions verified do not write.
fn drift(read: &Read) -> Vec<crate::drift::Drift> {
    use agentlog_model::{BlockKind, EntryKind};
    let mut t = crate::drift::Tally::default();
    crate::drift::unknown_records(read, &mut t);
    let legacy = read.session.meta.format_version.as_ref() == Some(&"2.x".into());
    for e in &read.session.entries {
        let EntryKind::Message(m) = &e.kind else {
            continue;
        };
        let (record, known): (&str, &[&str]) = if legacy {
            ("message", wire::LEGACY_FIELDS)
        } else if m
            .content
            .iter()
            .any(|b| matches!(b.kind, BlockKind::ToolCall { .. }))
        {
            ("effect", wire::EFFECT_FIELDS)
        } else if m
            .content
            .iter()
            .any(|b| matches!(b.kind, BlockKind::Thinking { .. }))
        {
            ("reasoning", wire::REASONING_FIELDS)
        } else {
            ("message", wire::ENTRY_FIELDS)
        };
        t.fields(record, m.extra.keys(), known, e.line);
    }
    t.into_items()
}
