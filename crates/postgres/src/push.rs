//! `agentlog push`: sending what changed on this machine to the server.
//!
//! The server is the only record of what was pushed: a `files` row per
//! machine and path holds how many bytes of the file it has, the file's
//! time, and hashes of its first and last 4 KiB pushed. A push compares
//! each local file with its row: unchanged files are skipped by size and
//! time; an append-only file (pi, Claude Code, Codex) that grew after the
//! same bytes sends only the new whole lines and the entries read from
//! them; any other change sends the whole file again. Each file is sent in
//! one transaction that also moves its row forward, so a push killed or cut
//! off at any point leaves the server with whole files only, and the next
//! push sends exactly what is missing. Rows of one machine never touch
//! another's, so machines push at once without waiting for each other.

use crate::copy;
use crate::{PgError, PgIndex};
use agentlog_formats::discover::Found;
use agentlog_index::extract::{extract, Extracted};
use agentlog_index::files::{hash, incremental, whole_lines};
use agentlog_model::Counted;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Bytes hashed at each end of what was pushed, to tell an append from a
/// rewrite.
const EDGE: usize = 4096;

/// How to push.
pub struct PushOptions {
    /// This machine's name (default: the host name).
    pub machine: String,
    /// The user the sessions belong to (default: the login name).
    pub user: String,
    /// Redact secrets before anything leaves the machine (the built-in
    /// rules of `agentlog-redact`): in the bytes kept and in every entry.
    pub redact: bool,
}

/// How far a push is.
#[derive(Clone, Debug, Default)]
pub struct PushProgress {
    /// Files looked at.
    pub done: usize,
    /// Files to look at.
    pub total: usize,
}

/// What a push did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct PushReport {
    /// Local session files looked at.
    pub files: usize,
    /// Files the server already had.
    pub unchanged: usize,
    /// Files sent whole (new or rewritten).
    pub sent_whole: usize,
    /// Append-only files of which only the new lines were sent.
    pub appended: usize,
    /// Bytes of session files sent (before compression).
    pub bytes: u64,
    /// Bytes sent after compression.
    pub compressed_bytes: u64,
    /// Entries sent.
    pub entries: u64,
    /// Usage rows sent.
    pub usage: u64,
    /// What the redaction replaced in what was sent.
    pub redactions: agentlog_redact::Report,
    /// Files not pushed, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Files whose original bytes are not kept on the server, with the
    /// reason (they can be searched but not exported from it).
    pub without_original: Vec<(String, String)>,
}

/// From this many session files on, a push sends over two connections.
const MANY_FILES: usize = 64;

impl PushReport {
    /// Adds what another sender of the same push did.
    fn merge(&mut self, o: PushReport) {
        self.unchanged += o.unchanged;
        self.sent_whole += o.sent_whole;
        self.appended += o.appended;
        self.bytes += o.bytes;
        self.compressed_bytes += o.compressed_bytes;
        self.entries += o.entries;
        self.usage += o.usage;
        self.redactions.extend(o.redactions);
        self.skipped.extend(o.skipped);
        self.without_original.extend(o.without_original);
    }
}

impl Outcome {
    /// True when applying it writes to the server.
    fn needs_server(&self) -> bool {
        matches!(self, Outcome::Touch { .. } | Outcome::Send(_))
    }
}

/// What the server holds of one file.
#[derive(Clone, Debug)]
struct ServerFile {
    size: i64,
    mtime_ns: i64,
    lines: i64,
    head_hash: i64,
    tail_hash: i64,
}

enum Mode {
    /// Send the whole file, replacing what the server has.
    Whole,
    /// Send the bytes from `from`; entries after line `lines` are new.
    Append { from: i64, lines: i64 },
}

