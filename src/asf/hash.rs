//! The format's hashes: `sha256:` followed by the lowercase hexadecimal
//! SHA-256 of some bytes (an entry's content, its envelope, a request, an
//! instruction part's text).
//!
//! The digest itself is the crate's one SHA-256 (`crate::hash`).

/// The prefix of every hash the format writes; the only one a reader accepts.
pub const PREFIX: &str = "sha256:";

/// `sha256:` and the lowercase hexadecimal SHA-256 of `bytes`.
pub fn sha256_ref(bytes: &[u8]) -> String {
    hex_ref(&crate::hash::sha256(bytes))
}

/// `sha256:` and the lowercase hexadecimal form of a SHA-256 `digest`.
pub(crate) fn hex_ref(digest: &[u8]) -> String {
    HexRef::new(digest).as_str().to_owned()
}

/// [`hex_ref`]'s text on the stack, for a hash that is written and not
/// kept (no allocation).
pub(crate) struct HexRef {
    buf: [u8; PREFIX.len() + 64],
    len: usize,
}

impl HexRef {
    /// `sha256:` and the lowercase hexadecimal form of `digest` (its first
    /// 32 bytes).
    pub(crate) fn new(digest: &[u8]) -> Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut buf = [0u8; PREFIX.len() + 64];
        buf[..PREFIX.len()].copy_from_slice(PREFIX.as_bytes());
        for (pair, &b) in buf[PREFIX.len()..].chunks_exact_mut(2).zip(digest) {
            pair[0] = HEX[usize::from(b >> 4)];
            pair[1] = HEX[usize::from(b & 15)];
        }
        let len = PREFIX.len() + 2 * digest.len().min(32);
        HexRef { buf, len }
    }

    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        // ASCII throughout.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

/// Whether `s` has the shape of a hash: `sha256:` and 64 lowercase
/// hexadecimal digits.
pub fn is_hash(s: &str) -> bool {
    s.strip_prefix(PREFIX).is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Appends the canonical envelope object of an entry: `content`, `parent`,
/// `parents` (only when `parents_canonical` is given: the canonical bytes of
/// a non-empty array), `ts` and `type`, in that (UTF-16) order.
pub fn envelope_bytes(
    out: &mut Vec<u8>,
    entry_type: &str,
    parent: Option<&str>,
    parents_canonical: Option<&[u8]>,
    ts: &str,
    content_hash: &str,
) {
    envelope_with(
        out,
        entry_type,
        parent,
        parents_canonical,
        ts,
        content_hash,
        false,
    );
}

/// [`envelope_bytes`] of an entry the appender writes: the content hash
/// and the parent (ids: `sha256:` and hex digits) and the `ts` (checked
/// canonical) are copied between their quotes as they stand, with nothing
/// to escape; the type goes through the escaping writer.
pub(crate) fn envelope_bytes_own(
    out: &mut Vec<u8>,
    entry_type: &str,
    parent: Option<&str>,
    parents_canonical: Option<&[u8]>,
    ts: &str,
    content_hash: &str,
) {
    envelope_with(
        out,
        entry_type,
        parent,
        parents_canonical,
        ts,
        content_hash,
        true,
    );
}

fn envelope_with(
    out: &mut Vec<u8>,
    entry_type: &str,
    parent: Option<&str>,
    parents_canonical: Option<&[u8]>,
    ts: &str,
    content_hash: &str,
    plain: bool,
) {
    use crate::json::write::{write_plain_str, write_str};
    let string = |out: &mut Vec<u8>, s: &str| {
        if plain {
            write_plain_str(out, s);
        } else {
            write_str(out, s, false);
        }
    };
    out.extend_from_slice(b"{\"content\":");
    string(out, content_hash);
    out.extend_from_slice(b",\"parent\":");
    match parent {
        Some(p) => string(out, p),
        None => out.extend_from_slice(b"null"),
    }
    if let Some(p) = parents_canonical {
        out.extend_from_slice(b",\"parents\":");
        out.extend_from_slice(p);
    }
    out.extend_from_slice(b",\"ts\":");
    string(out, ts);
    out.extend_from_slice(b",\"type\":");
    write_str(out, entry_type, false);
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digest() {
        assert_eq!(
            sha256_ref(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(is_hash(&sha256_ref(b"")));
        assert!(!is_hash("sha256:ABC"));
        assert!(!is_hash(
            "sha512:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        ));
    }
}
