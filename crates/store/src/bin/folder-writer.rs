//! A writer process for the store's crash tests of folder writes: writes
//! whole folders of files with `snapshot::write_folder`, printing
//! `begin <name>` on stdout before each and `ack <name>` after each that
//! returned `Ok`, until it is killed. (The test kills it relative to those
//! lines, so the kills land mid-folder whatever the machine's speed.)
//!
//! `folder-writer DIR RUN`: the folders are `DIR/r<RUN>-<i>`, each of
//! [`FILES`] files `f<k>.json` holding `{"name", "k", "pad"}`.

use agentlog_store::snapshot::{write_folder, Existing};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The files of each folder.
const FILES: usize = 40;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(run)) = (args.next(), args.next()) else {
        eprintln!("usage: folder-writer DIR RUN");
        return ExitCode::FAILURE;
    };
    let dir = PathBuf::from(dir);
    let pad = "x".repeat(4000);
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        let name = format!("r{run}-{i}");
        let files: Vec<(PathBuf, Vec<u8>)> = (0..FILES)
            .map(|k| {
                let body = serde_json::json!({"name": name, "k": k, "pad": pad});
                (
                    PathBuf::from(format!("f{k}.json")),
                    body.to_string().into_bytes(),
                )
            })
            .collect();
        if writeln!(out, "begin {name}")
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
        if let Err(e) = write_folder(&dir.join(&name), &files, Existing::Refuse) {
            eprintln!("folder-writer: {e}");
            return ExitCode::FAILURE;
        }
        if writeln!(out, "ack {name}")
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
