//! Placeholder: the pi API is being written.
