use crate::load;
use agentlog_formats::render::{self, TextOptions};
use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Export a session as markdown, text, HTML, JSON, or any writable format.
///
/// Markdown, text and HTML render the active branch; `json` is the unified
/// model (lossless); a format name writes that format and prints on stderr
/// what the format cannot hold. `--to html` writes one self-contained file
/// (no external requests, print-friendly); with --all or --project it
/// writes one file per session and an index.html into the -o directory.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session file, or session id (prefix).
    #[arg(required_unless_present_any = ["all", "project"])]
    pub session: Option<String>,
    /// Export every indexed session (with --to html and -o DIR).
    #[arg(long, conflicts_with = "session")]
    pub all: bool,
    /// Export the sessions whose project path contains TEXT (with --to html
    /// and -o DIR).
    #[arg(long, value_name = "TEXT", conflicts_with = "session")]
    pub project: Option<String>,
    /// markdown, text, html, json, or a writable format name.
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
    if args.to == "html" {
        return super::export_html::cmd_export_html(&args);
    }
    let Some(arg) = args.session.as_deref() else {
        anyhow::bail!("--all and --project export HTML only (--to html)");
    };
    let (_path, _format, read) = load::read(arg, args.from.as_deref())?;
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
