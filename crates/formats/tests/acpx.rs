#![allow(clippy::unwrap_used, clippy::expect_used)]
//! acpx session records: the three shapes round-trip, strict validation,
//! the ACP mapping against the real sample run, and conversion.

use agentlog_formats::acpx::{
    self, acp, events, parse_record, record_from_session, validate, Content, Layout, SessionRecord,
    ThreadMessage,
};
use agentlog_formats::Format;
use agentlog_model::{
    Agent, Block, Entry, EntryKind, Message as M, Role, Session, SessionMeta, Timestamp,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join("seeds/acpx").join(name)
}

fn round_trip(path: &Path, bytes: &[u8]) -> (Value, Value) {
    let read = acpx::FORMAT.read_bytes(path, bytes).unwrap();
    let mut out = Vec::new();
    let fid = acpx::FORMAT.write(&read.session, &mut out).unwrap();
    assert!(fid.is_lossless(), "{fid}");
    let original: Value = serde_json::from_slice(bytes).unwrap();
    let back: Value = serde_json::from_slice(&out).unwrap();
    // Same key order at the top level, too.
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&back), keys(&original));
    (original, back)
}

#[test]
fn the_sample_record_round_trips() {
    let path = fixture("record.json");
    let bytes = std::fs::read(&path).unwrap();
    let (original, back) = round_trip(&path, &bytes);
    assert_eq!(back, original);
    let parsed = parse_record(original).unwrap();
    assert_eq!(parsed.layout, Layout::Flat);
    assert_eq!(parsed.record.messages().len(), 4);
    let read = acpx::FORMAT.read_path(&path).unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    let s = &read.session;
    assert_eq!(s.meta.id, "fb5d3eb7-4a1c-406b-a3dd-67551aa67794");
    assert_eq!(s.meta.cwd.as_deref(), Some("/tmp/acpx-viewer-sample"));
    assert_eq!(s.message_count(), 4);
    assert!(s.first_prompt().unwrap().starts_with("Write a short draft"));
    assert_eq!(
        agentlog_formats::registry::detect(&path).unwrap().name(),
        "acpx"
    );
}

fn seed_record() -> Value {
    json!({
      "schema": "acpx.session.v1",
      "acpxRecordId": "rec-1",
      "acpSessionId": "acp-1",
      "agentSessionId": "agent-1",
      "agentCommand": "npx @zed-industries/codex-acp",
      "cwd": "/repo",
      "name": "backend",
      "createdAt": "2026-02-27T12:00:00.000Z",
      "lastUsedAt": "2026-02-27T12:10:00.000Z",
      "closed": false,
      "closedAt": null,
      "pid": 1234,
      "agentStartedAt": "2026-02-27T12:00:01.000Z",
      "lastPromptAt": "2026-02-27T12:09:40.000Z",
      "lastAgentExitCode": null,
      "lastAgentExitSignal": null,
      "lastAgentExitAt": null,
      "lastAgentDisconnectReason": null,
      "protocolVersion": 1,
      "agentCapabilities": {"loadSession": true},
      "thread": {
        "version": "0.3.0",
        "title": "ls",
        "messages": [
          {"User": {"id": "2f8f2028-df7d-4479-a0a0-9f10238986cd", "content": [{"Text": "hello"}, {"Mention": {"uri": "file:///repo/a", "content": "x"}}]}},
          {"Agent": {
            "content": [
              {"Text": "hi"},
              {"Thinking": {"text": "planning", "signature": null}},
              {"RedactedThinking": "opaque"},
              {"ToolUse": {"id": "call_123", "name": "run_command", "raw_input": "{\"command\":\"ls\"}",
                           "input": {"command": "ls"}, "is_input_complete": true, "thought_signature": null}}
            ],
            "tool_results": {
              "call_123": {"tool_use_id": "call_123", "tool_name": "run_command", "is_error": false,
                           "content": {"Text": "ok"}, "output": {"exitCode": 0}}
            },
            "reasoning_details": null
          }},
          "Resume"
        ],
        "updated_at": "2026-02-27T12:10:00.000Z",
        "detailed_summary": null,
        "initial_project_snapshot": null,
        "cumulative_token_usage": {"input_tokens": 120, "output_tokens": 80, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 32},
        "request_token_usage": {"2f8f2028-df7d-4479-a0a0-9f10238986cd": {"input_tokens": 120, "output_tokens": 80, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 32}},
        "model": null, "profile": null, "imported": false, "subagent_context": null,
        "speed": null, "thinking_enabled": false, "thinking_effort": null
      },
      "acpx": {
        "current_mode_id": "code",
        "available_commands": ["create_plan", "run"],
        "config_options": [],
        "audit_seq": 412,
        "audit_dropped_count": 31,
        "audit_events": [],
        "last_turn": null,
        "last_control_update": null,
        "event_log": {
          "format_version": 1,
          "active_path": "~/.acpx/sessions/rec-1.events.ndjson",
          "segment_count": 3,
          "max_segment_bytes": 67108864,
          "max_segments": 5,
          "last_seq": 412,
          "last_write_at": "2026-02-27T12:10:00.000Z",
          "last_write_error": null
        },
        "future_field": 1
      }
    })
}

