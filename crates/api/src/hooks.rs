//! Installing agentlog's capture into each agent's own settings, so that
//! a session is kept the moment its agent writes it, not only when
//! agentlog happens to run.
//!
//! Every change merges into the user's settings (never replacing what is
//! there), is shown before it is made ([`Change::diff`]), keeps the file's
//! first original beside it (`<file>.agentlog-backup`), and is undone by
//! [`plan_uninstall`], which removes only agentlog's own entries.
//!
//! - Claude Code: `hooks` in `~/.claude/settings.json` (or
//!   `$CLAUDE_CONFIG_DIR/settings.json`) for `Stop`, `SubagentStop`,
//!   `PreCompact` and `SessionEnd`; each receives the transcript's path.
//! - Gemini CLI: `hooks` in `~/.gemini/settings.json` for `AfterAgent`,
//!   `PreCompress` and `SessionEnd` (on by default; Gemini CLI runs
//!   settings hooks in trusted folders only).
//! - Codex: `notify` in `~/.codex/config.toml` (or `$CODEX_HOME`), the
//!   program Codex runs after each turn with the turn's JSON (its
//!   `thread-id` names the rollout). Codex runs one `notify` program: one
//!   that is not agentlog's is left alone and reported.
//! - A systemd user unit that runs `agentlog index --watch`.

use crate::{ApiError, Settings};
use std::path::{Path, PathBuf};

/// Marks agentlog's own hook commands.
const MARK: &str = "capture --hook";

/// One file the installer would write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The agent (or `systemd`).
    pub agent: &'static str,
    /// The file.
    pub file: PathBuf,
    /// Its contents now (`None`: it does not exist).
    pub before: Option<String>,
    /// Its contents after (`None`: removed; only a unit agentlog wrote).
    pub after: Option<String>,
}

impl Change {
    /// A unified diff of the change, for a dry run.
    pub fn diff(&self) -> String {
        let a = self.before.clone().unwrap_or_default();
        let b = self.after.clone().unwrap_or_default();
        let name = self.file.display().to_string();
        similar::TextDiff::from_lines(&a, &b)
            .unified_diff()
            .context_radius(2)
            .header(&name, &name)
            .to_string()
    }
}

/// What could not be installed for an agent, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The agent.
    pub agent: &'static str,
    /// Why, and what the user can do.
    pub why: String,
}

/// The agents the installer knows.
pub const AGENTS: [&str; 3] = ["claude", "codex", "gemini"];

fn quote_cmd(exe: &str, agent: &str) -> String {
    format!(
        "{} capture --hook {agent}",
        agentlog_formats::shell::quote(exe)
    )
}

/// Claude Code's user settings file.
pub(crate) fn claude_settings(settings: &Settings) -> PathBuf {
    match settings.env.var_path("CLAUDE_CONFIG_DIR") {
        Some(d) => d.join("settings.json"),
        None => settings.env.home.join(".claude/settings.json"),
    }
}

/// Gemini CLI's user settings file.
pub(crate) fn gemini_settings(settings: &Settings) -> PathBuf {
    settings.env.home.join(".gemini/settings.json")
}

fn codex_config(settings: &Settings) -> PathBuf {
    match settings.env.var_path("CODEX_HOME") {
        Some(d) => d.join("config.toml"),
        None => settings.env.home.join(".codex/config.toml"),
    }
}

/// The systemd user unit's path.
pub fn unit_path(settings: &Settings) -> PathBuf {
    settings
        .env
        .xdg_config_home()
        .join("systemd/user/agentlog-watch.service")
}

fn read(path: &Path) -> Result<Option<String>, ApiError> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ApiError::io(path, e)),
    }
}

fn bad_settings(path: &Path, why: impl std::fmt::Display) -> ApiError {
    ApiError::Config {
        path: path.to_path_buf(),
        line: None,
        message: format!("{why}; agentlog leaves it as it is"),
    }
}

