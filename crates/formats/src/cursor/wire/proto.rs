//! Just enough protobuf to walk Cursor's tree blobs: a field iterator over
//! the wire format, without a schema.

/// One field of a protobuf message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::cursor) enum Field<'a> {
    /// A varint, fixed64 or fixed32 value.
    Number(u32, u64),
    /// A length-delimited value (bytes, string or nested message).
    Bytes(u32, &'a [u8]),
}

/// Reads a base-128 varint at `*pos`.
fn varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut out = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(*pos)?;
        *pos += 1;
        out |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(out);
        }
    }
    None
}

/// Parses every field of `buf`; `None` when the bytes are not a protobuf
/// message (a truncated field, an unknown wire type, field number 0).
pub(in crate::cursor) fn fields(buf: &[u8]) -> Option<Vec<Field<'_>>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < buf.len() {
        let key = varint(buf, &mut pos)?;
        let number = u32::try_from(key >> 3).ok().filter(|n| *n > 0)?;
        match key & 7 {
            0 => out.push(Field::Number(number, varint(buf, &mut pos)?)),
            1 => {
                let b = buf.get(pos..pos + 8)?;
                pos += 8;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                out.push(Field::Number(number, u64::from_le_bytes(a)));
            }
            2 => {
                let len = usize::try_from(varint(buf, &mut pos)?).ok()?;
                let end = pos.checked_add(len)?;
                out.push(Field::Bytes(number, buf.get(pos..end)?));
                pos = end;
            }
            5 => {
                let b = buf.get(pos..pos + 4)?;
                pos += 4;
                let mut a = [0u8; 4];
                a.copy_from_slice(b);
                out.push(Field::Number(number, u64::from(u32::from_le_bytes(a))));
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fields_and_rejects_garbage() {
        let mut buf = vec![0x0a, 0x02, b'h', b'i', 0x10, 0x96, 0x01];
        assert_eq!(
            fields(&buf),
            Some(vec![Field::Bytes(1, b"hi"), Field::Number(2, 150)])
        );
        buf.truncate(3);
        assert_eq!(fields(&buf), None);
        assert_eq!(fields(b"{\"role\":1}"), None);
        assert_eq!(fields(&[0x0f]), None);
    }
}
