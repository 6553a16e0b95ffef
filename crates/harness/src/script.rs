//! The script that decides what the mock model answers.
//!
//! A script is stateless: every request is answered from the request alone.
//! The server finds the latest user prompt in the request's history, picks the
//! first rule whose `when` occurs in that prompt, and answers with the rule's
//! step number N, where N is how many rounds of tool results follow the
//! prompt (0 for the first answer, 1 after the first tool results, …). Side
//! requests the agents make on their own (titles, routing, summaries without
//! tools) get the `fallback` reply, so they never consume a scripted step.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A whole script: rules tried in order, and the reply for requests that
/// declare no tools (or match no rule).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Script {
    /// Tried in order; the first whose `when` occurs in the latest prompt wins.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// The answer to every request no rule applies to.
    #[serde(default = "default_fallback")]
    pub fallback: Reply,
}

fn default_fallback() -> Reply {
    vec![Part::Text("ok".to_owned())]
}

impl Default for Script {
    fn default() -> Self {
        Script {
            rules: Vec::new(),
            fallback: default_fallback(),
        }
    }
}

impl Script {
    /// A script with one rule.
    pub fn with_rule(rule: Rule) -> Self {
        Script::default().rule(rule)
    }

    /// Adds a rule after the existing ones.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// The reply for a request whose latest prompt is `prompt`, `step` rounds
    /// of tool results after it; `has_tools` tells whether the request
    /// declared tools (requests without tools get the fallback unless the rule
    /// says `any_request`).
    pub fn reply_for(&self, prompt: &str, step: usize, has_tools: bool) -> Reply {
        self.reply_to(prompt, step, has_tools, "")
    }

    /// As [`Script::reply_for`], with `closing`, the text the request ends
    /// with, for the rules that look there ([`Rule::closing`]).
    pub fn reply_to(&self, prompt: &str, step: usize, has_tools: bool, closing: &str) -> Reply {
        for rule in &self.rules {
            if !has_tools && !rule.any_request {
                continue;
            }
            let (text, step) = if rule.closing {
                (closing, 0)
            } else {
                (prompt, step)
            };
            if !text.contains(&rule.when) {
                continue;
            }
            return match rule.steps.get(step) {
                Some(reply) => reply.clone(),
                None => vec![Part::Text(format!(
                    "(the script for {:?} has no step {step})",
                    rule.when
                ))],
            };
        }
        self.fallback.clone()
    }
}

/// One scripted exchange: when the latest prompt contains `when`, answer with
/// `steps[N]` at tool round N.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Rule {
    /// A substring of the latest user prompt ("" matches every prompt).
    #[serde(default)]
    pub when: String,
    /// The replies, one per round of the agent loop.
    pub steps: Vec<Reply>,
    /// Also answer requests that declare no tools (compaction, titles).
    #[serde(default)]
    pub any_request: bool,
    /// Look for `when` in the text the request ends with instead of the
    /// latest prompt, and answer with the first step: an instruction an
    /// agent puts after tool results (Claude Code's `/compact` does) is not
    /// a prompt.
    #[serde(default)]
    pub closing: bool,
}

impl Rule {
    /// A rule for prompts containing `when`.
    pub fn new(when: impl Into<String>) -> Self {
        Rule {
            when: when.into(),
            steps: Vec::new(),
            any_request: false,
            closing: false,
        }
    }

    /// Adds the next step's reply.
    pub fn then(mut self, reply: Reply) -> Self {
        self.steps.push(reply);
        self
    }

    /// Makes the rule answer requests without tools too.
    pub fn any_request(mut self) -> Self {
        self.any_request = true;
        self
    }

    /// Makes the rule look at the text the request ends with.
    pub fn closing(mut self) -> Self {
        self.closing = true;
        self
    }
}

/// One reply of the model: its parts in order.
pub type Reply = Vec<Part>;

/// A part of a reply. In JSON: `{"text": "…"}`, `{"thinking": "…"}`,
/// `{"tool_call": {"name": "…", "arguments": {…}}}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// Visible answer text.
    Text(String),
    /// A thinking (reasoning) block, sent with a signature where the API has one.
    Thinking(String),
    /// A call of one of the tools the request declared.
    ToolCall(ToolCall),
}

/// A scripted tool call.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolCall {
    /// The tool's name as the agent declared it (e.g. `Bash`, `run_shell_command`).
    pub name: String,
    /// The arguments object.
    #[serde(default)]
    pub arguments: Value,
    /// The namespace of a tool the request declared inside a namespace
    /// (OpenAI Responses `namespace` tools, as Codex's `multi_agent_v1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// Shorthand for a text part.
pub fn text(s: impl Into<String>) -> Part {
    Part::Text(s.into())
}

/// Shorthand for a thinking part.
pub fn thinking(s: impl Into<String>) -> Part {
    Part::Thinking(s.into())
}

/// Shorthand for a tool call part.
pub fn tool_call(name: impl Into<String>, arguments: Value) -> Part {
    Part::ToolCall(ToolCall {
        name: name.into(),
        arguments,
        namespace: None,
    })
}

/// Shorthand for a call of a tool declared inside a namespace.
pub fn namespaced_tool_call(
    namespace: impl Into<String>,
    name: impl Into<String>,
    arguments: Value,
) -> Part {
    Part::ToolCall(ToolCall {
        name: name.into(),
        arguments,
        namespace: Some(namespace.into()),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn json_shape_and_selection() {
        let s: Script = serde_json::from_value(json!({
            "rules": [
                {"when": "list", "steps": [
                    [{"thinking": "hm"}, {"tool_call": {"name": "Bash", "arguments": {"command": "ls"}}}],
                    [{"text": "two files"}]
                ]},
                {"when": "", "steps": [[{"text": "hello"}]]}
            ]
        }))
        .unwrap();
        assert_eq!(s.reply_for("please list", 1, true), vec![text("two files")]);
        assert_eq!(s.reply_for("please list", 0, true).len(), 2);
        assert_eq!(s.reply_for("other", 0, true), vec![text("hello")]);
    }

    #[test]
    fn a_closing_rule_looks_at_the_end_of_the_request() {
        let s = Script::with_rule(Rule::new("summarize").closing().then(vec![text("summary")]))
            .rule(
                Rule::new("list")
                    .then(vec![text("calling")])
                    .then(vec![text("two files")]),
            );
        // The latest prompt is "please list"; the request ends with an
        // instruction beside the tool results.
        assert_eq!(
            s.reply_to("please list", 1, true, "now summarize"),
            vec![text("summary")]
        );
        assert_eq!(
            s.reply_to("please list", 1, true, "tool output"),
            vec![text("two files")]
        );
        // A prompt that says it is not enough.
        assert_eq!(
            s.reply_to("list and summarize", 0, true, "tool output"),
            vec![text("calling")]
        );
        assert_eq!(s.reply_for("please list", 0, false), vec![text("ok")]);
        assert!(
            matches!(&s.reply_for("please list", 5, true)[0], Part::Text(t) if t.contains("no step 5"))
        );
    }
}
