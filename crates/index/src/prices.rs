//! Model prices from LiteLLM's public price list, to estimate what sessions
//! cost.
//!
//! The list is LiteLLM's `model_prices_and_context_window.json`, the one
//! ccusage and agentsview price tokens with. A dated snapshot of the fields
//! agentlog uses (`prices/litellm.json`: per-token prices of input, output,
//! cache reads and cache writes, and the rates above 200k tokens a request)
//! is built in; [`PriceTable::from_json`] reads either such a snapshot or a
//! whole LiteLLM file, and [`install`] makes a table the one every cost is
//! computed with (`agentlog stats --prices FILE`, or the copy `agentlog
//! prices update` keeps).
//!
//! A model name is looked up as written (lower case), then without a
//! provider path (`anthropic/`, `vertex_ai/…/`), region and vendor prefixes
//! (`us.anthropic.`) and version suffixes (`-v1:0`, `@20250514`), then
//! without a date suffix (`-20250514`, `-2025-08-07`), then as the longest
//! listed name it starts with followed by `-`. A model found nowhere has no
//! price: its responses are counted with cost unknown.
//!
//! A request whose prompt (input, cache reads and writes) is above 200,000
//! tokens has all its tokens priced at the list's `*_above_200k_tokens`
//! rates where it has them, as Google and Anthropic bill long prompts and
//! as ccusage counts them; a cost the session file recorded itself is used
//! instead of any estimate.
//!
//! ```
//! use agentlog_index::prices::{table, cost};
//!
//! let p = table().find("claude-sonnet-4-5-20250929").expect("listed");
//! assert_eq!(p.model, "claude-sonnet-4-5-20250929");
//! assert!((cost(p, 1_000_000, 0, 0, 0) - 3.0).abs() < 1e-9);
//! ```

use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

/// The snapshot built into agentlog.
const BUNDLED: &str = include_str!("../prices/litellm.json");

/// Prompt tokens of one request above which the `above_200k` rates apply.
pub const TIER_TOKENS: u64 = 200_000;

/// The price of one model, in US dollars per million tokens.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Price {
    /// The name of the price list's row.
    pub model: String,
    /// Input tokens not read from cache.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from cache.
    pub cache_read: f64,
    /// Input tokens written to cache.
    pub cache_write: f64,
    /// The rates of a request whose prompt is above [`TIER_TOKENS`] (input,
    /// output, cache read, cache write), where the list has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub above_200k: Option<[Option<f64>; 4]>,
}

/// What went wrong reading a price list.
#[derive(Debug, thiserror::Error)]
#[error("price list {source_name}: {message}")]
pub struct PriceError {
    /// The file or address read.
    pub source_name: String,
    /// What is wrong.
    pub message: String,
}

/// A price list: model name to price.
#[derive(Clone, Debug, Default)]
pub struct PriceTable {
    /// Where the list came from (a LiteLLM version, a file, an address).
    pub source: String,
    /// When it was taken (`YYYY-MM-DD`), when known.
    pub taken: Option<String>,
    rows: HashMap<String, Price>,
}

/// The snapshot's field order.
const FIELDS: [&str; 8] = [
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
    "input_cost_per_token_above_200k_tokens",
    "output_cost_per_token_above_200k_tokens",
    "cache_read_input_token_cost_above_200k_tokens",
    "cache_creation_input_token_cost_above_200k_tokens",
];

/// A row offered for a name: (priority, length of the listed name, the
/// listed name, its fields).
type Candidate = (u8, usize, String, [Option<f64>; 8]);

/// LiteLLM modes whose rows price chat tokens.
const MODES: [&str; 3] = ["chat", "responses", "completion"];

fn per_million(v: Option<f64>) -> f64 {
    v.map_or(0.0, |x| round_sig(x * 1e6))
}

