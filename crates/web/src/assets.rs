//! The style sheet and script, embedded in the binary, and the
//! Content-Security-Policy that goes with them.

use base64::Engine;
use sha2::{Digest, Sha256};

/// The style sheet of every page.
pub const CSS: &str = include_str!("../assets/app.css");
/// The script of every page (theme, keys, copy, paging, live tail).
pub const JS: &str = include_str!("../assets/app.js");

/// The policy of served pages: scripts and styles only from this server,
/// images only from it or inline data, no frames, no plugins, no forms
/// elsewhere.
pub const SERVE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

fn sha256_b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(s.as_bytes()))
}

/// Returns the policy of an exported file: only its own inline style and
/// script (by hash) and inline images; nothing is fetched.
pub fn export_csp() -> String {
    format!(
        "default-src 'none'; style-src 'sha256-{}'; script-src 'sha256-{}'; img-src data:; base-uri 'none'; form-action 'none'",
        sha256_b64(CSS),
        sha256_b64(JS)
    )
}
