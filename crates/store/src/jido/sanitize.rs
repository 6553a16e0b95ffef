//! Cleaning the text a person typed before it is persisted: surrounding
//! white space trimmed, lengths capped (on character boundaries).

use serde_json::Value;

/// Longest session name kept, in characters.
pub const MAX_NAME_CHARS: usize = 256;
/// Longest message content kept, in characters (about 1 MB of text, well
/// inside the 10 MiB file limit).
pub const MAX_CONTENT_CHARS: usize = 1_000_000;
/// Longest todo `content` or `active_form` kept, in characters.
pub const MAX_TODO_CHARS: usize = 2_000;

/// Returns `s` trimmed and cut to `max` characters.
pub fn clean(s: &str, max: usize) -> String {
    s.trim().chars().take(max).collect()
}

fn clean_field(obj: &mut serde_json::Map<String, Value>, key: &str, max: usize) -> bool {
    if let Some(Value::String(s)) = obj.get_mut(key) {
        let c = clean(s, max);
        if c != *s {
            *s = c;
            return true;
        }
    }
    false
}

/// Trims and caps the session name, every message's content and every
/// todo's content and active form in place; returns how many fields
/// changed. Other fields (ids, paths, timestamps) are left alone: they are
/// validated, not rewritten.
pub fn sanitize(doc: &mut Value) -> usize {
    let mut changed = 0;
    let Value::Object(top) = doc else {
        return 0;
    };
    changed += usize::from(clean_field(top, "name", MAX_NAME_CHARS));
    if let Some(Value::Array(msgs)) = top.get_mut("conversation") {
        for m in msgs.iter_mut().filter_map(Value::as_object_mut) {
            changed += usize::from(clean_field(m, "content", MAX_CONTENT_CHARS));
        }
    }
    if let Some(Value::Array(todos)) = top.get_mut("todos") {
        for t in todos.iter_mut().filter_map(Value::as_object_mut) {
            changed += usize::from(clean_field(t, "content", MAX_TODO_CHARS));
            changed += usize::from(clean_field(t, "active_form", MAX_TODO_CHARS));
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn trims_and_caps_user_text() {
        let mut d = json!({"name": "  n  ", "conversation": [{"content": " é\n"}], "todos": [{"content": "x".repeat(3000), "active_form": "ok"}]});
        assert_eq!(sanitize(&mut d), 3);
        assert_eq!(d["name"], "n");
        assert_eq!(d["conversation"][0]["content"], "é");
        assert_eq!(
            d["todos"][0]["content"].as_str().unwrap().len(),
            MAX_TODO_CHARS
        );
        assert_eq!(sanitize(&mut d), 0);
    }
}
