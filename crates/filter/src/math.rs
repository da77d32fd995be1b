//! Bloom filter sizing math: each formula is one small function that states it and its source.
//!
//! Notation, as in seeds 000–004: `n` items, `m` bits, `k` hash functions (bit positions per key),
//! `p` the target false-positive probability (fpp). Every function here is pure and cheap; the
//! filters call them when they are built and when they report on themselves.

use crate::error::{Error, Result};

/// Bits in one cache-line block of [`crate::BlockedBloomFilter`]: 64 bytes, the x86-64 and
/// ARMv8 cache-line size, as in RocksDB's FastLocalBloom and (×2) Parquet's split-block filter.
pub const BLOCK_BITS: u64 = 512;

/// The largest filter this crate builds: 2^40 bits = 128 GiB. Far beyond any machine this runs
/// on; it exists so that absurd parameters fail with a clear error instead of an allocation abort.
pub const MAX_NUM_BITS: u64 = 1 << 40;

/// The largest number of hash functions (bit probes per key) accepted. At k = 64 the optimal
/// classic filter already has p = 2^-64, below any rate a caller can observe.
pub const MAX_NUM_HASHES: u32 = 64;

/// ln 2, written out for the formulas below.
const LN_2: f64 = std::f64::consts::LN_2;

/// Checks that `fpp` is a usable target false-positive rate: finite and strictly inside (0, 1).
pub fn validate_fpp(fpp: f64) -> Result<()> {
    if fpp.is_finite() && fpp > 0.0 && fpp < 1.0 {
        Ok(())
    } else {
        Err(Error::invalid(
            "fpp",
            format!("{fpp:e}"),
            "the false-positive rate must be a number strictly between 0 and 1, e.g. 0.01 for 1 %",
        ))
    }
}

/// Checks that `expected_items` is at least 1.
pub fn validate_items(expected_items: u64) -> Result<()> {
    if expected_items == 0 {
        return Err(Error::invalid(
            "expected_items",
            0,
            "a filter must be sized for at least 1 item",
        ));
    }
    Ok(())
}

/// Checks a bit count against [`MAX_NUM_BITS`] (and that it is non-zero).
pub fn validate_num_bits(num_bits: u64) -> Result<()> {
    if num_bits == 0 || num_bits > MAX_NUM_BITS {
        return Err(Error::invalid(
            "num_bits",
            num_bits,
            format!("the bit array must hold between 1 and {MAX_NUM_BITS} bits (128 GiB); lower the item count or raise the fpp"),
        ));
    }
    Ok(())
}

/// A zeroed vector of `len` elements, or [`Error::OutOfMemory`] instead of an abort when the
/// memory cannot be had (an absurd size, a container's memory limit).
pub fn try_zeroed<T: Clone + Default>(len: usize) -> Result<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| Error::OutOfMemory {
        bytes: (len as u64).saturating_mul(std::mem::size_of::<T>() as u64),
    })?;
    out.resize(len, T::default());
    Ok(out)
}

/// Checks a hash count against `1..=`[`MAX_NUM_HASHES`].
pub fn validate_num_hashes(num_hashes: u32) -> Result<()> {
    if num_hashes == 0 || num_hashes > MAX_NUM_HASHES {
        return Err(Error::invalid(
            "num_hashes",
            num_hashes,
            format!("k must be between 1 and {MAX_NUM_HASHES}"),
        ));
    }
    Ok(())
}

/// Optimal size of a classic filter: `m = ceil(−n·ln p / (ln 2)²)`.
///
/// Source: the textbook optimum (Broder & Mitzenmacher, "Network Applications of Bloom Filters",
/// 2004, §2.1), as in seeds 000 and 004 (Guava's `optimalNumOfBits`, which truncates; we round up
/// so the promise `fpp ≤ p` is kept). n = 10,327, p = 0.01 gives 98,985 bits.
pub fn optimal_num_bits(expected_items: u64, fpp: f64) -> Result<u64> {
    validate_items(expected_items)?;
    validate_fpp(fpp)?;
    let bits = (-(expected_items as f64) * fpp.ln() / (LN_2 * LN_2)).ceil();
    // `bits` is finite and positive here (n ≥ 1, 0 < p < 1); the comparison rejects values too
    // large for the cast below to be exact.
    if bits > MAX_NUM_BITS as f64 {
        return Err(Error::TooLarge {
            items: expected_items,
            fpp,
            bits,
        });
    }
    Ok(bits as u64)
}

