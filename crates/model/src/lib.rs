//! The unified session model of agentlog.
//!
//! Every reader in `agentlog-formats` produces a [`Session`], every writer
//! consumes one, and the store and index crates build on it. A session is
//! metadata ([`SessionMeta`]) plus an arena of [`Entry`]s that form a tree
//! through `id`/`parent_id`, with a current leaf. A linear log is simply a tree
//! with one branch.
//!
//! Nothing native is thrown away: each entry, message and block keeps the
//! fields its format has and the model does not (`extra`), and record types the
//! model does not know become [`EntryKind::Unknown`] with the record verbatim.
//!
//! This crate is types only: no I/O, no async.
//!
//! ```
//! use agentlog_model::{Entry, EntryKind, Message, Role, Session, SessionMeta, Agent};
//!
//! let mut session = Session::new(SessionMeta::new("s1", Agent::Pi));
//! let first = Entry::new("a1", None, EntryKind::Message(Message::text(Role::User, "hi")));
//! let second = Entry::new("a2", Some("a1".into()), EntryKind::Message(Message::text(Role::Assistant, "hello")));
//! session.push(first);
//! session.push(second);
//! let tree = session.tree();
//! let path: Vec<&str> = tree.path_to_root("a2").iter().map(|e| e.id.as_str()).collect();
//! assert_eq!(path, ["a1", "a2"]);
//! assert_eq!(session.leaf_id.as_deref(), Some("a2"));
//! ```
#![forbid(unsafe_code)]

mod agent;
mod content;
mod count;
mod entry;
mod kind;
mod session;
mod time;
mod tree;

pub use agent::Agent;
pub use content::{Block, BlockKind, Message, Role, Usage};
pub use count::{message_counted, only_tool_results, Counted, DERIVED_FROM};
pub use entry::{Entry, EntryKind, RunOutcome, TOOL_USE_RESULT};
pub use kind::SessionKind;
pub use session::{ModelConfig, Session, SessionMeta, Todo};
pub use time::Timestamp;
pub use tree::{Tree, TreeNode};

/// A JSON object: unknown fields kept verbatim, in their original order.
pub type Extra = serde_json::Map<String, serde_json::Value>;

/// Returns true when `m` is empty; used by `skip_serializing_if`.
pub(crate) fn is_empty_map(m: &Extra) -> bool {
    m.is_empty()
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}
