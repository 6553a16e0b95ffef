//! `agentlog push --otlp URL`: sessions as traces to an OTLP/HTTP endpoint.

use super::push::{progress_bar, Args};
use crate::fresh::discover;
use crate::{config, out};
use agentlog_api::otel::push::{push, Encoding, OtlpOptions};
use std::process::ExitCode;

/// `NAME=VALUE` (or `NAME: VALUE`) as a header.
fn header(text: &str) -> anyhow::Result<(String, String)> {
    let (name, value) = text
        .split_once('=')
        .or_else(|| text.split_once(':'))
        .ok_or_else(|| anyhow::anyhow!("--header {text:?}: expected NAME=VALUE"))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
    {
        anyhow::bail!("--header {name:?}: not a header name (letters, digits, - and _)");
    }
    Ok((name.to_string(), value.trim().to_string()))
}

/// The headers of `$OTEL_EXPORTER_OTLP_HEADERS` (`NAME=VALUE,…`, values
/// percent-encoded as the OpenTelemetry specification says).
fn env_headers() -> anyhow::Result<Vec<(String, String)>> {
    let Ok(all) = std::env::var("OTEL_EXPORTER_OTLP_HEADERS") else {
        return Ok(Vec::new());
    };
    all.split(',')
        .filter(|h| !h.trim().is_empty())
        .map(|h| {
            let (k, v) = header(h)?;
            Ok((k, percent_decode(&v)))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(v) if b[i] == b'%' => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs `agentlog push --otlp URL`.
pub fn cmd_push_otlp(args: &Args, endpoint: String) -> anyhow::Result<ExitCode> {
    let mut headers = env_headers()?;
    for h in &args.headers {
        headers.push(header(h)?);
    }
    let settings = config::settings(&args.roots)?;
    let found = discover(&settings, true)?;
    let opts = OtlpOptions {
        endpoint,
        headers,
        encoding: if args.encoding == "json" {
            Encoding::Json
        } else {
            Encoding::Protobuf
        },
        redact: !args.no_redact,
    };
    let bar = progress_bar(found.len(), args.json);
    let report = push(&settings, &found, &opts, &mut |done, _| {
        bar.set_position(done as u64)
    });
    bar.finish_and_clear();
    let report = report?;
    for (path, why) in &report.skipped {
        crate::eprintln_clean!("agentlog: warning: {path}: not sent: {why}");
    }
    if !args.json {
        if !report.redactions.is_empty() {
            eprint!(
                "{}",
                crate::redact::sanitized(&report.redactions.to_string())
            );
        }
        if !report.fidelity.is_lossless() {
            crate::eprint_clean!("{}", report.fidelity);
        }
    }
    if args.json {
        out::print_json(&serde_json::json!({ "report": report }))?;
    } else {
        let waiting = if report.waiting > 0 {
            format!(
                "; {} of turns still running wait for a later push",
                out::count(report.waiting as u64, "span")
            )
        } else {
            String::new()
        };
        out::print(&format!(
            "sent to {}: {} looked at, {} unchanged; {} of {} ({} new) in {}{waiting}\n",
            report.url,
            out::count(report.files as u64, "file"),
            report.unchanged,
            out::count(report.spans as u64, "span"),
            out::count(report.sessions_sent as u64, "session"),
            report.new_traces,
            out::count(report.requests as u64, "request"),
        ))?;
    }
    if !report.skipped.is_empty() {
        eprintln!(
            "agentlog: error: {} of {} not sent; the others were",
            report.skipped.len(),
            out::count(report.files as u64, "file"),
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_name_value() {
        assert_eq!(
            header("Authorization=Basic a=b").unwrap_or_default(),
            ("Authorization".to_string(), "Basic a=b".to_string())
        );
        assert!(header("no value").is_err());
        assert_eq!(percent_decode("Basic%20abc%3D"), "Basic abc=");
    }
}
