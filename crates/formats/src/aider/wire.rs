//! What an aider history is made of: its line kinds, the header that starts
//! a run, the token lines aider prints and the input history beside it.

use agentlog_model::Usage;
use std::path::Path;

/// The header that starts each run.
pub(super) const STARTED: &str = "# aider chat started at ";

/// The prompts of `.aider.input.history` beside `path`, with their times.
pub(super) fn input_history(path: &Path) -> Vec<(String, String)> {
    let Some(dir) = path.parent() else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(dir.join(".aider.input.history")) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = Vec::new();
    let mut time = String::new();
    let mut lines: Vec<&str> = Vec::new();
    let flush = |time: &str, lines: &mut Vec<&str>, out: &mut Vec<(String, String)>| {
        if !lines.is_empty() {
            out.push((time.to_string(), lines.join("\n")));
            lines.clear();
        }
    };
    for l in text.lines() {
        if let Some(t) = l.strip_prefix("# ") {
            flush(&time, &mut lines, &mut out);
            time = t.trim().to_string();
        } else if let Some(p) = l.strip_prefix('+') {
            lines.push(p);
        }
    }
    flush(&time, &mut lines, &mut out);
    out
}

#[derive(PartialEq, Clone, Copy)]
pub(super) enum Kind {
    User,
    Assistant,
    Output,
}

/// Parses `Tokens: 1.2k sent, 340 received. Cost: $0.01 message, …`.
pub(super) fn tokens_line(line: &str) -> Option<Usage> {
    let rest = line.trim().strip_prefix("Tokens: ")?;
    let counts = rest.split("Cost:").next().unwrap_or(rest);
    let mut u = Usage::default();
    let mut any = false;
    for part in counts.split(',').map(|p| p.trim().trim_end_matches('.')) {
        let mut words = part.split_whitespace();
        let (Some(n), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        let Some(n) = count(n) else { continue };
        match what {
            "sent" => {
                u.input = n;
                any = true;
            }
            "received" => {
                u.output = n;
                any = true;
            }
            _ => {}
        }
    }
    if let Some(cost) = line.split("Cost: $").nth(1) {
        let num: String = cost
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        u.cost_usd = num.trim_end_matches('.').parse().ok();
    }
    any.then_some(u)
}

/// Reads `123`, `1.2k`, `3M`.
pub(super) fn count(s: &str) -> Option<u64> {
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1_000.0),
        'M' => (&s[..s.len() - 1], 1_000_000.0),
        _ => (s, 1.0),
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * mult).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_token_lines() {
        let u = tokens_line("Tokens: 650 sent, 19 received.").unwrap();
        assert_eq!((u.input, u.output), (650, 19));
        let u =
            tokens_line("Tokens: 2.9k sent, 1.1k received. Cost: $0.01 message, $0.02 session.")
                .unwrap();
        assert_eq!((u.input, u.output, u.cost_usd), (2900, 1100, Some(0.01)));
        assert!(tokens_line("Applied edit to x.py").is_none());
        assert_eq!(count("3M"), Some(3_000_000));
        assert_eq!(count("k"), None);
        assert_eq!(count("-1"), None);
    }
}
