//! The Model Context Protocol server of agentlog (`agentlog mcp`): the
//! user's past agent sessions, served read-only to the agents themselves.
//!
//! Seven tools ([`server::Server`]): `search`, `list_sessions`,
//! `read_session`, `context`, `sessions_touching`, `stats` and
//! `resume_command`. Each makes its library call ([`answer::Answers`]: the
//! index as [`agentlog_api::refresh::for_reading`] leaves it, and the api's
//! modules), cuts the answer to a budget with paging, and redacts it
//! (on unless turned off: what a tool returns goes into a model's context).
//!
//! Served over standard input and output ([`serve_stdio`]) or streamable
//! HTTP ([`serve_http`]; on loopback by default, a token required beyond
//! it, as `agentlog serve` does).
#![forbid(unsafe_code)]

pub mod answer;
pub mod args;
pub mod server;

pub use answer::Answers;
pub use server::Server;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt as _;
use std::net::SocketAddr;
use std::sync::Arc;

/// Errors of serving.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The runtime or the listening socket could not be set up.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The protocol session failed.
    #[error("MCP: {0}")]
    Protocol(String),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> McpError {
    let what = what.into();
    move |source| McpError::Io { what, source }
}

fn runtime() -> Result<tokio::runtime::Runtime, McpError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(io("starting the runtime"))
}

/// Serves `answers` over standard input and output until the client
/// closes them.
pub fn serve_stdio(answers: Answers) -> Result<(), McpError> {
    runtime()?.block_on(async move {
        let running = Server::new(answers)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| McpError::Protocol(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| McpError::Protocol(e.to_string()))?;
        Ok(())
    })
}

/// Serves `answers` over streamable HTTP at `addr` (path `/mcp`) until
/// the process ends. With `token`, every request must carry it
/// (`Authorization: Bearer TOKEN`, or `?token=`); the caller requires one
/// beyond loopback. On loopback, requests naming another host are refused
/// (DNS rebinding). `ready` is told the address listened on.
pub fn serve_http(
    answers: Answers,
    addr: SocketAddr,
    token: Option<String>,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), McpError> {
    runtime()?.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(io(format!("listening on {addr}")))?;
        let local = listener
            .local_addr()
            .map_err(io(format!("listening on {addr}")))?;
        let mut cfg = StreamableHttpServerConfig::default();
        if !addr.ip().is_loopback() {
            // Beyond loopback any host name may reach it: the token guards.
            cfg = cfg.disable_allowed_hosts();
        }
        let service = StreamableHttpService::new(
            move || Ok(Server::new(answers.clone())),
            Arc::new(LocalSessionManager::default()),
            cfg,
        );
        let router = axum::Router::new().route_service("/mcp", service).layer(
            axum::middleware::from_fn_with_state(Arc::new(token), check_token),
        );
        ready(local);
        axum::serve(listener, router)
            .await
            .map_err(io("serving HTTP"))
    })
}

/// Refuses a request without the token, when there is one.
async fn check_token(
    axum::extract::State(token): axum::extract::State<Arc<Option<String>>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let Some(token) = token.as_ref() else {
        return next.run(req).await;
    };
    let bearer = req
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|v| ct_eq(v.trim(), token));
    let query = req
        .uri()
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.strip_prefix("token="))
        .any(|v| ct_eq(v, token));
    if bearer || query {
        next.run(req).await
    } else {
        (
            axum::http::StatusCode::UNAUTHORIZED,
            "a token is required: send the one `agentlog mcp --http` printed as `Authorization: Bearer TOKEN`\n",
        )
            .into_response()
    }
}

/// Compares without stopping at the first difference.
fn ct_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