/// A file read and ready to send.
struct Prepared {
    path: String,
    format: &'static str,
    mode: Mode,
    /// The server's size this was planned against (none: a new file).
    planned: Option<i64>,
    size: i64,
    mtime_ns: i64,
    lines: i64,
    head_hash: i64,
    tail_hash: i64,
    /// Compressed bytes to store (none: not kept).
    chunk: Option<Vec<u8>>,
    raw_len: u64,
    extracted: Option<Extracted>,
    diagnostics: u64,
    redactions: agentlog_redact::Report,
    without_original: Option<String>,
}

enum Outcome {
    Unchanged,
    /// Same bytes, new time: only the time is updated.
    Touch {
        path: String,
        mtime_ns: i64,
    },
    Send(Box<Prepared>),
    Skip(String, String),
}

/// Entries a push adds before it updates the server's statistics.
const BULK_ENTRIES: u64 = 5_000;

impl PgIndex {
    /// Pushes the sessions `found` on this machine; `progress` is called as
    /// files are done.
    pub fn push(
        &self,
        found: &[Found],
        opts: &PushOptions,
        progress: &mut dyn FnMut(&PushProgress),
    ) -> Result<PushReport, PgError> {
        self.claim_machine(&opts.machine)?;
        let server = self.server_files(&opts.machine)?;
        let mut report = PushReport {
            files: found.len(),
            ..PushReport::default()
        };
        let workers = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 4)
            .min(found.len().max(1));
        let next = AtomicUsize::new(0);
        let stop = std::sync::atomic::AtomicBool::new(false);
        // Unchanged files (most of them, on a push after the first) are
        // counted where they are found; only the others go to a sender.
        let unchanged = AtomicUsize::new(0);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Outcome>(workers * 8);
        let rx = Mutex::new(rx);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        // Files are sent over two connections at once when there are many:
        // the server's work for one file (its words, its index entries)
        // then overlaps the next; each file is still one transaction.
        let senders = if found.len() >= MANY_FILES { 2 } else { 1 };
        let (server_ref, next_ref, stop_ref, rx_ref, unchanged_ref) =
            (&server, &next, &stop, &rx, &unchanged);
        let result = std::thread::scope(|scope| -> Result<Vec<PushReport>, PgError> {
            for _ in 0..workers {
                let tx = tx.clone();
                scope.spawn(move || loop {
                    if stop_ref.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next_ref.fetch_add(1, Ordering::Relaxed);
                    let Some(f) = found.get(i) else { break };
                    let key = f.path.to_string_lossy();
                    let outcome = prepare(f, server_ref.get(key.as_ref()), opts);
                    if let Outcome::Unchanged = outcome {
                        unchanged_ref.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    if tx.send(outcome).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            let handles: Vec<_> = (0..senders)
                .map(|k| {
                    let done = done_tx.clone();
                    scope.spawn(move || -> Result<PushReport, PgError> {
                        // The first sender uses this connection; the others
                        // open their own when they first need one.
                        let mut own: Option<postgres::Client> = None;
                        let mut mine = PushReport::default();
                        let mut result = Ok(());
                        loop {
                            let next = rx_ref
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .recv();
                            let Ok(outcome) = next else { break };
                            if result.is_err() || stop_ref.load(Ordering::Relaxed) {
                                // Drained, so the preparers are never stuck.
                                continue;
                            }
                            result = if k == 0 {
                                self.db()
                                    .and_then(|mut c| self.apply(&mut c, outcome, opts, &mut mine))
                            } else {
                                match &mut own {
                                    Some(c) => self.apply(c, outcome, opts, &mut mine),
                                    None if !outcome.needs_server() => {
                                        self.apply_local(outcome, &mut mine);
                                        Ok(())
                                    }
                                    None => self.connect_again().and_then(|c| {
                                        self.apply(own.insert(c), outcome, opts, &mut mine)
                                    }),
                                }
                            };
                            if result.is_err() {
                                stop_ref.store(true, Ordering::Relaxed);
                            }
                            let _ = done.send(());
                        }
                        result.map(|()| mine)
                    })
                })
                .collect();
            drop(done_tx);
            let mut p = PushProgress {
                done: 0,
                total: found.len(),
            };
            let mut sent = 0;
            for () in done_rx.iter() {
                sent += 1;
                p.done = sent + unchanged_ref.load(Ordering::Relaxed);
                progress(&p);
            }
            p.done = sent + unchanged_ref.load(Ordering::Relaxed);
            progress(&p);
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(PgError::Data {
                            url: self.url.clone(),
                            message: "a sending thread failed".into(),
                        })
                    })
                })
                .collect()
        })?;
        for r in result {
            report.merge(r);
        }
        report.unchanged += unchanged.into_inner();
        report.skipped.sort();
        report.without_original.sort();
        if report.entries >= BULK_ENTRIES {
            // The planner's statistics and the index's pending words, now
            // rather than when autovacuum comes by: the searches just
            // after a first push are planned from them.
            self.db()?
                .execute("SELECT agentlog_after_bulk_push()", &[])
                .map_err(|e| self.err("updating the server's statistics", &e))?;
        }
        Ok(report)
    }

    /// Claims the machine name for this role when no role has it, and
    /// fails when another has: rows may be pushed only under a name of the
    /// role's own (the server refuses others), and a push that could send
    /// nothing must not look like one that had nothing to send. Whose the
    /// name is stays unsaid (a pusher sees only its own names).
    fn claim_machine(&self, machine: &str) -> Result<(), PgError> {
        let mut db = self.db()?;
        db.execute(
            "INSERT INTO machines(name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
            &[&machine],
        )
        .map_err(|e| self.err("claiming the machine name", &e))?;
        let mine: bool = db
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM machines WHERE name = $1 AND owner = current_user)",
                &[&machine],
            )
            .map_err(|e| self.err("looking up the machine name", &e))?
            .get(0);
        if mine {
            Ok(())
        } else {
            Err(PgError::MachineTaken {
                url: self.url.clone(),
                machine: machine.to_string(),
            })
        }
    }

    fn server_files(
        &self,
        machine: &str,
    ) -> Result<std::collections::HashMap<String, ServerFile>, PgError> {
        let rows = self
            .db()?
            .query(
                "SELECT path, size, mtime_ns, lines, head_hash, tail_hash FROM files
                 WHERE machine = $1",
                &[&machine],
            )
            .map_err(|e| self.err("reading what was pushed before", &e))?;
        Ok(rows
            .into_iter()
            .map(|r| {
                (
                    r.get::<_, String>(0),
                    ServerFile {
                        size: r.get(1),
                        mtime_ns: r.get(2),
                        lines: r.get(3),
                        head_hash: r.get(4),
                        tail_hash: r.get(5),
                    },
                )
            })
            .collect())
    }

    /// Counts an outcome that needs nothing of the server.
    fn apply_local(&self, outcome: Outcome, report: &mut PushReport) {
        match outcome {
            Outcome::Unchanged => report.unchanged += 1,
            Outcome::Skip(path, why) => report.skipped.push((path, why)),
            Outcome::Touch { .. } | Outcome::Send(_) => {}
        }
    }

    /// Opens another connection to the same database.
    fn connect_again(&self) -> Result<postgres::Client, PgError> {
        self.config
            .connect(postgres::NoTls)
            .map_err(|e| PgError::Connect {
                url: self.url.clone(),
                message: crate::describe(&e),
            })
    }

    fn apply(
        &self,
        conn: &mut postgres::Client,
        outcome: Outcome,
        opts: &PushOptions,
        report: &mut PushReport,
    ) -> Result<(), PgError> {
        match outcome {
            o @ (Outcome::Unchanged | Outcome::Skip(..)) => self.apply_local(o, report),
            Outcome::Touch { path, mtime_ns } => {
                report.unchanged += 1;
                conn.execute(
                    "UPDATE files SET mtime_ns = $3 WHERE machine = $1 AND path = $2",
                    &[&opts.machine, &path, &mtime_ns],
                )
                .map_err(|e| self.err(&format!("{path}: updating its time"), &e))?;
            }
            Outcome::Send(p) => {
                let sent = self.send(conn, &p, opts)?;
                if !sent {
                    report.skipped.push((
                        p.path.clone(),
                        "changed on the server during this push (by another push of this machine); the next push sends it".to_string(),
                    ));
                    return Ok(());
                }
                match p.mode {
                    Mode::Whole => report.sent_whole += 1,
                    Mode::Append { .. } => report.appended += 1,
                }
                report.bytes += p.raw_len;
                report.compressed_bytes += p.chunk.as_ref().map_or(0, |c| c.len() as u64);
                report.redactions.extend(p.redactions.clone());
                if let Some(x) = &p.extracted {
                    let (docs, usage) = new_rows(x, &p.mode);
                    report.entries += docs.len() as u64;
                    report.usage += usage.len() as u64;
                }
                if let Some(why) = &p.without_original {
                    report.without_original.push((p.path.clone(), why.clone()));
                }
            }
        }
        Ok(())
    }

    /// Sends one file in one transaction; false when the server's row
    /// changed since the plan (nothing was written).
    fn send(
        &self,
        conn: &mut postgres::Client,
        p: &Prepared,
        opts: &PushOptions,
    ) -> Result<bool, PgError> {
        let url = self.url.clone();
        let ctx = |what: &str| format!("{}: {what}", p.path);
        let err = |what: &str, e: &postgres::Error| PgError::sql(&url, &ctx(what), e);
        let mut tx = conn
            .transaction()
            .map_err(|e| err("starting the transaction", &e))?;
        let row = tx
            .query_opt(
                "SELECT id, size FROM files WHERE machine = $1 AND path = $2 FOR UPDATE",
                &[&opts.machine, &p.path],
            )
            .map_err(|e| err("locking its row", &e))?;
        let id: i64 = match (row, p.planned) {
            (Some(r), Some(planned)) if r.get::<_, i64>(1) == planned => r.get(0),
            (None, None) => {
                let r = tx
                    .query_opt(
                        "INSERT INTO files(machine, username, path, format, size, mtime_ns, lines,
                           head_hash, tail_hash)
                         VALUES ($1, $2, $3, $4, 0, 0, 0, 0, 0)
                         ON CONFLICT (machine, path) DO NOTHING RETURNING id",
                        &[&opts.machine, &opts.user, &p.path, &p.format],
                    )
                    .map_err(|e| err("adding its row", &e))?;
                match r {
                    Some(r) => r.get(0),
                    None => return Ok(false),
                }
            }
            _ => return Ok(false),
        };
        let (from, whole) = match p.mode {
            Mode::Whole => (0i64, true),
            Mode::Append { from, .. } => (from, false),
        };
        // The response ids whose first row may change: those of the rows
        // removed and of the rows added.
        let mut recount: Vec<String> = match &p.extracted {
            Some(x) => new_rows(x, &p.mode)
                .1
                .iter()
                .filter_map(|u| u.response_id.as_deref())
                .map(|r| copy::clean(r).into_owned())
                .collect(),
            None => Vec::new(),
        };
        if whole {
            let old: Vec<String> = tx
                .query_one(
                    "SELECT coalesce(array_agg(DISTINCT response_id), '{}') FROM usage
                     WHERE session = $1 AND response_id IS NOT NULL",
                    &[&id],
                )
                .map_err(|e| err("reading its old responses", &e))?
                .get(0);
            recount.extend(old);
        }
        recount.sort_unstable();
        recount.dedup();
        if whole {
            if !recount.is_empty() {
                // Before deleting (see agentlog_lock_responses).
                tx.execute("SELECT agentlog_lock_responses($1)", &[&recount])
                    .map_err(|e| err("waiting for its responses", &e))?;
            }
            tx.execute("DELETE FROM chunks WHERE file = $1", &[&id])
                .map_err(|e| err("removing its old bytes", &e))?;
            tx.execute("DELETE FROM sessions WHERE id = $1", &[&id])
                .map_err(|e| err("removing its old entries", &e))?;
        }
        if let Some(chunk) = &p.chunk {
            tx.execute(
                "INSERT INTO chunks(file, start_offset, end_offset, data) VALUES ($1, $2, $3, $4)",
                &[&id, &from, &p.size, chunk],
            )
            .map_err(|e| err("storing its bytes", &e))?;
        } else if !whole {
            return Err(PgError::Data {
                url,
                message: ctx("an append without bytes"),
            });
        }
        tx.execute(
            "UPDATE files SET username = $2, format = $3, size = $4, mtime_ns = $5, lines = $6,
               head_hash = $7, tail_hash = $8, pushed_at = now()
             WHERE id = $1",
            &[
                &id,
                &opts.user,
                &p.format,
                &p.size,
                &p.mtime_ns,
                &p.lines,
                &p.head_hash,
                &p.tail_hash,
            ],
        )
        .map_err(|e| err("updating its row", &e))?;
        if let Some(x) = &p.extracted {
            write_session(&mut tx, id, p, x, opts).map_err(|e| err("storing its entries", &e))?;
        }
        if !recount.is_empty() {
            tx.execute("SELECT agentlog_recount($1)", &[&recount])
                .map_err(|e| err("counting its responses", &e))?;
        }
        tx.commit().map_err(|e| err("committing", &e))?;
        Ok(true)
    }
}

