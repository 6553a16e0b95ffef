//! The seed designs: codelia run logs
//! (`~/.codelia/sessions/YYYY/MM/DD/<run id>.jsonl`) and jido_code session
//! documents (`~/.jido_code/sessions/<id>.json`).

use super::{iso, Conv};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Writes the conversation as one codelia run; returns its path.
pub fn write_codelia(home: &Path, c: &Conv) -> std::io::Result<PathBuf> {
    let start =
        chrono::DateTime::<chrono::Utc>::from_timestamp_millis(c.start_ms).unwrap_or_default();
    let path = home
        .join(".codelia/sessions")
        .join(start.format("%Y/%m/%d").to_string())
        .join(format!("{}.jsonl", c.id));
    let run = &c.id;
    let mut k = 0u64;
    let mut ts = || {
        k += 1;
        iso(c.at(k))
    };
    let first = c.turns.first().map(|t| t.user.clone()).unwrap_or_default();
    let mut lines: Vec<Value> = vec![
        json!({"type": "header", "schema_version": 1, "run_id": run, "started_at": iso(c.start_ms),
               "client": {"name": "tui", "version": "0.1.0"}, "server": {"name": "runtime", "version": "0.1.0"},
               "model": {"provider": "openai", "name": "gpt-4.1-mini", "reasoning": "medium"},
               "prompts": {"system": "You are a coding assistant."}, "runtime": {"cwd": c.project}}),
        json!({"type": "run.start", "run_id": run, "ts": ts(), "input": {"type": "text", "text": first},
               "ui_context": {"cwd": c.project}}),
    ];
    let mut seq = 0u64;
    let mut ev = 0u64;
    for (ti, t) in c.turns.iter().enumerate() {
        if ti > 0 {
            lines.push(json!({"type": "agent.event", "run_id": run, "ts": ts(), "seq": ev, "event": {"type": "user_message", "content": t.user}}));
            ev += 1;
        }
        for (si, s) in t.steps.iter().enumerate() {
            seq += 1;
            let id = format!("call_{ti}_{si}");
            let args = super::generic_input(s).to_string();
            lines.push(json!({"type": "llm.request", "run_id": run, "ts": ts(), "seq": seq, "model": {"provider": "openai", "name": "gpt-4.1-mini"},
                "input": {"messages": [{"role": "user", "content": t.user}]}}));
            lines.push(json!({"type": "llm.response", "run_id": run, "ts": ts(), "seq": seq,
                "output": {"messages": [{"role": "assistant", "content": s.preface, "tool_calls": [{"id": id, "type": "function", "function": {"name": s.kind, "arguments": args}}]}],
                "usage": {"model": "gpt-4.1-mini", "input_tokens": s.usage.input + s.usage.cache_read, "output_tokens": s.usage.output, "total_tokens": s.usage.input + s.usage.cache_read + s.usage.output},
                "stop_reason": "tool_use"}}));
            lines.push(json!({"type": "tool.output", "run_id": run, "ts": ts(), "tool": s.kind, "tool_call_id": id, "result_raw": s.output}));
        }
        seq += 1;
        lines.push(json!({"type": "llm.request", "run_id": run, "ts": ts(), "seq": seq, "model": {"provider": "openai", "name": "gpt-4.1-mini"},
            "input": {"messages": [{"role": "user", "content": t.user}]}}));
        lines.push(json!({"type": "llm.response", "run_id": run, "ts": ts(), "seq": seq,
            "output": {"messages": [{"role": "assistant", "content": t.answer}],
            "usage": {"model": "gpt-4.1-mini", "input_tokens": t.usage.input + t.usage.cache_read, "output_tokens": t.usage.output, "total_tokens": t.usage.input + t.usage.cache_read + t.usage.output},
            "stop_reason": "end_turn"}}));
    }
    let last = c.turns.last().map(|t| t.answer.clone()).unwrap_or_default();
    lines.push(json!({"type": "run.status", "run_id": run, "ts": ts(), "status": "completed"}));
    lines.push(json!({"type": "run.end", "run_id": run, "ts": ts(), "outcome": "completed", "final": last}));
    super::write_lines(&path, &lines)?;
    Ok(path)
}

/// Writes the conversation as a jido_code session document; returns its
/// path.
pub fn write_jido(home: &Path, c: &Conv) -> std::io::Result<PathBuf> {
    let path = home
        .join(".jido_code/sessions")
        .join(format!("{}.json", c.id));
    let mut k = 0u64;
    let mut conversation = Vec::new();
    for (ti, t) in c.turns.iter().enumerate() {
        k += 1;
        conversation.push(json!({"id": format!("msg-{ti:03}-u"), "role": "user", "content": t.user, "timestamp": iso(c.at(k))}));
        k += 1;
        let mut answer = String::new();
        for s in &t.steps {
            if let Some(p) = &s.preface {
                answer.push_str(p);
                answer.push_str("\n\n");
            }
        }
        answer.push_str(&t.answer);
        conversation.push(json!({"id": format!("msg-{ti:03}-a"), "role": "assistant", "content": answer, "timestamp": iso(c.at(k))}));
    }
    let name = c.project.rsplit('/').next().unwrap_or("project");
    let doc = json!({
        "version": 1, "id": c.id, "name": name, "project_path": c.project,
        "config": {"provider": "anthropic", "model": "claude-3-5-sonnet-20241022", "temperature": 0.7, "max_tokens": 4096},
        "created_at": iso(c.start_ms), "updated_at": iso(c.at(k)), "closed_at": iso(c.at(k + 1)),
        "conversation": conversation,
        "todos": [{"content": "Review the change", "status": "pending", "active_form": "Reviewing the change"}]
    });
    super::write_doc(&path, &doc, c.at(k + 1))?;
    Ok(path)
}
