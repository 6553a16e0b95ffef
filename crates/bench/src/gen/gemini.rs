//! Gemini CLI chats (current JSONL event log):
//! `~/.gemini/tmp/<project slug>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`
//! with a `.project_root` marker; a gemini message is appended once without
//! tokens and again, complete, under the same id, as the CLI does.

use super::{iso, Conv};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const MODELS: &[&str] = &["gemini-2.5-pro", "gemini-2.5-flash"];

fn tool(kind: &str) -> &'static str {
    match kind {
        "bash" => "run_shell_command",
        "read" => "read_file",
        "edit" => "replace",
        _ => "search_file_content",
    }
}

/// Writes the session; returns its path.
pub fn write(home: &Path, c: &Conv) -> std::io::Result<PathBuf> {
    let slug = c
        .project
        .rsplit('/')
        .next()
        .unwrap_or("project")
        .to_lowercase();
    let dir = home.join(".gemini/tmp").join(&slug);
    std::fs::create_dir_all(dir.join("chats"))?;
    std::fs::write(dir.join(".project_root"), &c.project)?;
    let start =
        chrono::DateTime::<chrono::Utc>::from_timestamp_millis(c.start_ms).unwrap_or_default();
    let path = dir.join("chats").join(format!(
        "session-{}-{}.jsonl",
        start.format("%Y-%m-%dT%H-%M"),
        &c.id[..8]
    ));
    let model = MODELS[(c.number % 2) as usize];
    let mut lines: Vec<Value> = vec![json!({
        "sessionId": c.id, "projectHash": format!("{:0>64}", format!("{:x}", c.number)),
        "startTime": iso(c.start_ms), "lastUpdated": iso(c.start_ms), "kind": "main"
    })];
    let mut k = 0u64;
    for (ti, t) in c.turns.iter().enumerate() {
        k += 1;
        lines.push(json!({"id": format!("{}-u{ti}", &c.id[..18]), "timestamp": iso(c.at(k)), "type": "user", "content": [{"text": t.user}]}));
        lines.push(json!({"$set": {"lastUpdated": iso(c.at(k))}}));
        k += 1;
        let calls: Vec<Value> = t
            .steps
            .iter()
            .enumerate()
            .map(|(si, s)| {
                let id = format!("{}-{ti}-{si}", tool(s.kind));
                json!({"id": id, "name": tool(s.kind), "args": super::generic_input(s),
                       "result": [{"functionResponse": {"id": id, "name": tool(s.kind), "response": {"output": s.output}}}],
                       "status": "success", "timestamp": iso(c.at(k))})
            })
            .collect();
        let mut u = t.usage;
        for s in &t.steps {
            u.input += s.usage.input;
            u.output += s.usage.output;
            u.cache_read += s.usage.cache_read;
        }
        let id = format!("{}-g{ti}", &c.id[..18]);
        let thoughts: Vec<Value> = t
            .thinking
            .iter()
            .map(|th| json!({"subject": "Planning the change", "description": th, "timestamp": iso(c.at(k))}))
            .collect();
        lines.push(json!({"id": id, "timestamp": iso(c.at(k)), "type": "gemini", "content": "", "thoughts": thoughts, "model": model}));
        lines.push(json!({"id": id, "timestamp": iso(c.at(k)), "type": "gemini", "content": t.answer,
            "thoughts": thoughts, "toolCalls": calls, "model": model,
            "tokens": {"input": u.input + u.cache_read, "output": u.output, "cached": u.cache_read, "thoughts": 0, "tool": 0,
                       "total": u.input + u.cache_read + u.output}}));
        lines.push(json!({"$set": {"lastUpdated": iso(c.at(k))}}));
    }
    super::write_lines(&path, &lines)?;
    Ok(path)
}