/// Returns the documents and usage rows to insert: all of them for a whole
/// file, those after the lines the server had for an append.
fn new_rows<'x>(
    x: &'x Extracted,
    mode: &Mode,
) -> (
    Vec<&'x agentlog_index::extract::Doc>,
    Vec<&'x agentlog_index::extract::UsageRow>,
) {
    match mode {
        Mode::Whole => (x.docs.iter().collect(), x.usage.iter().collect()),
        Mode::Append { lines, .. } => {
            let new = |l: Option<u64>| l.is_some_and(|l| l as i64 > *lines);
            (
                x.docs.iter().filter(|d| new(d.line)).collect(),
                x.usage.iter().filter(|u| new(u.line)).collect(),
            )
        }
    }
}

fn write_session(
    tx: &mut postgres::Transaction<'_>,
    id: i64,
    p: &Prepared,
    x: &Extracted,
    opts: &PushOptions,
) -> Result<(), postgres::Error> {
    let s = &x.session;
    let count = |f: &dyn Fn(&agentlog_index::extract::Doc) -> bool| {
        x.docs.iter().filter(|d| f(d)).count() as i64
    };
    let entries = x.docs.len() as i64;
    let messages = count(&|d| d.counted.is_message());
    let users = count(&|d| d.counted == Counted::Prompt);
    let assistants = count(&|d| d.counted == Counted::Reply);
    let tool_calls: i64 = x.docs.iter().map(|d| i64::from(d.tool_calls)).sum();
    let diagnostics = p.diagnostics as i64;
    let project = s.project.as_deref().map(copy::clean);
    let title = s.title.as_deref().map(copy::clean);
    let first = s.first_prompt.as_deref().map(copy::clean);
    tx.execute(
        "INSERT INTO sessions(id, machine, username, session_id, agent, format, path, project,
           title, first_prompt, created_ms, updated_ms, entries, messages, user_messages,
           assistant_messages, tool_calls, diagnostics)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
         ON CONFLICT (id) DO UPDATE SET username = $3, session_id = $4, agent = $5, format = $6,
           project = $8, title = $9, first_prompt = $10, created_ms = $11, updated_ms = $12,
           entries = $13, messages = $14, user_messages = $15, assistant_messages = $16,
           tool_calls = $17, diagnostics = $18",
        &[
            &id,
            &opts.machine,
            &opts.user,
            &copy::clean(&s.session_id).as_ref(),
            &s.agent,
            &p.format,
            &p.path,
            &project.as_deref(),
            &title.as_deref(),
            &first.as_deref(),
            &s.created_ms,
            &s.updated_ms,
            &entries,
            &messages,
            &users,
            &assistants,
            &tool_calls,
            &diagnostics,
        ],
    )?;
    let (docs, usage) = new_rows(x, &p.mode);
    if !docs.is_empty() {
        let mut buf = String::new();
        for d in docs {
            buf.push_str(&id.to_string());
            buf.push('\t');
            copy::text(&mut buf, &d.entry_id);
            buf.push('\t');
            copy::opt_num(&mut buf, d.line);
            buf.push('\t');
            copy::opt_num(&mut buf, d.ts_ms);
            buf.push('\t');
            copy::opt_text(&mut buf, d.role.as_deref());
            buf.push('\t');
            copy::text(&mut buf, d.kind);
            buf.push('\t');
            buf.push_str(counted_code(d.counted));
            buf.push('\t');
            buf.push_str(&d.tool_calls.to_string());
            buf.push('\t');
            copy::text_array(&mut buf, &d.tool_names);
            buf.push('\t');
            buf.push_str(if d.thinking.is_empty() { "f" } else { "t" });
            for col in [&d.text, &d.thinking, &d.tools, &d.output] {
                buf.push('\t');
                copy::text(&mut buf, col);
            }
            buf.push('\t');
            copy::text(
                &mut buf,
                &crate::words::tsvector(&[
                    (&d.text, 'A'),
                    (&d.thinking, 'C'),
                    (&d.tools, 'B'),
                    (&d.output, 'D'),
                ]),
            );
            buf.push('\n');
        }
        // COPY does not run under row-level security: rows go through a
        // temporary table (emptied at commit, each row given its id there)
        // and one INSERT per table. Its name has the schema's version: a
        // pooled server connection may keep another agentlog's.
        tx.batch_execute(
            "CREATE TEMP TABLE IF NOT EXISTS docs_v2_in(id bigint DEFAULT nextval('docs_id_seq'),
               session bigint, entry_id text, line bigint,
               ts_ms bigint, role text, kind text, counted smallint, tool_calls integer,
               tool_names text[], thinking_present boolean, text text, thinking text,
               tools text, output text, words tsvector) ON COMMIT DELETE ROWS",
        )?;
        let mut w = tx.copy_in(
            "COPY docs_v2_in(session, entry_id, line, ts_ms, role, kind, counted, tool_calls,
               tool_names, thinking_present, text, thinking, tools, output, words) FROM STDIN",
        )?;
        // A write error surfaces again, with the server's message, at finish.
        let _ = w.write_all(buf.as_bytes());
        w.finish()?;
        tx.batch_execute(
            "INSERT INTO docs(id, session, entry_id, line, ts_ms, role, kind, counted, tool_calls,
               tool_names, thinking_present, text, thinking, tools, output)
             SELECT id, session, entry_id, line, ts_ms, role, kind, counted, tool_calls,
               tool_names, thinking_present, text, thinking, tools, output FROM docs_v2_in;
             INSERT INTO doc_words(id, session, ts_ms, words)
             SELECT id, session, ts_ms, words FROM docs_v2_in",
        )?;
    }
    if !usage.is_empty() {
        let mut buf = String::new();
        for u in usage {
            buf.push_str(&id.to_string());
            buf.push('\t');
            copy::text(&mut buf, &u.entry_id);
            buf.push('\t');
            copy::opt_num(&mut buf, u.line);
            buf.push('\t');
            copy::opt_num(&mut buf, u.ts_ms);
            buf.push('\t');
            copy::opt_text(&mut buf, u.model.as_deref());
            buf.push('\t');
            copy::opt_text(&mut buf, u.response_id.as_deref());
            for n in [u.input, u.output, u.cache_read, u.cache_write, u.reasoning] {
                buf.push('\t');
                buf.push_str(&n.min(i64::MAX as u64).to_string());
            }
            buf.push('\t');
            copy::opt_num(&mut buf, u.cost_usd.filter(|c| c.is_finite()));
            buf.push('\n');
        }
        tx.batch_execute(
            "CREATE TEMP TABLE IF NOT EXISTS usage_in(session bigint, entry_id text, line bigint,
               ts_ms bigint, model text, response_id text, input bigint, output bigint,
               cache_read bigint, cache_write bigint, reasoning bigint,
               cost_usd double precision) ON COMMIT DELETE ROWS",
        )?;
        let mut w = tx.copy_in("COPY usage_in FROM STDIN")?;
        let _ = w.write_all(buf.as_bytes());
        w.finish()?;
        tx.batch_execute(
            "INSERT INTO usage(session, entry_id, line, ts_ms, model, response_id, input, output,
               cache_read, cache_write, reasoning, cost_usd)
             SELECT * FROM usage_in",
        )?;
    }
    Ok(())
}

