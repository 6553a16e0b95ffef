//! Planted secrets for redaction tests and benchmarks.
//!
//! Every secret is generated (deterministic pseudo-random characters after
//! prefixes built by concatenation), so no real-looking secret is written
//! in the source for scanners to flag.

use agentlog_model::{
    Agent, Block, BlockKind, Entry, EntryKind, Message, Role, Session, SessionMeta, Timestamp, Todo,
};
use serde_json::{json, Value};

/// One planted secret: the kind a redactor must report, the secret itself
/// (what must never appear in redacted output), and the text it is planted
/// in (the secret with the context its detector needs).
#[derive(Clone, Debug)]
pub struct Planted {
    /// The kind the redactor reports.
    pub kind: &'static str,
    /// The secret.
    pub secret: String,
    /// The text that holds it.
    pub text: String,
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const HEX: &[u8] = b"0123456789abcdef";
const DIGITS: &[u8] = b"0123456789";
const UPPER32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// A small deterministic generator (splitmix64).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn chars(&mut self, alphabet: &[u8], n: usize) -> String {
        // Each generated run holds a digit, an upper and a lower case letter
        // when the alphabet has them, as real keys do.
        loop {
            let s: String = (0..n)
                .map(|_| alphabet[(self.next() % alphabet.len() as u64) as usize] as char)
                .collect();
            let need = |f: fn(&char) -> bool| {
                !alphabet.iter().any(|&c| f(&(c as char))) || s.chars().any(|c| f(&c))
            };
            if n < 8
                || (need(char::is_ascii_digit)
                    && need(char::is_ascii_uppercase)
                    && need(char::is_ascii_lowercase))
            {
                return s;
            }
        }
    }
}

fn p(kind: &'static str, secret: String, text: String) -> Planted {
    Planted { kind, secret, text }
}

