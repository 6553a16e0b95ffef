//! acpx's session store: the `<acpxRecordId>.json` snapshot and its
//! `<acpxRecordId>.events.ndjson` audit log, written the way the acpx
//! session model specifies.
//!
//! Every event goes through the same six steps ([`AcpxSession::record_event`]):
//!
//! 1. `acpx.audit_seq` is incremented;
//! 2. the NDJSON envelope is built with that `seq`;
//! 3. one line is appended to the active segment (rotating first when the
//!    line would take the segment past `max_segment_bytes`);
//! 4. `acpx.event_log.last_seq` and `last_write_at` are updated;
//! 5. the snapshot is updated: the thread (through the ACP mapping for
//!    `session_update` events), the capped `acpx.audit_events` ring,
//!    `last_turn`, `last_control_update`, the agent exit fields;
//! 6. the snapshot is written atomically (temp file, fsync, rename,
//!    directory fsync).
//!
//! Failure policy: when the append fails, the error goes into
//! `acpx.event_log.last_write_error` and the snapshot is still written; when
//! writing the snapshot fails, the call returns the error.
//!
//! Where the seed and the real acpx differ (file names `.stream.ndjson`,
//! bare JSON-RPC lines, a flat snake_case record, `max_segments` counting
//! only rotated files), this store follows the seed; records in acpx's own
//! shapes can still be opened, and are written back in their shape.
//!
//! ```no_run
//! use agentlog_store::acpx::{AcpxStore, CreateParams};
//! let store = AcpxStore::new("/home/me/.acpx/sessions");
//! let mut session = store.create(CreateParams { cwd: Some("/repo".into()), ..CreateParams::default() })?;
//! session.send_prompt("req_1", &[serde_json::json!({"type": "text", "text": "hello"})], false)?;
//! session.session_update(Some("req_1"), serde_json::json!({
//!     "sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
//! }))?;
//! session.prompt_done("req_1", "end_turn", serde_json::json!({"requested": 0, "approved": 0, "denied": 0, "cancelled": 0}))?;
//! # Ok::<(), agentlog_store::StoreError>(())
//! ```

mod rotation;

pub use rotation::{rotate, segment_count};

use crate::{AppendOptions, AppendWriter, LockMode, StoreError, SyncPolicy};
use agentlog_formats::acpx::events::{self, segment_path, EventEnvelope, ReadEvent, EVENT_VERSION};
use agentlog_formats::acpx::{acp, record_to_string, Layout, Opt, SessionRecord, SCHEMA};
use agentlog_formats::Diagnostic;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// How a store rotates and syncs.
#[derive(Clone, Copy, Debug)]
pub struct AcpxOptions {
    /// Size at which the active segment is rotated (64 MiB).
    pub max_segment_bytes: u64,
    /// Segment files kept, the active one included (5).
    pub max_segments: u64,
    /// Entries kept in `acpx.audit_events` (100).
    pub audit_ring: usize,
    /// The fsync policy of the event log.
    pub sync: SyncPolicy,
}

impl Default for AcpxOptions {
    fn default() -> Self {
        AcpxOptions {
            max_segment_bytes: 64 * 1024 * 1024,
            max_segments: 5,
            audit_ring: 100,
            sync: SyncPolicy::EveryEntry,
        }
    }
}

/// A directory of acpx session records and event logs.
#[derive(Clone, Debug)]
pub struct AcpxStore {
    dir: PathBuf,
    opts: AcpxOptions,
}

/// What a new session starts with.
#[derive(Clone, Debug, Default)]
pub struct CreateParams {
    /// The record id (a new UUID when `None`).
    pub acpx_record_id: Option<String>,
    /// The ACP session id.
    pub acp_session_id: Option<String>,
    /// The command that starts the agent.
    pub agent_command: Option<String>,
    /// The working directory.
    pub cwd: Option<String>,
    /// The session's name.
    pub name: Option<String>,
}

