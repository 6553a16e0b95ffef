use crate::load;
use agentlog_formats::Written;
use agentlog_store::snapshot::{write_file_with, write_folder, Existing};
use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Export a session as markdown, text, HTML, JSON, or any writable format.
///
/// Markdown, text and HTML render the active branch; `json` is the unified
/// model (lossless); `otel` is an OpenTelemetry trace (OTLP JSON, GenAI
/// conventions; redacted unless --no-redact); a format name writes that
/// format. Both print on stderr what the target cannot hold. `--to html` writes one self-contained file
/// (no external requests, print-friendly); with --all or --project it
/// writes one file per session and an index.html into the -o directory.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session file, or session id (prefix), or AGENT:ID.
    #[arg(required_unless_present_any = ["all", "project"])]
    pub session: Option<String>,
    #[command(flatten)]
    pub which: crate::load::Which,
    /// Export every indexed session (with --to html and -o DIR).
    #[arg(long, conflicts_with = "session")]
    pub all: bool,
    /// Export the sessions whose project path contains TEXT (with --to html
    /// and -o DIR).
    #[arg(long, value_name = "TEXT", conflicts_with = "session")]
    pub project: Option<String>,
    /// markdown, text, html, otel, json, or a writable format name.
    #[arg(long, short = 't', value_name = "TARGET")]
    pub to: String,
    /// Read as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// HTML and otel only: keep secrets (API keys, tokens, passwords)
    /// instead of redacting them, which these exports do by default.
    #[arg(long)]
    pub no_redact: bool,
    /// Read from the team database (SESSION is an id there):
    /// postgres://USER:PASSWORD@HOST:PORT/DATABASE.
    #[arg(long, value_name = "URL", env = "AGENTLOG_DB", hide_env_values = true)]
    pub db: Option<String>,
    /// Write here instead of standard output (a new file: an existing one
    /// is an error unless --force; `-` is standard output, `./-` a file
    /// named `-`). A format whose sessions are folders (openhands) writes
    /// the folder here.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Replace the -o file or folder when it exists (atomically).
    #[arg(long, requires = "output")]
    pub force: bool,
    /// Replace secrets (API keys, tokens, passwords, private keys) with
    /// [REDACTED:<kind>] and report what was found on stderr (HTML always
    /// does, unless --no-redact).
    #[arg(long, conflicts_with = "no_redact")]
    pub redact: bool,
}

/// Runs `agentlog export`.
pub fn cmd_export(args: Args) -> anyhow::Result<ExitCode> {
    let Some(arg) = args.session.as_deref() else {
        if args.to == "html" {
            return super::export_html::cmd_export_html(&args, None);
        }
        anyhow::bail!("--all and --project export HTML only (--to html)");
    };
    let fetched = match &args.db {
        Some(url) => crate::commands::db::fetch(url, arg)?,
        None => None,
    };
    let (session_arg, from) = match &fetched {
        Some(f) => (
            f.path.to_string_lossy().into_owned(),
            Some(args.from.clone().unwrap_or(f.format.clone())),
        ),
        None => (arg.to_string(), args.from.clone()),
    };
    if args.to == "html" {
        return super::export_html::cmd_export_html(&args, Some((&session_arg, from.as_deref())));
    }
    load::small_heap(&session_arg);
    let (path, format, read) = load::read_which(&session_arg, from.as_deref(), &args.which)?;
    for d in &read.diagnostics {
        crate::eprintln_clean!("{d}");
    }
    let mut session = read.session;
    // A trace is made to leave the machine: redacted unless told not to.
    let redact = args.redact || (args.to == agentlog_api::otel::TARGET && !args.no_redact);
    crate::redact::apply(&mut session, redact, false)?;
    // A trajectory embeds the subagents the session started.
    let mut subagents = match args.to.as_str() {
        "atif" => agentlog_api::export::subagents(&session, &path, format.name()),
        _ => Vec::new(),
    };
    for s in &mut subagents {
        crate::redact::apply(s, redact, false)?;
    }
    let exported =
        agentlog_api::export::export_with(&session, &subagents, &args.to).map_err(|e| match e {
            // This command writes HTML too (agentlog-web's).
            agentlog_api::ApiError::UnknownFormat { name, .. } => {
                agentlog_api::ApiError::UnknownFormat {
                    name,
                    known: agentlog_api::export::targets(&["html"]),
                }
            }
            e => e,
        })?;
    write_written(
        args.output.as_deref(),
        args.force,
        &exported.written,
        &args.to,
    )?;
    if let Some(f) = exported.fidelity.filter(|f| !f.is_lossless()) {
        crate::eprint_clean!("{f}");
    }
    if let Some(path) = &args.output {
        let size = exported.written.files().iter().map(|(_, b)| b.len()).sum();
        say_written(path, size);
    }
    Ok(ExitCode::SUCCESS)
}

