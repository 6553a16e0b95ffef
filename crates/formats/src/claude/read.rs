//! Reading a Claude Code transcript into the model.
//!
//! One pass over the lines builds the entries:
//! - an assistant line that continues the response of the line before it
//!   (same `message.id` and `requestId`) is merged into that entry: one
//!   message, the union of distinct blocks, the usage counted once;
//! - a line that repeats the uuid of the line before it (a resumed session
//!   replays its last record) is kept with that entry;
//! - a record without `uuid` gets the id `line-<n>` and is chained in after
//!   the record before it, so the conversation stays one path;
//! - a sidechain root hangs under the main-line message that spawned it and
//!   a `compact_boundary` under its `logicalParentUuid`.
//!
//! Every entry then keeps, under [`MARK`], what its native lines still
//! differ in from a rebuilt line, so the writer gives them back exactly.

use super::wire::{self, sift, MARK};
use crate::Diagnostic;
use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Extra, Message, Role, Session, SessionMeta,
    Timestamp,
};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// One native line kept with the entry it was read into.
struct Line {
    number: u64,
    raw: Value,
    /// For merged chunks: the indices of the message blocks this line held.
    blocks: Option<Vec<usize>>,
}

/// What merging the chunks of a response and checking the content look at
/// in the first record of an entry.
#[derive(Default)]
struct Head {
    request_id: Option<Value>,
    sidechain: Option<Value>,
    /// Whether the record's `message` is an object with `content`.
    has_content: bool,
    /// Whether the record's `message` is an object with `usage`.
    has_usage: bool,
}

impl Head {
    fn of(o: &Map<String, Value>) -> Head {
        let message = o.get("message").and_then(Value::as_object);
        Head {
            request_id: o.get("requestId").cloned(),
            sidechain: o.get("isSidechain").cloned(),
            has_content: message.is_some_and(|m| m.contains_key("content")),
            has_usage: message.is_some_and(|m| m.contains_key("usage")),
        }
    }
}

/// Record types that are session metadata, kept as custom entries.
const METADATA_TYPES: &[&str] = &[
    "last-prompt",
    "mode",
    "permission-mode",
    "agent-name",
    "agent-setting",
    "pr-link",
    "frame-link",
    "worktree-state",
    "relocated",
    "bridge-session",
    "atis-latch",
    "started",
    "result",
    "tag",
    // Claude Code 2.1.330 and later: what each API request was built from
    // (its shape, content-addressed message blobs, the request itself), the
    // tools used and the running cost.
    "api-request-shape",
    "api-request-blob",
    "api-request",
    "tools-used",
    "cost-state",
];

/// Record types kept as events.
const EVENT_TYPES: &[&str] = &[
    "system",
    "attachment",
    "progress",
    "queue-operation",
    "file-history-snapshot",
];

/// Record types that name the session.
const TITLE_TYPES: &[&str] = &["summary", "custom-title", "ai-title"];

#[derive(Default)]
struct MetaAcc {
    session_ids: Vec<String>,
    cwd: Option<String>,
    version: Option<String>,
    git_branch: Option<String>,
    slug: Option<String>,
    agent_id: Option<String>,
    created: Option<Timestamp>,
    updated: Option<Timestamp>,
    summary: Option<String>,
    ai_title: Option<String>,
    custom_title: Option<String>,
    model: Option<String>,
}

impl MetaAcc {
    fn observe(&mut self, o: &Map<String, Value>) {
        let s = |k: &str| o.get(k).and_then(Value::as_str);
        if let Some(id) = s("sessionId") {
            if !self.session_ids.iter().any(|x| x == id) {
                self.session_ids.push(id.to_string());
            }
        }
        if self.cwd.is_none() {
            self.cwd = s("cwd").map(str::to_string);
        }
        if let Some(v) = s("version") {
            self.version = Some(v.to_string());
        }
        if let Some(b) = s("gitBranch").filter(|b| !b.is_empty()) {
            self.git_branch = Some(b.to_string());
        }
        if self.slug.is_none() {
            self.slug = s("slug").map(str::to_string);
        }
        if self.agent_id.is_none() {
            self.agent_id = s("agentId").map(str::to_string);
        }
        if let Some(ts) = timestamp_of(o) {
            if ts.to_utc().is_some() {
                if self.created.is_none() {
                    self.created = Some(ts.clone());
                }
                self.updated = Some(ts);
            }
        }
        match s("type") {
            Some("summary") => self.summary = s("summary").map(str::to_string),
            Some("ai-title") => self.ai_title = s("aiTitle").map(str::to_string),
            Some("custom-title") => self.custom_title = s("customTitle").map(str::to_string),
            _ => {}
        }
        if let Some(m) = o.get("message").and_then(Value::as_object) {
            if m.get("role").and_then(Value::as_str) == Some("assistant") {
                if let Some(model) = m.get("model").and_then(Value::as_str) {
                    if model != "<synthetic>" {
                        self.model = Some(model.to_string());
                    }
                }
            }
        }
    }
}

fn timestamp_of(o: &Map<String, Value>) -> Option<Timestamp> {
    o.get("timestamp").and_then(Timestamp::from_json)
}