/// An event to record.
#[derive(Clone, Debug)]
pub struct NewEvent {
    /// `prompt`, `control`, `lifecycle` or `queue`.
    pub stream: &'static str,
    /// `acp`, `runtime`, `queue` or `client`.
    pub source: &'static str,
    /// The event type.
    pub kind: String,
    /// The request the event belongs to.
    pub request_id: Option<String>,
    /// The body.
    pub payload: Value,
}

/// What recording an event did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// The event's sequence number.
    pub seq: u64,
    /// False when the append failed (the reason is in
    /// `acpx.event_log.last_write_error`).
    pub logged: bool,
}

impl AcpxStore {
    /// Returns a store in `dir` with the default options.
    pub fn new(dir: impl Into<PathBuf>) -> AcpxStore {
        Self::with_options(dir, AcpxOptions::default())
    }

    /// Returns a store in `dir`.
    pub fn with_options(dir: impl Into<PathBuf>, opts: AcpxOptions) -> AcpxStore {
        AcpxStore {
            dir: dir.into(),
            opts,
        }
    }

    /// Returns acpx's default directory under `home` (`~/.acpx/sessions`).
    pub fn default_dir(home: &Path) -> PathBuf {
        agentlog_formats::acpx::sessions_dir(home)
    }

    /// Returns the directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Returns the path of a record.
    pub fn record_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Creates a session and writes its first snapshot; fails when a record
    /// with that id exists.
    pub fn create(&self, params: CreateParams) -> Result<AcpxSession, StoreError> {
        let id = params
            .acpx_record_id
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        crate::names::validate_name(&id)?;
        let path = self.record_path(&id);
        if path.exists() {
            return Err(StoreError::Invalid(format!(
                "{}: a session record with id {id:?} exists; open it instead",
                path.display()
            )));
        }
        let now = now();
        let mut record = SessionRecord::new(id.clone());
        record.acp_session_id = params.acp_session_id.into();
        record.agent_command = params.agent_command.into();
        record.cwd = params.cwd.into();
        record.name = params.name.into();
        record.created_at = Opt::Set(now.clone());
        record.last_used_at = Opt::Set(now.clone());
        record.closed = Opt::Set(false);
        record.closed_at = Opt::Null;
        record.thread_mut().updated_at = Opt::Set(now);
        let acpx = record.acpx_mut();
        acpx.audit_seq = Opt::Set(0);
        acpx.audit_dropped_count = Opt::Set(0);
        acpx.audit_events = Opt::Set(Vec::new());
        acpx.last_turn = Opt::Null;
        acpx.last_control_update = Opt::Null;
        let mut session = AcpxSession {
            dir: self.dir.clone(),
            id,
            opts: self.opts,
            record,
            layout: Layout::Seed,
            key_order: Vec::new(),
            writer: None,
            pending_controls: HashMap::new(),
        };
        session.refresh_event_log(None);
        session.persist()?;
        Ok(session)
    }

    /// Loads a record (any of the three shapes) without opening it for
    /// writing.
    pub fn load(&self, id: &str) -> Result<SessionRecord, StoreError> {
        Ok(self.load_parsed(id)?.record)
    }

    fn load_parsed(&self, id: &str) -> Result<agentlog_formats::acpx::ParsedRecord, StoreError> {
        crate::names::validate_name(id)?;
        let path = self.record_path(id);
        let bytes = std::fs::read(&path).map_err(|e| StoreError::io(&path, "read", e))?;
        let parsed = agentlog_formats::acpx::read_record(&path, &bytes)?;
        if parsed.record.schema != SCHEMA {
            return Err(StoreError::Invalid(format!(
                "{}: schema {:?} is not {SCHEMA:?}; only {SCHEMA} records are valid",
                path.display(),
                parsed.record.schema
            )));
        }
        Ok(parsed)
    }

