//! Token counts from `token_count` events, each counted once.
//!
//! Codex reports `input_tokens` including the cached part; the model's
//! [`Usage::input`] is the uncached part (`input_tokens - cached_input_tokens`)
//! and [`Usage::cache_read`] the cached part. `output_tokens` already includes
//! `reasoning_output_tokens`, which go to [`Usage::reasoning`] as well.
//!
//! A `token_count` event's delta is its `last_token_usage`, or, when only the
//! cumulative `total_token_usage` is present, the difference to the previous
//! total. An event repeating the previous total (Codex emits some twice) adds
//! nothing. The delta goes to the next assistant message (older rollouts
//! write the event before the items of the response it counts); what is left
//! at the end of the file goes to the last assistant message. Replayed
//! parent history of a fork moves the running total but is not counted.

use agentlog_model::Usage;
use serde_json::Value;

/// The raw counters of one usage object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Raw {
    input: u64,
    cached: u64,
    cache_write: u64,
    output: u64,
    reasoning: u64,
    total: Option<u64>,
}

impl Raw {
    fn parse(v: &Value) -> Option<Raw> {
        let o = v.as_object()?;
        let n = |k: &str| o.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some(Raw {
            input: n("input_tokens"),
            cached: n("cached_input_tokens"),
            cache_write: n("cache_write_input_tokens"),
            output: n("output_tokens"),
            reasoning: n("reasoning_output_tokens"),
            total: o.get("total_tokens").and_then(Value::as_u64),
        })
    }

    /// Returns `self - earlier`, or `self` when a counter went down (the
    /// totals restarted).
    fn since(self, earlier: Raw) -> Raw {
        let le = |a: u64, b: u64| a <= b;
        if le(earlier.input, self.input)
            && le(earlier.cached, self.cached)
            && le(earlier.cache_write, self.cache_write)
            && le(earlier.output, self.output)
            && le(earlier.reasoning, self.reasoning)
        {
            Raw {
                input: self.input - earlier.input,
                cached: self.cached - earlier.cached,
                cache_write: self.cache_write - earlier.cache_write,
                output: self.output - earlier.output,
                reasoning: self.reasoning - earlier.reasoning,
                total: match (self.total, earlier.total) {
                    (Some(a), Some(b)) if a >= b => Some(a - b),
                    _ => None,
                },
            }
        } else {
            self
        }
    }

    fn usage(self) -> Usage {
        Usage {
            input: self.input.saturating_sub(self.cached),
            output: self.output,
            cache_read: self.cached,
            cache_write: self.cache_write,
            reasoning: self.reasoning,
            total: self.total,
            ..Usage::default()
        }
    }
}

/// Returns the Codex usage object for `u` (the inverse of the reading rule).
pub(super) fn usage_value(u: &Usage) -> Value {
    let input = u.input + u.cache_read;
    let mut o = serde_json::Map::new();
    o.insert("input_tokens".into(), input.into());
    o.insert("cached_input_tokens".into(), u.cache_read.into());
    if u.cache_write > 0 {
        o.insert("cache_write_input_tokens".into(), u.cache_write.into());
    }
    o.insert("output_tokens".into(), u.output.into());
    o.insert("reasoning_output_tokens".into(), u.reasoning.into());
    let total = u.total.unwrap_or(input + u.output);
    o.insert("total_tokens".into(), total.into());
    Value::Object(o)
}

/// Follows the token counts of one rollout.
#[derive(Default)]
pub(super) struct UsageTracker {
    prev_total: Option<Raw>,
    prev_last: Option<Raw>,
    pending: Option<Usage>,
    last_assistant: Option<String>,
    assigned: Vec<(String, Usage)>,
    leftover: Option<Usage>,
}

impl UsageTracker {
    /// Takes in one `token_count` payload.
    pub(super) fn token_count(&mut self, payload: &Value, replayed: bool) {
        let Some(info) = payload.get("info").filter(|i| i.is_object()) else {
            return;
        };
        let total = info.get("total_token_usage").and_then(Raw::parse);
        let last = info.get("last_token_usage").and_then(Raw::parse);
        let delta = match (total, last) {
            (Some(t), _) if Some(t) == self.prev_total => None,
            (None, Some(l)) if Some(l) == self.prev_last => None,
            (_, Some(l)) => Some(l),
            (Some(t), None) => Some(match self.prev_total {
                Some(p) => t.since(p),
                None => t,
            }),
            (None, None) => None,
        };
        if total.is_some() {
            self.prev_total = total;
        }
        if last.is_some() {
            self.prev_last = last;
        }
        if let (Some(d), false) = (delta, replayed) {
            let u = d.usage();
            match &mut self.pending {
                Some(p) => p.add(&u),
                None => self.pending = Some(u),
            }
        }
    }

    /// Notes an assistant message entry; pending counts go to it.
    pub(super) fn assistant_entry(&mut self, id: &str) {
        self.last_assistant = Some(id.to_string());
        if let Some(u) = self.pending.take() {
            self.assigned.push((id.to_string(), u));
        }
    }

    /// Returns which entry gets which usage.
    pub(super) fn finish(&mut self) -> Vec<(String, Usage)> {
        if let Some(u) = self.pending.take() {
            match &self.last_assistant {
                Some(id) => self.assigned.push((id.clone(), u)),
                None => self.leftover = Some(u),
            }
        }
        std::mem::take(&mut self.assigned)
    }

    /// Returns counts no assistant message could carry.
    pub(super) fn unattributed(&self) -> Option<&Usage> {
        self.leftover.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tc(total: Option<Value>, last: Option<Value>) -> Value {
        let mut info = serde_json::Map::new();
        if let Some(t) = total {
            info.insert("total_token_usage".into(), t);
        }
        if let Some(l) = last {
            info.insert("last_token_usage".into(), l);
        }
        json!({"type": "token_count", "info": info})
    }

    #[test]
    fn differences_totals_and_skips_repeats() {
        let mut t = UsageTracker::default();
        t.token_count(
            &tc(
                Some(json!({"input_tokens": 100, "cached_input_tokens": 40})),
                None,
            ),
            false,
        );
        t.token_count(
            &tc(
                Some(json!({"input_tokens": 100, "cached_input_tokens": 40})),
                None,
            ),
            false,
        );
        t.token_count(
            &tc(
                Some(json!({"input_tokens": 250, "cached_input_tokens": 90, "output_tokens": 7})),
                None,
            ),
            false,
        );
        t.assistant_entry("a");
        let got = t.finish();
        assert_eq!(got.len(), 1);
        let u = &got[0].1;
        assert_eq!((u.input, u.cache_read, u.output), (250 - 90, 90, 7));
    }

    #[test]
    fn replayed_counts_move_the_total_only() {
        let mut t = UsageTracker::default();
        t.token_count(&tc(Some(json!({"input_tokens": 1000})), None), true);
        t.token_count(&tc(Some(json!({"input_tokens": 1200})), None), false);
        t.assistant_entry("a");
        assert_eq!(t.finish()[0].1.input, 200);
        assert!(t.unattributed().is_none());
    }

    #[test]
    fn counts_without_a_message_are_reported() {
        let mut t = UsageTracker::default();
        t.token_count(&tc(None, Some(json!({"input_tokens": 5}))), false);
        assert!(t.finish().is_empty());
        assert_eq!(t.unattributed().map(|u| u.input), Some(5));
    }
}
