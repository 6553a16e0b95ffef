//! `agentlog push --otlp URL`: sessions sent as traces to an OTLP/HTTP
//! endpoint (`URL/v1/traces`), incrementally.
//!
//! What was sent is kept per endpoint in
//! `$XDG_DATA_HOME/agentlog/otlp/<hash of the endpoint>.json`: for each
//! session's trace the ids of the spans the endpoint accepted, and for
//! each file its size and time once everything of it was sent. A push
//! reads only the files that changed, builds their traces ([`super::trace`],
//! the same ids every time) and sends the settled spans not sent yet: a
//! session already sent sends nothing, an appended turn sends its new
//! spans. The state is written (atomically) after each request the
//! endpoint accepted, so a push that fails midway has marked only what
//! arrived, and the next push sends the rest.
//!
//! A span still open (the last model call while its turn is not over, a
//! tool waiting for its result) waits for a later push, unless its file
//! has not changed for [`SETTLED_AFTER`]: then the session is taken as
//! ended and sent as it is.

use super::{merge_fidelity, trace, TraceSpan, TARGET};
use crate::{ApiError, Settings};
use agentlog_formats::discover::Found;
use agentlog_formats::Fidelity;
use prost::Message as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A file unchanged this long has its open spans sent as they are.
pub const SETTLED_AFTER: Duration = Duration::from_secs(3600);

/// The most spans in one request.
const SPANS_PER_REQUEST: usize = 500;

/// About the most bytes in one request (a larger span goes alone).
const BYTES_PER_REQUEST: usize = 4 << 20;

/// How the spans are encoded on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// Binary protobuf (`application/x-protobuf`), which every OTLP/HTTP
    /// receiver takes (Arize Phoenix takes only this).
    #[default]
    Protobuf,
    /// The protobuf JSON mapping (`application/json`).
    Json,
}

/// How to push.
#[derive(Clone, Debug)]
pub struct OtlpOptions {
    /// The endpoint as given: a base URL (`/v1/traces` is added) or the
    /// traces URL itself.
    pub endpoint: String,
    /// Headers sent with every request (authentication).
    pub headers: Vec<(String, String)>,
    /// The encoding.
    pub encoding: Encoding,
    /// Redact secrets before anything leaves the machine.
    pub redact: bool,
}

/// What a push did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct OtlpReport {
    /// The URL the spans were posted to.
    pub url: String,
    /// Session files looked at.
    pub files: usize,
    /// Files unchanged since everything of them was sent.
    pub unchanged: usize,
    /// Sessions of which spans were sent.
    pub sessions_sent: usize,
    /// Of those, sessions sent for the first time (new traces).
    pub new_traces: usize,
    /// Spans sent.
    pub spans: usize,
    /// Spans of turns still running, left for a later push.
    pub waiting: usize,
    /// Requests made.
    pub requests: usize,
    /// What the redaction replaced.
    pub redactions: agentlog_redact::Report,
    /// What the traces could not hold, over every session sent.
    pub fidelity: Fidelity,
    /// Files not sent, with the reason.
    pub skipped: Vec<(String, String)>,
}

/// What was sent to one endpoint.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    /// Per trace id (hex): the span ids (hex) the endpoint accepted.
    #[serde(default)]
    traces: BTreeMap<String, BTreeSet<String>>,
    /// Per file: its size and time when everything of it was sent.
    #[serde(default)]
    files: BTreeMap<String, Stamp>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    size: u64,
    mtime_ns: u128,
}

/// The URL spans are posted to for `endpoint`.
pub fn traces_url(endpoint: &str) -> String {
    let e = endpoint.trim();
    if e.trim_end_matches('/').ends_with("/v1/traces") {
        e.trim_end_matches('/').to_string()
    } else {
        format!("{}/v1/traces", e.trim_end_matches('/'))
    }
}

