//! Codex CLI rollouts:
//! `~/.codex/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`,
//! wrapped-era lines (`{timestamp, type, payload}`), text both as
//! `response_item` and `event_msg`, usage in `token_count` events whose input
//! includes cached tokens.

use super::{iso, Conv, Step, Usage};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const MODELS: &[&str] = &["gpt-5-codex", "gpt-5", "gpt-5.1-codex-mini"];

struct W<'a> {
    c: &'a Conv,
    lines: Vec<Value>,
    k: u64,
    total: [u64; 4],
}

impl W<'_> {
    fn line(&mut self, kind: &str, payload: Value) {
        self.k += 1;
        self.lines.push(json!({
            "timestamp": iso(self.c.at(self.k)),
            "type": kind,
            "payload": payload,
        }));
    }

    fn tokens(&mut self, u: Usage) {
        let input = u.input + u.cache_read;
        let reasoning = u.output / 3;
        self.total[0] += input;
        self.total[1] += u.cache_read;
        self.total[2] += u.output;
        self.total[3] += reasoning;
        let t = self.total;
        self.line(
            "event_msg",
            json!({"type": "token_count", "info": {
                "total_token_usage": {"input_tokens": t[0], "cached_input_tokens": t[1], "output_tokens": t[2], "reasoning_output_tokens": t[3], "total_tokens": t[0] + t[2]},
                "last_token_usage": {"input_tokens": input, "cached_input_tokens": u.cache_read, "output_tokens": u.output, "reasoning_output_tokens": reasoning, "total_tokens": input + u.output},
                "model_context_window": 272000
            }}),
        );
    }

    fn call(&mut self, s: &Step, call_id: &str) {
        let command = match s.kind {
            "bash" => s.arg.clone(),
            "read" => format!("sed -n '1,200p' {}", s.arg),
            "edit" => format!("apply_patch {}", s.arg),
            _ => format!("rg -n {}", s.arg),
        };
        let args = json!({"command": ["bash", "-lc", command], "workdir": self.c.project});
        self.line(
            "response_item",
            json!({"type": "function_call", "name": "shell", "arguments": args.to_string(), "call_id": call_id}),
        );
        let out =
            json!({"output": s.output, "metadata": {"exit_code": 0, "duration_seconds": 0.4}});
        self.line(
            "response_item",
            json!({"type": "function_call_output", "call_id": call_id, "output": out.to_string()}),
        );
    }
}

/// Writes the session; returns its path.
pub fn write(home: &Path, c: &Conv) -> std::io::Result<PathBuf> {
    let start =
        chrono::DateTime::<chrono::Utc>::from_timestamp_millis(c.start_ms).unwrap_or_default();
    let path = home
        .join(".codex/sessions")
        .join(start.format("%Y/%m/%d").to_string())
        .join(format!(
            "rollout-{}-{}.jsonl",
            start.format("%Y-%m-%dT%H-%M-%S"),
            c.id
        ));
    let model = MODELS[(c.number % MODELS.len() as u64) as usize];
    let mut w = W {
        c,
        lines: Vec::new(),
        k: 0,
        total: [0; 4],
    };
    w.line(
        "session_meta",
        json!({"id": c.id, "timestamp": iso(c.start_ms), "cwd": c.project, "originator": "codex_cli_rs",
               "cli_version": "0.46.0", "instructions": null, "source": "cli",
               "git": {"commit_hash": format!("{:0>40}", c.number), "branch": "main"}}),
    );
    w.line(
        "response_item",
        json!({"type": "message", "role": "user", "content": [{"type": "input_text",
               "text": format!("<environment_context>\n  <cwd>{}</cwd>\n  <approval_policy>on-request</approval_policy>\n</environment_context>", c.project)}]}),
    );
    for (ti, t) in c.turns.iter().enumerate() {
        w.line(
            "turn_context",
            json!({"cwd": c.project, "approval_policy": "on-request", "sandbox_policy": {"type": "workspace-write"},
                   "model": model, "effort": "medium", "summary": "auto"}),
        );
        w.line(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": t.user}]}),
        );
        w.line(
            "event_msg",
            json!({"type": "user_message", "message": t.user, "kind": "plain"}),
        );
        if let Some(th) = &t.thinking {
            w.line("event_msg", json!({"type": "agent_reasoning", "text": th}));
            w.line(
                "response_item",
                json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": th}], "content": null, "encrypted_content": "gAAAAB"}),
            );
        }
        for (si, s) in t.steps.iter().enumerate() {
            if let Some(p) = &s.preface {
                w.line("event_msg", json!({"type": "agent_message", "message": p}));
                w.line(
                    "response_item",
                    json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": p}]}),
                );
            }
            let call_id = format!("call_{}{:02}{:02}", &c.id[..8], ti, si);
            w.call(s, &call_id);
            w.tokens(s.usage);
        }
        w.line(
            "event_msg",
            json!({"type": "agent_message", "message": t.answer}),
        );
        w.line(
            "response_item",
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t.answer}]}),
        );
        w.tokens(t.usage);
    }
    super::write_lines(&path, &w.lines)?;
    Ok(path)
}
