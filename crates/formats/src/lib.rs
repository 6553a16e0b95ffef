//! Readers, writers and renderers for agent session formats.
//!
//! Each format is one module with the same files: `mod.rs` (its
//! [`Format`]), `wire` (what the agent's files are made of), `read.rs`,
//! `write.rs` where the format can be written, and `validate.rs` (its own
//! rules on top of [`diag::read_and_check`]), converting to and from the
//! unified [`agentlog_model::Session`]. The
//! [`registry`] lists every format; the CLI's `--from`/`--to` names and
//! auto-detection come from it alone, so a new format is one module and one
//! line there.
//!
//! Readers never panic and never give up on a whole file because of one bad
//! record: a torn last line, an invalid line, an unknown record type or an
//! unknown schema version becomes a [`Diagnostic`] with the file and line,
//! and the rest is still read.
//!
//! ```no_run
//! use std::path::Path;
//! let path = Path::new("session.jsonl");
//! let format = agentlog_formats::registry::detect(path).expect("a known format");
//! let read = format.read_path(path).expect("readable");
//! for d in &read.diagnostics {
//!     eprintln!("{d}");
//! }
//! let markdown = agentlog_formats::render::markdown(&read.session);
//! # let _ = markdown;
//! ```
#![forbid(unsafe_code)]

pub mod archived;
pub(crate) mod chat;
pub mod diag;
pub mod discover;
pub mod drift;
pub mod env;
pub mod error;
pub mod fidelity;
pub mod format;
pub mod ids;
pub mod input;
pub mod jsonl;
pub mod keep;
pub(crate) mod locate;
pub mod member;
pub mod registry;
pub mod render;
pub mod safe_path;
pub mod shell;
pub(crate) mod sqlite;

pub mod acpx;
pub mod aider;
pub mod amp;
pub mod atif;
pub mod claude;
pub mod cline;
pub mod codelia;
pub mod codex;
#[path = "continue/mod.rs"]
pub mod continue_cli;
pub mod copilot;
pub mod crush;
pub mod cursor;
pub mod droid;
pub mod gemini;
pub mod jido;
pub mod json;
pub mod kimi;
pub mod opencode;
pub mod openhands;
pub mod pi;
pub mod qwen;
pub mod specstory;
pub mod vibe;

pub use diag::{Diagnostic, Severity};
pub use error::FormatError;
pub use fidelity::Fidelity;
pub use format::{Format, Read, ResumePlan, Written};
