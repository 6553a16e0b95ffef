//! Tool classification and path hints.

use serde_json::Value;

/// Returns the SessionData tool type of a tool name (compared lower-cased):
/// `write`, `read`, `search`, `shell`, `task`, `generic` for tools known
/// but not in a category, `unknown` otherwise.
///
/// The lists follow the seed's table and the SpecStory CLI's Claude Code
/// mapping (where `NotebookEdit` counts as `task` and `Task`, the subagent
/// tool, as `generic`), with the tool names of Codex, Gemini CLI, Cursor and
/// pi added to the same categories.
pub fn classify_tool(name: &str) -> &'static str {
    let n = name.to_ascii_lowercase();
    match n.as_str() {
        "write"
        | "edit"
        | "multiedit"
        | "createfile"
        | "create_file"
        | "write_file"
        | "writefile"
        | "replace"
        | "str_replace_editor"
        | "str_replace_based_edit_tool"
        | "apply_patch"
        | "applypatch"
        | "search_replace"
        | "edit_file"
        | "delete_file" => "write",
        "read" | "cat" | "viewfile" | "view_file" | "read_file" | "readfile"
        | "read_many_files" | "webfetch" | "web_fetch" | "list_directory" | "list_dir" | "view"
        | "notebookread" => "read",
        "grep"
        | "glob"
        | "find"
        | "websearch"
        | "web_search"
        | "google_web_search"
        | "search_file_content"
        | "codebase_search"
        | "file_search"
        | "grep_search"
        | "ripgrep" => "search",
        "bash" | "execute" | "runcommand" | "run_command" | "run_shell_command" | "shell"
        | "shell_command" | "exec_command" | "local_shell" | "run_terminal_cmd" | "taskoutput"
        | "killshell" | "bashoutput" | "killbash" => "shell",
        "todowrite" | "todoread" | "todo_write" | "todo_read" | "taskmanager" | "task_manager"
        | "notebookedit" | "update_plan" | "write_todos" | "tasklist" => "task",
        "enterplanmode" | "exitplanmode" | "askuserquestion" | "skill" | "lsp" | "task"
        | "slashcommand" | "save_memory" | "view_image" => "generic",
        _ => "unknown",
    }
}

/// Returns the files a tool input refers to: the string values of
/// `file_path`, `path`, `filename`, `old_path`, `new_path`, the string items
/// of `paths`, `files` and `targets`, and for shell tools the targets of
/// `>`/`>>` redirections in `command`. Paths inside `workspace_root` become
/// relative to it; glob patterns are not expanded; duplicates are dropped.
pub fn path_hints(tool_type: &str, input: &Value, workspace_root: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |p: &str| {
        let p = p.trim();
        if p.is_empty() {
            return;
        }
        let rel = relative_to(p, workspace_root);
        if !out.contains(&rel) {
            out.push(rel);
        }
    };
    let Some(obj) = input.as_object() else {
        return Vec::new();
    };
    for key in [
        "file_path",
        "path",
        "filename",
        "old_path",
        "new_path",
        "notebook_path",
    ] {
        if let Some(s) = obj.get(key).and_then(Value::as_str) {
            push(s);
        }
    }
    for key in ["paths", "files", "targets"] {
        if let Some(items) = obj.get(key).and_then(Value::as_array) {
            for s in items.iter().filter_map(Value::as_str) {
                push(s);
            }
        }
    }
    if tool_type == "shell" {
        if let Some(cmd) = obj.get("command").and_then(Value::as_str) {
            for target in redirect_targets(cmd) {
                push(&target);
            }
        }
    }
    out
}

fn relative_to(p: &str, root: &str) -> String {
    let root = root.trim_end_matches('/');
    if !root.is_empty() {
        if let Some(rest) = p.strip_prefix(root) {
            if let Some(rest) = rest.strip_prefix('/') {
                if !rest.is_empty() {
                    return rest.to_string();
                }
            }
        }
    }
    p.to_string()
}

/// Returns the file names after `>` and `>>` in a shell command (not
/// `2>&1`-style descriptor duplications, not `/dev/…`).
fn redirect_targets(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes: Vec<char> = cmd.chars().collect();
    let mut i = 0;
    let mut quote: Option<char> = None;
    while i < bytes.len() {
        let c = bytes[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '>' => {
                let mut j = i + 1;
                if j < bytes.len() && bytes[j] == '>' {
                    j += 1;
                }
                if j < bytes.len() && bytes[j] == '&' {
                    i = j + 1;
                    continue;
                }
                while j < bytes.len() && bytes[j] == ' ' {
                    j += 1;
                }
                let word: String = if j < bytes.len() && (bytes[j] == '\'' || bytes[j] == '"') {
                    let q = bytes[j];
                    let start = j + 1;
                    j = start;
                    while j < bytes.len() && bytes[j] != q {
                        j += 1;
                    }
                    let w = bytes[start..j.min(bytes.len())].iter().collect();
                    j = (j + 1).min(bytes.len());
                    w
                } else {
                    let start = j;
                    while j < bytes.len()
                        && !matches!(bytes[j], ' ' | ';' | '|' | '&' | '>' | '<' | '\n' | ')')
                    {
                        j += 1;
                    }
                    bytes[start..j].iter().collect()
                };
                if !word.is_empty() && !word.starts_with("/dev/") {
                    out.push(word);
                }
                i = j;
                continue;
            }
            None => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_are_classified_by_lower_cased_name() {
        assert_eq!(classify_tool("Write"), "write");
        assert_eq!(classify_tool("MultiEdit"), "write");
        assert_eq!(classify_tool("Read"), "read");
        assert_eq!(classify_tool("WebFetch"), "read");
        assert_eq!(classify_tool("Glob"), "search");
        assert_eq!(classify_tool("WebSearch"), "search");
        assert_eq!(classify_tool("Bash"), "shell");
        assert_eq!(classify_tool("run_shell_command"), "shell");
        assert_eq!(classify_tool("TodoWrite"), "task");
        assert_eq!(classify_tool("NotebookEdit"), "task");
        assert_eq!(classify_tool("Task"), "generic");
        assert_eq!(classify_tool("ExitPlanMode"), "generic");
        assert_eq!(classify_tool("mcp__x__y"), "unknown");
    }

    #[test]
    fn path_hints_come_from_known_keys_and_redirects() {
        let input = json!({
            "file_path": "/home/a/p/src/main.go",
            "paths": ["docs/a.md", "src/main.go"],
            "pattern": "**/*.go"
        });
        assert_eq!(
            path_hints("write", &input, "/home/a/p"),
            ["src/main.go", "docs/a.md"]
        );
        let cmd = json!({"command": "go test ./... > out.txt 2>&1 && echo x >> 'log b.txt'; ls > /dev/null"});
        assert_eq!(path_hints("shell", &cmd, "/w"), ["out.txt", "log b.txt"]);
        assert!(path_hints("read", &json!("x"), "/w").is_empty());
    }
}
