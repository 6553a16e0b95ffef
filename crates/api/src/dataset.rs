//! Many sessions as one training or evaluation set (`agentlog dataset`):
//! the sessions that pass the filters, redacted, one example each
//! ([`crate::training`]), written into a file per split (`train.jsonl`,
//! `test.jsonl`) with a `manifest.json` saying what went in.
//!
//! - **No duplicated context.** Only a session's active branch; a
//!   compaction's summary is left out beside the turns it replaces;
//!   Claude Code's subagent transcripts are their own examples or inlined
//!   into the result of the call that started them
//!   ([`SubagentMode`]); the copies `resume` wrote
//!   ([`crate::copies`]) are passed over.
//! - **No project on both sides of a split.** By project, a project's
//!   sessions all go where the SHA-256 of its folder puts them; by time,
//!   the sessions started before a date are the training set and those
//!   after it the test set, less those of a project the training set has.
//! - **Deterministic.** Sessions in the order of their paths; nothing of
//!   the run (its time only when asked for) in the files.
//! - **Streaming.** A few sessions are read at a time (on a few threads)
//!   and their examples written before the next are read: memory follows
//!   the largest session, not the corpus.

use crate::training::{self, Conversation, Speaker, Subagents, Target};
use crate::{ApiError, Settings};
use agentlog_formats::discover::{discover_report, Found};
use agentlog_formats::{registry, Fidelity};
use agentlog_model::{Entry, Session, Timestamp};
use agentlog_redact::Redactor;
use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufWriter, Read as _, Write};
use std::path::{Path, PathBuf};

/// Where subagent transcripts go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SubagentMode {
    /// Each subagent transcript is an example of its own.
    #[default]
    Separate,
    /// A subagent's transcript is put into the result of the tool call
    /// that started it, and is no example of its own.
    Inline,
}

/// How the examples are split.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "by")]
pub enum Split {
    /// Every example in `train.jsonl`.
    None,
    /// By project: a project goes to the test split when the first 8
    /// bytes of the SHA-256 of its folder, as a fraction of 2^64, are
    /// below `test_fraction`.
    Project {
        /// About this share of the projects is the test split.
        test_fraction: f64,
    },
    /// By time: sessions started before `test_since_ms` are the training
    /// split, the others the test split, less those of a project that has
    /// a session in the training split.
    Time {
        /// The first time of the test split (ms since the epoch).
        test_since_ms: i64,
    },
}

/// What `agentlog dataset` is asked for.
#[derive(Clone, Debug)]
pub struct DatasetOptions {
    /// The folder the files are written into (made when missing).
    pub out: PathBuf,
    /// Replace the files of an earlier run in `out`.
    pub force: bool,
    /// The format of the examples.
    pub target: Target,
    /// Only these agents (all when empty).
    pub agents: Vec<String>,
    /// Only sessions whose folder contains this text.
    pub project: Option<String>,
    /// Only sessions a model whose name contains this text answered in.
    pub model: Option<String>,
    /// Only sessions started at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Only sessions started before this time.
    pub until_ms: Option<i64>,
    /// Only sessions with at least this many user prompts.
    pub min_turns: usize,
    /// Only sessions in which the model called a tool.
    pub with_tools: bool,
    /// Where subagent transcripts go.
    pub subagents: SubagentMode,
    /// How the examples are split.
    pub split: Split,
    /// Write this time as the run's in the manifest (none when `None`,
    /// so that two runs give the same bytes).
    pub run_time_ms: Option<i64>,
}

impl DatasetOptions {
    /// Options writing `target` into `out`, with no filter, split by
    /// project with a tenth of the projects for testing.
    pub fn new(out: impl Into<PathBuf>, target: Target) -> DatasetOptions {
        DatasetOptions {
            out: out.into(),
            force: false,
            target,
            agents: Vec::new(),
            project: None,
            model: None,
            since_ms: None,
            until_ms: None,
            min_turns: 0,
            with_tools: false,
            subagents: SubagentMode::Separate,
            split: Split::Project { test_fraction: 0.1 },
            run_time_ms: None,
        }
    }
}

/// One split's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SplitCounts {
    /// The file, in the output folder.
    pub file: String,
    /// Examples (lines).
    pub examples: u64,
    /// Messages in them.
    pub messages: u64,
    /// Distinct projects.
    pub projects: u64,
    /// The tokens the agents recorded for the responses kept.
    pub tokens: u64,
    /// Characters of the messages' text and tool calls.
    pub characters: u64,
}

