//! What SpecStory's files are made of: the SessionData 1.0 types, field for
//! field, the classification of tools, and the keys under which agentlog
//! keeps what the model has no field for.

pub(in crate::specstory) mod tools;
pub(in crate::specstory) mod types;

/// `Entry::extra` key holding an exchange's own fields.
pub(in crate::specstory) const EXCHANGE_KEY: &str = "specstory_exchange";
/// The custom event type marking an exchange boundary.
pub(in crate::specstory) const EXCHANGE_CUSTOM: &str = "specstory.exchange";
/// `Message::extra` key holding SpecStory's usage object.
pub(in crate::specstory) const USAGE_KEY: &str = "specstory_usage";
/// `Block::extra` key of a tool call holding its raw output value.
pub(in crate::specstory) const OUTPUT_KEY: &str = "output";
