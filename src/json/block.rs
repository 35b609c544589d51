//! Sixteen bytes of JSON text at a time: which bytes of a block are quotes,
//! backslashes, control characters or not ASCII, as bit masks (bit `n` for
//! byte `n`), with SSE2, which every x86-64 processor has. Writing a string
//! literal ([`write_str`](super::write::write_str)) and checking one for
//! its canonical form (`asf::canon`) both look at their bytes this way.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
    _mm_set1_epi8,
};

/// One 16-byte block of text, loaded for its byte classes.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Block(__m128i);

#[cfg(target_arch = "x86_64")]
impl Block {
    /// Loads the sixteen bytes of `bytes`.
    #[inline(always)]
    pub(crate) fn load(bytes: &[u8; 16]) -> Block {
        // SAFETY: SSE2 is part of the x86-64 baseline; the unaligned load
        // reads exactly the sixteen bytes of the array.
        Block(unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) })
    }

    /// Loads the first sixteen bytes of `bytes` when it has that many.
    #[inline(always)]
    pub(crate) fn first(bytes: &[u8]) -> Option<Block> {
        bytes.first_chunk::<16>().map(Block::load)
    }

    /// Loads the fewer than sixteen bytes of `rest` followed by spaces
    /// (which are of no class here): a text's last bytes looked at as one
    /// more block.
    #[inline(always)]
    pub(crate) fn padded(rest: &[u8]) -> Block {
        let mut block = [b' '; 16];
        for (slot, &b) in block.iter_mut().zip(rest) {
            *slot = b;
        }
        Block::load(&block)
    }

    /// The bytes equal to `b`, as a vector mask.
    #[inline(always)]
    fn equal(self, b: u8) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_cmpeq_epi8(self.0, _mm_set1_epi8(b as i8)) }
    }

    /// The control characters (below U+0020), as a vector mask.
    #[inline(always)]
    fn control(self) -> __m128i {
        // SAFETY: SSE2 is part of the x86-64 baseline. Unsigned
        // `x <= 0x1f`: the larger of `x` and 0x1f is 0x1f.
        unsafe {
            let limit = _mm_set1_epi8(0x1f);
            _mm_cmpeq_epi8(_mm_max_epu8(self.0, limit), limit)
        }
    }

    /// The control characters of the block.
    #[inline(always)]
    pub(crate) fn controls(self) -> u32 {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_movemask_epi8(self.control()) as u32 }
    }

    /// The backslashes of the block.
    #[inline(always)]
    pub(crate) fn backslashes(self) -> u32 {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_movemask_epi8(self.equal(b'\\')) as u32 }
    }

    /// The bytes a JSON string literal escapes: `"`, `\\` and control
    /// characters, and with `non_ascii` every byte that is not ASCII.
    #[inline(always)]
    pub(crate) fn escapes(self, non_ascii: bool) -> u32 {
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe {
            let marks = _mm_or_si128(
                _mm_or_si128(self.equal(b'"'), self.equal(b'\\')),
                self.control(),
            );
            let escapes = _mm_movemask_epi8(marks) as u32;
            if non_ascii {
                // The high bit of each byte: not ASCII.
                escapes | _mm_movemask_epi8(self.0) as u32
            } else {
                escapes
            }
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::Block;

    /// The bit of each byte that is of the class, as a scalar loop finds
    /// them.
    fn mask(block: &[u8; 16], class: impl Fn(u8) -> bool) -> u32 {
        (0..16).filter(|&i| class(block[i])).map(|i| 1 << i).sum()
    }

    /// Every class of every byte value, at every position of a block, as a
    /// byte-by-byte test gives it.
    #[test]
    fn classes_are_the_bytes_of_the_class() {
        for v in 0..=255u8 {
            for at in 0..16 {
                let mut block = [b'a'; 16];
                block[at] = v;
                block[(at + 7) % 16] = v.wrapping_add(1);
                let b = Block::load(&block);
                assert_eq!(b.controls(), mask(&block, |x| x < 0x20), "{v} at {at}");
                assert_eq!(b.backslashes(), mask(&block, |x| x == b'\\'), "{v} at {at}");
                let escaped = |x: u8| x < 0x20 || x == b'"' || x == b'\\';
                assert_eq!(b.escapes(false), mask(&block, escaped), "{v} at {at}");
                assert_eq!(
                    b.escapes(true),
                    mask(&block, |x| escaped(x) || x >= 0x80),
                    "{v} at {at}"
                );
            }
        }
    }

    /// A short text's block holds its bytes and then spaces; sixteen bytes
    /// or more are a block of their own.
    #[test]
    fn padded_and_first_blocks() {
        for n in 0..16 {
            let rest = vec![b'\\'; n];
            assert_eq!(Block::padded(&rest).backslashes(), (1u32 << n) - 1);
            assert_eq!(Block::padded(&rest).escapes(true), (1u32 << n) - 1);
            assert!(Block::first(&rest).is_none());
        }
        let text = *b"\"0123456789abcde\\";
        let b = Block::first(&text).map(|b| b.escapes(false));
        assert_eq!(b, Some(1));
    }
}
