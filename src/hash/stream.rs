//! A SHA-256 stream whose state the crate holds (the chaining words, the
//! bytes of the unfinished block, the length), so that several streams
//! that end with the same bytes can be finished together: each one's copy
//! of those bytes compressed in lockstep with the others'
//! ([`super::lanes`]).

use sha2::block_api::compress256;

use super::lanes::{LANES, compress_lanes};

/// SHA-256's initial state (FIPS 180-4, 5.3.3).
const H0: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// A SHA-256 stream fed piece by piece; a clone goes on from where the
/// original stands.
#[derive(Clone)]
pub(crate) struct Sha256Stream {
    h: [u32; 8],
    /// The bytes fed since the last whole block (`filled` of them).
    block: [u8; 64],
    filled: usize,
    /// Every byte fed.
    len: u64,
}

impl Default for Sha256Stream {
    fn default() -> Self {
        Sha256Stream {
            h: H0,
            block: [0; 64],
            filled: 0,
            len: 0,
        }
    }
}

impl Sha256Stream {
    /// Feeds `data`.
    pub(crate) fn update(&mut self, mut data: &[u8]) {
        self.len = self.len.wrapping_add(data.len() as u64);
        if self.filled > 0 {
            let take = (64 - self.filled).min(data.len());
            self.block[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled < 64 {
                return;
            }
            compress256(&mut self.h, std::slice::from_ref(&self.block));
            self.filled = 0;
        }
        let (blocks, rest) = data.as_chunks::<64>();
        if !blocks.is_empty() {
            compress256(&mut self.h, blocks);
        }
        self.block[..rest.len()].copy_from_slice(rest);
        self.filled = rest.len();
    }

    /// How many bytes were fed.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The digest of everything fed.
    pub(crate) fn finish(mut self) -> [u8; 32] {
        let bits = self.len.wrapping_mul(8);
        // `0x80`, zeros up to 56 bytes into a block, the length in bits.
        let mut pad = [0u8; 72];
        pad[0] = 0x80;
        let zeros = (119 - self.filled) % 64;
        pad[1 + zeros..9 + zeros].copy_from_slice(&bits.to_be_bytes());
        let len = self.len;
        self.update(&pad[..9 + zeros]);
        self.len = len;
        debug_assert_eq!(self.filled, 0);
        let mut out = [0u8; 32];
        for (o, w) in out.chunks_exact_mut(4).zip(self.h) {
            o.copy_from_slice(&w.to_be_bytes());
        }
        out
    }

    /// The digest of everything fed followed by `tail`, without changing
    /// the stream.
    pub(crate) fn finish_with(&self, tail: &[u8]) -> [u8; 32] {
        let mut s = self.clone();
        s.update(tail);
        s.finish()
    }

    /// [`Sha256Stream::finish_with`] of each of `streams` with the same `tail`,
    /// in order: [`LANES`] at a time in lockstep, where the tail is long
    /// enough for it to pay.
    pub(crate) fn finish_many_with(streams: &[&Sha256Stream], tail: &[u8]) -> Vec<[u8; 32]> {
        Sha256Stream::finish_many_by(streams, tail, Kernel::Detected)
    }

    /// [`Sha256Stream::finish_many_with`] by a given kernel.
    fn finish_many_by(streams: &[&Sha256Stream], tail: &[u8], kernel: Kernel) -> Vec<[u8; 32]> {
        let mut out = Vec::with_capacity(streams.len());
        // Below two blocks of tail, one at a time.
        if tail.len() < 128 {
            out.extend(streams.iter().map(|s| s.finish_with(tail)));
            return out;
        }
        let mut groups = streams.chunks_exact(LANES);
        for group in groups.by_ref() {
            out.extend(finish_lanes::<LANES>(group, tail, kernel));
        }
        out.extend(groups.remainder().iter().map(|s| s.finish_with(tail)));
        out
    }
}

/// Which lane compression [`finish_lanes`] runs: the one this CPU runs
/// best, or the portable one (for tests).
#[derive(Clone, Copy)]
enum Kernel {
    Detected,
    #[cfg(test)]
    Portable,
}

impl Kernel {
    fn compress<const N: usize>(self, states: &mut [[u32; 8]; N], blocks: [&[[u8; 64]]; N]) {
        match self {
            Kernel::Detected => compress_lanes(states, blocks),
            #[cfg(test)]
            Kernel::Portable => super::lanes::compress_portable(states, blocks),
        }
    }
}

/// `N` streams (`streams.len()`) finished with the same `tail` (at least
/// 64 bytes): each one's unfinished block completed from the tail, then
/// the tail's whole blocks after it, as many as every lane has, in
/// lockstep; the rest of each alone.
fn finish_lanes<const N: usize>(
    streams: &[&Sha256Stream],
    tail: &[u8],
    kernel: Kernel,
) -> [[u8; 32]; N] {
    let streams: [&Sha256Stream; N] = std::array::from_fn(|l| streams[l]);
    let mut h: [[u32; 8]; N] = std::array::from_fn(|l| streams[l].h);
    let first: [[u8; 64]; N] = std::array::from_fn(|l| {
        let s = streams[l];
        let mut b = s.block;
        b[s.filled..].copy_from_slice(&tail[..64 - s.filled]);
        b
    });
    kernel.compress(
        &mut h,
        std::array::from_fn(|l| std::slice::from_ref(&first[l])),
    );
    let rest: [(&[[u8; 64]], &[u8]); N] =
        std::array::from_fn(|l| tail[64 - streams[l].filled..].as_chunks::<64>());
    let common = rest.iter().map(|r| r.0.len()).min().unwrap_or(0);
    kernel.compress(&mut h, std::array::from_fn(|l| &rest[l].0[..common]));
    std::array::from_fn(|l| {
        let (blocks, partial) = rest[l];
        let mut s = Sha256Stream {
            h: h[l],
            block: [0; 64],
            filled: 0,
            len: 0,
        };
        s.update(blocks[common..].as_flattened());
        s.update(partial);
        s.len = streams[l].len.wrapping_add(tail.len() as u64);
        s.finish()
    })
}

#[cfg(test)]
mod tests {
    use super::super::lanes::compress_portable;
    use super::*;
    use sha2::{Digest, Sha256};

