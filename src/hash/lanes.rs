//! SHA-256's compression function run on several independent states at
//! once.
//!
//! One SHA-256 stream is bound by the latency of its rounds' dependency
//! chain: each round needs the one before it. Four independent streams are
//! not: with the CPU's SHA extensions, the rounds of one fill the latency
//! of the others'. On x86-64 with those extensions (detected at run time)
//! the states go through one interleaved kernel; anywhere else each is
//! compressed in turn by `sha2`'s compression function. The states after
//! are the same either way.

use sha2::block_api::compress256;

/// How many states are best compressed together: with the SHA extensions,
/// two chains keep the rounds' unit busy, and the states and schedules of
/// more than two no longer fit in the registers (`benches/README.md` has
/// the measurements).
pub(super) const LANES: usize = 2;

/// Compresses `blocks[l]` into `states[l]` for each of `N` lanes, as many
/// blocks in each as the shortest lane has (the callers give each the same
/// number).
pub(super) fn compress_lanes<const N: usize>(states: &mut [[u32; 8]; N], blocks: [&[[u8; 64]]; N]) {
    debug_assert!(blocks.iter().all(|b| b.len() == blocks[0].len()));
    let n = blocks.iter().map(|b| b.len()).min().unwrap_or(0);
    let blocks = blocks.map(|b| &b[..n]);
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        // SAFETY: the CPU has the features the kernel is compiled with.
        unsafe { x86::compress_lanes(states, blocks) };
        return;
    }
    compress_portable(states, blocks);
}

/// [`compress_lanes`] one lane after the other, with `sha2`'s compression.
pub(super) fn compress_portable<const N: usize>(
    states: &mut [[u32; 8]; N],
    blocks: [&[[u8; 64]]; N],
) {
    for (s, b) in states.iter_mut().zip(blocks) {
        compress256(s, b);
    }
}

#[cfg(target_arch = "x86_64")]
pub(super) mod x86 {
    //! The interleaved kernel on the SHA extensions (SHA-NI).

    use std::arch::x86_64::{
        __m128i, _mm_add_epi32, _mm_alignr_epi8, _mm_blend_epi16, _mm_loadu_si128, _mm_set_epi64x,
        _mm_sha256msg1_epu32, _mm_sha256msg2_epu32, _mm_sha256rnds2_epu32, _mm_shuffle_epi8,
        _mm_shuffle_epi32, _mm_storeu_si128,
    };

