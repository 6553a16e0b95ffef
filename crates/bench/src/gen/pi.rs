//! pi session trees (version 3):
//! `~/.pi/agent/sessions/--<cwd with dashes>--/<time>_<id>.jsonl`.

use super::{iso, Conv};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const MODELS: &[(&str, &str)] = &[
    ("anthropic", "claude-sonnet-4-5"),
    ("openai", "gpt-5.1-codex"),
];

fn tool(kind: &str) -> &'static str {
    match kind {
        "bash" => "bash",
        "read" => "read",
        "edit" => "edit",
        _ => "grep",
    }
}

/// Writes the session; returns its path.
pub fn write(home: &Path, c: &Conv) -> std::io::Result<PathBuf> {
    let dir = format!(
        "--{}--",
        c.project.trim_start_matches('/').replace('/', "-")
    );
    let start =
        chrono::DateTime::<chrono::Utc>::from_timestamp_millis(c.start_ms).unwrap_or_default();
    let path = home.join(".pi/agent/sessions").join(dir).join(format!(
        "{}_{}.jsonl",
        start.format("%Y-%m-%dT%H-%M-%S-%3fZ"),
        c.id
    ));
    let (provider, model) = MODELS[(c.number % 2) as usize];
    let mut lines: Vec<Value> = vec![
        json!({"type": "session", "version": 3, "id": c.id, "timestamp": iso(c.start_ms), "cwd": c.project}),
    ];
    let mut k = 0u64;
    let mut parent: Option<String> = None;
    let push = |lines: &mut Vec<Value>,
                k: &mut u64,
                parent: &mut Option<String>,
                message: Value| {
        *k += 1;
        let id = format!(
            "{:08x}",
            (c.number.wrapping_mul(2_654_435_761) as u32) ^ (*k as u32).wrapping_mul(40503)
        );
        lines.push(json!({"type": "message", "id": id, "parentId": parent, "timestamp": iso(c.at(*k)), "message": message}));
        *parent = Some(id);
    };
    let price = agentlog_index::prices::price(model);
    let usage = |u: super::Usage| {
        let m = |n: u64, per: fn(&agentlog_index::prices::Price) -> f64| {
            price.map_or(0.0, |p| n as f64 * per(p) / 1e6)
        };
        let cost = [
            m(u.input, |p| p.input),
            m(u.output, |p| p.output),
            m(u.cache_read, |p| p.cache_read),
            m(u.cache_write, |p| p.cache_write),
        ];
        json!({"input": u.input, "output": u.output, "cacheRead": u.cache_read, "cacheWrite": u.cache_write,
               "totalTokens": u.input + u.output + u.cache_read + u.cache_write,
               "cost": {"input": cost[0], "output": cost[1], "cacheRead": cost[2], "cacheWrite": cost[3],
                        "total": cost.iter().sum::<f64>()}})
    };
    // Where the previous turn started: a turn asked again (`branch`)
    // starts from there, leaving the previous turn on its own branch.
    let mut turn_parent: Option<String> = None;
    for (ti, t) in c.turns.iter().enumerate() {
        if t.branch {
            parent = turn_parent.clone();
        }
        turn_parent = parent.clone();
        let ts = c.at(k + 1);
        push(
            &mut lines,
            &mut k,
            &mut parent,
            json!({"role": "user", "content": [{"type": "text", "text": t.user}], "timestamp": ts}),
        );
        for (si, s) in t.steps.iter().enumerate() {
            let mut content = Vec::new();
            if si == 0 {
                if let Some(th) = &t.thinking {
                    content.push(json!({"type": "thinking", "thinking": th}));
                }
            }
            if let Some(p) = &s.preface {
                content.push(json!({"type": "text", "text": p}));
            }
            let call = format!("toolu_{}{ti:03}{si:02}", &c.id[..8]);
            content.push(json!({"type": "toolCall", "id": call, "name": tool(s.kind), "arguments": super::generic_input(s)}));
            let ts = c.at(k + 1);
            push(
                &mut lines,
                &mut k,
                &mut parent,
                json!({"role": "assistant", "content": content, "api": "anthropic-messages", "provider": provider,
                "model": model, "usage": usage(s.usage), "stopReason": "toolUse", "timestamp": ts}),
            );
            let ts = c.at(k + 1);
            push(
                &mut lines,
                &mut k,
                &mut parent,
                json!({"role": "toolResult", "toolCallId": call, "toolName": tool(s.kind),
                "content": [{"type": "text", "text": s.output}], "isError": false, "timestamp": ts}),
            );
        }
        let mut content = Vec::new();
        if t.steps.is_empty() {
            if let Some(th) = &t.thinking {
                content.push(json!({"type": "thinking", "thinking": th}));
            }
        }
        content.push(json!({"type": "text", "text": t.answer}));
        let ts = c.at(k + 1);
        push(
            &mut lines,
            &mut k,
            &mut parent,
            json!({"role": "assistant", "content": content, "api": "anthropic-messages", "provider": provider,
            "model": model, "usage": usage(t.usage), "stopReason": "stop", "timestamp": ts}),
        );
    }
    super::write_lines(&path, &lines)?;
    Ok(path)
}
