//! Placeholder: the jido API is being written.