/// Returns one planted secret of every kind the built-in rules detect in
/// text (41 of them, 37 kinds), varied by `seed`.
pub fn planted(seed: u64) -> Vec<Planted> {
    let mut g = Gen(seed.wrapping_mul(7919).wrapping_add(17));
    let mut out = Vec::new();
    let mut bare = |kind: &'static str, secret: String| {
        let text = format!("the value is {secret} here");
        out.push(p(kind, secret, text));
    };
    bare(
        "anthropic-api-key",
        ["sk-", "ant-", "api03-"].concat() + &g.chars(URLSAFE, 93) + "AA",
    );
    bare(
        "openai-project-key",
        ["sk-", "proj-"].concat() + &g.chars(URLSAFE, 120),
    );
    bare(
        "openai-api-key",
        [
            "sk-",
            &g.chars(ALNUM, 20),
            "T3Blbk",
            "FJ",
            &g.chars(ALNUM, 20),
        ]
        .concat(),
    );
    bare(
        "aws-access-key-id",
        ["AK", "IA"].concat() + &g.chars(UPPER32, 16),
    );
    bare("github-pat", ["gh", "p_"].concat() + &g.chars(ALNUM, 36));
    bare(
        "github-fine-grained-pat",
        [
            "github_",
            "pat_",
            &g.chars(ALNUM, 22),
            "_",
            &g.chars(ALNUM, 59),
        ]
        .concat(),
    );
    bare(
        "github-oauth-token",
        ["gh", "o_"].concat() + &g.chars(ALNUM, 36),
    );
    bare(
        "github-app-token",
        ["gh", "s_"].concat() + &g.chars(ALNUM, 36),
    );
    bare(
        "github-refresh-token",
        ["gh", "r_"].concat() + &g.chars(ALNUM, 76),
    );
    bare(
        "gitlab-pat",
        ["gl", "pat-"].concat() + &g.chars(URLSAFE, 20),
    );
    bare("gitlab-token", ["gl", "ptt-"].concat() + &g.chars(HEX, 40));
    bare(
        "slack-token",
        [
            "xo",
            "xb-",
            &g.chars(DIGITS, 12),
            "-",
            &g.chars(DIGITS, 13),
            "-",
            &g.chars(ALNUM, 24),
        ]
        .concat(),
    );
    bare(
        "slack-webhook",
        [
            "https://hooks.",
            "slack.com/services/T",
            &g.chars(UPPER32, 8),
            "/B",
            &g.chars(UPPER32, 10),
            "/",
            &g.chars(ALNUM, 24),
        ]
        .concat(),
    );
    bare(
        "stripe-secret-key",
        ["sk_", "live_"].concat() + &g.chars(ALNUM, 99),
    );
    bare(
        "stripe-webhook-secret",
        ["wh", "sec_"].concat() + &g.chars(ALNUM, 32),
    );
    bare(
        "google-api-key",
        ["AI", "za"].concat() + &g.chars(URLSAFE, 35),
    );
    bare(
        "google-oauth-client-secret",
        ["GOC", "SPX-"].concat() + &g.chars(URLSAFE, 28),
    );
    bare(
        "google-oauth-token",
        ["ya", "29."].concat() + &g.chars(URLSAFE, 120),
    );
    bare("npm-token", ["np", "m_"].concat() + &g.chars(ALNUM, 36));
    bare(
        "pypi-token",
        ["py", "pi-", "AgEIcHlwaS5vcmc"].concat() + &g.chars(URLSAFE, 70),
    );
    bare("twilio-api-key", ["S", "K"].concat() + &g.chars(HEX, 32));
    bare(
        "sendgrid-api-key",
        ["S", "G.", &g.chars(URLSAFE, 22), ".", &g.chars(URLSAFE, 43)].concat(),
    );
    bare(
        "huggingface-token",
        ["h", "f_"].concat() + &g.chars(ALNUM, 34),
    );
    bare(
        "azure-client-secret",
        [&g.chars(ALNUM, 3), "8Q", "~", &g.chars(ALNUM, 34)].concat(),
    );
    bare(
        "databricks-token",
        ["da", "pi"].concat() + &g.chars(HEX, 32),
    );
    bare(
        "digitalocean-token",
        ["do", "p_v1_"].concat() + &g.chars(HEX, 64),
    );
    bare(
        "discord-bot-token",
        [
            // The base64 of a user id (decimal digits) starts so.
            ["M", "N", "O"][(g.next() % 3) as usize],
            ["D", "T", "j", "z"][(g.next() % 4) as usize],
            &g.chars(ALNUM, 24),
            ".",
            &g.chars(URLSAFE, 6),
            ".",
            &g.chars(URLSAFE, 38),
        ]
        .concat(),
    );
    bare(
        "discord-webhook",
        [
            "https://discord.com/api/",
            "webhooks/",
            &g.chars(DIGITS, 18),
            "/",
            &g.chars(URLSAFE, 68),
        ]
        .concat(),
    );
    bare(
        "telegram-bot-token",
        [&g.chars(DIGITS, 10), ":A", "A", &g.chars(URLSAFE, 33)].concat(),
    );
    bare(
        "jwt",
        [
            "ey",
            "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.",
            "ey",
            "J",
            &g.chars(URLSAFE, 40),
            ".",
            &g.chars(URLSAFE, 43),
        ]
        .concat(),
    );
    let body: Vec<String> = (0..6).map(|_| g.chars(B64, 64)).collect();
    let key = [
        "-----BEGIN RSA ",
        "PRIVATE KEY-----\n",
        &body.join("\n"),
        "\n-----END RSA ",
        "PRIVATE KEY-----",
    ]
    .concat();
    out.push(p(
        "private-key",
        key.clone(),
        format!("cat id_rsa:\n{key}\n"),
    ));
    let key = [
        "-----BEGIN OPENSSH ",
        "PRIVATE KEY-----\n",
        "b3BlbnNzaC1rZXktdjEAAAAA",
        &g.chars(B64, 40),
        "\n",
        &g.chars(B64, 70),
        "\n-----END OPENSSH ",
        "PRIVATE KEY-----",
    ]
    .concat();
    out.push(p("private-key", key.clone(), format!("{key}\n")));
    let s = g.chars(B64, 40);
    out.push(p(
        "aws-secret-access-key",
        s.clone(),
        format!("aws_secret_access_key = {s}\n"),
    ));
    let s = g.chars(B64, 86) + "==";
    out.push(p(
        "azure-storage-key",
        s.clone(),
        format!("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core.windows.net"),
    ));
    let s = g.chars(ALNUM, 43) + "%3D";
    out.push(p(
        "azure-sas-token",
        s.clone(),
        format!("https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig={s}"),
    ));
    let s = g.chars(ALNUM, 18);
    out.push(p(
        "url-password",
        s.clone(),
        format!("DATABASE_URL is postgres://admin:{s}@db.internal:5432/app"),
    ));
    let s = g.chars(URLSAFE, 48);
    out.push(p(
        "bearer-token",
        s.clone(),
        format!("curl -H 'Authorization: Bearer {s}' https://api.internal"),
    ));
    let s = g.chars(B64, 32);
    out.push(p(
        "basic-auth",
        s.clone(),
        format!("authorization: Basic {s}\n"),
    ));
    let s = ["Tr0ub4", "dor&", &g.chars(ALNUM, 6)].concat();
    out.push(p(
        "env-secret",
        s.clone(),
        format!("export DB_PASSWORD={s}\n"),
    ));
    let s = g.chars(ALNUM, 14);
    out.push(p(
        "secret-assignment",
        s.clone(),
        format!("config.password = \"{s}\""),
    ));
    let s = g.chars(ALNUM, 40);
    out.push(p(
        "high-entropy-secret",
        s.clone(),
        format!("signing_key: {s}"),
    ));
    out
}