/// The flat snake_case shape acpx writes to `~/.acpx/sessions`.
fn disk_record() -> Value {
    json!({
      "schema": "acpx.session.v1",
      "acpx_record_id": "rec-2",
      "acp_session_id": "acp-2",
      "agent_command": "codex-acp",
      "cwd": "/repo",
      "created_at": "2026-03-01T00:00:00.000Z",
      "last_used_at": "2026-03-01T00:01:00.000Z",
      "last_seq": 7,
      "last_request_id": "2",
      "event_log": {"active_path": "/h/.acpx/sessions/rec-2.stream.ndjson", "segment_count": 1,
                    "max_segment_bytes": 67108864, "max_segments": 5,
                    "last_write_at": "2026-03-01T00:01:00.000Z", "last_write_error": null},
      "closed": false,
      "pid": 99,
      "protocol_version": 1,
      "agent_capabilities": {},
      "title": null,
      "messages": [
        {"User": {"id": "u-1", "content": [{"Text": "fix it"}]}},
        {"Agent": {"content": [{"Text": "done"}], "tool_results": {}}}
      ],
      "updated_at": "2026-03-01T00:01:00.000Z",
      "cumulative_token_usage": {},
      "request_token_usage": {},
      "acpx": {}
    })
}

#[test]
fn seed_and_disk_records_round_trip() {
    for (name, doc, layout) in [
        ("seed.json", seed_record(), Layout::Seed),
        ("disk.json", disk_record(), Layout::Disk),
    ] {
        let bytes = serde_json::to_vec_pretty(&doc).unwrap();
        let (original, back) = round_trip(Path::new(name), &bytes);
        assert_eq!(back, original, "{name}");
        assert_eq!(parse_record(original).unwrap().layout, layout);
        assert!(
            acpx::validate_text(Path::new(name), std::str::from_utf8(&bytes).unwrap()).is_empty()
        );
    }
    let parsed = parse_record(disk_record()).unwrap();
    assert_eq!(parsed.record.acpx_record_id, "rec-2");
    assert_eq!(
        parsed.record.acp_session_id.get().map(String::as_str),
        Some("acp-2")
    );
    assert_eq!(parsed.record.extra.get("lastSeq"), Some(&json!(7)));
    let read = acpx::FORMAT
        .read_bytes(
            Path::new("seed.json"),
            &serde_json::to_vec(&seed_record()).unwrap(),
        )
        .unwrap();
    let kinds: Vec<&str> = read.session.entries.iter().map(|e| e.kind_name()).collect();
    assert_eq!(kinds, ["message", "message", "message", "resume"]);
    let agent = read.session.entries[1].message().unwrap();
    assert_eq!(
        agent.usage.as_ref().map(|u| (u.input, u.cache_read)),
        Some((120, 32))
    );
    let result = read.session.entries[2].message().unwrap();
    assert_eq!(
        (result.role.clone(), result.tool_call_id.as_deref()),
        (Role::Tool, Some("call_123"))
    );
}

