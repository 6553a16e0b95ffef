//! `agentlog archive`: what agentlog's archive keeps of the session files,
//! every state of each, and its checks.

use crate::out;
use agentlog_formats::render::{self, TextOptions};
use std::process::ExitCode;

/// Look into agentlog's archive of session files.
///
/// agentlog keeps every state of every session file it sees (at each
/// `index`, the refresh before `search`/`ls`/`stats`, `serve`, `index
/// --watch`, and the capture hooks of `agentlog hooks install`), so that a
/// session outlives the agent that deletes or rewrites it. Sessions whose
/// files are gone are still listed (`ls --deleted`), shown, searched,
/// counted and exported; `agentlog restore` puts one back.
///
/// The archive lives beside the index (`~/.local/share/agentlog/archive/`);
/// AGENTLOG_ARCHIVE=PATH moves it, AGENTLOG_ARCHIVE=off turns it off.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// What to do with the archive.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// List the files the archive keeps (path, agent, versions, gone or
    /// not).
    Ls {
        /// Only files that are gone from disk.
        #[arg(long)]
        deleted: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List every state the archive keeps of one session.
    Versions {
        /// Session id (prefix) or file.
        session: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one kept state of a session as a transcript.
    Show {
        /// Session id (prefix) or file.
        session: String,
        /// The state (a number from `archive versions`; the latest when left
        /// out).
        #[arg(long, value_name = "N")]
        state: Option<u32>,
        /// Print markdown instead of terminal text.
        #[arg(long)]
        markdown: bool,
    },
    /// Write one kept state's bytes, exactly as the agent wrote them, to
    /// standard output.
    Cat {
        /// Session id (prefix) or file.
        session: String,
        /// The state (the latest when left out).
        #[arg(long, value_name = "N")]
        state: Option<u32>,
    },
    /// Show what changed between two kept states of a session: a unified
    /// diff of their transcripts (what a compression or rewind removed is
    /// marked -).
    Diff {
        /// Session id (prefix) or file.
        session: String,
        /// The older state.
        a: u32,
        /// The newer state.
        b: u32,
    },
    /// Check every stored chunk (decompressed and hashed) and every
    /// version; exit 1 when anything is damaged.
    Verify {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Drop states older than N days that are not their file's latest, and
    /// files gone from disk for longer (agentlog keeps everything forever
    /// unless told: `archive_keep_days = N` in the configuration file does
    /// this at every full index).
    Prune {
        /// Days to keep.
        #[arg(long, value_name = "DAYS")]
        older_than: u32,
        /// Do it (without it, say what would go).
        #[arg(long)]
        yes: bool,
    },
    /// Figures: files, versions, bytes kept and stored.
    Stats {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// A time in ms since the epoch, for people (UTC).
pub fn when(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "-".into())
}

/// Bytes for people.
pub fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GB", n as f64 / 1e9),
        n if n >= 1 << 20 => format!("{:.1} MB", n as f64 / 1e6),
        n if n >= 1 << 10 => format!("{:.1} kB", n as f64 / 1e3),
        n => format!("{n} B"),
    }
}

/// Runs `agentlog archive`.
pub fn cmd_archive(args: Args) -> anyhow::Result<ExitCode> {
    let settings = crate::config::settings(&[])?;
    use agentlog_api::archive as a;
    match args.what {
        What::Ls { deleted, json } => {
            let mut sources = a::sources(&settings)?;
            let on_disk = |p: &std::path::Path| std::fs::symlink_metadata(p).is_ok();
            if deleted {
                sources.retain(|s| !on_disk(&s.path));
            }
            if json {
                return out::print_json(&sources).map(|_| ExitCode::SUCCESS);
            }
            let rows: Vec<[String; 5]> = sources
                .iter()
                .map(|s| {
                    let state = if on_disk(&s.path) {
                        "on disk".to_string()
                    } else {
                        format!("deleted (noticed {})", when(s.gone_ms))
                    };
                    [
                        s.format.clone(),
                        s.versions.to_string(),
                        bytes(s.latest.size),
                        state,
                        s.path.display().to_string(),
                    ]
                })
                .collect();
            out::print(&out::table(
                &["AGENT", "VERSIONS", "SIZE", "FILE", "PATH"],
                &rows,
            ))?;
            out::print(&format!("{}\n", out::count(sources.len() as u64, "file")))?;
        }
        What::Versions { session, json } => {
            let (found, kept) = a::versions(&settings, &session)?;
            if json {
                return out::print_json(&kept).map(|_| ExitCode::SUCCESS);
            }
            out::print(&format!(
                "{} ({}){}\n",
                found.path.display(),
                found.format,
                if kept.gone {
                    format!(
                        ": deleted from disk (noticed {}), kept in the archive",
                        when(kept.source.gone_ms)
                    )
                } else {
                    String::new()
                }
            ))?;
            let rows: Vec<[String; 5]> = kept
                .versions
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    // A version after another one's last state: rewritten.
                    let rewritten = i > 0 && kept.versions[i - 1].id != v.id;
                    [
                        v.number.to_string(),
                        when(Some(v.seen_ms)),
                        bytes(v.stat.size),
                        match (v.grew_into_next, v.appends) {
                            (true, _) => format!("grew into {}", v.number + 1),
                            (false, 0) if rewritten => "rewritten".into(),
                            (false, 0) => "-".into(),
                            (false, n) if rewritten => {
                                format!("rewritten, then grew {}", out::count(n as u64, "time"))
                            }
                            (false, n) => format!("grew {}", out::count(n as u64, "time")),
                        },
                        if v.grew_into_next {
                            "-".to_string()
                        } else {
                            v.digest[..16].to_string()
                        },
                    ]
                })
                .collect();
            out::print(&out::table(
                &["STATE", "SEEN", "SIZE", "HOW", "DIGEST"],
                &rows,
            ))?;
        }
        What::Show {
            session,
            state,
            markdown,
        } => {
            let (_, read) = a::read_version(&settings, &session, state)?;
            if markdown {
                out::print(&render::markdown(&read.session))?;
                out::print("\n")?;
            } else {
                let opts = TextOptions {
                    color: out::use_color(),
                    full_thinking: false,
                    max_tool_lines: 12,
                };
                let mut stdout = std::io::stdout().lock();
                render::text_to(&read.session, opts, &mut stdout)?;
                std::io::Write::flush(&mut stdout)?;
            }
        }
        What::Cat { session, state } => {
            let (_, b) = a::bytes(&settings, &session, state)?;
            if out::stdout_is_terminal() {
                // The agent's bytes, unsanitized, are data: never to a
                // terminal as they are.
                out::print(&String::from_utf8_lossy(&b))?;
            } else {
                let mut o = std::io::stdout().lock();
                std::io::Write::write_all(&mut o, &b)?;
                std::io::Write::flush(&mut o)?;
            }
        }
        What::Diff {
            session,
            a: x,
            b: y,
        } => {
            let d = a::diff(&settings, &session, x, y)?;
            if d.is_empty() {
                out::print(&format!("versions {x} and {y} read the same\n"))?;
            } else {
                out::print(&d)?;
            }
        }
        What::Verify { json } => {
            let r = a::verify(&settings)?;
            if json {
                out::print_json(&r)?;
            } else if r.problems.is_empty() {
                out::print(&format!(
                    "the archive is whole: {} and {} checked\n",
                    out::count(r.chunks, "chunk"),
                    out::count(r.versions, "version")
                ))?;
            } else {
                for p in &r.problems {
                    crate::eprintln_clean!("agentlog: damaged: {p}");
                }
                crate::eprintln_clean!(
                    "agentlog: the archive is damaged: {} ({} and {} checked)",
                    out::count(r.problems.len() as u64, "problem"),
                    out::count(r.chunks, "chunk"),
                    out::count(r.versions, "version")
                );
            }
            return Ok(if r.problems.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            });
        }
        What::Prune { older_than, yes } => {
            let (states, files) = a::prune(&settings, older_than, !yes)?;
            out::print(&format!(
                "{} {} and {} gone from disk for over {}{}\n",
                if yes { "dropped" } else { "would drop" },
                out::count(states as u64, "old state"),
                out::count(files as u64, "file"),
                out::count(older_than as u64, "day"),
                if yes {
                    ""
                } else {
                    "; nothing was removed: run again with --yes"
                }
            ))?;
        }
        What::Stats { json } => {
            let Some(s) = a::stats(&settings)? else {
                anyhow::bail!("no archive yet: the first `agentlog index` makes it");
            };
            if json {
                return out::print_json(&s).map(|_| ExitCode::SUCCESS);
            }
            out::print(&stats_text(&s))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The archive's figures in a few lines.
pub fn stats_text(s: &agentlog_archive::ArchiveStats) -> String {
    format!(
        "{} kept ({} deleted from disk), {}\n{} of session files ({} in every state), stored in {} ({:.2}x), {} on disk\n",
        out::count(s.sources, "file"),
        out::group(s.gone),
        out::count(s.versions, "version"),
        bytes(s.latest_bytes),
        bytes(s.all_bytes),
        bytes(s.stored_bytes),
        if s.all_bytes > 0 {
            s.stored_bytes as f64 / s.all_bytes as f64
        } else {
            0.0
        },
        bytes(s.disk_bytes),
    )
}