/// Returns planted secrets that only a JSON key reveals, as (kind, secret,
/// key): they go in JSON values (tool arguments, extra fields).
pub fn planted_fields(seed: u64) -> Vec<(&'static str, String, &'static str)> {
    let mut g = Gen(seed.wrapping_mul(104_729).wrapping_add(3));
    vec![
        ("secret-field", g.chars(ALNUM, 20), "client_secret"),
        ("aws-secret-access-key", g.chars(B64, 40), "SecretAccessKey"),
    ]
}

/// Returns the forms a secret can take in an output: as is, JSON-escaped,
/// and a 16-character piece of its middle (a partial leak).
pub fn forms(secret: &str) -> Vec<String> {
    let escaped = serde_json::to_string(secret).unwrap_or_default();
    let escaped = escaped
        .get(1..escaped.len().saturating_sub(1))
        .unwrap_or_default()
        .to_string();
    let mid = secret.len() / 2;
    let piece = secret
        .get(mid.saturating_sub(8)..(mid + 8).min(secret.len()))
        .unwrap_or(secret)
        .to_string();
    vec![secret.to_string(), escaped, piece]
}

/// Returns every secret planted with `seed` (text and field ones) with its
/// kind.
pub fn all_secrets(seed: u64) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = planted(seed)
        .into_iter()
        .map(|p| (p.kind.to_string(), p.secret))
        .collect();
    for (kind, secret, _) in planted_fields(seed) {
        v.push((kind.to_string(), secret));
    }
    v
}

/// Returns each planted secret of `seed` (in any of its [`forms`]) that
/// `haystack` holds, as `kind: form`; empty when nothing leaked.
pub fn leaks(haystack: &str, seed: u64) -> Vec<String> {
    let mut out = Vec::new();
    for (kind, secret) in all_secrets(seed) {
        for f in forms(&secret) {
            if haystack.contains(&f) {
                out.push(format!("{kind}: {f}"));
            }
        }
    }
    out
}

/// Returns every planted text joined, one per line, between ordinary words.
pub fn planted_text(planted: &[Planted]) -> String {
    let mut s = String::from("Here is what I found:\n");
    for p in planted {
        s.push_str(&p.text);
        s.push_str("\nand then\n");
    }
    s
}