#[test]
fn every_strictness_rule_is_reported() {
    let mut doc = seed_record();
    doc["schema"] = json!("acpx.session.v2");
    doc["thread"]["speed"] = json!("turbo");
    doc["thread"]["cumulative_token_usage"]["input_tokens"] = json!(-1);
    doc["thread"]["request_token_usage"]["2f8f2028-df7d-4479-a0a0-9f10238986cd"]["output_tokens"] =
        json!("80");
    let msgs = doc["thread"]["messages"].as_array_mut().unwrap();
    msgs.push(json!({"kind": "user", "content": "legacy"}));
    msgs.push(json!({"User": {"content": [{"Text": "no id"}]}}));
    msgs.push(json!({"Agent": {"content": [{"Picture": 1}], "tool_results": {}}}));
    let text = serde_json::to_string_pretty(&doc).unwrap();
    let diags = acpx::validate_text(Path::new("bad.json"), &text);
    let got: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    let expected = [
        "schema: must be \"acpx.session.v1\", got \"acpx.session.v2\"",
        "thread.messages[3]: a legacy kind/type message shape; only {\"User\": …}, {\"Agent\": …} and \"Resume\" are valid",
        "thread.messages[4].User.id: a user message needs a non-empty string id",
        "thread.messages[5].Agent.content[0]: must be one of {\"Text\"}, {\"Mention\"}, {\"Image\"}, {\"Thinking\"}, {\"RedactedThinking\"}, {\"ToolUse\"} (a single-key object), got {\"Picture\":1}",
        "thread.cumulative_token_usage.input_tokens: token counts must be non-negative numbers, got -1",
        "thread.request_token_usage.2f8f2028-df7d-4479-a0a0-9f10238986cd.output_tokens: token counts must be non-negative numbers, got \"80\"",
        "thread.speed: must be \"standard\", \"fast\" or null, got \"turbo\"",
    ];
    assert_eq!(got, expected);
    for d in &diags {
        assert!(d.line.is_some(), "{d}");
    }
    let speed_line = diags.last().unwrap().line.unwrap() as usize;
    assert!(text.lines().nth(speed_line - 1).unwrap().contains("turbo"));
    // In the flat on-disk shape the paths name the file's own keys.
    let mut disk = disk_record();
    disk["messages"][0] = json!({"type": "message"});
    let p = validate::problems(&disk);
    assert_eq!(p.len(), 1);
    assert!(
        p[0].to_string().starts_with("messages[0]: a legacy"),
        "{}",
        p[0]
    );
    // The reader keeps legacy messages verbatim and warns.
    let read = acpx::FORMAT
        .read_bytes(Path::new("bad.json"), text.as_bytes())
        .unwrap();
    assert_eq!(read.diagnostics.len(), expected.len());
    assert!(read
        .session
        .entries
        .iter()
        .any(|e| e.kind_name() == "unknown"));
}

/// Replays the sample run's ACP traffic through the mapping: the thread
/// that comes out is the record acpx wrote.
#[test]
fn the_acp_mapping_rebuilds_the_sample_thread() {
    let bytes = std::fs::read(fixture("events.ndjson")).unwrap();
    let mut evs = Vec::new();
    let mut diags = Vec::new();
    events::read_segment(
        &fixture("events.ndjson"),
        &bytes,
        &mut None,
        &mut evs,
        &mut diags,
    );
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(evs.len(), 14);
    let expected = parse_record(
        serde_json::from_slice(&std::fs::read(fixture("record.json")).unwrap()).unwrap(),
    )
    .unwrap()
    .record;
    let user_ids: Vec<String> = expected
        .messages()
        .iter()
        .filter_map(|m| match m {
            ThreadMessage::User(u) => Some(u.id.clone()),
            _ => None,
        })
        .collect();
    let mut rec = SessionRecord::new("fb5d3eb7-4a1c-406b-a3dd-67551aa67794");
    let mut ids = user_ids.into_iter();
    for ev in &evs {
        let msg = ev.event.acp_message().unwrap();
        match msg.get("method").and_then(Value::as_str) {
            Some("session/prompt") => {
                let prompt = msg["params"]["prompt"].as_array().unwrap();
                acp::add_prompt(&mut rec, ids.next(), prompt);
            }
            Some("session/update") => {
                acp::apply_update(&mut rec, &msg["params"], "2026-03-26T23:21:16.287Z");
            }
            _ => {}
        }
    }
    assert_eq!(rec.messages(), expected.messages());
}