/// What a run wrote.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DatasetReport {
    /// The output folder.
    pub out: PathBuf,
    /// The splits, by name.
    pub splits: BTreeMap<String, SplitCounts>,
    /// The sessions looked at.
    pub sessions_seen: u64,
    /// Sessions left out, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Subagent transcripts inlined into the session that started them.
    pub subagents_inlined: u64,
    /// Secrets redacted, by kind.
    pub redacted: BTreeMap<String, u64>,
    /// What the examples could not hold, summed over the sessions.
    pub fidelity: Fidelity,
    /// Files that could not be read, and folders that could not be
    /// searched, each naming the path.
    pub warnings: Vec<String>,
}

impl DatasetReport {
    /// Secrets redacted in all.
    pub fn redacted_total(&self) -> u64 {
        self.redacted.values().sum()
    }
}

/// The files of a run, in the output folder.
pub const MANIFEST: &str = "manifest.json";

/// Writes the data set `opts` asks for from the sessions under
/// `settings`, and its manifest; returns what was written.
pub fn build(settings: &Settings, opts: &DatasetOptions) -> Result<DatasetReport, ApiError> {
    let redactor = Redactor::builtin().map_err(|e| ApiError::Dataset {
        message: format!("the redaction rules: {e}"),
    })?;
    let split_names: &[&str] = match opts.split {
        Split::None => &["train"],
        _ => &["train", "test"],
    };
    prepare_out(&opts.out, split_names, opts.force)?;
    let formats = settings.formats(&opts.agents)?;
    let discovery = discover_report(&settings.env, Some(&formats));
    let mut report = DatasetReport {
        out: opts.out.clone(),
        fidelity: Fidelity::new(opts.target.name()),
        warnings: discovery
            .diagnostics
            .iter()
            .map(ToString::to_string)
            .collect(),
        ..DatasetReport::default()
    };
    let mut found = crate::kept::with_kept(settings, discovery.found, Some(&formats));
    found.sort_by(|a, b| {
        a.path
            .as_os_str()
            .cmp(b.path.as_os_str())
            .then(a.format.cmp(b.format))
    });
    found.dedup_by(|a, b| a.path == b.path);
    // Claude Code's subagent transcripts (`agent-<id>.jsonl`, beside their
    // session or under `<session>/subagents/`), which discovery does not
    // list as sessions: each after its session.
    if opts.subagents == SubagentMode::Separate {
        found = found
            .into_iter()
            .flat_map(|f| {
                let subs = if f.format == "claude" {
                    agentlog_formats::claude::subagent_files(&f.path)
                } else {
                    Vec::new()
                };
                let format = f.format;
                std::iter::once(f).chain(subs.into_iter().map(move |path| Found { path, format }))
            })
            .collect();
        found.dedup_by(|a, b| a.path == b.path);
    }
    let copies = crate::copies::recorded(settings);
    let found: Vec<Found> = found
        .into_iter()
        .filter(|f| {
            let skip = if crate::copies::is_copy(&copies, &f.path) {
                Some("resumed copies (their original is in)")
            } else {
                None
            };
            report.sessions_seen += 1;
            if let Some(why) = skip {
                *report.skipped.entry(why.to_string()).or_default() += 1;
            }
            skip.is_none()
        })
        .collect();

    // By time, the projects the training split has are known first.
    let in_train: HashSet<String> = match opts.split {
        Split::Time { test_since_ms } => {
            let mut set = HashSet::new();
            for chunk in found.chunks(CHUNK) {
                for p in crate::list::par_map(chunk, &|_, _| {}, |f| {
                    let read = crate::list::read_found(f).ok()?;
                    let s = &read.session;
                    let keep =
                        passes_meta(s, opts) && started(s).is_some_and(|t| t < test_since_ms);
                    keep.then(|| project_of(s))
                })
                .into_iter()
                .flatten()
                .flatten()
                {
                    set.insert(p);
                }
            }
            set
        }
        _ => HashSet::new(),
    };

    let mut writers = Vec::new();
    for name in split_names {
        let tmp =
            tempfile::NamedTempFile::new_in(&opts.out).map_err(|e| ApiError::io(&opts.out, e))?;
        writers.push((name.to_string(), BufWriter::new(tmp)));
        report.splits.insert(
            name.to_string(),
            SplitCounts {
                file: format!("{name}.jsonl"),
                ..SplitCounts::default()
            },
        );
    }
    let mut rows = BufWriter::new(
        tempfile::NamedTempFile::new_in(&opts.out).map_err(|e| ApiError::io(&opts.out, e))?,
    );
    let mut projects: BTreeMap<String, HashSet<String>> = BTreeMap::new();
    let mut first_row = true;
    for chunk in found.chunks(CHUNK) {
        let done = crate::list::par_map(chunk, &|_, _| {}, |f| one(f, opts, redactor));
        for (f, outcomes) in chunk.iter().zip(done) {
            let outcomes = match outcomes {
                Some(Ok(o)) => o,
                Some(Err(e)) => {
                    report.warnings.push(e.to_string());
                    *report.skipped.entry("unreadable".into()).or_default() += 1;
                    continue;
                }
                None => {
                    report.warnings.push(format!(
                        "{}: the {} reader failed on this file; please report it",
                        f.path.display(),
                        f.format
                    ));
                    *report.skipped.entry("unreadable".into()).or_default() += 1;
                    continue;
                }
            };
            for outcome in outcomes {
                let ex = match outcome {
                    Outcome::Skipped(why) => {
                        *report.skipped.entry(why.to_string()).or_default() += 1;
                        continue;
                    }
                    Outcome::Example(ex) => ex,
                };
                for (kind, n) in &ex.redacted {
                    *report.redacted.entry(kind.clone()).or_default() += n;
                }
                let split = match &opts.split {
                    Split::None => "train",
                    Split::Project { test_fraction } => {
                        if in_test(&ex.project, *test_fraction) {
                            "test"
                        } else {
                            "train"
                        }
                    }
                    Split::Time { test_since_ms } => {
                        if ex.started_ms.is_some_and(|t| t >= *test_since_ms) {
                            if in_train.contains(&ex.project) {
                                *report
                                    .skipped
                                    .entry(
                                        "after the split time, in a project of the training split"
                                            .into(),
                                    )
                                    .or_default() += 1;
                                continue;
                            }
                            "test"
                        } else {
                            "train"
                        }
                    }
                };
                // Summed in users' words (several kinds of record read the same).
                for l in &ex.fidelity.losses {
                    let what = agentlog_formats::fidelity::plain(&l.what);
                    match report.fidelity.losses.iter_mut().find(|k| k.what == what) {
                        Some(k) => k.count += l.count,
                        None => report
                            .fidelity
                            .losses
                            .push(agentlog_formats::fidelity::Loss {
                                what,
                                count: l.count,
                                first_entry: None,
                            }),
                    }
                }
                report.subagents_inlined += ex.inlined.len() as u64;
                let Some((_, w)) = writers.iter_mut().find(|(n, _)| n == split) else {
                    continue;
                };
                w.write_all(ex.line.as_bytes())
                    .and_then(|_| w.write_all(b"\n"))
                    .map_err(|e| ApiError::io(&opts.out, e))?;
                let counts = report.splits.entry(split.to_string()).or_default();
                counts.examples += 1;
                counts.messages += ex.messages;
                counts.tokens += ex.tokens;
                counts.characters += ex.characters;
                projects
                    .entry(split.to_string())
                    .or_default()
                    .insert(ex.project.clone());
                let row = json!({
                    "split": split,
                    "line": counts.examples,
                    "agent": ex.agent,
                    "id": ex.id,
                    "project": ex.project,
                    "started": ex.started_ms.and_then(Timestamp::rfc3339_millis),
                    "prompts": ex.prompts,
                    "messages": ex.messages,
                    "tokens": ex.tokens,
                    "files": ex.files,
                });
                let sep = if first_row { "\n    " } else { ",\n    " };
                first_row = false;
                rows.write_all(sep.as_bytes())
                    .and_then(|_| rows.write_all(row.to_string().as_bytes()))
                    .map_err(|e| ApiError::io(&opts.out, e))?;
            }
        }
    }
    for (name, set) in &projects {
        if let Some(c) = report.splits.get_mut(name) {
            c.projects = set.len() as u64;
        }
    }
    drop(projects);
    // The splits' files, then the manifest naming them.
    for (name, w) in writers {
        let tmp = w
            .into_inner()
            .map_err(|e| ApiError::io(&opts.out, e.into_error()))?;
        let path = opts.out.join(format!("{name}.jsonl"));
        persist(tmp, &path)?;
    }
    let rows = rows
        .into_inner()
        .map_err(|e| ApiError::io(&opts.out, e.into_error()))?;
    write_manifest(opts, &report, rows)?;
    Ok(report)
}