/// Returns a session with every planted secret in every text field the
/// model has: the title, cwd and extras of the session; user, assistant
/// and tool messages (text, thinking, tool call arguments as JSON and as a
/// JSON string, tool results), compactions, branch summaries, labels,
/// custom entries, run records, events, unknown records.
pub fn planted_session(seed: u64) -> Session {
    let planted = planted(seed);
    let fields = planted_fields(seed);
    let text = planted_text(&planted);
    let mut args = serde_json::Map::new();
    args.insert("command".into(), Value::String(text.clone()));
    for (_, secret, key) in &fields {
        args.insert((*key).into(), Value::String(secret.clone()));
    }
    let args = Value::Object(args);
    let mut meta = SessionMeta::new("planted-0001", Agent::Claude);
    meta.title = Some(text.clone());
    meta.cwd = Some(format!("/home/u/{}", planted[0].secret));
    let at = |n: u32| Timestamp::Text(format!("2026-05-01T10:{:02}:{:02}.000Z", n / 60, n % 60));
    meta.created_at = Some(at(0));
    meta.updated_at = Some(at(59));
    meta.closed_at = Some(at(59));
    meta.extra
        .insert("note".into(), Value::String(text.clone()));
    meta.todos.push(Todo {
        content: text.clone(),
        status: "pending".into(),
        active_form: Some(text.clone()),
        extra: Default::default(),
    });
    let mut s = Session::new(meta);
    let mut n = 0;
    let mut push = |s: &mut Session, kind: EntryKind| {
        n += 1;
        let parent = s.leaf_id.clone();
        let mut e = Entry::new(format!("e{n:04}"), parent, kind).at(at(n));
        e.extra.insert("env".into(), args.clone());
        s.push(e);
    };
    push(
        &mut s,
        EntryKind::Message(Message::text(Role::User, text.clone())),
    );
    let mut a = Message::new(Role::Assistant);
    a.content.push(Block::thinking(text.clone(), None));
    a.content.push(Block::text(text.clone()));
    a.content.push(Block::tool_call(
        Some("call_1".into()),
        "Bash",
        args.clone(),
    ));
    a.content.push(Block::tool_call(
        Some("call_2".into()),
        "Bash",
        Value::String(args.to_string()),
    ));
    a.extra.insert("note".into(), Value::String(text.clone()));
    push(&mut s, EntryKind::Message(a));
    let mut t = Message::new(Role::Tool);
    t.tool_call_id = Some("call_1".into());
    t.tool_name = Some("Bash".into());
    t.content.push(Block::tool_result(
        Some("call_1".into()),
        vec![Block::text(text.clone())],
        false,
    ));
    push(&mut s, EntryKind::Message(t));
    let mut u = Message::new(Role::User);
    u.content.push(Block {
        kind: BlockKind::ToolResult {
            tool_call_id: Some("call_2".into()),
            content: vec![Block::text(text.clone())],
            is_error: false,
        },
        extra: Default::default(),
    });
    push(&mut s, EntryKind::Message(u));
    push(
        &mut s,
        EntryKind::Compaction {
            summary: text.clone(),
            short_summary: None,
            first_kept_entry_id: None,
            tokens_before: Some(1000),
            details: Some(json!({ "notes": text })),
            from_extension: None,
            preserve_data: None,
        },
    );
    push(
        &mut s,
        EntryKind::BranchSummary {
            from_id: "e0001".into(),
            summary: text.clone(),
            details: None,
            from_extension: None,
        },
    );
    push(
        &mut s,
        EntryKind::Custom {
            custom_type: "notes".into(),
            data: Some(args.clone()),
        },
    );
    push(
        &mut s,
        EntryKind::ToolOutput {
            tool: "Bash".into(),
            tool_call_id: "call_1".into(),
            output: text.clone(),
            is_error: None,
        },
    );
    push(
        &mut s,
        EntryKind::Event {
            source: "agent".into(),
            event_type: "note".into(),
            seq: Some(1),
            payload: json!({ "text": text }),
        },
    );
    push(
        &mut s,
        EntryKind::Unknown {
            record_type: Some("mystery".into()),
            raw: json!({ "type": "mystery", "body": text }),
        },
    );
    push(
        &mut s,
        EntryKind::Message(Message::text(Role::Assistant, text.clone())),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planting_is_deterministic_and_varied_by_seed() {
        let a = planted(1);
        let b = planted(1);
        let c = planted(2);
        assert_eq!(a.len(), b.len());
        assert!(a.iter().zip(&b).all(|(x, y)| x.secret == y.secret));
        assert!(a.iter().zip(&c).all(|(x, y)| x.secret != y.secret));
        for p in &a {
            assert!(p.text.contains(&p.secret), "{}", p.kind);
        }
        let mut kinds: Vec<&str> = a.iter().map(|p| p.kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert!(kinds.len() >= 25, "{}", kinds.len());
    }
}
