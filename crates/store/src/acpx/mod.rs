//! Placeholder: the acpx API is being written.
