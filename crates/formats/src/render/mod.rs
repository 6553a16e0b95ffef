//! Human-readable renderings of a session: markdown and terminal text.

mod markdown;
pub mod sanitize;
mod text;

pub use markdown::markdown;
pub use text::{text, text_to, TextOptions};

use agentlog_model::{Session, Timestamp};

/// Returns a fence of backticks longer than any run inside `body` (min 3).
pub(crate) fn fence_for(body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Returns `YYYY-MM-DD HH:MM:SS` (UTC) for a timestamp, or its text.
pub(crate) fn short_time(t: &Timestamp) -> String {
    match t.to_utc() {
        Some(dt) => dt.format("%Y-%m-%d %H:%M:%S").to_string(),
        None => t.to_string(),
    }
}

/// Returns the session's title, or its first prompt cut to one line.
pub fn title(session: &Session) -> String {
    if let Some(t) = session
        .meta
        .title
        .as_deref()
        .filter(|t| !t.trim().is_empty())
    {
        return t.trim().to_string();
    }
    match session.first_prompt() {
        Some(p) => one_line(&p, 80),
        None => format!("{} session {}", session.meta.agent, session.meta.id),
    }
}

/// Returns the first line of `s`, sanitized for a terminal and cut to `max`
/// characters with an ellipsis (see [`sanitize::one_line`]).
pub fn one_line(s: &str, max: usize) -> String {
    sanitize::one_line(s, max)
}

/// Returns JSON pretty-printed, or the string itself when the value is one.
pub(crate) fn pretty_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => match serde_json::from_str::<serde_json::Value>(s) {
            Ok(inner @ (serde_json::Value::Object(_) | serde_json::Value::Array(_))) => {
                serde_json::to_string_pretty(&inner).unwrap_or_else(|_| s.clone())
            }
            _ => s.clone(),
        },
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_their_content() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ```` b"), "`````");
    }

    #[test]
    fn one_line_cuts_long_text() {
        assert_eq!(one_line("  hello\nworld", 80), "hello");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }
}
