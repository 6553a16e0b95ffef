//! Durable session storage for agentlog.
#![forbid(unsafe_code)]
