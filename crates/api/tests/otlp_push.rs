//! `otel::push::push` against a local OTLP/HTTP endpoint that fails when
//! told to: what the endpoint refused is not marked as sent, the next push
//! sends exactly the rest, and nothing is ever sent twice.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use agentlog_api::otel::push::{push, Encoding, OtlpOptions};
use agentlog_api::Settings;
use agentlog_formats::discover::Found;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message as _;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What the endpoint received: each accepted request's body and headers.
#[derive(Default)]
struct Received {
    bodies: Vec<Vec<u8>>,
    headers: Vec<String>,
}

/// An endpoint on loopback that accepts `accept` requests, then answers
/// 503 to every other until `accept` is raised.
fn endpoint(accept: Arc<AtomicUsize>, got: Arc<Mutex<Received>>) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in l.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut r = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0usize;
            let mut headers = String::new();
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                headers.push_str(&lower);
            }
            let mut body = vec![0; len];
            r.read_exact(&mut body).unwrap();
            let mut g = got.lock().unwrap();
            let ok = g.bodies.len() < accept.load(Ordering::SeqCst);
            if ok {
                g.bodies.push(body);
                g.headers.push(headers);
            }
            drop(g);
            let status = if ok {
                "200 OK"
            } else {
                "503 Service Unavailable"
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    url
}

fn session_file(home: &std::path::Path, n: u32) -> Found {
    let mut s = agentlog_api::example::session(1_750_000_000_000);
    s.meta.id = format!("5e55f00d-4b1d-4c0e-9a6e-00000000000{n}");
    let dir = home.join(".claude/projects/-home-dev-parser");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.jsonl", s.meta.id));
    let mut out = Vec::new();
    agentlog_formats::registry::by_name("claude")
        .unwrap()
        .write(&s, &mut out)
        .unwrap();
    std::fs::write(&path, out).unwrap();
    Found {
        path,
        format: "claude",
    }
}

fn span_ids(bodies: &[Vec<u8>]) -> Vec<Vec<u8>> {
    bodies
        .iter()
        .flat_map(|b| {
            let r = ExportTraceServiceRequest::decode(&b[..]).unwrap();
            r.resource_spans
                .into_iter()
                .flat_map(|rs| rs.scope_spans)
                .flat_map(|ss| ss.spans)
                .map(|s| s.span_id)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn a_refused_request_is_sent_again_and_nothing_twice() {
    let home = tempfile::tempdir().unwrap();
    let settings = Settings::with_home(home.path());
    let found = vec![session_file(home.path(), 1), session_file(home.path(), 2)];
    let accept = Arc::new(AtomicUsize::new(1));
    let got = Arc::new(Mutex::new(Received::default()));
    let url = endpoint(accept.clone(), got.clone());
    let opts = OtlpOptions {
        endpoint: url.clone(),
        headers: vec![("Authorization".into(), "Bearer t0ken".into())],
        encoding: Encoding::Protobuf,
        redact: true,
    };
    let err = push(&settings, &found, &opts, &mut |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("503"), "{err}");
    assert!(err.to_string().contains("/v1/traces"), "{err}");
    let first = span_ids(&got.lock().unwrap().bodies);
    assert!(!first.is_empty());
    assert!(got.lock().unwrap().headers[0].contains("authorization: bearer t0ken"));
    assert!(got.lock().unwrap().headers[0].contains("content-type: application/x-protobuf"));

    accept.store(usize::MAX, Ordering::SeqCst);
    let r = push(&settings, &found, &opts, &mut |_, _| {}).unwrap();
    assert_eq!(
        (r.unchanged, r.new_traces, r.sessions_sent),
        (1, 1, 1),
        "{r:?}"
    );
    let all = span_ids(&got.lock().unwrap().bodies);
    assert_eq!(r.spans, all.len() - first.len());
    let unique: BTreeSet<&Vec<u8>> = all.iter().collect();
    assert_eq!(unique.len(), all.len(), "a span was sent twice");
    // Both sessions whole: a root and a model call each.
    assert_eq!(all.len(), 4);

    let again = push(&settings, &found, &opts, &mut |_, _| {}).unwrap();
    assert_eq!((again.spans, again.unchanged), (0, 2), "{again:?}");
    // The state is per endpoint: another URL gets everything.
    let other = OtlpOptions {
        endpoint: format!("{url}/v1/traces/"),
        ..opts.clone()
    };
    assert_eq!(
        agentlog_api::otel::push::traces_url(&other.endpoint),
        agentlog_api::otel::push::traces_url(&url),
        "the same endpoint however it is written"
    );
}

#[test]
fn a_turn_still_running_waits_until_it_ends_or_its_file_is_old() {
    let home = tempfile::tempdir().unwrap();
    let settings = Settings::with_home(home.path());
    let f = session_file(home.path(), 3);
    // The model called a tool whose result is not written yet.
    let mut read = agentlog_formats::registry::by_name("claude")
        .unwrap()
        .read_path(&f.path)
        .unwrap();
    let mut call = agentlog_model::Message::new(agentlog_model::Role::Assistant);
    call.content.push(agentlog_model::Block::tool_call(
        Some("toolu_1".into()),
        "Bash",
        serde_json::json!({"command": "cargo test"}),
    ));
    let parent = read.session.entries.last().map(|e| e.id.clone());
    read.session.push(
        agentlog_model::Entry::new(
            "00000009-0000-4000-8000-000000000000",
            parent,
            agentlog_model::EntryKind::Message(call),
        )
        .at(agentlog_model::Timestamp::Millis(1_750_000_300_000)),
    );
    let mut out = Vec::new();
    agentlog_formats::registry::by_name("claude")
        .unwrap()
        .write(&read.session, &mut out)
        .unwrap();
    std::fs::write(&f.path, out).unwrap();
    let got = Arc::new(Mutex::new(Received::default()));
    let url = endpoint(Arc::new(AtomicUsize::new(usize::MAX)), got.clone());
    let opts = OtlpOptions {
        endpoint: url,
        headers: Vec::new(),
        encoding: Encoding::Json,
        redact: true,
    };
    let found = vec![f.clone()];
    let r = push(&settings, &found, &opts, &mut |_, _| {}).unwrap();
    // The root goes; the model call (its answer went on to call a tool)
    // and the tool wait for the result.
    assert_eq!((r.spans, r.waiting), (1, 2), "{r:?}");
    assert!(got.lock().unwrap().headers[0].contains("content-type: application/json"));
    let body: serde_json::Value = serde_json::from_slice(&got.lock().unwrap().bodies[0]).unwrap();
    assert!(body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"].is_string());
    let r = push(&settings, &found, &opts, &mut |_, _| {}).unwrap();
    assert_eq!((r.spans, r.waiting, r.unchanged), (0, 2, 0), "{r:?}");
    // An hour later the session is taken as ended.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    std::fs::File::options()
        .write(true)
        .open(&f.path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let r = push(&settings, &found, &opts, &mut |_, _| {}).unwrap();
    assert_eq!((r.spans, r.waiting), (2, 0), "{r:?}");
    let r = push(&settings, &found, &opts, &mut |_, _| {}).unwrap();
    assert_eq!((r.spans, r.unchanged), (0, 1), "{r:?}");
}
