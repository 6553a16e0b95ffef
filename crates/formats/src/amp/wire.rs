//! What Amp's thread documents are made of: the fields the reader maps, so
//! that the drift report can name the others.

/// The thread fields the reader maps (the rest are kept in the session's
/// extra fields).
pub(super) const THREAD_FIELDS: &[&str] = &[
    "v",
    "id",
    "created",
    "title",
    "env",
    "messages",
    "meta",
    "agentMode",
    "activatedSkills",
    "creatorUserID",
    "pinned",
    "openExpiresAt",
    "updatedAt",
    "nextMessageId",
    "relationships",
    "originThreadID",
    "mainThreadID",
    "archived",
    "queuedMessages",
    "draft",
    "autoSubmitDraft",
    "pendingNavigation",
    "maxTokens",
    "~debug",
    "usageLedger",
];

/// The message fields Amp writes.
pub(super) const MESSAGE_FIELDS: &[&str] = &[
    "role",
    "messageId",
    "protocolMessageID",
    "protocolMessageVersion",
    "readAt",
    "content",
    "meta",
    "userState",
    "state",
    "usage",
    "fileMentions",
    "discoveredGuidanceFiles",
    "agentMode",
    "source",
    "interrupted",
    "dtwMessageID",
    "parentToolUseId",
    "originalToolUseInput",
];

/// The block types the reader maps.
pub(super) const BLOCK_TYPES: &[&str] = &[
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "server_tool_use",
    "tool_result",
    "image",
    "summary",
    "manual_bash_invocation",
];

/// Tool-run states that mean the tool did not do its work.
pub(super) const FAILED_RUNS: &[&str] = &["error", "rejected-by-user", "cancelled"];