/// The lowest false-positive rate a classic (or counting) filter can be sized for: at the
/// optimal size the rate is `2^−k` (Broder & Mitzenmacher 2004, §2.1: `(1/2)^k` at
/// `k = (m/n)·ln 2`), and k is at most [`MAX_NUM_HASHES`], so `2^−64 ≈ 5.4e-20`.
pub fn lowest_classic_fpp() -> f64 {
    0.5f64.powi(MAX_NUM_HASHES as i32)
}

/// Refuses a rate below [`lowest_classic_fpp`] for `kind` (a classic or counting filter): built,
/// it would report a target it cannot meet.
pub fn validate_classic_fpp(fpp: f64, kind: &str) -> Result<()> {
    validate_fpp(fpp)?;
    let lowest = lowest_classic_fpp();
    if fpp < lowest {
        return Err(Error::invalid(
            "fpp",
            format!("{fpp:e}"),
            format!(
                "a {kind} filter's rate cannot go below {lowest:.1e} per probe (2^-{MAX_NUM_HASHES}: it has \
                 at most {MAX_NUM_HASHES} hash functions); raise the rate"
            ),
        ));
    }
    Ok(())
}

/// Optimal number of hash functions for `m` bits and `n` items: `k = max(1, round((m/n)·ln 2))`.
///
/// Source: minimising `(1 − e^{−kn/m})^k` over k (Broder & Mitzenmacher 2004, §2.1; seed 002 derives
/// it); the rounding is Guava's `optimalNumOfHashFunctions` quoted in seed 004. Capped at
/// [`MAX_NUM_HASHES`].
pub fn optimal_num_hashes(expected_items: u64, num_bits: u64) -> u32 {
    let k = (num_bits as f64 / expected_items.max(1) as f64 * LN_2).round();
    k.clamp(1.0, MAX_NUM_HASHES as f64) as u32
}

/// False-positive rate of a classic filter with `m` bits, `n` items and `k` hashes:
/// `(1 − (1 − 1/m)^{kn})^k`, which is `≈ (1 − e^{−kn/m})^k` for large m.
///
/// Source: Bloom 1970, in the form of seed 001 ("错误率估计") and seed 003 eq. (1). The exact inner
/// term is kept (computed through `ln_1p`) because [`blocked_fpp`] applies it to 512-bit blocks,
/// where the exponential approximation is visibly off.
pub fn classic_fpp(num_bits: u64, items: f64, num_hashes: u32) -> f64 {
    if num_bits == 0 {
        return 1.0;
    }
    let k = f64::from(num_hashes);
    let zero_probability = (k * items * (-1.0 / num_bits as f64).ln_1p()).exp();
    (1.0 - zero_probability).powf(k)
}

/// False-positive rate of a blocked filter: `Σ_{i≥0} Poisson(i; λ) · block_fpp(B, i, k)` with
/// block size `B` bits and mean block load `λ = n·B/m`.
///
/// Source: Putze, Sanders & Singler, "Cache-, Hash- and Space-Efficient Bloom Filters" (WEA 2007,
/// §3): keys land in blocks as Poisson(λ) arrivals, and a query is a false positive with the rate
/// of its block at that block's load. Overfull blocks make this worse than [`classic_fpp`] at
/// the same m — the price of one cache miss per query.
///
/// The per-block rate is computed exactly, not with the classic `(1 − (1 − 1/B)^{ki})^k`: a
/// 512-bit block is small enough that the number X of set bits varies noticeably around its mean,
/// and since the rate `E[(X/B)^k]` is convex in X, the classic expression (which is `(E[X]/B)^k`)
/// underestimates it — by 1 % at k = 6 and 10 % at k = 20 (measured at 4·10⁷ queries before this
/// was exact: 1.011 % against a predicted 1.000 %). X follows the occupancy distribution of
/// `k·i` balls thrown into `B` bins, computed by the one-ball recursion
/// `P'(x) = P(x)·x/B + P(x−1)·(B−x+1)/B` while the load grows. The Poisson sum runs to
/// `λ + 12√λ + 40`, past which its tail is below 1e-25.
pub fn blocked_fpp(num_bits: u64, items: f64, num_hashes: u32, block_bits: u64) -> f64 {
    let num_blocks = num_bits / block_bits;
    if num_blocks == 0 {
        return 1.0;
    }
    let lambda = items / num_blocks as f64;
    if !exact_load(lambda) {
        return heavy_block_fpp(block_bits, lambda, num_hashes);
    }
    BlockRates::new(block_bits, num_hashes, poisson_last(lambda)).fpp(lambda, num_hashes)
}