    /// Opens a session to record more events. The next sequence number
    /// follows both the snapshot's `audit_seq` and the last event in the
    /// log, so it stays strictly increasing even when the process died
    /// between an append and the snapshot.
    pub fn open(&self, id: &str) -> Result<AcpxSession, StoreError> {
        let parsed = self.load_parsed(id)?;
        let mut session = AcpxSession {
            dir: self.dir.clone(),
            id: id.to_string(),
            opts: self.opts,
            record: parsed.record,
            layout: parsed.layout,
            key_order: parsed.key_order,
            writer: None,
            pending_controls: HashMap::new(),
        };
        let logged = last_logged_seq(&self.dir, id);
        // acpx's own shapes keep the counter at the top level (`last_seq`).
        let top = session
            .record
            .extra
            .get("lastSeq")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let acpx = session.record.acpx_mut();
        let seq = acpx
            .audit_seq
            .get()
            .copied()
            .unwrap_or(0)
            .max(
                acpx.event_log
                    .get()
                    .and_then(|l| l.last_seq.get().copied())
                    .unwrap_or(0),
            )
            .max(logged.unwrap_or(0))
            .max(top);
        acpx.audit_seq = Opt::Set(seq);
        Ok(session)
    }

    /// Returns the ids of the records in the store, sorted.
    pub fn list(&self) -> Result<Vec<String>, StoreError> {
        let rd = match std::fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&self.dir, "read directory", e)),
        };
        let mut ids: Vec<String> = rd
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let id = name.strip_suffix(".json")?;
                (!id.starts_with('.') && id != "index").then(|| id.to_string())
            })
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// Reads every event of a session, oldest segment first.
    pub fn read_events(&self, id: &str) -> Result<(Vec<ReadEvent>, Vec<Diagnostic>), StoreError> {
        crate::names::validate_name(id)?;
        Ok(events::read_all(&self.dir, id)?)
    }
}

/// A session open for recording events.
#[derive(Debug)]
pub struct AcpxSession {
    dir: PathBuf,
    id: String,
    opts: AcpxOptions,
    record: SessionRecord,
    layout: Layout,
    key_order: Vec<String>,
    writer: Option<AppendWriter>,
    pending_controls: HashMap<String, Value>,
}

impl AcpxSession {
    /// Returns the record id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Returns the current snapshot.
    pub fn record(&self) -> &SessionRecord {
        &self.record
    }

    /// Returns the path of the active event segment.
    pub fn active_path(&self) -> PathBuf {
        segment_path(&self.dir, &self.id, 0)
    }

    /// Records one event through the six steps (see the module docs).
    pub fn record_event(&mut self, ev: NewEvent) -> Result<Recorded, StoreError> {
        self.record_event_with(ev, |_| {})
    }

    fn record_event_with(
        &mut self,
        ev: NewEvent,
        also: impl FnOnce(&mut SessionRecord),
    ) -> Result<Recorded, StoreError> {
        let now = now();
        // 1. The next sequence number.
        let acpx = self.record.acpx_mut();
        let seq = acpx.audit_seq.get().copied().unwrap_or(0) + 1;
        acpx.audit_seq = Opt::Set(seq);
        // 2. The envelope.
        let envelope = EventEnvelope {
            event_version: EVENT_VERSION,
            seq,
            timestamp: now.clone(),
            acpx_record_id: self.id.clone(),
            acp_session_id: self.record.acp_session_id.get().cloned(),
            request_id: ev.request_id.clone(),
            stream: ev.stream.to_string(),
            source: ev.source.to_string(),
            kind: ev.kind.clone(),
            payload: ev.payload.clone(),
            extra: Default::default(),
        };
        // 3. The append; 4. the log state.
        let result = serde_json::to_vec(&envelope)
            .map_err(|e| StoreError::Invalid(format!("cannot serialize event: {e}")))
            .and_then(|line| self.append(&line));
        let logged = match result {
            Ok(()) => {
                self.refresh_event_log(None);
                let log = self.record.acpx_mut().event_log_mut();
                log.last_seq = Opt::Set(seq);
                log.last_write_at = Opt::Set(Value::String(now.clone()));
                log.last_write_error = Opt::Null;
                if self.record.extra.contains_key("lastSeq") {
                    self.record.extra.insert("lastSeq".into(), json!(seq));
                }
                true
            }
            Err(e) => {
                self.writer = None;
                self.refresh_event_log(Some(e.to_string()));
                false
            }
        };
        // 5. The snapshot.
        self.apply(&ev, seq, &now);
        also(&mut self.record);
        self.record.last_used_at = Opt::Set(now);
        // 6. Persist.
        self.persist()?;
        Ok(Recorded { seq, logged })
    }