#[test]
fn a_tool_call_sequence_maps_to_tool_use_and_results() {
    let mut rec = SessionRecord::new("r");
    let user = acp::add_text_prompt(&mut rec, None, "list files");
    assert!(uuid::Uuid::parse_str(&user).is_ok());
    let now = "2026-01-01T00:00:00.000Z";
    for u in [
        json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "I should "}}),
        json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "run ls"}}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "run_command", "kind": "execute", "status": "pending"}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress", "rawInput": {"command": "ls"}}),
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "content": [{"type": "content", "content": {"type": "text", "text": "a.txt"}}], "rawOutput": {"exitCode": 0}}),
        json!({"sessionUpdate": "tool_call", "toolCallId": "c2", "status": "failed"}),
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Found "}}),
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a.txt."}}),
        json!({"sessionUpdate": "usage_update", "inputTokens": 10, "outputTokens": 4, "cachedReadTokens": 2}),
        json!({"sessionUpdate": "usage_update", "inputTokens": 5, "outputTokens": 1}),
        json!({"sessionUpdate": "usage_update", "used": 1000, "size": 200000}),
        json!({"sessionUpdate": "session_info_update", "title": "Listing"}),
        json!({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "create_plan", "description": "x"}, {"name": "run"}]}),
        json!({"sessionUpdate": "current_mode_update", "currentModeId": "code"}),
        json!({"sessionUpdate": "config_option_update", "configOptions": [{"id": "model", "currentValue": "gpt-5"}]}),
    ] {
        acp::apply_update(&mut rec, &json!({"sessionId": "s", "update": u}), now);
    }
    let v = acpx::record_to_value(&rec, Layout::Seed, &[]);
    assert_eq!(
        v["thread"]["messages"][1],
        json!({"Agent": {
            "content": [
                {"Thinking": {"text": "I should run ls", "signature": null}},
                {"ToolUse": {"id": "c1", "name": "run_command", "raw_input": "{\"command\":\"ls\"}",
                             "input": {"command": "ls"}, "is_input_complete": true, "thought_signature": null}},
                {"ToolUse": {"id": "c2", "name": "tool_call", "raw_input": "{}", "input": {},
                             "is_input_complete": false, "thought_signature": null}},
                {"Text": "Found a.txt."}
            ],
            "tool_results": {
                "c1": {"tool_use_id": "c1", "tool_name": "run_command", "is_error": false,
                       "content": {"Text": "a.txt"}, "output": {"exitCode": 0}},
                "c2": {"tool_use_id": "c2", "tool_name": "tool_call", "is_error": true,
                       "content": {"Text": ""}, "output": null}
            }
        }})
    );
    let usage = json!({"input_tokens": 15, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 2});
    assert_eq!(v["thread"]["cumulative_token_usage"], usage);
    assert_eq!(v["thread"]["request_token_usage"][&user], usage);
    assert_eq!(v["thread"]["title"], json!("Listing"));
    assert_eq!(v["thread"]["updated_at"], json!(now));
    assert_eq!(
        v["acpx"]["available_commands"],
        json!(["create_plan", "run"])
    );
    assert_eq!(v["acpx"]["current_mode_id"], json!("code"));
    assert_eq!(v["acpx"]["config_options"][0]["id"], json!("model"));
    assert_eq!(
        v["acpx"]["context_usage"],
        json!({"used": 1000, "size": 200000})
    );
    assert!(validate::problems(&v).is_empty());
}

