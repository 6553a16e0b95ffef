//! pi's session manager: branchable session trees in JSONL files,
//! interchangeable with the files pi and oh-my-pi write.
//!
//! A [`SessionManager`] holds one session: a header and a tree of entries
//! linked by `id`/`parentId`, with a current leaf. Appending makes a child
//! of the leaf and moves the leaf to it; [`SessionManager::branch`] moves the
//! leaf back to an earlier entry so the next append starts a new branch.
//! [`SessionManager::build_session_context`] returns what the model sees at
//! the leaf.
//!
//! Opening a file of an older version migrates it to version 3 as pi does
//! (see [`migrate`]), in memory only: the file is rewritten (atomically and
//! durably) just before the first write to it — an append that reaches the
//! file, or [`SessionManager::flush`] — so an open that only reads never
//! changes the file, and a process that dies before writing leaves the old
//! file as it was. Appends go through an [`AppendWriter`]: whole
//! lines, fsynced, one writer per file (a second manager on the same file
//! gets [`StoreError::Locked`]), and a torn last line is cut into a sidecar
//! file on open instead of having the next entry glued onto it. Like pi, a
//! new session's file is written only once it holds an assistant message;
//! until then entries live in memory.
//!
//! Differences from pi, all on the side of keeping data: a file whose first
//! record is not a session header is refused instead of overwritten; lines
//! that do not parse are kept (and skipped) instead of dropped on a
//! migration rewrite; path walks stop on cycles.
//!
//! ```
//! use agentlog_store::pi::SessionManager;
//! use serde_json::json;
//! let mut sm = SessionManager::in_memory("/work");
//! let u = sm.append_message_value(json!({"role":"user","content":"hi","timestamp":1})).unwrap();
//! sm.append_message_value(json!({"role":"assistant","content":[{"type":"text","text":"hello"}],
//!     "provider":"anthropic","model":"claude","timestamp":2})).unwrap();
//! sm.branch(&u).unwrap();
//! sm.append_message_value(json!({"role":"assistant","content":[],"timestamp":3})).unwrap();
//! assert_eq!(sm.build_session_context().roles(), ["user", "assistant"]);
//! assert_eq!(sm.get_children(&u).len(), 2);
//! ```

mod context;
mod ids;
mod index;
pub mod migrate;

pub use context::{ContextModel, SessionContext};
pub use ids::{new_entry_id_with, new_session_id};

use crate::append::{AppendOptions, AppendWriter, Recovery};
use crate::StoreError;
use agentlog_formats::pi::{encode_cwd, entry_from_record, session_file_name, Ids};
use agentlog_formats::Diagnostic;
use agentlog_model::{Entry, Message, Timestamp};
use index::{LabelRec, Slot, Ty, NONE};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A node of [`SessionManager::get_tree`].
#[derive(Clone, Debug, PartialEq)]
pub struct TreeNode {
    /// The entry.
    pub entry: Entry,
    /// Its children, oldest first.
    pub children: Vec<TreeNode>,
    /// The entry's label, if any.
    pub label: Option<String>,
    /// When the label was set.
    pub label_timestamp: Option<String>,
}

/// The fields of a compaction entry.
#[derive(Clone, Debug, Default)]
pub struct CompactionParams {
    /// The summary sent to the model.
    pub summary: String,
    /// A short form for UIs.
    pub short_summary: Option<String>,
    /// The first entry kept verbatim after the summary.
    pub first_kept_entry_id: String,
    /// The context size before compaction.
    pub tokens_before: u64,
    /// Implementation data.
    pub details: Option<Value>,
    /// True when an extension produced it.
    pub from_extension: Option<bool>,
    /// Extension data kept across compaction.
    pub preserve_data: Option<Value>,
}

/// The fields of a session-init entry (a subagent's initial context).
#[derive(Clone, Debug, Default)]
pub struct SessionInitParams {
    /// The system prompt.
    pub system_prompt: String,
    /// The task given.
    pub task: String,
    /// Tool names available.
    pub tools: Vec<String>,
    /// The expected output schema.
    pub output_schema: Option<Value>,
}

/// Returns pi's agent directory: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub fn default_agent_dir() -> PathBuf {
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(d) if !d.is_empty() => match d.strip_prefix("~/") {
            Some(rest) => home().join(rest),
            None => PathBuf::from(d),
        },
        _ => home().join(".pi").join("agent"),
    }
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Returns the directory pi keeps the sessions of `cwd` in:
/// `<agent_dir>/sessions/--<cwd encoded>--`.
pub fn default_session_dir(cwd: &str, agent_dir: &Path) -> PathBuf {
    agent_dir.join("sessions").join(encode_cwd(cwd))
}