fn price_of(model: &str, f: &[Option<f64>; 8]) -> Price {
    let above = [f[4], f[5], f[6], f[7]];
    Price {
        model: model.to_string(),
        input: per_million(f[0]),
        output: per_million(f[1]),
        cache_read: per_million(f[2]),
        cache_write: per_million(f[3]),
        above_200k: above
            .iter()
            .any(Option::is_some)
            .then(|| above.map(|x| x.map(|v| round_sig(v * 1e6)))),
    }
}

/// Returns the name a listed model is known by without provider path,
/// region/vendor prefix and version suffix (`bedrock/us.anthropic.
/// claude-x-v1:0` -> `claude-x`).
pub fn base_name(name: &str) -> String {
    let mut n = name.trim().to_lowercase();
    if let Some(i) = n.rfind('/') {
        n = n[i + 1..].to_string();
    }
    for region in ["us-gov.", "us.", "eu.", "apac.", "au.", "jp.", "global."] {
        if let Some(rest) = n.strip_prefix(region) {
            n = rest.to_string();
        }
    }
    for vendor in ["anthropic.", "openai.", "google."] {
        if let Some(rest) = n.strip_prefix(vendor) {
            n = rest.to_string();
        }
    }
    if let Some(i) = n.find('@') {
        n.truncate(i);
    }
    if let Some(i) = n.rfind("-v") {
        let tail = &n[i + 2..];
        if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit() || c == ':') {
            n.truncate(i);
        }
    }
    n
}

/// Returns `name` without a trailing date (`-20250514`, `-2025-08-07`).
fn without_date(name: &str) -> Option<&str> {
    let b = name.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if b.len() > 9 && b[b.len() - 9] == b'-' && digits(&b[b.len() - 8..]) {
        return Some(&name[..name.len() - 9]);
    }
    if b.len() > 11
        && b[b.len() - 11] == b'-'
        && digits(&b[b.len() - 10..b.len() - 6])
        && b[b.len() - 6] == b'-'
        && digits(&b[b.len() - 5..b.len() - 3])
        && b[b.len() - 3] == b'-'
        && digits(&b[b.len() - 2..])
    {
        return Some(&name[..name.len() - 11]);
    }
    None
}

