use crate::commands::export::write_written;
use crate::load;
use agentlog_formats::Written;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;

/// Convert a session from one format to another.
///
/// Written back into the format it was read in, every record that did not
/// change keeps its original text, so an unchanged session is the same file.
///
/// Prints a fidelity report on stderr: everything the target format cannot
/// hold, with counts and the first entry affected. Nothing is dropped
/// silently; with --strict a lossy conversion fails and writes nothing.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Session file, or session id (prefix), or AGENT:ID.
    pub session: String,
    #[command(flatten)]
    pub which: crate::load::Which,
    /// The target format, or otel (an OpenTelemetry trace as OTLP JSON;
    /// see `export --to otel`).
    #[arg(long, short = 't', value_name = "FORMAT")]
    pub to: String,
    /// Read as this format instead of detecting it.
    #[arg(long, value_name = "FORMAT")]
    pub from: Option<String>,
    /// Write here instead of standard output (a new file: an existing one
    /// is an error unless --force). A format whose sessions are folders
    /// (openhands) writes the folder here.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Replace the -o file or folder when it exists (atomically).
    #[arg(long, requires = "output")]
    pub force: bool,
    /// Fail, writing nothing, when the target cannot hold everything.
    #[arg(long)]
    pub strict: bool,
    /// Replace secrets (API keys, tokens, passwords, private keys) with
    /// [REDACTED:<kind>] and report what was found on stderr.
    #[arg(long)]
    pub redact: bool,
    /// otel only: keep secrets, which a trace (made to leave the machine)
    /// has redacted by default.
    #[arg(long, conflicts_with = "redact")]
    pub no_redact: bool,
    /// Print the fidelity report as JSON on stderr.
    #[arg(long)]
    pub json: bool,
}

/// Runs `agentlog convert`.
pub fn cmd_convert(args: Args) -> anyhow::Result<ExitCode> {
    load::small_heap(&args.session);
    let (path, format, mut read) =
        load::read_which(&args.session, args.from.as_deref(), &args.which)?;
    for d in &read.diagnostics {
        crate::eprintln_clean!("{d}");
    }
    let otel = args.to == agentlog_api::otel::TARGET;
    crate::redact::apply(
        &mut read.session,
        args.redact || (otel && !args.no_redact),
        args.json,
    )?;
    if otel {
        let exported = agentlog_api::export::export(&read.session, &args.to)?;
        let fidelity = exported.fidelity.unwrap_or_default();
        return finish(&args, &exported.written, &fidelity, args.to.as_str());
    }
    if ["html", "markdown", "md", "text", "txt"].contains(&args.to.as_str()) {
        return Err(crate::out::hinted(
            agentlog_api::ApiError::UnknownFormat {
                name: args.to.clone(),
                known: writable(),
            },
            format!(
                "convert writes session formats; `agentlog export --to {}` renders a transcript",
                args.to
            ),
        ));
    }
    if agentlog_api::training::Target::named(&args.to).is_some() {
        return training(&args, &read.session);
    }
    let target = load::format_named(&args.to)?;
    if !target.can_write() {
        anyhow::bail!(
            "the {} format cannot be written; writable formats: {}",
            target.name(),
            writable()
        );
    }
    // A trajectory embeds the subagents the session started.
    let mut subagents = match target.name() {
        "atif" => agentlog_api::export::subagents(&read.session, &path, format.name()),
        _ => Vec::new(),
    };
    for s in &mut subagents {
        crate::redact::apply(s, args.redact, args.json)?;
    }
    let exported = agentlog_api::export::export_with(&read.session, &subagents, target.name())?;
    let (mut written, fidelity) = (exported.written, exported.fidelity.unwrap_or_default());
    // Written back into its own format, each file keeps its own text for
    // every record that did not change (agentlog_formats::keep).
    if format.name() == target.name() && args.session != "-" {
        keep_original_text(&mut written, &path, format);
    }
    finish(&args, &written, &fidelity, target.name())
}

/// Writes the converted session (unless --strict and something was lost)
/// and prints the fidelity report.
fn finish(
    args: &Args,
    written: &Written,
    fidelity: &agentlog_formats::Fidelity,
    target: &str,
) -> anyhow::Result<ExitCode> {
    if args.strict && !fidelity.is_lossless() {
        crate::eprint_clean!("{fidelity}");
        anyhow::bail!("--strict: {target} cannot hold everything in this session; nothing written");
    }
    write_written(args.output.as_deref(), args.force, written, target)?;
    if args.json {
        let text = serde_json::to_string_pretty(&fidelity)?;
        eprintln!("{text}");
    } else {
        crate::eprint_clean!("{fidelity}");
        if fidelity.is_lossless() {
            crate::eprintln_clean!();
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the session as training data (`openai-chat`, `sharegpt`).
fn training(args: &Args, session: &agentlog_model::Session) -> anyhow::Result<ExitCode> {
    let lib = agentlog_api::Library::new(crate::config::settings(&[])?);
    let (written, fidelity) = lib.convert(session, &args.to)?;
    if args.strict && !fidelity.is_lossless() {
        crate::eprint_clean!("{fidelity}");
        anyhow::bail!(
            "--strict: {} cannot hold everything in this session; nothing written",
            args.to
        );
    }
    write_written(args.output.as_deref(), args.force, &written, &args.to)?;
    if args.json {
        eprintln!("{}", serde_json::to_string_pretty(&fidelity)?);
    } else {
        crate::eprint_clean!("{fidelity}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Puts back the text of every record that did not change, from the file
/// the session was read from at `source`, or for a folder, from the file of
/// the same name in the session's folder (`format`'s
/// [`agentlog_formats::Format::session_folder`]).
fn keep_original_text(written: &mut Written, source: &Path, format: &dyn agentlog_formats::Format) {
    use agentlog_formats::keep::keep_unchanged;
    match written {
        Written::File(bytes) => {
            if let Ok(original) = std::fs::read(source) {
                *bytes = keep_unchanged(bytes, &original);
            }
        }
        Written::Folder(files) => {
            let Some(root) = format.session_folder(source) else {
                return;
            };
            for (rel, bytes) in files.iter_mut() {
                if let Ok(original) = std::fs::read(root.join(&*rel)) {
                    *bytes = keep_unchanged(bytes, &original);
                }
            }
        }
    }
}

fn writable() -> String {
    agentlog_formats::registry::all()
        .iter()
        .filter(|f| f.can_write())
        .map(|f| f.name())
        .chain(agentlog_api::training::TARGETS.iter().copied())
        .collect::<Vec<_>>()
        .join(", ")
}