/// The largest mean block load (keys per 512-bit block) whose rate is computed exactly. The
/// exact computation tabulates the occupancy distribution for every load up to
/// `poisson_last``(λ)`, so its cost grows with λ; a bound keeps `plan` and `build` in
/// milliseconds for any n and p. Every target p ≤ 0.98 is met at a load below it (at p = 0.5 the
/// optimum is ~355 keys per block), so sizing is exact wherever it matters.
pub const MAX_EXACT_BLOCK_LOAD: f64 = 2048.0;

/// Whether mean block load `lambda` is computed exactly (see [`MAX_EXACT_BLOCK_LOAD`]).
fn exact_load(lambda: f64) -> bool {
    lambda <= MAX_EXACT_BLOCK_LOAD
}

/// A blocked filter's rate at a mean load beyond [`MAX_EXACT_BLOCK_LOAD`]: the classic formula
/// applied to one block at the mean load, `(1 − (1 − 1/B)^{kλ})^k`. An approximation (it ignores
/// the spread of loads and of set bits, see [`blocked_fpp`]) for filters so overfull that their
/// rate is above 98 %; sizing never relies on it.
fn heavy_block_fpp(block_bits: u64, lambda: f64, num_hashes: u32) -> f64 {
    classic_fpp(block_bits, lambda, num_hashes)
}

/// The last block load the Poisson sum needs for mean load `λ`: `λ + 12√λ + 40`, past which the
/// tail is below 1e-25.
fn poisson_last(lambda: f64) -> u64 {
    (lambda + 12.0 * lambda.sqrt() + 40.0).ceil() as u64
}

/// Exact per-block false-positive rates `r_k(i) = E[(X/B)^k]` for every hash count `k ≤ K` and
/// block load `i ≤ I`, where X is the number of set bits after `k·i` positions are thrown into
/// the block. The occupancy distribution after t throws does not depend on k, so one pass of
/// the recursion up to `t = K·I` yields every `r_k(i)` (read off at `t = k·i`); the sizing
/// search then evaluates [`blocked_fpp`] for many sizes and k without repeating it.
pub struct BlockRates {
    /// `rates[k − 1][i]`.
    rates: Vec<Vec<f64>>,
}

impl BlockRates {
    /// The rates for `block_bits`-bit blocks, `k ≤ max_hashes`, loads `≤ max_load`.
    pub fn new(block_bits: u64, max_hashes: u32, max_load: u64) -> Self {
        let max_hashes = max_hashes.max(1) as u64;
        let mut block = Occupancy::new(block_bits as usize);
        let mut rates = vec![vec![0.0; max_load as usize + 1]; max_hashes as usize];
        for throws in 1..=max_hashes * max_load {
            block.throw();
            for k in 1..=max_hashes {
                if throws % k == 0 && throws / k <= max_load {
                    rates[k as usize - 1][(throws / k) as usize] = block.query_rate(k as u32);
                }
            }
        }
        BlockRates { rates }
    }

    /// The largest hash count tabulated.
    pub fn max_hashes(&self) -> u32 {
        self.rates.len() as u32
    }

    /// Whether the table reaches far enough for mean load `lambda`.
    pub fn covers(&self, lambda: f64) -> bool {
        poisson_last(lambda) < self.rates[0].len() as u64
    }

    /// `Σ_i Poisson(i; λ) · r_k(i)`: the blocked filter's rate at mean load λ with k hashes.
    /// (Callers make sure the table [`BlockRates::covers`] λ and holds k.)
    pub fn fpp(&self, lambda: f64, num_hashes: u32) -> f64 {
        if lambda == 0.0 {
            return 0.0;
        }
        let row = &self.rates[(num_hashes.max(1) as usize - 1).min(self.rates.len() - 1)];
        let last = (poisson_last(lambda) as usize).min(row.len() - 1);
        let mut ln_pmf = -lambda; // ln Poisson(0; λ)
        let mut total = 0.0;
        for (load, rate) in row.iter().enumerate().take(last + 1) {
            if load > 0 {
                ln_pmf += lambda.ln() - (load as f64).ln();
            }
            total += ln_pmf.exp() * rate;
        }
        total.min(1.0)
    }

    /// The hash count minimising the rate at mean load λ, and that rate. The rate is convex in
    /// k (seed 001: "误判率是一个关于Hash Function数目k的凸函数"), so the scan stops at the first
    /// k worse than the best so far.
    pub fn best(&self, lambda: f64) -> (u32, f64) {
        let mut best = (1, self.fpp(lambda, 1));
        for k in 2..=self.max_hashes() {
            let rate = self.fpp(lambda, k);
            if rate >= best.1 {
                break;
            }
            best = (k, rate);
        }
        best
    }
}

