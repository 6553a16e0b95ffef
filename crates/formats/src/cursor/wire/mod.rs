//! What Cursor's stores are made of: the content blocks of both stores
//! with the prompt wrappers Cursor adds, and just enough protobuf to walk
//! the chat store's tree blobs.

pub(in crate::cursor) mod content;
pub(in crate::cursor) mod proto;