/// How `docs.counted` stores what an entry counts as (the SQLite index's
/// codes): 0 not a message, 1 another message, 2 a user prompt, 3 a reply.
fn counted_code(c: Counted) -> &'static str {
    match c {
        Counted::Not => "0",
        Counted::Other => "1",
        Counted::Prompt => "2",
        Counted::Reply => "3",
    }
}

fn mtime_ns(m: &std::fs::Metadata) -> i64 {
    m.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos().min(i64::MAX as u128) as i64)
}

fn edges(bytes: &[u8], end: usize) -> (i64, i64) {
    (
        hash(&bytes[..end.min(EDGE)]),
        hash(&bytes[end.saturating_sub(EDGE)..end]),
    )
}

fn deflate(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut e = flate2::write::DeflateEncoder::new(
        Vec::with_capacity(bytes.len() / 4),
        flate2::Compression::fast(),
    );
    e.write_all(bytes)?;
    e.finish()
}

/// True for a file SQLite wrote (a Cursor store): bytes that a text
/// redaction would break.
fn is_sqlite(bytes: &[u8]) -> bool {
    bytes.starts_with(b"SQLite format 3\0")
}

fn prepare(f: &Found, server: Option<&ServerFile>, opts: &PushOptions) -> Outcome {
    match try_prepare(f, server, opts) {
        Ok(o) => o,
        Err(why) => Outcome::Skip(f.path.to_string_lossy().into_owned(), why),
    }
}