    /// Sends a prompt: adds the `User` message (a new UUID id) and records
    /// `prompt_started`. Returns the user message id.
    pub fn send_prompt(
        &mut self,
        request_id: &str,
        prompt: &[Value],
        resumed: bool,
    ) -> Result<String, StoreError> {
        let text: String = prompt
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n");
        let preview: String = text.chars().take(200).collect();
        let id = uuid::Uuid::new_v4().to_string();
        let user_id = id.clone();
        let prompt = prompt.to_vec();
        self.record_event_with(
            NewEvent {
                stream: "prompt",
                source: "client",
                kind: "prompt_started".into(),
                request_id: Some(request_id.into()),
                payload: json!({"message_preview": preview, "resumed": resumed}),
            },
            move |r| {
                acp::add_prompt(r, Some(id), &prompt);
            },
        )?;
        Ok(user_id)
    }

    /// Records a `session/update` notification (its `params`) and applies
    /// it to the thread.
    pub fn session_update(
        &mut self,
        request_id: Option<&str>,
        params: Value,
    ) -> Result<Recorded, StoreError> {
        self.record_event(NewEvent {
            stream: "prompt",
            source: "acp",
            kind: "session_update".into(),
            request_id: request_id.map(str::to_string),
            payload: params,
        })
    }

    /// Records the end of a prompt turn.
    pub fn prompt_done(
        &mut self,
        request_id: &str,
        stop_reason: &str,
        permission_stats: Value,
    ) -> Result<Recorded, StoreError> {
        self.record_event(NewEvent {
            stream: "prompt",
            source: "acp",
            kind: "prompt_done".into(),
            request_id: Some(request_id.into()),
            payload: json!({"stopReason": stop_reason, "permissionStats": permission_stats}),
        })
    }

    /// Records a failed prompt turn (`error` holds `code`, `detailCode`,
    /// `message`, `retryable`, optionally `acp`).
    pub fn prompt_error(&mut self, request_id: &str, error: Value) -> Result<Recorded, StoreError> {
        self.record_event(NewEvent {
            stream: "prompt",
            source: "runtime",
            kind: "prompt_error".into(),
            request_id: Some(request_id.into()),
            payload: error,
        })
    }

    /// Records the start, success or failure of a control request
    /// (`kind` is `control_started`, `control_done` or `control_error`).
    pub fn control(
        &mut self,
        kind: &str,
        request_id: &str,
        payload: Value,
    ) -> Result<Recorded, StoreError> {
        self.record_event(NewEvent {
            stream: "control",
            source: "client",
            kind: kind.into(),
            request_id: Some(request_id.into()),
            payload,
        })
    }

    /// Records a lifecycle event (`phase`, `exitCode`, `signal`, `reason`).
    pub fn lifecycle(&mut self, payload: Value) -> Result<Recorded, StoreError> {
        self.record_event(NewEvent {
            stream: "lifecycle",
            source: "runtime",
            kind: "lifecycle_event".into(),
            request_id: None,
            payload,
        })
    }

    /// Marks the session closed and records it.
    pub fn close(&mut self) -> Result<Recorded, StoreError> {
        let now = now();
        self.record.closed = Opt::Set(true);
        self.record.closed_at = Opt::Set(now);
        self.lifecycle(json!({"phase": "closed"}))
    }

