//! The number of code points of a text (Python's `len` of a `str`), as
//! `str::chars().count()` gives it, counted sixteen bytes at a time: the
//! view's truncation limits and the Parquet export's `text_length` columns
//! measure texts with it.

/// The number of chars of `s`, as `s.chars().count()` gives it: its bytes
/// that do not continue a char (UTF-8's continuation bytes are
/// `0x80..=0xBF`), counted sixteen at a time with SSE2 on x86-64.
pub(crate) fn char_count(s: &str) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpgt_epi8, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_sad_epu8,
            _mm_set1_epi8, _mm_setzero_si128, _mm_sub_epi8, _mm_unpackhi_epi64,
        };
        let bytes = s.as_bytes();
        let (whole, tail) = bytes.split_at(bytes.len() / 64 * 64);
        let mut n = 0usize;
        // SAFETY: SSE2 is part of the x86-64 baseline; each load reads 16
        // bytes of a chunk of `bytes` (`chunks_exact` gives 64 or 16).
        unsafe {
            let zero = _mm_setzero_si128();
            // A byte that starts a char is, as a signed byte, above -65
            // (0xBF, the last continuation byte): 0 - -1 per start.
            let limit = _mm_set1_epi8(-65);
            let starts =
                |p: *const u8| -> __m128i { _mm_cmpgt_epi8(_mm_loadu_si128(p.cast()), limit) };
            let sum = |acc: __m128i| -> usize {
                let sums = _mm_sad_epu8(acc, zero);
                let high = _mm_unpackhi_epi64(sums, sums);
                (_mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(high)) as usize
            };
            // A byte lane counts at most 4 a 64-byte chunk: the lanes are
            // summed every 63 chunks, before any passes 255.
            for group in whole.chunks(64 * 63) {
                let mut acc = zero;
                for q in group.chunks_exact(64) {
                    let p = q.as_ptr();
                    acc = _mm_sub_epi8(acc, starts(p));
                    acc = _mm_sub_epi8(acc, starts(p.add(16)));
                    acc = _mm_sub_epi8(acc, starts(p.add(32)));
                    acc = _mm_sub_epi8(acc, starts(p.add(48)));
                }
                n += sum(acc);
            }
            // What is left: fewer than 64 bytes.
            let mut acc = zero;
            let mut blocks = tail.chunks_exact(16);
            for b in blocks.by_ref() {
                acc = _mm_sub_epi8(acc, starts(b.as_ptr()));
            }
            n += sum(acc);
            n + blocks
                .remainder()
                .iter()
                .filter(|&&b| (b as i8) >= -64)
                .count()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        s.chars().count()
    }
}

#[cfg(test)]
mod tests {
    use super::char_count;

    /// `char_count` counts as `chars().count()` does: texts of one to four
    /// byte chars, of every length around the 16- and 64-byte blocks and
    /// past the 63 blocks summed at once.
    #[test]
    fn char_count_is_chars_count() {
        let alphabet = [
            'a', 'é', '€', '😀', '\u{7f}', '\u{80}', '\u{7ff}', '\u{ffff}',
        ];
        let mut texts = vec![String::new()];
        for len in (1..200).chain([4031, 4032, 4033, 4100, 9000]) {
            for (k, _) in alphabet.iter().enumerate() {
                let t: String = (0..len)
                    .map(|i| alphabet[(i * 7 + k + i / 3) % alphabet.len()])
                    .collect();
                texts.push(t);
            }
            texts.push("a".repeat(len));
            texts.push("é".repeat(len));
            texts.push("😀".repeat(len));
        }
        for t in &texts {
            assert_eq!(char_count(t), t.chars().count(), "{} bytes", t.len());
        }
    }
}
