//! Prices per model family, to estimate what sessions cost.
//!
//! US dollars per million tokens: input (not from cache), output (including
//! reasoning), cache read, cache write. The first family whose pattern the
//! model name contains (lower case) wins, so more specific patterns come
//! first. Models matching no family are counted with cost unknown. Prices
//! are list prices of the providers' APIs as published in 2025; a cost the
//! session file recorded itself is used instead when present.
//!
//! | family | input | output | cache read | cache write |
//! |---|---|---|---|---|
//! | claude opus 4.5 / 4.6 | 5.00 | 25.00 | 0.50 | 6.25 |
//! | claude opus | 15.00 | 75.00 | 1.50 | 18.75 |
//! | claude sonnet | 3.00 | 15.00 | 0.30 | 3.75 |
//! | claude haiku 4.5 | 1.00 | 5.00 | 0.10 | 1.25 |
//! | claude haiku 3.5 | 0.80 | 4.00 | 0.08 | 1.00 |
//! | claude haiku | 0.25 | 1.25 | 0.03 | 0.30 |
//! | gpt-5 mini | 0.25 | 2.00 | 0.025 | 0 |
//! | gpt-5 nano | 0.05 | 0.40 | 0.005 | 0 |
//! | gpt-5 (codex) | 1.25 | 10.00 | 0.125 | 0 |
//! | gpt-4.1 mini | 0.40 | 1.60 | 0.10 | 0 |
//! | gpt-4.1 | 2.00 | 8.00 | 0.50 | 0 |
//! | gpt-4o mini | 0.15 | 0.60 | 0.075 | 0 |
//! | gpt-4o | 2.50 | 10.00 | 1.25 | 0 |
//! | o4-mini / o3-mini | 1.10 | 4.40 | 0.275 | 0 |
//! | o3 | 2.00 | 8.00 | 0.50 | 0 |
//! | gemini 2.5 pro | 1.25 | 10.00 | 0.31 | 0 |
//! | gemini 2.5 flash lite | 0.10 | 0.40 | 0.025 | 0 |
//! | gemini 2.5 flash | 0.30 | 2.50 | 0.075 | 0 |
//! | gemini 3 pro | 2.00 | 12.00 | 0.20 | 0 |
//! | gemini 2.0 flash | 0.10 | 0.40 | 0.025 | 0 |

use serde::Serialize;

/// The price of one model family, in US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Price {
    /// The family's name.
    pub family: &'static str,
    /// Input tokens not read from cache.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from cache.
    pub cache_read: f64,
    /// Input tokens written to cache.
    pub cache_write: f64,
}

const fn p(
    family: &'static str,
    input: f64,
    output: f64,
    cache_read: f64,
    cache_write: f64,
) -> Price {
    Price {
        family,
        input,
        output,
        cache_read,
        cache_write,
    }
}

/// (patterns that must all occur in the lower-case model name, price).
pub const TABLE: &[(&[&str], Price)] = &[
    (&["opus-4-5"], p("claude opus 4.5", 5.0, 25.0, 0.5, 6.25)),
    (&["opus-4.5"], p("claude opus 4.5", 5.0, 25.0, 0.5, 6.25)),
    (&["opus-4-6"], p("claude opus 4.6", 5.0, 25.0, 0.5, 6.25)),
    (&["opus"], p("claude opus", 15.0, 75.0, 1.5, 18.75)),
    (&["sonnet"], p("claude sonnet", 3.0, 15.0, 0.3, 3.75)),
    (&["haiku-4"], p("claude haiku 4.5", 1.0, 5.0, 0.1, 1.25)),
    (
        &["haiku", "3-5"],
        p("claude haiku 3.5", 0.8, 4.0, 0.08, 1.0),
    ),
    (&["haiku"], p("claude haiku", 0.25, 1.25, 0.03, 0.3)),
    (&["gpt-5", "mini"], p("gpt-5 mini", 0.25, 2.0, 0.025, 0.0)),
    (&["gpt-5", "nano"], p("gpt-5 nano", 0.05, 0.4, 0.005, 0.0)),
    (&["gpt-5"], p("gpt-5", 1.25, 10.0, 0.125, 0.0)),
    (&["codex"], p("gpt-5", 1.25, 10.0, 0.125, 0.0)),
    (&["gpt-4.1", "mini"], p("gpt-4.1 mini", 0.4, 1.6, 0.1, 0.0)),
    (&["gpt-4.1"], p("gpt-4.1", 2.0, 8.0, 0.5, 0.0)),
    (&["gpt-4o", "mini"], p("gpt-4o mini", 0.15, 0.6, 0.075, 0.0)),
    (&["gpt-4o"], p("gpt-4o", 2.5, 10.0, 1.25, 0.0)),
    (&["o4-mini"], p("o4-mini", 1.1, 4.4, 0.275, 0.0)),
    (&["o3-mini"], p("o3-mini", 1.1, 4.4, 0.55, 0.0)),
    (&["o3"], p("o3", 2.0, 8.0, 0.5, 0.0)),
    (
        &["gemini-2.5-pro"],
        p("gemini 2.5 pro", 1.25, 10.0, 0.31, 0.0),
    ),
    (
        &["gemini-2.5-flash-lite"],
        p("gemini 2.5 flash lite", 0.1, 0.4, 0.025, 0.0),
    ),
    (
        &["gemini-2.5-flash"],
        p("gemini 2.5 flash", 0.3, 2.5, 0.075, 0.0),
    ),
    (&["gemini-3", "pro"], p("gemini 3 pro", 2.0, 12.0, 0.2, 0.0)),
    (
        &["gemini-2.0-flash"],
        p("gemini 2.0 flash", 0.1, 0.4, 0.025, 0.0),
    ),
];

/// Returns the price of `model`, when its family is known.
pub fn price(model: &str) -> Option<&'static Price> {
    let m = model.to_lowercase();
    TABLE
        .iter()
        .find(|(pats, _)| pats.iter().all(|p| m.contains(p)))
        .map(|(_, p)| p)
}

/// Returns the estimated cost in US dollars of the given token counts.
pub fn cost(p: &Price, input: u64, output: u64, cache_read: u64, cache_write: u64) -> f64 {
    (input as f64 * p.input
        + output as f64 * p.output
        + cache_read as f64 * p.cache_read
        + cache_write as f64 * p.cache_write)
        / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_most_specific_family() {
        let fam = |m: &str| price(m).map(|p| p.family);
        assert_eq!(fam("claude-opus-4-5-20251101"), Some("claude opus 4.5"));
        assert_eq!(fam("claude-3-opus-20240229"), Some("claude opus"));
        assert_eq!(fam("claude-sonnet-4-20250514"), Some("claude sonnet"));
        assert_eq!(fam("claude-3-5-haiku-20241022"), Some("claude haiku 3.5"));
        assert_eq!(fam("gpt-5-codex"), Some("gpt-5"));
        assert_eq!(fam("gpt-5-mini"), Some("gpt-5 mini"));
        assert_eq!(fam("gemini-2.5-flash-lite"), Some("gemini 2.5 flash lite"));
        assert_eq!(fam("llama-3-70b"), None);
        let sonnet = price("claude-sonnet-4").map(|p| cost(p, 1_000_000, 1_000_000, 0, 0));
        assert_eq!(sonnet, Some(18.0));
    }
}
