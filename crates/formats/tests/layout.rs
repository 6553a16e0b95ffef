//! Every format module has the same files: `mod.rs` (the `Format`
//! implementation: names, detection, discovery, resume plan), `wire.rs` or
//! `wire/` (what the agent's files are made of), `read.rs`, `write.rs`
//! exactly when the format can be written, and `validate.rs`; and `mod.rs`
//! hands reading, writing and validating to them.

use agentlog_formats::registry;
use std::path::{Path, PathBuf};

/// The module folder of a format (Kilo Code is read by the opencode module).
fn module_dir(name: &str) -> PathBuf {
    let module = match name {
        "kilo" => "opencode",
        other => other,
    };
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(module)
}

#[test]
fn every_format_module_has_the_same_files() {
    let mut problems = Vec::new();
    for format in registry::all() {
        let dir = module_dir(format.name());
        let has = |f: &str| dir.join(f).is_file();
        let mut need = vec!["mod.rs", "read.rs", "validate.rs"];
        if format.can_write() {
            need.push("write.rs");
        } else if has("write.rs") {
            problems.push(format!(
                "{}: write.rs, but the format cannot be written",
                format.name()
            ));
        }
        for f in need {
            if !has(f) {
                problems.push(format!("{}: no {f}", format.name()));
            }
        }
        if !has("wire.rs") && !dir.join("wire/mod.rs").is_file() {
            problems.push(format!("{}: no wire.rs or wire/", format.name()));
        }
        let module = std::fs::read_to_string(dir.join("mod.rs")).unwrap_or_default();
        for (call, what) in [("read::", "reading"), ("validate::", "validating")] {
            if !module.contains(call) {
                problems.push(format!(
                    "{}: mod.rs does not hand {what} to its file ({call}…)",
                    format.name()
                ));
            }
        }
        if format.can_write() && !module.contains("write::") {
            problems.push(format!(
                "{}: mod.rs does not hand writing to write.rs",
                format.name()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_module_folder_is_a_registered_format() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules: Vec<String> = registry::all()
        .iter()
        .map(|f| module_dir(f.name()))
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    // Folders of the crate that are not formats.
    let not_formats = ["render"];
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        if !e.path().is_dir() {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(
            modules.contains(&name) || not_formats.contains(&name.as_str()),
            "src/{name}/ is neither a registered format nor listed as a folder of another kind"
        );
    }
}
