//! A small seeded generator (SplitMix64) and the distributions the session generator draws from.
//!
//! Written here rather than taken from `rand` so a seed produces the same sessions on every platform
//! and every version of this crate's dependencies.

/// SplitMix64: fast, full-period, and stable across platforms.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator for `seed`; equal seeds give equal streams.
    pub fn new(seed: u64) -> Self {
        Self {
            state: seed ^ 0x5851_f42d_4c95_7f2d,
        }
    }

    /// A generator derived from this one's seed and `stream`, independent of how far this one advanced.
    pub fn fork(seed: u64, stream: u64) -> Self {
        let mut base = Self::new(seed);
        base.state = base
            .state
            .wrapping_add(stream.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        base.next_u64();
        base
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[0, bound)`; `0` when `bound` is `0`.
    pub fn below(&mut self, bound: usize) -> usize {
        if bound == 0 {
            return 0;
        }
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    /// Uniform in `[low, high]`.
    pub fn range(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high.saturating_sub(low) + 1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One element of a non-empty slice (the first for an empty one is impossible: callers pass
    /// constant tables).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }

    /// Pareto(`minimum`, `alpha`) capped at `cap`: the heavy tail of tool outputs.
    pub fn pareto(&mut self, minimum: f64, alpha: f64, cap: usize) -> usize {
        let u = 1.0 - self.unit();
        let value = minimum / u.powf(1.0 / alpha);
        if value.is_finite() {
            (value as usize).min(cap)
        } else {
            cap
        }
    }

    /// Log-uniform in `[low, high]`: session sizes in a directory.
    pub fn log_uniform(&mut self, low: usize, high: usize) -> usize {
        let (low_f, high_f) = ((low.max(1)) as f64, (high.max(low).max(1)) as f64);
        let value = (low_f.ln() + self.unit() * (high_f.ln() - low_f.ln())).exp();
        (value as usize).clamp(low, high.max(low))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_seeds_give_equal_streams_and_bounds_hold() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
            assert!(a.below(10) < 10);
            b.below(10);
            let p = a.pareto(100.0, 1.2, 5000);
            assert!((100..=5000).contains(&p));
            b.pareto(100.0, 1.2, 5000);
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }
}
