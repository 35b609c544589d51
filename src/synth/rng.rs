//! A small seeded PRNG (xoshiro256** seeded through splitmix64) and the
//! distributions the generator draws from.
//!
//! Everything here uses integer arithmetic and IEEE basic operations only
//! (`+ - * /`, `floor`, bit construction of powers of two), never `ln`,
//! `exp` or `cos` from the platform's libm, so that a seed gives the same
//! bytes on every machine.

/// splitmix64: the recommended seeder for xoshiro, also used to derive
/// independent per-conversation seeds from the store seed.
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Mixes a seed with a stream number (conversation index, sub-agent number)
/// into an independent seed.
pub(crate) fn derive(seed: u64, stream: u64) -> u64 {
    let mut s = seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03);
    splitmix64(&mut s);
    splitmix64(&mut s)
}

/// xoshiro256** 1.0 (Blackman & Vigna).
#[derive(Clone, Debug)]
pub(crate) struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        let mut sm = seed;
        let mut s = [0u64; 4];
        for x in &mut s {
            *x = splitmix64(&mut sm);
        }
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..n` (`0` when `n == 0`), by Lemire's multiply-shift
    /// (the bias for the small ranges used here is far below 2^-40).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `lo..=hi` (`lo` when `hi <= lo`). Always one draw, so
    /// that the bounds never shift the stream.
    pub(crate) fn range(&mut self, lo: usize, hi: usize) -> usize {
        let x = self.next_u64();
        if hi <= lo {
            return lo;
        }
        lo + ((u128::from(x) * (hi - lo + 1) as u128) >> 64) as usize
    }

    /// Uniform in `[0, 1)` with 53 bits.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One element of a non-empty slice.
    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        let i = self.below(items.len());
        items[i.min(items.len().saturating_sub(1))]
    }

    /// An index drawn from integer weights.
    pub(crate) fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        if total == 0 {
            return 0;
        }
        let mut x = ((u128::from(self.next_u64()) * u128::from(total)) >> 64) as u64;
        for (i, &w) in weights.iter().enumerate() {
            if x < u64::from(w) {
                return i;
            }
            x -= u64::from(w);
        }
        weights.len() - 1
    }

    /// An approximately standard normal deviate: the sum of four uniforms,
    /// rescaled to unit variance (tails end at ±3.46).
    pub(crate) fn normalish(&mut self) -> f64 {
        let s = self.unit() + self.unit() + self.unit() + self.unit();
        (s - 2.0) * 1.732_050_807_568_877_2
    }

    /// A log-normal-like length: `median * 2^(spread * z)`, rounded, at
    /// least `min` and at most `max`. `spread` is in doublings per standard
    /// deviation.
    pub(crate) fn length(&mut self, median: f64, spread: f64, min: usize, max: usize) -> usize {
        let z = self.normalish();
        let v = median * exp2(spread * z);
        let v = if v.is_finite() { v } else { median };
        (v.round().max(0.0) as usize).clamp(min, max.max(min))
    }
}

/// `2^x` from basic IEEE operations only (the degree-5 Taylor polynomial
/// of `e^(f ln 2)` for the fraction `f` in [-0.5, 0.5]; relative error
/// below 3e-6), deterministic on every platform.
pub(crate) fn exp2(x: f64) -> f64 {
    let x = x.clamp(-60.0, 60.0);
    let i = (x + 0.5).floor();
    let f = x - i;
    let p = 1.0
        + f * (std::f64::consts::LN_2
            + f * (0.240_226_506_959_100_7
                + f * (0.055_504_108_664_821_6
                    + f * (0.009_618_129_107_628_477 + f * 0.001_333_355_814_642_844))));
    // Between 2^-60 and 2^60 the exponent field is a plain biased integer.
    let bits = ((i as i64 + 1023) as u64) << 52;
    p * f64::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoshiro_is_stable() {
        // Pin the stream so that an accidental change to the PRNG (which
        // would change every generated store) is noticed.
        let mut r = Rng::new(0);
        let a: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        let mut r2 = Rng::new(0);
        let b: Vec<u64> = (0..3).map(|_| r2.next_u64()).collect();
        assert_eq!(a, b);
        assert_ne!(a[0], a[1]);
        let mut r3 = Rng::new(1);
        assert_ne!(r3.next_u64(), a[0]);
    }

    #[test]
    fn exp2_is_accurate() {
        for k in -40..=40 {
            let x = f64::from(k) * 0.37;
            let want = 2f64.powf(x);
            let got = exp2(x);
            assert!(((got - want) / want).abs() < 1e-5, "{x}: {got} vs {want}");
        }
    }

    #[test]
    fn below_and_weighted_stay_in_range() {
        let mut r = Rng::new(7);
        for n in 1..50 {
            assert!(r.below(n) < n);
        }
        assert_eq!(r.below(0), 0);
        let mut counts = [0usize; 3];
        for _ in 0..30_000 {
            counts[r.weighted(&[1, 0, 3])] += 1;
        }
        assert_eq!(counts[1], 0);
        assert!(counts[2] > counts[0] * 2);
    }

    #[test]
    fn length_median_is_close() {
        let mut r = Rng::new(3);
        let mut v: Vec<usize> = (0..20_001)
            .map(|_| r.length(100.0, 1.0, 1, 100_000))
            .collect();
        v.sort_unstable();
        let med = v[10_000];
        assert!((90..=110).contains(&med), "median {med}");
    }
}
