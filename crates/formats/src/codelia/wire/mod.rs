//! What codelia's files are made of, a file per record kind, each with its
//! mapping to and from the model: the run log's `header`, its other records,
//! codelia's `BaseMessage`, and the resume state snapshot.

pub(super) mod header;
pub(super) mod message;
pub(super) mod record;
pub(super) mod state;