fn now_iso() -> String {
    Timestamp::now().to_string()
}

/// One pi session: a header and a tree of entries with a current leaf.
#[derive(Debug)]
pub struct SessionManager {
    cwd: String,
    session_dir: PathBuf,
    file: Option<PathBuf>,
    persist: bool,
    options: AppendOptions,
    writer: Option<AppendWriter>,
    header: Map<String, Value>,
    /// True once the header is in the file.
    header_written: bool,
    /// How many slots are in the file.
    written: usize,
    /// The file's bytes as read (the lines of loaded entries).
    base: Vec<u8>,
    /// The lines of entries appended since.
    added: Vec<u8>,
    slots: Vec<Slot>,
    by_id: HashMap<Box<str>, u32>,
    /// Labels by target id: the label and the label entry's slot.
    labels: HashMap<Box<str>, (String, u32)>,
    leaf: Option<u32>,
    has_assistant: bool,
    diagnostics: Vec<Diagnostic>,
    recovery: Option<Recovery>,
    migrated_from: Option<u64>,
    /// True while `base` holds a migration that is not yet in the file.
    rewrite_pending: bool,
    /// Why writing to the file is refused (it changed under us).
    detached: Option<String>,
}

impl SessionManager {
    fn blank(cwd: &str, session_dir: PathBuf, persist: bool) -> SessionManager {
        SessionManager {
            cwd: cwd.to_string(),
            session_dir,
            file: None,
            persist,
            options: AppendOptions::default(),
            writer: None,
            header: Map::new(),
            header_written: false,
            written: 0,
            base: Vec::new(),
            added: Vec::new(),
            slots: Vec::new(),
            by_id: HashMap::new(),
            labels: HashMap::new(),
            leaf: None,
            has_assistant: false,
            diagnostics: Vec::new(),
            recovery: None,
            migrated_from: None,
            rewrite_pending: false,
            detached: None,
        }
    }

    /// Starts a new session for `cwd`, filed in `session_dir` (default:
    /// pi's directory for `cwd` under [`default_agent_dir`]). Nothing is
    /// written until the session has an assistant message.
    pub fn create(cwd: &str, session_dir: Option<&Path>) -> SessionManager {
        let dir = session_dir
            .map(Path::to_path_buf)
            .unwrap_or_else(|| default_session_dir(cwd, &default_agent_dir()));
        let mut sm = SessionManager::blank(cwd, dir, true);
        sm.new_session(None);
        sm
    }

    /// Returns a session that is never written to disk.
    pub fn in_memory(cwd: &str) -> SessionManager {
        let mut sm = SessionManager::blank(cwd, PathBuf::new(), false);
        sm.new_session(None);
        sm
    }

    /// Opens the session file at `path` for reading and appending: takes
    /// its lock and cuts a torn tail into a sidecar. An old version is
    /// migrated in memory; the file is rewritten as version 3 (atomically,
    /// then the lock is taken on the new file) only before the first write
    /// to it, so an open that only reads leaves it untouched (see
    /// [`SessionManager::needs_rewrite`]). A missing file starts a new
    /// session that will be written there. `session_dir` defaults to the
    /// file's directory.
    pub fn open(path: &Path, session_dir: Option<&Path>) -> Result<SessionManager, StoreError> {
        Self::open_with(path, session_dir, AppendOptions::default())
    }

    /// Like [`SessionManager::open`], with the append options to use.
    pub fn open_with(
        path: &Path,
        session_dir: Option<&Path>,
        options: AppendOptions,
    ) -> Result<SessionManager, StoreError> {
        let dir = session_dir
            .map(Path::to_path_buf)
            .unwrap_or_else(|| crate::snapshot::parent_dir(path));
        if !path.exists() {
            let mut sm = SessionManager::blank("", dir, true);
            sm.cwd = std::env::current_dir()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            sm.options = options;
            sm.new_session(None);
            sm.file = Some(path.to_path_buf());
            return Ok(sm);
        }
        let (writer, recovery) = AppendWriter::open(path, options)?;
        let bytes = std::fs::read(path).map_err(|e| StoreError::io(path, "read", e))?;
        let mut sm = SessionManager::blank("", dir, true);
        sm.options = options;
        sm.file = Some(path.to_path_buf());
        sm.writer = Some(writer);
        if !recovery.is_clean() {
            sm.diagnostics.push(Diagnostic::warning(
                path,
                None,
                "torn-tail",
                format!("{recovery} on open"),
            ));
        }
        sm.recovery = Some(recovery);
        sm.load_bytes(path, bytes, true)?;
        Ok(sm)
    }

