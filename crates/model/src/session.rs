use crate::{is_empty_map, Agent, Entry, Extra, Timestamp, Tree};
use serde::{Deserialize, Serialize};

/// The model configuration a session runs with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    /// The provider (`anthropic`, `openai`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The thinking / reasoning level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Maximum response tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Native configuration fields not covered above.
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

impl ModelConfig {
    /// True when nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == ModelConfig::default()
    }
}

/// A todo item an agent tracks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Todo {
    /// The task, imperative.
    pub content: String,
    /// `pending`, `in_progress`, `completed` (unknown values kept).
    pub status: String,
    /// The present-continuous form for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// Native fields not covered above (ids, priorities, …).
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

/// What a session is, apart from its entries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// The session id.
    pub id: String,
    /// The agent that produced it.
    pub agent: Agent,
    /// The agent's version, when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// The registry name of the format it was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The format's own schema version, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_version: Option<serde_json::Value>,
    /// The working directory / workspace root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// A title or display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When the session started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Timestamp>,
    /// When the session last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<Timestamp>,
    /// When the session was closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<Timestamp>,
    /// Model configuration.
    #[serde(default, skip_serializing_if = "ModelConfig::is_empty")]
    pub model: ModelConfig,
    /// The session this one was forked or branched from (id or path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
    /// The agent's todo list.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub todos: Vec<Todo>,
    /// Native session-level fields not covered above.
    #[serde(default, skip_serializing_if = "is_empty_map")]
    pub extra: Extra,
}

impl SessionMeta {
    /// Returns metadata with only an id and an agent.
    pub fn new(id: impl Into<String>, agent: Agent) -> SessionMeta {
        SessionMeta {
            id: id.into(),
            agent,
            agent_version: None,
            format: None,
            format_version: None,
            cwd: None,
            title: None,
            created_at: None,
            updated_at: None,
            closed_at: None,
            model: ModelConfig::default(),
            parent_session: None,
            todos: Vec::new(),
            extra: Extra::new(),
        }
    }
}

/// A session: metadata and a tree of entries with a current leaf.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// Metadata.
    pub meta: SessionMeta,
    /// Every entry, in the order the source recorded them.
    pub entries: Vec<Entry>,
    /// The current position in the tree; `None` before the first entry.
    #[serde(default)]
    pub leaf_id: Option<String>,
}

impl Session {
    /// Returns an empty session.
    pub fn new(meta: SessionMeta) -> Session {
        Session {
            meta,
            entries: Vec::new(),
            leaf_id: None,
        }
    }

    /// Appends an entry and makes it the leaf.
    pub fn push(&mut self, entry: Entry) {
        self.leaf_id = Some(entry.id.clone());
        self.entries.push(entry);
    }

    /// Returns the last assistant message in file order: where readers of
    /// agents that keep token counts per session only (Droid, Crush, Vibe)
    /// put them.
    pub fn last_answer_mut(&mut self) -> Option<&mut crate::Message> {
        self.entries
            .iter_mut()
            .rev()
            .find_map(|e| match &mut e.kind {
                crate::EntryKind::Message(m) if m.role == crate::Role::Assistant => Some(m),
                _ => None,
            })
    }

    /// Returns an index over the entries for tree walks.
    pub fn tree(&self) -> Tree<'_> {
        Tree::new(&self.entries)
    }

    /// Returns the entries from the root to the leaf (all entries, in order,
    /// when there is no leaf or it is unknown).
    pub fn active_branch(&self) -> Vec<&Entry> {
        match &self.leaf_id {
            Some(leaf) => {
                let tree = self.tree();
                if tree.get(leaf).is_some() {
                    tree.path_to_root(leaf)
                } else {
                    self.entries.iter().collect()
                }
            }
            None => self.entries.iter().collect(),
        }
    }

    /// Moves the leaf to `id`; an error names an id that is not in the session.
    pub fn set_leaf(&mut self, id: Option<&str>) -> Result<(), String> {
        match id {
            None => {
                self.leaf_id = None;
                Ok(())
            }
            Some(id) if self.entries.iter().any(|e| e.id == id) => {
                self.leaf_id = Some(id.to_string());
                Ok(())
            }
            Some(id) => Err(format!(
                "no entry with id {id:?} in session {}",
                self.meta.id
            )),
        }
    }
}
