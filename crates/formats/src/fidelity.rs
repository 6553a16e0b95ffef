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
        writeln!(f, "{} cannot hold:", self.target)?;
        for l in &self.losses {
            write!(f, "  - {} ({}x", l.what, l.count)?;
            if let Some(e) = &l.first_entry {
                write!(f, ", first at entry {e}")?;
            }
            writeln!(f, ")")?;
        }
        Ok(())
    }
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
        assert!(f
            .to_string()
            .contains("entry kind label (2x, first at entry a)"));
    }
}