    /// Reads the session file at `path` without writing to it and without
    /// taking its lock. An old version is migrated in memory only; version 1
    /// entries get the ids the `pi` format reader gives them (`line<N>`).
    pub fn load(path: &Path) -> Result<SessionManager, StoreError> {
        let bytes = std::fs::read(path).map_err(|e| StoreError::io(path, "read", e))?;
        let mut sm = SessionManager::blank("", crate::snapshot::parent_dir(path), false);
        sm.file = Some(path.to_path_buf());
        sm.load_bytes(path, bytes, false)?;
        Ok(sm)
    }

    /// Continues the most recently modified session in `session_dir`
    /// (default: pi's directory for `cwd`), or starts a new one.
    pub fn continue_recent(
        cwd: &str,
        session_dir: Option<&Path>,
    ) -> Result<SessionManager, StoreError> {
        let dir = session_dir
            .map(Path::to_path_buf)
            .unwrap_or_else(|| default_session_dir(cwd, &default_agent_dir()));
        match most_recent_session(&dir) {
            Some(p) => {
                let mut sm = SessionManager::open(&p, Some(&dir))?;
                sm.cwd = cwd.to_string();
                Ok(sm)
            }
            None => Ok(SessionManager::create(cwd, Some(&dir))),
        }
    }

    fn new_session(&mut self, parent_session: Option<&str>) {
        let id = new_session_id();
        let timestamp = now_iso();
        let mut h = Map::new();
        h.insert("type".into(), "session".into());
        h.insert("version".into(), migrate::CURRENT_VERSION.into());
        h.insert("id".into(), id.clone().into());
        h.insert("timestamp".into(), timestamp.clone().into());
        h.insert("cwd".into(), self.cwd.clone().into());
        if let Some(p) = parent_session {
            h.insert("parentSession".into(), p.into());
        }
        self.header = h;
        if self.persist {
            let name = session_file_name(&Timestamp::Text(timestamp), &id);
            self.file = Some(self.session_dir.join(name));
        }
    }