/// The fields of a record but the envelope the model holds for every
/// record (`type`, `uuid`, `parentUuid`, `timestamp`), moved.
fn without_envelope(o: Map<String, Value>) -> Extra {
    sift(o, |k, v| {
        (!matches!(k, "type" | "uuid" | "parentUuid" | "timestamp")).then_some(v)
    })
}

/// What a record says of its place in the tree, read before its parts are
/// moved into its entry.
struct Links {
    /// `parentUuid`: the id, `Some(None)` when null, `None` when absent or
    /// not a string.
    parent: Option<Option<String>>,
    /// `logicalParentUuid` (a compaction's parent across the boundary).
    logical_parent: Option<String>,
}

struct Reader<'a> {
    path: &'a Path,
    diags: Vec<Diagnostic>,
    entries: Vec<Entry>,
    /// Per entry, what its first record says of merging and content.
    heads: Vec<Head>,
    /// Per entry, its native lines (only to write the session back).
    lines: Vec<Vec<Line>>,
    /// Native uuid (first occurrence) to entry index.
    by_uuid: HashMap<String, usize>,
    /// Uuids of merged chunks to the id of the entry they were merged into.
    alias: HashMap<String, String>,
    /// Entry id to the last uuid-less entry chained in after it.
    redirect: HashMap<String, String>,
    /// Uuid-less entry id to the entry its chain hangs from.
    anchor_of: HashMap<String, String>,
    /// Index of the entry the previous record went into.
    prev: Option<usize>,
    /// Id of the last message that is not a sidechain.
    last_main: Option<String>,
    meta: MetaAcc,
    /// `(message.id, requestId)` of every response read so far.
    responses: HashSet<(String, String)>,
    /// False when the session is read only to be shown: the lines' patches
    /// are not worked out.
    to_write_back: bool,
    /// Applied to each entry once no later record can change it (see
    /// [`Trim`]).
    trim: Option<Trim<'a>>,
    /// The entries before this index are final ([`Reader::seal_before`]).
    sealed: usize,
    /// When trimmed: the `sessionId` each sealed entry's record carried
    /// (trimming may drop the field; `finish` names the session after the
    /// leaf's).
    session_ids: Vec<Option<Rc<str>>>,
    /// The `tool-results` directories persisted outputs are read from,
    /// once looked up.
    persisted: Option<Vec<PathBuf>>,
}

/// What is done to each entry of a session read to be shown once the
/// reader is done with it (see [`crate::Format::read_path_to_show_with`]).
pub(crate) type Trim<'a> = &'a dyn Fn(&mut Entry);

/// Reads the bytes of a Claude transcript at `path`; with `to_write_back`,
/// also what writing it back line for line needs (see `record_lines`).
pub(crate) fn read(
    path: &Path,
    bytes: &[u8],
    to_write_back: bool,
    trim: Option<Trim<'_>>,
) -> (Session, Vec<Diagnostic>) {
    let mut r = Reader::new(path, to_write_back, trim);
    crate::jsonl::each_value(path, bytes, |n, v| match v {
        Ok(v) => r.record(n, v),
        Err(d) => r.diags.push(d),
    });
    r.finish()
}

/// [`read`] from a stream of about `len` bytes (see
/// [`crate::jsonl::each_value_read`]); the error that stopped reading
/// `input`, if any.
pub(crate) fn read_stream(
    path: &Path,
    input: impl std::io::BufRead + Send,
    trim: Option<Trim<'_>>,
    len: u64,
) -> std::io::Result<(Session, Vec<Diagnostic>)> {
    let mut r = Reader::new(path, false, trim);
    // Room for an entry per 512 bytes, more than a transcript has: the
    // entries are then never moved as they grow (moving 50 MB of them
    // into fresh pages was a tenth of reading a 113 MB session), and what
    // is never used is never touched. At most 2^20 (650 MB of address
    // space); none when that much cannot be had.
    let _ = r
        .entries
        .try_reserve_exact((len / 512).min(1 << 20) as usize);
    crate::jsonl::each_value_read(path, input, |n, v| match v {
        Ok(v) => r.record(n, v),
        Err(d) => r.diags.push(d),
    })?;
    Ok(r.finish())
}

impl<'a> Reader<'a> {
    fn new(path: &'a Path, to_write_back: bool, trim: Option<Trim<'a>>) -> Reader<'a> {
        Reader {
            to_write_back,
            trim: trim.filter(|_| !to_write_back),
            sealed: 0,
            session_ids: Vec::new(),
            persisted: None,
            path,
            diags: Vec::new(),
            entries: Vec::new(),
            heads: Vec::new(),
            lines: Vec::new(),
            by_uuid: HashMap::new(),
            alias: HashMap::new(),
            redirect: HashMap::new(),
            anchor_of: HashMap::new(),
            prev: None,
            last_main: None,
            meta: MetaAcc::default(),
            responses: HashSet::new(),
        }
    }
}

