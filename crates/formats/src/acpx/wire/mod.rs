//! What acpx's files are made of: the session record as the seed specifies
//! it (and the two other shapes real files have), the lines of its NDJSON
//! audit log, how ACP traffic changes a record, and the keys under which
//! agentlog keeps what the model has no field for.

pub mod acp;
pub mod events;
pub mod record;

/// `meta.extra` key holding the whole record.
pub(super) const RECORD_KEY: &str = "acpx_record";
/// `meta.extra` key holding the file's layout.
pub(super) const LAYOUT_KEY: &str = "acpx_layout";
/// `meta.extra` key holding the file's key order.
pub(super) const ORDER_KEY: &str = "acpx_key_order";
