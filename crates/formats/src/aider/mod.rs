//! Aider chat histories (`<project>/.aider.chat.history.md`).
//!
//! Aider appends every run to one markdown file in the project (the root of
//! its git repository). The file is read the way aider itself reads it back
//! (`--restore-chat-history`): a line starting `#### ` is the user's, one
//! starting `> ` is aider's own output (edits applied, warnings, token
//! counts), a line starting `# ` is a header, and every other line is the
//! model's answer.
//!
//! - Each `# aider chat started at <time>` header starts a run: an event
//!   entry with that time (runs continue one conversation, as aider's
//!   `--restore-chat-history` does).
//! - Consecutive `#### ` lines are one user message; consecutive answer lines
//!   one assistant message; consecutive `> ` lines one system message marked
//!   injected (`aider-output`).
//! - `> Tokens: <n> sent, <m> received.` is the usage of the answer before
//!   it (aider's own counts; `k`/`M` suffixes are read), `Cost: $<x>
//!   message` its cost.
//! - The `.aider.input.history` beside the file (`# <time>` then `+<line>`
//!   per prompt) gives each prompt its time, matched in order by text.
//!
//! The session's cwd is the file's directory. Written as aider reads it
//! back (`write.rs`): prompts, answers and aider's output; another agent's
//! thinking is left out and its tool calls and results become aider output
//! lines, which aider shows but does not send to the model. `resume --in
//! aider` writes the history into the session's project (never over one
//! already there) for `aider --restore-chat-history`.
//!
//! The module's files are those of every format module: `wire.rs` (the
//! file's line kinds and aider's token lines), `read.rs` (the markdown into
//! a session) and `validate.rs` (what a history must hold).

mod read;
mod validate;
mod wire;
mod write;

use crate::env::{list_dirs, DiscoverEnv};
use crate::{Diagnostic, Fidelity, Format, FormatError, Read, ResumePlan};
use agentlog_model::{Agent, Session};
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "aider";
/// The file aider writes in each project.
pub const HISTORY_FILE: &str = ".aider.chat.history.md";

/// The aider format.
pub struct AiderFormat;

/// The registry entry.
pub static FORMAT: AiderFormat = AiderFormat;

impl Format for AiderFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "Aider chat history (<project>/.aider.chat.history.md)"
    }

    fn agent(&self) -> Agent {
        Agent::Aider
    }

    fn extension(&self) -> &'static str {
        "md"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let text = String::from_utf8_lossy(head);
        let starts = text
            .trim_start_matches(['\n', '\r'])
            .starts_with(wire::STARTED);
        let named = path.file_name().is_some_and(|n| n == HISTORY_FILE);
        match (named, starts) {
            (true, _) => 95,
            (false, true) => 80,
            _ => 0,
        }
    }

    /// Aider keeps no central store: its history lives in each project.
    /// Discovery looks in the roots configured for `aider`, else in the home
    /// directory and the two levels of non-hidden directories below it
    /// (`~/proj`, `~/src/proj`).
    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        let roots = match env.roots_for(FORMAT_NAME) {
            Some(r) => r.to_vec(),
            None => vec![env.home.clone()],
        };
        let mut out = Vec::new();
        let visible = |d: &PathBuf| {
            d.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.') && n != "node_modules" && n != "target")
        };
        for root in roots {
            if root.is_file() {
                out.push(root);
                continue;
            }
            let mut dirs = vec![root.clone()];
            for d in list_dirs(&root).into_iter().filter(visible) {
                dirs.extend(list_dirs(&d).into_iter().filter(visible));
                dirs.push(d);
            }
            for d in dirs {
                crate::env::note_dir(&d);
                let f = d.join(HISTORY_FILE);
                if f.is_file() {
                    out.push(f);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn read_bytes(&self, path: &Path, bytes: &[u8]) -> Result<Read, FormatError> {
        let inputs = wire::input_history(path);
        Ok(read::read(path, &String::from_utf8_lossy(bytes), &inputs))
    }

    fn validate(&self, path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
        validate::validate(path)
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(
        &self,
        session: &Session,
        out: &mut dyn std::io::Write,
    ) -> Result<Fidelity, FormatError> {
        write::write(session, out)
    }

    /// Aider keeps its history in the project it runs in.
    fn resume_plan(
        &self,
        session: &Session,
        _env: &DiscoverEnv,
    ) -> Result<ResumePlan, FormatError> {
        let cwd = crate::format::resume_cwd(session, FORMAT_NAME)?;
        // The history goes into the project, which must be here (no folder
        // is made outside the agents' own places).
        if !Path::new(&cwd).is_dir() {
            return Err(FormatError::invalid(
                Path::new(&cwd),
                None,
                "the session's project folder is not on this machine; aider keeps its history in the project",
            ));
        }
        Ok(ResumePlan {
            path: Path::new(&cwd).join(HISTORY_FILE),
            command: "aider --restore-chat-history".into(),
            cwd: Some(PathBuf::from(cwd)),
        })
    }
}