    fn append(&mut self, line: &[u8]) -> Result<(), StoreError> {
        let needed = line.len() as u64 + 1;
        let mut writer = match self.writer.take() {
            Some(w) => w,
            None => self.open_writer()?,
        };
        if !writer.is_empty() && writer.len() + needed > self.opts.max_segment_bytes {
            // Rotation renames happen with the writer closed.
            drop(writer);
            rotate(&self.dir, &self.id, self.opts.max_segments)?;
            writer = self.open_writer()?;
        }
        writer.append_line(line)?;
        self.writer = Some(writer);
        Ok(())
    }

    fn open_writer(&self) -> Result<AppendWriter, StoreError> {
        let (w, _recovery) = AppendWriter::open(
            &self.active_path(),
            AppendOptions {
                sync: self.opts.sync,
                lock: LockMode::Fail,
            },
        )?;
        Ok(w)
    }

    fn refresh_event_log(&mut self, error: Option<String>) {
        let active = self.active_path().display().to_string();
        let count = segment_count(&self.dir, &self.id);
        let opts = self.opts;
        let log = self.record.acpx_mut().event_log_mut();
        log.format_version = Opt::Set(json!(1));
        log.active_path = Opt::Set(active);
        log.segment_count = Opt::Set(count);
        log.max_segment_bytes = Opt::Set(opts.max_segment_bytes);
        log.max_segments = Opt::Set(opts.max_segments);
        if log.last_seq.is_absent() {
            log.last_seq = Opt::Set(0);
        }
        if log.last_write_at.is_absent() {
            log.last_write_at = Opt::Null;
        }
        log.last_write_error = match error {
            Some(e) => Opt::Set(Value::String(e)),
            None if log.last_write_error.is_absent() => Opt::Null,
            None => log.last_write_error.clone(),
        };
    }

