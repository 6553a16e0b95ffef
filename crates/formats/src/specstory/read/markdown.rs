//! Reading SpecStory markdown transcripts back into SessionData.
//!
//! The transcript is a rendering, so some things cannot come back: the
//! exchange and message ids, the tool inputs and outputs (only the rendered
//! tool body is there; it becomes `formattedMarkdown`), path hints and
//! usage. Times come back at the precision they were printed. What does
//! come back renders to the same bytes: the parsed data, rendered again with
//! the layout the transcript used, equals the transcript.

use crate::specstory::wire::types::{
    provider_id, ContentPart, Exchange, Message, ProviderInfo, SessionData, ToolInfo,
};
use crate::specstory::write::markdown::{RenderOptions, GENERATED_BY};
use chrono::DateTime;

/// What parsing found out about the layout of a transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedTranscript {
    /// The data.
    pub data: SessionData,
    /// The render options that reproduce the transcript: `group_turns` is
    /// set when one header is followed by several messages.
    pub options: RenderOptions,
}

/// Parses a SpecStory markdown transcript. Returns `None` when `text` does
/// not start with the generator comment.
pub fn parse_markdown(text: &str) -> Option<ParsedTranscript> {
    let rest = text.strip_prefix(GENERATED_BY)?.strip_prefix("\n\n")?;
    let (title_line, rest) = rest.split_once("\n\n")?;
    let title = title_line.strip_prefix("# ")?;
    let (comment, rest) = match rest.split_once("\n\n") {
        Some((c, r)) if c.starts_with("<!-- ") && c.ends_with(" -->") => (c, r),
        _ => (rest.trim_end_matches('\n'), ""),
    };
    let comment = comment.strip_prefix("<!-- ")?.strip_suffix(" -->")?;
    let (provider_name, after) = comment.split_once(" Session ")?;
    let (session_id, stamp) = match after.rsplit_once(" (") {
        Some((id, ts)) => (id, ts.strip_suffix(')').unwrap_or(ts)),
        None => (after, title),
    };
    let mut data = SessionData::new(
        ProviderInfo {
            id: provider_id(provider_name)
                .map(str::to_string)
                .unwrap_or_else(|| provider_name.to_ascii_lowercase().replace(' ', "-")),
            name: provider_name.to_string(),
            version: "unknown".into(),
            extra: Default::default(),
        },
        session_id,
    );
    data.created_at = unformat_time(stamp);
    let mut grouped = false;
    for block in split_headers(rest) {
        let (role, sidechain, model, ts) = parse_header(block.header);
        let mut first = Message {
            role: role.to_string(),
            timestamp: ts.clone(),
            model: model.clone(),
            ..Message::default()
        };
        if sidechain {
            first
                .metadata
                .get_or_insert_with(Default::default)
                .insert("isSidechain".into(), serde_json::Value::Bool(true));
        }
        let pieces = split_body(block.body);
        let mut messages: Vec<Message> = Vec::new();
        let mut current = first.clone();
        let mut has_any = false;
        for piece in pieces {
            match piece {
                Piece::Part(p) => {
                    if current.tool.is_some() {
                        messages.push(std::mem::replace(&mut current, first.clone()));
                    }
                    current.content.get_or_insert_with(Vec::new).push(p);
                    has_any = true;
                }
                Piece::Tool(t) => {
                    if current.tool.is_some() {
                        messages.push(std::mem::replace(&mut current, first.clone()));
                    }
                    current.tool = Some(*t);
                    has_any = true;
                }
            }
        }
        if has_any {
            messages.push(current);
        }
        if messages.len() > 1 {
            grouped = true;
        }
        let opens = block.separated_before && role == "user" || data.exchanges.is_empty();
        if opens {
            data.exchanges.push(Exchange {
                exchange_id: format!("ex_{:03}", data.exchanges.len() + 1),
                start_time: ts.clone(),
                ..Exchange::default()
            });
        }
        if let Some(ex) = data.exchanges.last_mut() {
            ex.messages.extend(messages);
        }
    }
    if data
        .exchanges
        .first()
        .and_then(|e| e.start_time.as_ref())
        .is_none()
    {
        if let Some(ex) = data.exchanges.first_mut() {
            if !data.created_at.is_empty() {
                ex.start_time = Some(data.created_at.clone());
            }
        }
    }
    Some(ParsedTranscript {
        data,
        options: RenderOptions {
            utc: stamp.ends_with('Z'),
            message_ids: false,
            group_turns: grouped,
        },
    })
}

/// Turns `2026-05-20 09:00:05Z` back into `2026-05-20T09:00:05Z` (and a
/// `-0700` offset into `-07:00`); other text is kept.
fn unformat_time(s: &str) -> String {
    if let Some(body) = s.strip_suffix('Z') {
        let t = format!("{}Z", body.replacen(' ', "T", 1));
        if DateTime::parse_from_rfc3339(&t).is_ok() {
            return t;
        }
    }
    if s.len() > 5 {
        let (body, off) = s.split_at(s.len() - 5);
        if off.starts_with(['+', '-']) {
            let t = format!("{}{}:{}", body.replacen(' ', "T", 1), &off[..3], &off[3..]);
            if DateTime::parse_from_rfc3339(&t).is_ok() {
                return t;
            }
        }
    }
    s.to_string()
}

struct HeaderBlock<'a> {
    header: &'a str,
    body: &'a str,
    separated_before: bool,
}

fn is_header(line: &str) -> bool {
    (line.starts_with("_**User") || line.starts_with("_**Agent")) && line.ends_with("**_")
}

