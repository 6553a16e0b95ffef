use crate::load;
use agentlog_formats::render::{self, TextOptions};
use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Export a session as markdown, text, JSON, or any writable format.
///
/// Markdown and text render the active branch; `json` is the unified model
/// (lossless); a format name writes that format and prints on stderr what
/// the format cannot hold.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session file, or session id (prefix).
    pub session: String,
    /// markdown, text, json, or a writable format name.
    #[arg(long, short = 't', value_name = "TARGET")]
    pub to: String,
    /// Read as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// Write here instead of standard output.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
}

/// Runs `agentlog export`.
pub fn cmd_export(args: Args) -> anyhow::Result<ExitCode> {
    let (_path, _format, read) = load::read(&args.session, args.from.as_deref())?;
    for d in &read.diagnostics {
        eprintln!("{d}");
    }
    let session = read.session;
    let body = match args.to.as_str() {
        "markdown" | "md" => Some(render::markdown(&session) + "\n"),
        "text" | "txt" => Some(render::text(&session, TextOptions::default())),
        _ => None,
    };
    match body {
        Some(text) => write_output(
            args.output.as_deref(),
            |w| Ok(w.write_all(text.as_bytes())?),
        )?,
        None => {
            let target = load::format_named(&args.to)?;
            let fidelity =
                write_output(args.output.as_deref(), |w| Ok(target.write(&session, w)?))?;
            if !fidelity.is_lossless() {
                eprint!("{fidelity}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Calls `write` with the output file (written to a temporary file beside it
/// and renamed into place, so a failed export leaves no half file) or with
/// standard output.
pub fn write_output<T>(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    match path {
        None => {
            let mut stdout = std::io::stdout().lock();
            let r = write(&mut stdout)?;
            stdout.flush()?;
            Ok(r)
        }
        Some(path) => {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let tmp = dir.join(format!(
                ".{}.agentlog-tmp-{}",
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                std::process::id()
            ));
            let result = (|| -> anyhow::Result<T> {
                let file = std::fs::File::create(&tmp)
                    .with_context(|| format!("creating {}", tmp.display()))?;
                let mut w = std::io::BufWriter::new(file);
                let r = write(&mut w)?;
                let file = w.into_inner().map_err(|e| e.into_error())?;
                file.sync_all()?;
                std::fs::rename(&tmp, path)
                    .with_context(|| format!("writing {}", path.display()))?;
                Ok(r)
            })();
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            result
        }
    }
}