/// The state file of `url` under `settings`' data directory.
pub fn state_path(settings: &Settings, url: &str) -> PathBuf {
    let h = Sha256::digest(url.as_bytes());
    settings
        .env
        .xdg_data_home()
        .join("agentlog")
        .join("otlp")
        .join(format!("{}.json", hex::encode(&h[..8])))
}

fn load(path: &Path) -> Result<State, ApiError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            ApiError::io(
                path,
                std::io::Error::other(format!(
                    "not a state file agentlog can read ({e}); remove it to send everything again"
                )),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
        Err(e) => Err(ApiError::io(path, e)),
    }
}

fn save(path: &Path, state: &State) -> Result<(), ApiError> {
    agentlog_store::snapshot::ensure_dir(&agentlog_store::snapshot::parent_dir(path))?;
    let bytes =
        serde_json::to_vec(state).map_err(|e| ApiError::io(path, std::io::Error::other(e)))?;
    agentlog_store::snapshot::write_atomic(path, &bytes)?;
    Ok(())
}

fn stamp(path: &Path) -> Option<(Stamp, SystemTime)> {
    let m = std::fs::metadata(path).ok()?;
    let mtime = m.modified().ok()?;
    let ns = mtime
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    Some((
        Stamp {
            size: m.len(),
            mtime_ns: ns,
        },
        mtime,
    ))
}

/// The HTTP side of a push.
struct Sender {
    agent: ureq::Agent,
    url: String,
    opts: OtlpOptions,
}

impl Sender {
    fn new(opts: &OtlpOptions) -> Sender {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(120)))
            .http_status_as_error(false)
            .build()
            .new_agent();
        Sender {
            agent,
            url: traces_url(&opts.endpoint),
            opts: opts.clone(),
        }
    }

    fn fail(&self, why: impl Into<String>) -> ApiError {
        ApiError::Otlp {
            url: self.url.clone(),
            why: why.into(),
        }
    }

    /// Posts `request`; an error says what the endpoint answered.
    fn send(
        &self,
        request: &opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest,
    ) -> Result<(), ApiError> {
        let (body, content_type) = match self.opts.encoding {
            Encoding::Protobuf => (request.encode_to_vec(), "application/x-protobuf"),
            Encoding::Json => (
                serde_json::to_vec(request).map_err(|e| self.fail(e.to_string()))?,
                "application/json",
            ),
        };
        let mut req = self
            .agent
            .post(&self.url)
            .header("Content-Type", content_type);
        for (k, v) in &self.opts.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let response = req.send(&body[..]).map_err(|e| self.fail(e.to_string()))?;
        let status = response.status();
        let is_proto = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("protobuf"));
        let answer = response
            .into_body()
            .with_config()
            .limit(1 << 20)
            .read_to_vec()
            .unwrap_or_default();
        if !status.is_success() {
            let text = String::from_utf8_lossy(&answer);
            let text: String = text.chars().take(300).collect();
            return Err(self.fail(format!("the endpoint answered {status}: {}", text.trim())));
        }
        use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
        let parsed = if is_proto {
            ExportTraceServiceResponse::decode(&answer[..]).ok()
        } else {
            serde_json::from_slice::<ExportTraceServiceResponse>(&answer).ok()
        };
        if let Some(p) = parsed.and_then(|r| r.partial_success) {
            if p.rejected_spans > 0 {
                return Err(self.fail(format!(
                    "the endpoint rejected {} spans: {}",
                    p.rejected_spans, p.error_message
                )));
            }
        }
        Ok(())
    }
}