#[test]
fn event_logs_read_as_event_sessions() {
    let path = fixture("events.ndjson");
    let read = acpx::FORMAT.read_path(&path).unwrap();
    assert_eq!(read.session.entries.len(), 14);
    match &read.session.entries[5].kind {
        EntryKind::Event {
            source,
            event_type,
            seq,
            ..
        } => {
            assert_eq!(
                (source.as_str(), event_type.as_str(), *seq),
                ("acp:inbound", "session/update", Some(6))
            );
        }
        other => panic!("{other:?}"),
    }
    // Envelopes are checked: version, order, stream and source.
    let text = concat!(
        r#"{"eventVersion":1,"seq":2,"timestamp":"t","acpxRecordId":"r","stream":"prompt","source":"acp","type":"session_update","payload":{}}"#,
        "\n",
        r#"{"eventVersion":2,"seq":2,"timestamp":"t","acpxRecordId":"r","stream":"chat","source":"me","type":"x","payload":{}}"#,
        "\n",
        "{\"eventVersion\":1,\"se"
    );
    let mut evs = Vec::new();
    let mut diags = Vec::new();
    events::read_segment(
        Path::new("r.events.ndjson"),
        text.as_bytes(),
        &mut None,
        &mut evs,
        &mut diags,
    );
    let codes: Vec<&str> = diags.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [
            "event-version",
            "seq-order",
            "event-stream",
            "event-source",
            "torn-tail"
        ]
    );
    assert_eq!(evs.len(), 2);
}

#[test]
fn unified_sessions_become_seed_records() {
    let mut s = Session::new({
        let mut m = SessionMeta::new("pi-1", Agent::Pi);
        m.cwd = Some("/w".into());
        m.title = Some("T".into());
        m
    });
    let mut push = |id: &str, kind: EntryKind| {
        let parent = s.leaf_id.clone();
        s.push(Entry::new(id, parent, kind).at(Timestamp::Text("2026-01-01T00:00:00Z".into())));
    };
    push("u1", EntryKind::Message(M::text(Role::User, "hi")));
    let mut a = M::new(Role::Assistant);
    a.content.push(Block::thinking("t", Some("sig".into())));
    a.content.push(Block::tool_call(
        Some("c1".into()),
        "bash",
        json!({"cmd": "ls"}),
    ));
    a.usage = Some(agentlog_model::Usage {
        input: 3,
        output: 2,
        ..Default::default()
    });
    push("a1", EntryKind::Message(a));
    let mut r = M::new(Role::Tool);
    r.tool_call_id = Some("c1".into());
    r.tool_name = Some("bash".into());
    r.content.push(Block::text("x.txt"));
    push("r1", EntryKind::Message(r));
    push(
        "c1",
        EntryKind::ModelChange {
            provider: None,
            model: "m".into(),
            role: None,
        },
    );
    let (out, fid) = record_from_session(&s);
    let v = acpx::record_to_value(&out.record, out.layout, &out.key_order);
    assert_eq!(v["schema"], json!("acpx.session.v1"));
    assert_eq!(v["acpxRecordId"], json!("pi-1"));
    assert_eq!(v["thread"]["title"], json!("T"));
    let user_id = v["thread"]["messages"][0]["User"]["id"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(user_id).is_ok());
    assert_eq!(
        v["thread"]["messages"][1]["Agent"]["content"][0],
        json!({"Thinking": {"text": "t", "signature": "sig"}})
    );
    assert_eq!(
        v["thread"]["messages"][1]["Agent"]["tool_results"]["c1"],
        json!({"tool_use_id": "c1", "tool_name": "bash", "is_error": false, "content": {"Text": "x.txt"}, "output": null})
    );
    assert_eq!(
        v["thread"]["request_token_usage"][user_id]["input_tokens"],
        json!(3)
    );
    assert!(
        validate::problems(&v).is_empty(),
        "{:?}",
        validate::problems(&v)
    );
    let what: Vec<&str> = fid.losses.iter().map(|l| l.what.as_str()).collect();
    assert_eq!(what, ["entry kind model_change"]);
    assert!(
        matches!(out.record.messages()[1], ThreadMessage::Agent(ref a) if matches!(a.content[1], Content::ToolUse(_)))
    );
}

#[test]
fn discovery_finds_records_in_the_sessions_directory() {
    let home = tempfile::tempdir().unwrap();
    let dir = acpx::sessions_dir(home.path());
    std::fs::create_dir_all(&dir).unwrap();
    for name in [
        "a.json",
        "a.events.ndjson",
        "a.events.1.ndjson",
        ".a.json.1.2.tmp",
        "index.json",
    ] {
        std::fs::write(dir.join(name), b"{}").unwrap();
    }
    let env = agentlog_formats::discover::DiscoverEnv::with_home(home.path());
    assert_eq!(acpx::FORMAT.discover(&env), [dir.join("a.json")]);
}
