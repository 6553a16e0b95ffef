//! Placeholder: the codelia API is being written.
