#![allow(clippy::unwrap_used, clippy::expect_used)]
//! SpecStory SessionData: round-trips, validation, conversion and the
//! markdown rendering compared with real transcripts.

use agentlog_formats::specstory::{
    self, file_name, parse_markdown, render_markdown, render_markdown_with, session_data_from,
    session_from, to_session_data, validate, ContentPart, Exchange, Message, ProviderInfo,
    RenderOptions, SessionData, ToolInfo, ValidationSchema,
};
use agentlog_formats::Format;
use agentlog_model::{
    Agent, Block, Entry, EntryKind, Message as M, Role, Session, SessionMeta, Timestamp,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");

fn fixture(name: &str) -> PathBuf {
    Path::new(FIXTURES).join("seeds/specstory").join(name)
}

fn read_fixture(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

const LORE: [&str; 5] = [
    "2026-05-20_09-00-00Z-list-the-workspace.md",
    "2026-05-21_09-00-00Z-show-git-status.md",
    "2026-05-22_09-00-00Z-count-source-lines.md",
    "2026-05-23_09-00-00Z-run-the-linter.md",
    "2026-05-10_09-00-00Z-where-is-save-implemented.md",
];

/// The seed's "Full Session Example", with unknown fields added at every
/// level.
fn full_example() -> Value {
    json!({
      "schemaVersion": "1.0",
      "provider": { "id": "claude", "name": "Claude Code", "version": "1.0.0", "build": 7 },
      "sessionId": "sess-1234",
      "createdAt": "2025-11-13T10:00:00Z",
      "updatedAt": "2025-11-13T10:05:00Z",
      "slug": "create-go-hello-world",
      "workspaceRoot": "/home/alice/project",
      "exchanges": [
        {
          "exchangeId": "ex_001",
          "startTime": "2025-11-13T10:00:00Z",
          "endTime": "2025-11-13T10:00:15Z",
          "messages": [
            { "id": "u1", "timestamp": "2025-11-13T10:00:00Z", "role": "user",
              "content": [{ "type": "text", "text": "Create src/main.go with Hello World" }] },
            { "id": "a1", "timestamp": "2025-11-13T10:00:10Z", "role": "agent",
              "model": "claude-3-5-sonnet-20241022",
              "content": [{ "type": "text", "text": "Creating the file now." }],
              "tool": { "name": "Write", "type": "write", "useId": "tool_001",
                        "input": { "file_path": "src/main.go" }, "custom": [1, 2] },
              "pathHints": ["src/main.go"],
              "usage": { "inputTokens": 12, "outputTokens": 0, "cachedTokens": 3 },
              "future": { "x": true } }
          ],
          "metadata": { "source": "test" }
        },
        {
          "exchangeId": "ex_002",
          "startTime": "2025-11-13T10:01:00Z",
          "endTime": "2025-11-13T10:01:20Z",
          "messages": [
            { "id": "u2", "timestamp": "2025-11-13T10:01:00Z", "role": "user",
              "content": [{ "type": "text", "text": "Run the program" }] },
            { "id": "t2", "timestamp": "2025-11-13T10:01:10Z", "role": "agent",
              "model": "claude-3-5-sonnet-20241022",
              "tool": { "name": "Bash", "type": "shell", "useId": "tool_002",
                        "input": { "command": "go run src/main.go" },
                        "output": { "stdout": "Hello World\n", "exit_code": 0 } } },
            { "id": "a2", "timestamp": "2025-11-13T10:01:20Z", "role": "agent",
              "model": "claude-3-5-sonnet-20241022",
              "content": [{ "type": "thinking", "text": "It worked." },
                          { "type": "text", "text": "The program ran successfully and printed 'Hello World'." }],
              "metadata": { "isSidechain": false } }
          ],
          "phase": 2
        },
        { "exchangeId": "ex_003", "messages": [] }
      ],
      "extension": "kept"
    })
}

#[test]
fn session_data_round_trips_through_the_model_losslessly() {
    let original = full_example();
    let bytes = serde_json::to_vec_pretty(&original).unwrap();
    let read = specstory::FORMAT
        .read_bytes(Path::new("example.json"), &bytes)
        .unwrap();
    assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
    let mut out = Vec::new();
    let fidelity = specstory::FORMAT.write(&read.session, &mut out).unwrap();
    assert!(fidelity.is_lossless(), "{fidelity}");
    let back: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(back, original);
    assert!(out.ends_with(b"}\n"));
}

#[test]
fn the_model_carries_usage_tools_and_results() {
    let data: SessionData = serde_json::from_value(full_example()).unwrap();
    let session = session_from(&data);
    assert_eq!(session.meta.agent, Agent::SpecStory);
    assert_eq!(session.meta.cwd.as_deref(), Some("/home/alice/project"));
    let a1 = session.entries.iter().find(|e| e.id == "a1").unwrap();
    let m = a1.message().unwrap();
    assert_eq!(m.role, Role::Assistant);
    assert_eq!(
        m.usage.as_ref().map(|u| (u.input, u.cache_read)),
        Some((12, 3))
    );
    assert_eq!(m.tool_calls().count(), 1);
    let result = session
        .entries
        .iter()
        .filter_map(Entry::message)
        .find(|m| m.role == Role::Tool)
        .unwrap();
    assert_eq!(result.tool_call_id.as_deref(), Some("tool_002"));
    // SessionData -> model -> SessionData is the identity.
    assert_eq!(session_data_from(&session), data);
}

#[test]
fn every_validate_rule_is_reported_once_with_its_path() {
    let doc = json!({
      "schemaVersion": "2.0",
      "provider": { "id": "", "name": "", "version": "" },
      "sessionId": "",
      "createdAt": "",
      "workspaceRoot": "",
      "exchanges": [
        { "exchangeId": "", "messages": [
            { "role": "user", "content": [], "model": "m",
              "tool": { "name": "Read", "type": "read" } },
            { "role": "agent" },
            { "role": "robot", "content": [{ "type": "text", "text": "x" }] },
            { "role": "agent", "content": [{ "type": "image", "text": "" }] },
            { "role": "agent", "tool": { "name": "", "type": "magic" } }
        ] },
        { "exchangeId": "dup", "messages": [] },
        { "exchangeId": "dup", "messages": [] }
      ]
    });
    let rules: Vec<String> =
        validate::rule_violations(&serde_json::from_value(doc.clone()).unwrap())
            .iter()
            .map(ToString::to_string)
            .collect();
    let expected = [
        r#"schemaVersion: must be "1.0", got "2.0""#,
        "provider.id: is required and must not be empty",
        "provider.name: is required and must not be empty",
        "provider.version: is required and must not be empty",
        "sessionId: is required and must not be empty",
        "createdAt: is required and must not be empty",
        "workspaceRoot: is required and must not be empty",
        "exchanges[0].exchangeId: is required and must not be empty",
        "exchanges[0].messages[0].content: a user message must have non-empty content",
        "exchanges[0].messages[0].tool: a user message cannot have a tool",
        "exchanges[0].messages[0].model: a user message cannot have a model",
        "exchanges[0].messages[1]: an agent message must have content, a tool or pathHints",
        r#"exchanges[0].messages[2].role: must be "user" or "agent", got "robot""#,
        r#"exchanges[0].messages[3].content[0].type: must be "text" or "thinking", got "image""#,
        "exchanges[0].messages[4].tool.name: is required and must not be empty",
        r#"exchanges[0].messages[4].tool.type: must be one of write, read, search, shell, task, generic, unknown, got "magic""#,
        r#"exchanges[2].exchangeId: "dup" is already the id of exchanges[1]; exchange ids must be unique"#,
    ];
    assert_eq!(rules, expected);

    // Through the format: the schema adds what the rules do not cover (the
    // empty createdAt is not a date-time, the provider id not in the enum),
    // without repeating what a rule already says, and each names its line.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let mut doc = doc;
    doc["slug"] = json!(5);
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let diags = specstory::FORMAT.validate(&path).unwrap();
    let rule_diags: Vec<_> = diags.iter().filter(|d| d.code == "rule").collect();
    assert_eq!(rule_diags.len(), expected.len());
    assert!(diags.iter().all(|d| d.line.is_some()), "{diags:?}");
    let role = diags
        .iter()
        .filter(|d| d.message.starts_with("exchanges[0].messages[2].role"))
        .count();
    assert_eq!(role, 1, "{diags:?}");
    let schema: Vec<&str> = diags
        .iter()
        .filter(|d| d.code == "schema")
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(schema.len(), 1, "{schema:?}");
    assert!(
        schema[0].starts_with("slug: 5 is not of type"),
        "{schema:?}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let line = diags
        .iter()
        .find(|d| d.message.starts_with("exchanges[0].messages[4].tool.type"))
        .and_then(|d| d.line)
        .unwrap();
    assert!(text
        .lines()
        .nth(line as usize - 1)
        .unwrap()
        .contains("\"magic\""));
}

#[test]
fn the_schema_checks_times_and_unknown_root_fields() {
    let mut doc = full_example();
    doc["createdAt"] = json!("yesterday");
    let v = validate::violations(&doc, ValidationSchema::Seed);
    let msgs: Vec<String> = v.iter().map(ToString::to_string).collect();
    assert!(msgs.iter().any(|m| m.starts_with("createdAt:")), "{msgs:?}");
    assert!(
        msgs.iter()
            .any(|m| m.starts_with("(root):") && m.contains("extension")),
        "{msgs:?}"
    );
    // The document's schema limits provider ids; the CLI's file does not.
    let mut droid = full_example();
    droid.as_object_mut().unwrap().remove("extension");
    droid["exchanges"][1]
        .as_object_mut()
        .unwrap()
        .remove("phase");
    droid["provider"].as_object_mut().unwrap().remove("build");
    assert!(validate::violations(&droid, ValidationSchema::Seed).is_empty());
    droid["provider"]["id"] = json!("droid");
    let v = validate::violations(&droid, ValidationSchema::Seed);
    assert_eq!(v.len(), 1);
    assert!(v[0].to_string().starts_with("provider.id: "), "{}", v[0]);
    assert!(validate::violations(&droid, ValidationSchema::Upstream).is_empty());
}

/// A Claude-style unified session: prompt, thinking, text + tool call,
/// tool result in a user message, answer, second prompt.
fn claude_like() -> Session {
    let mut meta = SessionMeta::new("c1", Agent::Claude);
    meta.cwd = Some("/repo".into());
    meta.agent_version = Some("2.0.1".into());
    meta.title = Some("A title".into());
    let mut s = Session::new(meta);
    let ts = |t: &str| Timestamp::Text(format!("2026-01-02T03:04:{t}Z"));
    let mut push = |id: &str, t: &str, m: M| {
        let parent = s.leaf_id.clone();
        s.push(Entry::new(id, parent, EntryKind::Message(m)).at(ts(t)));
    };
    push(
        "u1",
        "00",
        M::text(Role::User, "Please fix <b>the</b> build & run it"),
    );
    let mut a = M::new(Role::Assistant);
    a.model = Some("claude-opus-4-6".into());
    a.content.push(Block::thinking("plan", Some("sig".into())));
    a.content.push(Block::text("Running the build."));
    a.content.push(Block::tool_call(
        Some("t1".into()),
        "Bash",
        json!({"command": "make > build.log", "description": "build"}),
    ));
    a.content.push(Block::tool_call(
        Some("t2".into()),
        "Edit",
        json!({"file_path": "/repo/src/lib.rs", "old_string": "a", "new_string": "b"}),
    ));
    push("a1", "05", a);
    let mut r = M::new(Role::User);
    r.content.push(Block::tool_result(
        Some("t1".into()),
        vec![Block::text("ok")],
        false,
    ));
    r.content.push(Block::tool_result(
        Some("t2".into()),
        vec![Block::text("no such string")],
        true,
    ));
    push("r1", "06", r);
    let mut injected = M::text(Role::User, "<system-reminder>x</system-reminder>");
    injected.injected = Some("system-reminder".into());
    push("i1", "07", injected);
    let mut done = M::text(Role::Assistant, "Built.");
    done.model = Some("claude-opus-4-6".into());
    push("a2", "08", done);
    push("u2", "10", M::text(Role::User, "thanks"));
    let parent = s.leaf_id.clone();
    s.push(Entry::new(
        "l1",
        parent,
        EntryKind::Label {
            target_id: "u2".into(),
            label: Some("x".into()),
        },
    ));
    s
}

#[test]
fn unified_sessions_become_exchanges_with_merged_results() {
    let (data, fidelity) = to_session_data(&claude_like());
    assert_eq!(data.provider.id, "claude");
    assert_eq!(data.provider.name, "Claude Code");
    assert_eq!(data.provider.version, "2.0.1");
    assert_eq!(data.created_at, "2026-01-02T03:04:00Z");
    assert_eq!(data.exchanges.len(), 2);
    let ex = &data.exchanges[0];
    assert_eq!(ex.exchange_id, "ex_001");
    assert_eq!(ex.start_time.as_deref(), Some("2026-01-02T03:04:00Z"));
    assert_eq!(ex.end_time.as_deref(), Some("2026-01-02T03:04:08Z"));
    let roles: Vec<&str> = ex.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "agent", "agent", "agent"]);
    let bash = &ex.messages[1];
    assert_eq!(
        bash.parts().len(),
        2,
        "thinking and text ride with the first tool"
    );
    let tool = bash.tool.as_ref().unwrap();
    assert_eq!((tool.name.as_str(), tool.kind.as_str()), ("Bash", "shell"));
    assert_eq!(tool.output, Some(json!({"content": "ok"})));
    assert_eq!(
        bash.path_hints.as_deref(),
        Some(&["build.log".to_string()][..])
    );
    let edit = &ex.messages[2];
    assert_eq!(edit.id.as_deref(), Some("a1:1"));
    let tool = edit.tool.as_ref().unwrap();
    assert_eq!(tool.kind, "write");
    assert_eq!(
        tool.output,
        Some(json!({"content": "no such string", "is_error": true}))
    );
    assert_eq!(
        edit.path_hints.as_deref(),
        Some(&["src/lib.rs".to_string()][..])
    );
    let what: Vec<&str> = fidelity.losses.iter().map(|l| l.what.as_str()).collect();
    assert_eq!(
        what,
        [
            "session title",
            "thinking signature",
            "injected context message",
            "entry kind label"
        ]
    );
    // What is written is valid under both schemas and the rules.
    let v = serde_json::to_value(&data).unwrap();
    assert!(validate::violations(&v, ValidationSchema::Seed).is_empty());
    assert!(validate::violations(&v, ValidationSchema::Upstream).is_empty());
    // The CLI's shipped schema, read from the fixture copy, agrees.
    let upstream: Value = serde_json::from_str(&read_fixture("session-data-v1.json")).unwrap();
    let embedded: Value = serde_json::from_str(validate::UPSTREAM_SCHEMA).unwrap();
    assert_eq!(upstream, embedded);

    let md = render_markdown(&data);
    assert!(md.contains("_**Agent (claude-opus-4-6 2026-01-02 03:04:05Z)**_\n\n<think><details><summary>Thought Process</summary>\nplan\n</details></think>\n\nRunning the build.\n\n<tool-use data-tool-type=\"shell\" data-tool-name=\"Bash\"><details>\n<summary>Tool use: **Bash**</summary>\n\n**Input:**\n\n- command: `make > build.log`\n- description: `build`\n\n**Result:**\n\n```\nok\n```\n</details></tool-use>\n"), "{md}");
    assert!(md.contains("**Error:**\n\n```\nno such string\n```\n"));
    assert!(md.ends_with("_**User (2026-01-02 03:04:10Z)**_\n\nthanks\n"));
    assert_eq!(
        file_name(&data, true),
        "2026-01-02_03-04-00Z-please-fix-build-and.md"
    );
}

/// The gemini lore transcript, built by hand: the same information, the
/// same bytes.
#[test]
fn a_hand_built_session_renders_like_the_lore_transcript() {
    let mut data = SessionData::new(
        ProviderInfo {
            id: "gemini".into(),
            name: "Gemini CLI".into(),
            version: "0.9.0".into(),
            extra: Default::default(),
        },
        "44444444-aaaa-bbbb-cccc-000000000001",
    );
    data.created_at = "2026-05-20T09:00:00Z".into();
    data.workspace_root = "/work/p".into();
    let mut u1 = Message::user("run the build for this workspace and tell me if it compiles");
    u1.timestamp = Some("2026-05-20T09:00:00Z".into());
    let mut tool = Message::agent();
    tool.model = Some("gemini-2.5-pro".into());
    tool.timestamp = Some("2026-05-20T09:00:05Z".into());
    tool.tool = Some(ToolInfo {
        name: "run_shell_command".into(),
        kind: specstory::classify_tool("run_shell_command").into(),
        input: Some(json!({"command": "npm run build"})),
        output: Some(json!({"content": "built in 2.1s"})),
        formatted_markdown: Some(
            "\n```bash\nnpm run build\n```\n\n```text\nbuilt in 2.1s\n```".into(),
        ),
        ..ToolInfo::default()
    });
    let mut text = Message::agent();
    text.model = tool.model.clone();
    text.timestamp = Some("2026-05-20T09:00:07Z".into());
    text.content = Some(vec![ContentPart::text("The build compiles cleanly.")]);
    let mut u2 = Message::user("that worked, thanks");
    u2.timestamp = Some("2026-05-20T09:03:00Z".into());
    data.exchanges = vec![
        Exchange {
            exchange_id: "ex_001".into(),
            start_time: u1.timestamp.clone(),
            messages: vec![u1, tool, text],
            ..Exchange::default()
        },
        Exchange {
            exchange_id: "ex_002".into(),
            start_time: u2.timestamp.clone(),
            messages: vec![u2],
            ..Exchange::default()
        },
    ];
    let grouped = RenderOptions {
        group_turns: true,
        ..RenderOptions::default()
    };
    assert_eq!(
        render_markdown_with(&data, grouped),
        read_fixture("2026-05-20_09-00-00Z-list-the-workspace.md")
    );
    // SpecStory's own layout repeats the header for the second message.
    let per_message = render_markdown(&data);
    assert!(per_message.contains(
        "</details></tool-use>\n\n_**Agent (gemini-2.5-pro 2026-05-20 09:00:07Z)**_\n\nThe build"
    ));
}

#[test]
fn lore_transcripts_parse_back_and_render_to_the_same_bytes() {
    for name in LORE {
        let text = read_fixture(name);
        let parsed = parse_markdown(&text).unwrap();
        assert!(parsed.options.group_turns, "{name}");
        // A transcript does not name the workspace.
        let v = validate::rule_violations(&parsed.data);
        assert!(v.iter().all(|v| v.path == "workspaceRoot"), "{name}: {v:?}");
        assert_eq!(
            render_markdown_with(&parsed.data, parsed.options),
            text,
            "{name}"
        );
    }
    let projc = parse_markdown(&read_fixture(LORE[4])).unwrap().data;
    assert_eq!(projc.provider.id, "claude");
    assert_eq!(projc.exchanges.len(), 7);
    let tools: Vec<&str> = projc
        .messages()
        .filter_map(|m| m.tool.as_ref())
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(
        tools,
        ["Read", "Read", "Read", "Edit", "Read", "Bash", "Edit"]
    );
}

#[test]
fn a_real_claude_code_transcript_renders_byte_for_byte() {
    let name = "2026-02-23_23-01-52Z-all-provider-specific-token.md";
    let text = read_fixture(name);
    let parsed = parse_markdown(&text).unwrap();
    assert!(!parsed.options.group_turns);
    assert_eq!(render_markdown_with(&parsed.data, parsed.options), text);
    assert_eq!(file_name(&parsed.data, true), name);
    let thinking = parsed
        .data
        .messages()
        .flat_map(|m| m.parts())
        .filter(|p| p.kind == "thinking")
        .count();
    assert!(thinking > 0);
}

#[test]
fn an_older_transcript_differs_only_in_user_times() {
    let name = "2026-01-13_16-29-49Z-pkg-providers-claudecode-13.md";
    let text = read_fixture(name);
    let parsed = parse_markdown(&text).unwrap();
    assert_eq!(file_name(&parsed.data, true), name);
    // That renderer printed user times raw; the current one formats them.
    let expected: String = text
        .split_inclusive('\n')
        .map(|line| {
            match line
                .strip_prefix("_**User (")
                .and_then(|r| r.strip_suffix(")**_\n"))
            {
                Some(ts) => format!("_**User ({})**_\n", specstory::format_time(ts, true)),
                None => line.to_string(),
            }
        })
        .collect();
    assert_ne!(expected, text);
    assert_eq!(render_markdown_with(&parsed.data, parsed.options), expected);
}

#[test]
fn markdown_transcripts_are_read_as_sessions() {
    let path = fixture(LORE[4]);
    assert_eq!(
        agentlog_formats::registry::detect(&path).unwrap().name(),
        "specstory"
    );
    let read = specstory::FORMAT.read_path(&path).unwrap();
    assert_eq!(read.session.meta.id, "33333333-aaaa-bbbb-cccc-000000000001");
    assert_eq!(
        read.session.first_prompt().as_deref().map(|s| &s[..10]),
        Some("Before you")
    );
    assert_eq!(read.diagnostics.len(), 1);
}

#[test]
fn rendering_skips_empty_messages_and_separates_exchanges() {
    let mut data = SessionData::new(ProviderInfo::from_id("codex", "1"), "s");
    data.created_at = "2026-01-01T00:00:00+02:00".into();
    let mut blank = Message::agent();
    blank.content = Some(vec![ContentPart::thinking("  ")]);
    let mut hints_only = Message::agent();
    hints_only.path_hints = Some(vec!["a".into()]);
    let mut side = Message::user("sub");
    side.metadata = Some(serde_json::from_value(json!({"isSidechain": true})).unwrap());
    side.id = Some("m9".into());
    data.exchanges = vec![
        Exchange {
            exchange_id: "1".into(),
            messages: vec![Message::user("a"), blank, hints_only],
            ..Exchange::default()
        },
        Exchange {
            exchange_id: "2".into(),
            messages: vec![side],
            ..Exchange::default()
        },
    ];
    let md = render_markdown_with(
        &data,
        RenderOptions {
            message_ids: true,
            ..RenderOptions::default()
        },
    );
    assert_eq!(
        md,
        "<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n# 2025-12-31 22:00:00Z\n\n<!-- Codex CLI Session s (2025-12-31 22:00:00Z) -->\n\n_**User**_\n\na\n\n---\n\n_**User - sidechain**_\n<!-- message-id: m9 -->\n\nsub\n"
    );
}

#[test]
fn session_data_of_another_agent_passes_specstorys_own_schema() {
    // pi is not one of the schema's provider ids (claude, cursor, codex,
    // gemini); the writer must still produce SessionData it accepts.
    for (agent, provider, model, family) in [
        (Agent::Pi, Some("anthropic"), "claude-sonnet-4-5", "claude"),
        (Agent::Pi, Some("openai"), "gpt-5", "codex"),
        (Agent::Codelia, None, "local-llama", "cursor"),
    ] {
        let mut s = claude_like();
        s.meta.agent = agent.clone();
        s.meta.agent_version = Some("0.73.1".into());
        s.meta.model.provider = provider.map(str::to_string);
        s.meta.model.model = Some(model.into());
        s.meta.extra.clear();
        let (data, fidelity) = to_session_data(&s);
        assert_eq!(data.provider.id, family, "{agent:?} {model}");
        assert_ne!(data.provider.name, "Claude Code");
        assert!(
            fidelity
                .losses
                .iter()
                .any(|l| l.what.contains("provider id")),
            "{fidelity:?}"
        );
        let v = serde_json::to_value(&data).unwrap();
        for which in [ValidationSchema::Seed, ValidationSchema::Upstream] {
            let problems = validate::violations(&v, which);
            assert!(problems.is_empty(), "{agent:?}: {problems:?}");
        }
    }
}