fn try_prepare(
    f: &Found,
    server: Option<&ServerFile>,
    opts: &PushOptions,
) -> Result<Outcome, String> {
    let path = f.path.to_string_lossy().into_owned();
    let format = agentlog_formats::registry::by_name(f.format)
        .ok_or_else(|| format!("unknown format {}", f.format))?;
    // A file its agent deleted is pushed from agentlog's archive, as kept.
    let (len, mtime, is_dir) = match std::fs::metadata(&f.path) {
        Ok(m) => (m.len(), mtime_ns(&m), m.is_dir()),
        Err(e) => match agentlog_formats::archived::stat(&f.path) {
            Some(k) => (k.size, k.mtime_ns, false),
            None => return Err(e.to_string()),
        },
    };
    if is_dir {
        // A session kept as several files: its entries are pushed, its
        // files are not kept.
        if server.is_some_and(|s| s.mtime_ns == mtime) {
            return Ok(Outcome::Unchanged);
        }
        let mut read = format.read_path(&f.path).map_err(|e| e.to_string())?;
        let redactions = redact_session(opts, &mut read.session)?;
        let x = extract(&read.session);
        return Ok(Outcome::Send(Box::new(Prepared {
            path,
            format: f.format,
            mode: Mode::Whole,
            planned: server.map(|s| s.size),
            size: 0,
            mtime_ns: mtime,
            lines: 0,
            head_hash: 0,
            tail_hash: 0,
            chunk: None,
            raw_len: 0,
            extracted: Some(x),
            diagnostics: read.diagnostics.len() as u64,
            redactions,
            without_original: Some("a directory; its files are not kept".to_string()),
        })));
    }
    if let Some(s) = server {
        if s.size == len as i64 && s.mtime_ns == mtime {
            return Ok(Outcome::Unchanged);
        }
    }
    let bytes = agentlog_formats::input::read_file(&f.path).map_err(|e| e.to_string())?;
    let appendable = incremental(f.format);
    let end = if appendable {
        whole_lines(&bytes)
    } else {
        bytes.len()
    };
    let (head_hash, tail_hash) = edges(&bytes, end);
    let lines = memchr_count(&bytes[..end]);
    let mut mode = Mode::Whole;
    if let Some(s) = server {
        if s.size == end as i64 && s.head_hash == head_hash && s.tail_hash == tail_hash {
            return Ok(if s.mtime_ns == mtime {
                Outcome::Unchanged
            } else {
                Outcome::Touch {
                    path,
                    mtime_ns: mtime,
                }
            });
        }
        let from = s.size.max(0) as usize;
        if appendable && from > 0 && from < end && (s.head_hash, s.tail_hash) == edges(&bytes, from)
        {
            mode = Mode::Append {
                from: s.size,
                lines: s.lines,
            };
        }
    }
    let sqlite = is_sqlite(&bytes);
    let mut redactions = agentlog_redact::Report::default();
    let mut without_original = None;
    let (whole, chunk_raw): (std::borrow::Cow<'_, [u8]>, std::borrow::Cow<'_, [u8]>) =
        match (opts.redact, sqlite) {
            (true, false) => {
                let r = redactor()?;
                let cannot = |e: agentlog_redact::RedactError| {
                    format!("cannot be redacted ({e}); push with --no-redact to send it as it is")
                };
                let (all, report) = r.bytes(&bytes[..end]).map_err(cannot)?;
                let chunk = match mode {
                    Mode::Whole => {
                        redactions = report;
                        std::borrow::Cow::Owned(all.clone())
                    }
                    Mode::Append { from, .. } => {
                        let (c, report) = r.bytes(&bytes[from as usize..end]).map_err(cannot)?;
                        redactions = report;
                        std::borrow::Cow::Owned(c)
                    }
                };
                (std::borrow::Cow::Owned(all), chunk)
            }
            _ => {
                let chunk = match mode {
                    Mode::Whole => &bytes[..end],
                    Mode::Append { from, .. } => &bytes[from as usize..end],
                };
                (
                    std::borrow::Cow::Borrowed(&bytes[..end]),
                    std::borrow::Cow::Borrowed(chunk),
                )
            }
        };
    let mut read = if sqlite {
        format.read_path(&f.path)
    } else {
        format.read_bytes(&f.path, &whole)
    }
    .map_err(|e| e.to_string())?;
    let redact_store = sqlite && opts.redact;
    if redact_store {
        redactions = redact_session(opts, &mut read.session)?;
    }
    let x = extract(&read.session);
    let chunk = if redact_store {
        without_original = Some(
            "a SQLite store, which redaction cannot rewrite; push with --no-redact to keep it"
                .to_string(),
        );
        None
    } else {
        Some(deflate(&chunk_raw).map_err(|e| e.to_string())?)
    };
    Ok(Outcome::Send(Box::new(Prepared {
        path,
        format: f.format,
        raw_len: chunk_raw.len() as u64,
        mode: if chunk.is_none() { Mode::Whole } else { mode },
        planned: server.map(|s| s.size),
        size: end as i64,
        mtime_ns: mtime,
        lines: lines as i64,
        head_hash,
        tail_hash,
        chunk,
        extracted: Some(x),
        diagnostics: read.diagnostics.len() as u64,
        redactions,
        without_original,
    })))
}

/// Returns the built-in redactor.
fn redactor() -> Result<&'static agentlog_redact::Redactor, String> {
    agentlog_redact::Redactor::builtin().map_err(|e| e.to_string())
}

/// Redacts a session read from files whose bytes are not sent.
fn redact_session(
    opts: &PushOptions,
    session: &mut agentlog_model::Session,
) -> Result<agentlog_redact::Report, String> {
    if !opts.redact {
        return Ok(agentlog_redact::Report::default());
    }
    Ok(redactor()?.session(session))
}

fn memchr_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}
