//! A scripted mock model server for driving real coding-agent CLIs on
//! loopback, and the helpers the conformance tests use.
//!
//! The server speaks the Anthropic Messages API (`POST /v1/messages`), the
//! OpenAI Responses API (`POST /v1/responses`), OpenAI Chat Completions
//! (`POST /v1/chat/completions`) and Gemini (`POST
//! /v1beta/models/M:generateContent` and `:streamGenerateContent?alt=sse`),
//! streamed or whole, with thinking and tool calls. What it answers comes from
//! a [`Script`]; every request it receives is recorded, so a test can read
//! what the agent sent as structured [`Item`]s.
//!
//! ```
//! use agentlog_harness::{MockServer, Rule, Script, text, Item};
//! use std::io::{Read, Write};
//!
//! let script = Script::with_rule(Rule::new("hello").then(vec![text("hi there")]));
//! let server = MockServer::start(script).unwrap();
//! let body = r#"{"model":"m","messages":[{"role":"user","content":"hello"}],"tools":[{"name":"x"}]}"#;
//! let mut conn = std::net::TcpStream::connect(server.addr()).unwrap();
//! write!(conn, "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}", body.len(), body).unwrap();
//! let mut answer = String::new();
//! conn.read_to_string(&mut answer).unwrap();
//! assert!(answer.contains("hi there"));
//! let seen = server.requests();
//! assert_eq!(seen[0].items()[0], Item::User { text: "hello".into() });
//! ```
//!
//! Control endpoints (not recorded): `GET /_mock/requests` (every recorded
//! request as JSON), `DELETE /_mock/requests`, `PUT /_mock/script` (replace
//! the script with the JSON body).

mod history;
mod script;
mod wire;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde::Serialize;
use serde_json::{json, Value};

pub use history::{has_tools, items, prompt_and_step, Api, Item};
pub use script::{
    namespaced_tool_call, text, thinking, tool_call, Part, Reply, Rule, Script, ToolCall,
};

/// One request the server received.
#[derive(Debug, Clone, Serialize)]
pub struct Recorded {
    /// Its number, from 0, in arrival order.
    pub seq: u64,
    /// HTTP method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The model API, when it was a model call.
    pub api: Option<Api>,
    /// The JSON body (`null` when empty, a string when not JSON).
    pub body: Value,
}

impl Recorded {
    /// The conversation the request carried (empty when not a model call).
    pub fn items(&self) -> Vec<Item> {
        self.api.map(|a| items(a, &self.body)).unwrap_or_default()
    }

    /// Whether the request declared tools.
    pub fn has_tools(&self) -> bool {
        has_tools(&self.body)
    }

    /// The latest user prompt of the conversation.
    pub fn prompt(&self) -> String {
        prompt_and_step(&self.items()).0
    }
}

struct Shared {
    script: Mutex<Script>,
    requests: Mutex<Vec<Recorded>>,
    counter: AtomicU64,
    log: Option<Mutex<std::fs::File>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running mock server on 127.0.0.1 (a port the OS picked). It stops when
/// dropped.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockServer {
    /// Starts a server answering from `script`, on its own thread.
    pub fn start(script: Script) -> std::io::Result<MockServer> {
        MockServer::start_logging(script, None)
    }

