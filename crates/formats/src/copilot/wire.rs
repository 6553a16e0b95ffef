//! What Copilot CLI's event files are made of: the event types and the
//! `data` fields seen in real files, and the readers of their values
//! (usage records, strings kept out of the extra fields).

use agentlog_model::Usage;
use serde_json::{Map, Value};

/// Every event type seen in real Copilot CLI files (1.0.34 to 1.0.102) with
/// the `data` fields seen in it; the drift report names everything else.
pub const KNOWN: &[(&str, &[&str])] = &[
    ("abort", &["reason"]),
    (
        "assistant.message",
        &[
            "apiCallId",
            "chunkCount",
            "chunkIndex",
            "clientRequestId",
            "content",
            "encryptedContent",
            "interactionId",
            "messageId",
            "model",
            "originatingMessageId",
            "outputTokens",
            "parentToolCallId",
            "reasoningOpaque",
            "reasoningText",
            "requestId",
            "rte",
            "serviceRequestId",
            "toolRequests",
            "turnId",
        ],
    ),
    ("assistant.reasoning", &["content", "reasoningId"]),
    ("assistant.turn_end", &["interactionId", "model", "turnId"]),
    (
        "assistant.turn_start",
        &["interactionId", "model", "turnId"],
    ),
    ("hook.start", &["hookInvocationId", "hookType", "input"]),
    (
        "session.auto_mode_resolved",
        &[
            "availableModels",
            "candidateModels",
            "categoryScores",
            "chosenModel",
            "chosenShortfall",
            "confidence",
            "endToEndLatencyMs",
            "fallback",
            "hasImage",
            "predictedLabel",
            "reasoningBucket",
            "routerLatencyMs",
            "routingMethod",
            "stickyOverride",
        ],
    ),
    (
        "session.error",
        &[
            "errorType",
            "message",
            "providerCallId",
            "serviceRequestId",
            "stack",
            "statusCode",
        ],
    ),
    ("session.info", &["infoType", "message"]),
    ("session.mode_changed", &["newMode", "previousMode"]),
    (
        "session.model_change",
        &[
            "contextTier",
            "newModel",
            "previousModel",
            "previousReasoningEffort",
            "reasoningEffort",
        ],
    ),
    (
        "session.resume",
        &[
            "alreadyInUse",
            "context",
            "contextTier",
            "eventCount",
            "eventsFileSizeBytes",
            "remoteSteerable",
            "resumeTime",
            "selectedModel",
            "sessionLimits",
            "sessionWasActive",
        ],
    ),
    (
        "session.shutdown",
        &[
            "accountingSnapshot",
            "agentMetrics",
            "codeChanges",
            "conversationTokens",
            "currentModel",
            "currentTokens",
            "eventsFileSizeBytes",
            "modelMetrics",
            "providerModelMetrics",
            "sessionStartTime",
            "shutdownType",
            "systemTokens",
            "tokenDetails",
            "toolDefinitionsTokens",
            "totalApiDurationMs",
            "totalNanoAiu",
            "totalPremiumRequests",
            "usageAccountingWatermarks",
        ],
    ),
    (
        "session.start",
        &[
            "alreadyInUse",
            "context",
            "contextTier",
            "copilotVersion",
            "producer",
            "remoteSteerable",
            "selectedModel",
            "sessionId",
            "startTime",
            "version",
        ],
    ),
    ("session.task_complete", &["success", "summary"]),
    (
        "session.truncation",
        &[
            "messagesRemovedDuringTruncation",
            "performedBy",
            "postTruncationMessagesLength",
            "postTruncationTokensInMessages",
            "preTruncationMessagesLength",
            "preTruncationTokensInMessages",
            "tokenLimit",
            "tokensRemovedDuringTruncation",
        ],
    ),
    (
        "session.usage_checkpoint",
        &["modelCacheState", "totalNanoAiu", "totalPremiumRequests"],
    ),
    ("session.usage_record", &["usage"]),
    (
        "subagent.completed",
        &[
            "agentDisplayName",
            "agentName",
            "durationMs",
            "model",
            "toolCallId",
            "totalTokens",
            "totalToolCalls",
        ],
    ),
    (
        "subagent.started",
        &[
            "agentDescription",
            "agentDisplayName",
            "agentName",
            "toolCallId",
        ],
    ),
    (
        "system.message",
        &["content", "interactionId", "metadata", "role"],
    ),
    ("system.notification", &["content", "kind"]),
    (
        "tool.execution_complete",
        &[
            "interactionId",
            "model",
            "parentToolCallId",
            "result",
            "rte",
            "shellExecution",
            "success",
            "toolCallId",
            "toolTelemetry",
            "turnId",
        ],
    ),
    (
        "tool.execution_start",
        &[
            "arguments",
            "mcpServerName",
            "mcpToolName",
            "model",
            "parentToolCallId",
            "rte",
            "shellToolInfo",
            "toolCallId",
            "toolName",
            "toolTitle",
            "turnId",
        ],
    ),
    (
        "user.message",
        &[
            "agentMode",
            "attachments",
            "content",
            "delivery",
            "interactionId",
            "messageId",
            "parentAgentTaskId",
            "supportedNativeDocumentMimeTypes",
            "transformedContent",
            "turnId",
        ],
    ),
];

pub(super) fn take_string(obj: &mut Map<String, Value>, key: &str) -> Option<String> {
    match obj.get(key) {
        Some(Value::String(_)) => match obj.remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

fn num(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// Reads a `session.usage_record` `usage` object.
pub(super) fn usage_of(u: &Value) -> Usage {
    let input = num(u.get("inputTokens"));
    let cache_read = num(u.get("cacheReadTokens"));
    Usage {
        input: input.saturating_sub(cache_read),
        output: num(u.get("outputTokens")),
        cache_read,
        cache_write: num(u.get("cacheWriteTokens")),
        reasoning: num(u.get("reasoningTokens")),
        ..Usage::default()
    }
}
