//! What an aider history must hold, beyond what the reader reports: aider's
//! run header first, token lines aider can have printed, and a conversation.

use super::wire::{tokens_line, STARTED};
use crate::{diag, Diagnostic, FormatError};
use std::path::Path;

/// Returns every problem of the history at `path`.
pub(super) fn validate(path: &Path) -> Result<Vec<Diagnostic>, FormatError> {
    let (session, mut diags) = diag::read_and_check(&super::FORMAT, path)?;
    let text = String::from_utf8_lossy(&crate::input::read_file(path)?).into_owned();
    let first = text.lines().enumerate().find(|(_, l)| !l.trim().is_empty());
    if let Some((i, l)) = first {
        if !l.starts_with(STARTED) {
            diags.push(Diagnostic::warning(
                path,
                Some(i as u64 + 1),
                "no-run-header",
                format!(
                    "the history does not start with aider's run header \"{}<time>\"",
                    STARTED.trim_end()
                ),
            ));
        }
    }
    for (i, l) in text.lines().enumerate() {
        let Some(out) = l.strip_prefix("> ") else {
            continue;
        };
        if out.trim_start().starts_with("Tokens: ") && tokens_line(out).is_none() {
            diags.push(Diagnostic::warning(
                path,
                Some(i as u64 + 1),
                "token-line",
                "a token line without \"<n> sent\" or \"<n> received\" counts; its usage is not read",
            ));
        }
    }
    if session.message_count() == 0 {
        diags.push(Diagnostic::warning(
            path,
            None,
            "empty",
            "the history holds no prompt or answer",
        ));
    }
    Ok(diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_a_missing_header_and_an_unreadable_token_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(super::super::HISTORY_FILE);
        std::fs::write(&p, "#### hi\n\nhello\n\n> Tokens: lots sent\n").unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        assert_eq!(codes, ["no-run-header", "token-line"]);
        std::fs::write(
            &p,
            "# aider chat started at 2025-01-01 10:00:00\n\n#### hi\n\nhello\n\n> Tokens: 1k sent, 2 received.\n",
        )
        .unwrap();
        assert!(validate(&p).unwrap().is_empty());
        std::fs::write(&p, "# aider chat started at 2025-01-01 10:00:00\n").unwrap();
        let codes: Vec<&str> = validate(&p).unwrap().iter().map(|d| d.code).collect();
        assert_eq!(codes, ["empty"]);
    }
}