    /// Like [`MockServer::start`], also appending every recorded request as
    /// one JSON line to `log`.
    pub fn start_logging(
        script: Script,
        log: Option<std::fs::File>,
    ) -> std::io::Result<MockServer> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script: Mutex::new(script),
            requests: Mutex::new(Vec::new()),
            counter: AtomicU64::new(0),
            log: log.map(Mutex::new),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let app = Router::new()
            .fallback(handle)
            .layer(DefaultBodyLimit::disable())
            .with_state(shared.clone());
        let thread = std::thread::Builder::new()
            .name("mock-model-server".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => {
                            eprintln!("mock model server: {e}");
                            return;
                        }
                    };
                    let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                        let _ = stopped.await;
                    });
                    if let Err(e) = serve.await {
                        eprintln!("mock model server: {e}");
                    }
                })
            })?;
        Ok(MockServer {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.requests).clone()
    }

    /// The model calls received so far that declared tools (the agent's own
    /// turns, not its side requests).
    pub fn turns(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.api.is_some() && r.has_tools())
            .collect()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        lock(&self.shared.requests).clear();
    }

    /// Replaces the script.
    pub fn set_script(&self, script: Script) {
        *lock(&self.shared.script) = script;
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn json_response(status: StatusCode, v: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    let path = uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| uri.path().to_owned());
    let bare = uri.path();
    if let Some(ctl) = bare.strip_prefix("/_mock/") {
        return control(&shared, &method, ctl, &body);
    }
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()))
    };
    let api = if method == Method::POST {
        Api::from_path(bare)
    } else {
        None
    };
    let n = shared.counter.fetch_add(1, Ordering::SeqCst);
    let rec = Recorded {
        seq: n,
        method: method.to_string(),
        path,
        api,
        body,
    };
    if let Some(log) = &shared.log {
        let mut f = lock(log);
        let _ = serde_json::to_writer(&mut *f, &rec);
        let _ = f.write_all(b"\n");
    }
    lock(&shared.requests).push(rec.clone());
    let Some(api) = api else {
        return other_endpoint(&method, bare, &rec.body);
    };
    let items = items(api, &rec.body);
    let (prompt, step) = prompt_and_step(&items);
    let tools = has_tools(&rec.body);
    let closing = items.last().map(Item::text).unwrap_or_default();
    let mut reply = lock(&shared.script).reply_to(&prompt, step, tools, &closing);
    // Side requests that want structured output (routing, titles) get a
    // valid instance of their schema instead of the fallback text.
    if !tools {
        if let Some(schema) = wire::requested_schema(&rec.body) {
            reply = vec![Part::Text(wire::instance_of(schema).to_string())];
        }
    }
    let r = wire::render(api, bare, &rec.body, &reply, n);
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, r.content_type)],
        r.body,
    )
        .into_response()
}

/// Endpoints beside the model calls that the agents use.
fn other_endpoint(method: &Method, path: &str, body: &Value) -> Response {
    let tokens = (body.to_string().len() / 4) as u64 + 1;
    if path.ends_with("/messages/count_tokens") {
        json_response(StatusCode::OK, json!({"input_tokens": tokens}))
    } else if path.ends_with(":countTokens") {
        json_response(StatusCode::OK, json!({"totalTokens": tokens}))
    } else if *method == Method::GET && path.ends_with("/models") {
        json_response(
            StatusCode::OK,
            json!({"object": "list", "data": [{"id": "mock-model", "object": "model"}], "models": []}),
        )
    } else if *method == Method::HEAD || *method == Method::GET && path.ends_with("/hello") {
        // Reachability probes (Claude Code sends HEAD /api/hello).
        json_response(StatusCode::OK, json!({}))
    } else {
        json_response(
            StatusCode::NOT_FOUND,
            json!({"error": {"type": "not_found_error", "message": format!("the mock model server has no {method} {path}")}}),
        )
    }
}

fn control(shared: &Shared, method: &Method, what: &str, body: &Bytes) -> Response {
    match (method.as_str(), what) {
        ("GET", "requests") => match serde_json::to_value(&*lock(&shared.requests)) {
            Ok(v) => json_response(StatusCode::OK, v),
            Err(e) => json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"error": e.to_string()}),
            ),
        },
        ("DELETE", "requests") => {
            lock(&shared.requests).clear();
            json_response(StatusCode::OK, json!({"cleared": true}))
        }
        ("PUT", "script") | ("POST", "script") => match serde_json::from_slice::<Script>(body) {
            Ok(s) => {
                *lock(&shared.script) = s;
                json_response(StatusCode::OK, json!({"script": "replaced"}))
            }
            Err(e) => json_response(
                StatusCode::BAD_REQUEST,
                json!({"error": format!("the script is not valid: {e}")}),
            ),
        },
        _ => json_response(
            StatusCode::NOT_FOUND,
            json!({"error": "control endpoints: GET/DELETE /_mock/requests, PUT /_mock/script"}),
        ),
    }
}