/// The distribution of the number of set bits in one block, as balls (bit positions) are thrown
/// into it uniformly at random; only the window of non-negligible probability is kept.
struct Occupancy {
    /// `probability[x]`: P(x bits set).
    probability: Vec<f64>,
    /// The window `low..=high` outside which every probability is zero.
    low: usize,
    high: usize,
}

/// Probabilities below this are dropped from the window: far below anything a rate can show.
const NEGLIGIBLE: f64 = 1e-30;

impl Occupancy {
    fn new(bits: usize) -> Self {
        let mut probability = vec![0.0; bits + 1];
        probability[0] = 1.0;
        Occupancy {
            probability,
            low: 0,
            high: 0,
        }
    }

    /// One more ball: `P'(x) = P(x)·x/B + P(x−1)·(B−x+1)/B`.
    fn throw(&mut self) {
        let bins = (self.probability.len() - 1) as f64;
        let top = (self.high + 1).min(self.probability.len() - 1);
        for x in (self.low..=top).rev() {
            let stay = self.probability[x] * x as f64 / bins;
            let arrive = if x > self.low {
                self.probability[x - 1] * (bins - (x - 1) as f64) / bins
            } else {
                0.0
            };
            self.probability[x] = stay + arrive;
        }
        self.high = top;
        while self.probability[self.low] < NEGLIGIBLE && self.low < self.high {
            self.probability[self.low] = 0.0;
            self.low += 1;
        }
        while self.probability[self.high] < NEGLIGIBLE && self.high > self.low {
            self.probability[self.high] = 0.0;
            self.high -= 1;
        }
    }

    /// `E[(X/B)^k]`: the chance that k independent uniform query positions all hit set bits.
    fn query_rate(&self, num_hashes: u32) -> f64 {
        let bins = (self.probability.len() - 1) as f64;
        (self.low..=self.high)
            .map(|x| self.probability[x] * (x as f64 / bins).powi(num_hashes as i32))
            .sum()
    }
}

/// Hash counts tabulated when searching for the best k: twice the classic optimum for the same
/// bits per key, plus slack, since a blocked filter's best k is at most the classic one.
fn hash_search_limit(bits_per_key: f64) -> u32 {
    ((bits_per_key * LN_2).ceil() as u32 * 2 + 4).min(MAX_NUM_HASHES)
}

/// The hash count that minimises [`blocked_fpp`] for the given size, and that rate.
pub fn best_blocked_hashes(num_bits: u64, items: f64) -> (u32, f64) {
    let blocks = (num_bits / BLOCK_BITS).max(1);
    let lambda = items / blocks as f64;
    let limit = hash_search_limit(num_bits as f64 / items.max(1.0));
    if !exact_load(lambda) {
        // The approximate rate is convex in k too; scan it the same way as `BlockRates::best`.
        let mut best = (1, heavy_block_fpp(BLOCK_BITS, lambda, 1));
        for k in 2..=limit {
            let rate = heavy_block_fpp(BLOCK_BITS, lambda, k);
            if rate >= best.1 {
                break;
            }
            best = (k, rate);
        }
        return best;
    }
    BlockRates::new(BLOCK_BITS, limit, poisson_last(lambda)).best(lambda)
}

