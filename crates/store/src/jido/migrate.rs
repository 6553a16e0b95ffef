//! The migration chain: each step lifts a session document one schema
//! version up, and restoring runs the steps from the file's version to
//! [`CURRENT_VERSION`].

pub use agentlog_formats::jido::validate::CURRENT_VERSION;
use serde_json::{Map, Value};

/// One step of the chain.
#[derive(Clone, Copy, Debug)]
pub struct Migration {
    /// The version the step reads.
    pub from: u64,
    /// The version it produces (`from + 1`).
    pub to: u64,
    /// What it changes, for people.
    pub description: &'static str,
    /// Rewrites the document in place; an error says what it could not do.
    pub apply: fn(&mut Map<String, Value>) -> Result<(), String>,
}

/// Every step, oldest first. Adding a version is adding a step here and
/// raising [`CURRENT_VERSION`].
pub const MIGRATIONS: &[Migration] = &[Migration {
    from: 0,
    to: 1,
    description: "version 0 (files written before the version field): add version 1 and the defaults for missing fields (config, conversation, todos, name, updated_at, closed_at)",
    apply: v0_to_v1,
}];

/// The configuration jido_code assumes when a file has none.
pub fn default_config() -> Value {
    serde_json::json!({
        "provider": "anthropic",
        "model": "claude-3-5-sonnet-20241022",
        "temperature": 0.7,
        "max_tokens": 4096
    })
}

fn v0_to_v1(doc: &mut Map<String, Value>) -> Result<(), String> {
    doc.insert("version".into(), Value::from(1));
    doc.entry("config").or_insert_with(default_config);
    doc.entry("conversation")
        .or_insert_with(|| Value::Array(Vec::new()));
    doc.entry("todos")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !doc.contains_key("name") {
        let name = doc
            .get("project_path")
            .and_then(Value::as_str)
            .and_then(|p| std::path::Path::new(p).file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or(
                "name is missing and project_path has no last component to name the session after",
            )?;
        doc.insert("name".into(), Value::String(name));
    }
    if !doc.contains_key("updated_at") {
        let created = doc
            .get("created_at")
            .cloned()
            .ok_or("created_at is missing")?;
        doc.insert("updated_at".into(), created);
    }
    if !doc.contains_key("closed_at") {
        let updated = doc.get("updated_at").cloned().unwrap_or(Value::Null);
        doc.insert("closed_at".into(), updated);
    }
    Ok(())
}

/// Returns the document's version: its `version` field, or 0 when it has
/// none (files from before versioning).
pub fn version_of(doc: &Value) -> Result<u64, String> {
    match doc.get("version") {
        None => Ok(0),
        Some(v) => v
            .as_u64()
            .ok_or_else(|| format!("version: must be a non-negative integer, found {v}")),
    }
}

/// Lifts `doc` from its version to [`CURRENT_VERSION`] and returns the
/// steps applied. A version newer than this build knows is refused.
pub fn migrate(doc: &mut Value) -> Result<Vec<&'static Migration>, String> {
    let mut version = version_of(doc)?;
    if version > CURRENT_VERSION {
        return Err(format!(
            "version {version} is newer than this build supports (up to {CURRENT_VERSION}); upgrade agentlog to restore it"
        ));
    }
    let Value::Object(map) = doc else {
        return Err("a session file must be a JSON object".into());
    };
    let mut applied = Vec::new();
    while version < CURRENT_VERSION {
        let step = MIGRATIONS
            .iter()
            .find(|m| m.from == version)
            .ok_or_else(|| format!("no migration from version {version}"))?;
        (step.apply)(map)
            .map_err(|e| format!("migrating version {} to {}: {e}", step.from, step.to))?;
        map.insert("version".into(), Value::from(step.to));
        version = step.to;
        applied.push(step);
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_chain_is_contiguous_and_ends_at_the_current_version() {
        let mut v = 0;
        for m in MIGRATIONS {
            assert_eq!((m.from, m.to), (v, v + 1));
            v = m.to;
        }
        assert_eq!(v, CURRENT_VERSION);
    }

    #[test]
    fn refuses_newer_and_odd_versions() {
        let mut d = json!({"version": 2});
        assert!(migrate(&mut d)
            .unwrap_err()
            .contains("newer than this build supports (up to 1)"));
        let mut d = json!({"version": "1"});
        assert!(migrate(&mut d).unwrap_err().starts_with("version: must be"));
    }
}
