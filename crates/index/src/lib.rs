//! Catalog and full-text search over agent sessions.
#![forbid(unsafe_code)]