impl Reader<'_> {
    fn record(&mut self, n: u64, v: Value) {
        let o = match v {
            Value::Object(o) => o,
            v => {
                self.diags.push(Diagnostic::warning(
                    self.path,
                    Some(n),
                    "not-an-object",
                    "line is JSON but not an object; kept verbatim as an unknown record",
                ));
                self.push_unknown(n, None, v);
                return;
            }
        };
        self.meta.observe(&o);
        let ty = o.get("type").and_then(Value::as_str).map(str::to_string);
        let uuid = o.get("uuid").and_then(Value::as_str).map(str::to_string);
        let message = o.get("message");
        let is_message = match ty.as_deref() {
            Some("user") | Some("assistant") => true,
            None => message.is_some_and(Value::is_object),
            _ => false,
        };
        if is_message && !message.is_some_and(Value::is_object) {
            self.diags.push(Diagnostic::warning(
                self.path,
                Some(n),
                "bad-message",
                format!(
                    "{} record whose `message` is not an object; kept verbatim as an unknown record",
                    ty.as_deref().unwrap_or("untyped")
                ),
            ));
            self.push_unknown(n, ty, Value::Object(o));
            return;
        }
        let o = if is_message {
            match self.try_merge(n, o, uuid.as_deref()) {
                Ok(()) => return,
                Err(o) => o,
            }
        } else {
            o
        };
        if let (Some(u), Some(p)) = (uuid.as_deref(), self.prev) {
            if self.by_uuid.get(u) == Some(&p) {
                self.diags.push(Diagnostic::info(
                    self.path,
                    Some(n),
                    "duplicate-uuid",
                    format!("record repeats the uuid {u} of the record before it (a resumed session replaying it); kept with it"),
                ));
                self.alias.insert(u.to_string(), self.entries[p].id.clone());
                if self.to_write_back {
                    self.lines[p].push(Line {
                        number: n,
                        raw: Value::Object(o),
                        blocks: None,
                    });
                }
                return;
            }
        }
        let id = match uuid.as_deref() {
            Some(u) if !self.by_uuid.contains_key(u) => u.to_string(),
            Some(u) => {
                self.diags.push(Diagnostic::info(
                    self.path,
                    Some(n),
                    "duplicate-uuid",
                    format!(
                        "uuid {u} was already used by an earlier record; this one is entry {u}~{n}"
                    ),
                ));
                format!("{u}~{n}")
            }
            None => format!("line-{n}"),
        };
        // What is read of the record as a whole, before its parts are
        // moved into the entry.
        let head = Head::of(&o);
        let raw = self.to_write_back.then(|| Value::Object(o.clone()));
        let timestamp = timestamp_of(&o);
        let links = Links {
            parent: match o.get("parentUuid") {
                Some(Value::String(p)) => Some(Some(p.clone())),
                Some(Value::Null) => Some(None),
                _ => None,
            },
            logical_parent: o
                .get("logicalParentUuid")
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        let (kind, extra) = if is_message {
            self.message_kind(o, ty.as_deref())
        } else {
            match ty.as_deref() {
                Some(t) => self.other_kind(n, t, o),
                None => {
                    self.diags.push(Diagnostic::info(
                        self.path,
                        Some(n),
                        "unknown-type",
                        "record has no `type`; kept verbatim",
                    ));
                    (
                        EntryKind::Unknown {
                            record_type: None,
                            raw: Value::Object(o),
                        },
                        Extra::new(),
                    )
                }
            }
        };
        let parent = self.parent_of(&links, &kind, uuid.is_none(), &id);
        let mut entry = Entry::new(id.clone(), parent, kind);
        entry.timestamp = timestamp;
        entry.extra = extra;
        entry.line = Some(n);
        if let Some(u) = uuid {
            self.by_uuid.entry(u).or_insert(self.entries.len());
        }
        self.push(entry, n, head, raw);
    }

    /// Adds `entry`, read from line `n`, with the `head` of its record and,
    /// to write the session back, the record `raw`. Only that keeps whole
    /// records: a 113 MB session's records kept doubled its memory.
    fn push(&mut self, entry: Entry, n: u64, head: Head, raw: Option<Value>) {
        if let EntryKind::Message(m) = &entry.kind {
            if !m.sidechain {
                self.last_main = Some(entry.id.clone());
            }
        }
        // Only the entry last pushed takes later chunks (`try_merge`).
        self.seal_before(self.entries.len());
        self.prev = Some(self.entries.len());
        self.entries.push(entry);
        self.heads.push(head);
        if let Some(raw) = raw {
            self.lines.push(vec![Line {
                number: n,
                raw,
                blocks: None,
            }]);
        }
    }

    fn push_unknown(&mut self, n: u64, record_type: Option<String>, raw: Value) {
        let id = format!("line-{n}");
        let parent = self.chain_after_prev(&id);
        let head = match &raw {
            Value::Object(o) => Head::of(o),
            _ => Head::default(),
        };
        let kept = self.to_write_back.then(|| raw.clone());
        let mut e = Entry::new(id, parent, EntryKind::Unknown { record_type, raw });
        e.line = Some(n);
        self.push(e, n, head, kept);
    }

    /// Returns the id of the previous entry and records that the uuid-less
    /// entry `id` is chained in after it.
    fn chain_after_prev(&mut self, id: &str) -> Option<String> {
        let p = self.entries.get(self.prev?)?.id.clone();
        let anchor = self.anchor_of.get(&p).cloned().unwrap_or_else(|| p.clone());
        self.redirect.insert(anchor.clone(), id.to_string());
        self.anchor_of.insert(id.to_string(), anchor);
        Some(p)
    }

    fn resolve(&self, p: &str) -> String {
        let base = self.alias.get(p).map_or(p, String::as_str);
        self.redirect
            .get(base)
            .cloned()
            .unwrap_or_else(|| base.to_string())
    }

    fn parent_of(
        &mut self,
        links: &Links,
        kind: &EntryKind,
        no_uuid: bool,
        id: &str,
    ) -> Option<String> {
        match &links.parent {
            Some(Some(p)) => Some(self.resolve(p)),
            Some(None) => {
                if let EntryKind::Compaction { .. } = kind {
                    if let Some(l) = &links.logical_parent {
                        return Some(self.resolve(l));
                    }
                }
                match kind {
                    EntryKind::Message(m) if m.sidechain => self
                        .spawner_of(m)
                        .or_else(|| self.last_main.clone())
                        .map(|p| self.resolve(&p)),
                    _ => None,
                }
            }
            _ if no_uuid => self.chain_after_prev(id),
            _ => self
                .prev
                .and_then(|p| self.entries.get(p))
                .map(|e| e.id.clone()),
        }
    }

    /// Returns the main-line message whose `Task`/`Agent` call started the
    /// sidechain that begins with `first`: the call whose prompt is its
    /// text, else the latest message with such a call.
    fn spawner_of(&self, first: &Message) -> Option<String> {
        let text = first.text_content();
        let mut latest = None;
        for e in self.entries.iter().rev() {
            let Some(m) = e.message() else { continue };
            if m.sidechain || m.role != Role::Assistant {
                continue;
            }
            for (_, name, input) in m.tool_calls() {
                if name == "Task" || name == "Agent" {
                    if input.get("prompt").and_then(Value::as_str) == Some(text.as_str()) {
                        return Some(e.id.clone());
                    }
                    latest.get_or_insert_with(|| e.id.clone());
                }
            }
        }
        latest
    }

    /// Merges an assistant line into the previous entry when it continues
    /// the same API response; gives the record back when it does not.
    fn try_merge(
        &mut self,
        n: u64,
        mut o: Map<String, Value>,
        uuid: Option<&str>,
    ) -> Result<(), Map<String, Value>> {
        let Some(p) = self.prev else { return Err(o) };
        let continues = |m: &Message, first: &Head| {
            let Some(msg) = o.get("message").and_then(Value::as_object) else {
                return false;
            };
            let mid = msg.get("id").and_then(Value::as_str);
            mid.is_some()
                && m.role == Role::Assistant
                && m.id.as_deref() == mid
                && first.request_id.as_ref() == o.get("requestId")
                && first.sidechain.as_ref() == o.get("isSidechain")
                && msg.get("role").and_then(Value::as_str) == Some("assistant")
        };
        let first = &self.heads[p];
        let m = match &mut self.entries[p].kind {
            EntryKind::Message(m) if continues(m, first) => m,
            _ => return Err(o),
        };
        // Only writing back looks at a merged chunk's own record.
        let raw = self.to_write_back.then(|| Value::Object(o.clone()));
        let msg = match o.remove("message") {
            Some(Value::Object(msg)) => msg,
            _ => Map::new(),
        };
        let chunk = wire::message_from_native(Some("assistant"), msg);
        let mut indices = Vec::with_capacity(chunk.content.len());
        for b in chunk.content {
            match m.content.iter().position(|x| *x == b) {
                Some(i) => indices.push(i),
                None => {
                    indices.push(m.content.len());
                    m.content.push(b);
                }
            }
        }
        if chunk.usage.is_some() {
            m.usage = chunk.usage;
        }
        if chunk.stop_reason.is_some() {
            m.stop_reason = chunk.stop_reason;
        }
        if let Some(u) = uuid {
            self.alias.insert(u.to_string(), self.entries[p].id.clone());
        }
        if let Some(raw) = raw {
            self.lines[p].push(Line {
                number: n,
                raw,
                blocks: Some(indices),
            });
        }
        Ok(())
    }

    fn message_kind(&mut self, o: Map<String, Value>, ty: Option<&str>) -> (EntryKind, Extra) {
        let flag = |k: &str| o.get(k).and_then(Value::as_bool) == Some(true);
        let flags = Flags {
            compact_summary: flag("isCompactSummary"),
            meta: flag("isMeta"),
        };
        let sidechain = flag("isSidechain");
        let request = o
            .get("requestId")
            .and_then(Value::as_str)
            .map(str::to_string);
        let cost = o.get("costUSD").and_then(Value::as_f64);
        let mut msg = Map::new();
        let extra = sift(o, |k, v| match (k, v) {
            ("type" | "uuid" | "parentUuid" | "timestamp" | "isSidechain", _) => None,
            ("message", Value::Object(m)) => {
                msg = m;
                None
            }
            ("message", _) => None,
            (_, v) => Some(v),
        });
        let mut m = wire::message_from_native(ty, msg);
        m.sidechain = sidechain;
        if m.role == Role::User
            && !m.content.is_empty()
            && m.content
                .iter()
                .all(|b| matches!(b.kind, BlockKind::ToolResult { .. }))
        {
            m.role = Role::Tool;
            let ids: Vec<&Option<String>> = m
                .content
                .iter()
                .filter_map(|b| match &b.kind {
                    BlockKind::ToolResult { tool_call_id, .. } => Some(tool_call_id),
                    _ => None,
                })
                .collect();
            if ids.len() == 1 {
                m.tool_call_id = ids[0].clone();
            }
            m.is_error = Some(
                m.content
                    .iter()
                    .any(|b| matches!(b.kind, BlockKind::ToolResult { is_error: true, .. })),
            );
        }
        if let (Role::Assistant, Some(id)) = (&m.role, &m.id) {
            if !self
                .responses
                .insert((id.clone(), request.unwrap_or_default()))
            {
                // A response seen before (a replay): its usage stays native
                // and is not counted again.
                if let Some(u) = m.usage.take() {
                    m.extra.insert("usage".into(), wire::usage_to_native(&u));
                }
            }
        }
        m.injected = classify(&m, flags);
        if let Some(cost) = cost {
            if let Some(u) = m.usage.as_mut() {
                u.cost_usd = Some(cost);
            }
        }
        (EntryKind::Message(m), extra)
    }

    fn other_kind(&mut self, n: u64, ty: &str, o: Map<String, Value>) -> (EntryKind, Extra) {
        let s = |k: &str| o.get(k).and_then(Value::as_str);
        if ty == "system" && s("subtype") == Some("compact_boundary") {
            let tokens_before = o
                .get("compactMetadata")
                .and_then(|c| c.get("preTokens"))
                .and_then(Value::as_u64);
            return (
                EntryKind::Compaction {
                    summary: String::new(),
                    short_summary: None,
                    first_kept_entry_id: None,
                    tokens_before,
                    details: None,
                    from_extension: None,
                    preserve_data: None,
                },
                without_envelope(o),
            );
        }
        if TITLE_TYPES.contains(&ty) {
            let key = wire::title_key(ty);
            if let Some(name) = s(key).map(str::to_string) {
                let mut extra = sift(o, |k, v| {
                    (!matches!(k, "uuid" | "parentUuid" | "timestamp") && k != key).then_some(v)
                });
                extra.insert("type".into(), ty.into());
                return (EntryKind::SessionInfo { name: Some(name) }, extra);
            }
        }
        if EVENT_TYPES.contains(&ty) {
            let sub = match ty {
                "system" => s("subtype"),
                "attachment" => o
                    .get("attachment")
                    .and_then(|a| a.get("type"))
                    .and_then(Value::as_str),
                "progress" => o
                    .get("data")
                    .and_then(|a| a.get("type"))
                    .and_then(Value::as_str),
                "queue-operation" => s("operation"),
                _ => None,
            };
            let event_type = match sub {
                Some(sub) => format!("{ty}:{sub}"),
                None => ty.to_string(),
            };
            return (
                EntryKind::Event {
                    source: "claude".into(),
                    event_type,
                    seq: None,
                    payload: Value::Object(without_envelope(o)),
                },
                Extra::new(),
            );
        }
        if METADATA_TYPES.contains(&ty) {
            return (
                EntryKind::Custom {
                    custom_type: ty.to_string(),
                    data: Some(Value::Object(without_envelope(o))),
                },
                Extra::new(),
            );
        }
        self.diags.push(Diagnostic::info(
            self.path,
            Some(n),
            "unknown-type",
            format!("record type {ty:?} is not known; kept verbatim"),
        ));
        (
            EntryKind::Unknown {
                record_type: Some(ty.to_string()),
                raw: Value::Object(o),
            },
            Extra::new(),
        )
    }

    fn finish(mut self) -> (Session, Vec<Diagnostic>) {
        self.seal_before(self.entries.len());
        self.pair_tools();
        self.fill_compactions();
        self.check_content();
        if self.to_write_back {
            self.record_lines();
        }
        // The leaf is the last entry of the main conversation; in a
        // subagent file (`agent-*.jsonl`, every message a sidechain) it is
        // the last entry of the subagent's own conversation.
        let has_main = self
            .entries
            .iter()
            .any(|e| e.message().is_some_and(|m| !m.sidechain));
        let leaf = self
            .entries
            .iter()
            .rev()
            .find(|e| !(has_main && e.message().is_some_and(|m| m.sidechain)))
            .or(self.entries.last())
            .map(|e| e.id.clone());
        let leaf_session = leaf.as_deref().and_then(|l| {
            let tree = agentlog_model::Tree::new(&self.entries);
            let path = tree.path_to_root(l);
            if self.trim.is_none() {
                return path.iter().rev().find_map(|e| entry_session_id(e));
            }
            path.iter().rev().find_map(|e| {
                let id = self.session_ids.get(tree.index_of(&e.id)?)?;
                id.as_deref().map(str::to_string)
            })
        });
        let meta = self.session_meta(leaf_session);
        let ids: std::collections::HashSet<&str> =
            self.entries.iter().map(|e| e.id.as_str()).collect();
        let mut missing = Vec::new();
        for e in &self.entries {
            if let Some(p) = &e.parent_id {
                if !ids.contains(p.as_str()) {
                    missing.push(Diagnostic::info(
                        self.path,
                        e.line,
                        "missing-parent",
                        format!("parent {p} is not in this file; entry {} is a root", e.id),
                    ));
                }
            }
        }
        self.diags.extend(missing);
        let session = Session {
            meta,
            entries: self.entries,
            leaf_id: leaf,
        };
        (session, self.diags)
    }

    fn check_content(&mut self) {
        for (e, head) in self.entries.iter().zip(&self.heads) {
            if let EntryKind::Message(_) = &e.kind {
                if !head.has_content && !head.has_usage {
                    self.diags.push(Diagnostic::warning(
                        self.path,
                        e.line,
                        "no-content",
                        "message has no `content`; kept without content",
                    ));
                }
            }
        }
    }

    /// Makes the entries before `end` final: loads their persisted
    /// outputs and, when the session is trimmed, trims them (a long
    /// session's extras then never pile up: most of a Claude record's
    /// bytes beyond its message are a second copy of the tool output).
    fn seal_before(&mut self, end: usize) {
        if self.sealed >= end {
            return;
        }
        if self.persisted.is_none() {
            self.persisted = Some(tool_result_dirs(self.path));
        }
        let dirs = self.persisted.as_deref().unwrap_or(&[]);
        for e in &mut self.entries[self.sealed..end] {
            if !dirs.is_empty() {
                load_persisted_output(dirs, e);
            }
            if let Some(trim) = self.trim {
                // Records repeat their session's id: one copy is shared.
                let id = match (entry_session_id(e), self.session_ids.last()) {
                    (Some(id), Some(Some(last))) if **last == *id => Some(last.clone()),
                    (id, _) => id.map(Rc::from),
                };
                self.session_ids.push(id);
                trim(e);
            }
        }
        self.sealed = end;
    }

    /// Names the tool of each tool result after its call.
    fn pair_tools(&mut self) {
        let mut names: HashMap<String, String> = HashMap::new();
        for e in &self.entries {
            if let Some(m) = e.message() {
                for (id, name, _) in m.tool_calls() {
                    if let Some(id) = id {
                        names.insert(id.clone(), name.to_string());
                    }
                }
            }
        }
        for e in &mut self.entries {
            if let EntryKind::Message(m) = &mut e.kind {
                if let Some(id) = &m.tool_call_id {
                    m.tool_name = names.get(id).cloned();
                }
            }
        }
    }

    /// Gives each compaction the summary text that follows it.
    fn fill_compactions(&mut self) {
        let summaries: Vec<(Option<String>, String)> = self
            .entries
            .iter()
            .filter_map(|e| {
                let m = e.message()?;
                (m.injected.as_deref() == Some("compact-summary"))
                    .then(|| (e.parent_id.clone(), m.text_content()))
            })
            .collect();
        for e in &mut self.entries {
            let id = e.id.clone();
            if let EntryKind::Compaction { summary, .. } = &mut e.kind {
                if let Some((_, text)) = summaries.iter().find(|(p, _)| p.as_deref() == Some(&id)) {
                    *summary = text.clone();
                }
            }
        }
    }

    /// Stores, per entry, what its native lines differ in from the lines
    /// the writer rebuilds from the model.
    fn record_lines(&mut self) {
        for (e, lines) in self.entries.iter_mut().zip(std::mem::take(&mut self.lines)) {
            if matches!(e.kind, EntryKind::Unknown { .. }) && lines.len() == 1 {
                continue; // kept verbatim
            }
            let base = wire::entry_to_native(e);
            if lines.len() == 1 && lines[0].blocks.is_none() {
                if let Some(p) = wire::diff(&lines[0].raw, &base) {
                    let mut mark = Map::new();
                    mark.insert("patch".into(), p);
                    e.extra.insert(MARK.into(), Value::Object(mark));
                }
                continue;
            }
            let mut out = Vec::with_capacity(lines.len());
            for (i, line) in lines.into_iter().enumerate() {
                // The first line of a merged response holds the blocks not
                // claimed by a later chunk that repeats them.
                let blocks = match line.blocks {
                    Some(b) => Some(b),
                    None if i == 0 => first_line_blocks(&line.raw, e),
                    None => None,
                };
                let rebuilt = line_base(&base, e, blocks.as_deref());
                let mut rec = Map::new();
                if let Some(b) = blocks {
                    rec.insert(
                        "blocks".into(),
                        Value::Array(b.into_iter().map(Value::from).collect()),
                    );
                }
                if let Some(p) = wire::diff(&line.raw, &rebuilt) {
                    rec.insert("patch".into(), p);
                }
                rec.insert("line".into(), line.number.into());
                out.push(Value::Object(rec));
            }
            let mut mark = Map::new();
            mark.insert("lines".into(), Value::Array(out));
            e.extra.insert(MARK.into(), Value::Object(mark));
        }
    }

    fn session_meta(&self, leaf_session: Option<String>) -> SessionMeta {
        let a = &self.meta;
        let stem = self
            .path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_string();
        let parent_dir = self.path.parent();
        let in_subagents = parent_dir
            .and_then(Path::file_name)
            .is_some_and(|n| n == "subagents");
        let is_agent_file = stem.starts_with("agent-");
        let id = if is_agent_file || uuid::Uuid::parse_str(&stem).is_ok() {
            stem.clone()
        } else {
            leaf_session
                .or_else(|| a.session_ids.last().cloned())
                .unwrap_or(stem.clone())
        };
        let mut meta = SessionMeta::new(id.clone(), Agent::Claude);
        meta.format = Some("claude".into());
        meta.agent_version = a.version.clone();
        meta.cwd = a.cwd.clone();
        meta.created_at = a.created.clone();
        meta.updated_at = a.updated.clone();
        meta.title = a
            .custom_title
            .clone()
            .or_else(|| a.ai_title.clone())
            .or_else(|| a.summary.clone());
        meta.model.model = a.model.clone();
        if a.model.is_some() {
            meta.model.provider = Some("anthropic".into());
        }
        meta.parent_session = if in_subagents {
            parent_dir
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .and_then(|n| n.to_str())
                .map(str::to_string)
        } else {
            a.session_ids.first().filter(|s| **s != id).cloned()
        };
        let mut put = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                meta.extra.insert(k.into(), Value::String(v));
            }
        };
        put("gitBranch", a.git_branch.clone());
        put("slug", a.slug.clone());
        if is_agent_file {
            put(
                "agentId",
                a.agent_id
                    .clone()
                    .or_else(|| stem.strip_prefix("agent-").map(str::to_string)),
            );
            let side = self.path.with_extension("meta.json");
            if let Ok(bytes) = std::fs::read(&side) {
                if let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(&bytes) {
                    for (k, v) in m {
                        meta.extra.insert(k, v);
                    }
                }
            }
        }
        if a.session_ids.len() > 1 {
            meta.extra.insert(
                "sessionIds".into(),
                Value::Array(a.session_ids.iter().cloned().map(Value::String).collect()),
            );
        }
        meta
    }
}