/// Size of a blocked filter whose **true** rate ([`blocked_fpp`]) is at most `p`: the smallest
/// number of 512-bit blocks, and the k that minimises the rate at that size.
///
/// Method: the classic optimum is a lower bound, so start there, double until the target is met,
/// then binary-search the block count (the best achievable rate falls as blocks are added). The
/// per-block rates are tabulated once ([`BlockRates`]) for the heaviest load the search can visit.
/// Returns `(num_bits, num_hashes)` with `num_bits` a multiple of [`BLOCK_BITS`].
pub fn blocked_size(expected_items: u64, fpp: f64) -> Result<(u64, u32)> {
    let classic_bits = optimal_num_bits(expected_items, fpp)?;
    let items = expected_items as f64;
    let max_blocks = MAX_NUM_BITS / BLOCK_BITS;
    // Never fewer blocks than keep the load exact: beyond it the rate is only approximated.
    let min_blocks = (items / MAX_EXACT_BLOCK_LOAD).ceil() as u64;
    let start = classic_bits.div_ceil(BLOCK_BITS).max(min_blocks).max(1);
    // The search never visits fewer blocks than half the start (nor a load beyond the exact
    // bound); tabulate once for the heaviest load it can visit. Bounded by
    // `poisson_last(MAX_EXACT_BLOCK_LOAD)` loads whatever n and p are.
    let heaviest = (items / (start / 2).max(1) as f64).min(MAX_EXACT_BLOCK_LOAD);
    let table = BlockRates::new(
        BLOCK_BITS,
        hash_search_limit(classic_bits as f64 / items),
        poisson_last(heaviest),
    );
    let best = |blocks: u64| {
        let lambda = items / blocks as f64;
        if table.covers(lambda) {
            table.best(lambda)
        } else {
            best_blocked_hashes(blocks * BLOCK_BITS, items)
        }
    };
    // A size meets the target only where its rate is computed exactly, so that a returned size
    // keeps the promise `rate ≤ p` (the search stays monotone: more blocks, lower load).
    let meets = |blocks: u64| exact_load(items / blocks as f64) && best(blocks).1 <= fpp;
    let mut high = start;
    while !meets(high) {
        if high >= max_blocks {
            return Err(Error::TooLarge {
                items: expected_items,
                fpp,
                bits: (max_blocks * BLOCK_BITS) as f64,
            });
        }
        high = (high * 2).min(max_blocks);
    }
    // Invariant: `meets(high)`, and every count ≤ `low` fails (or `low` is 0).
    let mut low = (high / 2).max(min_blocks.saturating_sub(1));
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if meets(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    Ok((high * BLOCK_BITS, best(high).0))
}

/// Bits in one block of [`crate::SplitBlockBloomFilter`]: eight 32-bit words, Parquet's
/// split-block filter ("SBBF", `BloomFilter.md` of the Apache Parquet format specification).
pub const SPLIT_BLOCK_BITS: u64 = 256;

/// Words in one split block; a key sets exactly one bit in each, so k is always 8.
pub const SPLIT_WORDS: u32 = 8;

/// Bits in one word of a split block.
pub const SPLIT_WORD_BITS: u32 = 32;

/// The chance that a split block holding `load` keys answers a non-member yes:
/// `(1 − (1 − 1/32)^load)^8`.
///
/// Source: each of the block's eight 32-bit words holds one bit of every key in the block, at a
/// position uniform and independent of the other words' (Parquet's salted multiplies, see
/// [`crate::Split`]); so a word is a one-hash Bloom filter of 32 bits and `load` keys, a query
/// bit in it is set with probability `1 − (1 − 1/32)^load`, and the eight words are
/// independent — the partitioned ("sliced") Bloom filter's rate, Almeida, Baquero, Preguiça &
/// Hutchison, "Scalable Bloom Filters" (IPL 2007), eq. 3, with slices of 32 bits. Unlike
/// [`blocked_fpp`]'s per-block term this is exact as it stands: no occupancy distribution is
/// needed, because the query's bit in a word is independent of how many bits that word has.
/// (The blocked formula with k = 8 in a 256-bit block is *not* this filter's rate: it puts the
/// eight bits anywhere in the block and gives a rate ~4 % lower at 10.5 bits per key.)
pub fn split_block_fpp(load: u64) -> f64 {
    let word_miss = (-1.0 / f64::from(SPLIT_WORD_BITS)).ln_1p(); // ln(1 − 1/32)
    let set = -(word_miss * load as f64).exp_m1(); // 1 − (1 − 1/32)^load
    set.powi(SPLIT_WORDS as i32)
}

/// False-positive rate of a split-block filter of `m` bits after `n` keys:
/// `Σ_{i≥0} Poisson(i; λ) · split_block_fpp(i)` with `λ = n·256/m`.
///
/// Source: keys land in blocks as Poisson(λ) arrivals and a query is a false positive with its
/// block's rate at that block's load — Putze, Sanders & Singler, "Cache-, Hash- and
/// Space-Efficient Bloom Filters" (WEA 2007, §3), as in [`blocked_fpp`] — with the per-block
/// rate of [`split_block_fpp`]. Beyond [`MAX_EXACT_BLOCK_LOAD`] keys per block the mean load's
/// rate stands in (such a filter answers yes to nearly everything).
pub fn split_fpp(num_bits: u64, items: f64) -> f64 {
    let num_blocks = num_bits / SPLIT_BLOCK_BITS;
    if num_blocks == 0 {
        return 1.0;
    }
    let lambda = items / num_blocks as f64;
    if lambda == 0.0 {
        return 0.0;
    }
    if !exact_load(lambda) {
        return split_block_fpp(lambda.round() as u64);
    }
    let mut ln_pmf = -lambda; // ln Poisson(0; λ)
    let mut total = 0.0;
    for load in 0..=poisson_last(lambda) {
        if load > 0 {
            ln_pmf += lambda.ln() - (load as f64).ln();
        }
        total += ln_pmf.exp() * split_block_fpp(load);
    }
    total.min(1.0)
}

/// Size of a split-block filter whose rate ([`split_fpp`]) is at most `p`: the smallest whole
/// number of 512-bit lines (two 256-bit blocks each, so the bits are whole cache lines like the
/// other layouts'), with k = 8.
///
/// Method: the classic optimum is a lower bound (a split filter is a blocked filter with a
/// constrained k), so start there, double until the target is met, then binary-search the line
/// count ([`split_fpp`] falls as lines are added). Returns `(num_bits, 8)`.
pub fn split_size(expected_items: u64, fpp: f64) -> Result<(u64, u32)> {
    let classic_bits = optimal_num_bits(expected_items, fpp)?;
    let items = expected_items as f64;
    let max_lines = MAX_NUM_BITS / BLOCK_BITS;
    let meets = |lines: u64| {
        let bits = lines * BLOCK_BITS;
        exact_load(items / (bits / SPLIT_BLOCK_BITS) as f64) && split_fpp(bits, items) <= fpp
    };
    let mut high = classic_bits.div_ceil(BLOCK_BITS).max(1);
    while !meets(high) {
        if high >= max_lines {
            return Err(Error::TooLarge {
                items: expected_items,
                fpp,
                bits: MAX_NUM_BITS as f64,
            });
        }
        high = (high * 2).min(max_lines);
    }
    // Invariant: `meets(high)`, and `low` fails or is 0.
    let mut low = high / 2;
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if meets(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    Ok((high * BLOCK_BITS, SPLIT_WORDS))
}

/// Estimated number of distinct items in a filter with `ones` set bits out of `m`:
/// `n* = −(m/k)·ln(1 − X/m)`.
///
/// Source: Swamidass & Baldi, "Mathematical correction for fingerprint similarity measures to
/// improve chemical retrieval" (J. Chem. Inf. Model. 2007), eq. 3. Infinite for a full filter.
pub fn estimated_items(num_bits: u64, num_hashes: u32, ones: u64) -> f64 {
    if ones >= num_bits {
        return f64::INFINITY;
    }
    let m = num_bits as f64;
    -(m / f64::from(num_hashes)) * (1.0 - ones as f64 / m).ln()
}

/// Space lower bound of any approximate-membership structure: `log2(1/ε)` bits per key.
///
/// Source: Carter, Floyd, Gill, Markowsky & Wegman, "Exact and approximate membership testers"
/// (STOC 1978); a classic Bloom filter needs `log2(e)` ≈ 1.44 times this.
pub fn information_bound_bits_per_key(fpp: f64) -> f64 {
    -fpp.log2()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dataset_sizing_matches_seed_000() {
        // 10,327 phishing rows of dataset.csv at p = 0.01 (shared/data/README.md).
        assert_eq!(optimal_num_bits(10_327, 0.01).unwrap(), 98_985);
        assert_eq!(optimal_num_hashes(10_327, 98_985), 7);
    }

    #[test]
    fn seed_002_sizing_is_about_114_mib() {
        // Seed 002 prints "≈ 958,505,832 (约958MB)". The formula with ceil gives 958,505,838
        // (−1e8·ln 0.01 / ln²2 = 958,505,837.74); the seed's figure is a hand-rounding slip six
        // bits low, and its "958 MB" confuses bits with bytes: it is 114.26 MiB.
        let m = optimal_num_bits(100_000_000, 0.01).unwrap();
        assert_eq!(m, 958_505_838);
        assert!(m.abs_diff(958_505_832) < 10);
        let mib = m as f64 / 8.0 / 1024.0 / 1024.0;
        assert!((mib - 114.3).abs() < 0.05, "{mib}");
        assert_eq!(optimal_num_hashes(100_000_000, m), 7);
        // Seed 002 verifies its rate: (1 − e^{−7·10^8/9.58·10^8})^7 ≈ 0.0103.
        let rate = classic_fpp(m, 1e8, 7);
        assert!((rate - 0.01003).abs() < 0.0001, "{rate}");
    }

    #[test]
    fn seed_001_table_is_reproduced() {
        // Seed 001's table of (1 − e^{−kn/m})^k for m/n ∈ {10,20,30}, k ∈ {5..8}.
        let printed = [
            (10, [0.00943, 0.00844, 0.00819, 0.00846]),
            (20, [0.00053, 0.000303, 0.000196, 0.00014]),
            (30, [8.53e-05, 3.55e-05, 1.69e-05, 9.01e-06]),
        ];
        for (ratio, row) in printed {
            for (k, want) in (5..=8).zip(row) {
                let got = classic_fpp(ratio * 1_000_000, 1e6, k);
                assert!(
                    (got - want).abs() / want < 0.02,
                    "m/n={ratio} k={k}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn seed_004_hash_counts() {
        // Seed 004's memory table: p = 1e-4 → k = 13, p = 1e-7 → k = 23.
        let m = optimal_num_bits(10_000, 1e-4).unwrap();
        assert_eq!(optimal_num_hashes(10_000, m), 13);
        let m = optimal_num_bits(10_000, 1e-7).unwrap();
        assert_eq!(optimal_num_hashes(10_000, m), 23);
    }

    #[test]
    fn classic_rates_below_two_to_the_minus_64_are_refused() {
        assert!(validate_classic_fpp(1e-19, "classic").is_ok());
        assert!(validate_classic_fpp(1e-20, "classic").is_err());
        // At the lowest rate allowed, the sizing meets it with k = 64.
        let lowest = lowest_classic_fpp();
        let bits = optimal_num_bits(1000, lowest).unwrap();
        let k = optimal_num_hashes(1000, bits);
        assert_eq!(k, MAX_NUM_HASHES);
        assert!(classic_fpp(bits, 1000.0, k) <= lowest * 1.01);
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        for fpp in [0.0, 1.0, 1.5, -0.1, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                optimal_num_bits(10, fpp),
                Err(Error::InvalidParameter { name: "fpp", .. })
            ));
        }
        assert!(matches!(
            optimal_num_bits(0, 0.01),
            Err(Error::InvalidParameter {
                name: "expected_items",
                ..
            })
        ));
        assert!(optimal_num_bits(u64::MAX, 1e-9).is_err());
        assert!(blocked_size(u64::MAX / 2, 1e-9).is_err());
    }

    #[test]
    fn blocked_needs_more_bits_than_classic_and_meets_its_target() {
        for (n, p) in [
            (10_327, 0.01),
            (100_000, 0.001),
            (1_000_000, 0.01),
            (1, 0.5),
        ] {
            let classic = optimal_num_bits(n, p).unwrap();
            let (bits, k) = blocked_size(n, p).unwrap();
            assert_eq!(bits % BLOCK_BITS, 0);
            assert!(bits >= classic, "n={n} p={p}");
            assert!(blocked_fpp(bits, n as f64, k, BLOCK_BITS) <= p);
            // One block fewer must miss the target: the search returns the smallest size.
            if bits > BLOCK_BITS {
                let (_, rate) = best_blocked_hashes(bits - BLOCK_BITS, n as f64);
                assert!(rate > p, "n={n} p={p}");
            }
        }
    }

    #[test]
    fn sizing_answers_for_any_n_and_p_without_large_tables() {
        // `plan -n 1e8 -p 0.999999` must not tabulate 10^8 loads (an 800 MB allocation): every
        // (n, p) is sized from bounded tables, so each call here takes milliseconds.
        for (n, p) in [
            (100_000_000u64, 0.999_999),
            (1u64 << 40, 0.999_999_999),
            (1u64 << 40, 0.5),
            (1_000_000_000, 0.99),
            (1, 1e-300),
            (1, 0.999),
            (7, 0.9),
        ] {
            let started = std::time::Instant::now();
            match blocked_size(n, p) {
                Ok((bits, k)) => {
                    assert!(bits % BLOCK_BITS == 0 && (1..=MAX_NUM_HASHES).contains(&k));
                    // The promise holds wherever the rate is exact.
                    let rate = blocked_fpp(bits, n as f64, k, BLOCK_BITS);
                    assert!(rate <= p, "n={n} p={p}: {rate}");
                }
                Err(error) => {
                    assert!(matches!(error, Error::TooLarge { .. }), "{error:?}");
                    assert!(error.to_string().contains("128 GiB"), "{error}");
                }
            }
            assert!(
                started.elapsed().as_secs_f64() < 2.0,
                "n={n} p={p} took {:?}",
                started.elapsed()
            );
            let _ = best_blocked_hashes(BLOCK_BITS, n as f64);
            let _ = blocked_fpp(BLOCK_BITS, n as f64, 64, BLOCK_BITS);
        }
    }

    #[test]
    fn blocked_at_one_percent_fits_in_eleven_bits_per_key() {
        let (bits, k) = blocked_size(1_000_000, 0.01).unwrap();
        let per_key = bits as f64 / 1e6;
        assert!(per_key < 11.0, "{per_key}");
        assert!((6..=8).contains(&k), "{k}");
    }

    #[test]
    fn per_block_rate_is_exact() {
        // Exact values by inclusion–exclusion over the query's distinct positions,
        // Σ_d P(d distinct of k) · Σ_j (−1)^j C(d,j) (1 − j/B)^{ki}, computed independently in
        // Python; the classic expression gives 0.008328 and 7.949e-5 for these.
        for (k, load, exact) in [
            (6u32, 51u64, 0.008_408_666_280_891_3),
            (20, 25, 8.705_714_957_640_4e-5),
        ] {
            let mut block = Occupancy::new(512);
            for _ in 0..k as u64 * load {
                block.throw();
            }
            let rate = block.query_rate(k);
            assert!(
                (rate - exact).abs() / exact < 1e-6,
                "k={k}: {rate} vs {exact}"
            );
        }
    }

    #[test]
    fn blocked_rate_tends_to_classic_for_huge_blocks() {
        // With 8 192-bit blocks and a heavy load the spread of X is small next to its mean.
        let classic = classic_fpp(1 << 16, 6_000.0, 7);
        let blocked = blocked_fpp(1 << 16, 6_000.0, 7, 1 << 13);
        assert!(
            (classic - blocked).abs() / classic < 0.05,
            "{classic} vs {blocked}"
        );
    }

    #[test]
    fn split_block_rate_matches_an_independent_computation() {
        // (1 − (31/32)^i)^8 and the Poisson sum over loads, computed independently in Python
        // (`sum(exp(-l) * l**i / factorial(i) * (1 - (31/32)**i)**8 for i in range(400))`).
        let exact = (1.0 - (31.0f64 / 32.0).powi(25)).powi(8);
        assert!((split_block_fpp(25) - exact).abs() < 1e-15);
        assert_eq!(split_block_fpp(0), 0.0);
        for (bits_per_key, want) in [(10.0, 0.012_648), (11.0, 0.008_168), (16.0, 0.001_316)] {
            let n = 1_000_000.0;
            let got = split_fpp((n * bits_per_key) as u64, n);
            assert!((got - want).abs() / want < 1e-3, "{bits_per_key}: {got}");
        }
        // The blocked formula with k = 8 in 256-bit blocks is lower (see `split_block_fpp`).
        let (m, n) = (10_500_000u64, 1e6);
        assert!(blocked_fpp(m, n, 8, SPLIT_BLOCK_BITS) < split_fpp(m, n) * 0.97);
    }

    #[test]
    fn split_sizing_is_the_smallest_that_meets_the_target() {
        for (n, p) in [
            (10_327, 0.01),
            (1_000_000, 0.01),
            (100_000, 0.001),
            (1, 0.5),
        ] {
            let (bits, k) = split_size(n, p).unwrap();
            assert_eq!((bits % BLOCK_BITS, k), (0, 8));
            assert!(split_fpp(bits, n as f64) <= p, "n={n} p={p}");
            if bits > BLOCK_BITS {
                assert!(split_fpp(bits - BLOCK_BITS, n as f64) > p, "n={n} p={p}");
            }
        }
        // At 1 %: 10.53 bits per key (the bound asserted is 11).
        let (bits, _) = split_size(10_000_000, 0.01).unwrap();
        let per_key = bits as f64 / 1e7;
        assert!((10.4..11.0).contains(&per_key), "{per_key}");
        assert!(split_size(u64::MAX / 2, 1e-9).is_err());
        for (n, p) in [(1u64 << 40, 0.999_999), (100_000_000, 0.999), (1, 1e-300)] {
            match split_size(n, p) {
                Ok((bits, _)) => assert!(split_fpp(bits, n as f64) <= p),
                Err(error) => assert!(matches!(error, Error::TooLarge { .. })),
            }
        }
    }

    #[test]
    fn swamidass_baldi_inverts_the_fill() {
        let (m, k, n) = (1_000_000u64, 7u32, 50_000.0f64);
        let ones = (m as f64 * (1.0 - (-(k as f64) * n / m as f64).exp())) as u64;
        assert!((estimated_items(m, k, ones) - n).abs() < 10.0);
        assert!(estimated_items(m, k, m).is_infinite());
        assert_eq!(estimated_items(m, k, 0), 0.0);
    }

    #[test]
    fn information_bound() {
        assert!((information_bound_bits_per_key(0.01) - 6.6439).abs() < 1e-3);
    }
}
