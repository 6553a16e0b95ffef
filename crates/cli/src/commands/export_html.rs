//! `agentlog export --to html`: self-contained HTML files.

use super::export::{write_output, Args};
use crate::commands::index::{self, IndexLocation};
use crate::load;
use agentlog_index::PageParams;
use agentlog_redact::Redactor;
use agentlog_web::{export_index, export_session, Exported};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What every file this command writes starts with; files that do not are
/// never overwritten.
const OURS: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">";

/// Runs `agentlog export --to html`.
pub fn cmd_export_html(args: &Args) -> anyhow::Result<ExitCode> {
    if let Some(arg) = &args.session {
        let (path, _format, mut read) = load::read(arg, args.from.as_deref())?;
        for d in &read.diagnostics {
            crate::eprintln_clean!("{d}");
        }
        let mut shown = path.to_string_lossy().into_owned();
        if !args.no_redact {
            let r = Redactor::builtin()?;
            let report = r.session(&mut read.session);
            if !report.is_empty() {
                eprint!("{report}");
            }
            r.text(&mut shown, "path");
        }
        let html = export_session(&read.session, &shown);
        if let Some(out) = &args.output {
            refuse_foreign(out)?;
        }
        // refuse_foreign let through only agentlog's own HTML exports (or
        // nothing): those are replaced atomically.
        write_output(args.output.as_deref(), true, |w| {
            Ok(w.write_all(html.as_bytes())?)
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(dir) = &args.output else {
        bail!("--all and --project write one file per session: give the directory with -o DIR");
    };
    let idx = index::refreshed(&IndexLocation::default())?;
    let page = idx.session_page(&PageParams {
        project: args.project.clone(),
        limit: usize::MAX / 2,
        ..Default::default()
    })?;
    drop(idx);
    if page.sessions.is_empty() {
        bail!("no indexed session matches; `agentlog ls` lists them");
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut names = std::collections::HashSet::new();
    let jobs: Vec<(agentlog_index::SessionInfo, String)> = page
        .sessions
        .into_iter()
        .map(|s| {
            let base = file_name(&s.agent, &s.session_id);
            let mut name = format!("{base}.html");
            let mut n = 2;
            while !names.insert(name.clone()) || name == "index.html" {
                name = format!("{base}-{n}.html");
                n += 1;
            }
            (s, name)
        })
        .collect();
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(8);
    let chunk = jobs.len().div_ceil(workers).max(1);
    let results: Vec<anyhow::Result<(Exported, usize)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(s, name)| export_one(s, name, dir, !args.no_redact))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![Err(anyhow::anyhow!("an export thread failed"))])
            })
            .collect()
    });
    let mut items = Vec::new();
    let mut failed = 0;
    let (mut secrets, mut with_secrets) = (0, 0);
    for r in results {
        match r {
            Ok((e, n)) => {
                items.push(e);
                secrets += n;
                with_secrets += usize::from(n > 0);
            }
            Err(e) => {
                failed += 1;
                crate::eprintln_clean!("agentlog: {e:#}");
            }
        }
    }
    let index_path = dir.join("index.html");
    refuse_foreign(&index_path)?;
    write_output(Some(&index_path), true, |w| {
        Ok(w.write_all(export_index(&items).as_bytes())?)
    })?;
    if secrets > 0 {
        eprintln!("agentlog: redacted {secrets} secrets in {with_secrets} sessions (--no-redact keeps them)");
    }
    println!(
        "wrote {} sessions and {}",
        items.len(),
        index_path.display()
    );
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn export_one(
    s: &agentlog_index::SessionInfo,
    name: &str,
    dir: &Path,
    redact: bool,
) -> anyhow::Result<(Exported, usize)> {
    let path = PathBuf::from(&s.path);
    let format = load::format_named(&s.format)?;
    let mut read = format
        .read_path(&path)
        .with_context(|| format!("reading {} as {}", path.display(), s.format))?;
    let redactor = if redact {
        Some(Redactor::builtin()?)
    } else {
        None
    };
    let mut secrets = 0;
    let mut shown = s.path.clone();
    if let Some(r) = redactor {
        secrets = r.session(&mut read.session).len();
        r.text(&mut shown, "path");
    }
    let html = export_session(&read.session, &shown);
    let out = dir.join(name);
    refuse_foreign(&out)?;
    write_output(Some(&out), true, |w| Ok(w.write_all(html.as_bytes())?))?;
    let mut title = s
        .title
        .clone()
        .or_else(|| s.first_prompt.clone())
        .unwrap_or_else(|| s.session_id.clone());
    let mut project = s.project.clone().unwrap_or_default();
    if let Some(r) = redactor {
        r.text(&mut title, "title");
        r.text(&mut project, "project");
    }
    let exported = Exported {
        file: name.to_string(),
        title: title
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(140)
            .collect(),
        agent: s.agent.clone(),
        project,
        started: s
            .created_ms
            .and_then(chrono::DateTime::from_timestamp_millis)
            .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default(),
        messages: s.messages as usize,
    };
    Ok((exported, secrets))
}

/// Returns `agent-id` with every character but letters, digits, `-`, `_`
/// and `.` replaced, at most 100 characters.
fn file_name(agent: &str, id: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .take(90)
            .collect()
    };
    let id = clean(id);
    let id = id.trim_start_matches('.');
    format!(
        "{}-{}",
        clean(agent),
        if id.is_empty() { "session" } else { id }
    )
}

/// Fails when `path` exists and is not a file this command wrote.
fn refuse_foreign(path: &Path) -> anyhow::Result<()> {
    match std::fs::File::open(path) {
        Err(_) => Ok(()),
        Ok(mut f) => {
            let mut head = vec![0u8; OURS.len()];
            let ours =
                std::io::Read::read_exact(&mut f, &mut head).is_ok() && head == OURS.as_bytes();
            if ours {
                Ok(())
            } else {
                bail!(
                    "{} exists and is not an HTML export of agentlog; not overwriting it",
                    path.display()
                )
            }
        }
    }
}
