//! What Continue's session files are made of: the index's name and the
//! usage of a message.

/// The list of sessions beside them (not a session).
pub(super) const INDEX: &str = "sessions.json";

/// The title Continue gives a session it has not named.
pub(super) const UNTITLED: &str = "Untitled Session";

pub(super) use crate::chat::openai_usage as usage_of;