/// Sends the sessions of `found` as traces to the endpoint of `opts`
/// (see the module documentation). `progress` is called with the files
/// done and the total. An error of the endpoint stops the push: what it
/// accepted before stays marked as sent.
pub fn push(
    settings: &Settings,
    found: &[Found],
    opts: &OtlpOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<OtlpReport, ApiError> {
    let sender = Sender::new(opts);
    let state_file = state_path(settings, &sender.url);
    let mut state = load(&state_file)?;
    let redactor =
        if opts.redact {
            Some(agentlog_redact::Redactor::builtin().map_err(|e| {
                ApiError::io("redaction rules", std::io::Error::other(e.to_string()))
            })?)
        } else {
            None
        };
    let mut report = OtlpReport {
        url: sender.url.clone(),
        files: found.len(),
        fidelity: Fidelity::new(TARGET),
        ..OtlpReport::default()
    };
    let now = SystemTime::now();
    for (done, f) in found.iter().enumerate() {
        progress(done, found.len());
        let key = f.path.to_string_lossy().into_owned();
        // A session whose file its agent deleted is read from agentlog's
        // archive (discovery lists those too); it no longer changes.
        let (st, mtime) = stamp(&f.path).unwrap_or((
            Stamp {
                size: u64::MAX,
                mtime_ns: 0,
            },
            SystemTime::UNIX_EPOCH,
        ));
        if state.files.get(&key) == Some(&st) {
            report.unchanged += 1;
            continue;
        }
        let Some(format) = agentlog_formats::registry::by_name(f.format) else {
            report
                .skipped
                .push((key, format!("no reader for the format {}", f.format)));
            continue;
        };
        let mut read = match format.read_path(&f.path) {
            Ok(r) => r,
            Err(e) => {
                report.skipped.push((key, e.to_string()));
                continue;
            }
        };
        if let Some(r) = redactor {
            report.redactions.extend(r.session(&mut read.session));
        }
        let t = trace(&read.session);
        let ended = now.duration_since(mtime).is_ok_and(|d| d >= SETTLED_AFTER);
        let trace_hex = hex::encode(&t.trace_id);
        let sent = state.traces.get(&trace_hex);
        let new_trace = sent.is_none_or(|s| s.is_empty());
        let (ready, waiting): (Vec<&TraceSpan>, Vec<&TraceSpan>) = t
            .spans
            .iter()
            .filter(|s| !sent.is_some_and(|sent| sent.contains(&hex::encode(&s.span.span_id))))
            .partition(|s| s.settled || ended);
        report.waiting += waiting.len();
        if !ready.is_empty() {
            merge_fidelity(&mut report.fidelity, &t.fidelity);
            report.sessions_sent += 1;
            if new_trace {
                report.new_traces += 1;
            }
        }
        for batch in batches(&ready) {
            sender.send(&t.request(batch.iter().map(|s| &s.span)))?;
            report.requests += 1;
            report.spans += batch.len();
            let ids = state.traces.entry(trace_hex.clone()).or_default();
            ids.extend(batch.iter().map(|s| hex::encode(&s.span.span_id)));
            save(&state_file, &state)?;
        }
        if waiting.is_empty() {
            state.files.insert(key, st);
            save(&state_file, &state)?;
        }
    }
    progress(found.len(), found.len());
    Ok(report)
}

/// `spans` cut into requests of at most [`SPANS_PER_REQUEST`] spans and
/// about [`BYTES_PER_REQUEST`] bytes.
fn batches<'a>(spans: &[&'a TraceSpan]) -> Vec<Vec<&'a TraceSpan>> {
    let mut out: Vec<Vec<&TraceSpan>> = Vec::new();
    let mut size = 0;
    for s in spans {
        let len = s.span.encoded_len();
        let full = out.last().is_none_or(|b| {
            b.len() >= SPANS_PER_REQUEST || (size + len > BYTES_PER_REQUEST && !b.is_empty())
        });
        if full {
            out.push(Vec::new());
            size = 0;
        }
        size += len;
        if let Some(b) = out.last_mut() {
            b.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_traces_url_is_added_once() {
        assert_eq!(
            traces_url("http://127.0.0.1:6006"),
            "http://127.0.0.1:6006/v1/traces"
        );
        assert_eq!(traces_url("http://h:4318/"), "http://h:4318/v1/traces");
        assert_eq!(
            traces_url("https://cloud.langfuse.com/api/public/otel"),
            "https://cloud.langfuse.com/api/public/otel/v1/traces"
        );
        assert_eq!(traces_url("http://h/v1/traces"), "http://h/v1/traces");
    }
}