    /// Step 5: what the event changes in the snapshot.
    fn apply(&mut self, ev: &NewEvent, seq: u64, now: &str) {
        let summary = match ev.kind.as_str() {
            "session_update" => acp::apply_update(&mut self.record, &ev.payload, now),
            "prompt_started" => {
                self.record.last_prompt_at = Opt::Set(Value::String(now.into()));
                self.record.acpx_mut().last_turn = Opt::Set(json!({
                    "request_id": ev.request_id,
                    "started_at": now,
                    "ended_at": null,
                    "resumed": ev.payload.get("resumed").cloned().unwrap_or(Value::Bool(false)),
                    "stop_reason": null,
                    "outcome": "running",
                    "error": null,
                    "permission_stats": {"requested": 0, "approved": 0, "denied": 0, "cancelled": 0}
                }));
                "prompt started".into()
            }
            "prompt_done" | "prompt_error" => {
                let failed = ev.kind == "prompt_error";
                let stop = ev.payload.get("stopReason").cloned().unwrap_or(Value::Null);
                let turn = self
                    .record
                    .acpx_mut()
                    .last_turn
                    .get_or_insert_with(|| json!({}));
                if !turn.is_object() {
                    *turn = json!({});
                }
                turn["request_id"] = json!(ev.request_id);
                turn["ended_at"] = json!(now);
                turn["stop_reason"] = stop.clone();
                turn["outcome"] = json!(if failed {
                    "failed"
                } else if stop == "cancelled" {
                    "cancelled"
                } else {
                    "completed"
                });
                turn["error"] = if failed {
                    let mut e = ev.payload.clone();
                    if let Some(o) = e.as_object_mut() {
                        o.remove("acp");
                    }
                    e
                } else {
                    Value::Null
                };
                if let Some(stats) = ev.payload.get("permissionStats") {
                    turn["permission_stats"] = stats.clone();
                }
                format!("prompt {}", turn["outcome"].as_str().unwrap_or(""))
            }
            "control_started" => {
                if let Some(id) = &ev.request_id {
                    self.pending_controls.insert(id.clone(), ev.payload.clone());
                }
                "control started".into()
            }
            "control_done" | "control_error" => {
                let started = ev
                    .request_id
                    .as_ref()
                    .and_then(|id| self.pending_controls.remove(id));
                let ok =
                    ev.kind == "control_done" && ev.payload.get("ok") != Some(&Value::Bool(false));
                let input = started
                    .as_ref()
                    .and_then(|s| s.get("input"))
                    .cloned()
                    .unwrap_or(Value::Null);
                self.record.acpx_mut().last_control_update = Opt::Set(json!({
                    "action": ev.payload.get("action").cloned().unwrap_or(Value::Null),
                    "request_id": ev.request_id,
                    "updated_at": now,
                    "ok": ok,
                    "payload": snake_keys(&input),
                    "error": if ok { Value::Null } else { ev.payload.get("error").cloned().unwrap_or(Value::Null) },
                }));
                format!("control {}", if ok { "done" } else { "failed" })
            }
            "lifecycle_event" => {
                if ev.payload.get("phase").and_then(Value::as_str) == Some("agent_exit") {
                    let r = &mut self.record;
                    r.last_agent_exit_code =
                        Opt::Set(ev.payload.get("exitCode").cloned().unwrap_or(Value::Null));
                    r.last_agent_exit_signal =
                        Opt::Set(ev.payload.get("signal").cloned().unwrap_or(Value::Null));
                    r.last_agent_exit_at = Opt::Set(Value::String(now.into()));
                    r.last_agent_disconnect_reason =
                        Opt::Set(ev.payload.get("reason").cloned().unwrap_or(Value::Null));
                }
                format!(
                    "lifecycle {}",
                    ev.payload
                        .get("phase")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                )
            }
            other => other.to_string(),
        };
        let cap = self.opts.audit_ring;
        let acpx = self.record.acpx_mut();
        let ring = acpx.audit_events.get_or_insert_with(Vec::new);
        ring.push(json!({
            "seq": seq,
            "timestamp": now,
            "stream": ev.stream,
            "source": ev.source,
            "type": ev.kind,
            "request_id": ev.request_id,
            "summary": summary,
        }));
        let mut dropped = 0u64;
        while ring.len() > cap {
            ring.remove(0);
            dropped += 1;
        }
        if dropped > 0 || acpx.audit_dropped_count.is_absent() {
            let old = acpx.audit_dropped_count.get().copied().unwrap_or(0);
            acpx.audit_dropped_count = Opt::Set(old + dropped);
        }
    }

    fn persist(&self) -> Result<(), StoreError> {
        let path = self.dir.join(format!("{}.json", self.id));
        let text = record_to_string(&self.record, self.layout, &self.key_order);
        crate::snapshot::write_atomic(&path, text.as_bytes())
    }
}

/// `modeId` -> `mode_id`, one level deep (the seed's `last_control_update`
/// payload is snake_case).
fn snake_keys(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| {
                    let mut s = String::new();
                    for c in k.chars() {
                        if c.is_ascii_uppercase() {
                            s.push('_');
                            s.push(c.to_ascii_lowercase());
                        } else {
                            s.push(c);
                        }
                    }
                    (s, v.clone())
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn now() -> String {
    agentlog_model::Timestamp::now().to_string()
}

/// Returns the `seq` of the last envelope in the newest non-empty segment.
fn last_logged_seq(dir: &Path, id: &str) -> Option<u64> {
    for path in events::segments_oldest_first(dir, id).iter().rev() {
        if let Some(seq) = tail_seq(path) {
            return Some(seq);
        }
    }
    None
}

fn tail_seq(path: &Path) -> Option<u64> {
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let start = len.saturating_sub(256 * 1024);
    f.seek(SeekFrom::Start(start)).ok()?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).ok()?;
    buf.split(|&b| b == b'\n').rev().find_map(|line| {
        serde_json::from_slice::<Value>(line)
            .ok()?
            .get("seq")?
            .as_u64()
    })
}