    /// Bytes that differ from one position and one seed to the next.
    fn bytes(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    fn reference(parts: &[&[u8]]) -> [u8; 32] {
        let mut s = Sha256::new();
        for p in parts {
            s.update(p);
        }
        s.finalize().into()
    }

    #[test]
    fn one_stream_matches_sha2_at_every_block_boundary() {
        for n in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000] {
            let data = bytes(n as u64, n);
            // Fed whole, and fed in pieces that straddle the blocks.
            let mut whole = Sha256Stream::default();
            whole.update(&data);
            assert_eq!(whole.clone().finish(), reference(&[&data]), "n {n}");
            let mut pieces = Sha256Stream::default();
            for piece in data.chunks(7) {
                pieces.update(piece);
            }
            assert_eq!(pieces.finish(), reference(&[&data]), "n {n} in pieces");
            assert_eq!(whole.finish_with(b"tail"), reference(&[&data, b"tail"]));
        }
    }

    /// Streams of every unfinished-block length (0 to 63 bytes beyond
    /// whole blocks) finished with tails of lengths about every boundary,
    /// in groups of four and a remainder, by the kernel this CPU runs and
    /// by the portable one.
    #[test]
    fn many_streams_finish_as_each_alone() {
        let kernels = [
            ("detected", Kernel::Detected),
            ("portable", Kernel::Portable),
        ];
        let heads: Vec<Vec<u8>> = (0..71)
            .map(|k| bytes(k, 64 * (k as usize % 3) + k as usize % 64))
            .collect();
        for tail_len in [
            0, 1, 63, 64, 127, 128, 129, 191, 192, 200, 1000, 4096, 30_001,
        ] {
            let tail = bytes(1000 + tail_len as u64, tail_len);
            let streams: Vec<Sha256Stream> = heads
                .iter()
                .map(|h| {
                    let mut s = Sha256Stream::default();
                    s.update(h);
                    s
                })
                .collect();
            let refs: Vec<&Sha256Stream> = streams.iter().collect();
            let want: Vec<[u8; 32]> = heads.iter().map(|h| reference(&[h, &tail])).collect();
            for (name, kernel) in kernels {
                let got = Sha256Stream::finish_many_by(&refs, &tail, kernel);
                assert_eq!(got, want, "tail {tail_len}, {name}");
            }
            assert_eq!(Sha256Stream::finish_many_with(&refs, &tail), want);
        }
    }

    /// Both kernels on `N` lanes of nine blocks each, from states that
    /// differ.
    fn kernels_agree<const N: usize>() {
        let blocks: Vec<Vec<[u8; 64]>> = (0..N as u64)
            .map(|l| bytes(l, 64 * 9).as_chunks::<64>().0.to_vec())
            .collect();
        let start: [[u32; 8]; N] = std::array::from_fn(|l| {
            let mut s = H0;
            s[l % 8] ^= 0xdead_beef;
            s
        });
        let (mut a, mut b) = (start, start);
        compress_lanes(&mut a, std::array::from_fn(|l| blocks[l].as_slice()));
        compress_portable(&mut b, std::array::from_fn(|l| blocks[l].as_slice()));
        assert_eq!(a, b, "{N} lanes");
        assert_ne!(a, start);
    }

    #[test]
    fn the_detected_kernel_matches_the_portable_one() {
        kernels_agree::<1>();
        kernels_agree::<2>();
        kernels_agree::<3>();
        kernels_agree::<4>();
    }
}
