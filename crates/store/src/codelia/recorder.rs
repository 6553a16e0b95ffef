//! The run recorder: writes one run's log, enforcing codelia's ordering
//! rules before anything reaches the file.

use crate::{AppendOptions, AppendWriter, Recovery, StoreError};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Writes the run log `sessions/YYYY/MM/DD/<run_id>.jsonl` of one run.
///
/// The header is written once, when the run is created, and never again;
/// records are only appended. Each record is checked before it is written
/// and a record that breaks a rule is refused with an error, writing
/// nothing:
///
/// - every record is a JSON object with a string `type` and a string `ts`,
///   and a `run_id`, when present, is the run's;
/// - `agent.event` has an integer `seq` greater than every earlier one;
/// - `llm.request` has an integer `seq` no earlier request used;
/// - `llm.response` has the `seq` of an earlier request not yet answered;
/// - nothing follows `run.end`.
///
/// Record types the recorder does not know (newer codelia records,
/// namespaced `x.<org>.*` records) are accepted as they are.
#[derive(Debug)]
pub struct RunRecorder {
    writer: AppendWriter,
    run_id: String,
    lines: u64,
    last_event_seq: Option<u64>,
    requests: HashSet<u64>,
    responses: HashSet<u64>,
    ended: bool,
}

/// Returns the log path of a run under `sessions`: `YYYY/MM/DD` of
/// `started_at` in UTC, then `<run_id>.jsonl`.
pub fn run_path(sessions: &Path, run_id: &str, started_at: &str) -> Result<PathBuf, StoreError> {
    crate::names::validate_name(run_id)?;
    let t = DateTime::parse_from_rfc3339(started_at).map_err(|e| {
        StoreError::Invalid(format!(
            "header started_at {started_at:?} is not an RFC 3339 time ({e}); the run's directory comes from it"
        ))
    })?;
    let day = t.with_timezone(&Utc).format("%Y/%m/%d").to_string();
    Ok(sessions.join(day).join(format!("{run_id}.jsonl")))
}

/// Returns the current time as codelia writes it (`2026-02-03T12:34:56.789Z`).
pub fn now_ts() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn field_str<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

impl RunRecorder {
    /// Creates the log of a new run under `sessions` and writes `header`
    /// (which must have `type: "header"`, a `run_id` and a `started_at`).
    /// Fails when the run's log already holds records.
    pub fn create(
        sessions: &Path,
        header: &Value,
        opts: AppendOptions,
    ) -> Result<(RunRecorder, Recovery), StoreError> {
        if field_str(header, "type") != Some("header") {
            return Err(StoreError::Invalid(
                "the first record of a run log must have type \"header\"".into(),
            ));
        }
        let run_id = field_str(header, "run_id")
            .ok_or_else(|| StoreError::Invalid("the header has no string run_id".into()))?;
        let started = field_str(header, "started_at")
            .ok_or_else(|| StoreError::Invalid("the header has no string started_at".into()))?;
        let path = run_path(sessions, run_id, started)?;
        let (mut writer, recovery) = AppendWriter::open(&path, opts)?;
        if !writer.is_empty() {
            return Err(StoreError::Invalid(format!(
                "{}: the run log already exists; open it with RunRecorder::open to continue it (its header is never rewritten)",
                path.display()
            )));
        }
        writer.append_json(header)?;
        let rec = RunRecorder {
            writer,
            run_id: run_id.to_string(),
            lines: 1,
            last_event_seq: None,
            requests: HashSet::new(),
            responses: HashSet::new(),
            ended: false,
        };
        Ok((rec, recovery))
    }