impl PriceTable {
    /// Reads a price list: agentlog's snapshot (`{"models": {name: [8
    /// per-token prices]}}`) or a whole LiteLLM
    /// `model_prices_and_context_window.json`. `source_name` names it in
    /// errors.
    pub fn from_json(source_name: &str, text: &str) -> Result<PriceTable, PriceError> {
        let err = |message: String| PriceError {
            source_name: source_name.to_string(),
            message,
        };
        let v: Value = serde_json::from_str(text).map_err(|e| {
            err(format!(
                "not JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ))
        })?;
        let obj = v
            .as_object()
            .ok_or_else(|| err("expected a JSON object of models".into()))?;
        if let Some(models) = obj.get("agentlog_prices").and(obj.get("models")) {
            let models = models
                .as_object()
                .ok_or_else(|| err("`models` is not an object".into()))?;
            let mut rows = HashMap::with_capacity(models.len());
            for (name, fields) in models {
                let a = fields.as_array().filter(|a| a.len() == FIELDS.len());
                let a = a.ok_or_else(|| {
                    err(format!(
                        "model {name:?}: expected an array of {} prices",
                        FIELDS.len()
                    ))
                })?;
                let mut f = [None; 8];
                for (i, x) in a.iter().enumerate() {
                    f[i] = match x {
                        Value::Null => None,
                        Value::Number(n) => n.as_f64(),
                        _ => return Err(err(format!("model {name:?}: price {i} is not a number"))),
                    };
                }
                rows.insert(name.to_lowercase(), price_of(name, &f));
            }
            return Ok(PriceTable {
                source: obj
                    .get("source")
                    .and_then(Value::as_str)
                    .unwrap_or(source_name)
                    .to_string(),
                taken: obj.get("taken").and_then(Value::as_str).map(String::from),
                rows,
            });
        }
        Ok(Self::from_litellm(source_name, obj))
    }

    /// Reads the models of a whole LiteLLM price file.
    fn from_litellm(source_name: &str, obj: &Map<String, Value>) -> PriceTable {
        // name -> (priority, length of the listed name, fields): direct rows
        // win over rows found by their base name, shorter listed names
        // (global list price) over longer ones (regional endpoints).
        let mut best: HashMap<String, Candidate> = HashMap::new();
        for (name, row) in obj {
            let Some(row) = row.as_object() else { continue };
            let mode = row.get("mode").and_then(Value::as_str).unwrap_or("");
            if !MODES.contains(&mode) || row.get(FIELDS[0]).and_then(Value::as_f64).is_none() {
                continue;
            }
            let mut f = [None; 8];
            for (i, k) in FIELDS.iter().enumerate() {
                f[i] = row.get(*k).and_then(Value::as_f64);
            }
            let lower = name.to_lowercase();
            let base = base_name(&lower);
            let mut offer = |key: String, prio: u8| {
                let cand = (prio, name.len(), name.clone(), f);
                match best.get(&key) {
                    Some(b) if (b.0, b.1, &b.2) <= (cand.0, cand.1, &cand.2) => {}
                    _ => {
                        best.insert(key, cand);
                    }
                }
            };
            offer(lower.clone(), 0);
            if base != lower && !base.is_empty() {
                offer(base, 1);
            }
        }
        let rows = best
            .into_iter()
            .map(|(k, (_, _, name, f))| (k, price_of(&name, &f)))
            .collect();
        PriceTable {
            source: source_name.to_string(),
            taken: None,
            rows,
        }
    }

    /// Reads a price list file (see [`PriceTable::from_json`]).
    pub fn load(path: &Path) -> Result<PriceTable, PriceError> {
        let text = std::fs::read_to_string(path).map_err(|e| PriceError {
            source_name: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::from_json(&path.display().to_string(), &text)
    }

    /// The snapshot built into agentlog.
    pub fn bundled() -> PriceTable {
        // The bundled file is checked by a test; an unreadable one would
        // leave every model unpriced rather than stop agentlog.
        Self::from_json("built-in snapshot", BUNDLED).unwrap_or_default()
    }

    /// The number of models listed.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when no model is listed.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Returns agentlog's snapshot form of the table, with where and when
    /// it was taken: only the fields agentlog uses, models in name order.
    pub fn to_snapshot_json(&self, source: &str, taken: &str) -> String {
        // A provider's copy of a row (`bedrock/…`, `us.anthropic.…-v1:0`)
        // is found by its base name: keep only the base row.
        let mut names: Vec<&String> = self
            .rows
            .keys()
            .filter(|k| {
                let b = base_name(k);
                b == **k || !self.rows.contains_key(&b)
            })
            .collect();
        names.sort();
        let mut out = String::with_capacity(self.rows.len() * 96);
        out.push_str("{\"agentlog_prices\":1,");
        out.push_str(&format!(
            "\"source\":{},\"taken\":{},",
            Value::from(source),
            Value::from(taken)
        ));
        out.push_str(&format!(
            "\"unit\":\"USD per token\",\"fields\":{},\n\"models\":{{\n",
            serde_json::to_string(&FIELDS).unwrap_or_default()
        ));
        for (i, name) in names.iter().enumerate() {
            let p = &self.rows[*name];
            let a = p.above_200k.unwrap_or([None; 4]);
            let per = |x: f64| if x == 0.0 { None } else { Some(x / 1e6) };
            let fields: Vec<Value> = [
                Some(p.input / 1e6),
                per(p.output),
                per(p.cache_read),
                per(p.cache_write),
                a[0].map(|x| x / 1e6),
                a[1].map(|x| x / 1e6),
                a[2].map(|x| x / 1e6),
                a[3].map(|x| x / 1e6),
            ]
            .iter()
            .map(|x| x.map_or(Value::Null, |v| Value::from(round_sig(v))))
            .collect();
            out.push_str(&format!(
                "{}:{}{}\n",
                Value::from(name.as_str()),
                Value::Array(fields),
                if i + 1 < names.len() { "," } else { "" }
            ));
        }
        out.push_str("}}\n");
        out
    }

    /// Returns the price of `model` (see the module documentation for how
    /// names are matched), when the list has one.
    pub fn find(&self, model: &str) -> Option<&Price> {
        let m = model.trim().to_lowercase();
        if m.is_empty() {
            return None;
        }
        if let Some(p) = self.rows.get(&m) {
            return Some(p);
        }
        let base = base_name(&m);
        if let Some(p) = self.rows.get(&base) {
            return Some(p);
        }
        if let Some(p) = without_date(&base).and_then(|b| self.rows.get(b)) {
            return Some(p);
        }
        let mut end = base.len();
        while let Some(i) = base[..end].rfind('-') {
            if let Some(p) = self.rows.get(&base[..i]) {
                return Some(p);
            }
            end = i;
        }
        None
    }
}

/// Rounds away the float noise of converting to and from per-million
/// prices (12 significant digits).
fn round_sig(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let mag = v.abs().log10().floor() as i32;
    let scale = 10f64.powi(11 - mag);
    (v * scale).round() / scale
}

static TABLE: OnceLock<PriceTable> = OnceLock::new();

/// Makes `t` the table every cost is computed with; false when a table was
/// already in use (call it before the first cost).
pub fn install(t: PriceTable) -> bool {
    TABLE.set(t).is_ok()
}

/// The table in use: the one [`install`]ed, else the built-in snapshot.
pub fn table() -> &'static PriceTable {
    TABLE.get_or_init(PriceTable::bundled)
}

/// Returns the price of `model` in the table in use.
pub fn price(model: &str) -> Option<&'static Price> {
    table().find(model)
}

/// True when a request's prompt (input, cache reads and cache writes) is
/// above [`TIER_TOKENS`], so that its tokens take the higher rates.
pub fn is_long_prompt(input: u64, cache_read: u64, cache_write: u64) -> bool {
    input.saturating_add(cache_read).saturating_add(cache_write) > TIER_TOKENS
}

/// Returns the estimated cost in US dollars of one request's tokens. A
/// request whose prompt is above 200k tokens has all its tokens priced at
/// the list's `above_200k` rates (where it has them), as the providers bill
/// long prompts and ccusage counts them.
pub fn cost(p: &Price, input: u64, output: u64, cache_read: u64, cache_write: u64) -> f64 {
    cost_of(
        p,
        [input, output, cache_read, cache_write],
        is_long_prompt(input, cache_read, cache_write),
    )
}

/// Returns the cost of tokens (input, output, cache read, cache write)
/// summed over requests that all had long prompts (`long`) or all not.
pub fn cost_of(p: &Price, tokens: [u64; 4], long: bool) -> f64 {
    let rates = [p.input, p.output, p.cache_read, p.cache_write];
    let above = p.above_200k.unwrap_or([None; 4]);
    let mut c = 0.0;
    for i in 0..4 {
        let rate = if long {
            above[i].unwrap_or(rates[i])
        } else {
            rates[i]
        };
        c += tokens[i] as f64 * rate;
    }
    c / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_snapshot_reads_and_names_its_date() {
        let t = PriceTable::bundled();
        assert!(t.len() > 300, "{} models", t.len());
        assert!(t.taken.as_deref().is_some_and(|d| d.len() == 10));
        assert!(t.source.to_lowercase().contains("litellm"), "{}", t.source);
    }

    #[test]
    fn finds_models_by_their_names_in_session_files() {
        let t = PriceTable::bundled();
        let row = |m: &str| t.find(m).map(|p| p.model.clone());
        assert_eq!(row("gpt-5-codex").as_deref(), Some("gpt-5-codex"));
        assert_eq!(row("GPT-5").as_deref(), Some("gpt-5"));
        assert_eq!(row("gemini-2.5-pro").as_deref(), Some("gemini-2.5-pro"));
        // Dated and provider-prefixed names.
        assert!(row("claude-sonnet-4-20250514").is_some());
        assert!(row("anthropic/claude-sonnet-4-5").is_some());
        assert_eq!(row("my-own-local-model"), None);
        assert_eq!(row(""), None);
    }

    #[test]
    fn gemini_2_5_cache_reads_are_a_tenth_of_input() {
        // The old hand-written table priced them at a quarter.
        let p = PriceTable::bundled();
        let p = p.find("gemini-2.5-pro").expect("listed");
        assert!((p.input - 1.25).abs() < 1e-9, "{p:?}");
        assert!((p.cache_read - 0.125).abs() < 1e-9, "{p:?}");
        let f = PriceTable::bundled();
        let f = f.find("gemini-2.5-flash").expect("listed");
        assert!((f.cache_read - 0.03).abs() < 1e-9, "{f:?}");
    }

    #[test]
    fn a_prompt_above_200k_prices_the_whole_request_higher() {
        let p = Price {
            model: "m".into(),
            input: 1.0,
            output: 2.0,
            cache_read: 0.1,
            cache_write: 0.0,
            above_200k: Some([Some(2.0), Some(3.0), None, None]),
        };
        // 200k of prompt is not above the threshold.
        let c = cost(&p, 100_000, 1_000, 100_000, 0);
        assert!((c - (0.1 + 0.002 + 0.01)).abs() < 1e-9, "{c}");
        // Above it, every token takes the higher rate (cache reads keep
        // theirs: the list has no higher one).
        let c = cost(&p, 100_000, 1_000, 100_001, 0);
        assert!((c - (0.2 + 0.003 + 0.0100001)).abs() < 1e-9, "{c}");
        assert!((cost_of(&p, [100_000, 1_000, 100_001, 0], true) - c).abs() < 1e-12);
    }

    #[test]
    fn reads_a_litellm_file_and_writes_a_snapshot_that_reads_back() {
        let litellm = r#"{
          "sample_spec": {"mode": "one of: chat, embedding"},
          "claude-x-1": {"mode": "chat", "input_cost_per_token": 3e-06, "output_cost_per_token": 1.5e-05,
                          "cache_read_input_token_cost": 3e-07, "cache_creation_input_token_cost": 3.75e-06},
          "eu.anthropic.claude-y-20250101-v1:0": {"mode": "chat", "input_cost_per_token": 4e-06},
          "anthropic.claude-y-20250101-v1:0": {"mode": "chat", "input_cost_per_token": 3e-06},
          "text-embedding-3": {"mode": "embedding", "input_cost_per_token": 1e-07}
        }"#;
        let t = PriceTable::from_json("test", litellm).unwrap();
        assert_eq!(t.find("claude-x-1").map(|p| p.cache_write), Some(3.75));
        assert_eq!(
            t.find("claude-y-20250101").map(|p| p.input),
            Some(3.0),
            "the list price, not a regional endpoint's"
        );
        assert!(t.find("text-embedding-3").is_none());
        let snap = t.to_snapshot_json("litellm test", "2026-11-23");
        let back = PriceTable::from_json("snap", &snap).unwrap();
        assert_eq!(back.taken.as_deref(), Some("2026-11-23"));
        assert_eq!(back.len(), 2, "the regional copy is found by its base name");
        assert_eq!(
            back.find("eu.anthropic.claude-y-20250101-v1:0")
                .map(|p| p.input),
            Some(3.0)
        );
        assert_eq!(
            back.find("claude-x-1").map(|p| p.output),
            t.find("claude-x-1").map(|p| p.output)
        );
    }

    #[test]
    fn bad_price_files_are_named_errors() {
        let e = PriceTable::from_json("p.json", "{\"a\": ").unwrap_err();
        assert!(e.to_string().contains("p.json") && e.to_string().contains("line 1"));
        let e = PriceTable::from_json("p.json", r#"{"agentlog_prices":1,"models":{"m":[1,2]}}"#)
            .unwrap_err();
        assert!(e.to_string().contains("model \"m\""), "{e}");
    }
}
