#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
//! Token totals and costs equal the real ccusage's on the same files, for
//! every agent both read (Claude Code, Codex, pi, Gemini CLI).
//!
//! ccusage (npm ccusage@20.0.24) is installed by `scripts/install-ccusage.sh`
//! into target/peers. With `CI` set a missing ccusage fails the test;
//! elsewhere the test says it skipped and why.

mod common;

use common::TestEnv;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const CCUSAGE_VERSION: &str = "20.0.24";

/// Returns the ccusage command, installing it when needed.
fn ccusage() -> Option<PathBuf> {
    common::installed(
        "install-ccusage.sh",
        &[CCUSAGE_VERSION],
        &format!("ccusage {CCUSAGE_VERSION}"),
    )
}

/// Runs `ccusage AGENT daily --json` over the test HOME and returns its
/// totals.
fn ccusage_totals(bin: &Path, env: &TestEnv, agent: &str) -> Value {
    let out = Command::new(bin)
        .args([agent, "daily", "--offline", "--json"])
        .env_clear()
        .env("HOME", env.home())
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .current_dir(env.home())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ccusage {agent} daily failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("ccusage {agent}: not JSON ({e})"));
    v["totals"].clone()
}

#[test]
fn token_totals_and_costs_equal_ccusage_for_every_agent_both_read() {
    let Some(bin) = ccusage() else { return };
    let env = TestEnv::new();
    agentlog_bench::gen::generate(env.home(), 3_000_000, 7).unwrap();
    let r = env.run(&["stats", "--by", "agent", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let ours: Value = serde_json::from_str(&r.stdout).unwrap();
    let rows = ours["rows"].as_array().unwrap();
    for agent in ["claude", "codex", "pi", "gemini"] {
        let row = rows
            .iter()
            .find(|x| x["key"] == agent)
            .unwrap_or_else(|| panic!("no {agent} row in {}", r.stdout));
        let theirs = ccusage_totals(&bin, &env, agent);
        let n = |v: &Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
        assert!(n(row, "total") > 0, "{agent}: the corpus has tokens");
        assert_eq!(
            [
                n(row, "input"),
                n(row, "output"),
                n(row, "cache_read"),
                n(row, "cache_write"),
                n(row, "total"),
            ],
            [
                n(&theirs, "inputTokens"),
                n(&theirs, "outputTokens"),
                n(&theirs, "cacheReadTokens"),
                n(&theirs, "cacheCreationTokens"),
                n(&theirs, "totalTokens"),
            ],
            "{agent}: agentlog (input, output, cache read, cache write, total) vs ccusage"
        );
        // Both price from LiteLLM's list (ours a dated snapshot, ccusage's
        // the copy it was built with): the costs agree to a cent.
        let cost = row["cost_usd"].as_f64().unwrap();
        let their_cost = theirs["totalCost"]
            .as_f64()
            .or_else(|| theirs["costUSD"].as_f64())
            .unwrap();
        assert!(
            (cost - their_cost).abs() < 0.01,
            "{agent}: agentlog ${cost:.4} vs ccusage ${their_cost:.4}"
        );
    }
}

#[test]
fn explain_lists_every_counted_response_with_its_price_row() {
    let env = TestEnv::new();
    agentlog_bench::gen::generate(env.home(), 600_000, 3).unwrap();
    let stats: Value =
        serde_json::from_str(&env.run(&["stats", "--by", "agent", "--json"]).stdout).unwrap();
    let r = env.run(&["stats", "--explain", "--json"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let rows: Vec<Value> = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        rows.len() as u64,
        stats["total"]["responses"].as_u64().unwrap()
    );
    let tokens: u64 = rows
        .iter()
        .map(|x| {
            ["input", "output", "cache_read", "cache_write"]
                .iter()
                .map(|k| x[k].as_u64().unwrap())
                .sum::<u64>()
        })
        .sum();
    assert_eq!(tokens, stats["total"]["total"].as_u64().unwrap());
    let cost: f64 = rows.iter().filter_map(|x| x["cost_usd"].as_f64()).sum();
    let total_cost = stats["total"]["cost_usd"].as_f64().unwrap();
    assert!((cost - total_cost).abs() < 1e-6, "{cost} vs {total_cost}");
    let gemini = rows
        .iter()
        .find(|x| x["model"] == "gemini-2.5-pro")
        .expect("a gemini-2.5-pro response");
    assert_eq!(gemini["price"]["list"], "gemini-2.5-pro", "{gemini}");
    // The human table names the price list it used.
    let r = env.run(&["stats", "--explain", "--agent", "gemini"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("time (UTC)"), "{}", r.stdout);
    assert!(r.stdout.contains("gemini-2.5-pro  "), "{}", r.stdout);
    assert!(r.stdout.contains("prices: LiteLLM"), "{}", r.stdout);
}

#[test]
fn prices_update_keeps_a_list_that_stats_then_uses() {
    let env = TestEnv::new();
    agentlog_bench::gen::generate(env.home(), 300_000, 5).unwrap();
    // A price list where every model costs $1,000 per million input tokens.
    let mut models = serde_json::Map::new();
    for m in [
        "claude-sonnet-4-20250514",
        "claude-sonnet-4-5-20250929",
        "gpt-5-codex",
        "gemini-2.5-pro",
    ] {
        models.insert(
            m.into(),
            serde_json::json!({"mode": "chat", "input_cost_per_token": 0.001, "output_cost_per_token": 0.0}),
        );
    }
    let file = env.write("litellm.json", Value::Object(models).to_string().as_bytes());
    let r = env.run(&[
        "prices",
        "update",
        "--from",
        file.to_str().unwrap(),
        "--date",
        "2026-01-02",
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let kept = env.home().join(".local/share/agentlog/prices.json");
    assert!(kept.exists());
    let r = env.run(&["prices", "show", "gemini-2.5-pro", "my-local-model"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stdout.contains("of 2026-01-02"), "{}", r.stdout);
    assert!(
        r.stdout.contains("gemini-2.5-pro: 1000 0 0 0"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("my-local-model: not in the list"),
        "{}",
        r.stdout
    );
    // --prices overrides the kept list for one run; a bad file is an error
    // naming it.
    let bad = env.write("bad.json", b"{\"x\": [");
    let r = env.run(&["stats", "--prices", bad.to_str().unwrap()]);
    assert_ne!(r.status, 0);
    assert!(r.stderr.contains("bad.json"), "{}", r.stderr);
    let r = env.run(&["stats", "--by", "agent"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("prices: LiteLLM price list from"),
        "{}",
        r.stdout
    );
}