    /// SHA-256's round constants (FIPS 180-4, 4.2.2).
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];

    /// Whether this CPU runs the kernel.
    pub(in crate::hash) fn available() -> bool {
        std::is_x86_feature_detected!("sha")
            && std::is_x86_feature_detected!("ssse3")
            && std::is_x86_feature_detected!("sse4.1")
    }

    /// A state as the SHA instructions hold it: `(ABEF, CDGH)`.
    #[target_feature(enable = "sha,ssse3,sse4.1")]
    fn load(h: &[u32; 8]) -> (__m128i, __m128i) {
        // SAFETY: `h` is 32 bytes; the loads are unaligned.
        let (abcd, efgh) = unsafe {
            (
                _mm_loadu_si128(h.as_ptr().cast()),
                _mm_loadu_si128(h.as_ptr().add(4).cast()),
            )
        };
        let cdab = _mm_shuffle_epi32(abcd, 0xB1);
        let efgh = _mm_shuffle_epi32(efgh, 0x1B);
        (
            _mm_alignr_epi8(cdab, efgh, 8),
            _mm_blend_epi16(efgh, cdab, 0xF0),
        )
    }

    /// The words `(A..H)` of a state held as `(ABEF, CDGH)`.
    #[target_feature(enable = "sha,ssse3,sse4.1")]
    fn store(abef: __m128i, cdgh: __m128i, h: &mut [u32; 8]) {
        let feba = _mm_shuffle_epi32(abef, 0x1B);
        let dchg = _mm_shuffle_epi32(cdgh, 0xB1);
        let abcd = _mm_blend_epi16(feba, dchg, 0xF0);
        let efgh = _mm_alignr_epi8(dchg, feba, 8);
        // SAFETY: `h` is 32 bytes; the stores are unaligned.
        unsafe {
            _mm_storeu_si128(h.as_mut_ptr().cast(), abcd);
            _mm_storeu_si128(h.as_mut_ptr().add(4).cast(), efgh);
        }
    }

    /// Rounds `16 r + 4 j` to `16 r + 4 j + 3` of every lane; from the
    /// second sixteen on, the group's schedule words first (into the
    /// ring's slot `j`, which held the words sixteen rounds before).
    #[target_feature(enable = "sha,ssse3,sse4.1")]
    #[inline]
    fn round4<const N: usize>(
        abef: &mut [__m128i; N],
        cdgh: &mut [__m128i; N],
        w: &mut [[__m128i; 4]; N],
        r: usize,
        j: usize,
    ) {
        let g = r * 4 + j;
        // SAFETY: `g * 4 + 4 <= 64`; the load is unaligned.
        let k = unsafe { _mm_loadu_si128(K.as_ptr().add(g * 4).cast()) };
        for l in 0..N {
            let ring = &mut w[l];
            let x = if r == 0 {
                ring[j]
            } else {
                // W[t-16..] + σ0(W[t-15..]) + W[t-7..], then σ1 of the two
                // words before each.
                let t = _mm_sha256msg1_epu32(ring[j], ring[(j + 1) % 4]);
                let t = _mm_add_epi32(t, _mm_alignr_epi8(ring[(j + 3) % 4], ring[(j + 2) % 4], 4));
                let x = _mm_sha256msg2_epu32(t, ring[(j + 3) % 4]);
                ring[j] = x;
                x
            };
            let wk = _mm_add_epi32(x, k);
            cdgh[l] = _mm_sha256rnds2_epu32(cdgh[l], abef[l], wk);
            let wk = _mm_shuffle_epi32(wk, 0x0E);
            abef[l] = _mm_sha256rnds2_epu32(abef[l], cdgh[l], wk);
        }
    }

    /// [`super::compress_lanes`] on the SHA extensions: each step of the
    /// rounds and of the message schedule is taken for every lane in turn,
    /// so that the CPU has `N` independent chains in flight.
    ///
    /// # Safety
    /// The CPU must have the SHA extensions, SSSE3 and SSE4.1
    /// ([`available`]).
    #[target_feature(enable = "sha,ssse3,sse4.1")]
    pub(in crate::hash) unsafe fn compress_lanes<const N: usize>(
        states: &mut [[u32; 8]; N],
        blocks: [&[[u8; 64]]; N],
    ) {
        // Big-endian words from the message's bytes.
        let bswap = _mm_set_epi64x(0x0c0d_0e0f_0809_0a0b, 0x0405_0607_0001_0203);
        let n = blocks.iter().map(|b| b.len()).min().unwrap_or(0);
        let mut abef = [bswap; N];
        let mut cdgh = [bswap; N];
        for l in 0..N {
            (abef[l], cdgh[l]) = load(&states[l]);
        }
        // The lanes' blocks are taken in lockstep, by their index.
        #[allow(clippy::needless_range_loop)]
        for i in 0..n {
            let (abef0, cdgh0) = (abef, cdgh);
            // Each lane's last sixteen schedule words, four to a vector:
            // the words of rounds `16 r + 4 j` on at slot `j`.
            let mut w = [[bswap; 4]; N];
            for l in 0..N {
                let block = &blocks[l][i];
                for (j, word) in w[l].iter_mut().enumerate() {
                    // SAFETY: `j * 16 + 16 <= 64`; the load is unaligned.
                    let raw = unsafe { _mm_loadu_si128(block.as_ptr().add(j * 16).cast()) };
                    *word = _mm_shuffle_epi8(raw, bswap);
                }
            }
            for r in 0..4 {
                round4(&mut abef, &mut cdgh, &mut w, r, 0);
                round4(&mut abef, &mut cdgh, &mut w, r, 1);
                round4(&mut abef, &mut cdgh, &mut w, r, 2);
                round4(&mut abef, &mut cdgh, &mut w, r, 3);
            }
            for l in 0..N {
                abef[l] = _mm_add_epi32(abef[l], abef0[l]);
                cdgh[l] = _mm_add_epi32(cdgh[l], cdgh0[l]);
            }
        }
        for l in 0..N {
            store(abef[l], cdgh[l], &mut states[l]);
        }
    }
}
