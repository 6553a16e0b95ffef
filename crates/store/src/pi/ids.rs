//! Entry and session ids as pi makes them.

use rand::Rng;

/// Returns a fresh entry id: 8 lowercase hex characters not yet `taken`
/// (100 tries, then a full UUID), like pi's.
pub fn new_entry_id_with(taken: impl Fn(&str) -> bool) -> String {
    let mut rng = rand::thread_rng();
    for _ in 0..100 {
        let id = format!("{:08x}", rng.gen::<u32>());
        if !taken(&id) {
            return id;
        }
    }
    uuid::Uuid::new_v4().to_string()
}

/// Returns a fresh entry id not in `used`.
pub(crate) fn new_entry_id(used: &std::collections::HashSet<String>) -> String {
    new_entry_id_with(|id| used.contains(id))
}

/// Returns a fresh session id (a UUIDv7, as pi 0.73 makes them).
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
