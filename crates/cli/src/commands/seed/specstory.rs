use crate::out;
use agentlog_formats::specstory::{
    self, file_name, first_user_text, render_markdown_with, to_json, to_session_data,
    RenderOptions, SessionData, ValidationSchema,
};
use agentlog_formats::Format;
use anyhow::Context;
use clap::Subcommand;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// SpecStory SessionData: list a project's transcripts, render, validate,
/// convert.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the SpecStory sessions of a project: the transcripts in
    /// `<DIR>/.specstory/history` (and SessionData JSON files there),
    /// newest first.
    #[command(alias = "list")]
    Ls {
        /// The project directory (default: the current directory).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Render a session as SpecStory's markdown transcript.
    ///
    /// FILE is SessionData JSON, a SpecStory transcript, or any session
    /// agentlog reads (converted to SessionData first).
    Render {
        /// The session file.
        file: String,
        /// Write `<DIR>/.specstory/history/<YYYY-MM-DD_HH-MM-SSZ>-<slug>.md`
        /// instead of printing.
        #[arg(long, short = 'o', value_name = "DIR")]
        output: Option<PathBuf>,
        /// The format of FILE (default: detected).
        #[arg(long, value_name = "FORMAT")]
        from: Option<String>,
        /// Local times with an offset instead of UTC.
        #[arg(long)]
        local: bool,
        /// Add `<!-- message-id: … -->` under each header.
        #[arg(long)]
        message_ids: bool,
        /// One header per run of same-role messages.
        #[arg(long)]
        group: bool,
    },
    /// Check SessionData JSON against the JSON Schema and SpecStory's
    /// validation rules; exits 1 when anything is wrong.
    Validate {
        /// The SessionData file.
        file: PathBuf,
        /// Check against the schema file the SpecStory CLI ships instead of
        /// the one in its documentation.
        #[arg(long)]
        upstream: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Convert any session to SessionData JSON (what cannot be carried is
    /// reported on standard error).
    Convert {
        /// The session file.
        file: String,
        /// The format of FILE (default: detected).
        #[arg(long, value_name = "FORMAT")]
        from: Option<String>,
    },
    /// Print the transcript file name SpecStory would use.
    Name {
        /// The session file.
        file: String,
        /// The format of FILE (default: detected).
        #[arg(long, value_name = "FORMAT")]
        from: Option<String>,
        /// Local time with an offset instead of UTC.
        #[arg(long)]
        local: bool,
    },
}

/// Runs `agentlog seed specstory`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Ls { dir, json } => cmd_ls(&dir.unwrap_or_else(|| PathBuf::from(".")), json),
        Command::Render {
            file,
            output,
            from,
            local,
            message_ids,
            group,
        } => {
            let (data, _) = load(&file, from.as_deref())?;
            let opts = RenderOptions {
                utc: !local,
                message_ids,
                group_turns: group,
            };
            let md = render_markdown_with(&data, opts);
            match output {
                None => out::print(&md)?,
                Some(dir) => {
                    let target = dir
                        .join(".specstory")
                        .join("history")
                        .join(file_name(&data, !local));
                    // SpecStory re-renders its transcript as a session
                    // grows: replace it atomically (a symbolic link planted
                    // at the name is replaced itself, never written through).
                    agentlog_store::snapshot::write_file_with(
                        &target,
                        agentlog_store::snapshot::Existing::Replace,
                        |w| {
                            w.write_all(md.as_bytes())
                                .map_err(|e| agentlog_store::StoreError::io(&target, "write", e))
                        },
                    )
                    .with_context(|| format!("writing {}", target.display()))?;
                    out::print(&format!("{}\n", target.display()))?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Validate {
            file,
            upstream,
            json,
        } => cmd_validate(&file, upstream, json),
        Command::Convert { file, from } => {
            let (data, losses) = load(&file, from.as_deref())?;
            if let Some(l) = losses {
                crate::eprintln_clean!("{l}");
            }
            out::print_exact(&to_json(&data)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Name { file, from, local } => {
            let (data, _) = load(&file, from.as_deref())?;
            out::print(&format!("{}\n", file_name(&data, !local)))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Lists the sessions in `<project>/.specstory/history`, newest first (the
/// file names start with the session's time). A file that cannot be read is
/// skipped with a message naming it.
fn cmd_ls(project: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let history = project.join(".specstory").join("history");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&history) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md" || x == "json"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", history.display())),
    };
    files.sort();
    files.reverse();
    let mut rows = Vec::new();
    for f in &files {
        match load(&f.display().to_string(), Some("specstory")) {
            Ok((data, _)) => rows.push(serde_json::json!({
                "path": f,
                "sessionId": data.session_id,
                "createdAt": data.created_at,
                "provider": data.provider.id,
                "exchanges": data.exchanges.len(),
                "title": data.title.clone().unwrap_or_else(|| first_user_text(&data)),
            })),
            Err(e) => {
                crate::eprintln_clean!("agentlog: warning: {}: skipped: {e:#}", f.display())
            }
        }
    }
    if json {
        out::print_json(&rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        crate::eprintln_clean!("no SpecStory sessions in {}", history.display());
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            let text = |k: &str| r[k].as_str().unwrap_or("").to_owned();
            let title: String = text("title")
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect();
            [
                text("createdAt"),
                text("sessionId"),
                text("provider"),
                r["exchanges"].to_string(),
                title,
            ]
        })
        .collect();
    let s = out::table(
        &["created", "session", "provider", "exchanges", "title"],
        &rows,
    );
    out::print(&s)?;
    Ok(ExitCode::SUCCESS)
}

/// Loads FILE as SessionData: directly when it is SessionData JSON,
/// otherwise through the unified model (with the fidelity report when
/// something was lost).
fn load(file: &str, from: Option<&str>) -> anyhow::Result<(SessionData, Option<String>)> {
    let path = crate::load::resolve(file)?;
    let format = match from {
        Some(name) => crate::load::format_named(name)?,
        None => agentlog_formats::registry::detect(&path)?,
    };
    if format.name() == "specstory" {
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        if let Some(parsed) = specstory::parse_markdown(text.trim_start()) {
            return Ok((parsed.data, None));
        }
        return Ok((specstory::read_session_data(&path, &bytes)?, None));
    }
    let read = format
        .read_path(&path)
        .with_context(|| format!("reading {} as {}", path.display(), format.name()))?;
    let (data, fidelity) = to_session_data(&read.session);
    let losses = (!fidelity.is_lossless()).then(|| fidelity.to_string());
    Ok((data, losses))
}

fn cmd_validate(file: &Path, upstream: bool, json: bool) -> anyhow::Result<ExitCode> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let schema = if upstream {
        ValidationSchema::Upstream
    } else {
        ValidationSchema::Seed
    };
    let diags = if text.trim_start().starts_with(specstory::GENERATED_BY) {
        specstory::FORMAT.validate(file)?
    } else {
        specstory::validate_text(file, &text, schema)
    };
    if json {
        out::print_json(&diags)?;
    } else if diags.is_empty() {
        out::print(&format!("{}: valid SessionData 1.0\n", file.display()))?;
    } else {
        let mut s = String::new();
        for d in &diags {
            s.push_str(&d.to_string());
            s.push('\n');
        }
        out::print(&s)?;
    }
    let bad = diags
        .iter()
        .any(|d| d.severity >= agentlog_formats::Severity::Warning);
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
