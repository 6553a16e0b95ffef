//! SpecStory SessionData 1.0: the provider-neutral session JSON of the
//! SpecStory CLI, and its markdown transcripts.
//!
//! - [`SessionData`] and its parts are the JSON, field for field, with
//!   unknown fields kept; reading and writing a file gives the same JSON
//!   values.
//! - [`validate::violations`] checks a document against the JSON Schema
//!   (the seed document's by default, the CLI's shipped file on request)
//!   and the seed's `Validate()` rules, one message (path and problem) per
//!   violation. [`Format::validate`] turns them into diagnostics with the
//!   line of the offending value.
//! - [`session_data_from`] builds SessionData from any unified session:
//!   exchanges open at real user prompts, tool results are merged into the
//!   message that made the call, tools get a type from their name
//!   ([`classify_tool`]) and `pathHints` from their input ([`path_hints`]).
//!   [`session_from`] goes the other way.
//! - [`render_markdown`] writes the transcript SpecStory writes to
//!   `.specstory/history/<file_name>`; [`parse_markdown`] reads one back.
//!
//! Where the seed document and the SpecStory CLI differ, this module
//! follows the document and says so:
//! - the schema enforced is the document's (provider ids limited to
//!   `claude`, `cursor`, `codex`, `gemini`; tool `input`/`output` objects;
//!   no root `title`); the CLI's own file is available as
//!   [`ValidationSchema::Upstream`];
//! - `Validate()` in the CLI only logs warnings and its result is ignored;
//!   here every violation is a diagnostic;
//! - the CLI adds `title` (root) and `usage` (messages); both are read and
//!   written back, and `usage` maps to the model's token usage.
//!
//! ```
//! use agentlog_formats::specstory::{render_markdown, SessionData, ProviderInfo, Exchange, Message};
//! let mut data = SessionData::new(ProviderInfo::from_id("claude", "2.0.0"), "s1");
//! data.created_at = "2025-10-24T10:00:00Z".into();
//! data.workspace_root = "/work".into();
//! let mut user = Message::user("hello");
//! user.timestamp = Some("2025-10-24T10:00:00Z".into());
//! data.exchanges.push(Exchange { exchange_id: "ex_001".into(), messages: vec![user], ..Exchange::default() });
//! let md = render_markdown(&data);
//! assert!(md.contains("_**User (2025-10-24 10:00:00Z)**_\n\nhello\n"));
//! ```

mod read;
pub mod validate;
mod wire;
mod write;

pub use read::markdown::{parse_markdown, ParsedTranscript};
pub use read::{read_session_data, session_from};
pub use validate::validate_text;
pub use validate::{ValidationSchema, Violation};
pub use wire::tools::{classify_tool, path_hints};
pub use wire::types::{
    provider_id, provider_name, ContentPart, Exchange, Message, ProviderInfo, SessionData,
    ToolInfo, SCHEMA_VERSION, TOOL_TYPES,
};
pub use write::markdown::{
    code_fence, file_name, first_user_text, format_time, go_value, has_renderable_content,
    render_markdown, render_markdown_with, slug, RenderOptions, GENERATED_BY,
};
pub use write::{provider_for, session_data_from, to_json, to_session_data};

use crate::{Diagnostic, Fidelity, Format, FormatError, Read};
use agentlog_model::{Agent, Session};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The specstory format.
pub struct SpecStoryFormat;

/// The registry entry.
pub static FORMAT: SpecStoryFormat = SpecStoryFormat;

impl Format for SpecStoryFormat {
    fn name(&self) -> &'static str {
        "specstory"
    }

    fn description(&self) -> &'static str {
        "SpecStory SessionData 1.0 (JSON); also reads its markdown transcripts"
    }

    fn agent(&self) -> Agent {
        Agent::SpecStory
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let text = crate::jsonl::head_text(head, 4096);
        let t = text.trim_start();
        if t.starts_with(GENERATED_BY) {
            return 90;
        }
        if t.starts_with('{') && t.contains("\"schemaVersion\"") && t.contains("\"exchanges\"") {
            return 85;
        }
        if t.starts_with('{')
            && t.contains("\"schemaVersion\"")
            && t.contains("\"provider\"")
            && t.contains("\"sessionId\"")
        {
            return 70;
        }
        let _ = path;
        0
    }

    fn discover(&self, env: &crate::env::DiscoverEnv) -> Vec<PathBuf> {
        // SpecStory keeps its files inside each project (`.specstory/`), so
        // only roots named for this format are searched.
        let Some(roots) = env.roots_for("specstory") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for root in roots {
            out.extend(crate::env::walk_files(root, 6, &|p: &Path| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let in_history = p
                    .parent()
                    .and_then(|d| d.file_name())
                    .is_some_and(|d| d == "history");
                name == "session-data.json" || (in_history && name.ends_with(".md"))
            }));
        }
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        read::read(path, bytes)
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate_file(path)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }
}
