//! Sourcegraph Amp threads: one JSON document per thread, `T-<uuid>.json`.
//!
//! - Until its builds of April 2026 the Amp CLI (and its editor extension)
//!   kept every thread in `$XDG_DATA_HOME/amp/threads/` (by default
//!   `~/.local/share/amp/threads/`), written whole to a `.amptmp` file and
//!   renamed; older extension builds used
//!   `<editor config>/User/globalStorage/sourcegraph.amp/threads3/`.
//!   Later builds keep threads on Amp's server only, and
//!   `amp threads export <id>` prints the same document (with
//!   `protocolMessageID`s and a few more thread fields): a file of that
//!   output is read the same way.
//! - `{v, id, created, title, env.initial{trees, platform}, messages[]}`;
//!   each message has a `role` (`user`, `assistant`, `info`), `content`
//!   blocks (`text`, `thinking` with its signature, `tool_use`,
//!   `tool_result` keyed by `toolUseID` with the tool's `run`, `image`),
//!   and on answers `usage` (`inputTokens`, `outputTokens`, the cache
//!   counts, `model`, `timestamp`) and `state`. An `info` message with a
//!   `summary` block marks a compaction.
//! - Everything not mapped is kept: the thread's fields in the session's
//!   extra fields, each message's and block's in theirs (a block's `run`
//!   whole), unknown blocks verbatim.
//!
//! Reading only: current builds continue threads from the server, not
//! from a file.

mod read;
mod validate;
mod wire;

use crate::env::DiscoverEnv;
use crate::{Diagnostic, Format, FormatError, Read};
use agentlog_model::Agent;
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "amp";

/// The Amp format.
pub struct AmpFormat;

/// The registry entry.
pub static FORMAT: AmpFormat = AmpFormat;

/// The editors whose configuration folder may hold the extension's older
/// thread store.
const EDITORS: &[&str] = &["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"];

impl Format for AmpFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Amp thread (threads/T-<id>.json, or `amp threads export` output)"
    }

    fn agent(&self) -> Agent {
        Agent::Other("amp".into())
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let text = crate::jsonl::head_text(head, 4096);
        let shaped = text.trim_start().starts_with('{')
            && (text.contains("\"id\": \"T-") || text.contains("\"id\":\"T-"))
            && (text.contains("\"messages\"") || text.contains("\"v\""));
        let in_store = path
            .parent()
            .and_then(|d| d.file_name())
            .is_some_and(|n| n == "threads" || n == "threads3");
        match (shaped, in_store) {
            (true, true) => 90,
            (true, false) => 75,
            _ => 0,
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => {
                let mut r = vec![env.xdg_data_home().join("amp/threads")];
                for editor in EDITORS {
                    r.push(
                        env.xdg_config_home()
                            .join(editor)
                            .join("User/globalStorage/sourcegraph.amp/threads3"),
                    );
                }
                r
            }
        };
        let mut out = Vec::new();
        for root in roots {
            crate::env::note_dir(&root);
            let Ok(entries) = std::fs::read_dir(&root) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                // Amp's store lists the top level's `*.json` (not its
                // `.json.amptmp` files being written).
                let is_thread = p.extension().is_some_and(|x| x == "json")
                    && e.file_type().is_ok_and(|t| t.is_file());
                if is_thread {
                    out.push(p);
                }
            }
        }
        crate::env::sort_paths(&mut out);
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read(path, bytes)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn drift(&self, read: &Read) -> Vec<crate::drift::Drift> {
        use crate::drift::{DriftKind, Tally};
        let mut t = Tally::default();
        crate::drift::unknown_records(read, &mut t);
        if let Some(serde_json::Value::Object(thread)) = read.session.meta.extra.get("thread") {
            t.fields("thread", thread.keys(), wire::THREAD_FIELDS, None);
        }
        for e in &read.session.entries {
            let Some(m) = e.message() else {
                continue;
            };
            t.fields("message", m.extra.keys(), wire::MESSAGE_FIELDS, e.line);
            for b in &m.content {
                if let agentlog_model::BlockKind::Other { value } = &b.kind {
                    let ty = value
                        .get("type")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("(none)");
                    if !wire::BLOCK_TYPES.contains(&ty) {
                        t.add(DriftKind::RecordType, &format!("block {ty}"), e.line);
                    }
                }
            }
        }
        t.into_items()
    }
}