    /// Opens an existing run log to append to it, rebuilding the ordering
    /// state from its records.
    pub fn open(path: &Path, opts: AppendOptions) -> Result<(RunRecorder, Recovery), StoreError> {
        let (writer, recovery) = AppendWriter::open(path, opts)?;
        let bytes = std::fs::read(path).map_err(|e| StoreError::io(path, "read", e))?;
        let mut rec = RunRecorder {
            writer,
            run_id: String::new(),
            lines: 0,
            last_event_seq: None,
            requests: HashSet::new(),
            responses: HashSet::new(),
            ended: false,
        };
        let mut first = true;
        for line in bytes.split(|&b| b == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                if !line.is_empty() {
                    rec.lines += 1;
                }
                continue;
            }
            rec.lines += 1;
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if first {
                first = false;
                if field_str(&v, "type") != Some("header") {
                    return Err(StoreError::Invalid(format!(
                        "{}:{}: the first record is not a header",
                        path.display(),
                        rec.lines
                    )));
                }
                rec.run_id = field_str(&v, "run_id").unwrap_or_default().to_string();
                continue;
            }
            rec.note(&v);
        }
        if rec.lines == 0 {
            return Err(StoreError::Invalid(format!(
                "{}: the run log is empty; create it with RunRecorder::create",
                path.display()
            )));
        }
        Ok((rec, recovery))
    }

    /// Returns the log's path.
    pub fn path(&self) -> &Path {
        self.writer.path()
    }

    /// Returns the run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// True once `run.end` was written.
    pub fn has_ended(&self) -> bool {
        self.ended
    }

    /// Checks `record` against the ordering rules and appends it. A record
    /// that breaks a rule is refused and nothing is written.
    pub fn append(&mut self, record: &Value) -> Result<(), StoreError> {
        self.check(record).map_err(|problem| {
            StoreError::Invalid(format!(
                "{}:{}: record refused: {problem}",
                self.writer.path().display(),
                self.lines + 1
            ))
        })?;
        self.writer.append_json(record)?;
        self.lines += 1;
        self.note(record);
        Ok(())
    }

    fn check(&self, record: &Value) -> Result<(), String> {
        let Value::Object(r) = record else {
            return Err("a record must be a JSON object".into());
        };
        let ty = r
            .get("type")
            .and_then(Value::as_str)
            .ok_or("a record needs a string \"type\"")?;
        if ty == "header" {
            return Err(
                "the header is written once, when the run is created, and never rewritten".into(),
            );
        }
        if self.ended {
            return Err(format!(
                "the run has ended (run.end was written); a {ty} record cannot follow it"
            ));
        }
        if !r.get("ts").is_some_and(Value::is_string) {
            return Err(format!("a {ty} record needs a string \"ts\""));
        }
        match r.get("run_id") {
            Some(Value::String(id)) if *id != self.run_id => {
                return Err(format!(
                    "run_id {id:?} is not this run's ({:?})",
                    self.run_id
                ));
            }
            Some(Value::String(_)) => {}
            Some(_) => return Err("run_id must be a string".into()),
            None if !ty.starts_with("x.") => return Err(format!("a {ty} record needs the run_id")),
            None => {}
        }
        let seq = || {
            r.get("seq").and_then(Value::as_u64).ok_or(format!(
                "a {ty} record needs a non-negative integer \"seq\""
            ))
        };
        match ty {
            "agent.event" => {
                let s = seq()?;
                if let Some(last) = self.last_event_seq.filter(|l| s <= *l) {
                    return Err(format!(
                        "agent.event seq {s} must be greater than the previous seq {last}"
                    ));
                }
            }
            "llm.request" => {
                let s = seq()?;
                if self.requests.contains(&s) {
                    return Err(format!(
                        "llm.request seq {s} was already used by an earlier request"
                    ));
                }
            }
            "llm.response" => {
                let s = seq()?;
                if !self.requests.contains(&s) {
                    return Err(format!(
                        "llm.response seq {s} matches no earlier llm.request"
                    ));
                }
                if self.responses.contains(&s) {
                    return Err(format!("llm.request seq {s} was already answered"));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn note(&mut self, v: &Value) {
        let seq = v.get("seq").and_then(Value::as_u64);
        match (field_str(v, "type"), seq) {
            (Some("agent.event"), Some(s)) => self.last_event_seq = Some(s),
            (Some("llm.request"), Some(s)) => {
                self.requests.insert(s);
            }
            (Some("llm.response"), Some(s)) => {
                self.responses.insert(s);
            }
            (Some("run.end"), _) => self.ended = true,
            _ => {}
        }
    }

    /// Appends a record of `ty` with this run's id, the current time, and
    /// `fields` after them.
    pub fn record(&mut self, ty: &str, fields: Map<String, Value>) -> Result<(), StoreError> {
        let mut r = Map::new();
        r.insert("type".into(), Value::String(ty.into()));
        r.insert("run_id".into(), Value::String(self.run_id.clone()));
        r.insert("ts".into(), Value::String(now_ts()));
        for (k, v) in fields {
            r.entry(k).or_insert(v);
        }
        self.append(&Value::Object(r))
    }

    /// Appends `run.start` with a text input.
    pub fn run_start(&mut self, text: &str) -> Result<(), StoreError> {
        self.record(
            "run.start",
            obj([("input", serde_json::json!({"type": "text", "text": text}))]),
        )
    }

    /// Appends `agent.event` number `seq`.
    pub fn agent_event(&mut self, seq: u64, event: Value) -> Result<(), StoreError> {
        self.record(
            "agent.event",
            obj([("seq", Value::from(seq)), ("event", event)]),
        )
    }

    /// Appends `llm.request` number `seq` with its input snapshot
    /// (`messages`, `tools`, `tool_choice`, `model`).
    pub fn llm_request(&mut self, seq: u64, input: Value) -> Result<(), StoreError> {
        self.record(
            "llm.request",
            obj([("seq", Value::from(seq)), ("input", input)]),
        )
    }

    /// Appends `llm.response` number `seq`.
    pub fn llm_response(&mut self, seq: u64, output: Value) -> Result<(), StoreError> {
        self.record(
            "llm.response",
            obj([("seq", Value::from(seq)), ("output", output)]),
        )
    }

    /// Appends `tool.output` with the tool's full raw output.
    pub fn tool_output(
        &mut self,
        tool: &str,
        tool_call_id: &str,
        result_raw: &str,
        is_error: bool,
    ) -> Result<(), StoreError> {
        let mut f = obj([
            ("tool", Value::from(tool)),
            ("tool_call_id", Value::from(tool_call_id)),
            ("result_raw", Value::from(result_raw)),
        ]);
        if is_error {
            f.insert("is_error".into(), Value::Bool(true));
        }
        self.record("tool.output", f)
    }

    /// Appends `run.status`.
    pub fn run_status(&mut self, status: &str) -> Result<(), StoreError> {
        self.record("run.status", obj([("status", Value::from(status))]))
    }

    /// Appends `run.end` (nothing may follow it).
    pub fn run_end(&mut self, outcome: &str, final_text: Option<&str>) -> Result<(), StoreError> {
        let mut f = obj([("outcome", Value::from(outcome))]);
        if let Some(t) = final_text {
            f.insert("final".into(), Value::from(t));
        }
        self.record("run.end", f)
    }

    /// Forces every appended record to stable storage.
    pub fn sync(&mut self) -> Result<(), StoreError> {
        self.writer.sync()
    }
}

fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}
