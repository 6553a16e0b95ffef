//! `agentlog export --to html`: self-contained HTML files.

use super::export::Args;
use crate::fresh::{self, IndexLocation};
use crate::load;
use agentlog_index::backend::read_session;
use agentlog_index::PageParams;
use agentlog_web::files::{export_all, read_subagents, session_page_with, write_page};
use agentlog_web::render::keep_shown_entry;
use anyhow::bail;
use std::process::ExitCode;

/// Runs `agentlog export --to html`: one session (to standard output or
/// -o FILE), or --all / --project into -o DIR with an index page.
///
/// `one` is the session to export (a path or id, and its format when
/// known), when not all of them.
pub fn cmd_export_html(args: &Args, one: Option<(&str, Option<&str>)>) -> anyhow::Result<ExitCode> {
    if let Some((arg, from)) = one {
        let (path, format, mut read) = load::read_which(arg, from, &args.which)?;
        for d in &read.diagnostics {
            crate::eprintln_clean!("{d}");
        }
        // A session fetched from the team server has no subagent files here.
        let mut subagents = if args.db.is_none() {
            read_subagents(&path, format.name())
        } else {
            Vec::new()
        };
        let (html, report) = session_page_with(
            &mut read.session,
            &mut subagents,
            &path.to_string_lossy(),
            !args.no_redact,
        )?;
        if !report.is_empty() {
            crate::eprint_clean!("{report}");
        }
        match super::export::output_path(args.output.as_deref()) {
            Some(out) => {
                write_page(out, &html)?;
                super::export::say_written(out, html.len());
                if report.is_empty() && !args.no_redact {
                    crate::eprintln_clean!("agentlog: redacted: no secrets found");
                }
            }
            None => out_html(&html)?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(dir) = super::export::output_path(args.output.as_deref()) else {
        bail!("--all and --project write one file per session: give the directory with -o DIR");
    };
    let params = PageParams {
        project: args.project.clone(),
        limit: usize::MAX / 2,
        ..Default::default()
    };
    let done = match &args.db {
        Some(url) => {
            let db = crate::commands::db::connect(url)?;
            let page = db.session_page(&params)?;
            if page.sessions.is_empty() {
                bail!(
                    "no session on {} matches; `agentlog ls --db URL` lists them",
                    db.url()
                );
            }
            let read = |s: &agentlog_index::SessionInfo| {
                let kept = db.original_at(&s.path)?;
                read_session(s, Some(&kept), &keep_shown_entry)
            };
            export_all(page.sessions, dir, !args.no_redact, &read, false)?
        }
        None => {
            let idx = fresh::refreshed(&IndexLocation::default())?;
            let page = idx.session_page(&params)?;
            drop(idx);
            if page.sessions.is_empty() {
                bail!("no indexed session matches; `agentlog ls` lists them");
            }
            export_all(
                page.sessions,
                dir,
                !args.no_redact,
                &|s| read_session(s, None, &keep_shown_entry),
                true,
            )?
        }
    };
    for e in &done.failed {
        crate::eprintln_clean!("agentlog: {e}");
    }
    if done.secrets > 0 {
        crate::eprintln_clean!(
            "agentlog: redacted {} in {} (--no-redact keeps them):",
            crate::out::count(done.secrets as u64, "secret"),
            crate::out::count(done.with_secrets as u64, "session")
        );
        for (path, page, report) in &done.reports {
            crate::eprint_clean!("{path} ({page}): {report}");
        }
    }
    crate::out::print(&format!(
        "wrote {} and {}\n",
        crate::out::count(done.pages.len() as u64, "session"),
        done.index.display()
    ))?;
    Ok(if done.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Writes a page to standard output.
fn out_html(html: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    o.write_all(html.as_bytes())?;
    o.flush()?;
    Ok(())
}
