//! Claude Code transcripts: `~/.claude/projects/<encoded cwd>/<id>.jsonl`.
//! Each API response is written as one line per content block sharing the
//! message id and request id, with the usage repeated, as Claude Code does.

use super::{iso, Conv, Step, Usage};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const MODELS: &[&str] = &[
    "claude-sonnet-4-5-20250929",
    "claude-sonnet-4-20250514",
    "claude-opus-4-1-20250805",
    "claude-haiku-4-5-20251001",
];

fn encode(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

struct W<'a> {
    c: &'a Conv,
    lines: Vec<Value>,
    parent: Option<String>,
    k: u64,
    model: &'static str,
}

impl W<'_> {
    fn base(&mut self, kind: &str) -> (String, Value) {
        self.k += 1;
        let uuid = format!("{}-{:012x}", &self.c.id[..23], self.k);
        let v = json!({
            "parentUuid": self.parent,
            "isSidechain": false,
            "userType": "external",
            "cwd": self.c.project,
            "sessionId": self.c.id,
            "version": "2.0.14",
            "gitBranch": "main",
            "type": kind,
            "uuid": uuid,
            "timestamp": iso(self.c.at(self.k)),
        });
        (uuid, v)
    }

    fn push(&mut self, uuid: String, v: Value) {
        self.lines.push(v);
        self.parent = Some(uuid);
    }

    fn user(&mut self, content: Value, extra: Option<(&str, Value)>) {
        let (uuid, mut v) = self.base("user");
        v["message"] = json!({"role": "user", "content": content});
        if let Some((k, x)) = extra {
            v[k] = x;
        }
        self.push(uuid, v);
    }

    fn response(&mut self, blocks: Vec<Value>, u: Usage, stop: &str) {
        let msg_id = format!("msg_{}{:04x}", &self.c.id[..8], self.k);
        let req_id = format!("req_{}{:04x}", &self.c.id[24..], self.k);
        let n = blocks.len();
        for (i, b) in blocks.into_iter().enumerate() {
            let (uuid, mut v) = self.base("assistant");
            v["message"] = json!({
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [b],
                "stop_reason": if i + 1 == n { Value::from(stop) } else { Value::Null },
                "stop_sequence": null,
                "usage": {
                    "input_tokens": u.input,
                    "cache_creation_input_tokens": u.cache_write,
                    "cache_read_input_tokens": u.cache_read,
                    "output_tokens": u.output,
                    "service_tier": "standard"
                }
            });
            v["requestId"] = json!(req_id);
            self.push(uuid, v);
        }
    }
}

fn tool(s: &Step) -> (&'static str, Value) {
    match s.kind {
        "bash" => (
            "Bash",
            json!({"command": s.arg, "description": "Run the command"}),
        ),
        "read" => ("Read", json!({"file_path": s.arg})),
        "edit" => {
            let (old, new) = s.arg2.split_once('\u{0}').unwrap_or(("", ""));
            (
                "Edit",
                json!({"file_path": s.arg, "old_string": old, "new_string": new}),
            )
        }
        _ => ("Grep", json!({"pattern": s.arg, "output_mode": "content"})),
    }
}

/// Writes the session; returns its path.
pub fn write(home: &Path, c: &Conv) -> std::io::Result<PathBuf> {
    let path = home
        .join(".claude/projects")
        .join(encode(&c.project))
        .join(format!("{}.jsonl", c.id));
    let mut w = W {
        c,
        lines: Vec::new(),
        parent: None,
        k: 0,
        model: MODELS[(c.number % MODELS.len() as u64) as usize],
    };
    for t in &c.turns {
        w.user(json!(t.user), None);
        for (i, s) in t.steps.iter().enumerate() {
            let mut blocks = Vec::new();
            if i == 0 {
                if let Some(th) = &t.thinking {
                    blocks.push(
                        json!({"type": "thinking", "thinking": th, "signature": "EqQBCkYIBRgCKkB"}),
                    );
                }
            }
            if let Some(p) = &s.preface {
                blocks.push(json!({"type": "text", "text": p}));
            }
            let (name, input) = tool(s);
            let call_id = format!("toolu_{}{:05x}", &c.id[..8], w.k);
            blocks.push(json!({"type": "tool_use", "id": call_id, "name": name, "input": input}));
            w.response(blocks, s.usage, "tool_use");
            w.user(
                json!([{"tool_use_id": call_id, "type": "tool_result", "content": s.output}]),
                Some((
                    "toolUseResult",
                    json!({"stdout": s.output, "stderr": "", "interrupted": false}),
                )),
            );
        }
        let mut blocks = Vec::new();
        if t.steps.is_empty() {
            if let Some(th) = &t.thinking {
                blocks.push(
                    json!({"type": "thinking", "thinking": th, "signature": "EqQBCkYIBRgCKkB"}),
                );
            }
        }
        blocks.push(json!({"type": "text", "text": t.answer}));
        w.response(blocks, t.usage, "end_turn");
    }
    super::write_lines(&path, &w.lines)?;
    Ok(path)
}
