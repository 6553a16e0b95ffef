//! What a session is: a conversation the user had with an agent, or a run
//! without one (a headless run, a subagent's transcript), which listings
//! hide by default.

use serde::{Deserialize, Serialize};

/// What a session is, as its file says.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum SessionKind {
    /// A conversation with the user (and anything the file does not mark
    /// as something else).
    #[default]
    Conversation,
    /// A run without a user at the terminal: `claude -p`, `codex exec`, an
    /// SDK or CI run.
    Headless,
    /// The transcript of a subagent another session started.
    Subagent,
}

impl SessionKind {
    /// Every kind, conversations first.
    pub const ALL: [SessionKind; 3] = [
        SessionKind::Conversation,
        SessionKind::Headless,
        SessionKind::Subagent,
    ];

    /// The kind's name (`conversation`, `headless`, `subagent`).
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Conversation => "conversation",
            SessionKind::Headless => "headless",
            SessionKind::Subagent => "subagent",
        }
    }

    /// The kind named `name` (as [`SessionKind::as_str`] gives it).
    pub fn parse(name: &str) -> Option<SessionKind> {
        SessionKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// True for a conversation with the user.
    pub fn is_conversation(self) -> bool {
        self == SessionKind::Conversation
    }
}

#[cfg(test)]
mod tests {
    use super::SessionKind;

    #[test]
    fn a_kind_is_named_and_parsed_back() {
        for k in SessionKind::ALL {
            assert_eq!(SessionKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(SessionKind::parse("other"), None);
        assert_eq!(SessionKind::default(), SessionKind::Conversation);
    }
}
