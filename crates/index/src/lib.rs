//! Catalog and full-text search over agent sessions.
//!
//! Placeholder: the index is being written.
#![forbid(unsafe_code)]
