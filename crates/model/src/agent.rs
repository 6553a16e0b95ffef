use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The agent (or persistence design) a session comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Agent {
    /// Anthropic's Claude Code.
    Claude,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// Cursor's CLI agent.
    Cursor,
    /// pi (pi-mono) and its fork oh-my-pi.
    Pi,
    /// codelia's run logs.
    Codelia,
    /// jido_code's per-session JSON.
    JidoCode,
    /// SpecStory's provider-neutral SessionData.
    SpecStory,
    /// acpx session records.
    Acpx,
    /// GitHub Copilot CLI.
    Copilot,
    /// OpenCode.
    OpenCode,
    /// Aider.
    Aider,
    /// Factory droid.
    Droid,
    /// agentlog itself (sessions written through `agentlog append`).
    Agentlog,
    /// Any other agent, by name.
    Other(String),
}

impl Agent {
    /// Every named agent, in display order.
    pub const KNOWN: [Agent; 14] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Cursor,
        Agent::Pi,
        Agent::Codelia,
        Agent::JidoCode,
        Agent::SpecStory,
        Agent::Acpx,
        Agent::Copilot,
        Agent::OpenCode,
        Agent::Aider,
        Agent::Droid,
        Agent::Agentlog,
    ];

    /// Returns the short, stable name used in the CLI and the index.
    pub fn as_str(&self) -> &str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Cursor => "cursor",
            Agent::Pi => "pi",
            Agent::Codelia => "codelia",
            Agent::JidoCode => "jido",
            Agent::SpecStory => "specstory",
            Agent::Acpx => "acpx",
            Agent::Copilot => "copilot",
            Agent::OpenCode => "opencode",
            Agent::Aider => "aider",
            Agent::Droid => "droid",
            Agent::Agentlog => "agentlog",
            Agent::Other(s) => s,
        }
    }

    /// Parses a short name; unknown names become [`Agent::Other`].
    pub fn parse(s: &str) -> Agent {
        Agent::KNOWN
            .iter()
            .find(|a| a.as_str() == s)
            .cloned()
            .unwrap_or_else(|| Agent::Other(s.to_string()))
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Agent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Agent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(Agent::parse(&s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for a in Agent::KNOWN.iter() {
            assert_eq!(&Agent::parse(a.as_str()), a);
        }
        assert_eq!(Agent::parse("amp"), Agent::Other("amp".into()));
    }
}
