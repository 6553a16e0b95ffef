//! Durable session storage for agentlog.
//!
//! - [`append`]: append-only JSONL files, one complete line per write, with
//!   an fsync policy, an advisory lock (one writer per file) and torn-tail
//!   recovery on open.
//! - [`snapshot`]: atomic whole-file snapshots (temp file, sync, rename,
//!   directory sync).
//! - [`names`]: validation of ids and names that become paths.
//! - [`lock`]: one writer per file, and who holds it.
//! - [`read`]: reading files being appended to, whole lines only.
//! - [`check`]: health checks and tail repairs for `agentlog doctor`.
//!
//! On top of these sit the seed systems' APIs (pi's session manager,
//! codelia's run recorder, jido_code's persistence, acpx's session store).
#![forbid(unsafe_code)]

pub mod acpx;
pub mod append;
pub mod check;
pub mod codelia;
pub mod error;
pub mod jido;
pub mod lock;
pub mod names;
pub mod pi;
pub mod read;
pub mod snapshot;

pub use append::{AppendOptions, AppendWriter, LockMode, Recovery, SyncPolicy};
pub use error::StoreError;
pub use lock::{LockHolder, LockState};