/// Returns the `sessionId` a record carried.
fn entry_session_id(e: &Entry) -> Option<String> {
    let from = |v: Option<&Value>| {
        v.and_then(|v| v.get("sessionId"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    e.extra
        .get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| match &e.kind {
            EntryKind::Event { payload, .. } => from(Some(payload)),
            EntryKind::Custom { data, .. } => from(data.as_ref()),
            EntryKind::Unknown { raw, .. } => from(Some(raw)),
            _ => None,
        })
}

/// Returns the indices of the merged message's blocks held by the first
/// line of a response.
fn first_line_blocks(raw: &Value, e: &Entry) -> Option<Vec<usize>> {
    let m = e.message()?;
    let items = raw.get("message")?.get("content")?.as_array()?;
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let b = wire::block_from_native(item.clone());
        out.push(m.content.iter().position(|x| *x == b)?);
    }
    Some(out)
}

/// Returns the rebuilt native line of one chunk: the entry's record with
/// only the chunk's blocks.
pub(crate) fn line_base(base: &Value, e: &Entry, blocks: Option<&[usize]>) -> Value {
    let mut v = base.clone();
    if let (Some(idx), Some(m)) = (blocks, e.message()) {
        let content: Vec<Value> = idx
            .iter()
            .filter_map(|&i| m.content.get(i))
            .map(wire::block_to_native)
            .collect();
        if let Some(msg) = v.get_mut("message").and_then(Value::as_object_mut) {
            msg.insert("content".into(), Value::Array(content));
        }
    }
    v
}

/// Returns the `tool-results` directories a transcript may point into: its
/// own session directory's, and for a subagent file its parent session's.
fn tool_result_dirs(path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let own = path.with_extension("").join("tool-results");
    if own.is_dir() {
        out.push(own);
    }
    if let Some(dir) = path.parent() {
        if dir.file_name().is_some_and(|n| n == "subagents") {
            if let Some(session_dir) = dir.parent() {
                let p = session_dir.join("tool-results");
                if p.is_dir() {
                    out.push(p);
                }
            }
        }
    }
    out.into_iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect()
}

/// Replaces the persisted-output previews of `e` with the full output
/// stored in the session's `tool-results` directories `dirs` (only files
/// inside them).
fn load_persisted_output(dirs: &[PathBuf], e: &mut Entry) {
    let declared = e
        .extra
        .get("toolUseResult")
        .and_then(|t| t.get("persistedOutputPath"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let EntryKind::Message(m) = &mut e.kind else {
        return;
    };
    for b in &mut m.content {
        let BlockKind::ToolResult { content, .. } = &mut b.kind else {
            continue;
        };
        let text: String = content.iter().filter_map(Block::plain_text).collect();
        if !text.contains("<persisted-output>") {
            continue;
        }
        let target = declared.clone().or_else(|| saved_path(&text));
        let Some(target) = target else { continue };
        if let Some(full) = read_inside(dirs, Path::new(&target)) {
            *content = vec![Block::text(full)];
        }
    }
}

fn saved_path(text: &str) -> Option<String> {
    let i = text.find("saved to:")?;
    let rest = text[i + "saved to:".len()..].trim_start();
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    (end > 0).then(|| rest[..end].to_string())
}

/// Reads `target` when it lies inside one of `dirs`.
fn read_inside(dirs: &[PathBuf], target: &Path) -> Option<String> {
    let real = std::fs::canonicalize(target).ok()?;
    if !dirs.iter().any(|d| real.starts_with(d)) || !real.is_file() {
        return None;
    }
    let bytes = std::fs::read(&real).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Classifies context the harness injected into a user message.
/// The flags of a message record that say what it is.
#[derive(Clone, Copy)]
struct Flags {
    /// `isCompactSummary`.
    compact_summary: bool,
    /// `isMeta`.
    meta: bool,
}

fn classify(m: &Message, flags: Flags) -> Option<String> {
    if flags.compact_summary {
        return Some("compact-summary".into());
    }
    if m.role != Role::User {
        return None;
    }
    let text = m.text_content();
    let t = text.trim_start();
    let kind = if t.starts_with("This session is being continued from a previous conversation") {
        Some("compact-summary")
    } else if t.starts_with("<command-name>")
        || t.starts_with("<command-message>")
        || t.starts_with("<command-args>")
    {
        Some("command")
    } else if t.starts_with("<local-command-stdout>") || t.starts_with("<local-command-stderr>") {
        Some("local-command-output")
    } else if t.starts_with("<local-command-caveat>")
        || t.starts_with(
            "Caveat: The messages below were generated by the user while running local commands",
        )
    {
        Some("local-command-caveat")
    } else if t.starts_with("<system-reminder>") {
        Some("system-reminder")
    } else if t.starts_with("[Request interrupted by user") {
        Some("interrupted")
    } else if t.starts_with("<task-notification>") {
        Some("task-notification")
    } else if t.starts_with("Stop hook feedback:") {
        Some("hook-feedback")
    } else if t.starts_with("<user-prompt-submit-hook>") {
        Some("hook")
    } else if t.starts_with("<ide_") && strip_ide(t).trim().is_empty() {
        Some("ide-context")
    } else if flags.meta {
        Some("meta")
    } else {
        None
    };
    kind.map(str::to_string)
}

/// Removes `<ide_…>…</ide_…>` sections from `t`.
fn strip_ide(t: &str) -> String {
    let mut out = String::new();
    let mut rest = t;
    while let Some(i) = rest.find("<ide_") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let name_end = after
            .find(|c: char| c == '>' || c.is_whitespace())
            .unwrap_or(after.len());
        let close = format!("</{}>", &after[..name_end]);
        match rest.find(&close) {
            Some(j) => rest = &rest[j + close.len()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// The drift report of a Claude Code transcript: the records kept as
/// unknown, and the fields of its `user`, `assistant` and `system`
/// records beyond those real files hold ([`wire::KNOWN_FIELDS`]).
pub(super) fn drift(read: &crate::Read) -> Vec<crate::drift::Drift> {
    let mut t = crate::drift::Tally::default();
    crate::drift::unknown_records(read, &mut t);
    for e in &read.session.entries {
        let EntryKind::Message(m) = &e.kind else {
            continue;
        };
        let typ = match m.role {
            Role::Assistant => "assistant",
            Role::System => "system",
            _ => "user",
        };
        if let Some((_, known)) = wire::KNOWN_FIELDS.iter().find(|(k, _)| *k == typ) {
            t.fields(typ, e.extra.keys(), known, e.line);
        }
    }
    t.into_items()
}

/// What a Claude Code transcript is: a subagent's when Claude Code filed
/// it as one (`subagents/agent-<id>.jsonl` from 2.1, `agent-<id>.jsonl`
/// beside the sessions in 2.0) or when every message is a sidechain's; a
/// headless run when its records say it came in through the SDK
/// (`entrypoint` `sdk-cli` is what `claude -p` writes, `sdk-ts` and
/// `sdk-py` the Agent SDK's); else a conversation.
pub(super) fn session_kind(path: &Path, session: &Session) -> agentlog_model::SessionKind {
    use agentlog_model::SessionKind;
    let in_subagents = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "subagents");
    let agent_file = path
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s.starts_with("agent-"));
    let messages: Vec<&Message> = session.entries.iter().filter_map(|e| e.message()).collect();
    if in_subagents || agent_file || (!messages.is_empty() && messages.iter().all(|m| m.sidechain))
    {
        return SessionKind::Subagent;
    }
    let entrypoint = session
        .entries
        .iter()
        .find_map(|e| e.extra.get("entrypoint").and_then(Value::as_str));
    match entrypoint {
        Some(p) if p.starts_with("sdk-") => SessionKind::Headless,
        _ => SessionKind::Conversation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_injected_context() {
        let none = Flags {
            compact_summary: false,
            meta: false,
        };
        let c = |s: &str| classify(&Message::text(Role::User, s), none);
        assert_eq!(
            c("<command-name>/clear</command-name>").as_deref(),
            Some("command")
        );
        assert_eq!(
            c("<ide_opened_file>a.rs</ide_opened_file>").as_deref(),
            Some("ide-context")
        );
        assert_eq!(c("<ide_opened_file>a.rs</ide_opened_file> fix it"), None);
        assert_eq!(
            c("[Request interrupted by user]").as_deref(),
            Some("interrupted")
        );
        assert_eq!(c("hello"), None);
    }

    #[test]
    fn finds_the_saved_path() {
        assert_eq!(
            saved_path(
                "<persisted-output>Output too large (9KB). Full output saved to: /a/b.txt\nPreview"
            )
            .as_deref(),
            Some("/a/b.txt")
        );
    }
}
