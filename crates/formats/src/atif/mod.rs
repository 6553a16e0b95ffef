//! ATIF, the Agent Trajectory Interchange Format of Harbor (Terminal-Bench)
//! and the tools that read its trajectories: one JSON document per
//! trajectory (`trajectory.json`).
//!
//! - Harbor's RFC 0001 and its Pydantic models
//!   (`harbor.models.trajectories`, ATIF-v1.8 in Harbor 0.25): a root
//!   with `schema_version`, `session_id`, `agent` (`name`, `version`,
//!   `model_name`), `steps` and `final_metrics`; each step has a
//!   sequential `step_id`, a `source` (`user`, `system`, `agent`), a
//!   `message` (text or content parts), and on the agent's steps
//!   `reasoning_content`, `tool_calls`, `metrics` (`prompt_tokens`
//!   including the cached ones, `completion_tokens`, `cached_tokens`,
//!   `cost_usd`); an `observation` holds the results of the step's calls
//!   (`source_call_id`) and references to subagent trajectories, which
//!   the root may embed (`subagent_trajectories`, each with a
//!   `trajectory_id`).
//! - A Harbor job keeps a trial's trajectory at
//!   `jobs/<job>/<trial>/agent/trajectory.json` (a multi-step trial under
//!   `steps/<step>/agent/`, a simulated user's under `user-agent/`), and a
//!   continuation after summarization beside it as
//!   `trajectory.cont-<n>.json`.
//! - Written for sessions of every agent (see `write.rs`); a trajectory
//!   read and written back is the same JSON value (and, with the
//!   original's text put back where nothing changed, the same bytes).
//!   Sessions are not resumed from ATIF: Harbor does not continue a
//!   trajectory.

mod read;
mod validate;
mod wire;
mod write;

use crate::env::DiscoverEnv;
use crate::{Diagnostic, Fidelity, Format, FormatError, Read};
use agentlog_model::{Agent, Session};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The registry name.
const FORMAT_NAME: &str = "atif";

/// The ATIF format.
pub struct AtifFormat;

/// The registry entry.
pub static FORMAT: AtifFormat = AtifFormat;

/// How deep under a root discovery looks for trajectories: a jobs folder
/// holds `<job>/<trial>/steps/<step>/agent/trajectory.json`.
const DEPTH: usize = 7;

/// True for a file Harbor names as a trajectory: `trajectory.json` and its
/// continuations (`trajectory.cont-1.json`), or any `*.trajectory.json`.
fn is_trajectory_name(p: &Path) -> bool {
    let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    name == "trajectory.json"
        || (name.starts_with("trajectory.cont-") && name.ends_with(".json"))
        || name.ends_with(".trajectory.json")
        || name.ends_with(".atif.json")
}

impl Format for AtifFormat {
    fn name(&self) -> &'static str {
        FORMAT_NAME
    }

    fn description(&self) -> &'static str {
        "ATIF trajectory (Harbor / Terminal-Bench trajectory.json)"
    }

    fn agent(&self) -> Agent {
        Agent::Other("atif".into())
    }

    fn extension(&self) -> &'static str {
        "json"
    }

    fn detect(&self, path: &Path, head: &[u8]) -> u8 {
        let text = crate::jsonl::head_text(head, 8192);
        if !wire::looks_like(&text) {
            return 0;
        }
        if is_trajectory_name(path) {
            95
        } else {
            85
        }
    }

    fn discover(&self, env: &DiscoverEnv) -> Vec<PathBuf> {
        // Harbor keeps jobs in the folder it runs in (`./jobs`): only the
        // roots given are searched.
        let Some(roots) = env.roots_for(FORMAT_NAME) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for root in roots {
            out.extend(crate::env::walk_files(root, DEPTH, &is_trajectory_name));
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
        let mut t = crate::drift::Tally::default();
        crate::drift::unknown_records(read, &mut t);
        let root = read
            .session
            .meta
            .extra
            .keys()
            .filter(|k| !k.starts_with("atif_") && k.as_str() != "agent");
        t.fields("trajectory", root, wire::ROOT_FIELDS, None);
        for e in &read.session.entries {
            t.fields("step", e.extra.keys(), wire::STEP_FIELDS, e.line);
        }
        t.into_items()
    }

    fn can_write(&self) -> bool {
        true
    }

    fn write(&self, session: &Session, out: &mut dyn Write) -> Result<Fidelity, FormatError> {
        write::write(session, &[], out)
    }
}

/// Writes `session` as a trajectory with `subagents` (the sessions its
/// tool calls started, such as Claude Code's subagent transcripts)
/// embedded as subagent trajectories.
pub fn write_with_subagents(
    session: &Session,
    subagents: &[Session],
    out: &mut dyn Write,
) -> Result<Fidelity, FormatError> {
    write::write(session, subagents, out)
}