/// Sessions read at once.
const CHUNK: usize = 16;

/// True when a project goes to the test split.
fn in_test(project: &str, fraction: f64) -> bool {
    let d = Sha256::digest(project.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    (u64::from_be_bytes(b) as f64) / (u64::MAX as f64) < fraction
}

fn prepare_out(out: &Path, splits: &[&str], force: bool) -> Result<(), ApiError> {
    std::fs::create_dir_all(out).map_err(|e| ApiError::io(out, e))?;
    if !force {
        for name in splits
            .iter()
            .map(|s| format!("{s}.jsonl"))
            .chain([MANIFEST.to_string()])
        {
            let p = out.join(&name);
            if p.exists() {
                return Err(ApiError::Dataset {
                    message: format!(
                        "{} already exists; choose a new folder, or replace the files of the earlier run",
                        p.display()
                    ),
                });
            }
        }
    }
    Ok(())
}

fn persist(tmp: tempfile::NamedTempFile, path: &Path) -> Result<(), ApiError> {
    tmp.as_file()
        .sync_all()
        .map_err(|e| ApiError::io(path, e))?;
    tmp.persist(path).map_err(|e| ApiError::io(path, e.error))?;
    Ok(())
}

/// The manifest: the run's options and counts, then one row per example
/// (copied from `rows`, written as the examples were).
fn write_manifest(
    opts: &DatasetOptions,
    report: &DatasetReport,
    rows: tempfile::NamedTempFile,
) -> Result<(), ApiError> {
    let path = opts.out.join(MANIFEST);
    let head = json!({
        "agentlog_version": env!("CARGO_PKG_VERSION"),
        "format": opts.target.name(),
        "run_time": opts.run_time_ms.and_then(Timestamp::rfc3339_millis),
        "filters": {
            "agents": opts.agents,
            "project": opts.project,
            "model": opts.model,
            "since": opts.since_ms.and_then(Timestamp::rfc3339_millis),
            "until": opts.until_ms.and_then(Timestamp::rfc3339_millis),
            "min_turns": opts.min_turns,
            "with_tools": opts.with_tools,
        },
        "subagents": opts.subagents,
        "split": match &opts.split {
            Split::Time { test_since_ms } => json!({
                "by": "time",
                "test_since": Timestamp::rfc3339_millis(*test_since_ms),
            }),
            s => serde_json::to_value(s).unwrap_or(Value::Null),
        },
        "splits": report.splits,
        "sessions_seen": report.sessions_seen,
        "skipped": report.skipped,
        "subagents_inlined": report.subagents_inlined,
        "redaction": {
            "always_on": true,
            "redacted": report.redacted_total(),
            "by_kind": report.redacted,
        },
        "fidelity": report.fidelity.losses,
        "warnings": report.warnings.len(),
    });
    let mut text = serde_json::to_string_pretty(&head).unwrap_or_default();
    // The rows go in as the last member, one line each.
    text.truncate(text.trim_end().len() - 1);
    let text = text.trim_end().to_string() + ",\n  \"examples\": [";
    let mut tmp =
        tempfile::NamedTempFile::new_in(&opts.out).map_err(|e| ApiError::io(&opts.out, e))?;
    {
        let mut w = BufWriter::new(tmp.as_file_mut());
        w.write_all(text.as_bytes())
            .map_err(|e| ApiError::io(&path, e))?;
        let mut r = rows.reopen().map_err(|e| ApiError::io(&path, e))?;
        std::io::copy(&mut r, &mut w).map_err(|e| ApiError::io(&path, e))?;
        w.write_all(b"\n  ]\n}\n")
            .and_then(|_| w.flush())
            .map_err(|e| ApiError::io(&path, e))?;
    }
    persist(tmp, &path)
}

/// What became of one session.
enum Outcome {
    Skipped(&'static str),
    Example(Box<Example>),
}

/// One session's example and what the manifest says of it.
struct Example {
    line: String,
    agent: String,
    id: String,
    project: String,
    started_ms: Option<i64>,
    prompts: usize,
    messages: u64,
    tokens: u64,
    characters: u64,
    files: Vec<Value>,
    inlined: Vec<PathBuf>,
    redacted: BTreeMap<String, u64>,
    fidelity: Fidelity,
}

fn started(s: &Session) -> Option<i64> {
    s.meta
        .created_at
        .as_ref()
        .and_then(Timestamp::millis)
        .or_else(|| {
            s.entries
                .iter()
                .find_map(|e| e.timestamp.as_ref().and_then(Timestamp::millis))
        })
}

fn project_of(s: &Session) -> String {
    s.meta.cwd.clone().unwrap_or_default()
}

/// The filters a session's metadata alone answers: project, model, time.
fn passes_meta(s: &Session, opts: &DatasetOptions) -> bool {
    if let Some(p) = &opts.project {
        if !s
            .meta
            .cwd
            .as_deref()
            .is_some_and(|c| c.contains(p.as_str()))
        {
            return false;
        }
    }
    if let Some(m) = &opts.model {
        let named = |name: &str| name.contains(m.as_str());
        let any = s.meta.model.model.as_deref().is_some_and(named)
            || s.entries.iter().any(|e| {
                e.message()
                    .and_then(|msg| msg.model.as_deref())
                    .is_some_and(named)
            });
        if !any {
            return false;
        }
    }
    let t = started(s);
    if let Some(since) = opts.since_ms {
        if t.is_none_or(|t| t < since) {
            return false;
        }
    }
    if let Some(until) = opts.until_ms {
        if t.is_none_or(|t| t >= until) {
            return false;
        }
    }
    true
}

/// The examples of one discovered session: its own, and with subagents
/// inlined, those of its subagent transcripts that no call of it named
/// (so that none is lost), each after it.
fn one(f: &Found, opts: &DatasetOptions, redactor: &Redactor) -> Result<Vec<Outcome>, ApiError> {
    let read = crate::list::read_found(f)?;
    let inline = opts.subagents == SubagentMode::Inline && f.format == "claude";
    let (outcome, inlined) = of_session(read.session, &f.path, inline, opts, redactor);
    let mut out = vec![outcome];
    if inline {
        let format = registry::by_name("claude").ok_or_else(|| ApiError::UnknownFormat {
            name: "claude".into(),
            known: registry::names(),
        })?;
        for p in agentlog_formats::claude::subagent_files(&f.path) {
            if inlined.contains(&p) {
                continue;
            }
            let session = format.read_path(&p)?.session;
            out.push(of_session(session, &p, false, opts, redactor).0);
        }
    }
    Ok(out)
}

/// One session's example (or why it has none), and the subagent files
/// inlined into it.
fn of_session(
    mut session: Session,
    path: &Path,
    inline: bool,
    opts: &DatasetOptions,
    redactor: &Redactor,
) -> (Outcome, Vec<PathBuf>) {
    if !passes_meta(&session, opts) {
        return (Outcome::Skipped("left out by the filters"), Vec::new());
    }
    let mut redacted = BTreeMap::new();
    count(&mut redacted, redactor.session(&mut session));
    let mut fidelity = Fidelity::new(opts.target.name());
    let mut inliner = Inliner {
        on: inline,
        parent: path,
        files: None,
        redactor,
        inlined: Vec::new(),
        redacted: BTreeMap::new(),
    };
    let mut c = training::conversation(&session, &mut fidelity, &mut inliner);
    let inlined = std::mem::take(&mut inliner.inlined);
    for (k, n) in std::mem::take(&mut inliner.redacted) {
        *redacted.entry(k).or_default() += n;
    }
    let skipped = |why| (Outcome::Skipped(why), inlined.clone());
    if c.prompts < opts.min_turns {
        return skipped("fewer prompts than asked for");
    }
    if opts.with_tools && !c.uses_tools {
        return skipped("no tool call, and only sessions with tool calls were asked for");
    }
    if !c.turns.iter().any(|t| t.speaker == Speaker::Assistant) {
        return skipped("no answer of the model");
    }
    // What is written is checked once more, as written (a secret split
    // across two parts of a message is whole in their joined text).
    for t in &mut c.turns {
        count(&mut redacted, redactor.text(&mut t.text, "text"));
        for call in &mut t.calls {
            count(
                &mut redacted,
                redactor.value(&mut call.arguments, "arguments"),
            );
        }
    }
    training::losses_beyond(&session, &c, opts.target, &mut fidelity);
    let line = training::line(&c, opts.target);
    let mut project = project_of(&session);
    count(&mut redacted, redactor.text(&mut project, "project"));
    let mut files = vec![file_row(path, redactor)];
    files.extend(inlined.iter().map(|p| file_row(p, redactor)));
    let example = Outcome::Example(Box::new(Example {
        characters: characters(&c),
        messages: c.turns.len() as u64,
        tokens: c.tokens,
        prompts: c.prompts,
        line,
        agent: session.meta.agent.as_str().to_string(),
        id: session.meta.id.clone(),
        project,
        started_ms: started(&session),
        files,
        inlined: inlined.clone(),
        redacted,
        fidelity,
    }));
    (example, inlined)
}

fn count(into: &mut BTreeMap<String, u64>, report: agentlog_redact::Report) {
    for f in report.findings {
        *into.entry(f.kind).or_default() += 1;
    }
}

fn characters(c: &Conversation) -> u64 {
    c.turns
        .iter()
        .map(|t| {
            t.text.chars().count()
                + t.calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.to_string().chars().count())
                    .sum::<usize>()
        })
        .sum::<usize>() as u64
}

/// A file that went in: its path, size and SHA-256 (of every file in it,
/// in the order of their paths, for a folder).
fn file_row(path: &Path, redactor: &Redactor) -> Value {
    let mut shown = path.display().to_string();
    redactor.text(&mut shown, "path");
    match hash(path) {
        Some((bytes, sha)) => json!({"path": shown, "bytes": bytes, "sha256": sha}),
        // A session whose file is gone is read from agentlog's archive.
        None => json!({"path": shown, "bytes": null, "sha256": null}),
    }
}

fn hash(path: &Path) -> Option<(u64, String)> {
    let mut h = Sha256::new();
    let mut bytes = 0u64;
    let mut files = vec![path.to_path_buf()];
    if path.is_dir() {
        files = Vec::new();
        files_under(path, &mut files, 0);
        files.sort();
    }
    let mut buf = vec![0u8; 1 << 16];
    for p in files {
        let mut file = std::fs::File::open(&p).ok()?;
        loop {
            let n = file.read(&mut buf).ok()?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
            h.update(&buf[..n]);
        }
    }
    Some((bytes, hex::encode(h.finalize())))
}

/// The files under `dir` (not through links, at most 8 folders deep).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        match e.file_type() {
            Ok(t) if t.is_file() => out.push(e.path()),
            Ok(t) if t.is_dir() && depth < 8 => files_under(&e.path(), out, depth + 1),
            _ => {}
        }
    }
}

