//! `agentlog-harness`: runs the mock model server as a process.
//!
//! ```text
//! agentlog-harness [--script FILE] [--log FILE]
//! ```
//! Prints `http://127.0.0.1:PORT` on the first line of stdout once it
//! listens, then serves until killed.

use std::io::Write;
use std::process::ExitCode;

use agentlog_harness::{MockServer, Script};

const USAGE: &str = "usage: agentlog-harness [--script FILE.json] [--log REQUESTS.jsonl]

Serves a scripted mock model on 127.0.0.1 (a free port) speaking the Anthropic
Messages, OpenAI Responses, OpenAI Chat Completions and Gemini APIs, and prints
its base URL on the first line of stdout. --log appends every request received
as a JSON line. The script can also be replaced with PUT /_mock/script and the
requests read with GET /_mock/requests.";

fn main() -> ExitCode {
    let mut script = Script::default();
    let mut log = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--script" => {
                let Some(path) = args.next() else {
                    eprintln!("error: --script needs a file\n{USAGE}");
                    return ExitCode::from(2);
                };
                let parsed = std::fs::read_to_string(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|s| serde_json::from_str(&s).map_err(|e| e.to_string()));
                match parsed {
                    Ok(s) => script = s,
                    Err(e) => {
                        eprintln!("error: {path}: {e}");
                        return ExitCode::from(2);
                    }
                }
            }
            "--log" => {
                let Some(path) = args.next() else {
                    eprintln!("error: --log needs a file\n{USAGE}");
                    return ExitCode::from(2);
                };
                match std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                {
                    Ok(f) => log = Some(f),
                    Err(e) => {
                        eprintln!("error: {path}: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("error: unknown argument {other:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let server = match MockServer::start_logging(script, log) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot start the server: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{}", server.url());
    let _ = out.flush();
    loop {
        std::thread::park();
    }
}
