//! What the tests over the sample files share.

use std::path::{Path, PathBuf};

/// The sample files of every agent (`../shared/fixtures`).
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

/// Appends every file under `dir` to `out`.
pub fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}