/// Events Claude Code's hooks capture on.
const CLAUDE_EVENTS: [&str; 4] = ["Stop", "SubagentStop", "PreCompact", "SessionEnd"];
/// Events Gemini CLI's hooks capture on.
const GEMINI_EVENTS: [&str; 3] = ["AfterAgent", "PreCompress", "SessionEnd"];

/// Adds (or, with `remove`, takes out) agentlog's command under each of
/// `events` in the JSON settings `text` (Claude Code's and Gemini CLI's
/// `hooks` layout: event → list of matcher groups → list of commands).
/// Returns the new text, `None` when nothing changes.
fn merge_json_hooks(
    path: &Path,
    text: Option<&str>,
    events: &[&str],
    hook: &serde_json::Value,
    remove: bool,
) -> Result<Option<String>, ApiError> {
    use serde_json::{json, Value};
    let mut doc: Value = match text.map(str::trim) {
        None | Some("") => json!({}),
        Some(t) => {
            serde_json::from_str(t).map_err(|e| bad_settings(path, format!("not JSON: {e}")))?
        }
    };
    let Some(root) = doc.as_object_mut() else {
        return Err(bad_settings(path, "not a JSON object"));
    };
    let ours = |h: &Value| {
        h.get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| c.contains(MARK))
    };
    let before = root.clone();
    if remove {
        if let Some(hooks) = root.get_mut("hooks").and_then(Value::as_object_mut) {
            for groups in hooks.values_mut() {
                if let Some(list) = groups.as_array_mut() {
                    for g in list.iter_mut() {
                        if let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) {
                            hs.retain(|h| !ours(h));
                        }
                    }
                    list.retain(|g| {
                        g.get("hooks")
                            .and_then(Value::as_array)
                            .is_none_or(|hs| !hs.is_empty())
                    });
                }
            }
            hooks.retain(|_, g| g.as_array().is_none_or(|l| !l.is_empty()));
            if hooks.is_empty() {
                root.remove("hooks");
            }
        }
    } else {
        let hooks = root.entry("hooks").or_insert_with(|| json!({}));
        let Some(hooks) = hooks.as_object_mut() else {
            return Err(bad_settings(path, "its \"hooks\" is not an object"));
        };
        for ev in events {
            let groups = hooks.entry(ev.to_string()).or_insert_with(|| json!([]));
            let Some(list) = groups.as_array_mut() else {
                return Err(bad_settings(path, format!("its hooks.{ev} is not a list")));
            };
            let present = list.iter().any(|g| {
                g.get("hooks")
                    .and_then(Value::as_array)
                    .is_some_and(|hs| hs.iter().any(&ours))
            });
            if !present {
                list.push(json!({ "hooks": [hook] }));
            }
        }
    }
    if *root == before {
        return Ok(None);
    }
    let mut out = serde_json::to_string_pretty(&doc).map_err(|e| bad_settings(path, e))?;
    out.push('\n');
    Ok(Some(out))
}

/// Sets (or takes out) Codex's `notify` program in `text`; `Err(why)` when
/// another program is set there.
fn merge_codex(
    path: &Path,
    text: Option<&str>,
    argv: &[String],
    remove: bool,
) -> Result<Result<Option<String>, String>, ApiError> {
    let mut doc: toml_edit::DocumentMut = text
        .unwrap_or("")
        .parse()
        .map_err(|e| bad_settings(path, format!("not TOML: {e}")))?;
    let current: Option<Vec<String>> = doc.get("notify").map(|n| {
        n.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    });
    let is_ours = |a: &Vec<String>| a.join(" ").contains(MARK);
    match (remove, current) {
        (true, Some(a)) if is_ours(&a) => {
            doc.remove("notify");
        }
        (true, _) => return Ok(Ok(None)),
        (false, Some(a)) if is_ours(&a) => return Ok(Ok(None)),
        (false, Some(a)) => {
            return Ok(Err(format!(
                "Codex runs one notify program and {} sets {:?}; add `agentlog capture --hook codex \"$LAST_ARGUMENT\"` to it by hand",
                path.display(),
                a
            )))
        }
        (false, None) => {
            let mut arr = toml_edit::Array::new();
            for a in argv {
                arr.push(a.as_str());
            }
            doc["notify"] = toml_edit::value(arr);
        }
    }
    Ok(Ok(Some(doc.to_string())))
}