/// Splits the transcript after its preamble into header lines and bodies.
fn split_headers(text: &str) -> Vec<HeaderBlock<'_>> {
    // Byte offsets of header lines.
    let mut starts = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let l = line.trim_end_matches('\n');
        if is_header(l) {
            starts.push((offset, offset + line.len()));
        }
        offset += line.len();
    }
    let mut out = Vec::new();
    for (i, &(h_start, h_end)) in starts.iter().enumerate() {
        let header = text[h_start..h_end].trim_end_matches('\n');
        let next = starts.get(i + 1).map(|s| s.0).unwrap_or(text.len());
        let mut body = &text[h_end..next];
        body = body.strip_prefix('\n').unwrap_or(body);
        let before = &text[..h_start];
        let separated_before = before.ends_with("---\n\n");
        out.push(HeaderBlock {
            header,
            body,
            separated_before,
        });
    }
    // A body ends where the next header's separator begins.
    let n = out.len();
    for i in 0..n.saturating_sub(1) {
        if out[i + 1].separated_before {
            let b = out[i].body;
            out[i].body = b.strip_suffix("---\n\n").unwrap_or(b);
        }
    }
    out
}

fn parse_header(h: &str) -> (&'static str, bool, Option<String>, Option<String>) {
    let inner = h.trim_start_matches("_**").trim_end_matches("**_");
    let (role, rest) = if let Some(r) = inner.strip_prefix("User") {
        ("user", r)
    } else {
        ("agent", inner.strip_prefix("Agent").unwrap_or(inner))
    };
    let (sidechain, rest) = match rest.strip_prefix(" - sidechain") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let paren = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'));
    let Some(p) = paren else {
        return (role, sidechain, None, None);
    };
    if role == "user" {
        return (role, sidechain, None, Some(unformat_time(p)));
    }
    // `model ts`, `model` or `ts`; a printed time is `YYYY-MM-DD HH:MM:SS…`.
    let words: Vec<&str> = p.split(' ').collect();
    if words.len() >= 2 {
        let ts = format!("{} {}", words[words.len() - 2], words[words.len() - 1]);
        if looks_like_time(&ts) {
            let model = words[..words.len() - 2].join(" ");
            let model = (!model.is_empty()).then_some(model);
            return (role, sidechain, model, Some(unformat_time(&ts)));
        }
    }
    if looks_like_time(p) {
        return (role, sidechain, None, Some(unformat_time(p)));
    }
    (role, sidechain, Some(p.to_string()), None)
}

fn looks_like_time(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 19
        && b[4] == b'-'
        && b[7] == b'-'
        && (b[10] == b' ' || b[10] == b'T')
        && b[13] == b':'
        && b[16] == b':'
        && b[..4].iter().all(u8::is_ascii_digit)
}

enum Piece {
    Part(ContentPart),
    Tool(Box<ToolInfo>),
}

const THINK_OPEN: &str = "<think><details><summary>Thought Process</summary>\n";
const THINK_CLOSE: &str = "</details></think>\n\n";
const TOOL_CLOSE: &str = "</details></tool-use>\n";

/// Splits a message body into text parts, thinking parts and tool blocks.
fn split_body(body: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix(THINK_OPEN) {
            if let Some(end) = after.find(THINK_CLOSE) {
                let text = &after[..end];
                let text = text.strip_suffix('\n').unwrap_or(text);
                out.push(Piece::Part(ContentPart::thinking(text)));
                rest = &after[end + THINK_CLOSE.len()..];
                continue;
            }
        }
        if rest.starts_with("<tool-use ") {
            if let Some((tool, after)) = parse_tool(rest) {
                out.push(Piece::Tool(Box::new(tool)));
                rest = after.strip_prefix('\n').unwrap_or(after);
                continue;
            }
        }
        // Text runs to the next block that starts after a blank line.
        let mut end = rest.len();
        for marker in ["\n\n<think><details>", "\n\n<tool-use "] {
            if let Some(i) = rest.find(marker) {
                end = end.min(i + 2);
            }
        }
        let chunk = &rest[..end];
        let text = chunk
            .strip_suffix("\n\n")
            .unwrap_or_else(|| chunk.trim_end_matches('\n'));
        if !text.is_empty() || end < rest.len() {
            out.push(Piece::Part(ContentPart::text(text)));
        }
        rest = &rest[end..];
    }
    out
}

fn parse_tool(s: &str) -> Option<(ToolInfo, &str)> {
    let (open, rest) = s.split_once('\n')?;
    let attrs = open
        .strip_prefix("<tool-use ")?
        .strip_suffix("><details>")?;
    let kind = attr(attrs, "data-tool-type")?;
    let name = attr(attrs, "data-tool-name")?;
    let (summary_line, rest) = rest.split_once('\n')?;
    let summary = summary_line
        .strip_prefix("<summary>")?
        .strip_suffix("</summary>")?;
    let end = rest.find(TOOL_CLOSE)?;
    let body = &rest[..end];
    let after = &rest[end + TOOL_CLOSE.len()..];
    let default_summary = format!("Tool use: **{name}**");
    Some((
        ToolInfo {
            name: name.to_string(),
            kind: kind.to_string(),
            summary: (summary != default_summary).then(|| summary.to_string()),
            formatted_markdown: Some(body.to_string()),
            ..ToolInfo::default()
        },
        after,
    ))
}

fn attr<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    let start = attrs.find(&format!("{name}=\""))? + name.len() + 2;
    let len = attrs[start..].find('"')?;
    Some(&attrs[start..start + len])
}