/// Says on stderr what an export wrote at `path` (`size` bytes), unless
/// `path` is a stream (`/dev/stdout`, a pipe): a file written in silence
/// looks like nothing happened.
pub fn say_written(path: &Path, size: usize) {
    if is_stream(path) {
        return;
    }
    let what = if path.is_dir() { "the folder " } else { "" };
    crate::eprintln_clean!(
        "agentlog: wrote {what}{} ({})",
        path.display(),
        crate::out::count(size as u64, "byte")
    );
}

/// Writes a converted session: one file as [`write_output`] does, or the
/// folder of a format whose sessions are folders (`format`) at the -o
/// path, which must be given, whole or not at all, never over anything
/// there unless `force`, which replaces a folder holding a session of the
/// format and nothing else (never any other folder).
pub fn write_written(
    path: Option<&Path>,
    force: bool,
    written: &Written,
    format: &str,
) -> anyhow::Result<()> {
    let path = output_path(path);
    let files = match written {
        Written::File(bytes) => return write_output(path, force, |w| Ok(w.write_all(bytes)?)),
        Written::Folder(files) => files,
    };
    let Some(path) = path else {
        anyhow::bail!(
            "a session in the {format} format is a folder of files, not one stream: \
             give the folder to write with -o DIR"
        );
    };
    let existing = if force {
        Existing::Replace
    } else {
        Existing::Refuse
    };
    if force && path.is_dir() && !crate::load::format_named(format)?.is_session_folder(path) {
        anyhow::bail!(
            "{} is not a {format} session folder (it holds other files): --force replaces \
             only a session's folder; nothing written",
            path.display()
        );
    }
    let exists = !force && path.symlink_metadata().is_ok();
    let written = write_folder(path, files, existing);
    force_hint(written.map_err(anyhow::Error::from), path, exists, "folder")
}

/// `result` of writing `path`, an error saying that it was there and that
/// --force replaces the `what` (file, folder) when it `existed`.
fn force_hint<T>(
    result: anyhow::Result<T>,
    path: &Path,
    existed: bool,
    what: &str,
) -> anyhow::Result<T> {
    result
        .with_context(|| format!("writing {}", path.display()))
        .map_err(|e| {
            if existed {
                crate::out::hinted(e, format!("--force replaces the {what} (atomically)"))
            } else {
                e
            }
        })
}

/// The -o path, `None` (standard output) for `-`, as for most tools
/// (`./-` names a file called `-`).
pub fn output_path(path: Option<&Path>) -> Option<&Path> {
    path.filter(|p| p.as_os_str() != "-")
}

/// True when `path` itself (not through a symbolic link, which could point
/// anywhere) is a character device or a FIFO: a stream to write into, not
/// a file to replace.
fn is_stream(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::symlink_metadata(path).is_ok_and(|m| {
            let t = m.file_type();
            t.is_char_device() || t.is_fifo()
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Calls `write` with the output file or with standard output. The file is
/// written through a private temp file beside it (0600; missing
/// directories 0700) and moved into place, so a failed export leaves no
/// half file and no write follows a symbolic link; an existing file is an
/// error unless `force`, which replaces it atomically. A device or FIFO
/// (`/dev/null`, a named pipe) is written into as it is.
pub fn write_output<T>(
    path: Option<&Path>,
    force: bool,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    match output_path(path) {
        None => {
            let mut stdout = std::io::stdout().lock();
            let r = write(&mut stdout)?;
            stdout.flush()?;
            Ok(r)
        }
        // A device or a FIFO (`-o /dev/null`, `-o /dev/stdout`, a named
        // pipe) is written into, never replaced.
        Some(path) if is_stream(path) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("writing {}", path.display()))?;
            let r = write(&mut f).with_context(|| format!("writing {}", path.display()))?;
            f.flush()?;
            Ok(r)
        }
        Some(path) => {
            let existing = if force {
                Existing::Replace
            } else {
                Existing::Refuse
            };
            let exists = !force && path.symlink_metadata().is_ok();
            force_hint(write_file_with(path, existing, write), path, exists, "file")
        }
    }
}
