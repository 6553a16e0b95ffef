//! Fidelity reports: what a conversion could not carry.

use serde::Serialize;
use std::fmt;

/// What a conversion could not carry into its target format.
///
/// Writers record every kind of information they drop; nothing is dropped
/// silently. An empty report means the target holds everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Fidelity {
    /// The target format.
    pub target: String,
    /// Each kind of loss, in the order first seen.
    pub losses: Vec<Loss>,
}

/// One kind of information a target cannot hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// What was lost, e.g. `entry kind label` or `thinking signatures`.
    pub what: String,
    /// How many times.
    pub count: usize,
    /// The first entry it happened at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_entry: Option<String>,
}

impl Fidelity {
    /// Returns an empty report for `target`.
    pub fn new(target: impl Into<String>) -> Fidelity {
        Fidelity {
            target: target.into(),
            losses: Vec::new(),
        }
    }

    /// Records one loss of `what` at `entry`.
    pub fn lost(&mut self, what: impl Into<String>, entry: Option<&str>) {
        let what = what.into();
        if let Some(l) = self.losses.iter_mut().find(|l| l.what == what) {
            l.count += 1;
        } else {
            self.losses.push(Loss {
                what,
                count: 1,
                first_entry: entry.map(str::to_string),
            });
        }
    }

    /// True when nothing was lost.
    pub fn is_lossless(&self) -> bool {
        self.losses.is_empty()
    }
}

impl fmt::Display for Fidelity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.losses.is_empty() {
            return write!(f, "{}: everything carried over", self.target);
        }
        writeln!(
            f,
            "{} cannot hold, so the converted session lacks:",
            self.target
        )?;
        for l in &self.losses {
            let times = match l.count {
                1 => "once".to_string(),
                n => format!("{n} times"),
            };
            write!(f, "  - {} ({times}", plain(&l.what))?;
            if let Some(e) = &l.first_entry {
                write!(f, ", first at entry {e}")?;
            }
            writeln!(f, ")")?;
        }
        Ok(())
    }
}

/// Says a loss (`what` as writers record it, which `--json` keeps) in the
/// words of someone who uses agents rather than of agentlog's model.
pub fn plain(what: &str) -> String {
    if let Some(rest) = what.strip_prefix("entry kind ") {
        let (kind, note) = match rest.split_once(' ') {
            Some((k, n)) => (k, format!(" {n}")),
            None => (rest, String::new()),
        };
        let words = match kind {
            "model_change" => "records of switching models mid-session",
            "thinking_level_change" => "records of changing the thinking level",
            "compaction" => "compaction summaries (where older turns were summarized)",
            "branch_summary" => "summaries of abandoned branches",
            "label" => "labels set on entries",
            "custom" => "extension records",
            "custom_message" => "messages injected by extensions",
            "session_info" => "session title and info records",
            "ttsr_injection" => "injected rule reminders",
            "session_init" => "the session's opening record",
            "run_start" | "run_status" | "run_end" | "run_context" | "run_error" => {
                "the run log's own records (run start, status, context, errors, end)"
            }
            "llm_request" => "the exact requests sent to the model",
            "llm_response" => {
                "the raw model responses (their text and tool calls are carried as messages)"
            }
            "tool_output" => "raw tool output records (the results are carried with the calls)",
            "event" => "agent bookkeeping records that are not conversation (queue operations, file snapshots, metadata updates)",
            "resume" => "markers of where the session was resumed",
            "unknown" => "records agentlog does not know, kept verbatim in the source",
            _ => return what.to_string(),
        };
        return format!("{words}{note}");
    }
    let words = match what {
        "native message fields of the source format" | "message fields of the source format" => {
            "details the source agent stores on each message that the target has no place for (ids, status, display hints)"
        }
        "entry fields of the source format" => {
            "details the source agent stores on each record (ids, request ids, versions, flags)"
        }
        "session metadata fields of the source format" | "native session fields of the source format" => {
            "session details the source agent keeps (settings, versions, paths) beyond id, title, directory and model"
        }
        "content block fields of the source format" => {
            "details of individual content parts (cache markers, citations, display hints)"
        }
        "native message ids" => "the source agent's own message ids (new ones are made)",
        _ => what,
    };
    words.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_losses_by_kind() {
        let mut f = Fidelity::new("jido");
        f.lost("entry kind label", Some("a"));
        f.lost("entry kind label", Some("b"));
        f.lost("thinking", None);
        assert_eq!(f.losses.len(), 2);
        assert_eq!(f.losses[0].count, 2);
        assert_eq!(f.losses[0].first_entry.as_deref(), Some("a"));
        let text = f.to_string();
        assert!(
            text.contains("labels set on entries (2 times, first at entry a)"),
            "{text}"
        );
        assert!(text.contains("thinking (once)"), "{text}");
        assert!(!text.contains("entry kind"), "{text}");
    }
}
