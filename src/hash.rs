//! SHA-256, the one digest the crate uses (the OpenHands view's saved
//! output names; the Agent Session Format's content hashes), on the `sha2`
//! crate's compression function, which uses the CPU's SHA instructions
//! when it has them (detected at run time) and portable code otherwise;
//! several streams that end with the same bytes are finished side by side
//! ([`Sha256Stream::finish_many_with`]).

use sha2::{Digest, Sha256};

mod lanes;
mod stream;

pub(crate) use stream::Sha256Stream;

/// The SHA-256 digest of `data`.
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// The SHA-256 digest of `data` as 64 lowercase hex digits.
pub(crate) fn sha256_hex(data: &[u8]) -> String {
    digest_hex(sha256(data))
}

/// A digest as 64 lowercase hex digits.
fn digest_hex(digest: [u8; 32]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 64];
    for (pair, b) in buf.chunks_exact_mut(2).zip(digest) {
        pair[0] = HEX[usize::from(b >> 4)];
        pair[1] = HEX[usize::from(b & 15)];
    }
    // ASCII throughout.
    std::str::from_utf8(&buf).unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        // FIPS 180-4 examples.
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let long = "a".repeat(1000);
        assert_eq!(
            sha256_hex(long.as_bytes()),
            "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        );
        let mut st = Sha256Stream::default();
        st.update(b"a");
        let fork = st.clone();
        st.update(b"bc");
        assert_eq!(st.finish(), sha256(b"abc"));
        assert_eq!(fork.finish(), sha256(b"a"));
        let long = "a".repeat(1_000_000);
        assert_eq!(
            sha256_hex(long.as_bytes()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }
}