/// The user unit that runs `agentlog index --watch`.
fn unit_text(exe: &str) -> String {
    format!(
        "# Written by `agentlog hooks install --service`; `agentlog hooks uninstall --service` removes it.\n\
         [Unit]\nDescription=agentlog: keep every agent session as it is written (index --watch)\n\n\
         [Service]\nExecStart={} index --watch\nRestart=on-failure\nNice=10\n\n\
         [Install]\nWantedBy=default.target\n",
        agentlog_formats::shell::quote(exe)
    )
}

/// What installing agentlog's capture for `agents` (all when empty) would
/// write, and the agents it leaves alone (with why). `exe` is the
/// agentlog program the hooks run; `service` adds the systemd user unit.
pub fn plan_install(
    settings: &Settings,
    agents: &[String],
    exe: &str,
    service: bool,
) -> Result<(Vec<Change>, Vec<Skipped>), ApiError> {
    plan(settings, agents, exe, service, false)
}

/// What removing agentlog's capture for `agents` (all when empty) would
/// write: only agentlog's own entries go.
pub fn plan_uninstall(
    settings: &Settings,
    agents: &[String],
    service: bool,
) -> Result<(Vec<Change>, Vec<Skipped>), ApiError> {
    plan(settings, agents, "agentlog", service, true)
}

fn plan(
    settings: &Settings,
    agents: &[String],
    exe: &str,
    service: bool,
    remove: bool,
) -> Result<(Vec<Change>, Vec<Skipped>), ApiError> {
    for a in agents {
        if !AGENTS.contains(&a.as_str()) {
            return Err(ApiError::UnknownAgent {
                name: a.clone(),
                known: AGENTS.join(", "),
            });
        }
    }
    let wanted = |a: &str| agents.is_empty() || agents.iter().any(|x| x == a);
    let (mut changes, mut skipped) = (Vec::new(), Vec::new());
    let mut push =
        |agent: &'static str, file: PathBuf, before: Option<String>, after: Option<String>| {
            if after.is_some() {
                changes.push(Change {
                    agent,
                    file,
                    before,
                    after,
                });
            }
        };
    if wanted("claude") {
        let f = claude_settings(settings);
        let before = read(&f)?;
        // Claude Code's timeout is in seconds.
        let hook = serde_json::json!({"type": "command", "command": quote_cmd(exe, "claude"), "timeout": 60});
        let after = merge_json_hooks(&f, before.as_deref(), &CLAUDE_EVENTS, &hook, remove)?;
        push("claude", f, before, after);
    }
    if wanted("gemini") {
        let f = gemini_settings(settings);
        let before = read(&f)?;
        // Gemini CLI's is in milliseconds; its hooks run in trusted folders.
        let hook = serde_json::json!({"name": "agentlog-capture", "type": "command",
            "command": quote_cmd(exe, "gemini"), "timeout": 60_000});
        let after = merge_json_hooks(&f, before.as_deref(), &GEMINI_EVENTS, &hook, remove)?;
        push("gemini", f, before, after);
    }
    if wanted("codex") {
        let f = codex_config(settings);
        let before = read(&f)?;
        let argv = vec![
            exe.to_string(),
            "capture".into(),
            "--hook".into(),
            "codex".into(),
        ];
        match merge_codex(&f, before.as_deref(), &argv, remove)? {
            Ok(after) => push("codex", f, before, after),
            Err(why) => skipped.push(Skipped {
                agent: "codex",
                why,
            }),
        }
    }
    if service {
        let f = unit_path(settings);
        let before = read(&f)?;
        let ours = before
            .as_deref()
            .is_some_and(|t| t.contains("agentlog hooks install --service"));
        match (remove, &before) {
            (true, Some(_)) if ours => changes.push(Change {
                agent: "systemd",
                file: f,
                before,
                after: None,
            }),
            (true, _) => {}
            (false, Some(_)) if !ours => skipped.push(Skipped {
                agent: "systemd",
                why: format!(
                    "{} exists and is not agentlog's; it is left alone",
                    f.display()
                ),
            }),
            (false, _) => {
                let text = unit_text(exe);
                if before.as_deref() != Some(text.as_str()) {
                    changes.push(Change {
                        agent: "systemd",
                        file: f,
                        before,
                        after: Some(text),
                    });
                }
            }
        }
    }
    Ok((changes, skipped))
}

