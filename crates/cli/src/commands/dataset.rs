use crate::{config, out};
use agentlog_api::dataset::{build, DatasetOptions, DatasetReport, Split, SubagentMode};
use agentlog_api::training::Target;
use chrono::Utc;
use std::path::PathBuf;
use std::process::ExitCode;

/// Turn many sessions into a training or evaluation set.
///
/// Writes one example per session (its active branch: retried and
/// abandoned branches are left out, and so is a compaction's summary
/// beside the turns it replaced) into a file per split (train.jsonl,
/// test.jsonl) in the -o folder, and a manifest.json saying what went in:
/// each session's files with their SHA-256, the agentlog version, the
/// filters, and the counts and tokens of each split. Secrets are always
/// redacted; the report says how many of each kind.
///
/// The split keeps every project on one side: by project (a share of the
/// projects is the test set), or by time (sessions before a date train,
/// those after it test, less those of a project the training set has).
/// The same sessions give the same bytes. Sessions are read a few at a
/// time: memory does not grow with their number.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The folder to write into (made when missing).
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output: PathBuf,
    /// The examples' format: openai-chat (OpenAI fine-tuning chat format)
    /// or sharegpt (ShareGPT conversations).
    #[arg(
        long,
        short = 't',
        value_name = "FORMAT",
        default_value = "openai-chat"
    )]
    pub to: String,
    /// Only these agents (comma-separated).
    #[arg(long, value_name = "AGENT", value_delimiter = ',')]
    pub agent: Vec<String>,
    /// Only sessions whose project folder contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub project: Option<String>,
    /// Only sessions answered by a model whose name contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub model: Option<String>,
    /// Only sessions started since a date (2026-01-31), a time (RFC 3339)
    /// or a time ago (7d).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only sessions started before a date, a time or a time ago.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Only sessions with at least N user prompts.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub min_turns: usize,
    /// Only sessions in which the model called a tool.
    #[arg(long)]
    pub with_tools: bool,
    /// Subagent transcripts: `separate` (examples of their own) or
    /// `inline` (inside the result of the call that started them).
    #[arg(long, value_name = "HOW", default_value = "separate", value_parser = ["separate", "inline"])]
    pub subagents: String,
    /// Split by `project`, by `time` (with --test-since) or `none`.
    #[arg(long, value_name = "BY", default_value = "project", value_parser = ["project", "time", "none"])]
    pub split: String,
    /// With --split project: about this share of the projects is the
    /// test set.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.1)]
    pub test_fraction: f64,
    /// With --split time: sessions started from then on are the test set.
    #[arg(long, value_name = "WHEN")]
    pub test_since: Option<String>,
    /// Write the time of the run into the manifest (then two runs differ).
    #[arg(long)]
    pub run_time: bool,
    /// Replace the files of an earlier run in the folder.
    #[arg(long)]
    pub force: bool,
    /// Use PATH as AGENT's data directory (repeatable), e.g. claude=/tmp/c.
    #[arg(long = "root", value_name = "AGENT=PATH")]
    pub roots: Vec<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `agentlog dataset`.
pub fn cmd_dataset(args: Args) -> anyhow::Result<ExitCode> {
    let settings = config::settings(&args.roots)?;
    let now = Utc::now();
    let time = |flag: &'static str, s: &Option<String>| -> anyhow::Result<Option<i64>> {
        s.as_deref()
            .map(|s| {
                agentlog_index::time::parse_time(flag, s, now.timestamp_millis())
                    .map_err(anyhow::Error::from)
            })
            .transpose()
    };
    let Some(target) = Target::named(&args.to) else {
        return Err(agentlog_api::ApiError::UnknownFormat {
            name: args.to.clone(),
            known: agentlog_api::training::TARGETS.join(", "),
        }
        .into());
    };
    if !(0.0..=1.0).contains(&args.test_fraction) {
        anyhow::bail!("--test-fraction must be between 0 and 1");
    }
    let split = match args.split.as_str() {
        "time" => Split::Time {
            test_since_ms: time("--test-since", &args.test_since)?
                .ok_or_else(|| anyhow::anyhow!("--split time needs --test-since WHEN"))?,
        },
        "none" => Split::None,
        _ => Split::Project {
            test_fraction: args.test_fraction,
        },
    };
    let mut opts = DatasetOptions::new(&args.output, target);
    opts.force = args.force;
    opts.agents = args.agent.clone();
    opts.project = args.project.clone();
    opts.model = args.model.clone();
    opts.since_ms = time("--since", &args.since)?;
    opts.until_ms = time("--until", &args.until)?;
    opts.min_turns = args.min_turns;
    opts.with_tools = args.with_tools;
    opts.subagents = if args.subagents == "inline" {
        SubagentMode::Inline
    } else {
        SubagentMode::Separate
    };
    opts.split = split;
    opts.run_time_ms = args.run_time.then(|| now.timestamp_millis());
    let report = build(&settings, &opts).map_err(|e| match e {
        agentlog_api::ApiError::Dataset { message } if message.contains("already exists") => {
            crate::out::hinted(
                agentlog_api::ApiError::Dataset { message },
                "give a new -o folder, or --force to replace the earlier run's files".to_string(),
            )
        }
        e => e.into(),
    })?;
    for w in &report.warnings {
        crate::eprintln_clean!("agentlog: warning: {w}");
    }
    if args.json {
        out::print_json(&report)?;
    } else {
        out::print(&said(&report))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The report in words.
fn said(r: &DatasetReport) -> String {
    let mut t = String::new();
    for c in r.splits.values() {
        t.push_str(&format!(
            "{}: {}, {}, {}, {} recorded\n",
            r.out.join(&c.file).display(),
            out::count(c.examples, "example"),
            out::count(c.messages, "message"),
            out::count(c.projects, "project"),
            out::count(c.tokens, "token"),
        ));
    }
    t.push_str(&format!(
        "{}: what went in\n",
        r.out.join(agentlog_api::dataset::MANIFEST).display()
    ));
    t.push_str(&format!(
        "{} looked at",
        out::count(r.sessions_seen, "session")
    ));
    if r.skipped.is_empty() {
        t.push('\n');
    } else {
        t.push_str("; left out:\n");
        for (why, n) in &r.skipped {
            t.push_str(&format!("  - {why}: {n}\n"));
        }
    }
    if r.subagents_inlined > 0 {
        t.push_str(&format!(
            "{} inlined into the sessions that started them\n",
            out::count(r.subagents_inlined, "subagent transcript")
        ));
    }
    match r.redacted_total() {
        0 => t.push_str("redacted no secrets (none found)\n"),
        n => {
            t.push_str(&format!("redacted {}:\n", out::count(n, "secret")));
            for (kind, n) in &r.redacted {
                t.push_str(&format!("  - {kind}: {n}\n"));
            }
        }
    }
    if !r.fidelity.is_lossless() {
        t.push_str(
            &r.fidelity
                .to_string()
                .replace("the converted session lacks", "the examples lack"),
        );
    }
    t
}