    /// Indexes a whole file; `writable` when this manager will write to it
    /// (an old version is then marked for a rewrite).
    fn load_bytes(
        &mut self,
        path: &Path,
        bytes: Vec<u8>,
        writable: bool,
    ) -> Result<(), StoreError> {
        // An old version is migrated in the one full pass; the index takes
        // the entries the migration wrote as they are.
        let (bytes, known) = match index::header_version(&bytes) {
            Some(version) if version < migrate::CURRENT_VERSION => {
                // Entries of a file that will be rewritten get pi's random
                // ids (the ones the rewrite stores); read-only loads give
                // version 1 entries the ids the pi format reader gives
                // them, so they are stable.
                let scheme = if writable {
                    migrate::IdScheme::Random
                } else {
                    migrate::IdScheme::LineNumbers
                };
                let (new, known) = migrate::migrate_indexed(&bytes, version, scheme);
                self.rewrite_pending = writable;
                self.migrated_from = Some(version);
                (new, known)
            }
            _ => (bytes, Vec::new()),
        };
        let mut scan = index::scan(path, &bytes, known);
        if scan.header.is_none() && scan.slots.is_empty() && scan.diagnostics.is_empty() {
            // An empty file (or one whose only line was torn off): a new
            // session that will be written there, as pi does.
            let file = self.file.clone();
            if self.cwd.is_empty() {
                self.cwd = std::env::current_dir()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
            }
            self.new_session(None);
            self.file = file;
            return Ok(());
        }
        let Some(header) = scan.header.take() else {
            return Err(StoreError::Invalid(format!(
                "{}: the first record is not a pi session header ({{\"type\":\"session\",\"id\":…}}); refusing to use it",
                path.display()
            )));
        };
        self.cwd = header
            .get("cwd")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| self.cwd.clone());
        self.header = header;
        self.header_written = true;
        self.diagnostics.append(&mut scan.diagnostics);
        self.base = bytes;
        self.slots = scan.slots;
        self.written = self.slots.len();
        self.rebuild_index(scan.labels);
        Ok(())
    }

    /// Rebuilds ids, parents, labels and the leaf (the last entry).
    fn rebuild_index(&mut self, labels: Vec<LabelRec>) {
        self.by_id = HashMap::with_capacity(self.slots.len());
        for (i, s) in self.slots.iter().enumerate() {
            self.by_id.insert(s.id.clone(), i as u32);
        }
        for s in self.slots.iter_mut() {
            s.parent = match &s.parent_id {
                Some(p) if **p != *s.id => self.by_id.get(p).copied().unwrap_or(NONE),
                _ => NONE,
            };
        }
        self.labels.clear();
        for l in labels {
            match l.label {
                Some(label) => {
                    self.labels.insert(l.target, (label, l.slot));
                }
                None => {
                    self.labels.remove(&l.target);
                }
            }
        }
        self.has_assistant = self.slots.iter().any(|s| s.ty == Ty::AssistantMessage);
        self.leaf = (!self.slots.is_empty()).then(|| self.slots.len() as u32 - 1);
    }

    /// Returns the raw line of a slot.
    fn line(&self, i: u32) -> &[u8] {
        let s = &self.slots[i as usize];
        let buf = if s.appended { &self.added } else { &self.base };
        &buf[s.start..s.end]
    }

    /// Parses the record of a slot.
    fn record(&self, i: u32) -> Option<Map<String, Value>> {
        match serde_json::from_slice::<Value>(self.line(i)) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        }
    }

    fn entry(&self, i: u32) -> Option<Entry> {
        let r = self.record(i)?;
        let s = &self.slots[i as usize];
        let ids = Ids {
            fallback_id: s.id.to_string(),
            v1_parent: None,
            version: migrate::CURRENT_VERSION,
        };
        let line = (s.line > 0).then_some(s.line);
        Some(entry_from_record(&r, line, &ids).0)
    }

    // ----- appending -------------------------------------------------------

    fn fresh_id(&self) -> String {
        new_entry_id_with(|id| self.by_id.contains_key(id))
    }

    /// Returns a record with pi's entry keys, then `fields`.
    fn base_record(
        &self,
        ty: &str,
        id: &str,
        parent: Option<u32>,
        fields: Map<String, Value>,
    ) -> Map<String, Value> {
        let mut r = Map::new();
        r.insert("type".into(), ty.into());
        r.insert("id".into(), id.into());
        r.insert(
            "parentId".into(),
            parent
                .map(|p| Value::String(self.slots[p as usize].id.to_string()))
                .unwrap_or(Value::Null),
        );
        r.insert("timestamp".into(), now_iso().into());
        r.extend(fields);
        r
    }

    /// Adds a record as a child of `parent`, makes it the leaf, and writes
    /// it when the session is being persisted.
    fn push(
        &mut self,
        record: &Map<String, Value>,
        parent: Option<u32>,
    ) -> Result<String, StoreError> {
        let line = serde_json::to_vec(record)
            .map_err(|e| StoreError::Invalid(format!("cannot serialize entry: {e}")))?;
        let id = record
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let ty_name = record.get("type").and_then(Value::as_str);
        let role = record
            .get("message")
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str);
        let ty = Ty::of(ty_name, role);
        let start = self.added.len();
        self.added.extend_from_slice(&line);
        let slot = self.slots.len() as u32;
        if ty == Ty::Label {
            if let Some(target) = record.get("targetId").and_then(Value::as_str) {
                match record
                    .get("label")
                    .and_then(Value::as_str)
                    .filter(|l| !l.is_empty())
                {
                    Some(l) => {
                        self.labels.insert(target.into(), (l.to_string(), slot));
                    }
                    None => {
                        self.labels.remove(target);
                    }
                }
            }
        }
        self.slots.push(Slot {
            start,
            end: start + line.len(),
            appended: true,
            ty,
            id: id.clone().into(),
            parent_id: parent.map(|p| self.slots[p as usize].id.clone()),
            parent: parent.unwrap_or(NONE),
            line: 0,
        });
        self.by_id.insert(id.clone().into(), slot);
        self.leaf = Some(slot);
        if ty == Ty::AssistantMessage {
            self.has_assistant = true;
        }
        self.persist_pending()?;
        Ok(id)
    }

    /// Writes what is not yet on disk, once the session has an assistant
    /// message (pi's rule: no file for a session the model never answered).
    /// A deferred migration rewrite goes first.
    fn persist_pending(&mut self) -> Result<(), StoreError> {
        if !self.persist || !self.has_assistant {
            return Ok(());
        }
        let Some(path) = self.file.clone() else {
            return Ok(());
        };
        if self.header_written && self.written == self.slots.len() {
            return Ok(());
        }
        self.check_attached(&path)?;
        self.rewrite_if_pending(&path)?;
        if self.writer.is_none() {
            let (w, rec) = AppendWriter::open(&path, self.options)?;
            if !rec.is_clean() {
                self.recovery = Some(rec);
            }
            self.writer = Some(w);
        }
        if !self.header_written {
            let line =
                serde_json::to_vec(&self.header).map_err(|e| StoreError::Invalid(e.to_string()))?;
            if let Some(w) = self.writer.as_mut() {
                w.append_line(&line)?;
            }
            self.header_written = true;
        }
        while self.written < self.slots.len() {
            let i = self.written as u32;
            let line = self.line(i).to_vec();
            if let Some(w) = self.writer.as_mut() {
                w.append_line(&line)?;
            }
            self.written += 1;
        }
        Ok(())
    }

    /// Refuses to write once the file changed under this manager.
    fn check_attached(&self, path: &Path) -> Result<(), StoreError> {
        match &self.detached {
            Some(reason) => Err(StoreError::Unusable {
                path: path.to_path_buf(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Performs a deferred migration: replaces the file by the migrated
    /// bytes (temp file, fsync, rename, directory fsync) and moves the lock
    /// and the writer to the new file.
    ///
    /// Until the rename the old file stays locked by this manager, so no
    /// other writer appends to it; a failure before the rename leaves it
    /// as it was and the rewrite still pending. The new file is locked
    /// right after the rename; if another writer got to it first, or it
    /// no longer holds exactly the migrated bytes, this manager stops
    /// writing ([`StoreError::Unusable`]) rather than append to a file it
    /// does not own.
    fn rewrite_if_pending(&mut self, path: &Path) -> Result<(), StoreError> {
        if !self.rewrite_pending {
            return Ok(());
        }
        if self.writer.is_none() {
            // Not reachable through the public API (a writable open holds
            // the writer); refuse rather than write unlocked.
            return Err(StoreError::Unusable {
                path: path.to_path_buf(),
                reason: "the lock of the file is not held".into(),
            });
        }
        crate::snapshot::write_atomic(path, &self.base)?;
        self.rewrite_pending = false;
        // The old writer goes first so that its release does not remove
        // the new holder's lock record.
        self.writer = None;
        let (w, _) = match AppendWriter::open(path, self.options) {
            Ok(x) => x,
            Err(e) => {
                self.detached = Some(format!(
                    "could not take the lock of the file after its migration rewrite: {e}"
                ));
                return Err(e);
            }
        };
        if w.len() != self.base.len() as u64 {
            self.detached = Some(format!(
                "the file changed between its migration rewrite and taking its lock ({} bytes written, {} found)",
                self.base.len(),
                w.len()
            ));
            drop(w);
            return self.check_attached(path);
        }
        self.writer = Some(w);
        Ok(())
    }

    fn append_fields(
        &mut self,
        ty: &str,
        fields: Map<String, Value>,
    ) -> Result<String, StoreError> {
        let id = self.fresh_id();
        let record = self.base_record(ty, &id, self.leaf, fields);
        self.push(&record, self.leaf)
    }

    /// Appends a message (pi's `AgentMessage` JSON, an object with a string
    /// `role`) as a child of the leaf. Returns the new entry's id.
    pub fn append_message_value(&mut self, message: Value) -> Result<String, StoreError> {
        if !message.get("role").is_some_and(Value::is_string) {
            return Err(StoreError::Invalid(
                "a pi message is an object with a string role".into(),
            ));
        }
        let mut f = Map::new();
        f.insert("message".into(), message);
        self.append_fields("message", f)
    }

    /// Appends a model message in pi's form. Returns the new entry's id.
    pub fn append_message(&mut self, message: &Message) -> Result<String, StoreError> {
        self.append_message_value(agentlog_formats::pi::message_to_value(message))
    }

    /// Appends a thinking-level change. Returns the new entry's id.
    pub fn append_thinking_level_change(&mut self, level: &str) -> Result<String, StoreError> {
        let mut f = Map::new();
        f.insert("thinkingLevel".into(), level.into());
        self.append_fields("thinking_level_change", f)
    }

    /// Appends a model change; `model` is `provider/modelId`, `role` the
    /// oh-my-pi role (`default`, …). The entry carries oh-my-pi's `model`
    /// and `role` and also pi's `provider` and `modelId`, so both read it.
    pub fn append_model_change(
        &mut self,
        model: &str,
        role: Option<&str>,
    ) -> Result<String, StoreError> {
        let mut f = Map::new();
        f.insert("model".into(), model.into());
        if let Some(r) = role {
            f.insert("role".into(), r.into());
        }
        if let Some((p, id)) = model.split_once('/') {
            f.insert("provider".into(), p.into());
            f.insert("modelId".into(), id.into());
        }
        self.append_fields("model_change", f)
    }

    /// Appends a subagent's initial context. Returns the new entry's id.
    pub fn append_session_init(&mut self, init: SessionInitParams) -> Result<String, StoreError> {
        let mut f = Map::new();
        f.insert("systemPrompt".into(), init.system_prompt.into());
        f.insert("task".into(), init.task.into());
        f.insert("tools".into(), init.tools.into());
        if let Some(s) = init.output_schema {
            f.insert("outputSchema".into(), s);
        }
        self.append_fields("session_init", f)
    }

    /// Appends a compaction. Returns the new entry's id.
    pub fn append_compaction(&mut self, c: CompactionParams) -> Result<String, StoreError> {
        let mut f = Map::new();
        f.insert("summary".into(), c.summary.into());
        if let Some(s) = c.short_summary {
            f.insert("shortSummary".into(), s.into());
        }
        f.insert("firstKeptEntryId".into(), c.first_kept_entry_id.into());
        f.insert("tokensBefore".into(), c.tokens_before.into());
        if let Some(d) = c.details {
            f.insert("details".into(), d);
        }
        if let Some(b) = c.from_extension {
            f.insert("fromExtension".into(), b.into());
        }
        if let Some(p) = c.preserve_data {
            f.insert("preserveData".into(), p);
        }
        self.append_fields("compaction", f)
    }

    /// Appends extension state (not part of the context). Returns the id.
    pub fn append_custom_entry(
        &mut self,
        custom_type: &str,
        data: Option<Value>,
    ) -> Result<String, StoreError> {
        let id = self.fresh_id();
        let mut r = Map::new();
        r.insert("type".into(), "custom".into());
        r.insert("customType".into(), custom_type.into());
        if let Some(d) = data {
            r.insert("data".into(), d);
        }
        self.push_tail_keys(r, id)
    }

    /// Appends an extension message that is part of the context; `content`
    /// is a string or a list of text/image blocks. Returns the id.
    pub fn append_custom_message_entry(
        &mut self,
        custom_type: &str,
        content: Value,
        display: bool,
        details: Option<Value>,
    ) -> Result<String, StoreError> {
        if !(content.is_string() || content.is_array()) {
            return Err(StoreError::Invalid(
                "custom message content is a string or a list of blocks".into(),
            ));
        }
        let id = self.fresh_id();
        let mut r = Map::new();
        r.insert("type".into(), "custom_message".into());
        r.insert("customType".into(), custom_type.into());
        r.insert("content".into(), content);
        r.insert("display".into(), display.into());
        if let Some(d) = details {
            r.insert("details".into(), d);
        }
        self.push_tail_keys(r, id)
    }

    /// Adds pi's entry keys after the fields (pi's key order for custom
    /// entries) and appends.
    fn push_tail_keys(
        &mut self,
        mut r: Map<String, Value>,
        id: String,
    ) -> Result<String, StoreError> {
        let base = self.base_record("x", &id, self.leaf, Map::new());
        for k in ["id", "parentId", "timestamp"] {
            if let Some(v) = base.get(k) {
                r.insert(k.into(), v.clone());
            }
        }
        self.push(&r, self.leaf)
    }

    /// Records injected TTSR rules. Returns the new entry's id.
    pub fn append_ttsr_injection(&mut self, rules: &[String]) -> Result<String, StoreError> {
        let mut f = Map::new();
        f.insert("injectedRules".into(), rules.to_vec().into());
        self.append_fields("ttsr_injection", f)
    }

    /// Sets (or with `None` or "" clears) the label of `target_id`.
    pub fn append_label_change(
        &mut self,
        target_id: &str,
        label: Option<&str>,
    ) -> Result<String, StoreError> {
        if !self.by_id.contains_key(target_id) {
            return Err(StoreError::Invalid(format!("entry {target_id} not found")));
        }
        let mut f = Map::new();
        f.insert("targetId".into(), target_id.into());
        if let Some(l) = label {
            f.insert("label".into(), l.into());
        }
        self.append_fields("label", f)
    }

    /// Sets the session's display name. Returns the new entry's id.
    pub fn append_session_info(&mut self, name: &str) -> Result<String, StoreError> {
        let mut f = Map::new();
        f.insert("name".into(), name.trim().into());
        self.append_fields("session_info", f)
    }

    // ----- navigation ------------------------------------------------------

    /// Returns the current leaf's id (`None` before the first entry).
    pub fn get_leaf_id(&self) -> Option<&str> {
        self.leaf.map(|i| &*self.slots[i as usize].id)
    }

    /// Returns the current leaf entry.
    pub fn get_leaf_entry(&self) -> Option<Entry> {
        self.leaf.and_then(|i| self.entry(i))
    }

    /// Returns the entry with `id`.
    pub fn get_entry(&self, id: &str) -> Option<Entry> {
        self.by_id.get(id).and_then(|&i| self.entry(i))
    }

    /// Returns the entries from the root to `from` (default: the leaf).
    pub fn get_branch(&self, from: Option<&str>) -> Vec<Entry> {
        let start = match from {
            Some(id) => self.by_id.get(id).copied(),
            None => self.leaf,
        };
        match start {
            Some(i) => self
                .path_to(i)
                .into_iter()
                .filter_map(|i| self.entry(i))
                .collect(),
            None => Vec::new(),
        }
    }

    /// True when slot `i` is the one its id resolves to (not shadowed by a
    /// later entry with the same id).
    fn is_current(&self, i: u32) -> bool {
        self.by_id.get(&self.slots[i as usize].id) == Some(&i)
    }

    /// Returns the direct children of `parent_id`, in file order.
    pub fn get_children(&self, parent_id: &str) -> Vec<Entry> {
        (0..self.slots.len() as u32)
            .filter(|&i| {
                self.is_current(i) && self.slots[i as usize].parent_id.as_deref() == Some(parent_id)
            })
            .filter_map(|i| self.entry(i))
            .collect()
    }

    /// Returns the label of `id`, if any.
    pub fn get_label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(|(l, _)| l.as_str())
    }

    /// Returns the whole tree: roots (entries without a known parent) with
    /// their children, oldest first.
    pub fn get_tree(&self) -> Vec<TreeNode> {
        let n = self.slots.len();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for i in 0..n as u32 {
            if !self.is_current(i) {
                continue;
            }
            match self.slots[i as usize].parent {
                NONE => roots.push(i),
                p if p == i => roots.push(i),
                p => children[p as usize].push(i),
            }
        }
        let mut entries: Vec<Option<Entry>> = (0..n as u32)
            .map(|i| {
                if self.is_current(i) {
                    self.entry(i)
                } else {
                    None
                }
            })
            .collect();
        let millis = |e: &Option<Entry>| {
            e.as_ref()
                .and_then(|e| e.timestamp.as_ref())
                .and_then(Timestamp::millis)
        };
        for kids in children.iter_mut() {
            kids.sort_by(|a, b| {
                match (millis(&entries[*a as usize]), millis(&entries[*b as usize])) {
                    (Some(x), Some(y)) => x.cmp(&y),
                    _ => std::cmp::Ordering::Equal,
                }
            });
        }
        // Post-order without recursion: build children before parents.
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<u32> = roots.iter().rev().copied().collect();
        let mut seen = vec![false; n];
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i as usize], true) {
                continue;
            }
            order.push(i);
            stack.extend(children[i as usize].iter().rev());
        }
        let mut built: Vec<Option<TreeNode>> = vec![None; n];
        for &i in order.iter().rev() {
            let kids = children[i as usize]
                .iter()
                .filter_map(|&k| built[k as usize].take())
                .collect();
            let Some(entry) = entries[i as usize].take() else {
                continue;
            };
            let (label, label_timestamp) = match self.labels.get(&*entry.id) {
                Some((l, slot)) => (
                    Some(l.clone()),
                    self.record(*slot).and_then(|r| {
                        r.get("timestamp")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    }),
                ),
                None => (None, None),
            };
            built[i as usize] = Some(TreeNode {
                entry,
                children: kids,
                label,
                label_timestamp,
            });
        }
        roots
            .iter()
            .filter_map(|&r| built[r as usize].take())
            .collect()
    }

    /// Moves the leaf to `id`; the next append starts a branch there.
    pub fn branch(&mut self, id: &str) -> Result<(), StoreError> {
        match self.by_id.get(id) {
            Some(&i) => {
                self.leaf = Some(i);
                Ok(())
            }
            None => Err(StoreError::Invalid(format!("entry {id} not found"))),
        }
    }

    /// Moves the leaf before the first entry: the next append is a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    /// Branches at `from` (`None`: the root) and appends a summary of the
    /// branch left behind. Returns the summary entry's id.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: &str,
        details: Option<Value>,
        from_extension: Option<bool>,
    ) -> Result<String, StoreError> {
        let parent = match from {
            Some(id) => Some(
                *self
                    .by_id
                    .get(id)
                    .ok_or_else(|| StoreError::Invalid(format!("entry {id} not found")))?,
            ),
            None => None,
        };
        self.leaf = parent;
        let mut f = Map::new();
        f.insert("fromId".into(), from.unwrap_or("root").into());
        f.insert("summary".into(), summary.into());
        if let Some(d) = details {
            f.insert("details".into(), d);
        }
        if let Some(b) = from_extension {
            f.insert("fromExtension".into(), b.into());
        }
        let id = self.fresh_id();
        let record = self.base_record("branch_summary", &id, parent, f);
        self.push(&record, parent)
    }

    /// Returns every entry (not the header), in file order.
    pub fn get_entries(&self) -> Vec<Entry> {
        (0..self.slots.len() as u32)
            .filter_map(|i| self.entry(i))
            .collect()
    }

    /// Returns the number of entries.
    pub fn entry_count(&self) -> usize {
        self.slots.len()
    }

    /// Returns the session header record.
    pub fn get_header(&self) -> &Map<String, Value> {
        &self.header
    }

    /// Returns the session id.
    pub fn get_session_id(&self) -> &str {
        self.header
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// Returns the session's file (`None` in memory).
    pub fn get_session_file(&self) -> Option<&Path> {
        if self.persist {
            self.file.as_deref()
        } else {
            None
        }
    }

    /// Returns the session directory.
    pub fn get_session_dir(&self) -> &Path {
        &self.session_dir
    }

    /// Returns the working directory.
    pub fn get_cwd(&self) -> &str {
        &self.cwd
    }

    /// Returns the session's display name (from the latest session_info).
    pub fn get_session_name(&self) -> Option<String> {
        let i = (0..self.slots.len() as u32).rev().find(|&i| {
            let line = self.line(i);
            memchr_find(line, b"\"session_info\"")
                && self
                    .record(i)
                    .is_some_and(|r| r.get("type").and_then(Value::as_str) == Some("session_info"))
        })?;
        self.record(i)
            .and_then(|r| {
                r.get("name")
                    .and_then(Value::as_str)
                    .map(|s| s.trim().to_string())
            })
            .filter(|s| !s.is_empty())
    }

    /// Returns the problems found while reading the file.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Returns what opening the file had to repair.
    pub fn recovery(&self) -> Option<&Recovery> {
        self.recovery.as_ref()
    }

    /// Returns the version the file was migrated from on open, if it was
    /// (whether or not the migrated file has been written yet).
    pub fn migrated_from(&self) -> Option<u64> {
        self.migrated_from
    }

    /// True while the file still holds the old version this manager
    /// migrated in memory: the next write to it (an append that reaches
    /// the file, or [`SessionManager::flush`]) rewrites it first.
    pub fn needs_rewrite(&self) -> bool {
        self.rewrite_pending
    }

    /// Writes what is held in memory: a pending migration rewrite, and
    /// entries of a session without an assistant message; then syncs the
    /// file.
    pub fn flush(&mut self) -> Result<(), StoreError> {
        if self.persist && self.rewrite_pending {
            if let Some(path) = self.file.clone() {
                self.check_attached(&path)?;
                self.rewrite_if_pending(&path)?;
            }
        }
        let had = self.has_assistant;
        self.has_assistant = true;
        let r = self.persist_pending();
        self.has_assistant = had;
        r?;
        if let Some(w) = self.writer.as_mut() {
            w.sync()?;
        }
        Ok(())
    }
}

fn memchr_find(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Returns the newest `.jsonl` file in `dir` whose first line is a pi
/// session header.
pub fn most_recent_session(dir: &Path) -> Option<PathBuf> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "jsonl") || !is_session_file(&p) {
            continue;
        }
        let Ok(m) = e.metadata().and_then(|m| m.modified()) else {
            continue;
        };
        if best.as_ref().is_none_or(|(t, _)| m > *t) {
            best = Some((m, p));
        }
    }
    best.map(|(_, p)| p)
}

fn is_session_file(p: &Path) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(p) else {
        return false;
    };
    let mut head = Vec::new();
    if f.take(64 * 1024).read_to_end(&mut head).is_err() {
        return false;
    }
    let first = head.split(|&b| b == b'\n').next().unwrap_or_default();
    serde_json::from_slice::<Value>(first)
        .ok()
        .is_some_and(|v| {
            v.get("type") == Some(&json!("session")) && v.get("id").is_some_and(Value::is_string)
        })
}
