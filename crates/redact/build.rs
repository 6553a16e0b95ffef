//! Turns the built-in rules (`src/rules.toml`) into JSON for the library to
//! load: parsing the TOML took a short command half a millisecond, JSON a
//! few microseconds. The TOML stays the file people read and edit; a broken
//! one fails the build, naming the problem.

use std::path::PathBuf;

fn main() -> Result<(), String> {
    println!("cargo::rerun-if-changed=src/rules.toml");
    let text = std::fs::read_to_string("src/rules.toml")
        .map_err(|e| format!("reading src/rules.toml: {e}"))?;
    let value: toml::Value = toml::from_str(&text).map_err(|e| format!("src/rules.toml: {e}"))?;
    let json = serde_json::to_string(&value).map_err(|e| format!("rules as JSON: {e}"))?;
    let out = std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?;
    let out = PathBuf::from(out).join("rules.json");
    std::fs::write(&out, json).map_err(|e| format!("writing {}: {e}", out.display()))
}