/// Writes `changes`: each file replaced atomically, its first original
/// kept as `<file>.agentlog-backup`; a unit agentlog wrote is removed.
pub fn apply(changes: &[Change]) -> Result<(), ApiError> {
    for c in changes {
        match &c.after {
            None => std::fs::remove_file(&c.file).map_err(|e| ApiError::io(&c.file, e))?,
            Some(text) => {
                if let Some(before) = &c.before {
                    let mut name = c.file.as_os_str().to_owned();
                    name.push(".agentlog-backup");
                    let backup = PathBuf::from(name);
                    if !backup.exists() {
                        agentlog_store::snapshot::write_atomic(&backup, before.as_bytes())?;
                    }
                }
                agentlog_store::snapshot::write_atomic(&c.file, text.as_bytes())?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook() -> serde_json::Value {
        serde_json::json!({"type": "command", "command": "agentlog capture --hook claude"})
    }

    #[test]
    fn claude_hooks_merge_into_what_is_there_and_come_out_again() {
        let p = Path::new("/x/settings.json");
        let user = r#"{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}"#;
        let after = merge_json_hooks(p, Some(user), &CLAUDE_EVENTS, &hook(), false)
            .unwrap()
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&after).unwrap();
        assert_eq!(v["model"], "opus");
        assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(
            v["hooks"]["Stop"][0]["hooks"][0]["command"],
            "notify-send done"
        );
        for ev in CLAUDE_EVENTS {
            assert!(after.contains(ev));
        }
        // Twice is once.
        assert_eq!(
            merge_json_hooks(p, Some(&after), &CLAUDE_EVENTS, &hook(), false).unwrap(),
            None
        );
        let back = merge_json_hooks(p, Some(&after), &CLAUDE_EVENTS, &hook(), true)
            .unwrap()
            .unwrap();
        let a: serde_json::Value = serde_json::from_str(&back).unwrap();
        let b: serde_json::Value = serde_json::from_str(user).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn settings_that_are_not_json_are_left_alone_with_an_error_naming_the_file() {
        let p = Path::new("/x/settings.json");
        let err =
            merge_json_hooks(p, Some("{not json"), &CLAUDE_EVENTS, &hook(), false).unwrap_err();
        assert!(err.to_string().contains("/x/settings.json"), "{err}");
    }

    #[test]
    fn codex_notify_is_set_once_and_another_program_is_never_replaced() {
        let p = Path::new("/x/config.toml");
        let argv: Vec<String> = ["agentlog", "capture", "--hook", "codex"]
            .map(String::from)
            .to_vec();
        let user = "# mine\nmodel = \"o3\"\n\n[mcp_servers.x]\ncommand = \"y\"\n";
        let after = merge_codex(p, Some(user), &argv, false)
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(after.starts_with("# mine\n"), "{after}");
        let v: toml::Value = toml::from_str(&after).unwrap();
        assert_eq!(v["notify"][1].as_str(), Some("capture"));
        assert_eq!(v["mcp_servers"]["x"]["command"].as_str(), Some("y"));
        assert_eq!(
            merge_codex(p, Some(&after), &argv, false).unwrap().unwrap(),
            None
        );
        let back = merge_codex(p, Some(&after), &argv, true)
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(
            toml::from_str::<toml::Value>(&back).unwrap(),
            toml::from_str::<toml::Value>(user).unwrap()
        );
        let other = "notify = [\"my-notifier\"]\n";
        let why = merge_codex(p, Some(other), &argv, false)
            .unwrap()
            .unwrap_err();
        assert!(why.contains("my-notifier"), "{why}");
    }
}
