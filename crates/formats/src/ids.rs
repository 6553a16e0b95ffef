//! Ids shared by the writers.

use sha2::{Digest, Sha256};

/// Returns `id` as a UUID: parsed when it is one, otherwise a UUID derived
/// from its SHA-256 (the same every time), for formats whose session ids
/// must be UUIDs.
pub fn stable_uuid(id: &str) -> uuid::Uuid {
    if let Ok(u) = uuid::Uuid::parse_str(id) {
        return u;
    }
    let digest = Sha256::digest(id.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_stay_and_other_ids_map_stably() {
        let u = "0f8fad5b-d9cb-469f-a165-70867728950e";
        assert_eq!(stable_uuid(u).to_string(), u);
        assert_eq!(stable_uuid("abc"), stable_uuid("abc"));
        assert_ne!(stable_uuid("abc"), stable_uuid("abd"));
        assert_eq!(stable_uuid("abc").get_version_num(), 4);
    }
}