/// Inlines the Claude Code subagents a session's tool calls started.
struct Inliner<'a> {
    on: bool,
    parent: &'a Path,
    /// The subagent files beside the parent, by agent id (listed when
    /// first needed).
    files: Option<Vec<PathBuf>>,
    redactor: &'a Redactor,
    inlined: Vec<PathBuf>,
    redacted: BTreeMap<String, u64>,
}

impl Subagents for Inliner<'_> {
    fn inline(&mut self, entry: &Entry, call_id: &str) -> Option<Conversation> {
        if !self.on {
            return None;
        }
        let agent = entry
            .subagent_calls()
            .into_iter()
            .find(|(call, _)| *call == call_id)
            .map(|(_, agent)| agent.to_string())?;
        let parent = self.parent;
        let files = self
            .files
            .get_or_insert_with(|| agentlog_formats::claude::subagent_files(parent));
        let want = format!("agent-{agent}.jsonl");
        let path = files
            .iter()
            .find(|p| p.file_name().and_then(|n| n.to_str()) == Some(want.as_str()))?
            .clone();
        let format = registry::by_name("claude")?;
        let mut session = format.read_path(&path).ok()?.session;
        count(&mut self.redacted, self.redactor.session(&mut session));
        let mut ignored = Fidelity::new("subagent");
        let c = training::conversation(&session, &mut ignored, &mut training::NoSubagents);
        self.inlined.push(path);
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_on_one_side_whatever_its_sessions() {
        let p = "/home/dev/src/tokenizer";
        assert_eq!(in_test(p, 0.5), in_test(p, 0.5));
        assert!(!in_test(p, 0.0));
        assert!(in_test(p, 1.0));
    }
}
